"""Lab 4.3, rung 03: gemm_wgmma, the wrapper - validate the operands (everything that can be checked without a GPU
first), copy an operand TMA cannot describe into a padded buffer, encode the tensor maps, pick the build
(wgmma_builds.resolve_build), load its sm_90a cubin and launch it with the maps by value; and around it: whether rung
03 can run here at all, the persistent grid and cluster size of a launch, and the kernel's barrier-timeout record."""
from __future__ import annotations

import ctypes
import functools

from common import arrays, device, hopper
from common.i18n import tr

from .wgmma_builds import _check_arguments, default_b_kmajor, resolve_build
from .wgmma_kernel import (ACTIVATIONS, BK, BM, BN, COLSUM_ROWS, DTYPES, KERNEL, THREADS, compile_report, defines,
                           epi_mask, smem_bytes, source_by_tma)


# ---------------------------------------------------------------------------------------------------------------------
# Availability, load, the hang record
# ---------------------------------------------------------------------------------------------------------------------
def unavailable_reason(gpu: device.DeviceInfo | None = None) -> str | None:
    """Why gemm_wgmma cannot run on `gpu`, or None when it can. `gpu`: a common.device.DeviceInfo (a simulated
    profile in a plan is answered from its architecture alone); None: this machine (no GPU, not sm_90, no
    cuTensorMapEncodeTiled in the driver, no NVRTC)."""
    if gpu is None:
        if not device.has_gpu():
            return tr("no CUDA GPU ({why})", why=tr(device.no_gpu_reason()))
        gpu = device.info()
    if gpu.cc != 90:
        return hopper_only(gpu.arch)
    return None if gpu.simulated else hopper.host_reason()


def hopper_only(arch: str) -> str:
    """The one-line reason off Hopper: wgmma, setmaxnreg and TMA multicast exist only in sm_90a."""
    return tr("wgmma is Hopper-only (sm_90a, compute capability 9.0); this GPU is {arch}", arch=arch)


@functools.lru_cache(maxsize=None)
def _loaded(dtype: str, b_kmajor: bool = False, cluster: int = 1, tma_store: bool = False, c_passes: int = 1,
            epi_ops: int = 0):
    """(module, function) for the current device, from the sm_90a cubin."""
    cubin = compile_report(dtype, b_kmajor=b_kmajor, cluster=cluster, tma_store=tma_store, c_passes=c_passes,
                           epi_ops=epi_ops).cubin
    mod, fn = hopper.load_function(cubin, KERNEL, smem_bytes(tma_store, c_passes))
    _LOADED.add((dtype, b_kmajor, cluster, tma_store, c_passes, epi_ops))
    return mod, fn


