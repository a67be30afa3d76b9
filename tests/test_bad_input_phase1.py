"""Bad input for phase 1's wrappers: every variant under every category of tests/bad_input.py (host arrays, wrong
dtype, rank and out, strided, negative-stride and misaligned views, empty inputs, NaN and Inf). One file per phase, so a
GPU run spreads the phases over its workers."""
import pytest

from tests import bad_input as B

PHASES = ("phase1_architecture",)


@pytest.mark.parametrize("mod,v", B.host_params(PHASES))
def test_host_arrays_are_refused_with_a_hint(mod, v):
    B.check_host_arrays_are_refused_with_a_hint(mod, v)


@pytest.mark.parametrize("mod,v,cat", B.params(B.CATEGORIES, PHASES))
def test_bad_input(mod, v, cat):
    B.check_bad_input(mod, v, cat)
