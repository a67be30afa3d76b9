"""One command line for every lab and phase runner.

    --quick            small sizes, seconds (what the tests run)
    --size N / --dtype  where a lab has one main size or dtype
    --bench/--no-bench  time the variants and peers (default: on with a GPU; there is nothing to time without one)
    --json/--no-json    write results/<gpu>/<lab>.json            (default: on when benchmarking)
    --plot/--no-plot    write results/<gpu>/<lab>*.png            (default: on when benchmarking)
    --out DIR           where JSON and PNG go (default results/<gpu>/)
    --replot [DIR]      redraw the lab's plots from its saved JSON (no GPU needed; default: the committed results)
    --arch sm_XY        target of the compile report (default: the GPU's, else sm_90); checked against the known ones
    --gpu NAME          without a GPU: the GPU (a profile of common/gpu_specs.py: t4, rtx-4090, b200...) whose figures
                        the predictions, the plan and the compile report use; --gpu list names them
    --plan              print what this lab would run on this GPU (or --gpu): variants, launches, configurations,
                        predictions; runs nothing
    --set NAME=VALUE    override one configuration value of a kernel (repeatable); the run says where each came from
    --device-info       print what the GPU is (or the chosen arch, without one) and exit
Exit status: 0 when every correctness check passed, 1 when one failed, 2 for a usage error.
`--help` shows the lab's "You will learn" paragraph under its title.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from . import device
from .i18n import tr


def you_will_learn(doc: str | None) -> str:
    """The "You will learn" paragraph of a lab's docstring (through the line before the next blank line after it)."""
    lines = (doc or "").splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.strip().startswith("You will learn")), None)
    if start is None:
        return ""
    out = []
    for ln in lines[start:]:
        if not ln.strip() and len(out) > 1:
            break
        out.append(ln.rstrip())
    return "\n".join(out).strip()


def arch_name(s: str) -> str:
    """argparse type for --arch: a known architecture (sm_75 ... sm_120, and sm_90a), else a usage error."""
    key = s if s.startswith("sm_") else f"sm_{s}"
    base = key[:-1] if key.endswith("a") else key
    if base not in device.ARCHS or (key != base and key not in device.ARCH_SPECIFIC):
        known = sorted(device.ARCHS, key=lambda a: int(a.split("_")[1]))
        raise argparse.ArgumentTypeError(f"unknown architecture {s!r}; the course compiles for {', '.join(known)} "
                                         f"(and {', '.join(device.ARCH_SPECIFIC)} for wgmma/TMA)")
    return key


def gpu_name(s: str) -> str:
    """argparse type for --gpu: a profile of the table ('t4', '4090', 'h100-sxm'), or 'list'."""
    if s == "list":
        return s
    try:
        return device.resolve_profile(s)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def set_value(s: str) -> str:
    """argparse type for --set: NAME=VALUE."""
    from . import config

    try:
        config.parse_override(s)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return s


