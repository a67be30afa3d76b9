"""Phase 1 - GPU architecture: threads, warps, blocks and grids; the memory hierarchy; occupancy."""
from common.phase import existing

TITLE = "Phase 1 - GPU architecture"
PLANNED = [
    "lab01_device_tour",
    "lab02_vector_add",
    "lab03_thread_hierarchy",
    "lab04_memory_hierarchy",
    "lab05_occupancy",
    "lab06_matmul_naive",
]
LABS = existing(__file__, PLANNED)
