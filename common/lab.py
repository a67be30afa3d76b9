"""The lab contract, and the drivers every lab and phase runner share.

A lab is a folder phaseN_xxx/labNN_name/ whose lab.py offers:
  a docstring: its title, "You will learn", the two numbers (bytes that must move, FLOPs that must happen) and which
    bound wins
  reference(*inputs) -> float64 NumPy result (or a tuple of them)
  make_inputs(size, dtype, rng, where) -> tuple of arrays on `where` ('cuda' or 'cpu')
  VARIANTS: list[Variant]       our kernels, CUDA C and Triton side by side
  PEERS: list[Variant]          the library calls a learner would use instead
  CHECK_CASES / CPU_CHECK_CASES: [(size, dtype), ...] awkward cases for the GPU / for the interpreter
  optional QUICK_CASES (how many cases --quick checks), out_dtype(dtype), tolerance(size, dtype) -> check.Tol
  main(argv=None) -> int        = run(this module, its bench module, argv); nothing runs at import
and its bench.py the measuring side, every part optional (see run()):
  add_arguments(parser)         lab-specific flags (--tune, --compile-all, ...)
  explain(args)                 what to print before the checks on every machine (models, byte counts, plans)
  extra_checks(args) -> bool    checks beyond VARIANTS x cases
  compile_report(args)          what the compiler made of the kernels (NVRTC / Triton AOT); every machine
  benchmark(ctx) -> Result      GPU: time variants and peers, return rows + header fields + tables
  tune(ctx) -> Result           GPU, --tune: the sweep that finds the lab's recorded configuration
  plot(data, out_dir) -> [path] draw the lab's plots from its JSON (so --replot needs no GPU)
Every variant is a plain function fn(*inputs, out=None) -> out.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import re
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable

from . import arrays, check, cli, config, device
from .i18n import korean, said, tr


@dataclass
class Variant:
    name: str
    fn: Callable
    impl: str                                   # 'cuda' | 'triton' | 'peer'
    dtypes: tuple[str, ...] = ("float32",)
    note: str = ""
    # empty: any GPU; else where it can run: ("sm_90",) exactly Hopper (an sm_90a kernel), ("sm_80+",) 8.0 and later
    archs: tuple[str, ...] = field(default=())
    # valid cases this variant has no kernel for: fn(size, dtype) -> why, or "" when it can serve it. A library peer
    # that lacks a kernel (cuDNN's SDPA at S = 1), or one implementation of a lab whose parts differ (lab 4.2's CUDA
    # C has no GEMM). Bad input is not this: every variant refuses that with an error.
    cannot_serve: Callable | None = None
    # what else the GPU must offer: fn(gpu) -> why not, or None / "" when it can run (a kernel for sm_90a only, the
    # CUDA C wrappers' own needs). `gpu` is the common.device.DeviceInfo asked about (a simulated profile in a plan),
    # None for this machine without a GPU (an interpreter variant). Asked after the GPU and arch checks.
    unavailable: Callable | None = None

    @property
    def runs_without_gpu(self) -> bool:
        """Triton variants run in the interpreter; CUDA C and library peers need a GPU."""
        return self.impl == "triton"

    def available(self, gpu: "device.DeviceInfo | None" = None) -> tuple[bool, str]:
        """Can it run here, or on `gpu` (a simulated profile: what a learner with that card would see)? (False, why)
        when not."""
        if gpu is None:
            if not device.has_gpu():
                if not self.runs_without_gpu:
                    return False, "needs a GPU (compile report shown)"
            else:
                gpu = device.info()
        if gpu is not None and self.archs and not arch_matches(gpu.arch, self.archs):
            return False, said("needs {archs}, this GPU is {arch}", archs=" or ".join(self.archs), arch=gpu.arch)
        why = None
        if self.unavailable is not None:
            why = self.unavailable(gpu) if _takes_gpu(self.unavailable) else self.unavailable()
        return (not why), (why or "")


def arch_matches(arch: str, specs) -> bool:
    """Does architecture `arch` ("sm_89") satisfy one of `specs`: "sm_90" exactly, or "sm_80+" (8.0 and later)?"""
    cc = device.arch_info(arch).cc
    for spec in specs:
        if spec.endswith("+"):
            if cc >= device.arch_info(spec[:-1]).cc:
                return True
        elif device.arch_info(spec).arch == device.arch_info(arch).arch:
            return True
    return False


def _takes_gpu(fn) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    return bool(params) and params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD)


def where() -> str:
    return "cuda" if device.has_gpu() else "cpu"


def _np64(x):
    import numpy as np

    if arrays.library(x) in ("cupy", "numpy", "torch"):
        return arrays.to_numpy(x).astype(np.float64)
    return x


def reference_of(lab, inputs, dtype: str | None = None):
    """lab.reference on the inputs in float64. A reference that takes `dtype` (the storage dtype: the inputs' own when
    not given) gets it, for an intermediate the lab's kernels store and then use rounded (lab 4.2's h = x + r)."""
    kw = {}
    if "dtype" in inspect.signature(lab.reference).parameters:
        kw["dtype"] = dtype or next(arrays.dtype_name(x) for x in inputs
                                    if arrays.library(x) in ("cupy", "numpy", "torch"))
    return lab.reference(*[_np64(x) for x in inputs], **kw)


def prepare_case(lab, size, dtype: str, rng):
    """Fresh inputs, their float64 reference and poisoned outputs for one case: (inputs, ref, out)."""
    inputs = lab.make_inputs(size, dtype, rng, where())
    ref = reference_of(lab, inputs, dtype)
    out_dt = getattr(lab, "out_dtype", lambda d: d)(dtype)
    like = next(x for x in inputs if arrays.library(x) in ("cupy", "numpy", "torch"))
    # every output sits between two poisoned guard bands: a write past its end fails the check (compare_case)
    if isinstance(ref, tuple):
        dts = out_dt if isinstance(out_dt, tuple) else (out_dt,) * len(ref)
        out = tuple(check.guarded(r.shape, d, like) for r, d in zip(ref, dts))
    else:
        out = check.guarded(ref.shape, out_dt, like)
    return inputs, ref, out


def compare_case(lab, res, ref, size, dtype: str, out=None, variant: Variant | None = None) -> check.Comparison:
    """The variant's result(s) against the reference(s), with the lab's tolerance: the first failing comparison,
    else the first one. With `out` (the guarded outputs prepare_case made), a write outside them fails too. A lab
    whose tolerance() takes `variant` gets the Variant under check: one that rounds more on purpose than the others
    (lab 4.6's naive attention stores S = QK^T in bf16) can have a limit of its own."""
    tol_fn = getattr(lab, "tolerance", None)
    kw = {"variant": variant} if tol_fn and "variant" in inspect.signature(tol_fn).parameters else {}
    tol = tol_fn(size, dtype, **kw) if tol_fn else None
    for o in (out if isinstance(out, tuple) else (out,)) if out is not None else ():
        damage = check.guard_damage(o)
        if damage:
            return check.Comparison(False, float("inf"), float("inf"), 0, 0, f"MISMATCH: {damage}")
    if isinstance(ref, tuple):
        results = [check.compare(o, r, dtype, tol) for o, r in zip(res, ref)]
        bad = [c for c in results if not c.ok]
        return bad[0] if bad else results[0]
    return check.compare(res, ref, dtype, tol)


def run_variant(lab, v: Variant, size, dtype: str, rng) -> check.Comparison:
    """One check: fresh inputs, poisoned outputs, the variant, the float64 reference, the comparison."""
    inputs, ref, out = prepare_case(lab, size, dtype, rng)
    try:
        res = v.fn(*inputs, out=out)
    except BaseException:
        for o in out if isinstance(out, tuple) else (out,):
            check.guard_damage(o)                          # let go of the guarded buffers
        raise
    return compare_case(lab, res, ref, size, dtype, out, variant=v)


def stop_before_bench(ok: bool, args) -> int | None:
    """After a lab's checks on a GPU: the exit status when it stops there (1: a check failed, so nothing is timed;
    0: --no-bench), or None to go on to the benchmark."""
    if not ok:
        print(tr("correctness failed: not benchmarking"))
        return 1
    return None if args.bench else 0


def check_variants(lab, variants: list[Variant], cases, *, verbose: bool = True) -> tuple[list[dict], bool]:
    """Run every available variant on every case; print one line per variant; return (rows, all_ok)."""
    rows, all_ok = [], True
    for v in variants:
        ok_here, why = v.available()
        if not ok_here:
            rows.append({"variant": v.name, "impl": v.impl, "cases": 0, "result": tr("skipped: {why}", why=tr(why))})
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
        # A peer that cannot serve any case here (cuDNN's SDPA at S = 1, say) is not checked, which is no failure of
        # ours; a variant of our own that ran no case is (its CHECK_CASES or dtypes are wrong).
        only_passed_over = n == 0 and not fails and passed_over and v.impl == "peer"
        ok = not fails and (n > 0 or only_passed_over)
        all_ok &= ok
        result = (tr("ok ({n} cases, worst rel err {worst:.1e})", n=n, worst=worst) if n and ok else
                  tr("not checked here") if ok else
                  tr("FAILED {bad}/{of}: {first}", bad=len(fails), of=max(n, len(fails)), first=fails[0]) if fails else
                  tr("no case ran"))
        if passed_over:
            result += tr("; {n} case(s) it cannot serve, passed over ({first})", n=len(passed_over),
                        first=passed_over[0])
        rows.append({"variant": v.name, "impl": v.impl, "cases": n, "result": result,
                     "secs": round(time.perf_counter() - t0, 2)})
    if verbose:
        from . import report

        report.print_table(rows, ["variant", "impl", "cases", "secs", "result"],
                           title=tr("correctness against the float64 reference (seed {seed})", seed=check.seed()))
    return rows, all_ok


# ---------------------------------------------------------------------------------------------------------------------
# One driver for every lab
# ---------------------------------------------------------------------------------------------------------------------
@dataclass
class Result:
    """What a lab's benchmark (or tune) hands back to run().

    rows: the measurement rows (report.row dicts) that go into the JSON; meta: extra JSON header fields (ceiling,
    targets, knobs, ...); tables: (rows, columns or None, title) to print; name: the JSON / PNG stem (default: the
    lab's LAB, with "_tune" for --tune); ok: False when a check made during the benchmark failed (exit 1).
    """
    rows: list[dict]
    meta: dict = field(default_factory=dict)
    tables: list[tuple] = field(default_factory=list)
    name: str | None = None
    ok: bool = True


@dataclass
class Context:
    """What a benchmark needs from the driver: the parsed arguments and where to write."""
    args: argparse.Namespace
    out_dir: str

    @property
    def quick(self) -> bool:
        return bool(self.args.quick)

    def ceiling(self) -> dict:
        """The measured HBM ceiling of this GPU (cached per device)."""
        from . import bench as timing

        return timing.ceilings()


CPU_NOTE = "\nNothing was timed (no GPU): the Triton kernels ran in the interpreter, CUDA C kernels were compiled."


def title_of(mod) -> str:
    return (mod.__doc__ or mod.__name__).strip().splitlines()[0]


def korean_intro(mod, title: str, learn: str) -> tuple[str, str]:
    """The lab's title and its "You will learn" list from its Korean lesson (README.ko.md beside lab.py), for --help
    in Korean; the English ones where the lesson has none."""
    path = os.path.join(os.path.dirname(os.path.abspath(mod.__file__)), "README.ko.md")
    if not os.path.exists(path):
        return title, learn
    text = open(path, encoding="utf-8").read()
    m = re.search(r"^# (.+)$", text, re.M)
    sec = re.search(r"^## 배우는 것\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    return (m.group(1).strip() if m else title), ("배우는 것\n" + sec.group(1).strip() if sec else learn)


def check_cases(lab, quick: bool, dtypes=None) -> list:
    """The cases run() checks here: CHECK_CASES on a GPU, CPU_CHECK_CASES without; --quick keeps QUICK_CASES of them
    (default 3). `dtypes` narrows them to those dtypes (--dtype)."""
    cases = list(lab.CHECK_CASES if device.has_gpu() else lab.CPU_CHECK_CASES)
    if dtypes:
        cases = [c for c in cases if c[1] in dtypes]
    return cases[: getattr(lab, "QUICK_CASES", 3)] if quick else cases


REFERENCE_GPU = "h200"     # the GPU whose committed results the repository's READMEs show


def committed_gpus() -> list[str]:
    """The GPU folders under results/ that hold committed measurements (the README's GPU first)."""
    from . import report

    root = os.path.join(report.ROOT, "results")
    found = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))
                   and not d.endswith("-quick") and d not in ("no-gpu", "scratch")) if os.path.isdir(root) else []
    return sorted(found, key=lambda d: (d != REFERENCE_GPU, d))


