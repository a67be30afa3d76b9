"""Lab 4.6's peers' calls: torch's scaled_dot_product_attention with one backend chosen (cuDNN or
FlashAttention-2), the LSE from the backend's own aten op, and whether a backend can run here or on a given GPU."""
from __future__ import annotations

import functools

from common import device
from common.i18n import tr


def _sdpa_backend(name: str):
    from torch.nn.attention import SDPBackend

    return {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}[name]


def sdpa_fwd(q, k, v, causal: bool, backend: str):
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel

    with sdpa_kernel([_sdpa_backend(backend)]):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def sdpa_lse(q, k, v, causal: bool, backend: str):
    """(o, lse) from the backend's own aten op (the public SDPA does not return the LSE), lse as (B, H, S)."""
    import torch

    q, k, v = (t.contiguous() for t in (q, k, v))
    if backend == "cudnn":
        res = torch.ops.aten._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, causal, False)
    else:
        res = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal, False)
    return res[0], res[1].float().reshape(tuple(q.shape[:3]))


@functools.lru_cache(maxsize=None)
def sdpa_unavailable(backend: str) -> str:
    """'' when the SDPA backend runs here (one small bf16 forward and backward is tried), else why not."""
    if not device.has_gpu():
        return tr("needs a GPU")
    try:
        import torch

        q, k, v = (torch.randn(1, 2, 128, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                   for _ in range(3))
        sdpa_fwd(q, k, v, False, backend).sum().backward()
        torch.cuda.synchronize()
        return ""
    except Exception as e:  # noqa: BLE001 - any failure means: skip this peer, say why
        return tr("SDPA {backend} backend unavailable: {error}", backend=backend,
                  error=f"{type(e).__name__}: {str(e)[:120]}")


SDPA_NAMES = {"cudnn": "cuDNN", "flash": "FlashAttention-2"}


def sdpa_unavailable_on(backend: str, gpu: device.DeviceInfo) -> str:
    """'' when the SDPA backend can run on `gpu`, else why not: both backends' kernels need sm_80 or newer (bf16
    tensor cores); on the GPU at hand the backend is also tried (sdpa_unavailable), on a simulated one it is not."""
    if gpu.cc < 80:
        return tr("SDPA's {backend} backend needs sm_80 or newer; this GPU is {arch}", backend=SDPA_NAMES[backend],
                  arch=gpu.arch)
    return "" if gpu.simulated else sdpa_unavailable(backend)
