"""Korean lines of what the phase 1 runner prints (python -m phase1_architecture): {English: Korean}."""

KO = {
    "Phase 1 - GPU architecture": "Phase 1 - GPU 아키텍처",
}
