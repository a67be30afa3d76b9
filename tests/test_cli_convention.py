"""One command line for every lab and phase runner (README, "One command line for every lab").

Every lab's and phase runner's parser offers --help, --quick, --json/--no-json, --plot/--no-plot, --device-info; a
lab whose correctness check fails exits 1. The parsers are captured in this process (no subprocess per module): the
first parse_args / parse_known_args a main() makes is intercepted and the parser kept, so nothing after it runs.
"""
from __future__ import annotations

import argparse
import importlib
import io
import contextlib

import pytest

from common import lab as lab_mod
from tests.conftest import PHASES

REQUIRED = ("--help", "--quick", "--json", "--no-json", "--plot", "--no-plot", "--device-info")


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
            _CACHE[module] = capture_parser(lambda: lab_mod.run_phase(module, pkg.TITLE, pkg.LABS, []))
        else:
            mod = importlib.import_module(module)
            _CACHE[module] = capture_parser(lambda: mod.main([]))
    return _CACHE[module]


def options(p: argparse.ArgumentParser) -> set[str]:
    return {s for a in p._actions for s in a.option_strings}


def help_text(p: argparse.ArgumentParser) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        p.print_help()
    return buf.getvalue()


def all_labs() -> list[str]:
    out = []
    for phase in PHASES:
        pkg = importlib.import_module(phase)
        out += [f"{phase}.{name}" for name in pkg.LABS]
    return out


@pytest.mark.parametrize("module", all_labs() + PHASES)
def test_standard_flags(module):
    p = parser_of(module)
    missing = [f for f in REQUIRED if f not in options(p)]
    assert not missing, f"{module}: its command line lacks {missing} (use common.cli.parser)"
    text = help_text(p)
    for f in ("--quick", "--device-info", "--no-json", "--no-plot"):
        assert f in text
    # the standard flags parse together, as the README shows them
    ns = p.parse_args(["--quick", "--no-json", "--no-plot"]) if module not in PHASES else \
        p.parse_known_args(["--quick", "--no-json", "--no-plot"])[0]
    assert ns.quick is True and ns.json is False and ns.plot is False


def test_help_exits_zero_and_usage_error_exits_two(capsys):
    mod = importlib.import_module("phase1_architecture.lab02_vector_add")
    with pytest.raises(SystemExit) as e:
        mod.main(["--help"])
    assert e.value.code == 0 and "--quick" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        mod.main(["--no-such-flag"])
    assert e.value.code == 2


# Labs whose interpreter check is cheap enough to run twice here (quick cases, CPU): a correctness failure must make
# main() return 1, and the same call with the real kernel must return 0 (so the test can fail both ways).
FAST = ["phase1_architecture.lab02_vector_add", "phase3_triton.lab01_programming_model"]


def _wrong(fn):
    """A variant that computes the right thing and then spoils one element: the check must notice."""
    def bad(*inputs, out=None):
        res = fn(*inputs, out=out)
        first = res[0] if isinstance(res, tuple) else res
        flat = first.reshape(-1)
        flat[0] = flat[0] + 1000.0
        return res
    return bad


@pytest.mark.parametrize("module", FAST)
def test_failed_check_exits_one(module, monkeypatch, capsys):
    mod = importlib.import_module(module)
    argv = ["--quick", "--no-bench", "--no-json", "--no-plot"]
    runnable = [v for v in mod.VARIANTS if v.available()[0]]
    assert runnable, f"{module}: no variant runs here"
    assert mod.main(argv) == 0, capsys.readouterr().out[-2000:]
    monkeypatch.setattr(runnable[0], "fn", _wrong(runnable[0].fn))
    assert mod.main(argv) == 1, capsys.readouterr().out[-2000:]
    assert "FAILED" in capsys.readouterr().out
