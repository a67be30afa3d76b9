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
and its bench.py the measuring side, every part optional (see run()):
  add_arguments(parser)         lab-specific flags (--tune, --compile-all, ...)
  explain(args)                 what to print before the checks on every machine (models, byte counts, plans)
  extra_checks(args) -> bool    checks beyond VARIANTS x cases
  compile_report(args)          what the compiler made of the kernels (NVRTC / Triton AOT); every machine
  benchmark(ctx) -> Result      GPU: time variants and peers, return rows + header fields + tables
  tune(ctx) -> Result           GPU, --tune: the sweep that finds the lab's recorded configuration
  plot(data, out_dir) -> [path] draw the lab's plots from its JSON (so --replot needs no GPU)
Every variant is a plain function fn(*inputs, out=None) -> out. The lab's __main__.py imports both modules and hands
them to run() (lab.py never imports bench.py); common/contract.py writes these expectations as Protocols.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import json
import math
import os
import re
import sys
import time
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


def check_cases(lab, quick: bool, dtypes=None, size=None) -> list:
    """The cases run() checks here: CHECK_CASES on a GPU, CPU_CHECK_CASES without; --quick keeps QUICK_CASES of them
    (default 3). `dtypes` narrows them to those dtypes (--dtype); `size` (--size, in the form of the lab's own check
    cases) replaces them by that size in each dtype."""
    cases = list(lab.CHECK_CASES if device.has_gpu() else lab.CPU_CHECK_CASES)
    if size is not None and size_like_cases(lab, size):
        every = list(lab.CHECK_CASES) + list(lab.CPU_CHECK_CASES)
        cases = [(size, dt) for dt in dict.fromkeys(c[1] for c in every if _form(c[0]) == _form(size))]
    if dtypes:
        cases = [c for c in cases if c[1] in dtypes]
    return cases[: getattr(lab, "QUICK_CASES", 3)] if quick else cases


def _form(size) -> tuple:
    """A size's form: ("n",) for one number, else one "n" (a number) or "s" (a named part) per element."""
    if isinstance(size, (tuple, list)):
        return tuple("s" if isinstance(v, str) else "n" for v in size)
    return ("s",) if isinstance(size, str) else ("n",)


def size_like_cases(lab, size) -> bool:
    """Whether `size` has the form of one of the lab's check cases (a number, or a tuple of as many numbers and
    named parts in the same places)."""
    return any(_form(c[0]) == _form(size) for c in list(lab.CHECK_CASES) + list(lab.CPU_CHECK_CASES))


def size_example(lab) -> str:
    """The lab's size as --size spells it, from its largest check case: 4099, or 33x4096."""
    sizes = [c[0] for c in list(lab.CHECK_CASES) + list(lab.CPU_CHECK_CASES)]
    size = max(sizes, key=lambda s: math.prod(v for v in s if not isinstance(v, str))
               if isinstance(s, (tuple, list)) else s if isinstance(s, int) else 0)
    return cli.size_text(size)


def lab_dtypes(lab) -> tuple[str, ...]:
    """Every dtype the lab's own variants take, in their order."""
    return tuple(dict.fromkeys(d for v in getattr(lab, "VARIANTS", []) for d in v.dtypes))


def pick_variants(variants: list[Variant], wanted: list[str] | None) -> list[Variant]:
    """The variants --variant names: a rung number (05 or 5 picks 'cuda 05 ...'), else a case-insensitive part of a
    name. Raises ValueError naming the choices when one picks nothing."""
    if not wanted:
        return list(variants)
    chosen = []
    for w in wanted:
        key = w.strip().lower()
        if key.isdigit():
            hit = [v for v in variants if any(t.isdigit() and int(t) == int(key) for t in v.name.lower().split()[:2])]
        else:
            hit = [v for v in variants if key == v.name.lower()] or [v for v in variants if key in v.name.lower()]
        if not hit:
            names = ", ".join(repr(v.name) for v in variants)
            raise ValueError(tr("--variant {w}: no such variant; the choices are {names}", w=w, names=names))
        chosen += [v for v in hit if v not in chosen]
    return [v for v in variants if v in chosen]


def chosen_cases(args, cases: list) -> list:
    """A benchmark's (size, dtype) cases as --size and --dtype narrow them: the runner's --size replaces the sizes
    (in each dtype the cases have, or --dtype's), --dtype keeps its own. For a bench.py whose cases have the form of
    the lab's check cases."""
    dtypes = [args.dtype] if getattr(args, "dtype", None) else list(dict.fromkeys(c[1] for c in cases))
    if getattr(args, "size_checks", False) and getattr(args, "size", None) is not None:
        return [(args.size, dt) for dt in dtypes]
    return [c for c in cases if c[1] in dtypes]


def chosen_names(args) -> list[str] | None:
    """The variant names --variant picked (None: all of them), for a bench.py that times variants one by one."""
    if not getattr(args, "variant", None):
        return None
    return [v.name for v in args.picked]


