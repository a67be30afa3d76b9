"""The realistic wrong attempts of the exercises of phases 3 and 4 (and of any later phase) fail with the message
that names the mistake, never a crash (phases 1 and 2, and the rest of the checkers' tests:
tests/test_exercise_attempts.py)."""
import pytest

from tests.attempts import attempts, check_wrong_attempt

ATTEMPTS = attempts(other_than=(1, 2))          # 3, 4 and any later phase: none is left out


@pytest.mark.parametrize("x,i,attempt", ATTEMPTS, ids=[f"{x.id}-{i}" for x, i, _ in ATTEMPTS])
def test_wrong_attempt_fails_with_the_right_message(x, i, attempt, tmp_path):
    check_wrong_attempt(x, attempt, tmp_path)
