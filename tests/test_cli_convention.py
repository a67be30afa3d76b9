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
from tests.helpers import PHASES
from tests.helpers import lab_main, parser_of

REQUIRED = ("--help", "--quick", "--json", "--no-json", "--plot", "--no-plot", "--device-info")




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


def _lab(module):
    phase, name = module.split(".")
    return lab_mod.lab_module(phase, name)


def test_help_exits_zero_and_usage_error_exits_two(capsys):
    main = lab_main(_lab("phase1_architecture.lab02_vector_add"))
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0 and "--quick" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["--no-such-flag"])
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
    mod = _lab(module)
    argv = ["--quick", "--no-bench", "--no-json", "--no-plot"]
    runnable = [v for v in mod.VARIANTS if v.available()[0]]
    assert runnable, f"{module}: no variant runs here"
    assert lab_main(mod)(argv) == 0, capsys.readouterr().out[-2000:]
    monkeypatch.setattr(runnable[0], "fn", _wrong(runnable[0].fn))
    assert lab_main(mod)(argv) == 1, capsys.readouterr().out[-2000:]
    assert "FAILED" in capsys.readouterr().out


@pytest.mark.parametrize("module", all_labs())
def test_help_shows_what_you_will_learn(module):
    """--help opens with the lab's title and its "You will learn" paragraph (the lesson in one screen)."""
    text = help_text(parser_of(module))
    assert "You will learn" in text, f"{module}: --help does not show the You will learn paragraph"


@pytest.mark.parametrize("module", all_labs() + PHASES)
def test_unknown_architecture_is_a_usage_error(module):
    p = parser_of(module)
    for bad in ("sm_70", "sm_100a", "foo"):
        with pytest.raises(SystemExit) as e, contextlib.redirect_stderr(io.StringIO()) as err:
            (p.parse_known_args if module in PHASES else p.parse_args)(["--arch", bad])
        assert e.value.code == 2 and "unknown architecture" in err.getvalue()
    for good in ("sm_80", "sm_90a", "sm_100", "sm_103", "sm_120"):
        ns = p.parse_known_args(["--arch", good])[0] if module in PHASES else p.parse_args(["--arch", good])
        assert ns.arch == good


def _run(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300)


def test_phase_runner_names_the_labs_for_an_unknown_only_and_validates_once():
    r = _run("-m", "phase2_cuda", "--only", "nosuchlab")
    assert r.returncode == 2 and "lab07_softmax" in r.stderr and "no such lab" in r.stderr
    r = _run("-m", "phase2_cuda", "--size", "foo")
    assert r.returncode == 2 and r.stderr.count("expected a positive integer") == 1
    r = _run("-m", "phase2_cuda", "--no-such-flag")
    assert r.returncode == 2 and "no-such-flag" in r.stderr
    r = _run("-m", "tools.run_phases", "--only", "nosuchlab")
    assert r.returncode == 2 and "lab01_device_tour" in r.stderr


def test_the_mode_line_is_printed_once_per_run():
    """`make run` runs every lab in one process: the no-GPU (or GPU) explanation is said once, not once per lab."""
    from common import device

    r = _run("-m", "tools.run_phases", "--quick", "--no-json", "--no-plot", "--only", "lab02_vector_add",
             "--only", "lab07_softmax")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    needle = "no GPU - " if not device.has_gpu() else "GPU: "
    assert r.stdout.count(needle) == 1, r.stdout[:3000]
