"""One name for a kernel (issue "The learner's path II"): the compile report says, next to each kernel, which variants
of the correctness table launch it, under the same names; the names never make the report wider than it was."""
import importlib
import re

import pytest

from common import i18n, plan, report, table

LABS = ["phase2_cuda.lab07_softmax", "phase4_optimization.lab02_fusion"]
ARGS = ["--quick", "--no-bench", "--no-json", "--no-plot"]


def run_lab(pkg: str, capsys, *extra: str) -> list[str]:
    importlib.import_module(pkg + ".__main__").main(ARGS + list(extra))
    out = capsys.readouterr().out
    i18n.set_lang("en")
    return out.splitlines()


def cuda_variants(lines: list[str]) -> list[str]:
    """The CUDA C variants the correctness table names (its rows whose impl column is cuda)."""
    start = next(i for i, ln in enumerate(lines) if ln.startswith("correctness against the float64 reference"))
    out = []
    for ln in lines[start + 3:]:
        if not ln.strip():
            break
        m = re.match(r"^(.+?)\s{2,}(cuda|triton|peer)\s", ln)
        if m and m.group(2) == "cuda":
            out.append(m.group(1))
    return out


def compile_rows(lines: list[str], kernels: set[str]) -> dict[str, str]:
    """{kernel: its row in the compile report, with the lines under it}: the text the "used by" names sit in."""
    out: dict[str, str] = {}
    current = None
    for ln in lines:
        first = ln.split("  ")[0] if ln and not ln[0].isspace() else None
        if first in kernels:
            current = first
            out[current] = ln
        elif current and ln.startswith("  ") and not ln.startswith("   "):
            out[current] += "\n" + ln
        else:
            current = None
    return out


def plan_users(pkg: str) -> dict[str, set[str]]:
    lab = importlib.import_module(pkg + ".lab")
    bench = importlib.import_module(pkg + ".bench")
    out: dict[str, set[str]] = {}
    for x in plan.make(lab, bench).launches:
        if x.impl == "cuda" and x.variant:
            out.setdefault(x.kernel, set()).add(x.variant)
    return out


@pytest.mark.parametrize("pkg", LABS)
def test_every_cuda_variant_is_named_next_to_its_kernels(pkg, capsys):
    lines = run_lab(pkg, capsys)
    variants = cuda_variants(lines)
    assert variants, "the correctness table names no CUDA C variant"
    users = plan_users(pkg)
    rows = compile_rows(lines, set(users))
    assert rows, "the compile report shows none of the plan's kernels"
    for v in variants:
        mine = [k for k, vs in users.items() if v in vs and k in rows]
        assert mine, f"{v!r}: no kernel of its in the compile report"
        for k in mine:
            assert v in rows[k], f"{k}: its row does not name {v!r}:\n{rows[k]}"
    for k, text in rows.items():          # and no kernel names a variant that does not launch it
        assert {v for v in variants if v in text} <= users[k], (k, text)


@pytest.mark.parametrize("pkg", LABS)
def test_the_names_keep_the_report_as_wide_as_it_was(pkg, capsys):
    lines = run_lab(pkg, capsys)
    rows = compile_rows(lines, set(plan_users(pkg)))
    first = min(lines.index(r.splitlines()[0]) for r in rows.values())
    title = max(i for i in range(first) if "compiled with NVRTC" in lines[i])
    end = max(lines.index(r.splitlines()[0]) + len(r.splitlines()) for r in rows.values())
    block = lines[title:end]
    dashes = block[2]
    assert set(dashes) <= {"-", " "}, block[:3]
    before = dashes.rsplit("  ", 1)[0] if block[1].rstrip().endswith("used by") else dashes
    assert max(table.width(ln) for ln in block) <= max(table.width(block[0]), len(before)), "\n".join(block)


def test_korean_run_names_the_variants_in_korean_words(capsys):
    lines = run_lab("phase2_cuda.lab07_softmax", capsys, "--lang", "ko")
    said = [ln for ln in lines if ln.startswith("  쓰는 variant: ")]
    assert any("cuda 05 registers, 16-byte loads" in ln for ln in said), "\n".join(lines[-60:])
    assert not any("used by" in ln for ln in lines)


def test_a_wide_column_fits_or_moves_under_the_row(capsys):
    rows = [{"kernel": "k_01_a", "regs": 32}, {"kernel": "k_01_b", "regs": 40}, {"kernel": "helper", "regs": 8}]
    used = {"k_01_a": ["cuda 01 one", "cuda 02 two"], "k_01_b": ["cuda 01 one"]}
    report.print_table(rows, used_by=used, width=60)             # room: one more column
    wide = capsys.readouterr().out.splitlines()
    assert wide[0].split() == ["kernel", "regs", "used", "by"]
    assert wide[2] == "k_01_a  32    cuda 01 one; cuda 02 two" and wide[3] == "k_01_b  40    cuda 01 one"
    assert wide[-1] == "helper  8"                               # a helper no variant launches: blank
    report.print_table(rows, used_by=used, width=28)             # less room: a variant a line
    tall = capsys.readouterr().out.splitlines()
    assert tall[2] == "k_01_a  32    cuda 01 one" and tall[3] == " " * 14 + "cuda 02 two"
    assert max(map(len, tall)) <= 28
    report.print_table(rows, used_by=used)                       # no room: the names go under the row
    narrow = capsys.readouterr().out.splitlines()
    assert narrow[2] == "k_01_a  32" and narrow[3:5] == ["  used by: cuda 01 one", "  used by: cuda 02 two"]
    assert narrow[5:] == ["k_01_b  40", "  used by: cuda 01 one", "helper  8"]
    report.print_table(rows)                                     # outside a lab's compile report: the plain table
    assert "used by" not in capsys.readouterr().out


def test_a_fallback_kernel_takes_its_rungs_variants():
    users = plan.kernel_users("phase2_cuda.lab07_softmax", "sm_90",
                                ["softmax_05_block_row_f32_scalar", "softmax_01a_row_max", "no_such_helper"])
    assert users["softmax_05_block_row_f32_scalar"] == ["cuda 05 registers, 16-byte loads"]
    assert users["softmax_01a_row_max"] == ["cuda 01 three kernels"]
    assert "no_such_helper" not in users


def test_names_only_inside_a_compile_report(capsys):
    rows = [{"kernel": "k_01_a", "regs": 32}]
    with table.naming(lambda kernels, arch: {"k_01_a": ["cuda 01 one"]}):
        report.print_table(rows)
    assert "used by: cuda 01 one" in capsys.readouterr().out
    report.print_table(rows)
    assert "used by" not in capsys.readouterr().out
