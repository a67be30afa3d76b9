"""What phase 4's exercise checkers share: an answers file (a dict of predictions keyed as in the starting point,
numbers compared with a relative tolerance), and the attention harness of exercises 4.6.1 and 4.6.2 (fp16 q, k, v on
awkward sizes, the output poisoned with NaN, a float64 reference, and a diagnosis of which keys the wrong rows
attended)."""
from __future__ import annotations

import math
import os
import warnings

import numpy as np

from common.i18n import tr


def answers(path: str, tag: str, exercise: str, name: str = "ANSWERS", file: str = "answers.py"):
    """The learner's `name` dict from the answers file at `path`, or a Verdict saying why it cannot be checked (it does
    not load, or its keys are not those of the starting point next to `exercise`, the exercise.py: the cases are the
    exercise, the values the answer)."""
    from course.checks import load_module
    from course.exercise import Verdict

    mod = load_module(path, tag)
    if isinstance(mod, Verdict):
        return mod
    start = load_module(os.path.join(os.path.dirname(os.path.abspath(exercise)), "start", file), tag + "s")
    got, want = getattr(mod, name, None), getattr(start, name)
    if not isinstance(got, dict) or set(got) != set(want):
        return Verdict(False, tr("keep the cases of the starting point as the keys of {name}: {keys}", name=name,
                                 keys=sorted(want)))
    return got


def kernel_file(path: str, tag: str, timed: bool = False):
    """The learner's kernel file as a module, or a Verdict: it does not load, or (timed) there is no GPU to time it
    on."""
    from common import device
    from course.checks import load_module
    from course.exercise import Verdict

    if timed and not device.has_gpu():
        return Verdict(False, tr("this exercise times kernels, which needs a GPU ({why})",
                                 why=tr(device.no_gpu_reason())))
    return load_module(path, tag)


def close(said, want: float, rel: float = 0.02) -> bool:
    """`said` is a number within `rel` of `want` (a right answer rounded by hand passes; a wrong formula does not)."""
    if isinstance(said, bool) or not isinstance(said, (int, float, np.integer, np.floating)):
        return False
    return math.isfinite(float(said)) and abs(float(said) - want) <= rel * abs(want)


def verdict(wrong: list[str], right: str, of: str | None = None, count: int | None = None):
    """The Verdict of a calculator exercise: how many are wrong (`count`, else len(wrong)) and the first two wrong
    answers with their reasons, or `right`. `of` says of what ("of 6 kernels", through tr; "answers" when None)."""
    from course.checks import listed
    from course.exercise import Verdict

    if wrong:
        return Verdict(False, tr("{count} {of} not yet right; {reasons}", count=len(wrong) if count is None else count,
                                 of=tr("answers") if of is None else of, reasons=listed(wrong[:2])))
    return Verdict(True, right)


def num(x: float) -> str:
    """A figure as a learner would write it: 4.56e+09 for large and small ones, 85.3 otherwise."""
    return f"{x:.3g}" if 1e-2 <= abs(x) < 1e6 or x == 0 else f"{x:.3e}"


# ---------------------------------------------------------------------------------------------------------------------
# Attention (exercises 4.6.1 and 4.6.2): the learner's flash_forward(q, k, v, out, causal) on (B*H, S, D) fp16 tensors
# ---------------------------------------------------------------------------------------------------------------------
# (B*H, S, D, causal): ragged tiles, several query blocks and the diagonal block of each, a single query row
CASES = ((2, 33, 16, False), (1, 40, 32, True), (2, 17, 16, True), (3, 50, 16, True), (1, 1, 16, True))


