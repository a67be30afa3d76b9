"""One command line for every lab and phase runner.

    --quick            small sizes, seconds (what the tests run)
    --size N / --dtype  where a lab has one main size or dtype
    --bench/--no-bench  time the variants and peers (default: on with a GPU; there is nothing to time without one)
    --json/--no-json    write results/<gpu>/<lab>.json            (default: on when benchmarking)
    --plot/--no-plot    write results/<gpu>/<lab>*.png            (default: on when benchmarking)
    --out DIR           where JSON and PNG go (default results/<gpu>/)
    --replot [DIR]      redraw the lab's plots from its saved JSON (no GPU needed; default: the committed results)
    --arch sm_XY        target of the compile report (default: the GPU's, else sm_90); checked against the known ones
    --device-info       print what the GPU is (or the chosen arch, without one) and exit
Exit status: 0 when every correctness check passed, 1 when one failed, 2 for a usage error.
`--help` shows the lab's "You will learn" paragraph under its title.
"""
from __future__ import annotations

import argparse
import sys
import time

from . import device


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
    """argparse type for --arch: a known architecture (sm_75 ... sm_90, sm_90a), else a usage error."""
    key = s if s.startswith("sm_") else f"sm_{s}"
    base = key[:-1] if key.endswith("a") else key
    if base not in device.ARCHS:
        raise argparse.ArgumentTypeError(f"unknown architecture {s!r}; the course compiles for "
                                         f"{', '.join(sorted(device.ARCHS))} (and sm_90a for wgmma/TMA)")
    return key


def parser(description: str, *, size: bool = False, dtype: tuple[str, ...] | None = None,
           size_help: str = "problem size", learn: str = "") -> argparse.ArgumentParser:
    """The common parser. `description` is the lab's title; `learn` (its "You will learn" paragraph) follows it in
    --help."""
    text = description + ("\n\n" + learn if learn else "")
    p = argparse.ArgumentParser(description=text, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes only; finishes in seconds")
    if size:
        p.add_argument("--size", type=_positive_int, default=None, help=size_help)
    if dtype:
        p.add_argument("--dtype", choices=dtype, default=None, help="only this dtype (default: all the lab supports)")
    p.add_argument("--bench", action=argparse.BooleanOptionalAction, default=None,
                   help="time variants and peers (default: on when a GPU is present)")
    p.add_argument("--json", action=argparse.BooleanOptionalAction, default=True, help="write the JSON results")
    p.add_argument("--plot", action=argparse.BooleanOptionalAction, default=True, help="write the PNG plots")
    p.add_argument("--out", default=None, help="directory for JSON and PNG (default: results/<gpu>/)")
    p.add_argument("--arch", default=None, type=arch_name,
                   help="architecture of the compile report: sm_75, sm_80, sm_86, sm_89, sm_90 (or sm_90a)")
    p.add_argument("--device-info", action="store_true", help="describe the GPU (or --arch without one) and exit")
    return p


def add_size(p: argparse.ArgumentParser, help: str) -> None:
    """--size N for a lab with one main problem size (2^28, 4096, 1e6 and 0x1000 all parse)."""
    p.add_argument("--size", type=_positive_int, default=None, help=help)


def add_dtype(p: argparse.ArgumentParser, dtypes: tuple[str, ...]) -> None:
    """--dtype for a lab whose kernels take several dtypes: check and benchmark only that one."""
    p.add_argument("--dtype", choices=dtypes, default=None, help="only this dtype (default: all the lab supports)")


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


def finish_args(args: argparse.Namespace) -> argparse.Namespace:
    """Fill defaults that depend on the machine; handle --device-info."""
    if args.bench is None:
        args.bench = device.has_gpu()
    if args.bench and not device.has_gpu():
        print(f"--bench needs a GPU ({device.no_gpu_reason()}); running the checks only", file=sys.stderr)
        args.bench = False
    if args.arch is None:
        args.arch = device.current_arch()
    if args.device_info:
        print(device.describe(args.arch))
        raise SystemExit(0)
    return args


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
        return f"GPU: {device.info().name} - CUDA C and Triton kernels run for real"
    return (f"no GPU ({device.no_gpu_reason()}): Triton kernels run in the interpreter (slow, correct), CUDA C kernels "
            "are compiled with NVRTC and their resources shown, nothing is timed on a GPU")


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
                msg = f"  {self.desc} [{i + 1}/{n}] {now - t0:5.1f}s"
                print(("\r" + msg) if tty else msg, end="" if tty else "\n", file=sys.stderr, flush=True)
                last = now
            yield it
        if tty:
            print(f"\r  {self.desc} [{n}/{n}] {time.perf_counter() - t0:5.1f}s", file=sys.stderr, flush=True)
