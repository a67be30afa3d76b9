"""Phase 1 - GPU architecture: threads, warps, blocks and grids; the memory hierarchy; occupancy."""

TITLE = "Phase 1 - GPU architecture"
LABS = [
    "lab02_vector_add",
]
