"""Are the tests any good? Plant realistic one-line bugs in the kernels, one at a time, and see which the tests miss.

    python -m tools.mutants                 # every mutant this machine can judge (`make mutants`)
    python -m tools.mutants --list          # the mutants, their labs, files and tiers
    python -m tools.mutants --only softmax  # mutants whose name contains this (repeatable)
    python -m tools.mutants --compile       # every CUDA C mutant through NVRTC, no GPU needed (a few seconds)
    python -m tools.mutants --tier gpu --json results/h100/mutants_gpu.json    # the CUDA C half, on a GPU
    python -m tools.mutants --tier gpu --shard 1/2 --json ...                  # half of it (a time-limited session)

Each mutant is one edit a kernel engineer could make by mistake - a wrong mask or bound, a dropped tail, a missing
max subtraction, a biased variance, an accumulator rounded to 16 bits every k-tile, a causal mask off by one, a wrong
softmax scale, a wrong row stride, a missing barrier, a wrong shuffle width, a wrong mbarrier parity - applied to a
scratch copy of the repository (the working tree is never touched), then the tests that guard that kernel run
against it. A mutant the tests fail is *killed*; one they pass *survived*, and a survivor is a hole in the tests:
close it with a case that catches it.
Tiers: Triton mutants are judged in the CPU tier (the interpreter runs the mutated kernel); CUDA C mutants need a
GPU (on a machine without one they are listed as not run). The GPU tier (--tier gpu) first compiles every chosen
CUDA C mutant with NVRTC and refuses to start if one does not compile or changes no code (a mutant must be a wrong
program, not a compile error); it then judges them --jobs at a time on the one GPU, each with its guard tests
(--list shows which), and --json FILE writes every row (result, seconds, the first test that failed) for the
results folder of that GPU, as results/h200/mutants_gpu.json was written. The Hopper mutants (wgmma, TMA, mbarrier)
need an sm_90 GPU: elsewhere their tests skip and they read "no test ran". Exit status: 0 when no mutant survived,
1 when one did, 2 for a usage error or a mutant that does not compile.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
# the scratch copy has everything the tests read (the committed results too: the --replot tests draw them)
COPY_IGNORE = shutil.ignore_patterns(".git", ".venv", "build", "site", "__pycache__", ".pytest_cache", ".whl", ".gl",
                                     "my_work")


from tools.mutant_list import MUTANTS, Mutant  # noqa: E402,F401 - the list lives beside this file, as data


def check_mutants(mutants=MUTANTS) -> list[str]:
    """Problems with the list itself: a snippet that is not in its file exactly once, a duplicate name."""
    problems, names = [], set()
    for m in mutants:
        if m.name in names:
            problems.append(f"{m.name}: duplicate name")
        names.add(m.name)
        p = os.path.join(ROOT, m.path)
        if not os.path.exists(p):
            problems.append(f"{m.name}: {m.path} does not exist")
            continue
        n = open(p, encoding="utf-8").read().count(m.find)
        if n != 1:
            problems.append(f"{m.name}: the text to change occurs {n} times in {m.path}, not once")
        if m.find == m.replace:
            problems.append(f"{m.name}: the mutant changes nothing")
        if m.tier not in ("cpu", "gpu"):
            problems.append(f"{m.name}: tier {m.tier!r}")
        missing = [t for t in m.tests if t.endswith(".py") and not os.path.exists(os.path.join(ROOT, t))]
        if missing or not any(t.endswith(".py") for t in m.tests):
            problems.append(f"{m.name}: its guard tests {missing or 'are not named'} (no such file)")
    return problems


def _lab_defines(path: str, arch: str) -> dict:
    """The -D values the lab compiles `path` with for `arch` (its lab.py's compile_defines), {} when it has none."""
    import importlib
    import inspect

    rel = os.path.relpath(os.path.dirname(path), ROOT).split(os.sep)
    fn = getattr(importlib.import_module(".".join(rel[:2]) + ".lab"), "compile_defines", None)
    if fn is None:
        return {}
    return dict(fn(path, arch=arch) if "arch" in inspect.signature(fn).parameters else fn(path))


def _ptx(src: str, path: str, arch: str, defines: dict) -> tuple[bool, str]:
    """(ok, PTX or the compiler log) of `src` compiled as `path` for `arch`: NVRTC to PTX only (compute_XX, no
    ptxas) and unoptimized (-G), so any change to code that is compiled shows in the PTX and a build takes
    milliseconds; the line-number directives and the debug sections are dropped, so two sources compare by code."""
    from common import cuda

    nvrtc = cuda._nvrtc()
    includes = [f"-I{os.path.dirname(path)}"] + [f"-I{d}" for d in cuda._header_dirs()]
    includes += [f"-I{d}" for d in cuda._crt_dirs() if d not in cuda._header_dirs()]
    opts = [*cuda.BASE_OPTIONS, "-G", f"-arch={arch.replace('sm_', 'compute_')}", *includes,
            *cuda._define_options(defines)]
    prog = nvrtc.createProgram(src, os.path.basename(path), [], [])
    try:
        try:
            nvrtc.compileProgram(prog, opts)
        except Exception as e:  # noqa: BLE001 - NVRTC raises its own error type; the log says why
            return False, nvrtc.getProgramLog(prog) or str(e)
        ptx = nvrtc.getPTX(prog)
    finally:
        nvrtc.destroyProgram(prog)
    ptx = ptx.decode(errors="replace") if isinstance(ptx, bytes) else ptx
    ptx = ptx.split("\t.section\t.debug", 1)[0]
    return True, "\n".join(ln for ln in ptx.splitlines() if not ln.lstrip().startswith((".loc", ".file")))


def compile_problems(mutants=MUTANTS) -> list[str]:
    """Every CUDA C mutant applied to its file and compiled with NVRTC (no GPU) for the file's newest architecture,
    with the lab's defines and the mutant's own (extra["defines"]: the build that contains the mutated code): a
    mutant that does not compile, or whose PTX equals the original's (the edit is in code that build leaves out),
    is a problem - the GPU tier would report a compile error or a survivor, not a hole in the tests."""
    from common import cuda

    problems, originals = [], {}
    for m in mutants:
        if m.tier != "gpu" or not m.path.endswith(".cu"):
            continue
        path = os.path.join(ROOT, m.path)
        arch = cuda.claimed_archs(path)[-1]
        defines = {**_lab_defines(path, arch), **m.extra.get("defines", {})}
        src = open(path, encoding="utf-8").read()
        key = (path, arch, tuple(sorted(defines.items())))
        if key not in originals:
            originals[key] = _ptx(src, path, arch, defines)
        ok0, base = originals[key]
        if not ok0:
            problems.append(f"{m.name}: {m.path} itself does not compile for {arch}: {base.strip()[:300]}")
            continue
        ok, out = _ptx(src.replace(m.find, m.replace, 1), path, arch, defines)
        if not ok:
            problems.append(f"{m.name}: the mutated {m.path} does not compile for {arch}: {out.strip()[:300]}")
        elif out == base:
            problems.append(f"{m.name}: the mutated {m.path} compiles to the same code for {arch} (defines "
                            f"{m.extra.get('defines', {})}): the edit is in code this build leaves out")
    return problems


def _scratch() -> str:
    d = tempfile.mkdtemp(prefix="course-mutant-")
    dst = os.path.join(d, "repo")
    shutil.copytree(ROOT, dst, ignore=COPY_IGNORE, symlinks=True)
    return dst


def judge(m: Mutant, scratch: str, timeout: float) -> dict:
    """Apply m in the scratch copy, run its tests, undo it; {'result': killed | survived | no test ran | ...}."""
    path = os.path.join(scratch, m.path)
    original = open(path, encoding="utf-8").read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(original.replace(m.find, m.replace, 1))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **m.extra.get("env", {}))   # e.g. a kernel's bounded waits
    env.pop("COURSE_SEED", None)                  # the gate's fixed seeds: a mutant is judged by the real gate
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-o", "addopts=", *m.tests]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, cwd=scratch, env=env, capture_output=True, text=True, timeout=timeout)
        out, rc = r.stdout + r.stderr, r.returncode
    except subprocess.TimeoutExpired:
        out, rc = "timed out", None
    finally:
        with open(path, "w", encoding="utf-8") as f:
            f.write(original)
    first = next(iter(re.findall(r"^FAILED (\S+)", out, re.M)), "")
    if rc is None:
        result = "timed out"
    elif rc < 0:
        result = f"killed (crash, signal {-rc})"          # an access past the end can crash the interpreter
    else:
        result = {0: "SURVIVED", 1: "killed", 5: "no test ran"}.get(rc, "killed (error)")
        if result == "SURVIVED" and not re.search(r"\b\d+ passed", out):
            result = "no test ran"                          # every selected test skipped (no GPU, not sm_90)
    summary = next((ln for ln in reversed(out.splitlines()) if re.search(r"passed|failed|error", ln)), "")
    return {"mutant": m.name, "tier": m.tier, "file": m.path, "result": result,
            "secs": round(time.perf_counter() - t0, 1), "caught by": first.split("::")[-1][:70] if first else "",
            "summary": summary.strip("= ")[:100]}


