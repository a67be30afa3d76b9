"""Sanitizer sweep: every CUDA C and Triton variant of every lab, at small awkward sizes, under compute-sanitizer.

    python -m tools.sanitize                 # GPU only: memcheck, racecheck, initcheck, synccheck, in parallel
    python -m tools.sanitize --dry-run       # list what would run (works without a GPU)
    python -m tools.sanitize --tools memcheck --labs vector_add --timeout 120
    python -m tools.sanitize --tools racecheck --labs attention --variants "hopper bwd"   # some variants / extras only

Design (one GPU, a few minutes):
  * one Python worker per tool (`python -m tools.sanitize --worker --tool X`), the four in parallel, each under
    `compute-sanitizer --tool X`; a worker imports every lab of every phase (phase 4 too, once its labs exist) and runs
    each of our variants (impl 'cuda' or 'triton'; library peers are not ours and are left out) on the lab's
    SANITIZE_CASES, or else on its smallest CHECK_CASES;
  * the worker prints a marker line before and after each variant call; inputs, poisoned outputs and the check
    against the float64 reference happen outside the markers, so library kernels (random numbers, fills, copies)
    never run inside one;
  * the log parser (`parse_log` of tools/sanitize_log.py, a pure function) splits the sanitizer's report into error
    blocks and attributes each one: to the kernel it names when that kernel is ours (a CUDA C kernel from a
    phase*/*.cu file or a @triton.jit function of a lab), to '(library)' when it names a library kernel (torch, CuPy,
    cuBLAS, ...), else to the variant whose markers surround it, else to '(outside variants)'. Library and outside
    rows are listed, not counted against us. Its error total is cross-checked against the sanitizer's own ERROR
    SUMMARY;
  * results/<gpu>/sanitize.json and sanitize.md are rewritten as each tool finishes (a tool that runs past its
    timeout is killed and its partial log is parsed all the same).

What counts as an error: memcheck, initcheck and synccheck error reports, and racecheck's "Error: Race reported"
(its warnings are listed in the JSON but are not errors). CUDA API errors are not reported (--report-api-errors no):
Triton and torch probe the driver with calls that are allowed to fail, and a failed launch of ours already shows as
an exception in the worker's row.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time

from tools.sanitize_log import LIBRARY, MARK, OUTSIDE, parse_log

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
PHASES = ("phase1_architecture", "phase2_cuda", "phase3_triton", "phase4_optimization")
MAX_COST = 1 << 21        # cases whose size (product of its dimensions) is larger are not sanitized by default
CASES_PER_VARIANT = 2
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TIMEOUT = 330     # seconds per tool; the four run at once

# options per tool: see the Compute Sanitizer manual, "Command Line Options" and each tool's chapter
TOOL_OPTIONS = {
    "memcheck": [],
    "racecheck": ["--racecheck-report", "analysis"],
    "initcheck": [],
    "synccheck": [],
}
COMMON_OPTIONS = ["--target-processes", "all", "--print-limit", "2000", "--report-api-errors", "no"]


# ---------------------------------------------------------------------------------------------------------------------
# Which labs, variants and cases
# ---------------------------------------------------------------------------------------------------------------------
def lab_modules(phases=PHASES, only=None):
    """[(qualified name, module)] for every lab that exists, in phase order (phase 4 labs appear once written);
    with `only`, just the labs whose qualified name contains one of those strings (the others are not imported)."""
    from common.lab import lab_module, lab_names

    out = []
    for phase, name in lab_names(phases):
        if only and not any(o in f"{phase}.{name}" for o in only):
            continue
        try:
            out.append((f"{phase}.{name}", lab_module(phase, name)))
        except Exception as e:  # noqa: BLE001 - a lab that does not import is reported, the others still run
            BROKEN[f"{phase}.{name}"] = f"{type(e).__name__}: {e}"
    return out


BROKEN: dict[str, str] = {}   # labs that failed to import, with the error


def _cost(size) -> int:
    dims = size if isinstance(size, (tuple, list)) else (size,)
    c = 1
    for d in dims:
        if isinstance(d, (int, float)) and not isinstance(d, bool):   # a lab may put a name in its size tuple
            c *= max(int(d), 1)
    return c


def sanitize_cases(mod, variant) -> list:
    """The cases a variant runs under the sanitizer: SANITIZE_CASES if the lab has them, else up to two of the
    CHECK_CASES in the variant's dtypes (the cheapest and the largest under MAX_COST), else the cheapest case in the
    variant's first dtype."""
    explicit = getattr(mod, "SANITIZE_CASES", None)
    pool = list(explicit if explicit is not None else getattr(mod, "CHECK_CASES", []) or
                getattr(mod, "CPU_CHECK_CASES", []))
    mine = [c for c in pool if c[1] in variant.dtypes]
    if variant.cannot_serve is not None:   # cases it has no kernel for (by design) would only raise, not sanitize
        mine = [c for c in mine if not variant.cannot_serve(c[0], c[1])]
    if explicit is not None:
        return mine
    small = sorted((c for c in mine if _cost(c[0]) <= MAX_COST), key=lambda c: _cost(c[0]))
    if small:
        # the cheapest case (edges: one element, one row) and the largest allowed (several blocks, ragged tails)
        picks = [small[0], small[-1]] + small[1:-1]
        out = []
        for c in picks:
            if c not in out:
                out.append(c)
        return out[:CASES_PER_VARIANT]
    if pool:
        size = min((c[0] for c in pool), key=_cost)
        if variant.cannot_serve is not None and variant.cannot_serve(size, variant.dtypes[0]):
            return []
        return [(size, variant.dtypes[0])]
    return []


