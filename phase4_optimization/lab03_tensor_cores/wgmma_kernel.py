"""Lab 4.3, rung 03: the kernel file kernels_wgmma.cu as the host sees it - its compile-time shape (mirrored here; the
tests check the two agree), the -D defines of each build and the checks on them, the shared memory and stage count a
build takes, and its NVRTC compile for sm_90a (no GPU needed)."""
from __future__ import annotations

import os

from common import cuda

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_PATH = os.path.join(HERE, "kernels_wgmma.cu")
KERNEL = "gemm_wgmma_tma"
ARCH = "sm_90a"

# mirror of the .cu file's compile-time shape (tests check the two agree through the compile report)
BM, BN, BK, STAGES, CONSUMERS = 128, 256, 64, 4, 2
THREADS = 128 * (CONSUMERS + 1)
A_STAGE_BYTES = BM * BK * 2
B_BOX_BYTES = 64 * BK * 2
B_STAGE_BYTES = BN * BK * 2
SMEM_BYTES = 1024 + STAGES * (A_STAGE_BYTES + B_STAGE_BYTES) + 16 * STAGES
# -DEPI_TMA=1 (tma_store=True): C leaves through a shared buffer (4 boxes {64 N, 64 M} per consumer) and TMA stores;
# the buffer takes the fourth stage's room. -DC_PASSES=2 (c_passes=2): half the buffer, C in two passes, 4 stages
EPI_STAGES = 3
C_BOX_BYTES = 64 * 64 * 2
C_BYTES = CONSUMERS * 4 * C_BOX_BYTES
C_PASSES = (1, 2)
DTYPES = ("bfloat16", "float16")
CLUSTERS = (1, 2)

# The fused epilogue's bits (-DEPI_OPS): + bias[col], then the tanh GELU, then + residual[row, col] (lab 4.2's order)
EPI_BIAS, EPI_GELU, EPI_RES = 1, 2, 4
ACTIVATIONS = (None, "gelu_tanh")


def epi_mask(bias: bool, activation: str | None, residual: bool) -> int:
    return EPI_BIAS * bool(bias) | EPI_GELU * (activation == "gelu_tanh") | EPI_RES * bool(residual)


def _defines(dtype: str, timeout: bool = True, b_kmajor: bool = False, cluster: int = 1,
             tma_store: bool = False, c_passes: int = 1, epi_ops: int = 0) -> dict:
    d = {"GEMM_F16": int(dtype == "float16"), "MBAR_TIMEOUT": int(timeout), "B_KMAJOR": int(b_kmajor)}
    if cluster != 1:
        d["CLUSTER"] = int(cluster)
    if tma_store:
        d["EPI_TMA"] = 1
        if c_passes != 1:
            d["C_PASSES"] = int(c_passes)
    if epi_ops:
        d["EPI_OPS"] = int(epi_ops)
    return d


def stages(tma_store: bool = False, c_passes: int = 1) -> int:
    """The ring's stage count of a build: 4, or 3 when EPI_TMA stages the whole C tile (c_passes = 1)."""
    return EPI_STAGES if tma_store and c_passes == 1 else STAGES


def smem_bytes(tma_store: bool = False, c_passes: int = 1) -> int:
    """Dynamic shared memory of a build (the .cu's SMEM_BYTES): the ring and EPI_TMA's C buffer (C_BYTES / c_passes)."""
    st = stages(tma_store, c_passes)
    c = C_BYTES // c_passes if tma_store else 0
    return 1024 + st * (A_STAGE_BYTES + B_STAGE_BYTES) + c + 16 * st


def _check_tma_store(tma_store, c_passes: int = 1) -> None:
    if not isinstance(tma_store, bool):
        raise ValueError(f"tma_store: expected True or False, got {tma_store!r}")
    if c_passes not in C_PASSES or isinstance(c_passes, bool):
        raise ValueError(f"c_passes: expected one of {C_PASSES}, got {c_passes!r}")
    if c_passes != 1 and not tma_store:
        raise ValueError("c_passes: the C passes belong to the TMA-store epilogue; pass tma_store=True with it")


def _check_cluster(cluster, b_kmajor: bool) -> None:
    if cluster not in CLUSTERS or isinstance(cluster, bool):
        raise ValueError(f"cluster: expected one of {CLUSTERS}, got {cluster!r}")
    if cluster > 1 and b_kmajor:
        raise ValueError("cluster=2 multicasts B's N-major boxes; it does not combine with b_kmajor=True")


def compile_report(dtype: str = "bfloat16", timeout: bool = True, b_kmajor: bool = False, cluster: int = 1,
                   tma_store: bool = False, c_passes: int = 1, epi_ops: int = 0) -> cuda.CompileReport:
    """NVRTC compile for sm_90a (no GPU needed): registers, spills, SASS (HGMMA, UTMALDG, SYNCS)."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype: expected one of {DTYPES}, got {dtype!r}")
    _check_cluster(cluster, b_kmajor)
    _check_tma_store(tma_store, c_passes)
    if not 0 <= epi_ops <= EPI_BIAS | EPI_GELU | EPI_RES:
        raise ValueError(f"epi_ops: a mask of EPI_BIAS, EPI_GELU, EPI_RES, got {epi_ops!r}")
    return cuda.compile_report(KERNEL_PATH, ARCH,
                               defines=_defines(dtype, timeout, b_kmajor, cluster, tma_store, c_passes, epi_ops))


def _layout(kmajor: bool) -> str:
    """The name of a B layout in the tables: the transposed copy (-DB_KMAJOR=1) or B read in place (tnspB)."""
    return "K-major copy" if kmajor else "N-major (tnspB)"
