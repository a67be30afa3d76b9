"""What several test files share: a lab's --quick run on the CPU and its --replot of the committed H200 results, fp32
inputs from a fixed seed, an array moved to the GPU, the mark for tests that read SASS, the skip of a variant that
cannot run here."""
import os

import numpy as np
import pytest

from common import check, cuda, report

H200 = os.path.join(report.ROOT, "results", "h200")
needs_sass = pytest.mark.skipif(cuda.find_cuobjdump() is None, reason="no cuobjdump to disassemble with")


def quick_output(main, capsys) -> str:
    """What a lab's `--quick --arch sm_90` run printed on the CPU: it succeeded, checked its variants in the
    interpreter and compiled its kernels."""
    assert main(["--quick", "--arch", "sm_90"]) == 0
    out = capsys.readouterr().out
    assert "interpreter" in out and "compiled" in out and "ok (" in out
    return out


def replot(main, tmp_path) -> list[str]:
    """Redraw a lab's plots from the committed H200 JSON alone (no GPU) into tmp_path: its main(--replot) succeeds;
    the names of the files it drew, sorted."""
    assert main(["--replot", H200, "--out", str(tmp_path)]) == 0
    return sorted(p.name for p in tmp_path.iterdir())


def rand(shape, seed=0):
    """Standard-normal fp32 values of `shape`, drawn from check.rng(seed)."""
    return check.rng(seed).standard_normal(shape).astype(np.float32)


def cp(a):
    """A NumPy array as a CuPy one (GPU tier)."""
    import cupy

    return cupy.asarray(a)


def skip_unless_available(variant):
    """Skip the calling test where `variant` cannot run on this machine (a CUDA C variant without a GPU, a kernel for
    another architecture), with the variant's own reason."""
    ok, why = variant.available()
    if not ok:
        pytest.skip(why)


def variant_params(phases) -> list:
    """pytest params (mod, variant) for every variant and peer of the labs of `phases`, marked gpu where needed."""
    from common import lab as course_lab
    from tests.conftest import lab_modules

    out = []
    for name, mod in lab_modules():
        if name.split(".")[0] not in phases:
            continue
        for v in getattr(mod, "VARIANTS", []) + getattr(mod, "PEERS", []):
            out.append(pytest.param(mod, v, id=f"{name}:{v.name}", marks=[] if v.runs_without_gpu else [pytest.mark.gpu]))
    assert all(isinstance(p.values[1], course_lab.Variant) for p in out)
    return out


def check_variant_matches_reference(mod, variant) -> None:
    """Every check case of the lab (CHECK_CASES on a GPU, CPU_CHECK_CASES in the interpreter) through the variant:
    fresh inputs, poisoned and guarded outputs, the float64 reference."""
    from common import device, lab as course_lab

    skip_unless_available(variant)
    cases = mod.CHECK_CASES if device.has_gpu() else mod.CPU_CHECK_CASES
    rows, all_ok = course_lab.check_variants(mod, [variant], cases, verbose=False)
    assert rows[0]["cases"] > 0, f"{variant.name}: no case ran ({rows[0]['result']})"
    assert all_ok, rows[0]["result"]