def extras(qual: str) -> list:
    """A lab's kernels that are not its variants (a backward under construction, say): EXTRAS of the lab's
    sanitize_extras module when it has one, each with name, impl, size, dtype, available() -> (ok, why),
    prepare(seed) -> state, run(state) and check(state) -> (ok, message)."""
    import importlib
    import importlib.util

    name = f"{qual}.sanitize_extras"
    if importlib.util.find_spec(name) is None:
        return []
    return list(importlib.import_module(name).EXTRAS)


def plan(labs=None, only=None, variants=None) -> list[dict]:
    """Every (lab, variant, case) the worker will run, in order: the variants, then the lab's extras (with
    `variants`, only those whose name contains one of those strings)."""
    out = []
    for qual, mod in (labs if labs is not None else lab_modules(only=only)):
        if only and not any(o in qual for o in only):
            continue
        for v in getattr(mod, "VARIANTS", []):
            if v.impl not in ("cuda", "triton"):
                continue
            for size, dtype in sanitize_cases(mod, v):
                out.append({"lab": qual, "variant": v.name, "impl": v.impl, "size": size, "dtype": dtype})
        for ex in extras(qual):
            out.append({"lab": qual, "variant": ex.name, "impl": ex.impl, "size": ex.size, "dtype": ex.dtype,
                        "extra": True})
    return [it for it in out if not variants or any(v in it["variant"] for v in variants)]


def our_kernel_names(labs=None) -> set[str]:
    """Kernel names that are ours: every extern "C" kernel of a phase*/*.cu file, every @triton.jit of a lab."""
    import glob

    from common import cuda

    root = ROOT
    names: set[str] = set()
    for path in glob.glob(os.path.join(root, "phase*", "**", "*.cu"), recursive=True):
        try:
            names.update(cuda.kernel_names(path))
        except OSError:
            pass
    for _, mod in (labs if labs is not None else lab_modules()):
        for attr in vars(mod).values():
            if type(attr).__name__ not in ("JITFunction", "InterpretedFunction", "Autotuner", "Heuristics"):
                continue
            fn = attr
            while getattr(fn, "fn", None) is not None:
                fn = fn.fn
            name = getattr(fn, "__name__", None)
            if name:
                names.add(name)
    return names


# ---------------------------------------------------------------------------------------------------------------------
# The worker: runs inside compute-sanitizer
# ---------------------------------------------------------------------------------------------------------------------
def _mark(*parts) -> None:
    sys.stdout.write(MARK + " " + "\t".join(str(p).replace("\t", " ").replace("\n", " ") for p in parts) + "\n")
    sys.stdout.flush()


def _sync() -> None:
    try:
        import cupy

        cupy.cuda.runtime.deviceSynchronize()
    except Exception:  # noqa: BLE001 - a sticky error shows up as the variant's exception already
        pass
    try:
        import torch

        if torch.cuda.is_initialized():
            torch.cuda.synchronize()
    except Exception:  # noqa: BLE001
        pass


