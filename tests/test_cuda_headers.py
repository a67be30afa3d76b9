"""The shared device headers (common/cuda/*.cuh) compile on every architecture that uses them, without spills, and
become the instructions their comments promise: SHFL.BFLY for the reductions, MUFU.EX2 for fast_exp2, LDGSTS for
cp.async, LDSM and HMMA for the mma path, one 16-byte store in store4. CPU tier (NVRTC; SASS with cuobjdump)."""
import os

import pytest

from common import cuda

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "headers_probe.cu")
HEADERS = ("cp_async.cuh", "epilogue.cuh", "half_bits.cuh", "mma_sm80.cuh", "reduce.cuh")


def test_every_header_is_in_the_probe():
    src = open(PROBE).read()
    on_disk = sorted(f for f in os.listdir(cuda.HEADER_DIR) if f.endswith(".cuh"))
    assert set(HEADERS) <= set(on_disk)
    # half_bits.cuh comes in through the others; hopper.cuh is sm_90a-only PTX (wgmma, setmaxnreg, TMA), which this
    # probe's sm_80 / sm_90 builds cannot take: tests/test_phase4_lab06_attention_hopper.py compiles it for sm_90a
    # inside kernels_hopper.cu and checks the instructions it becomes (HGMMA, UTMALDG, SYNCS, USETMAXREG)
    elsewhere = {"half_bits.cuh": "", "hopper.cuh": "phase4_optimization/lab06_attention/kernels_hopper.cu"}
    for h in on_disk:
        assert f'#include "{h}"' in src or h in elsewhere, f"{h} is not exercised by {PROBE}"
    for h, user in elsewhere.items():
        if user:
            assert f'#include "{h}"' in open(os.path.join(os.path.dirname(cuda.HEADER_DIR), "..", user)).read(), user


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_headers_compile_without_spills_into_the_promised_instructions(arch):
    rep = cuda.compile_report(PROBE, arch)
    for k in rep.kernels.values():
        assert k.spills == 0 and k.stack_bytes == 0, f"{k.name} on {arch}: spills or a stack frame"
    if cuda.find_cuobjdump() is None:
        pytest.skip("no cuobjdump to read the SASS")
    sass = {name: " ".join(k.sass) for name, k in rep.kernels.items()}
    assert "SHFL.BFLY" in sass["probe_reduce"]
    assert "MUFU.EX2" in sass["probe_reduce"] and "MUFU.EX2" in sass["probe_bits"]
    assert "F2FP" in sass["probe_bits"]                       # the packed two-value convert (sm_80+)
    assert "LDGSTS" in sass["probe_mma"] and "LDSM" in sass["probe_mma"] and "HMMA" in sass["probe_mma"]
    assert "STG.E.128" in sass["probe_store4"]