@functools.lru_cache(maxsize=None)
def max_clusters(dtype: str, cluster: int, tma_store: bool = False, c_passes: int = 1, epi_ops: int = 0) -> int:
    """How many clusters of `cluster` blocks can be resident at once (cuOccupancyMaxActiveClusters): the persistent
    grid must not exceed it, or the clusters past it run as a second wave. Falls back to SMs // cluster."""
    sms = device.info().sms
    _, fn = _loaded(dtype, False, cluster, tma_store, c_passes, epi_ops)
    got = hopper.max_active_clusters(fn.ptr, sms // cluster * cluster, THREADS, smem_bytes(tma_store, c_passes))
    return got if got is not None else sms // cluster


# the hang record's `what` (the .cu's mbar_wait callers): which barrier a timed-out thread was waiting on
BARRIER_KINDS = {0: "full (consumer waiting for TMA)", 1: "empty (producer waiting for consumers)",
                 2: "source (consumer waiting for the epilogue's source tile, SRC_TMA)"}


def hang_report(reset: bool = True) -> str | None:
    """None, or what the kernel's barrier-timeout record says (a wait that never completed, see the .cu)."""
    out = []
    for dtype, kmaj, cl, epi, passes, ops in sorted(_LOADED):
        mod, _ = _loaded(dtype, kmaj, cl, epi, passes, ops)
        arr = hopper.device_words(mod, "gemm_wgmma_hang", 4)
        v = [int(x) for x in arr.get()]
        if v[0]:
            word = v[3]
            which = BARRIER_KINDS.get((word >> 1) & 3, "unknown")
            out.append(f"{dtype}{' B_KMAJOR' if kmaj else ''}{' CLUSTER=2' if cl > 1 else ''}"
                       f"{' EPI_TMA' if epi else ''}{' C_PASSES=2' if passes > 1 else ''}"
                       f"{f' EPI_OPS={ops}' if ops else ''} kernel: block "
                       f"{v[1]} thread {v[2]} timed out on "
                       f"the {which} barrier at shared 0x{word >> 3:x}, parity {word & 1}")
            if reset:
                arr.fill(0)
    return "; ".join(out) or None


_LOADED: set[tuple[str, bool, int, bool, int, int]] = set()   # modules loaded (hang_report reads their timeout records)


# ---------------------------------------------------------------------------------------------------------------------
# The wrapper
# ---------------------------------------------------------------------------------------------------------------------
def transposed_view(x) -> bool:
    """Whether 2-D x is the transpose of a C-contiguous matrix (a weight W (N, K) passed as W.t()): what the K-major B
    kernel reads as it is."""
    return x.ndim == 2 and arrays.is_contiguous(x.T)


def prepare(a, b, out=None, *, b_kmajor: bool = False):
    """Validate (everything that can be checked without a GPU first) and return (a, b, out, M, N, K, dtype). With
    b_kmajor, b may also be a transposed view (transposed_view)."""
    for name, x in (("a", a), ("b", b)):
        lib = arrays.library(x)
        if lib not in ("torch", "cupy", "numpy"):
            raise TypeError(f"{name}: expected a torch tensor or CuPy array, got {type(x).__name__}")
        dt = arrays.dtype_name(x)
        if dt not in DTYPES:
            raise TypeError(f"{name}: dtype {dt} is not supported here; expected one of {', '.join(DTYPES)}")
        if x.ndim != 2:
            raise ValueError(f"{name}: expected a 2-D array, got {x.ndim}-D with shape {tuple(x.shape)}")
    dt_a, dt_b = arrays.dtype_name(a), arrays.dtype_name(b)
    if dt_a != dt_b:
        raise TypeError(f"a, b: dtypes must match, got {dt_a} and {dt_b}")
    m, n, k = arrays.matmul_dims(a, b)
    for name, v in (("M", m), ("N", n), ("K", k)):
        if v >= 2**31 - BN:
            raise ValueError(f"{name} = {v}: the kernel indexes tiles with 32-bit integers (limit 2^31 - {BN})")
    arrays.check_array("a", a, dtypes=DTYPES, ndim=2, libs=("torch", "cupy"))
    arrays.check_array("b", b, dtypes=DTYPES, ndim=2, libs=("torch", "cupy"),
                       contiguous=not (b_kmajor and transposed_view(b)))
    if arrays.library(a) != arrays.library(b):
        raise TypeError(f"a, b: must come from the same library, got {arrays.library(a)} and {arrays.library(b)}")
    if arrays.library(a) == "torch" and a.device != b.device:
        raise ValueError(f"a, b: must be on the same GPU, got {a.device} and {b.device}")
    out = arrays.check_out(out, (m, n), dt_a, a)
    return a, b, out, m, n, k, dt_a


def gemm_wgmma(a, b, out=None, *, bias=None, activation: str | None = None, residual=None, dgelu=None,
               colsums=None, b_kmajor: bool | None = None, cluster: int | None = None, tma_store: bool | None = None,
               c_passes: int | None = None):
    """C = A @ B (bf16 or fp16 in, fp32 accumulate, same dtype out) with the wgmma + TMA kernel; with bias= (N,),
    activation="gelu_tanh" and/or residual= (M, N), C = activation(A @ B + bias) + residual, fused into the
    epilogue (-DEPI_OPS) before the one rounding, as lab 4.2's linear() does (residual: rows contiguous, any row
    stride, not overlapping out; K = 0 with an epilogue is refused). For a backward: dgelu= z (M, N, a residual's
    layout) makes C = (A @ B) * gelu_tanh'(z) (with neither activation nor residual), and colsums= a contiguous fp32
    (cdiv(M, COLSUM_ROWS), N) buffer receives the column sums of the stored C, COLSUM_ROWS rows a row (the first
    level of a bias gradient; their sum over rows is the column sum of C).

    a: (M, K), b: (K, N), row-major, contiguous, on the GPU (bf16: torch tensors; fp16: torch or CuPy). out: optional
    (M, N) of the same dtype and library. When K or N is not a multiple of 8 (or a base address is not 16-byte
    aligned) that operand is first copied into a zero-padded buffer with an aligned row stride (TMA's rule).
    b_kmajor=True (default: WGMMA_B_KMAJOR=1 in the environment, else False) runs the kernel that reads B^T (N x K,
    K contiguous): on B^T as it is when b is a transposed view of a contiguous matrix with K a multiple of 8 and an
    aligned base (a weight W (N, K) passed as W.t(): dX = dY W^T with no copy), else on a transposed copy of B (an
    extra pass over B; also the fallback that separates an MN-major descriptor bug from anything else).

    The build - cluster, tma_store, c_passes - is resolve_build's: each argument left None comes from the
    environment (WGMMA_CLUSTER=1|2, WGMMA_TMA_STORE=0|1, WGMMA_C_PASSES=1|2), else from this GPU's --tune record
    (the winner at the tuned size nearest M N K), else DEFAULT_BUILD (cluster 1, C stored from registers).
    cluster=2 runs pairs of blocks that share each B tile by TMA multicast; it needs the N-major B layout, and a
    problem of one tile row runs with cluster=1 (the pair would have no partner). tma_store=True runs the -DEPI_TMA=1
    build: C leaves through shared memory and TMA stores, overlapped with the next tile's MMAs; when out's base is
    not 16-byte aligned or N is not a multiple of 8 (no legal tensor map for C) that build stores from registers
    instead. c_passes=2 (with tma_store) stages C in two halves of columns through a buffer half the size, which
    leaves room for the fourth stage.
    """
    if b_kmajor is None:
        b_kmajor = default_b_kmajor()
    _check_arguments(b_kmajor, cluster, tma_store, c_passes)         # before anything else, GPU or not
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation: expected one of {ACTIVATIONS}, got {activation!r}")
    a, b, out, m, n, k, dt = prepare(a, b, out, b_kmajor=b_kmajor)
    epi_ops = epi_mask(bias is not None, activation, residual is not None, dgelu is not None, colsums is not None)
    if dgelu is not None and (activation is not None or residual is not None or bias is not None):
        raise ValueError("dgelu: the GELU's derivative takes no bias, activation or residual (it multiplies A @ B)")
    source = residual if dgelu is None else dgelu          # the epilogue's second operand (one slot in the kernel)
    source_name = "residual" if dgelu is None else "dgelu"
    ldr = _check_epilogue(bias, source, out, a, m, n, k, dt, source_name)
    _check_colsums(colsums, out, a, m, n, k)
    build, _ = resolve_build(m, n, k, b_kmajor=b_kmajor, cluster=cluster, tma_store=tma_store, c_passes=c_passes)
    cluster, tma_store, c_passes = build["cluster"], build["tma_store"], build["c_passes"]
    if arrays.gemm_is_trivial(out, m, n, k):
        return out
    why = unavailable_reason()
    if why:
        raise RuntimeError(f"gemm_wgmma cannot run here: {why}")
    if hopper.needs_padding(a, k):
        a = hopper.padded(a, -(-k // 8) * 8)
    if b_kmajor:
        bt = b.T                                           # a view in torch and CuPy alike
        if not arrays.is_contiguous(bt) or hopper.needs_padding(bt, k):
            bt = hopper.padded(bt, -(-k // 8) * 8)         # B^T, N x K, K contiguous: a copy
        b = bt
        map_b = _tensor_map(arrays.ptr(b), dt, n, k, int(b.shape[1]) * 2, BN, BK, "b")
    else:
        if hopper.needs_padding(b, n):
            b = hopper.padded(b, -(-n // 8) * 8)
        map_b = _tensor_map(arrays.ptr(b), dt, k, n, int(b.shape[1]) * 2, BK, 64, "b")
    map_a = _tensor_map(arrays.ptr(a), dt, m, k, int(a.shape[1]) * 2, BM, BK, "a")
    cluster = launch_cluster(m, cluster)
    map_c = map_src = None
    if tma_store and n % 8 == 0 and arrays.ptr(out) % 16 == 0:
        map_c = _tensor_map(arrays.ptr(out), dt, m, n, n * 2, 64, 64, "out")
    if source_by_tma(tma_store, c_passes, epi_ops) and map_c is not None:
        # the SRC_TMA build copies the source's tiles by TMA into the C buffer: with no legal map for it (its base
        # not 16-byte aligned, its row stride not a multiple of 16 bytes) C is not staged either (c_tma = 0: the
        # source read from global memory, C stored from registers)
        if ldr % 8 == 0 and arrays.ptr(source) % 16 == 0:
            map_src = _tensor_map(arrays.ptr(source), dt, m, n, ldr * 2, 64, 64, source_name)
        else:
            map_c = None
    _launch(dt, map_a, map_b, out, m, n, k, b_kmajor, cluster, tma_store, map_c, c_passes, epi_ops, bias, source,
            ldr, colsums, map_src)
    return out


def _check_colsums(colsums, out, a, m: int, n: int, k: int) -> None:
    """colsums=: a contiguous fp32 (cdiv(M, COLSUM_ROWS), N) buffer on a's device, apart from out; K >= 1."""
    if colsums is None:
        return
    if k == 0 and m and n:
        raise ValueError("colsums: K = 0 (the kernel needs at least one K step); the sums of a zero C are zeros")
    rows = -(-m // COLSUM_ROWS)
    arrays.check_array("colsums", colsums, dtypes=("float32",), ndim=2, libs=(arrays.library(a),))
    if tuple(colsums.shape) != (rows, n):
        raise ValueError(f"colsums: expected shape {(rows, n)} (one row per {COLSUM_ROWS} rows of C), got "
                         f"{tuple(colsums.shape)}")
    arrays.check_same("a, colsums", a, colsums, shape=False, dtype=False)
    if arrays.overlap(colsums, out):
        raise ValueError("colsums: overlaps out")


def _check_epilogue(bias, residual, out, a, m: int, n: int, k: int, dt: str, name: str = "residual") -> int:
    """Validate the fused epilogue's operands (TypeError / ValueError naming them; the residual's slot is called
    `name`: "dgelu" when it holds the GELU's input z); returns its row stride in elements (0 without one)."""
    lib = arrays.library(a)
    if bias is not None:
        arrays.check_array("bias", bias, dtypes=(dt,), ndim=1, libs=(lib,))
        if int(bias.shape[0]) != n:
            raise ValueError(f"bias: expected {n} values (b has {n} columns), got shape {tuple(bias.shape)}")
        arrays.check_same("a, bias", a, bias, shape=False)
        if arrays.overlap(bias, out):
            raise ValueError("bias: overlaps out (the kernel reads it through the read-only cache while C is stored)")
    ldr = 0
    if residual is not None:
        arrays.check_array(name, residual, dtypes=(dt,), ndim=2, contiguous=False, libs=(lib,))
        if tuple(residual.shape) != (m, n):
            raise ValueError(f"{name}: expected shape {(m, n)}, got {tuple(residual.shape)}")
        arrays.check_same(f"a, {name}", a, residual, shape=False)
        st_bytes = arrays.byte_strides(residual)
        if any(v % 2 for v in st_bytes):
            raise ValueError(f"{name}: byte strides {tuple(st_bytes)} are not whole elements")
        st = [v // 2 for v in st_bytes]
        if n > 1 and st[1] != 1 or m > 1 and st[0] < n:
            raise ValueError(f"{name}: rows must be contiguous and not overlap each other (strides {tuple(st)}); "
                             f"pass {name}.contiguous()")
        ldr = st[0] if m > 1 else n
        if arrays.overlap(residual, out):
            raise ValueError(f"{name}: overlaps out; the fused epilogue reads it while C is being stored "
                             "(pass a separate out)")
    if k == 0 and m and n and (bias is not None or residual is not None):
        raise ValueError("a, b: K = 0 with a fused epilogue (the kernel needs at least one K step); "
                         "compute activation(bias) + residual directly")
    return ldr


@functools.lru_cache(maxsize=256)
def _tensor_map(ptr, dtype, rows, cols, row_stride_bytes, box_rows, box_cols, name):
    """encode_tensor_map, remembered: a map holds only (address, shape, stride, box), so an equal key is an equal
    map; benchmark loops then pay the driver call once."""
    m = hopper.encode_tensor_map(ptr, dtype, rows, cols, row_stride_bytes, box_rows, box_cols, name=name)
    m.flags.writeable = False
    return m


def grid_size(m: int, n: int, cluster: int = 1, resident: int | None = None,
              gpu: device.DeviceInfo | None = None) -> int:
    """Blocks of the persistent grid: one per unit of `cluster` tiles stacked along M, at most `resident` clusters
    (default: one block per SM of `gpu`, default the GPU every prediction uses here), times the cluster size."""
    units = -(-(-(-m // BM)) // cluster) * -(-n // BN)
    if resident is None:
        resident = (gpu or device.current()).sms // cluster
    return max(1, min(units, resident)) * cluster


def launch_cluster(m: int, cluster: int) -> int:
    """The cluster size a launch uses: a problem of one tile row runs single blocks (the pair would have no partner)."""
    return 1 if -(-m // BM) < 2 else cluster


def launch_shape(m: int, n: int, dtype: str, b_kmajor: bool, cluster: int, tma_store: bool, c_passes: int,
                 epi_ops: int = 0, resident: int | None = None, gpu: device.DeviceInfo | None = None):
    """(blocks, dynamic shared memory bytes, -D defines) of one launch of a build on an m x n output: what _launch
    launches and what lab 4.3's plan lists for a GPU (resident: clusters that fit at once, else one block per SM)."""
    return (grid_size(m, n, cluster, resident, gpu), smem_bytes(tma_store, c_passes),
            defines(dtype, None, b_kmajor, cluster, tma_store, c_passes, epi_ops))


def _launch(dt, map_a, map_b, out, m, n, k, b_kmajor=False, cluster=1, tma_store=False, map_c=None, c_passes=1,
            epi_ops=0, bias=None, residual=None, ldr=0, colsums=None, map_src=None):
    _, fn = _loaded(dt, bool(b_kmajor), cluster, tma_store, c_passes, epi_ops)
    resident = max_clusters(dt, cluster, tma_store, c_passes, epi_ops) if cluster > 1 else None
    grid, smem, _ = launch_shape(m, n, dt, bool(b_kmajor), cluster, tma_store, c_passes, epi_ops, resident,
                                 device.info())
    c_ptr = arrays.ptr(out)
    pair = int(n % 2 == 0 and c_ptr % 4 == 0)
    args = [ctypes.c_void_p(c_ptr), ctypes.c_int32(m), ctypes.c_int32(n), ctypes.c_int32(k), ctypes.c_int32(n),
            ctypes.c_int32(pair)]
    maps = [map_a, map_b]
    if tma_store:      # the EPI_TMA build takes C's map after B's and a flag last (0: no legal map, register stores)
        maps.append(map_c if map_c is not None else map_a)      # map_a: a valid stand-in the kernel never reads
        if source_by_tma(tma_store, c_passes, epi_ops):        # then the source's (read only where C's is used)
            maps.append(map_src if map_c is not None else map_a)
        args.append(ctypes.c_int32(int(map_c is not None)))
    if epi_ops:        # the EPI_OPS build: bias, residual or z (null where unused), its row stride, its pair-load
        # flag, the column sums' buffer (null where unused)
        r_ptr = arrays.ptr(residual) if residual is not None else 0
        args += [ctypes.c_void_p(arrays.ptr(bias) if bias is not None else 0), ctypes.c_void_p(r_ptr),
                 ctypes.c_int64(int(ldr)), ctypes.c_int32(int(r_ptr % 4 == 0 and ldr % 2 == 0)),
                 ctypes.c_void_p(arrays.ptr(colsums) if colsums is not None else 0)]
    # cuLaunchKernel copies every argument (the 128-byte maps included) before it returns
    hopper.launch(fn.ptr, grid, THREADS, smem, hopper.stream_ptr(out), maps, args)


