"""Phase 3 - Triton: the programming model, block tiling and matmul, fused softmax, layernorm forward and backward."""
from common.phase import existing

TITLE = "Phase 3 - Triton"
PLANNED = [
    "lab01_programming_model",
    "lab02_matmul",
    "lab03_fused_softmax",
    "lab04_layernorm",
]
LABS = existing(__file__, PLANNED)
