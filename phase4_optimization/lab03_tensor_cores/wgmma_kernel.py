"""Lab 4.3, rung 03: the kernel file kernels_wgmma.cu as the host sees it - CONFIG, the one home of its compile-time
values (the shape, the ring depth, GROUP_M, MBAR_TIMEOUT), the -D defines of each build (defines: CONFIG and the
build's dtype, B layout, cluster and epilogue) and the checks on them, the shared memory and stage count a build takes,
and its NVRTC compile for sm_90a (no GPU needed)."""
from __future__ import annotations

import os

from common import cuda

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_PATH = os.path.join(HERE, "kernels_wgmma.cu")
KERNEL = "gemm_wgmma_tma"
ARCH = "sm_90a"

# CONFIG: kernels_wgmma.cu's compile-time values, in ONE place. Every entry reaches the kernel as -DNAME=VALUE on every
# compile (defines(): the wrappers, the compile report, --plan, lab 4.7, the tests), beside the build's own
# BUILD_DEFINES; kernels_wgmma.cu holds no value of its own, and a compile without one stops with an #error naming it.
# The host side (grid, tensor-map boxes, shared memory) reads the same values.
#   BM = 128, BN = 256, BK = 64   the tile: two consumer warpgroups of wgmma's M = 64, one m64n256k16 per 16-deep step,
#                                 64-element (128-byte swizzled) K rows. Fixed by the instructions and the descriptors:
#   CONSUMERS = 2                 the .cu's static_asserts refuse any other value (1 producer warpgroup more: THREADS)
#   STAGES = 4                    the ring's depth (EPI_STAGES below for the TMA-store build with the whole C tile)
#   GROUP_M = 8                   tile rows per group of the persistent order (L2 reuse)
#   MBAR_TIMEOUT = 1              1: a barrier wait that spins ~4 s records who waited on what and leaves (no hang)
#   STORE_RACE = 0                for a test only: > 0 makes warps 1-3 of each consumer wait this many cycles before
#                                 writing C into the TMA-store buffer, so a store issued without the barrier that waits
#                                 for them reads stale rows on every launch (the race made visible; 0: compiled out)
CONFIG = dict(BM=128, BN=256, BK=64, CONSUMERS=2, STAGES=4, GROUP_M=8, MBAR_TIMEOUT=1, STORE_RACE=0)
BUILD_DEFINES = ("GEMM_F16", "B_KMAJOR", "CLUSTER", "EPI_TMA", "C_PASSES", "EPI_OPS")   # chosen per build by defines()
# module names of CONFIG's values (read at import: the launch code, the layout model, lab 4.6)
BM, BN, BK, STAGES, CONSUMERS = CONFIG["BM"], CONFIG["BN"], CONFIG["BK"], CONFIG["STAGES"], CONFIG["CONSUMERS"]
THREADS = 128 * (CONSUMERS + 1)
A_STAGE_BYTES = BM * BK * 2
B_BOX_BYTES = 64 * BK * 2
B_STAGE_BYTES = BN * BK * 2
SMEM_BYTES = 1024 + STAGES * (A_STAGE_BYTES + B_STAGE_BYTES) + 16 * STAGES
# -DEPI_TMA=1 (tma_store=True): C leaves through a shared buffer (4 boxes {64 N, 64 M} per consumer) and TMA stores;
# the buffer takes the fourth stage's room: that build's ring is EPI_STAGES deep (defines() passes it as STAGES).
# -DC_PASSES=2 (c_passes=2): half the buffer, C in two passes, CONFIG's STAGES
EPI_STAGES = 3
C_BOX_BYTES = 64 * 64 * 2
C_BYTES = CONSUMERS * 4 * C_BOX_BYTES
C_PASSES = (1, 2)
DTYPES = ("bfloat16", "float16")
CLUSTERS = (1, 2)

# The fused epilogue's bits (-DEPI_OPS): + bias[col], then the tanh GELU, then + residual[row, col] (lab 4.2's order)
# For the backward (lab 4.7's training step): * gelu_tanh'(z) in place of the residual (the GELU's input z read where
# the residual would be), and the column sums of the stored C in rows of COLSUM_ROWS (a warp's share of a tile)
EPI_BIAS, EPI_GELU, EPI_RES, EPI_DGELU, EPI_COLSUM = 1, 2, 4, 8, 16
EPI_ALL = EPI_BIAS | EPI_GELU | EPI_RES | EPI_DGELU | EPI_COLSUM
COLSUM_ROWS = 16
ACTIVATIONS = (None, "gelu_tanh")