def results_json(lab, directory: str | None = None) -> str:
    """The lab's committed JSON: results/<gpu>/<LAB>.json of the GPU at hand; where that GPU has none (any learner's
    GPU before its first run), the first committed GPU folder that has one (the README's H200 first)."""
    from . import report

    if directory is not None:
        return os.path.join(directory, f"{lab.LAB}.json")
    mine = os.path.join(report.ROOT, "results", device.gpu_slug() if device.has_gpu() else REFERENCE_GPU,
                        f"{lab.LAB}.json")
    if os.path.exists(mine):
        return mine
    for slug in committed_gpus():
        p = os.path.join(report.ROOT, "results", slug, f"{lab.LAB}.json")
        if os.path.exists(p):
            return p
    return mine


def replot(lab, bench, directory: str | None, out_dir: str | None) -> int:
    """Redraw a lab's plots from its saved JSON (no GPU needed): bench.plot(data, out_dir)."""
    from . import report

    path = results_json(lab, directory)
    if not os.path.exists(path):
        print(tr("--replot: no {path}; measure on a GPU first (python -m {lab})", path=os.path.relpath(path),
                lab=lab.__package__), file=sys.stderr)
        return 2
    if directory is None and device.has_gpu() and os.path.basename(os.path.dirname(path)) != device.gpu_slug():
        print(tr("--replot: this GPU ({gpu}) has no results/{slug}/{name}.json yet; redrawing the committed {path} "
                "instead (measure yours with python -m {lab})", gpu=device.info().name, slug=device.gpu_slug(),
                name=lab.LAB, path=os.path.relpath(path, report.ROOT), lab=lab.__package__))
    with open(path) as f:
        data = json.load(f)
    out_dir = out_dir or os.path.dirname(path)
    os.makedirs(out_dir, exist_ok=True)
    for p in bench.plot(data, out_dir):
        print(tr("wrote {path}", path=p))
    return 0


