"""More than 2^31 elements (GPU, memory allowing) for the 1-D and row-wise labs of phases 1-3: 64-bit indexing, or a
clear refusal (the rules: tests/bad_input.py). A file of its own: each case allocates tens of GB."""
import pytest

from tests import bad_input as B


@pytest.mark.parametrize("name,v", B.huge_params())
def test_more_than_2_31_elements(name, v):
    B.check_more_than_2_31_elements(name, v)