def epi_mask(bias: bool, activation: str | None, residual: bool, dgelu: bool = False, colsum: bool = False) -> int:
    return (EPI_BIAS * bool(bias) | EPI_GELU * (activation == "gelu_tanh") | EPI_RES * bool(residual)
            | EPI_DGELU * bool(dgelu) | EPI_COLSUM * bool(colsum))


def source_by_tma(tma_store: bool, c_passes: int, epi_ops: int) -> bool:
    """Whether a build is the .cu's SRC_TMA: the TMA-store epilogue, whole tiles staged, with a residual or the GELU's
    derivative (the source's tiles - the residual, or z - come into the C buffer by TMA; the kernel takes the
    source's tensor map after C's)."""
    return bool(tma_store and c_passes == 1 and epi_ops & (EPI_RES | EPI_DGELU))


def defines(dtype: str = "bfloat16", timeout: bool | None = None, b_kmajor: bool = False, cluster: int = 1,
            tma_store: bool = False, c_passes: int = 1, epi_ops: int = 0) -> dict:
    """kernels_wgmma.cu's -D values for one build: the whole CONFIG (STAGES: this build's ring, stages()), the
    build's GEMM_F16, B_KMAJOR, CLUSTER, EPI_TMA, C_PASSES, EPI_OPS, and MBAR_TIMEOUT = timeout (default CONFIG's)."""
    d = {k: int(v) for k, v in CONFIG.items()}
    d.update({"GEMM_F16": int(dtype == "float16"), "B_KMAJOR": int(bool(b_kmajor)), "CLUSTER": int(cluster),
              "EPI_TMA": int(bool(tma_store)), "C_PASSES": int(c_passes), "EPI_OPS": int(epi_ops),
              "STAGES": stages(tma_store, c_passes)})
    if timeout is not None:
        d["MBAR_TIMEOUT"] = int(bool(timeout))
    return d


_defines = defines          # the older name (wgmma_launch.py, lab 4.7's plan through launch_shape)


def stages(tma_store: bool = False, c_passes: int = 1) -> int:
    """The ring's stage count of a build: CONFIG's STAGES, or EPI_STAGES when EPI_TMA stages the whole C tile
    (c_passes = 1)."""
    return EPI_STAGES if tma_store and c_passes == 1 else CONFIG["STAGES"]


def smem_bytes(tma_store: bool = False, c_passes: int = 1) -> int:
    """Dynamic shared memory of a build (the .cu's SMEM_BYTES): the ring and EPI_TMA's C buffer (C_BYTES / c_passes)
    with a source barrier per consumer (SRC_BAR_BYTES), from CONFIG's shape."""
    st = stages(tma_store, c_passes)
    bm, bn, bk = CONFIG["BM"], CONFIG["BN"], CONFIG["BK"]
    c = CONFIG["CONSUMERS"] * (4 * C_BOX_BYTES // c_passes + 8) if tma_store else 0   # + the source barriers
    return 1024 + st * (bm * bk * 2 + bn * bk * 2) + c + 16 * st


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


def compile_report(dtype: str = "bfloat16", timeout: bool | None = None, b_kmajor: bool = False, cluster: int = 1,
                   tma_store: bool = False, c_passes: int = 1, epi_ops: int = 0) -> cuda.CompileReport:
    """NVRTC compile for sm_90a (no GPU needed): registers, spills, SASS (HGMMA, UTMALDG, SYNCS)."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype: expected one of {DTYPES}, got {dtype!r}")
    _check_cluster(cluster, b_kmajor)
    _check_tma_store(tma_store, c_passes)
    if not 0 <= epi_ops <= EPI_ALL:
        raise ValueError(f"epi_ops: a mask of EPI_BIAS, EPI_GELU, EPI_RES, EPI_DGELU, EPI_COLSUM, got {epi_ops!r}")
    if epi_ops & EPI_DGELU and epi_ops & (EPI_BIAS | EPI_GELU | EPI_RES):
        raise ValueError("epi_ops: EPI_DGELU multiplies A @ B alone (no bias, GELU or residual: z is read where the "
                         "residual would be)")
    return cuda.compile_report(KERNEL_PATH, ARCH,
                               defines=defines(dtype, timeout, b_kmajor, cluster, tma_store, c_passes, epi_ops))


def _layout(kmajor: bool) -> str:
    """The name of a B layout in the tables: the transposed copy (-DB_KMAJOR=1) or B read in place (tnspB)."""
    return "K-major copy" if kmajor else "N-major (tnspB)"
