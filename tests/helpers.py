"""What several test files share: a lab's --quick run on the CPU and its --replot of the committed H200 results, fp32
inputs from a fixed seed, an array moved to the GPU, the mark for tests that read SASS, the skip of a variant that
cannot run here."""
import argparse
import contextlib
import importlib
import os
import re
import subprocess

import numpy as np
import pytest

from common import check, cuda, report
from common import phase as course_phase

H200 = os.path.join(report.ROOT, "results", "h200")
needs_sass = pytest.mark.skipif(cuda.find_cuobjdump() is None, reason="no cuobjdump to disassemble with")


def lab_main(lab_mod):
    """The `main(argv)` of `python -m <the lab>`: its __main__.py, which hands lab.py and bench.py to the runner."""
    return importlib.import_module(lab_mod.__package__ + ".__main__").main


def quick_output(main, capsys) -> str:
    """What a lab's `--quick --arch sm_90` run printed on the CPU: it succeeded, checked its variants in the
    interpreter and compiled its kernels."""
    assert main(["--quick", "--arch", "sm_90"]) == 0
    out = capsys.readouterr().out
    assert "interpreter" in out and "compiled" in out and "ok (" in out
    return out


def replot(main, tmp_path) -> list[str]:
    """Redraw a lab's plots from the committed H200 JSON alone (no GPU) into tmp_path: its main(--replot) succeeds;
    the names of the files it drew, sorted."""
    assert main(["--replot", H200, "--out", str(tmp_path)]) == 0
    return sorted(p.name for p in tmp_path.iterdir())


def rand(shape, seed=0):
    """Standard-normal fp32 values of `shape`, drawn from check.rng(seed)."""
    return check.rng(seed).standard_normal(shape).astype(np.float32)


def cp(a):
    """A NumPy array as a CuPy one (GPU tier)."""
    import cupy

    return cupy.asarray(a)


def skip_unless_available(variant):
    """Skip the calling test where `variant` cannot run on this machine (a CUDA C variant without a GPU, a kernel for
    another architecture), with the variant's own reason."""
    ok, why = variant.available()
    if not ok:
        pytest.skip(why)


def variant_params(phases) -> list:
    """pytest params (mod, variant) for every variant and peer of the labs of `phases`, marked gpu where needed."""
    from common import lab as course_lab

    out = []
    for name, mod in lab_modules():
        if name.split(".")[0] not in phases:
            continue
        for v in getattr(mod, "VARIANTS", []) + getattr(mod, "PEERS", []):
            out.append(pytest.param(mod, v, id=f"{name}:{v.name}",
                                    marks=[] if v.runs_without_gpu else [pytest.mark.gpu]))
    assert all(isinstance(p.values[1], course_lab.Variant) for p in out)
    return out


def check_variant_matches_reference(mod, variant) -> None:
    """Every check case of the lab (CHECK_CASES on a GPU, CPU_CHECK_CASES in the interpreter) through the variant:
    fresh inputs, poisoned and guarded outputs, the float64 reference."""
    from common import device, lab as course_lab

    skip_unless_available(variant)
    cases = mod.CHECK_CASES if device.has_gpu() else mod.CPU_CHECK_CASES
    rows, all_ok = course_lab.check_variants(mod, [variant], cases, verbose=False)
    assert rows[0]["cases"] > 0, f"{variant.name}: no case ran ({rows[0]['result']})"
    assert all_ok, rows[0]["result"]


# ---------------------------------------------------------------------------------------------------------------------
# The labs, the tree's git status, and a command's parser: what conftest.py and several test files share
# ---------------------------------------------------------------------------------------------------------------------
ROOT = report.ROOT
PHASES = ["phase1_architecture", "phase2_cuda", "phase3_triton", "phase4_optimization"]


def lab_modules():
    """Every lab of every phase, in order, as (phase.lab, its lab.py module)."""
    from common.lab import lab_module, lab_names

    return [(f"{phase}.{name}", lab_module(phase, name)) for phase, name in lab_names(PHASES)]


def git_status(root: str = ROOT) -> str | None:
    """`git status --porcelain` of the tree (None outside a git checkout)."""
    try:
        r = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=root, capture_output=True,
                           text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout if r.returncode == 0 else None


