"""A fake CUDA driver for lab 4.3's gemm_wgmma host path, shared by the tests of its host side and of its builds
(tests/test_phase4_lab03_tensor_cores_wgmma_host.py, ..._wgmma_builds.py)."""
import functools

from common import arrays, hopper
from phase4_optimization.lab03_tensor_cores import wgmma_launch


def fake_driver(monkeypatch, encode=None, launch=None) -> list:
    """gemm_wgmma's host path without a GPU, for one test: a fresh tensor-map cache (no fake map outlives the test),
    the driver's encoder replaced by `encode` (default: one that writes nothing and succeeds) and the launch by
    `launch` (default: a recorder). Returns the default recorder's list of launches: (cluster, tma_store, c_passes)
    and, with a fused epilogue, (its mask, the residual's row stride)."""
    launches = []
    fresh = functools.lru_cache(maxsize=256)(wgmma_launch._tensor_map.__wrapped__)
    monkeypatch.setattr(wgmma_launch, "_tensor_map", fresh)
    monkeypatch.setattr(arrays, "on_device", lambda x: True)
    monkeypatch.setattr(wgmma_launch, "unavailable_reason", lambda: None)
    monkeypatch.setattr(hopper, "encoder", lambda: (encode or (lambda *args: 0), ""))

    def record(dt, ma, mb, out, m, n, k, kmaj, cl, epi, mc, cp, *ops):
        launches.append((cl, epi, cp) + ((ops[0], ops[3]) if ops and ops[0] else ()))

    monkeypatch.setattr(wgmma_launch, "_launch", launch or record)
    return launches