def run(lab, bench=None, argv=None, *, from_phase: bool = False) -> int:
    """The whole life of a lab, the same for all: parse, say what runs here, check every variant against the float64
    reference, show what the compiler made of the kernels, stop there without a GPU (or on a failed check), else
    benchmark, print, write the JSON and the plots. Exit status: 0 all checks passed, 1 one failed, 2 usage error.

    from_phase: called by a phase runner, which has validated the common flags once; flags meant for other labs of
    the phase (say --tune) are ignored here instead of being a usage error.
    """
    title, learn = title_of(lab), cli.you_will_learn(lab.__doc__)
    if korean():
        title, learn = korean_intro(lab, title, learn)
    p = cli.parser(title, learn=learn)
    p.prog = f"python -m {lab.__package__ or lab.__name__}"
    if bench is not None and getattr(bench, "plot", None) is not None:
        p.add_argument("--replot", nargs="?", const="", default=None, metavar="DIR",
                       help=tr("redraw the plots from the saved JSON in DIR (default: the committed results) and exit"))
    if bench is not None and hasattr(bench, "add_arguments"):
        bench.add_arguments(p)
    args = p.parse_known_args(argv)[0] if from_phase else p.parse_args(argv)
    args = cli.finish_args(args)
    if getattr(args, "replot", None) is not None:
        return replot(lab, bench, args.replot or None, args.out)
    if getattr(args, "plan", False):
        from . import plan

        plan.make(lab, bench, cli.plan_gpu(args)).print()
        return 0
    config.forget()
    cli.print_mode_line()
    gpu = device.has_gpu()
    if bench is not None and hasattr(bench, "explain"):
        bench.explain(args)
    ok = True
    variants = list(getattr(lab, "VARIANTS", [])) + (list(getattr(lab, "PEERS", [])) if gpu else [])
    if variants:
        dts = (args.dtype,) if getattr(args, "dtype", None) else None
        _, ok = check_variants(lab, variants, check_cases(lab, args.quick, dts))
    if bench is not None and hasattr(bench, "extra_checks"):
        ok = bool(bench.extra_checks(args)) and ok
    if bench is not None and hasattr(bench, "compile_report"):
        bench.compile_report(args)
    config.print_used()
    if not gpu:
        print(tr(getattr(bench, "CPU_NOTE", CPU_NOTE)))
        return 0 if ok else 1
    if (stop := stop_before_bench(ok, args)) is not None:
        return stop
    if bench is None or not hasattr(bench, "benchmark"):
        return 0
    from . import report

    ctx = Context(args=args, out_dir=args.out or report.results_dir())
    tuning = bool(getattr(args, "tune", False)) and hasattr(bench, "tune")
    res = bench.tune(ctx) if tuning else bench.benchmark(ctx)
    name = res.name or (lab.LAB + ("_tune" if tuning else ""))
    for rows, cols, title in res.tables:
        report.print_table(rows, cols, title=title)
    if args.json:
        meta = dict(res.meta)
        meta.setdefault("configurations", [r.row() for r in config.used()])
        print(tr("wrote {path}", path=report.write_json(name, res.rows, out_dir=ctx.out_dir, **meta)))
    if args.plot and not tuning and hasattr(bench, "plot"):
        data = dict(res.meta, rows=res.rows, gpu=device.info().name)
        for path in bench.plot(data, ctx.out_dir):
            print(tr("wrote {path}", path=path))
    return 0 if res.ok else 1