def changed_entries(before: str, after: str) -> list[str]:
    """The status lines that differ between two `git status --porcelain` outputs."""
    return sorted(set(after.splitlines()) ^ set(before.splitlines()))


class _Captured(Exception):
    def __init__(self, parser):
        super().__init__("parser captured")
        self.parser = parser


def capture_parser(call) -> argparse.ArgumentParser:
    """Run call() until it first parses its arguments; return the parser it built (nothing after that runs)."""
    orig_parse, orig_known = argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args

    def grab(self, *a, **k):
        raise _Captured(self)

    argparse.ArgumentParser.parse_args = grab
    argparse.ArgumentParser.parse_known_args = grab
    try:
        call()
    except _Captured as c:
        return c.parser
    finally:
        argparse.ArgumentParser.parse_args = orig_parse
        argparse.ArgumentParser.parse_known_args = orig_known
    raise AssertionError("the command returned without parsing any arguments")


_CACHE: dict[str, argparse.ArgumentParser] = {}


def parser_of(module: str) -> argparse.ArgumentParser:
    """The parser of `python -m module` (a lab, a phase runner, tools.regenerate, tools.readme_tables, ...)."""
    if module not in _CACHE:
        if module in PHASES:
            pkg = importlib.import_module(module)
            _CACHE[module] = capture_parser(lambda: course_phase.run_phase(module, pkg.TITLE, pkg.LABS, []))
        elif module.startswith("phase"):
            phase, name = module.split(".")
            main = importlib.import_module(f"{phase}.{name}.__main__").main
            _CACHE[module] = capture_parser(lambda: main([]))
        else:
            mod = importlib.import_module(module)
            if not hasattr(mod, "main"):                  # a package whose command is its __main__ (course)
                mod = importlib.import_module(module + ".__main__")
            _CACHE[module] = capture_parser(lambda: mod.main([]))
    return _CACHE[module]


# ---------------------------------------------------------------------------------------------------------------------
# One CONFIG per lab: a .cu file holds no default of its own
# ---------------------------------------------------------------------------------------------------------------------
def config_guards(path: str, owners: tuple[str, ...]) -> list[str]:
    """The knobs a .cu file leaves to Python, in order: every `#ifndef X` must be a guard - the next line an
    `#error "X is set by ..."` naming one of `owners` (the .py files that set it), then `#endif` - never a default."""
    lines = open(path, encoding="utf-8").read().splitlines()
    out = []
    for i, line in enumerate(lines):
        m = re.match(r"\s*#ifndef\s+(\w+)", line)
        if not m:
            continue
        name, nxt = m.group(1), lines[i + 1].strip()
        assert nxt.startswith("#error") and f'"{name} is set by' in nxt and any(f in nxt for f in owners), \
            f"{os.path.basename(path)}:{i + 1}: #ifndef {name} must be followed by an #error naming it, got {nxt!r}"
        assert lines[i + 2].strip().startswith("#endif"), f"{os.path.basename(path)}:{i + 3}: #endif expected"
        out.append(name)
    return out


@contextlib.contextmanager
def files_unchanged(paths: list[str]):
    """Asserts that none of `paths` was written (modification time and size) while the block ran."""
    def stamp():
        return {p: (os.path.getmtime(p), os.path.getsize(p)) for p in paths if os.path.isfile(p)}

    before = stamp()
    yield
    assert stamp() == before, "a lab file or tuning record was written"


def skip_or_fail(why: str, required_by: str = "COURSE_REQUIRE_SETUP") -> None:
    """Something a test needs is missing: skip with the one-line reason, except where the environment variable
    `required_by` is 1 - CI sets COURSE_REQUIRE_SETUP (its fresh machine is set up by the project's own files, so a
    missing package is an install step missing) and COURSE_REQUIRE_BROWSER (it installs Chromium) - where it fails."""
    import pytest

    if os.environ.get(required_by) == "1":
        pytest.fail(f"{required_by}=1 but {why}")
    pytest.skip(why)


def needs_setup(what: str) -> None:
    """`what` (a tool or package `make setup` installs) is missing: skip on a machine that was not set up (a GPU box
    running the suite from a plain checkout), fail in CI."""
    skip_or_fail(f"{what} is not installed in this environment: run `make setup`")


