"""Phase packages: the labs that exist, in the planned order, and the phase runner (python -m phaseN_xxx) that runs
them one after another with the same arguments, passing over a lab that refuses them."""
import argparse
import os
import sys
import time
import traceback

from . import cli, device
from .i18n import korean, tr
from .lab import bench_module, korean_intro, lab_module, parse_args, run, title_of


def existing(package_file: str, planned: list[str]) -> list[str]:
    """The planned labs whose folder (labNN_name/ with a lab.py) exists (labs land one by one; the order never
    changes)."""
    here = os.path.dirname(os.path.abspath(package_file))
    return [name for name in planned if os.path.exists(os.path.join(here, name, "lab.py"))]


def phase_parser(title: str, labs: list[str]) -> argparse.ArgumentParser:
    p = cli.parser(tr("{title}: runs its labs in order ({labs}); other flags go to every lab.", title=tr(title),
                      labs=", ".join(labs)), size=True,
                   dtype=None)
    p.add_argument("--dtype", default=None, help=tr("only this dtype, in the labs that have a --dtype flag"))
    p.add_argument("--only", action="append", default=None, metavar="LAB",
                   help=tr("run only the labs whose name contains this (repeatable)"))
    p.add_argument("--list", action="store_true", help=tr("list the labs and exit"))
    return p


def lab_flags(phase: str, labs: list[str]) -> set[str]:
    """Every option string the labs of a phase accept (a flag unknown to all of them is a usage error)."""
    flags: set[str] = set()
    for name in labs:
        mod = bench_module(phase, name)
        if hasattr(mod, "add_arguments"):
            q = argparse.ArgumentParser(add_help=False)
            mod.add_arguments(q)
            for a in q._actions:
                flags.update(a.option_strings)
    return flags


def select_labs(p: argparse.ArgumentParser, labs: list[str], only: list[str] | None) -> list[str]:
    if not only:
        return list(labs)
    chosen = [n for n in labs if any(o in n for o in only)]
    if not chosen:
        import difflib

        words = {w: n for n in labs for w in [n, *n.split("_")[1:]]}      # lab07_softmax: also "softmax"
        close = [words[w] for o in only for w in difflib.get_close_matches(o, list(words), n=2, cutoff=0.6)]
        hint = tr(" (did you mean {names}?)", names=" or ".join(dict.fromkeys(close))) if close else ""
        p.error(tr("--only {only}: no such lab{hint}; the labs are {labs}", only=" ".join(only), hint=hint,
                   labs=", ".join(labs)))
    return chosen


def run_phase(phase: str, title: str, labs: list[str], argv=None, *, none_ok: bool = False) -> int:
    """Run the labs of a phase in order; flags other than --only/--list go to every lab. The common flags are
    validated here, once; a flag no lab of the phase knows is a usage error (exit 2)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    p = phase_parser(title, labs)
    p.prog = f"python -m {phase}"
    args, unknown = p.parse_known_args(argv)
    if any(a.split("=")[0] == "--variant" for a in unknown):
        p.error(tr("--variant names one lab's variant: run that lab alone (python -m {phase}.LAB --variant NN)",
                   phase=phase))
    extra = lab_flags(phase, labs)
    bad = [a for a in unknown if a.startswith("-") and a.split("=")[0] not in extra]
    if bad:
        p.error(f"unrecognized arguments: {' '.join(bad)} (no lab of {phase} takes them)")
    if args.list:
        for name in labs:
            mod = lab_module(phase, name)
            title = korean_intro(mod, title_of(mod), "")[0] if korean() else title_of(mod)
            print(f"{name:32s} {title}")
        return 0
    if args.device_info:
        cli.finish_args(args)
    chosen = select_labs(p, labs, args.only)
    lab_argv = _without_phase_flags(argv)
    takes, refused = [], []
    for name in chosen:                  # a lab that refuses these arguments (a --dtype it has no kernel for, a
        why = refusal(phase, name, lab_argv)       # --size of another form) is passed over and said so, not run
        (refused if why else takes).append((name, why))
    if not takes and none_ok:            # the whole course (tools.run_phases): a phase with no such lab is passed over
        print(tr("{phase}: no lab takes these arguments ({why}); passed over", phase=phase, why=refused[0][1]))
        return 0
    if not takes:
        p.error(tr("no lab of {phase} takes these arguments: {why}", phase=phase, why=refused[0][1]))
    cli.print_mode_line()
    print(tr(title))
    summary, status = [], 0
    for name, why in refused:
        print(tr("{lab}: not run ({why})", lab=name, why=why))
        summary.append({"lab": name, "exit": "-", "secs": 0, "ran": tr("not run: {why}", why=why)})
    for name in [n for n, _ in takes]:
        print(f"\n{'=' * 100}\n{phase}.{name}\n{'=' * 100}", flush=True)
        t0 = time.perf_counter()
        try:
            rc = int(run(lab_module(phase, name), bench_module(phase, name), lab_argv, from_phase=True) or 0)
        except SystemExit as e:
            rc = int(e.code or 0) if isinstance(e.code, int) or e.code is None else 1
        except Exception:  # noqa: BLE001 - one broken lab must not hide the others
            traceback.print_exc()
            rc = 1
        status = status or rc
        summary.append({"lab": name, "exit": rc, "secs": round(time.perf_counter() - t0, 1),
                        "ran": (tr("usage error") if rc == 2 else "GPU" if device.has_gpu()
                                else tr("interpreter + compile report"))})
    from . import report

    summary.sort(key=lambda r: chosen.index(r["lab"]))
    report.print_table(summary, title=tr("{title}: summary", title=tr(title)))
    return status


def refusal(phase: str, name: str, argv: list[str]) -> str:
    """Why lab `name` would refuse `argv` (its usage error's message), or "" when it takes them."""
    import contextlib
    import io

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parse_args(lab_module(phase, name), bench_module(phase, name), argv, from_phase=True)
    except SystemExit as e:
        if e.code:
            lines = [ln for ln in err.getvalue().strip().splitlines() if ln.strip()]
            return lines[-1].split("error: ", 1)[-1] if lines else tr("usage error")
    return ""


def _without_phase_flags(argv: list[str]) -> list[str]:
    """The arguments a lab sees: the phase runner's own (--only X, --list) removed."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--only":
            skip = True
            continue
        if a.startswith("--only=") or a == "--list":
            continue
        out.append(a)
    return out