class _VariantTarget:
    """A lab variant seen as a sweep target (the extras' protocol): inputs, reference and poisoned outputs from the
    lab's prepare_case ('cpu' without a GPU: a smoke test), judged by its compare_case."""

    def __init__(self, mod, v, it: dict):
        self.mod, self.v, self.it = mod, v, it
        self.name, self.impl = v.name, v.impl

    def available(self):
        return self.v.available()

    def prepare(self, i: int):
        from common import check, lab

        return lab.prepare_case(self.mod, self.it["size"], self.it["dtype"], check.rng(i))

    def run(self, state):
        inputs, _, out = state
        return self.v.fn(*inputs, out=out)

    def check(self, state, res):
        from common import lab

        _, ref, out = state
        c = lab.compare_case(self.mod, res, ref, self.it["size"], self.it["dtype"], out)
        return c.ok, c.message


class _ExtraTarget:
    """A lab's extra (sanitize_extras.EXTRAS) as a sweep target: seeded from the process seed, judged on its state."""

    def __init__(self, ex):
        self.ex, self.name, self.impl = ex, ex.name, ex.impl

    def available(self):
        return self.ex.available()

    def prepare(self, i: int):
        from common import check

        return self.ex.prepare(check.seed() + i)

    def run(self, state):
        self.ex.run(state)

    def check(self, state, res):
        return self.ex.check(state)


def worker(tool: str, only=None, settle_s: float = 0.02, variants=None) -> int:
    labs = lab_modules(only=only)
    items = plan(labs, only, variants)
    mods = dict(labs)
    _mark("START", tool, len(items))
    for i, it in enumerate(items):
        if it.get("extra"):
            target = _ExtraTarget(next(x for x in extras(it["lab"]) if x.name == it["variant"]))
        else:
            mod = mods[it["lab"]]
            target = _VariantTarget(mod, next(v for v in mod.VARIANTS if v.name == it["variant"]), it)
        _run_item(target, it, i, settle_s)
    _mark("DONE", tool)
    return 0


def _run_item(target, it: dict, i: int, settle_s: float) -> None:
    """One item: skipped with its reason where it cannot run; prepared outside the markers; run between BEGIN and
    END; judged after (a mismatch or an exception is the END's status)."""
    ok_here, why = target.available()
    if not ok_here:
        _mark("SKIP", it["lab"], target.name, why)
        return
    try:
        state = target.prepare(i)
        _sync()
    except Exception as e:  # noqa: BLE001
        _mark("SKIP", it["lab"], target.name, f"inputs failed: {type(e).__name__}: {e}")
        return
    time.sleep(settle_s)
    _mark("BEGIN", it["lab"], target.name, target.impl, it["size"], it["dtype"])
    status, res = "ok", None
    try:
        res = target.run(state)
        _sync()
    except Exception as e:  # noqa: BLE001 - reported in the row, the sweep goes on
        status = f"{type(e).__name__}: {e}"
    time.sleep(settle_s)   # let the sanitizer print what it found before the END marker
    if status == "ok":
        try:
            ok, msg = target.check(state, res)
            if not ok:
                status = f"mismatch: {msg}"
        except Exception as e:  # noqa: BLE001
            status = f"check failed: {type(e).__name__}: {e}"
    _mark("END", it["lab"], target.name, status)


# ---------------------------------------------------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------------------------------------------------
def find_sanitizer() -> str | None:
    exe = shutil.which("compute-sanitizer")
    if exe:
        return exe
    for d in ("/usr/local/cuda/bin", "/usr/local/cuda/compute-sanitizer", "/opt/cuda/bin"):
        cand = os.path.join(d, "compute-sanitizer")
        if os.access(cand, os.X_OK):
            return cand
    return None


def sanitizer_command(exe: str, tool: str, only=None, variants=None) -> list[str]:
    cmd = [exe, "--tool", tool] + COMMON_OPTIONS + TOOL_OPTIONS[tool]
    cmd += [sys.executable, "-m", "tools.sanitize", "--worker", "--tool", tool]
    for o in only or []:
        cmd += ["--labs", o]
    for v in variants or []:
        cmd += ["--variants", v]
    return cmd


