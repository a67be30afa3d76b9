"""Lab 4.3, rung 03's host side: a Hopper GEMM with wgmma fed by TMA (kernels_wgmma.cu), from tensor maps to launch.

The one place to import rung 03 from: this module holds no code of its own and re-exports the names of the modules
that do, one job each (lab.py's gemm_wgmma_tma variant calls gemm_wgmma; bench.py times it against cuBLAS; lab 4.6's
Hopper rungs and lab 4.7's block use it too):
  wgmma_kernel.py  the kernel file as the host sees it: its shape, the -D defines of each build, compile_report
  wgmma_layout.py  the kernel's shared-memory layout in NumPy: stage addresses, descriptors, the swizzled C buffer
  wgmma_builds.py  which build runs: builds(), the --tune record, resolve_build and its precedence
  wgmma_launch.py  gemm_wgmma itself: validation, padding, tensor maps, the launch, availability, the hang record
  wgmma_check.py   checking: reference, tolerance, inputs, check_shape, sampled rows of big products
  wgmma_debug.py   the debugging aid that says where a layout bug is
What is not specific to this GEMM - the wgmma shared-memory descriptor and the 128-byte swizzle mirrored in NumPy,
tensor maps encoded through the driver API, loading an sm_90a cubin and launching with by-value tensor maps - is in
common/hopper.py, the host twin of common/cuda/hopper.cuh.

What it shows
  * what Hopper adds over mma.sync: a warpgroup (4 warps) issues one asynchronous wgmma.m64n256k16 that reads A and B
    straight from shared memory through 64-bit *matrix descriptors* (start address, leading/stride byte offsets,
    swizzle mode), while the TMA engine copies whole 2-D tiles global -> shared, described once on the host by a
    128-byte *tensor map* (cuTensorMapEncodeTiled) and completing on an mbarrier with a byte count;
  * warp specialization: one producer warpgroup keeps a 4-stage ring full, two consumer warpgroups run the MMAs, and
    `setmaxnreg` moves registers from the producer (40) to the consumers (232), who hold 128 fp32 accumulators each;
  * the 128-byte swizzle, which TMA writes and wgmma reads with the same address-bit XOR, and how to walk K inside a
    swizzled tile by moving the descriptor's start address (smem_descriptor / simulate_operands mirror the device
    arithmetic in NumPy);
  * mbarrier phase parity: which parity each side waits for, and why one bit is enough.

The two numbers (bf16 8192 x 8192 x 8192): FLOPs = 2 M N K = 1.10 TFLOP; bytes that must move = (M K + K N + M N) x 2
= 403 MB. ~2730 FLOP/B, an order of magnitude above the bf16 ridge point of any GPU with wgmma (`--plan` prints
this GPU's): compute-bound.
Prediction: 0.85-0.95x cuBLAS (target >= 0.9x at 8192^3). The kernel's known shortfalls against cuBLAS: the epilogue
writes C from registers (32-bit stores, not overlapped with the tile's MMAs; ~3% of a tile's time at 8192^3) and no
2-CTA clusters with TMA multicast (each A/B tile is fetched from L2 by every block that needs it). The attempts at
both are builds of the same file: cluster=2 (-DCLUSTER=2) and tma_store=True (-DEPI_TMA=1: C through a swizzled
shared buffer and TMA stores, the consumers back on the next tile's MMAs while the TMA engine writes; 3 stages, as the
C buffer takes the fourth's room; epilogue_smem_addresses / epilogue_round_trip mirror its buffer in NumPy).
Which build runs is measured, not written here: lab 4.3's --tune times every build (builds()) at 4096^3 and 8192^3
and records this GPU's fastest correct one at each size in results/<gpu>/phase4_lab03_tensor_cores_wgmma_tuned.json;
gemm_wgmma runs that build (resolve_build: arguments first, then WGMMA_* environment variables, then --set of the same
names, then the record, then DEFAULT_BUILD - single blocks, C from registers - on a GPU without a record).

Layouts and what the wrapper does about them
  * A (M, K) and B (K, N) are row-major, as torch/CuPy hold them. A is "K-major" for wgmma (its default); B is
    N-major, which bf16/fp16 wgmma reads directly with imm-trans-b = 1 (SASS: HGMMA ... gdesc[..].tnspB), so no
    transpose pass is needed.
  * TMA needs the global base 16-byte aligned and every row stride a multiple of 16 bytes (8 elements). When K or N
    is not a multiple of 8 (or a base is misaligned) the wrapper copies that operand into a zero-padded buffer with an
    aligned row stride (one extra pass over that operand; the tensor map still describes only the logical K x N, so
    the padding is never read). Tails of M, N, K are handled by TMA's zero fill and the epilogue's bounds checks: any
    M, N, K >= 1 is correct.
  * Output: bf16 (fp16) C, rounded once from the fp32 accumulators.

Inputs: bf16 needs torch CUDA tensors (CuPy has no bf16); fp16 may be CuPy arrays or torch tensors. The kernel is
compiled with NVRTC for sm_90a by common.cuda.compile_report and loaded from the cubin (CuPy's RawModule would add
its own -arch for the device); the tensor maps go to the kernel by value as `const __grid_constant__` parameters via
cuLaunchKernel's argument-pointer array (cupy.cuda.driver.launchKernel).

Run: python -m phase4_optimization.lab03_tensor_cores (rung 03 is one of its variants; --wgmma-debug runs the
probes of debug() - wgmma_debug.py - on the GPU).
"""
from common.hopper import (SWIZZLE_MODE, TMA_DTYPE, TMA_INTERLEAVE_NONE, TMA_L2_PROMOTION_256B, TMA_OOB_FILL_ZERO,
                           TMA_SWIZZLE_128B, decode_descriptor, encode_tensor_map, encode_tiled, smem_descriptor,
                           swizzle_128b, tma_box_check, wgmma_read_kmajor, wgmma_read_mnmajor)

