"""Phase 2 - CUDA kernel programming: memory coalescing, shared memory and bank conflicts, warp shuffle, launch
configuration, register pressure; the reduction, softmax and SGEMM ladders."""
from common.phase import existing

TITLE = "Phase 2 - CUDA kernel programming"
PLANNED = [
    "lab01_coalescing_transpose",
    "lab02_bank_conflicts",
    "lab03_warp_shuffle",
    "lab04_launch_config",
    "lab05_register_pressure",
    "lab06_reduction",
    "lab07_softmax",
    "lab08_sgemm",
]
LABS = existing(__file__, PLANNED)
