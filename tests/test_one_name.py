"""One name for a kernel (issue "The learner's path II"): the compile report says, next to each kernel, which variants
of the correctness table launch it, under the same names; the names never make the report wider than it was. The labs
that print compile tables of their own (settings, tiles, dtypes, rungs) name the variants the same way, and mark a row
no variant launches as a study point."""
import argparse
import importlib
import re

import pytest

from common import device, i18n, plan, report, table

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


def test_a_builds_table_takes_its_names_a_row_and_marks_study_points(capsys):
    rows = [{"setting": "01 WORK=4", "regs": 24}, {"setting": "01 WORK=16", "regs": 34}]
    used, mark = [[], ["cuda 01 WORK=16"]], "study point: none"
    table.print_kernel_table(rows, used_by=used, study=mark, width=40)          # room: one more column
    wide = capsys.readouterr().out.splitlines()
    assert wide[2] == "01 WORK=4   24    study point: none" and wide[3] == "01 WORK=16  34    cuda 01 WORK=16"
    table.print_kernel_table(rows, used_by=used, study=mark)                    # no room: lines under the rows
    narrow = capsys.readouterr().out.splitlines()
    assert narrow[2:] == ["01 WORK=4   24", "  study point: none", "01 WORK=16  34", "  used by: cuda 01 WORK=16"]
    table.print_kernel_table(rows, used_by=[[], []])                            # no names, no mark: the plain table
    assert capsys.readouterr().out.splitlines()[2:] == ["01 WORK=4   24", "01 WORK=16  34"]


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


# ---------------------------------------------------------------------------------------------------------------------
# A lab's own compile tables: the rows name the correctness table's variants, or say they are study points
# ---------------------------------------------------------------------------------------------------------------------
# lab: (the impl its own table is about: every variant of that impl is named in it, the title it starts with,
#       whether its rows are named by the variants themselves rather than by "used by" lines or a column)
OWN_TABLES = {
    "phase2_cuda.lab05_register_pressure": ("cuda", "kernels.cu compiled with NVRTC", False),
    "phase2_cuda.lab08_sgemm": ("cuda", "What the compiler made of each rung", True),
    "phase3_triton.lab02_matmul": ("triton", "matmul_kernel compiled ahead of time", False),
    "phase3_triton.lab03_fused_softmax": ("triton", "softmax kernels compiled ahead of time", False),
    "phase3_triton.lab04_layernorm": ("triton", "layernorm kernels compiled ahead of time", False),
    "phase4_optimization.lab01_roofline": ("triton", "fma_chain_kernel compiled for", False),
    "phase4_optimization.lab04_tiling_strategy": ("cuda", "mma.sync tile shapes compiled for", False),
    "phase4_optimization.lab05_mixed_precision": ("cuda", "kernels.cu compiled with NVRTC", False),
}
ARCH = "sm_90"


def own_report(pkg: str, capsys, lang: str = "en") -> list[str]:
    """What the lab's compile_report hook prints for --quick on sm_90, as the runner calls it (common.lab.run: inside
    the names of its compile report), in `lang`."""
    bench = importlib.import_module(pkg + ".bench")
    capsys.readouterr()
    i18n.set_lang(lang)
    try:
        with table.naming(lambda kernels, arch: plan.kernel_users(pkg, arch or ARCH, kernels)):
            bench.compile_report(argparse.Namespace(arch=ARCH, quick=True, bench=False))
    finally:
        i18n.set_lang("en")
    return capsys.readouterr().out.splitlines()


def own_block(lines: list[str], title: str) -> list[str]:
    """The lab's own table: its title line, header and rule, then its rows with the lines under them that name a
    variant or mark a study point (a sentence instead of a table: its line and the "used by" lines under it)."""
    start = next(i for i, ln in enumerate(lines) if ln.startswith(title))
    block = lines[start:start + 3]
    rule = block[2] if len(block) == 3 and set(block[2]) <= {"-", " "} else ""
    gaps = [j for j, ch in enumerate(rule) if ch == " "]
    for ln in lines[start + (3 if rule else 1):]:
        row = rule and ln and not ln[0].isspace() and all(ln[j] == " " for j in gaps if j < len(ln))
        if not (row or ln.startswith(("  used by: ", "  study point")) or (rule and ln.startswith(" " * 8))):
            break
        block.append(ln)
    return block if rule else block[:1] + [ln for ln in block[1:] if ln.startswith("  used by: ")]


