"""Phase 4 - Kernel optimization: roofline analysis, fusion, tensor cores, tiling strategy, mixed precision; fast
attention and a fused transformer block."""
from common.phase import existing

TITLE = "Phase 4 - Kernel optimization"
PLANNED = [
    "lab01_roofline",
    "lab02_fusion",
    "lab03_tensor_cores",
    "lab04_tiling_strategy",
    "lab05_mixed_precision",
    "lab06_attention",
    "lab07_transformer_block",
]
LABS = existing(__file__, PLANNED)
