"""Arrays the labs pass around, and the checks every wrapper makes before it launches anything.

Device arrays are CuPy arrays (float32, float16, float64, ints) or torch CUDA tensors (needed for bfloat16, which
CuPy has no dtype for). Host arrays are NumPy arrays or torch CPU tensors; Triton variants take those when they run
in the interpreter (no GPU). Every check raises TypeError or ValueError that names the argument and says what was
expected, so bad input never reaches a kernel.
"""
from __future__ import annotations

import numpy as np

FLOAT_DTYPES = ("float32", "float16", "bfloat16", "float64")
ITEMSIZE = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "uint32": 4,
            "int16": 2, "uint16": 2, "int8": 1, "uint8": 1, "bool": 1}


def library(x) -> str:
    """'cupy', 'torch', 'numpy' or the type's name."""
    mod = type(x).__module__.split(".")[0]
    if mod in ("cupy", "torch", "numpy"):
        return mod
    return type(x).__name__


def dtype_name(x) -> str:
    """'float32', 'bfloat16', ... for a NumPy/CuPy/torch array, a dtype, or a name."""
    dt = getattr(x, "dtype", x)
    s = str(dt)
    if s.startswith("torch."):
        s = s[len("torch."):]
    return {"half": "float16", "float": "float32", "double": "float64"}.get(s, s)


def on_device(x) -> bool:
    lib = library(x)
    if lib == "cupy":
        return True
    if lib == "torch":
        return x.is_cuda
    return False


def device_index(x) -> int | None:
    """The GPU an array lives on (None for a host array)."""
    if not on_device(x):
        return None
    return int(x.device.index or 0) if library(x) == "torch" else int(x.device.id)


def ptr(x) -> int:
    """Device address of the first element."""
    lib = library(x)
    if lib == "cupy":
        return x.data.ptr
    if lib == "torch":
        return x.data_ptr()
    if lib == "numpy":
        return x.ctypes.data
    raise TypeError(f"no data pointer for {type(x).__name__}")


def nbytes(x) -> int:
    return int(np.prod(x.shape, dtype=np.int64)) * ITEMSIZE[dtype_name(x)]


def size(x) -> int:
    return int(np.prod(tuple(x.shape), dtype=np.int64))


def is_contiguous(x) -> bool:
    lib = library(x)
    if lib in ("cupy", "numpy"):
        return bool(x.flags.c_contiguous)
    if lib == "torch":
        return bool(x.is_contiguous())
    return False


def to_numpy(x) -> np.ndarray:
    """A host NumPy copy (bfloat16 comes back as float32, which holds every bf16 value exactly)."""
    lib = library(x)
    if lib == "numpy":
        return x
    if lib == "cupy":
        return x.get()
    if lib == "torch":
        t = x.detach()
        if dtype_name(t) == "bfloat16":
            t = t.float()
        return t.cpu().numpy()
    if np.isscalar(x):
        return np.asarray(x)
    raise TypeError(f"cannot convert {type(x).__name__} to NumPy")


def from_numpy(a: np.ndarray, dtype: str, where: str):
    """Put a host array on `where` ('cuda' or 'cpu') as `dtype`, using CuPy/NumPy except for bfloat16 (torch)."""
    if dtype == "bfloat16":
        import torch

        return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(device=where, dtype=torch.bfloat16)
    if where == "cuda":
        import cupy

        return cupy.asarray(a, dtype=dtype)
    return np.ascontiguousarray(a, dtype=dtype)


