"""Aligned text tables on the terminal (no dependencies, so every module of common/ may print one)."""
from __future__ import annotations


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
