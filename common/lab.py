"""The lab contract, and the two drivers every lab and phase runner share.

A lab module offers:
  reference(*inputs) -> float64 NumPy result (or a tuple of them)
  make_inputs(size, dtype, rng, where) -> tuple of arrays on `where` ('cuda' or 'cpu')
  VARIANTS: list[Variant]       our kernels, CUDA C and Triton side by side
  PEERS: list[Variant]          the library calls a learner would use instead
  CHECK_CASES / CPU_CHECK_CASES: [(size, dtype), ...] awkward cases for the GPU / for the interpreter
  optional out_dtype(dtype) -> dtype (or a tuple, one per output) and tolerance(size, dtype) -> check.Tol
  main(argv=None) -> int        check every variant, then benchmark, then print and save; nothing runs at import
Every variant is a plain function fn(*inputs, out=None) -> out.
"""
from __future__ import annotations

import importlib
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable

from . import arrays, check, cli, device


@dataclass
class Variant:
    name: str
    fn: Callable
    impl: str                                   # 'cuda' | 'triton' | 'peer'
    dtypes: tuple[str, ...] = ("float32",)
    note: str = ""
    archs: tuple[str, ...] = field(default=())  # empty: any GPU; else e.g. ("sm_90",) where it can run
    # cases a peer cannot serve (a library with no kernel for them): fn(size, dtype) -> why, or "" when it can. Only
    # for peers: our own variants refuse bad input with an error, and serve every valid case.
    cannot_serve: Callable | None = None

    @property
    def runs_without_gpu(self) -> bool:
        """Triton variants run in the interpreter; CUDA C and library peers need a GPU."""
        return self.impl == "triton"

    def available(self) -> tuple[bool, str]:
        """Can it run here? (False, why) when not."""
        if not device.has_gpu():
            return (self.runs_without_gpu, "" if self.runs_without_gpu else "needs a GPU (compile report shown)")
        if self.archs and device.info().arch not in self.archs:
            return False, f"needs {'/'.join(self.archs)}, this GPU is {device.info().arch}"
        return True, ""


def where() -> str:
    return "cuda" if device.has_gpu() else "cpu"


def _np64(x):
    import numpy as np

    if arrays.library(x) in ("cupy", "numpy", "torch"):
        return arrays.to_numpy(x).astype(np.float64)
    return x


def prepare_case(lab, size, dtype: str, rng):
    """Fresh inputs, their float64 reference and poisoned outputs for one case: (inputs, ref, out)."""
    inputs = lab.make_inputs(size, dtype, rng, where())
    ref = lab.reference(*[_np64(x) for x in inputs])
    out_dt = getattr(lab, "out_dtype", lambda d: d)(dtype)
    like = next(x for x in inputs if arrays.library(x) in ("cupy", "numpy", "torch"))
    if isinstance(ref, tuple):
        dts = out_dt if isinstance(out_dt, tuple) else (out_dt,) * len(ref)
        out = tuple(check.poisoned(r.shape, d, like) for r, d in zip(ref, dts))
    else:
        out = check.poisoned(ref.shape, out_dt, like)
    return inputs, ref, out


def compare_case(lab, res, ref, size, dtype: str) -> check.Comparison:
    """The variant's result(s) against the reference(s), with the lab's tolerance: the first failing comparison,
    else the first one."""
    tol_fn = getattr(lab, "tolerance", None)
    tol = tol_fn(size, dtype) if tol_fn else None
    if isinstance(ref, tuple):
        results = [check.compare(o, r, dtype, tol) for o, r in zip(res, ref)]
        bad = [c for c in results if not c.ok]
        return bad[0] if bad else results[0]
    return check.compare(res, ref, dtype, tol)


def run_variant(lab, v: Variant, size, dtype: str, rng) -> check.Comparison:
    """One check: fresh inputs, poisoned outputs, the variant, the float64 reference, the comparison."""
    inputs, ref, out = prepare_case(lab, size, dtype, rng)
    return compare_case(lab, v.fn(*inputs, out=out), ref, size, dtype)


def stop_before_bench(ok: bool, args) -> int | None:
    """After a lab's checks on a GPU: the exit status when it stops there (1: a check failed, so nothing is timed;
    0: --no-bench), or None to go on to the benchmark."""
    if not ok:
        print("correctness failed: not benchmarking")
        return 1
    return None if args.bench else 0