def _tests(m: Mutant) -> str:
    """The guard tests of m, short: test files without their folder, then the -k expression."""
    return " ".join(t.removeprefix("tests/").removesuffix(".py") for t in m.tests)


def _shard(ap, text: str) -> tuple[int, int]:
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        k = n = 0
    if not 1 <= k <= n:
        ap.error(f"--shard {text}: expected K/N with 1 <= K <= N, e.g. 1/2")
    return k, n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--only", action="append", default=None, metavar="TEXT", help="mutants whose name contains this")
    ap.add_argument("--tier", choices=("cpu", "gpu", "all"), default=None,
                    help="which half to run (default: cpu without a GPU, all with one)")
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="mutants judged at a time")
    ap.add_argument("--timeout", type=float, default=900, help="seconds one mutant's tests may take")
    ap.add_argument("--json", default=None, metavar="FILE",
                    help="also write the results to FILE (results/<gpu>/mutants_gpu.json for a GPU run)")
    ap.add_argument("--compile", action="store_true",
                    help="compile every chosen CUDA C mutant with NVRTC (no GPU needed) and exit")
    ap.add_argument("--shard", default=None, metavar="K/N",
                    help="judge only the K-th of N equal parts of the chosen mutants (runs under a time limit)")
    args = ap.parse_args(argv)
    problems = check_mutants()
    if problems:
        print("the mutant list is out of date with the code:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    chosen = [m for m in MUTANTS if not args.only or any(o in m.name for o in args.only)]
    if args.only and not chosen:
        ap.error(f"--only {' '.join(args.only)}: no such mutant (--list shows them)")
    if args.list:
        from common.table import print_table

        print_table([{"mutant": m.name, "tier": m.tier, "file": m.path.split("/", 1)[1], "killed by": _tests(m)}
                     for m in chosen],
                    title=f"{len(chosen)} mutants ({sum(m.tier == 'cpu' for m in chosen)} CPU tier, "
                          f"{sum(m.tier == 'gpu' for m in chosen)} GPU tier)")
        return 0
    if args.compile:
        problems = compile_problems(chosen)
        n = sum(m.tier == "gpu" for m in chosen)
        print("\n".join(problems) or f"{n} CUDA C mutants compile with NVRTC, each to different code")
        return 2 if problems else 0
    from common import device

    tier = args.tier or ("all" if device.has_gpu() else "cpu")
    if tier in ("gpu", "all") and not device.has_gpu():
        print(f"--tier {tier}: the CUDA C mutants need a GPU ({device.no_gpu_reason()})", file=sys.stderr)
        return 2
    todo = [m for m in chosen if tier == "all" or m.tier == tier]
    if args.shard:
        k, n = _shard(ap, args.shard)
        todo = todo[k - 1::n]
    problems = compile_problems(todo)
    if problems:
        print("these CUDA C mutants are compile errors or no change, not bugs:\n  " + "\n  ".join(problems),
              file=sys.stderr)
        return 2
    skipped = [m for m in chosen if m not in todo]
    print(f"mutants: {len(todo)} to judge ({tier} tier), {args.jobs} at a time; copying the repository ...",
          flush=True)
    scratches = [_scratch() for _ in range(max(1, min(args.jobs, len(todo))))]
    free = list(scratches)
    rows, t0 = [], time.perf_counter()
    try:
        with cf.ThreadPoolExecutor(len(scratches)) as pool:
            import threading

            lock = threading.Lock()

            def work(m):
                with lock:
                    s = free.pop()
                try:
                    return judge(m, s, args.timeout)
                finally:
                    with lock:
                        free.append(s)

            for i, r in enumerate(pool.map(work, todo), 1):
                rows.append(r)
                print(f"  [{i}/{len(todo)}] {r['result']:14s} {r['secs']:6.1f} s  {r['mutant']}"
                      + (f"  (caught by {r['caught by']})" if r["caught by"] else ""), flush=True)
    finally:
        for s in scratches:
            shutil.rmtree(os.path.dirname(s), ignore_errors=True)
    rows += [{"mutant": m.name, "tier": m.tier, "file": m.path, "secs": None, "caught by": "", "summary": "",
              "result": "not run (another --shard)" if tier in ("all", m.tier) else
              "not run (needs a GPU)" if m.tier == "gpu" else f"not run (--tier {tier})"} for m in skipped]
    from common.table import print_table

    survived = [r for r in rows if r["result"] in ("SURVIVED", "no test ran", "timed out")]
    print_table(rows, ["mutant", "tier", "result", "secs", "caught by"],
                title=f"{sum(r['result'].startswith('killed') for r in rows)} killed, {len(survived)} survived, "
                      f"{len(skipped)} not run, in {time.perf_counter() - t0:.0f} s")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        head = {"tier": tier, "gpu": device.info().name if device.has_gpu() else None, "shard": args.shard}
        with open(args.json, "w") as f:
            json.dump({**head, "rows": rows}, f, indent=1)
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
