"""What several test files share: a lab's --replot run on the committed H200 results, and an array moved to the GPU."""
import os

from common import report

H200 = os.path.join(report.ROOT, "results", "h200")


def replot(main, tmp_path) -> list[str]:
    """Redraw a lab's plots from the committed H200 JSON alone (no GPU) into tmp_path: its main(--replot) succeeds;
    the names of the files it drew, sorted."""
    assert main(["--replot", H200, "--out", str(tmp_path)]) == 0
    return sorted(p.name for p in tmp_path.iterdir())


def cp(a):
    """A NumPy array as a CuPy one (GPU tier)."""
    import cupy

    return cupy.asarray(a)