def round_to(a, dtype: str, toward_zero: bool = False) -> np.ndarray:
    """a rounded to dtype (to nearest, ties to even), back in float64: the value a kernel stores. toward_zero (bf16
    only): truncated instead, as Triton's interpreter converts fp32 to bf16."""
    if toward_zero:
        if dtype != "bfloat16":
            raise ValueError(f"toward_zero: only for bfloat16, not {dtype!r}")
        bits = np.asarray(a, np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
        return bits.view(np.float32).astype(np.float64)
    return to_numpy(from_numpy(np.asarray(a, np.float64), dtype, "cpu")).astype(np.float64)


def empty(shape, dtype: str, like):
    """Uninitialised array of `shape`/`dtype` from the same library and device as `like`."""
    lib = library(like)
    if dtype == "bfloat16" or lib == "torch":
        import torch

        dev = like.device if lib == "torch" else ("cuda" if on_device(like) else "cpu")
        return torch.empty(tuple(shape), dtype=getattr(torch, dtype), device=dev)
    if lib == "cupy":
        import cupy

        return cupy.empty(shape, dtype=dtype)
    return np.empty(shape, dtype=dtype)


def fill(x, value: float) -> None:
    """In-place fill for any of the three libraries."""
    lib = library(x)
    if lib == "torch":
        x.fill_(value)
    else:
        x.fill(value)


# ---------------------------------------------------------------------------------------------------------------------
# Validation: call these at the top of every wrapper
# ---------------------------------------------------------------------------------------------------------------------
def check_array(name: str, x, *, dtypes=None, ndim=None, device: bool | None = True, contiguous: bool = True,
                libs: tuple[str, ...] = ("cupy", "torch", "numpy")) -> str:
    """Validate one argument and return its dtype name.

    device=True: must be a CuPy array or a CUDA torch tensor. device=False: must be a host array (NumPy or CPU torch);
    device=None: either. libs: the array libraries accepted (CUDA C wrappers take CuPy arrays only).
    """
    lib = library(x)
    if lib not in ("cupy", "torch", "numpy"):
        raise TypeError(f"{name}: expected an array (CuPy, NumPy or torch), got {type(x).__name__}")
    if device is True and not on_device(x):
        hint = "cupy.asarray(x)" if lib == "numpy" else "x.cuda()"
        raise TypeError(f"{name}: expected a GPU array, got a host {lib} array; move it first with {hint}")
    if device is False and on_device(x):
        raise TypeError(f"{name}: expected a host array (NumPy or CPU torch) for the interpreter, got a GPU array")
    if lib not in libs:
        hint = " (wrap a torch tensor without a copy: cupy.from_dlpack(t))" if lib == "torch" else ""
        raise TypeError(f"{name}: expected a {' or '.join(libs)} array, got a {lib} array{hint}")
    dt = dtype_name(x)
    if dtypes is not None and dt not in dtypes:
        raise TypeError(f"{name}: dtype {dt} is not supported here; expected one of {', '.join(dtypes)}")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if x.ndim not in allowed:
            raise ValueError(f"{name}: expected a {' or '.join(f'{d}-D' for d in allowed)} array, got {x.ndim}-D "
                             f"with shape {tuple(x.shape)}")
    if contiguous and not is_contiguous(x):
        raise ValueError(f"{name}: expected a C-contiguous array (strides {tuple(byte_strides(x))}); pass a contiguous "
                         f"copy, e.g. cupy.ascontiguousarray(x)")
    return dt


def check_rows(name: str, x, *, dtypes, device: bool | None = True) -> tuple[str, int]:
    """An array normalized over its last dimension (a LayerNorm's x): check_array, then at least 1-D with that dimension
    non-empty. Returns (its dtype name, the last dimension's length)."""
    dt = check_array(name, x, dtypes=dtypes, ndim=None, device=device)
    if x.ndim < 1:
        raise ValueError(f"{name}: expected at least 1 dimension (normalized over the last one), got a 0-D array")
    n = int(x.shape[-1])
    if n == 0:
        raise ValueError(f"{name}: the normalized (last) dimension is empty, shape {tuple(x.shape)}")
    return dt, n


def byte_strides(x) -> list[int]:
    """Strides in bytes, whatever the library (torch counts elements, CuPy and NumPy bytes)."""
    if library(x) == "torch":
        return [s * x.element_size() for s in x.stride()]
    return x.strides


def overlap(x, y) -> bool:
    """Whether two arrays' byte spans intersect: [first byte, one past the last byte they can touch], from their
    shapes and (non-negative) strides, so a strided view counts the gaps between its rows. False when either is
    empty. Wrappers use it to refuse an out that shares memory with an input their kernel reads."""
    if size(x) == 0 or size(y) == 0:
        return False

    def span(z):
        lo = ptr(z)
        return lo, lo + sum((int(d) - 1) * int(st) for d, st in zip(z.shape, byte_strides(z))) + ITEMSIZE[dtype_name(z)]

    (x0, x1), (y0, y1) = span(x), span(y)
    return x0 < y1 and y0 < x1


def check_same(names: str, *arrays, shape: bool = True, dtype: bool = True, place: bool = True) -> None:
    """All arrays agree in shape / dtype / library and device (host, or the same GPU). `names` is 'a, b, out' for the
    message."""
    first = arrays[0]
    for x in arrays[1:]:
        if shape and tuple(x.shape) != tuple(first.shape):
            raise ValueError(f"{names}: shapes must match, got {[tuple(a.shape) for a in arrays]}")
        if dtype and dtype_name(x) != dtype_name(first):
            raise TypeError(f"{names}: dtypes must match, got {[dtype_name(a) for a in arrays]}")
        if place and (library(x) != library(first) or device_index(x) != device_index(first)):
            raise TypeError(f"{names}: arrays must come from the same library and device, got "
                            f"{[library(a) + (f':gpu{device_index(a)}' if on_device(a) else ':host') for a in arrays]}")


def matmul_dims(a, b, names: tuple[str, str] = ("a", "b"), max_dim: int | None = None) -> tuple[int, int, int]:
    """(M, N, K) of the product a @ b of two 2-D arrays; ValueError when the inner dimensions differ, or (with
    max_dim) when M, N or K exceeds it - kernels that take 32-bit dimensions say so."""
    na, nb = names
    m, k = (int(s) for s in a.shape)
    k2, n = (int(s) for s in b.shape)
    if k != k2:
        raise ValueError(f"{na}, {nb}: inner dimensions differ: {na} is {m}x{k}, {nb} is {k2}x{n}; {na} @ {nb} needs "
                         f"{na}.shape[1] == {nb}.shape[0]")
    if max_dim is not None:
        for name, v in (("M", m), ("N", n), ("K", k)):
            if v > max_dim:
                raise ValueError(f"{name} = {v} exceeds {max_dim} (the kernels take 32-bit dimensions)")
    return m, n, k


def gemm_is_trivial(out, m: int, n: int, k: int) -> bool:
    """True when a GEMM C = A @ B has nothing to launch and `out` already holds the answer: C is empty (m or n is 0),
    or k == 0 and C = 0 (written here)."""
    if m and n and k == 0:
        fill(out, 0.0)
    return m == 0 or n == 0 or k == 0


def check_out(out, shape, dtype: str, like, name: str = "out"):
    """Return `out` after checking it, or a fresh array when out is None."""
    if out is None:
        return empty(shape, dtype, like)
    check_array(name, out, dtypes=(dtype,), device=on_device(like))
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{name}: expected shape {tuple(shape)}, got {tuple(out.shape)}")
    if library(out) != library(like):
        raise TypeError(f"{name}: expected a {library(like)} array like the inputs, got {library(out)}")
    return out


def aligned(x, nbytes: int = 16) -> bool:
    """Is the first element on an `nbytes` boundary (a vector load of that width is legal)?"""
    return ptr(x) % nbytes == 0


def mnk(size) -> tuple[int, int, int]:
    """(M, N, K) of a GEMM case: an int (square) or a 3-tuple."""
    if isinstance(size, (tuple, list)):
        m, n, k = (int(s) for s in size)
        return m, n, k
    return int(size), int(size), int(size)


def device_randn(shape, dtype: str, seed: int, scale: float = 1.0, shift: float = 0.0):
    """shift + scale * N(0, 1) generated on the GPU (benchmark-sized inputs: no host round trip of gigabytes).
    fp32/fp16 come back as CuPy arrays, bf16 as a torch tensor (CuPy has no bf16)."""
    import cupy
    import numpy as np

    x = cupy.random.RandomState(seed).standard_normal(tuple(shape), dtype=cupy.float32)
    if scale != 1.0 or shift != 0.0:
        x = x * np.float32(scale) + np.float32(shift)
    if dtype == "bfloat16":
        import torch

        return torch.from_dlpack(x).to(torch.bfloat16)
    return x if dtype == "float32" else x.astype(dtype)