def quiet_broken_pipe() -> None:
    """A command piped into `head` stops quietly when the reader goes away (the default Unix behaviour), instead of
    a BrokenPipeError traceback: every command line of the course calls this as it starts."""
    import signal
    import threading

    # only in a command run from the shell (python -m pkg: argv[0] is its __main__.py); a test process or a notebook
    # that calls a lab's main() keeps Python's own handling, which its servers and pipes rely on
    if os.path.basename(sys.argv[0] or "") != "__main__.py":
        return
    if hasattr(signal, "SIGPIPE") and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def parser(description: str, *, size: bool = False, dtype: tuple[str, ...] | None = None,
           size_help: str = "problem size", learn: str = "") -> argparse.ArgumentParser:
    """The common parser. `description` is the lab's title; `learn` (its "You will learn" paragraph) follows it in
    --help."""
    quiet_broken_pipe()
    text = description + ("\n\n" + learn if learn else "")
    p = argparse.ArgumentParser(description=text, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help=tr("small sizes only; finishes in seconds"))
    if size:
        p.add_argument("--size", type=_positive_int, default=None, help=size_help)
    if dtype:
        p.add_argument("--dtype", choices=dtype, default=None,
                       help=tr("only this dtype (default: all the lab supports)"))
    p.add_argument("--bench", action=argparse.BooleanOptionalAction, default=None,
                   help=tr("time variants and peers (default: on when a GPU is present)"))
    p.add_argument("--json", action=argparse.BooleanOptionalAction, default=True, help=tr("write the JSON results"))
    p.add_argument("--plot", action=argparse.BooleanOptionalAction, default=True, help=tr("write the PNG plots"))
    p.add_argument("--out", default=None, help=tr("directory for JSON and PNG (default: results/<gpu>/)"))
    p.add_argument("--arch", default=None, type=arch_name,
                   help=tr("architecture of the compile report: {archs} (or sm_90a)",
                           archs=", ".join(sorted(device.ARCHS, key=_cc))))
    p.add_argument("--gpu", default=None, type=gpu_name, metavar="NAME",
                   help=tr("without a GPU: the GPU whose figures the predictions and the plan use (a profile: "
                           "{profiles}); 'list' shows them", profiles=", ".join(device.profiles())))
    p.add_argument("--plan", action="store_true",
                   help=tr("print what would run on this GPU (or --gpu NAME): variants, launches, configurations, "
                           "predictions; runs nothing"))
    p.add_argument("--set", action="append", default=[], type=set_value, metavar="NAME=VALUE",
                   help=tr("override one configuration value of a kernel, e.g. --set EPT=16 (repeatable)"))
    p.add_argument("--device-info", action="store_true", help=tr("describe the GPU (or --arch without one) and exit"))
    add_lang(p)
    return p


def add_lang(p: argparse.ArgumentParser) -> None:
    """--lang en|ko, for every command of the course (args.lang: None when not given; i18n.set_lang(args.lang))."""
    p.add_argument("--lang", choices=("en", "ko"), default=None,
                   help=tr("language of the output: en or ko (default: COURSE_LANG, else the locale; ko = Korean)"))


def add_size(p: argparse.ArgumentParser, help: str) -> None:
    """--size N for a lab with one main problem size (2^28, 4096, 1e6 and 0x1000 all parse)."""
    p.add_argument("--size", type=_positive_int, default=None, help=help)


def add_dtype(p: argparse.ArgumentParser, dtypes: tuple[str, ...]) -> None:
    """--dtype for a lab whose kernels take several dtypes: check and benchmark only that one."""
    p.add_argument("--dtype", choices=dtypes, default=None, help=tr("only this dtype (default: all the lab supports)"))


def size_value(s: str):
    """--size as a learner writes it: one number (4099, 2^20, 1e6), several joined by x or commas (33x4096,
    64,32,16), or a lab's named part first (residual_layernorm,130,4096): an int, or a tuple."""
    if "," in s:
        parts = [t.strip() for t in s.split(",")]
    elif s.lower().startswith("0x"):
        parts = [s]
    else:
        parts = s.replace("X", "x").split("x")
    if not parts or not all(parts):
        raise argparse.ArgumentTypeError(f"expected a size such as 4099 or 33x4096, got {s!r}")
    vals = tuple(t if t.isidentifier() else _positive_int(t) for t in parts)
    if isinstance(vals[0], str) and len(vals) == 1:
        raise argparse.ArgumentTypeError(f"expected a size such as 4099 or 33x4096, got {s!r}")
    return vals[0] if len(vals) == 1 else vals


def size_text(size) -> str:
    """A size as --size spells it: 4099, 33x4096, or residual_layernorm,130,4096 when a part is named."""
    if not isinstance(size, (tuple, list)):
        return str(size)
    return ("," if any(isinstance(v, str) for v in size) else "x").join(str(v) for v in size)


