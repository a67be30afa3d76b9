"""Every variant and library peer of phase 4 against the float64 reference on the lab's awkward check cases: the
Triton variants in the interpreter on the CPU (CPU_CHECK_CASES), everything on a GPU (CHECK_CASES), outputs poisoned
and guarded, inputs fresh. One file per phase, so a GPU run spreads the phases over its workers."""
import pytest

from tests.helpers import check_variant_matches_reference, variant_params


@pytest.mark.parametrize("mod,variant", variant_params(("phase4_optimization",)))
def test_variant_matches_reference(mod, variant):
    check_variant_matches_reference(mod, variant)
