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


def print_table(rows: list[dict], columns: list[str] | None = None, *, title: str | None = None, file=None) -> None:
    """A plain aligned table; columns default to the keys of the first row."""
    if title:
        print(f"\n{title}", file=file)
    if not rows:
        print("(no rows)", file=file)
        return
    cols = columns or list(rows[0].keys())
    cells = [[_fmt(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)), file=file)
    print("  ".join("-" * w for w in widths), file=file)
    for row_ in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row_, widths)), file=file)
