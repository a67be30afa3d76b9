"""tools/profile.py: the CPU side (case list, argument errors, no-GPU message, the summary of committed ncu CSVs)."""
import json
import os

import pytest

from common import device
from tools import profile as pr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILES = os.path.join(ROOT, "results", "h200", "profile")


def test_list_and_bad_case(capsys):
    assert pr.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert all(c in out for c in pr.CASES)
    with pytest.raises(SystemExit):
        pr.main(["--cases", "no_such_case"])


@pytest.mark.skipif(device.has_gpu(), reason="checks the no-GPU message")
def test_without_gpu_says_so(capsys):
    assert pr.main(["--cases", "cublas_gemm"]) == 2
    err = capsys.readouterr().err
    assert "needs a CUDA GPU" in err and err.count("\n") == 1


def test_summary_of_the_committed_h200_profile():
    """The committed raw CSV reduces to one row per profiled case, times in microseconds whatever unit ncu chose."""
    order = json.load(open(os.path.join(PROFILES, "order.json")))
    rows = pr.summarize(os.path.join(PROFILES, "raw.csv"), order)
    assert [r["case"] for r in rows] == order
    by = {r["case"]: r for r in rows}
    # cuBLAS bf16 4096^3 takes ~0.18 ms on an H200; its tensor pipe is nearly always busy, the mma.sync kernel's not
    assert 100 < by["cublas_gemm"]["time us"] < 400
    assert by["cublas_gemm"]["tensor pipe %"] > 80 > by["mma_default"]["tensor pipe %"]
    assert by["mma_default"]["regs"] == 242 and by["mma_default"]["occupancy %"] < 20
    assert "wait" in by["mma_default"]["top stalls (warps per issue)"]


def test_summarize_missing_folder(tmp_path, capsys):
    assert pr.main(["--summarize", str(tmp_path)]) == 2
    assert "not found" in capsys.readouterr().err