def every_launch_fits(phase: str, name: str) -> None:
    """Every launch of the lab's plan on every GPU profile compiles (NVRTC for CUDA C, Triton ahead of time) for that
    GPU's architecture and fits its limits (tests/test_gpu_plans*.py, one file per phase group)."""
    import pytest

    from common import device, lab, plan

    mod, bench = lab.lab_module(phase, name), lab.bench_module(phase, name)
    if not hasattr(mod, "launches"):
        pytest.skip(f"{name} declares no launches (common.plan)")
    bad = []
    for slug in device.profiles():
        gpu = device.profile_info(slug)
        for f in plan.verify(plan.make(mod, bench, gpu)):
            if f.problems:
                bad.append(f"{slug} ({gpu.arch}) {f.launch.variant or '-'} / {f.launch.kernel}: "
                           + "; ".join(f.problems))
    assert not bad, "\n".join(bad)


def heaviest_files_first(items, seconds: dict[str, float]) -> list:
    """`items` (pytest items, or anything with a .nodeid) reordered file by file, the files by their time in
    `seconds` (tests/file_seconds.json, tools/suite_weights.py), heaviest first; a file it does not list counts its
    items times the listed files' mean time an item (0 without any). Each file's items stay together and in order."""
    def path(item) -> str:
        return item.nodeid.split("::", 1)[0]

    counts: dict[str, int] = {}
    for item in items:
        counts[path(item)] = counts.get(path(item), 0) + 1
    known = [f for f in counts if f in seconds]
    per_item = sum(seconds[f] for f in known) / max(1, sum(counts[f] for f in known))
    weight = {f: seconds.get(f, per_item * n) for f, n in counts.items()}
    first = {f: i for i, f in enumerate(counts)}           # dicts keep the collection order: ties keep it too
    return sorted(items, key=lambda item: (-weight[path(item)], first[path(item)]))


def assert_waits_go_through_WAIT(src: str, at_least: int = 10) -> None:
    """A Hopper kernel's source (lab 4.6's forward and backward): every barrier wait is a WAIT(...), whose two
    #defines are the debug build's bounded wait under #if MBAR_TIMEOUT and the plain one after #else; no direct
    mbar_wait_parity / mbar_wait_bounded / mbar_try_wait call outside them."""
    import re

    lines = src.splitlines()
    assert len([x for x in lines if x.startswith("#define WAIT(")]) == 2     # the debug one and the plain one
    body = "\n".join(x for x in lines if not x.startswith("#define WAIT("))
    assert not re.search(r"\bmbar_(wait_parity|wait_bounded|try_wait)\(", body)
    assert len(re.findall(r"\bWAIT\(", body)) >= at_least
    i = src.index("#if MBAR_TIMEOUT")
    block = src[i:src.index("#endif", i)]
    assert block.index("mbar_wait_bounded") < block.index("#else") < block.index("mbar_wait_parity")


@contextlib.contextmanager
def builds_with(monkeypatch, config: dict, key: str, value, loaded: set, *caches):
    """config[key] = value while the block runs - a test-only knob of a kernel's CONFIG (lab 4.3's STORE_RACE, the
    Hopper backward's LOAD_RACE) - with the module's build caches (`caches`: functools caches keyed by a build's
    arguments, not by CONFIG) emptied before and after, and `loaded` (the builds a module's hang_report reloads)
    holding only the builds made meanwhile; all of it as it was afterwards."""
    def clear():
        for c in caches:
            c.cache_clear()
    saved = set(loaded)
    loaded.clear()
    clear()
    monkeypatch.setitem(config, key, value)
    try:
        yield
    finally:
        monkeypatch.undo()
        clear()
        loaded.clear()
        loaded.update(saved)


def child_answers_then_hangs(ex_id, path, lang, conn, err_path):
    """A child for course.exercise.check_isolated that sends its verdict and then never exits, as one whose heap a
    learner's kernel wrecked can hang in its own exit."""
    import time

    conn.send((False, "NOT YET: a planted verdict", ""))
    conn.close()
    while True:
        time.sleep(60)


def child_hangs(ex_id, path, lang, conn, err_path):
    """A child for course.exercise.check_isolated that never answers (a check hung before its verdict)."""
    import time

    while True:
        time.sleep(60)