def add_common_choices(p: argparse.ArgumentParser, lab) -> bool:
    """--size, --dtype and --variant on every lab: a lab's bench.py may define --size and --dtype itself (its own
    meaning for them, say the benchmark's working set); where it does not, the runner's apply to the checks. True
    when the runner's --size was added (it sets the checked size)."""
    have = set(p._option_string_actions)
    own_size = "--size" not in have
    if own_size:
        p.add_argument("--size", type=cli.size_value, default=None, metavar="SIZE",
                       help=tr("check the variants at this size instead of the lab's awkward cases (this lab's "
                               "sizes look like {example}); --plan plans it", example=size_example(lab)))
    dts = lab_dtypes(lab)
    if "--dtype" not in have and dts:
        p.add_argument("--dtype", choices=dts, default=None,
                       help=tr("only this dtype (default: all the lab supports)"))
    p.add_argument("--variant", action="append", default=None, metavar="NN|NAME",
                   help=tr("only this variant (a rung number such as 05, or part of its name; repeatable): checked, "
                           "and timed where the benchmark times variants one by one"))
    return own_size


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


def entry_point(lab, bench, module_name: str):
    """A lab's `main(argv=None) -> int`, made by its __main__.py (the composition root, which hands lab.py and bench.py
    to run()); run at once, with the exit status, when that module is the program (python -m the lab)."""
    def main(argv=None) -> int:
        return run(lab, bench, argv)

    if module_name == "__main__":
        sys.exit(main())
    return main


def unhonoured(bench, args) -> list[str]:
    """What the benchmark will not narrow: the runner's --size / --dtype / --variant chose the checked cases and
    variants; a bench.py that narrows its timing too lists them in HONOURS ("size", "dtype", "variant")."""
    honours = set(getattr(bench, "HONOURS", ()))
    asked = [(flag, getattr(args, flag, None)) for flag in ("variant", "dtype")]
    if getattr(args, "size_checks", False):
        asked.append(("size", getattr(args, "size", None)))
    return [tr("--{flag}: the checks used it; this lab's benchmark times its own cases and every variant", flag=flag)
            for flag, value in asked if value and flag not in honours]


def lab_parser(lab, bench=None) -> tuple[argparse.ArgumentParser, bool]:
    """The lab's command line: the common flags, its bench's own, and --size/--dtype/--variant; (parser, whether the
    runner's --size was added)."""
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
    return p, add_common_choices(p, lab)


def parse_args(lab, bench, argv, *, from_phase: bool = False) -> argparse.Namespace:
    """The lab's arguments, checked against the lab itself (a --size of another form, a --variant it does not have:
    a usage error, exit 2). On the result, `size_checks`: whether --size sets the checked size; `picked`: the
    variants and peers --variant leaves (all of them without it)."""
    p, size_checks = lab_parser(lab, bench)
    args = p.parse_known_args(argv)[0] if from_phase else p.parse_args(argv)
    if size_checks and args.size is not None and not size_like_cases(lab, args.size):
        p.error(tr("--size {size}: this lab's sizes look like {example}", size=cli.size_text(args.size),
                   example=size_example(lab)))
    try:
        args.picked = pick_variants(list(getattr(lab, "VARIANTS", [])) + list(getattr(lab, "PEERS", [])), args.variant)
    except ValueError as e:
        p.error(str(e))
    args.size_checks = size_checks
    return args


def run(lab, bench=None, argv=None, *, from_phase: bool = False) -> int:
    """The whole life of a lab, the same for all: parse, say what runs here, check every variant against the float64
    reference, show what the compiler made of the kernels, stop there without a GPU (or on a failed check), else
    benchmark, print, write the JSON and the plots. Exit status: 0 all checks passed, 1 one failed, 2 usage error.

    from_phase: called by a phase runner, which has validated the common flags once; flags meant for other labs of
    the phase (say --tune) are ignored here instead of being a usage error.
    """
    args = cli.finish_args(parse_args(lab, bench, argv, from_phase=from_phase))
    if getattr(args, "replot", None) is not None:
        return replot(lab, bench, args.replot or None, args.out)
    if getattr(args, "plan", False):
        from . import plan

        plan.make(lab, bench, cli.plan_gpu(args), size=args.size).print()
        return 0
    config.forget()
    cli.print_mode_line()
    gpu = device.has_gpu()
    if bench is not None and hasattr(bench, "explain"):
        bench.explain(args)
    ok = True
    variants = [v for v in args.picked if v.impl != "peer" or gpu]
    if variants:
        dts = (args.dtype,) if getattr(args, "dtype", None) else None
        size = args.size if args.size_checks else None        # a bench's own --size means its own thing
        _, ok = check_variants(lab, variants, check_cases(lab, args.quick, dts, size))
    if bench is not None and hasattr(bench, "extra_checks"):
        ok = bool(bench.extra_checks(args)) and ok
    if bench is not None and hasattr(bench, "compile_report"):
        from . import plan, table

        name = lab.__package__ or lab.__name__                  # its tables name the variants of each kernel
        with table.naming(lambda kernels, arch: plan.kernel_users(name, arch or args.arch, kernels)):
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
    for note in unhonoured(bench, args):
        print(note)
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


def earlier_cuda_variant(mod, prefix: str, dtype: str):
    """A CUDA C variant of an earlier lab's module `mod` (imported by the caller, so the import is visible), picked
    by name prefix (else the last CUDA variant that runs here); None when none suits. For putting a Triton kernel next
    to the CUDA C kernel that does the same job."""
    found = [v for v in getattr(mod, "VARIANTS", []) if v.impl == "cuda" and dtype in v.dtypes and v.available()[0]]
    pick = [v for v in found if v.name.startswith(prefix)] or found[-1:]
    return pick[0] if pick else None


def bench_module(phase: str, name: str):
    """A lab's measuring side: phaseN/labNN_name/bench.py."""
    return importlib.import_module(f"{phase}.{name}.bench")