def _positive_int(s: str) -> int:
    try:
        if "^" in s:                                   # 2^28
            base, exp = s.split("^", 1)
            v = int(base, 0) ** int(exp, 0)
        elif "e" in s.lower() and not s.lower().startswith("0x") or "." in s:
            v = int(float(s))
        else:
            v = int(s, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {s!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {s!r}")
    return v


def _cc(arch: str) -> int:
    return int(arch.split("_")[1].rstrip("a"))


def finish_args(args: argparse.Namespace) -> argparse.Namespace:
    """Fill defaults that depend on the machine; handle --gpu list, --device-info and --set."""
    from . import config, i18n

    if getattr(args, "lang", None):
        i18n.set_lang(args.lang)
    if getattr(args, "gpu", None) == "list":
        print_profiles()
        raise SystemExit(0)
    if args.bench is None:
        args.bench = device.has_gpu()
    if args.bench and not device.has_gpu():
        print(tr("--bench needs a GPU ({why}); running the checks only", why=tr(device.no_gpu_reason())),
              file=sys.stderr)
        args.bench = False
    gpu = getattr(args, "gpu", None)
    if gpu:
        prof_arch = device.profile_info(gpu).arch
        if args.arch is not None and device.arch_info(args.arch).arch != prof_arch:
            raise SystemExit(tr("usage error: --gpu {gpu} is an {arch} GPU, --arch says {other}", gpu=gpu,
                                arch=prof_arch, other=args.arch))
        if device.has_gpu():
            if not getattr(args, "plan", False):
                print(tr("--gpu {gpu}: this machine has a GPU ({name}), whose own figures are used; --gpu only "
                         "chooses the GPU of --plan here", gpu=gpu, name=device.info().name), file=sys.stderr)
        else:
            device.simulate(gpu)
        if args.arch is None and not device.has_gpu():
            args.arch = prof_arch
    if args.arch is None:
        args.arch = device.current_arch()
    config.set_overrides(getattr(args, "set", None) or [])
    if args.device_info:
        print(device.describe(args.arch))
        raise SystemExit(0)
    return args


def plan_gpu(args: argparse.Namespace) -> "device.DeviceInfo":
    """The GPU a --plan describes: --gpu's profile, else the GPU every prediction uses here."""
    if getattr(args, "gpu", None):
        return device.profile_info(args.gpu)
    return device.current(args.arch)


def print_profiles(file=None) -> None:
    """The GPUs of the table: what --gpu accepts."""
    from .table import print_table

    rows = []
    for slug in device.profiles():
        g = device.profile_info(slug)
        rows.append({"--gpu": slug, "name": g.name, "arch": g.arch, "SMs": g.sms,
                     "memory": f"{g.total_mem_bytes / device.GiB:.0f} GiB", "GB/s": g.datasheet.get("hbm_gbps"),
                     "bf16 TFLOP/s": g.datasheet.get("bf16_tflops") or "-"})
    print_table(rows, title="GPU profiles (common/gpu_specs.py: datasheet figures, each with its source)", file=file)


_MODE_SHOWN = False


def print_mode_line(force: bool = False) -> None:
    """Print what will run (GPU, or interpreter + compile reports) once per process: `make run` runs 25 labs in one
    process, and the no-GPU explanation needs saying once, not 25 times."""
    global _MODE_SHOWN
    if force or not _MODE_SHOWN:
        print(mode_line(), flush=True)
    _MODE_SHOWN = True


def mode_line() -> str:
    """What will run: on the GPU, or the interpreter plus compile reports."""
    if device.has_gpu():
        return tr("GPU: {name} - CUDA C and Triton kernels run for real", name=device.info().name)
    return tr("no GPU - {why}. Triton kernels run in the interpreter (slow, correct), CUDA C kernels are compiled "
              "with NVRTC and their resources shown, nothing is timed on a GPU", why=tr(device.no_gpu_reason()))


class progress:
    """A minimal progress bar on stderr for sweeps: `for x in progress(items, "sizes"): ...`."""

    def __init__(self, items, desc: str = ""):
        self.items = list(items)
        self.desc = desc

    def __iter__(self):
        n = len(self.items)
        tty = sys.stderr.isatty()
        t0 = time.perf_counter()
        last = 0.0
        for i, it in enumerate(self.items):
            now = time.perf_counter()
            if tty or now - last > 5 or i == 0:
                msg = f"  {tr(self.desc)} [{i + 1}/{n}] {now - t0:5.1f}s"
                print(("\r" + msg) if tty else msg, end="" if tty else "\n", file=sys.stderr, flush=True)
                last = now
            yield it
        if tty:
            print(f"\r  {tr(self.desc)} [{n}/{n}] {time.perf_counter() - t0:5.1f}s", file=sys.stderr, flush=True)
