"""Lab 4.6's kernels that are not variants of the lab, for the sanitizer sweep (tools/sanitize.py reads EXTRAS from a
lab's sanitize_extras module): each rung of the Hopper backward (kernels_hopper_bwd.cu) on one small awkward case -
ragged S over three 64-row tiles, GQA 4 / 2, D 128 - prepared outside the sweep's markers, launched inside them, and
judged by hopper_bwd_check (guard bands, float64 reference)."""
from __future__ import annotations

from . import hopper_bwd as hb
from . import hopper_bwd_check as hbc

CASE = (2, 4, 2, 130, 128, False, "bfloat16")     # (B, Hq, Hkv, S, D, causal, dtype): hopper_bwd_check's 4th case
CAUSAL = (3, 2, 2, 200, 128, True, "bfloat16")    # causal over 6 (batch, head)s: rung 09's block order, 11's counts


class BackwardRung:
    """One rung as a sweep target: name, impl, size, dtype, available() -> (ok, why), prepare(seed) -> state,
    run(state), check(state) -> (ok, message)."""

    impl = "cuda"

    def __init__(self, rung: str, case=CASE):
        self.rung, self.case = rung, case
        self.name = f"cuda hopper bwd {rung} ({hb.KERNELS[rung]}){', causal' if case[5] else ''}"
        self.size, self.dtype = case[:6], case[6]

    def available(self):
        why = hbc.unavailable()
        return not why, why

    def prepare(self, seed: int):
        return hbc.prepare_case(self.case, seed)

    def run(self, state) -> None:
        hbc.launch(state, self.rung)

    def check(self, state):
        ok, lines = hbc.judge(state)
        return ok, " ".join(line.strip() for line in lines)


EXTRAS = [BackwardRung(r) for r in hb.RUNGS] + [BackwardRung(r, CAUSAL) for r in ("09", "11", "12")]   # causal paths
