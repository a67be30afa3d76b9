"""common.check's guard bands catch any write outside an output, a NaN included (the bands hold a NaN pattern of
their own, compared bit for bit), for every float dtype and for NumPy and torch arrays."""
import numpy as np
import pytest
import torch

from common import arrays, check


def _buffer(out):
    return check._GUARDS[id(out)][0]


@pytest.mark.parametrize("like", [np.zeros(1, np.float32), torch.zeros(1)], ids=["numpy", "torch"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("value", [0.0, float("nan"), float("inf")], ids=["zero", "nan", "inf"])
def test_a_write_just_outside_is_caught_whatever_its_value(like, dtype, value):
    if dtype == "bfloat16" and arrays.library(like) == "numpy":
        like = torch.zeros(1)                      # NumPy has no bfloat16: a bf16 output is a torch tensor
    edges = ((check.GUARD_BEFORE - 1, "before the output's start"), (check.GUARD_BEFORE + 6, "past its end"))
    for where, says in edges:
        out = check.guarded((2, 3), dtype, like)
        assert np.isnan(arrays.to_numpy(out).astype(np.float64)).all()     # the output itself is NaN: unwritten shows
        _buffer(out)[where] = value
        assert says in check.guard_damage(out)


def test_untouched_bands_and_a_full_write_of_the_output_are_clean():
    out = check.guarded((4, 5), "float32", np.zeros(1, np.float32))
    out[...] = np.nan                               # NaN inside the output is the check's business, not the bands'
    assert check.guard_damage(out) == ""