def attention64(q, k, v, offset: int | None) -> np.ndarray:
    """softmax(q k^T / sqrt(D)) v in float64, where query i attends keys j <= i + offset (offset None: every key).
    A row that attends no key is NaN (0 / 0), as a kernel's would be."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    s = np.einsum("bqd,bkd->bqk", q, k) / math.sqrt(q.shape[-1])
    if offset is not None:
        i, j = np.indices(s.shape[1:])
        s = np.where(j <= i + offset, s, -np.inf)
    with np.errstate(invalid="ignore"):
        m = s.max(axis=-1, keepdims=True)
        e = np.exp(s - m)
        return (e / e.sum(axis=-1, keepdims=True)) @ v


def qkv(bh: int, s: int, d: int, seed: int, where: str):
    """Standard-normal q, k, v as fp16 torch tensors on `where`, and their float64 values (the rounded inputs)."""
    import torch

    rng = np.random.default_rng(seed)
    ts = [torch.from_numpy(rng.standard_normal((bh, s, d))).to(device=where, dtype=torch.float16) for _ in range(3)]
    return ts, [t.double().cpu().numpy() for t in ts]


def _diagnosis(out: np.ndarray, host, dtype: str, tol) -> str:
    """What the wrong output is, if it is attention with the causal mask one key off."""
    from common import check

    fin = np.isfinite(out).all(axis=(0, 2))               # query rows without a NaN in any head
    nan_rows = [int(i) for i in np.flatnonzero(~fin)]
    for offset, what in ((-1, tr("keys j < i: the mask drops the diagonal, so every query loses its own key")),
                         (1, tr("keys j <= i + 1: the mask lets every query see one key of its future"))):
        alt = attention64(*host, offset)
        if fin.any() and check.compare(out[:, fin], alt[:, fin], dtype, tol).ok:
            rows = ", ".join(map(str, nan_rows[:4]))
            nan = ("" if not nan_rows else
                   tr("; rows {rows} came out NaN: no key left to attend, 0 / 0", rows=rows) if len(nan_rows) > 1 else
                   tr("; row {rows} came out NaN: no key left to attend, 0 / 0", rows=rows))
            return tr("your output is attention where query i attends {what}{nan}", what=what, nan=nan)
    return tr("NaN in rows {rows}", rows=nan_rows[:6]) if nan_rows else ""


def check_attention(mod, where: str, cases=CASES):
    """None when mod.flash_forward matches the float64 reference on every case, else a Verdict that says which case,
    and, where it can, which keys the wrong rows attended."""
    from common import arrays, check
    from course.checks import guarded_output, outside_verdict, release, said
    from course.exercise import Verdict
    from phase4_optimization.lab06_attention import lab as L

    if not callable(getattr(mod, "flash_forward", None)):
        return Verdict(False, tr("the file must define flash_forward(q, k, v, out, causal), as the starting point "
                                 "does"))
    for n, (bh, s, d, causal) in enumerate(cases):
        what = f"B*H = {bh}, S = {s}, D = {d}, {'causal' if causal else 'non-causal'}"
        ts, host = qkv(bh, s, d, 461 + n, where)
        out = guarded_output((bh, s, d), "float16", ts[0])     # NaN between NaN guard bands: unwritten rows show
        try:
            mod.flash_forward(*ts, out, causal)
        except Exception as e:  # noqa: BLE001 - a kernel that does not run is a wrong answer, said plainly
            release(out)
            return Verdict(False, tr("{what}: the kernel failed ({error}: {detail})", what=what,
                                     error=type(e).__name__, detail=str(e)[:200]))
        wrote = outside_verdict(what, {"out": out})
        if wrote is not None:
            return wrote
        got = np.asarray(arrays.to_numpy(out), np.float64)
        tol = L.tolerance((1, bh, s, d, causal), "float16")
        cmp = check.compare(got, attention64(*host, 0 if causal else None), "float16", tol)
        if cmp.ok:
            continue
        why = _diagnosis(got, host, "float16", tol) if causal else ""
        return Verdict(False, f"{what}: {said(cmp.message)}" + (f". {why[0].upper() + why[1:]}" if why else ""))
    return None


def reads_past_the_diagonal(mod, where: str) -> str:
    """"" when the causal mod.flash_forward never reads a key tile past a query block's diagonal, else what showed it.
    Keys P .. 2P - 1 hold NaN and V there too: no query before row P attends them, so a loop that stops after its
    block's diagonal tile leaves rows 0 .. P - 1 right; one that reads such a tile, even to mask it to -inf, gets
    0 * NaN = NaN in P V. Deterministic, on any machine. P (256 on a GPU, 64 in the interpreter) must be a multiple
    of BLOCK_M."""
    import torch

    from common import arrays, check
    from phase4_optimization.lab06_attention import lab as L

    p = 256 if where == "cuda" else 64
    ts, host = qkv(1, 2 * p, 64, 463, where)
    for t in ts[1:]:
        t[:, p:] = float("nan")
    out = torch.full((1, 2 * p, 64), float("nan"), dtype=torch.float16, device=where)
    with warnings.catch_warnings():                 # the interpreter's max over the NaN tiles warns; NaN is the point
        warnings.simplefilter("ignore", RuntimeWarning)
        mod.flash_forward(*ts, out, True)
    got = np.asarray(arrays.to_numpy(out), np.float64)[:, :p]
    cmp = check.compare(got, attention64(*(h[:, :p] for h in host), 0), "float16", L.tolerance((1, 1, p, 64, True),
                                                                                               "float16"))
    if cmp.ok:
        return ""
    from course.checks import said

    bad = int((~np.isfinite(got).all(axis=(0, 2))).sum())
    what = (tr("{bad} of query rows 0 .. {last} came out NaN", bad=bad, last=p - 1) if bad else
            tr("query rows 0 .. {last} are wrong ({message})", last=p - 1, message=said(cmp.message)))
    return tr("with NaN in keys and values {p} .. {end} of a {n}-token causal head, {what}, though none of them "
              "attends those keys: your loop reads tiles past its block's diagonal (this probe needs BLOCK_M to "
              "divide {p})", p=p, end=2 * p - 1, n=2 * p, what=what)


def time_causal(mod, shape=(64, 4096, 64)) -> tuple[float, float, float]:
    """(causal ms, non-causal ms, the spread) of mod.flash_forward at (B*H, S, D), timed on the GPU in interleaved
    rounds."""
    import torch

    from common import bench

    ts, _ = qkv(*shape, 462, "cuda")
    out = torch.empty(shape, dtype=torch.float16, device="cuda")
    t = bench.interleaved({"causal": lambda: mod.flash_forward(*ts, out, True),
                           "non-causal": lambda: mod.flash_forward(*ts, out, False)}, rounds=3)
    return t["causal"].median_ms, t["non-causal"].median_ms, max(t["causal"].spread, t["non-causal"].spread)