# ---------------------------------------------------------------------------------------------------------------------
# Phase runners
# ---------------------------------------------------------------------------------------------------------------------
def lab_module(phase: str, name: str, module: str = "lab"):
    """A lab's contract module, phaseN/labNN_name/lab.py, or another module of the lab (module="hopper": hopper.py)."""
    return importlib.import_module(f"{phase}.{name}.{module}")


def lab_names(phases) -> list[tuple[str, str]]:
    """(phase, lab folder) for every lab the phase packages list (their LABS), in order; a phase whose package does not
    import is passed over."""
    out = []
    for phase in phases:
        try:
            pkg = importlib.import_module(phase)
        except ImportError:
            continue
        out.extend((phase, name) for name in getattr(pkg, "LABS", []))
    return out


def earlier_cuda_variant(phase: str, name: str, prefix: str, dtype: str):
    """A CUDA C variant of an earlier lab, picked by name prefix (else the last CUDA variant that runs here); None
    when none suits. For putting a Triton kernel next to the CUDA C kernel that does the same job."""
    mod = lab_module(phase, name)
    found = [v for v in getattr(mod, "VARIANTS", []) if v.impl == "cuda" and dtype in v.dtypes and v.available()[0]]
    pick = [v for v in found if v.name.startswith(prefix)] or found[-1:]
    return pick[0] if pick else None


