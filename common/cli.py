"""One command line for every lab and phase runner.

    --quick            small sizes, seconds (what the tests run)
    --size N / --dtype  where a lab has one main size or dtype
    --bench/--no-bench  time the variants and peers (default: on with a GPU; there is nothing to time without one)
    --json/--no-json    write results/<gpu>/<lab>.json            (default: on when benchmarking)
    --plot/--no-plot    write results/<gpu>/<lab>*.png            (default: on when benchmarking)
    --out DIR           where JSON and PNG go (default results/<gpu>/)
    --arch sm_XY        target of the compile report (default: the GPU's, else sm_90)
    --device-info       print what the GPU is (or the chosen arch, without one) and exit
Exit status: 0 when every correctness check passed, 1 when one failed, 2 for a usage error.
"""
from __future__ import annotations

import argparse
import sys
import time

from . import device


def parser(description: str, *, size: bool = False, dtype: tuple[str, ...] | None = None,
           size_help: str = "problem size") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    p.add_argument("--arch", default=None, help="architecture of the compile report, e.g. sm_75, sm_80, sm_90")
    p.add_argument("--device-info", action="store_true", help="describe the GPU (or --arch without one) and exit")
    return p


def _positive_int(s: str) -> int:
    try:
        v = int(float(s)) if ("e" in s.lower() or "." in s) else int(s, 0)
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