def check_variants(lab, variants: list[Variant], cases, *, verbose: bool = True) -> tuple[list[dict], bool]:
    """Run every available variant on every case; print one line per variant; return (rows, all_ok)."""
    rows, all_ok = [], True
    for v in variants:
        ok_here, why = v.available()
        if not ok_here:
            rows.append({"variant": v.name, "impl": v.impl, "cases": 0, "result": f"skipped: {why}"})
            continue
        n, fails, worst, passed_over = 0, [], 0.0, []
        t0 = time.perf_counter()
        for i, (size, dtype) in enumerate(cases):
            if dtype not in v.dtypes:
                continue
            why_not = v.cannot_serve(size, dtype) if v.cannot_serve else ""
            if why_not:
                passed_over.append(f"{size} {dtype}: {why_not}")
                continue
            try:
                c = run_variant(lab, v, size, dtype, check.rng(i))
            except Exception as e:  # noqa: BLE001 - a crash is a failed check, reported with its case
                fails.append(f"{size} {dtype}: {type(e).__name__}: {e}")
                continue
            n += 1
            worst = max(worst, c.rel_norm_err)
            if not c.ok:
                fails.append(f"{size} {dtype}: {c.message}")
        ok = not fails and n > 0
        all_ok &= ok
        result = (f"ok ({n} cases, worst rel err {worst:.1e})" if ok else
                  f"FAILED {len(fails)}/{max(n, len(fails))}: {fails[0]}" if fails else "no case ran")
        if passed_over:
            result += f"; {len(passed_over)} case(s) it cannot serve, passed over ({passed_over[0]})"
        rows.append({"variant": v.name, "impl": v.impl, "cases": n, "result": result,
                     "secs": round(time.perf_counter() - t0, 2)})
    if verbose:
        from . import report

        report.print_table(rows, ["variant", "impl", "cases", "secs", "result"],
                           title=f"correctness against the float64 reference (seed {check.seed()})")
    return rows, all_ok


# ---------------------------------------------------------------------------------------------------------------------
# Phase runners
# ---------------------------------------------------------------------------------------------------------------------
def run_phase(phase: str, title: str, labs: list[str], argv=None) -> int:
    """Run the labs of a phase in order; flags other than --only/--list are passed to every lab."""
    p = cli.parser(f"{title}: runs its labs in order ({', '.join(labs)}); other flags go to every lab.")
    p.add_argument("--only", action="append", default=None, metavar="LAB",
                   help="run only the labs whose name contains this (repeatable)")
    p.add_argument("--list", action="store_true", help="list the labs and exit")
    args, _ = p.parse_known_args(argv)
    argv = list(sys.argv[1:] if argv is None else argv)
    lab_argv = [a for a in argv if a not in ("--list",)]
    # drop --only and its value from what the labs see
    clean, skip = [], False
    for a in lab_argv:
        if skip:
            skip = False
            continue
        if a == "--only":
            skip = True
            continue
        if a.startswith("--only="):
            continue
        clean.append(a)
    if args.list:
        if not labs:
            print(f"{title}: no labs yet")
        for name in labs:
            mod = importlib.import_module(f"{phase}.{name}")
            first = (mod.__doc__ or "").strip().splitlines()[0] if mod.__doc__ else ""
            print(f"{name:32s} {first}")
        return 0
    if args.device_info:
        cli.finish_args(args)
    print(f"{title}\n{cli.mode_line()}")
    if not labs:
        print("(no labs in this phase yet)")
        return 0
    summary, status = [], 0
    for name in labs:
        if args.only and not any(o in name for o in args.only):
            continue
        print(f"\n{'=' * 100}\n{phase}.{name}\n{'=' * 100}", flush=True)
        t0 = time.perf_counter()
        try:
            mod = importlib.import_module(f"{phase}.{name}")
            rc = int(mod.main(clean) or 0)
        except SystemExit as e:
            rc = int(e.code or 0)
        except Exception:  # noqa: BLE001 - one broken lab must not hide the others
            traceback.print_exc()
            rc = 1
        status = status or rc
        summary.append({"lab": name, "exit": rc, "secs": round(time.perf_counter() - t0, 1),
                        "ran": "GPU" if device.has_gpu() else "interpreter + compile report"})
    from . import report

    report.print_table(summary, title=f"{title}: summary")
    return status