def table_rows(results: dict, items: list[dict], tools) -> list[dict]:
    """One row per variant (and one for library kernels), a cell per tool: 'E errors / N runs' or what went wrong."""
    keys = []
    impl = {}
    for it in items:
        k = f"{it['lab']}:{it['variant']}"
        if k not in impl:
            keys.append(k)
            impl[k] = it["impl"]
    rows = []
    for k in keys:
        row = {"kernel": k.split(".", 1)[-1], "impl": impl[k]}
        for t in tools:
            res = results.get(t)
            if res is None:
                row[t] = "not run"
                continue
            r = res["parsed"]["variants"].get(k)
            if r is None:
                row[t] = "not reached" + (" (timeout)" if res.get("timed_out") else "")
                continue
            if r.get("skipped") and not r["launches"]:
                row[t] = f"skipped: {r['skipped'][:60]}"
                continue
            cell = f"{r['errors']} ({r['launches']} runs)"
            if r["exceptions"]:
                cell += f" {len(r['exceptions'])} raised"
            if r["checks_failed"]:
                cell += f" {r['checks_failed']} wrong"
            row[t] = cell
        rows.append(row)
    lib = {"kernel": LIBRARY, "impl": "-"}
    out = {"kernel": OUTSIDE, "impl": "-"}
    for t in tools:
        res = results.get(t)
        lib[t] = str(sum(res["parsed"]["library"].values())) if res else "not run"
        out[t] = str(len(res["parsed"]["outside"])) if res else "not run"
    rows += [lib, out]
    return rows


def our_errors(results: dict) -> int:
    return sum(r["errors"] for res in results.values() for r in res["parsed"]["variants"].values())


def write_results(results: dict, items, tools, out_dir: str, command: str) -> tuple[str, str]:
    from common import report

    os.makedirs(out_dir, exist_ok=True)
    rows = table_rows(results, items, tools)
    payload = {
        "meta": report.meta(command),
        "command": command,
        "tools": {t: {k: v for k, v in res.items() if k != "parsed"} | {
            "summary_errors": res["parsed"]["summary_errors"], "parsed_errors": res["parsed"]["parsed_errors"],
            "library": res["parsed"]["library"], "outside": res["parsed"]["outside"],
            "variants": res["parsed"]["variants"]} for t, res in results.items()},
        "our_errors": our_errors(results),
        "rows": rows,
    }
    jpath = os.path.join(out_dir, "sanitize.json")
    with open(jpath, "w") as f:
        json.dump(payload, f, indent=1, default=str)
    cols = ["kernel", "impl"] + list(tools)
    lines = ["# compute-sanitizer sweep", "", f"Command: `{command}`", "",
             "Each cell: errors attributed to the variant (runs completed under the tool). "
             f"{LIBRARY} and {OUTSIDE} are listed, not counted against us.", ""]
    for t in tools:
        res = results.get(t)
        if res:
            lines.append(f"- {t}: exit {res.get('returncode')}, {res.get('seconds')} s, sanitizer ERROR SUMMARY "
                         f"{res['parsed']['summary_errors']}, attributed {res['parsed']['parsed_errors']}"
                         + (", TIMED OUT (partial)" if res.get("timed_out") else ""))
    lines += ["", f"Our errors in total: {payload['our_errors']}", "",
              "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |")
    mpath = os.path.join(out_dir, "sanitize.md")
    with open(mpath, "w") as f:
        f.write("\n".join(lines) + "\n")
    return jpath, mpath


