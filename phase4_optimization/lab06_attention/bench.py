"""Lab 4.6's measuring side, as the shared runner reads it (common/contract.py, BenchHooks): the lab's own flags and
the checks of the CUDA C forward beyond the variants' (extra_checks) here; the other hooks come from the modules that
do the work - predict.py (the two numbers, and what the lesson predicts for a GPU), compiled.py (what the compilers
made of the kernels), models.py and diagnosis.py (the CUDA C forward modelled in NumPy, and where a wrong output is
wrong), timing.py (on a GPU: the targets with the tile tuning, the grouped-query, naive and CUDA C comparisons,
--tune) and plots.py (the plots, redrawn from the JSON by --replot). The benchmark's cases are cases.py's. All of them
import lab.py, never the reverse; their names are re-exported here (bench.X)."""
from __future__ import annotations

import argparse

from common.i18n import tr

from . import lab as L
from .cases import (  # noqa: F401 - re-exported
    BWD_CANDIDATES, CUDA_CONFIGS, CUDA_GOAL, CUDA_SHAPE, FWD_CANDIDATES, GQA_TARGET, HOPPER_CASES, HOPPER_GOAL,
    HOPPER_GQA, HOPPER_GQA_RUNGS, HOPPER_ROW, HOPPER_ROWS, NAIVE_SHAPE, TARGETS)
from .compiled import (  # noqa: F401 - re-exported
    aot_kernel, compile_report, compile_rows, compile_summary, compile_table)
from .diagnosis import (  # noqa: F401 - re-exported
    _ranges, mismatch_pattern, probe, probe_check)
from .models import (  # noqa: F401 - re-exported
    LSE_TOL, _ldmatrix, _mma, fragment_check, model_check, round_bf16, tiled_model, warp_fragment_model)
from .plots import (  # noqa: F401 - re-exported
    CONTENDERS, _causal, contender, plot, shape_text, shapes_in_title)
from .predict import (  # noqa: F401 - re-exported
    _ridge, explain, predict)
from .timing import (  # noqa: F401 - re-exported
    _config_label, _fitted, _naive_torch_heads, _randn, _sample_compare, bench_cuda_shapes, bench_gqa, bench_naive,
    bench_hopper_gqa, bench_targets, benchmark, config_name, hopper_target, tune, tune_configs)


CPU_NOTE = ("\nRan in the interpreter: the naive attention (torch matmuls + the Triton softmax kernel) and the flash "
            "forward and backward\n(small tiles, S up to 67, causal and not, ragged tails, strided views), against "
            "float64 NumPy; the CUDA C forward\nneeds a GPU: it was compiled, and its tiling and fragments were "
            "modelled in NumPy. Timing, tuning and the SDPA peers need a GPU.")


def add_arguments(p) -> None:
    p.add_argument("--compile-report", action=argparse.BooleanOptionalAction, default=None,
                   help=tr("compile the Triton flash kernels for --arch ahead of time and show their resources "
                           "(default: on without a GPU unless --quick; the CUDA C table is always shown)"))
    p.add_argument("--tune", action="store_true",
                   help=tr("(GPU) time the Triton forward and backward candidates at the target shapes, check each "
                           "winner against float64, and record this GPU's winners (results/<gpu>/"
                           "phase4_lab06_attention_tuned.json), which the wrappers then use"))


def extra_checks(args) -> bool:
    """The CUDA C forward beyond the checks of VARIANTS: its tiling and one warp's fragments modelled in NumPy (every
    machine), and on a GPU the permutation probe of the real kernels."""
    ok = model_check(args.quick)
    ok = fragment_check() and ok
    if not L.unavailable_reason():
        ok = probe_check() and ok
    return ok
