"""--size, --dtype and --variant on every lab (common.lab.add_common_choices), and the phase runner's refusals."""
import argparse

import pytest

from common import cli
from common import lab as course_lab
from common import phase as course_phase
from phase1_architecture.lab02_vector_add import lab as vadd
from phase2_cuda.lab07_softmax import lab as softmax
from tests.helpers import lab_main


def test_size_value_parses_what_a_learner_writes():
    assert cli.size_value("4099") == 4099 and cli.size_value("2^20") == 2**20 and cli.size_value("1e6") == 10**6
    assert cli.size_value("33x4096") == (33, 4096) and cli.size_value("64,32,16") == (64, 32, 16)
    assert cli.size_value("0x1000") == 4096
    assert cli.size_value("residual_layernorm,5,33") == ("residual_layernorm", 5, 33)
    for bad in ("", "0", "3x0", "x4", "abc", "-5"):
        with pytest.raises(argparse.ArgumentTypeError):
            cli.size_value(bad)
    assert cli.size_text((33, 4096)) == "33x4096" and cli.size_text(("ln", 5, 33)) == "ln,5,33"


def test_variant_by_rung_number_or_name_part():
    vs = softmax.VARIANTS + softmax.PEERS
    assert [v.name for v in course_lab.pick_variants(vs, ["05"])] == ["cuda 05 registers, 16-byte loads"]
    assert [v.name for v in course_lab.pick_variants(vs, ["5"])] == ["cuda 05 registers, 16-byte loads"]
    assert [v.name for v in course_lab.pick_variants(vs, ["triton", "01"])] == ["cuda 01 three kernels",
                                                                               "triton online"]
    assert course_lab.pick_variants(vs, None) == vs
    with pytest.raises(ValueError, match="no such variant.*cuda 01"):
        course_lab.pick_variants(vs, ["softmx"])


def test_size_replaces_the_checked_cases_in_each_dtype():
    cases = course_lab.check_cases(softmax, False, None, (7, 100))
    assert {c[0] for c in cases} == {(7, 100)} and len(cases) == len({c[1] for c in softmax.CPU_CHECK_CASES})
    assert course_lab.check_cases(softmax, False, ("bfloat16",), (7, 100)) == [((7, 100), "bfloat16")]
    assert not course_lab.size_like_cases(softmax, 7)


def test_the_runner_checks_only_the_chosen_variant_at_the_chosen_size(capsys):
    assert lab_main(softmax)(["--size", "3x40", "--variant", "triton", "--dtype", "float32"]) == 0
    out = capsys.readouterr().out
    table = out.split("correctness against")[1].split("\n\n")[0]
    assert "triton online" in table and "cuda 05" not in table and "ok (1 cases" in table


@pytest.mark.parametrize("argv,says", [(["--size", "7"], "sizes look like"), (["--variant", "nope"], "no such variant"),
                                       (["--dtype", "float64"], "invalid choice")])
def test_a_choice_the_lab_does_not_have_is_a_usage_error(argv, says, capsys):
    with pytest.raises(SystemExit) as e:
        lab_main(softmax)(argv)
    assert e.value.code == 2 and says in capsys.readouterr().err


def test_a_lab_with_its_own_size_keeps_its_meaning():
    p, runner_size = course_lab.lab_parser(vadd, __import__("phase1_architecture.lab02_vector_add.bench",
                                                            fromlist=["bench"]))
    assert not runner_size                       # lab 1.2's --size is the benchmark's n, not the checked size


def test_phase_runner_refuses_variant_and_passes_over_a_lab_without_the_dtype(capsys):
    with pytest.raises(SystemExit) as e:
        course_phase.run_phase("phase2_cuda", "Phase 2", ["lab07_softmax"], ["--variant", "05"])
    assert e.value.code == 2 and "run that lab alone" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        course_phase.run_phase("phase2_cuda", "Phase 2", ["lab01_coalescing_transpose"], ["--dtype", "bfloat16"])
    assert e.value.code == 2 and "no lab of phase2_cuda takes these arguments" in capsys.readouterr().err
    assert course_phase.refusal("phase2_cuda", "lab01_coalescing_transpose", ["--dtype", "bfloat16"])
    assert course_phase.refusal("phase2_cuda", "lab07_softmax", ["--dtype", "bfloat16"]) == ""


def test_the_run_says_what_the_benchmark_does_not_narrow():
    import argparse as ap

    from phase2_cuda.lab07_softmax import bench as softmax_bench
    from phase4_optimization.lab02_fusion import bench as fusion_bench

    args = ap.Namespace(variant=["05"], dtype="float32", size=(3, 40), size_checks=True)
    assert course_lab.unhonoured(softmax_bench, args) == []
    notes = course_lab.unhonoured(fusion_bench, args)
    assert len(notes) == 3 and all("the checks used it" in n for n in notes)
    assert course_lab.unhonoured(fusion_bench, ap.Namespace(variant=None, dtype=None, size=9, size_checks=False)) == []