def _run_tool(exe, tool, only, timeout, log_path, results, lock, on_done, ours, variants=None):
    t0 = time.time()
    cmd = sanitizer_command(exe, tool, only, variants)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    timed_out = False
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                cwd=ROOT)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, 9)
            except OSError:
                proc.kill()
            rc = proc.wait()
    with open(log_path, errors="replace") as f:
        text = f.read()
    parsed = parse_log(text, ours)
    with lock:
        results[tool] = {"returncode": rc, "timed_out": timed_out, "seconds": round(time.time() - t0, 1),
                         "log": log_path, "command": " ".join(cmd), "parsed": parsed,
                         "finished": "DONE" in text.split(MARK + " ")[-1] if MARK in text else False}
        on_done()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.sanitize", description=(
        "Run every CUDA C and Triton variant of every lab at small awkward sizes under compute-sanitizer "
        "(memcheck, racecheck, initcheck, synccheck; one process per tool, in parallel) and write "
        "results/<gpu>/sanitize.json and sanitize.md. Needs a GPU and compute-sanitizer, except --dry-run."))
    p.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated subset of {','.join(TOOLS)}")
    p.add_argument("--labs", action="append", default=None, metavar="SUBSTR",
                   help="only labs whose qualified name contains this (repeatable)")
    p.add_argument("--variants", action="append", default=None, metavar="SUBSTR",
                   help="only variants (and extras) whose name contains this (repeatable): e.g. 'hopper bwd'")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per tool (default %(default)s)")
    p.add_argument("--out", default=None, help="results folder (default results/<gpu>/)")
    p.add_argument("--dry-run", action="store_true", help="list the variants, cases and commands; run nothing")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--tool", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    bad = [t for t in tools if t not in TOOLS]
    if bad:
        p.error(f"--tools: unknown {', '.join(bad)}; choose from {', '.join(TOOLS)}")
    if args.worker:
        return worker(args.tool or "memcheck", args.labs, variants=args.variants)

    from common import device

    if not args.dry_run and not device.has_gpu():
        print(f"tools.sanitize needs a CUDA GPU and none is usable ({device.no_gpu_reason()}); "
              "run it on a GPU machine, or use --dry-run to see what it would run.")
        return 2
    items = plan(only=args.labs, variants=args.variants)
    for qual, err in BROKEN.items():
        print(f"{qual}: does not import, not sanitized ({err})")
    exe = find_sanitizer()
    if args.dry_run:
        for it in items:
            print(f"{it['lab']:45s} {it['impl']:6s} {it['variant']:45s} {it['size']} {it['dtype']}")
        print(f"\n{len(items)} runs per tool ({len({(i['lab'], i['variant']) for i in items})} variants); commands:")
        for t in tools:
            print("  " + " ".join(sanitizer_command(exe or "compute-sanitizer", t, args.labs, args.variants)))
        return 0
    if exe is None:
        print("tools.sanitize needs compute-sanitizer (part of the CUDA toolkit) on the PATH and found none; "
              "install the toolkit or add its bin/ folder to PATH.")
        return 2
    out_dir = args.out or os.path.join("results", device.gpu_slug())
    log_dir = os.path.join(out_dir, "sanitize_logs")
    os.makedirs(log_dir, exist_ok=True)
    command = "python -m tools.sanitize" + (" " + " ".join(argv if argv is not None else sys.argv[1:])).rstrip()
    ours = our_kernel_names()
    results: dict = {}
    lock = threading.Lock()
    print(f"compute-sanitizer: {exe}; {len(items)} runs per tool; tools {', '.join(tools)} in parallel, "
          f"timeout {args.timeout:.0f} s each; logs in {log_dir}/", flush=True)

    def done():
        write_results(results, items, [t for t in tools], out_dir, command)

    threads = [threading.Thread(target=_run_tool, args=(exe, t, args.labs, args.timeout,
                                                        os.path.join(log_dir, f"{t}.log"), results, lock, done,
                                                        ours), kwargs={"variants": args.variants}) for t in tools]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    jpath, mpath = write_results(results, items, tools, out_dir, command)
    from common import report

    report.print_table(table_rows(results, items, tools), ["kernel", "impl"] + tools,
                       title="compute-sanitizer: errors per variant (runs completed)")
    total = our_errors(results)
    incomplete = [t for t, r in results.items() if r["timed_out"] or not r["finished"]]
    for t, r in results.items():
        ps = r["parsed"]
        print(f"{t}: exit {r['returncode']} in {r['seconds']} s; sanitizer ERROR SUMMARY {ps['summary_errors']}, "
              f"attributed {ps['parsed_errors']} (library {sum(ps['library'].values())}, "
              f"outside variants {len(ps['outside'])})" + ("; TIMED OUT" if r["timed_out"] else ""))
    print(f"our errors: {total}; wrote {jpath} and {mpath}")
    if incomplete:
        print(f"incomplete: {', '.join(incomplete)} (see the logs)")
    raised = sum(len(v["exceptions"]) + v["checks_failed"] for r in results.values()
                 for v in r["parsed"]["variants"].values())
    return 0 if total == 0 and not incomplete and raised == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
