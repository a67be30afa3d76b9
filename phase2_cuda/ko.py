"""Korean lines of what the phase 2 runner prints (python -m phase2_cuda): {English: Korean}."""

KO = {
    "Phase 2 - CUDA kernel programming": "Phase 2 - CUDA 커널 프로그래밍",
}