def bench_module(phase: str, name: str):
    """A lab's measuring side: phaseN/labNN_name/bench.py."""
    return importlib.import_module(f"{phase}.{name}.bench")


def phase_parser(title: str, labs: list[str]) -> argparse.ArgumentParser:
    p = cli.parser(tr("{title}: runs its labs in order ({labs}); other flags go to every lab.", title=tr(title),
                      labs=", ".join(labs)), size=True,
                   dtype=None)
    p.add_argument("--dtype", default=None, help=tr("only this dtype, in the labs that have a --dtype flag"))
    p.add_argument("--only", action="append", default=None, metavar="LAB",
                   help=tr("run only the labs whose name contains this (repeatable)"))
    p.add_argument("--list", action="store_true", help=tr("list the labs and exit"))
    return p


def lab_flags(phase: str, labs: list[str]) -> set[str]:
    """Every option string the labs of a phase accept (a flag unknown to all of them is a usage error)."""
    flags: set[str] = set()
    for name in labs:
        mod = bench_module(phase, name)
        if hasattr(mod, "add_arguments"):
            q = argparse.ArgumentParser(add_help=False)
            mod.add_arguments(q)
            for a in q._actions:
                flags.update(a.option_strings)
    return flags


def select_labs(p: argparse.ArgumentParser, labs: list[str], only: list[str] | None) -> list[str]:
    if not only:
        return list(labs)
    chosen = [n for n in labs if any(o in n for o in only)]
    if not chosen:
        p.error(f"--only {' '.join(only)}: no such lab; the labs are {', '.join(labs)}")
    return chosen


