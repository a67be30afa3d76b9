"""Lab 4.3's wgmma builds that are not variants of the lab, for the sanitizer sweep (tools/sanitize.py reads EXTRAS from
a lab's sanitize_extras module): the fused epilogues lab 4.7 runs on this kernel - the backward's (* gelu_tanh'(z) and
the column sums) and the forward's (bias, GELU, residual) - each in the register-store build and in the TMA-store build
that copies the epilogue's source into the C buffer by TMA (SRC_TMA: the buffer a TMA load, the threads and a TMA
store share, one tile after another, the case racecheck and synccheck are for). One small awkward case each (more
tiles than one, M and N ragged, N a multiple of 8 so that the TMA-store build has its tensor maps), prepared outside
the sweep's markers, launched inside them, judged against float64 in guard bands."""
from __future__ import annotations

import numpy as np

from common import arrays, check

from . import wgmma as wg

CASE = (200, 264, 32)         # M, N, K: 2 x 2 tiles of 128 x 256, the last of each ragged (1 box of 64 columns,
                              # 8 wide), K inside one 64-deep step; small enough for the sweep (tools.sanitize.MAX_COST)
BUILDS = {"registers": {"tma_store": False}, "source by TMA": {"tma_store": True, "c_passes": 1}}


class EpilogueBuild:
    """One epilogue in one build as a sweep target: name, impl, size, dtype, available() -> (ok, why),
    prepare(seed) -> state, run(state), check(state) -> (ok, message)."""

    impl = "cuda"

    def __init__(self, kind: str, build: str):
        self.kind, self.build = kind, build      # kind: "backward" (dgelu + colsums) | "forward" (bias, GELU, residual)
        self.name = f"cuda wgmma {kind} epilogue, {build}"
        self.size, self.dtype = CASE, "bfloat16"

    def available(self):
        why = wg.unavailable_reason()
        return not why, why

    def prepare(self, seed: int) -> dict:
        m, n, k = CASE
        a, b, a_ref, b_ref = wg.make_inputs(m, n, k, self.dtype, seed=seed)
        src, src_ref = wg.source_matrix(m, n, self.dtype, seed + 1, like=a)
        st = {"a": a, "b": b, "src": src, "out": check.guarded((m, n), self.dtype, a)}
        if self.kind == "backward":
            st["part"] = check.guarded((-(-m // wg.COLSUM_ROWS), n), "float32", a)
            st["ref"] = wg.epilogue_reference(a_ref, b_ref, z=src_ref)
        else:
            bias = arrays.from_numpy(check.rng(seed + 2).standard_normal(n), self.dtype, "cuda")
            st["bias"] = bias
            st["ref"] = wg.epilogue_reference(a_ref, b_ref, arrays.to_numpy(bias).astype(np.float64), True, src_ref)
        return st

    def run(self, st: dict) -> None:
        if self.kind == "backward":
            wg.gemm_wgmma(st["a"], st["b"], out=st["out"], dgelu=st["src"], colsums=st["part"], **BUILDS[self.build])
        else:
            wg.gemm_wgmma(st["a"], st["b"], out=st["out"], bias=st["bias"], activation="gelu_tanh",
                          residual=st["src"], **BUILDS[self.build])

    def check(self, st: dict):
        c = check.compare(st["out"], st["ref"], self.dtype, wg.tolerance(CASE[2], self.dtype))
        damage = check.guard_damage(st["out"])
        msgs, ok = [c.message], c.ok and not damage
        if damage:
            msgs.append(f"wrote outside C: {damage}")
        if "part" in st:       # against the stored C's sums in float64: only their fp32 additions differ
            cs = check.compare(st["part"], wg.block_sums64(st["out"], wg.COLSUM_ROWS), "float32", check.Tol(1e-5, 1e-5))
            part_damage = check.guard_damage(st["part"])
            ok = ok and cs.ok and not part_damage
            msgs.append(f"column sums: {cs.message}{', wrote outside them: ' + part_damage if part_damage else ''}")
        hang = wg.hang_report()
        if hang:
            ok = False
            msgs.append(f"hang record: {hang}")
        return ok, " | ".join(msgs)


EXTRAS = [EpilogueBuild(kind, build) for kind in ("backward", "forward") for build in BUILDS]
