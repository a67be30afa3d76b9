"""Property sweep of phase 2's wrappers: random shapes, dtypes, offsets and strides, each against the float64
reference (the sweep: tests/properties.py). One file per phase, so a GPU run spreads the phases over its workers."""
import pytest

from tests import properties as P

PHASES = ("phase2_cuda",)


@pytest.mark.parametrize("mod,v,seed", P.params(PHASES))
def test_random_shapes_dtypes_layouts(mod, v, seed):
    P.sweep(mod, v, seed)
