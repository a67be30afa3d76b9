"""Did a source change change the machine code? Compile two versions of a .cu file and compare, kernel by kernel.

    python -m tools.compare_builds OLD.cu NEW.cu [--arch sm_90] [--define KEY=VALUE ...]
    python -m tools.compare_builds --git REV phase2_cuda/lab07_softmax/kernels.cu:phase2_cuda/lab07_softmax.cu
With --git, OLD is the file as it was at REV (a path of its own after a move: NEW_PATH:OLD_PATH). Both versions are
compiled with NVRTC (no GPU needed); for every kernel in either, the registers, shared memory, spills and the SASS
instruction census (loads and stores by width, barriers, shuffles, MMAs, ...) are compared, and the SASS itself.
Moving device code into a shared header should change nothing: "same SASS" for every kernel is the evidence.
Exit status: 0 when every kernel's SASS is identical, 1 when one differs, 2 for a usage error.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def _normalize(sass: list[str]) -> list[str]:
    # the report's nonce global and constant-bank offsets of it are not code
    return [re.sub(r"course_report_nonce_\w+", "NONCE", s) for s in sass]


def compare(old: str, new: str, arch: str, defines: dict) -> tuple[list[dict], bool]:
    from common import cuda

    a = cuda.compile_report(old, arch, defines=defines)
    b = cuda.compile_report(new, arch, defines=defines)
    rows, same_all = [], True
    for name in list(dict.fromkeys(list(a.kernels) + list(b.kernels))):
        ka, kb = a.kernels.get(name), b.kernels.get(name)
        if ka is None or kb is None:
            rows.append({"kernel": name, "result": "only in " + ("new" if ka is None else "old")})
            same_all = False
            continue
        same = _normalize(ka.sass) == _normalize(kb.sass)
        res = "same SASS" if same else "DIFFERENT SASS"
        if not ka.sass and not kb.sass:
            res = "no SASS (no cuobjdump)"
        diff = {k: (ka.row()[k], kb.row()[k]) for k in ka.row() if k not in ("kernel", "arch")
                and ka.row()[k] != kb.row()[k]}
        rows.append({"kernel": name, "regs": f"{ka.registers} -> {kb.registers}", "spills": kb.spills,
                     "result": res, "changed": "; ".join(f"{k} {x} -> {y}" for k, (x, y) in diff.items())})
        same_all &= same
    return rows, same_all


def _lab_defines(path: str, arch: str | None = None) -> dict:
    """The -D values a lab's lab.py gives its .cu (labs whose .cu holds no defaults of its own: lab 2.7, lab 2.8)."""
    import importlib

    rel = os.path.relpath(os.path.dirname(os.path.abspath(os.path.join(ROOT, path))), ROOT).split(os.sep)
    if len(rel) < 2 or not rel[0].startswith("phase"):
        return {}
    try:
        mod = importlib.import_module(".".join(rel[:2]) + ".lab")
    except ImportError:
        return {}
    fn = getattr(mod, "compile_defines", None)
    if fn is None:
        return {}
    import inspect

    kw = {"arch": arch} if arch and "arch" in inspect.signature(fn).parameters else {}
    return dict(fn(os.path.join(ROOT, path), **kw))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="OLD.cu NEW.cu, or with --git NEW_PATH[:OLD_PATH]")
    ap.add_argument("--git", metavar="REV", help="compare against the file as it was at this revision")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--define", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args(argv)
    defines = dict(d.split("=", 1) for d in args.define)
    defines = {**_lab_defines(args.files[0].partition(":")[0], args.arch), **defines}
    from common import report

    status = 0
    if args.git:
        pairs = []
        for spec in args.files:
            new, _, old_path = spec.partition(":")
            old_path = old_path or new
            src = subprocess.run(["git", "show", f"{args.git}:{old_path}"], cwd=ROOT, capture_output=True, text=True)
            if src.returncode != 0:
                ap.error(f"{old_path} at {args.git}: {src.stderr.strip()}")
            # the old file compiles from its own folder (its relative #includes), so write it beside the new one
            fd, tmp = tempfile.mkstemp(suffix=".cu", dir=os.path.dirname(os.path.abspath(os.path.join(ROOT, new))))
            with os.fdopen(fd, "w") as f:
                f.write(src.stdout)
            pairs.append((tmp, os.path.join(ROOT, new), True))
    else:
        if len(args.files) != 2:
            ap.error("give OLD.cu NEW.cu")
        pairs = [(args.files[0], args.files[1], False)]
    try:
        for old, new, _ in pairs:
            rows, same = compare(old, new, args.arch, defines)
            report.print_table(rows, title=f"{os.path.relpath(new, ROOT)} on {args.arch}: old -> new")
            status = status or (0 if same else 1)
    finally:
        for old, _, tmp in pairs:
            if tmp:
                os.unlink(old)
    return status


if __name__ == "__main__":
    sys.exit(main())