def split_names(text: str, variants: list[str]) -> list[str]:
    """The variant names of a "used by" text (joined by "; ", which a name may hold itself): the known names first,
    longest first; anything else up to the next "; " as it reads."""
    out = []
    while text:
        name = next((v for v in sorted(variants, key=len, reverse=True)
                     if text == v or text.startswith(v + "; ")), text.split("; ")[0])
        out.append(name)
        text = text[len(name) + 2:]
    return out


def block_names(block: list[str], variants: list[str], first_column: bool) -> tuple[list[str], list[str]]:
    """(the variant names the block prints, its rows that neither name a variant nor say they are a study point)."""
    if len(block) < 3 or not set(block[2]) <= {"-", " "}:          # a sentence: its "used by" lines
        return [n for ln in block[1:] for n in split_names(ln[len("  used by: "):], variants)], []
    column = block[1].rfind(table.USED_BY) if block[1].rstrip().endswith(table.USED_BY) else -1
    names, bare, rows = [], [], block[3:]
    for i, ln in enumerate(rows):
        cell = ln[column:].strip() if column >= 0 and ln[column - 2:column] == "  " else ""
        if ln.startswith("  used by: "):
            names += split_names(ln[len("  used by: "):], variants)
        elif cell:
            names += split_names(cell, variants)
        elif first_column and ln and not ln[0].isspace():
            names.append(re.split(r"\s{2,}", ln)[0])
        if ln and not ln[0].isspace() and not first_column:
            if not cell and not (i + 1 < len(rows) and rows[i + 1].startswith(("  used by: ", "  study point"))):
                bare.append(ln)
    return names, bare


@pytest.mark.parametrize("pkg", list(OWN_TABLES))
def test_a_labs_own_compile_table_names_its_variants(pkg, capsys):
    """Every name the lab's own table gives a row is a variant of the correctness table, every variant of the impl the
    table is about is named in it, every other row says it is a study point; the names go in a column only where the
    table (or its title) leaves room, else on lines under the rows no wider than the table."""
    impl, title, first_column = OWN_TABLES[pkg]
    block = own_block(own_report(pkg, capsys), title)
    lab = importlib.import_module(pkg + ".lab")
    variants = [v.name for v in lab.VARIANTS]                # the names the correctness table prints
    names, bare = block_names(block, variants, first_column)
    assert names, "\n".join(block)
    assert set(names) <= set(variants), (sorted(set(names) - set(variants)), "\n".join(block))
    mine = [v.name for v in lab.VARIANTS if v.impl == impl and v.available(device.current(ARCH))[0]]
    assert set(mine) <= set(names), (sorted(set(mine) - set(names)), "\n".join(block))
    assert not bare, "rows that name no variant and are not marked as study points:\n" + "\n".join(bare)
    if len(block) > 2 and set(block[2]) <= {"-", " "}:
        before = block[2].rsplit("  ", 1)[0] if block[1].rstrip().endswith(table.USED_BY) else block[2]
        assert max(table.width(ln) for ln in block) <= max(table.width(block[0]), len(before)), "\n".join(block)


def test_a_labs_own_table_names_the_variants_in_korean_words(capsys):
    lines = own_report("phase3_triton.lab04_layernorm", capsys, "ko")
    assert any(ln.startswith("  쓰는 variant: triton fwd (two-pass Welford) + bwd") for ln in lines), "\n".join(lines)
    assert any(ln.startswith("  비교용 지점: ") for ln in lines)
    assert not any("used by" in ln or "study point" in ln for ln in lines)
