"""Every lab on every GPU a learner may have, simulated in the CPU tier.

For each profile of common/gpu_specs.py (a T4, an A100, RTX 30/40/50 cards, an L4, H100s, an H200, a B200) and each
lab, the lab's plan (common.plan) is computed for that GPU: which variants run there (and the reason for each that
does not), the configuration each kernel gets and where it came from, the grid, the predictions. Then every CUDA C
kernel the plan would launch is compiled with NVRTC for that GPU's architecture and every Triton kernel ahead of time
for it, and each must fit the GPU: registers x threads within a block's register file, static + dynamic shared memory
within the opt-in limit, a grid the hardware accepts. A default configuration that does not fit some GPU fails here.
"""
import os

import pytest

from common import device, lab, plan
from tests.helpers import PHASES, every_launch_fits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILES = device.profiles()
LABS = lab.lab_names([p for p in PHASES if p not in ("phase2_cuda", "phase4_optimization")])
IDS = [name for _, name in LABS]


def test_the_table_has_the_gpus_learners_have():
    want = {"t4", "a100-sxm4-80gb", "rtx-3060", "l4", "rtx-4090", "h100-pcie", "h100-sxm", "h200", "b200",
            "rtx-5090"}
    assert want <= set(PROFILES), want - set(PROFILES)
    assert len(PROFILES) >= 11
    archs = {device.profile_info(p).arch for p in PROFILES}
    assert {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"} <= archs


@pytest.mark.parametrize("slug", PROFILES)
def test_a_profile_is_a_whole_description_with_sources(slug):
    from common import gpu_specs

    g = device.profile_info(slug)
    a = device.arch_info(g.arch)
    assert g.simulated and g.sms > 0 and g.l2_bytes > 0 and g.total_mem_bytes > 2**30
    assert g.smem_per_block_optin == a.smem_per_block_optin and g.max_threads_per_sm == a.max_threads_per_sm
    # the clock-derived bandwidth reproduces the datasheet figure (the table's memory clock is chosen so)
    assert abs(g.theoretical_gbps / g.datasheet["hbm_gbps"] - 1) < 0.02, (g.theoretical_gbps, g.datasheet)
    assert g.datasheet["fp32_tflops"] > 0
    assert gpu_specs.PROFILES[slug]["sources"], "every profile cites its sources"
    assert device.datasheet(g.name)["profile"] == slug


# (every lab's plan on every GPU is worked out once, for the page "what runs on your GPU", and checked there:
# tests/test_gpu_pages.py::test_plan_on_every_gpu)


@pytest.mark.parametrize("phase,name", LABS, ids=IDS)
def test_every_launch_compiles_and_fits_every_gpu(phase, name):
    """NVRTC (CUDA C) and Triton ahead of time, for each GPU's architecture, checked against its limits (phases 1 and
    3 here; phases 2 and 4, the longest, in test_gpu_plans_phase2.py / _phase4.py, so --dist loadfile spreads them)."""
    every_launch_fits(phase, name)


def test_a_gpu_the_table_does_not_know(monkeypatch, capsys):
    """A GPU of an architecture with no entry (here a made-up sm_121 card): its limits come from the device, every lab
    plans on it (what needs sm_80+ runs, the sm_90a rungs do not), and nothing raises."""
    import dataclasses

    monkeypatch.setattr(device, "ARCHS", dict(device.ARCHS))
    gpu = dataclasses.replace(device.profile_info("rtx-5090"), name="NVIDIA Future GPU", arch="sm_121", cc_major=12,
                              cc_minor=1)
    a = device.register_arch(gpu)
    assert "sm_121" in device.ARCHS and a.smem_per_block_optin == gpu.smem_per_block_optin
    assert "does not describe" in capsys.readouterr().err
    assert lab.arch_matches("sm_121", ("sm_80+",)) and not lab.arch_matches("sm_121", ("sm_90",))
    for phase, name in LABS:
        p = plan.make(lab.lab_module(phase, name), lab.bench_module(phase, name), gpu)
        assert p.variants
