"""Aligned text tables on the terminal (no dependencies, so every module of common/ may print one)."""
from __future__ import annotations

import contextlib


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if v != v:
            return "nan"
        a = abs(v)
        if a == 0:
            return "0"
        if a >= 1000:
            return f"{v:,.0f}"
        if a >= 100:
            return f"{v:.1f}"
        if a >= 1:
            return f"{v:.2f}"
        if a >= 0.01:
            return f"{v:.3f}"
        return f"{v:.2e}"
    if isinstance(v, (list, tuple)):
        return "x".join(str(x) for x in v)
    return str(v)


def width(s: str) -> int:
    """Columns a string takes on a terminal: Hangul and other wide characters take two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in s)


def _pad(s: str, w: int) -> str:
    return s + " " * (w - width(s))


def print_table(rows: list[dict], columns: list[str] | None = None, *, title: str | None = None, file=None) -> None:
    """A plain aligned table; columns default to the keys of the first row. The title and the column names print in
    the chosen language (common.i18n: the row dicts keep their English keys, which the JSON files use)."""
    from .i18n import tr

    if title:
        print(f"\n{tr(title)}", file=file)
    if not rows:
        print(tr("(no rows)"), file=file)
        return
    cols = columns or list(rows[0].keys())
    heads = [tr(c) for c in cols]
    cells = [[_fmt(r.get(c)) for c in cols] for r in rows]
    widths = [max(width(h), *(width(row[i]) for row in cells)) for i, h in enumerate(heads)]
    print("  ".join(_pad(h, w) for h, w in zip(heads, widths)).rstrip(), file=file)
    print("  ".join("-" * w for w in widths), file=file)
    for row_ in cells:
        print("  ".join(_pad(v, w) for v, w in zip(row_, widths)).rstrip(), file=file)


# ---------------------------------------------------------------------------------------------------------------------
# A compile report names each kernel's variants the way the correctness table does
# ---------------------------------------------------------------------------------------------------------------------
_text_width = width     # (print_kernel_table has a parameter of that name)
USED_BY = "used by"      # the compile report's column: the variants (correctness-table names) that launch a kernel
_NAMERS: list = []       # fn(kernels, arch) -> {kernel: [variant, ...]} of the compile report being printed


@contextlib.contextmanager
def naming(fn):
    """While a lab's compile report prints (common.lab.run wraps its compile_report hook): kernel_names() asks
    fn(kernels, arch) for the variants of each kernel; outside, tables are printed as they are."""
    _NAMERS.append(fn)
    try:
        yield
    finally:
        _NAMERS.pop()


def kernel_names(kernels: list[str], arch: str) -> dict:
    """{kernel: [variant, ...]} for the compile report being printed ({} outside one, or where the names cannot be
    worked out: they are a help, never a reason for a report to fail)."""
    if not _NAMERS:
        return {}
    try:
        return dict(_NAMERS[-1](kernels, arch))
    except Exception:  # noqa: BLE001 - no names, the table as it was
        return {}


def print_kernel_table(rows: list[dict], columns: list[str] | None = None, *, title: str | None = None, file=None,
                       used_by: dict | list | None = None, width: int = 0, study: str = "") -> None:
    """print_table, and the variants that launch each kernel (`used_by`), never making a line longer than the table
    (or its title, or `width`) already was: a "used by" column where it fits (a variant a line where a kernel has
    several), else a line under each kernel row. `used_by` is {kernel: [variant, ...]} (by a row's "kernel" cell), or
    a lab's own table of builds (settings, tiles, dtypes) gives a list, [variant, ...] a row. `study`, where given, is
    what a row no variant launches says in the names' place (a study point: a sweep point, a build to compare)."""
    from .i18n import tr

    cols = list(columns or (rows[0].keys() if rows else []))
    if isinstance(used_by, list):
        used = [list(u or ()) for u in used_by]
    else:
        names = {str(r.get("kernel")): list(used_by.get(str(r.get("kernel")), ())) for r in rows} if used_by else {}
        used = [names.get(str(r.get("kernel")), []) for r in rows]
    if not rows or not (any(used) or study):
        print_table(rows, columns, title=title, file=file)
        return
    if title:
        print(f"\n{tr(title)}", file=file)
        width = max(width, _text_width(tr(title)))
    heads = [tr(c) for c in cols]
    cells = [[_fmt(r.get(c)) for c in cols] for r in rows]
    widths = [max(_text_width(h), *(_text_width(row_[i]) for row_ in cells)) for i, h in enumerate(heads)]
    line = sum(widths) + 2 * (len(widths) - 1)
    width = max(width, line)
    shown = [u or ([study] if study else []) for u in used]        # a column's cells: the names, or the study mark
    head = tr(USED_BY)
    room = width - line - 2
    need = max(_text_width(head), *(_text_width("; ".join(u)) for u in shown))

    def show(parts):
        print("  ".join(_pad(v, w) for v, w in zip(parts, widths + [0])).rstrip(), file=file)

    if room >= need:                                   # one more column, one line a row
        show(heads + [head])
        print("  ".join("-" * w for w in widths + [need]), file=file)
        for row_, u in zip(cells, shown):
            show(row_ + ["; ".join(u)])
    elif room >= (one := max(_text_width(head), *(_text_width(n) for u in shown for n in u))):
        show(heads + [head])                          # one more column, a variant a line
        print("  ".join("-" * w for w in widths + [one]), file=file)
        for row_, u in zip(cells, shown):
            show(row_ + (u[:1] or [""]))
            for more in u[1:]:
                show([""] * len(widths) + [more])
    else:                                             # no room for a column: the names under the kernel's row
        show(heads)
        print("  ".join("-" * w for w in widths), file=file)
        for row_, u in zip(cells, used):
            show(row_)
            said = tr("used by: {variants}", variants="; ".join(u))
            if u and _text_width(said) + 2 > width:        # too long for one line: a line a variant
                for name in u:
                    print("  " + tr("used by: {variants}", variants=name), file=file)
            elif u:
                print("  " + said, file=file)
            elif study:
                print("  " + study, file=file)
