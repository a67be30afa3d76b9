"""Two tiers: the CPU tier always runs real code; tests marked `gpu` run on a CUDA GPU and skip elsewhere."""
import importlib

import pytest

from common import device

PHASES = ["phase1_architecture", "phase2_cuda", "phase3_triton", "phase4_optimization"]


def lab_modules():
    """Every lab of every phase, in order, as (phase.lab, module)."""
    out = []
    for phase in PHASES:
        try:
            pkg = importlib.import_module(phase)
        except ImportError:
            continue
        for name in getattr(pkg, "LABS", []):
            out.append((f"{phase}.{name}", importlib.import_module(f"{phase}.{name}")))
    return out


def pytest_collection_modifyitems(config, items):
    if device.has_gpu():
        return
    skip = pytest.mark.skip(reason=f"no CUDA GPU: {device.no_gpu_reason()}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_report_header(config):
    if device.has_gpu():
        d = device.info()
        return f"GPU tier: {d.name} ({d.arch}); CPU tier too"
    return f"CPU tier only; GPU tests skip ({device.no_gpu_reason()})"
