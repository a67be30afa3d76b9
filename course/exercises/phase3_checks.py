"""What phase 3's exercise checkers share: inputs whose memory goes on past their end (so a kernel that reads too far
reads NaN, on the CPU and on a GPU alike), and the rows of a row-wise result that are wrong (a row kernel's bug is
a row's bug: the message names the rows, and what is special about them)."""
from __future__ import annotations

import numpy as np

from common.i18n import tr


def padded(x: np.ndarray, dtype: str, where: str, pad: int = 4096, fill: float = np.nan):
    """`x` as a C-contiguous `dtype` array on `where`, lying at the start of a buffer `pad` elements longer whose
    tail is `fill` (NaN): loads past the end of `x` read it instead of whatever the allocator put there (or a fault).
    A finite `fill` for a kernel that may store what it loaded past the end: NaN stored into an output's NaN guard
    band would not show."""
    from common import arrays

    flat = np.concatenate([np.asarray(x, np.float64).ravel(), np.full(pad, fill)])
    buf = arrays.from_numpy(flat, dtype, where)
    return buf[: x.size].reshape(x.shape)


def bad_rows(out, ref: np.ndarray, dtype: str, tol=None) -> list[int]:
    """Indices of the rows of `out` (2-D, or 1-D: one value per row) that do not match the float64 `ref`, each row
    judged on its own with common.check's rule."""
    from common import arrays, check

    o = np.asarray(arrays.to_numpy(out), np.float64)
    r = np.asarray(ref, np.float64)
    if o.ndim == 1:
        return [i for i in range(r.shape[0]) if not check.compare(o[i:i + 1], r[i:i + 1], dtype, tol).ok]
    return [i for i in range(r.shape[0]) if not check.compare(o[i], r[i], dtype, tol).ok]


def rows_text(rows: list[int], total: int, limit: int = 6) -> str:
    """'2 of 6 rows wrong (1, 2)' style text."""
    shown = ", ".join(map(str, rows[:limit])) + (", ..." if len(rows) > limit else "")
    return tr("{n} of {total} rows wrong ({shown})", n=len(rows), total=total, shown=shown)


def launched(what: str, kernel, grid, *args, **meta):
    """Launch the learner's kernel (common.triton_support.launch: the GPU, or the interpreter): None when it ran, else
    a Verdict saying that it did not, and the error (a kernel that does not compile or run is a wrong answer)."""
    from common.triton_support import launch
    from course.exercise import Verdict

    try:
        launch(kernel, grid, *args, **meta)
    except Exception as e:  # noqa: BLE001 - said plainly, not raised at the learner
        return Verdict(False, tr("{what}: the kernel failed ({error}: {detail})", what=what, error=type(e).__name__,
                                 detail=str(e)[:200]))
    return None
