#!/usr/bin/env bash
# finish the suite's 4 cut-off files (the rest passed in callE at the same commit), then measurements; $OUT/f.tgz
set -u
cd "$(dirname "$0")"; O=${OUT:?}/f; mkdir -p "$O"; T0=$(date +%s)
left() { echo $(( ${DEADLINE:-420} - ($(date +%s) - T0) )); }
run() { local name=$1 lim=$2; shift 2; local l; l=$(left); [ "$l" -lt 20 ] && { echo "== SKIP $name"; return; }
  [ "$lim" -gt "$l" ] && lim=$l; local t=$(date +%s)
  timeout "$lim" "$@" > "$O/$name.log" 2>&1; local rc=$?
  echo "== $name: exit $rc in $(( $(date +%s) - t ))s" | tee -a "$O/runlog"; tail -n "${TAILN:-12}" "$O/$name.log"
  ( cd "$OUT" && tar czf f.tgz f ); }
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$O/gpu.txt"
M=phase4_optimization.lab06_attention
TAILN=6 run rest 240 python3 -m pytest -q -n 14 --dist load -p no:cacheprovider tests/test_gpu_plans.py tests/test_gpu_plans_phase4.py tests/test_regression_seeds.py tests/test_exercise_attempts.py
TAILN=30 run bench 100 python3 -m $M.hopper_bwd_bench --json "$O/bwd.json"
TAILN=30 run train 100 python3 -m phase4_optimization.lab07_transformer_block.train_bench --quick --out "$O/train"
TAILN=25 run headline 150 python3 -m tools.headline --out "$O/after"
echo "== done after $(( $(date +%s) - T0 ))s"
