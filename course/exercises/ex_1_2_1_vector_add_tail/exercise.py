"""Exercise 1.2.1 - the tail: a Triton vector add that is only right when n is a multiple of its block."""
import importlib.util
import os
import sys

import numpy as np

ID = "1.2.1"
TITLE = "Fix the tail of a Triton vector add (any n, not only multiples of the block)"
TIER = "cpu"
FILE = "add.py"
SIZES = (1, 255, 256, 257, 1000, 4097)


def _load(path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    if root not in sys.path:
        sys.path.insert(0, root)
    spec = importlib.util.spec_from_file_location(f"ex121_{abs(hash(os.path.abspath(path)))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check(path):
    from course.exercise import Verdict
    from common import arrays, check as chk, lab
    from common.triton_support import launch

    mod = _load(path)
    rng = np.random.default_rng(121)
    for n in SIZES:
        a = arrays.from_numpy(rng.standard_normal(n), "float32", lab.where())
        b = arrays.from_numpy(rng.standard_normal(n), "float32", lab.where())
        c = chk.poisoned((n,), "float32", a)            # NaN everywhere: an element never written shows
        try:
            launch(mod.add_kernel, mod.grid(n), a, b, c, n, BLOCK=mod.BLOCK)
        except Exception as e:  # noqa: BLE001 - an out-of-bounds access is an answer too, a wrong one
            return Verdict(False, f"n = {n}: the kernel failed ({type(e).__name__}: {str(e)[:120]}); in the "
                                  "interpreter an access past the end of an array raises - on a GPU it reads or "
                                  "writes someone else's memory")
        ref = arrays.to_numpy(a).astype(np.float64) + arrays.to_numpy(b).astype(np.float64)
        cmp = chk.compare(c, ref, "float32")
        if not cmp.ok:
            return Verdict(False, f"n = {n}: {cmp.message}. Elements left NaN were never written: how many programs "
                                  "does grid(n) launch, and what does the last one do with lanes past n?")
    return Verdict(True, f"right for n = {', '.join(map(str, SIZES))}: every element written once, none past the "
                         "end (a mask on the loads and the store, and a grid of ceil(n / BLOCK) programs)")