def run_phase(phase: str, title: str, labs: list[str], argv=None) -> int:
    """Run the labs of a phase in order; flags other than --only/--list go to every lab. The common flags are
    validated here, once; a flag no lab of the phase knows is a usage error (exit 2)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    p = phase_parser(title, labs)
    args, unknown = p.parse_known_args(argv)
    extra = lab_flags(phase, labs)
    bad = [a for a in unknown if a.startswith("-") and a.split("=")[0] not in extra]
    if bad:
        p.error(f"unrecognized arguments: {' '.join(bad)} (no lab of {phase} takes them)")
    if args.list:
        for name in labs:
            mod = lab_module(phase, name)
            title = korean_intro(mod, title_of(mod), "")[0] if korean() else title_of(mod)
            print(f"{name:32s} {title}")
        return 0
    if args.device_info:
        cli.finish_args(args)
    chosen = select_labs(p, labs, args.only)
    lab_argv = _without_phase_flags(argv)
    cli.print_mode_line()
    print(tr(title))
    summary, status = [], 0
    for name in chosen:
        print(f"\n{'=' * 100}\n{phase}.{name}\n{'=' * 100}", flush=True)
        t0 = time.perf_counter()
        try:
            rc = int(run(lab_module(phase, name), bench_module(phase, name), lab_argv, from_phase=True) or 0)
        except SystemExit as e:
            rc = int(e.code or 0) if isinstance(e.code, int) or e.code is None else 1
        except Exception:  # noqa: BLE001 - one broken lab must not hide the others
            traceback.print_exc()
            rc = 1
        status = status or rc
        summary.append({"lab": name, "exit": rc, "secs": round(time.perf_counter() - t0, 1),
                        "ran": "GPU" if device.has_gpu() else tr("interpreter + compile report")})
    from . import report

    report.print_table(summary, title=tr("{title}: summary", title=tr(title)))
    return status


def _without_phase_flags(argv: list[str]) -> list[str]:
    """The arguments a lab sees: the phase runner's own (--only X, --list) removed."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--only":
            skip = True
            continue
        if a.startswith("--only=") or a == "--list":
            continue
        out.append(a)
    return out