from .wgmma_builds import (BUILD_KEYS, BUILD_SETTINGS, DEFAULT_BUILD, EPILOGUES, TUNED, _check_arguments,
                           _check_settings, _env_choice, _said_record, build_config, build_label, builds, check_build,
                           check_winners, default_b_kmajor, default_cluster, default_tma_store, recorded_build,
                           resolve_build, say_note)
from .wgmma_check import (CHECK_SHAPES, QUICK_SHAPES, block_sums64, check_shape, epilogue_reference, gelu_tanh_grad64,
                          make_inputs, reference, source_matrix, tolerance, verify_sample)
from .wgmma_debug import _debug_one, _index_probe, _mismatch_summary, debug
from .wgmma_kernel import (A_STAGE_BYTES, ACTIVATIONS, ARCH, B_BOX_BYTES, B_STAGE_BYTES, BK, BM, BN, BUILD_DEFINES,
                           C_BOX_BYTES, C_BYTES, C_PASSES, CLUSTERS, COLSUM_ROWS, CONFIG, CONSUMERS, DTYPES, EPI_BIAS,
                           EPI_COLSUM, EPI_DGELU, EPI_GELU, EPI_RES, EPI_STAGES, HERE, KERNEL, KERNEL_PATH,
                           SMEM_BYTES, STAGES, THREADS,
                           _check_cluster, _check_tma_store, _defines, _layout, compile_report, defines, epi_mask,
                           smem_bytes, stages, source_by_tma)
from .wgmma_launch import (_LOADED, _check_epilogue, _launch, _loaded, _tensor_map, gemm_wgmma, grid_size,
                           hang_report, hopper_only, launch_cluster, launch_shape, max_clusters, prepare,
                           unavailable_reason)
from .wgmma_layout import (descriptor_table, epilogue_round_trip, epilogue_smem_addresses, operand_descriptors,
                           simulate_operands, stage_layout, tma_write_a, tma_write_b_box)

__all__ = [
    # common/hopper.py: the Hopper host primitives (lab 4.6 reaches smem_descriptor, tma_write_a, the wgmma_read_*
    # models and encode_tiled through here)
    "SWIZZLE_MODE", "TMA_DTYPE", "TMA_INTERLEAVE_NONE", "TMA_L2_PROMOTION_256B", "TMA_OOB_FILL_ZERO",
    "TMA_SWIZZLE_128B", "decode_descriptor", "encode_tensor_map", "encode_tiled", "smem_descriptor", "swizzle_128b",
    "tma_box_check", "wgmma_read_kmajor", "wgmma_read_mnmajor",
    # wgmma_kernel.py
    "A_STAGE_BYTES", "ACTIVATIONS", "ARCH", "B_BOX_BYTES", "B_STAGE_BYTES", "BK", "BM", "BN", "BUILD_DEFINES",
    "C_BOX_BYTES", "C_BYTES", "C_PASSES", "CLUSTERS", "COLSUM_ROWS", "CONFIG", "CONSUMERS", "DTYPES", "EPI_BIAS",
    "EPI_COLSUM", "EPI_DGELU", "EPI_GELU", "EPI_RES", "EPI_STAGES", "HERE", "KERNEL", "KERNEL_PATH", "SMEM_BYTES",
    "STAGES", "THREADS", "_check_cluster", "_check_tma_store", "_defines", "_layout", "compile_report", "defines",
    "epi_mask", "smem_bytes", "stages", "source_by_tma",
    # wgmma_layout.py
    "descriptor_table", "epilogue_round_trip", "epilogue_smem_addresses", "operand_descriptors", "simulate_operands",
    "stage_layout", "tma_write_a", "tma_write_b_box",
    # wgmma_builds.py
    "BUILD_KEYS", "BUILD_SETTINGS", "DEFAULT_BUILD", "EPILOGUES", "TUNED", "_check_arguments", "_check_settings",
    "_env_choice", "_said_record", "build_config", "build_label", "builds", "check_build", "check_winners",
    "default_b_kmajor", "default_cluster", "default_tma_store", "recorded_build", "resolve_build", "say_note",
    # wgmma_launch.py
    "_LOADED", "_check_epilogue", "_launch", "_loaded", "_tensor_map", "gemm_wgmma", "grid_size", "hang_report",
    "hopper_only", "launch_cluster", "launch_shape", "max_clusters", "prepare", "unavailable_reason",
    # wgmma_check.py, wgmma_debug.py
    "CHECK_SHAPES", "QUICK_SHAPES", "block_sums64", "check_shape", "epilogue_reference", "gelu_tanh_grad64",
    "make_inputs", "reference", "source_matrix", "tolerance", "verify_sample",
    "_debug_one", "_index_probe", "_mismatch_summary", "debug",
]
