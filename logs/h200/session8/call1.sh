#!/usr/bin/env bash
# Session 8, first GPU call (H200): the never-run fused-epilogue GEMM and lab 4.7's wgmma block (tests, benchmark,
# ncu profile), and the lab 4.2 timing study. Steps in priority order within DEADLINE seconds; logs under $OUT.
set -u
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
DEADLINE=${DEADLINE:-560}; T0=$(date +%s)
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
step() { local name=$1 cap=$2; shift 2; local l; l=$(left); [ "$l" -lt 30 ] && { echo "== SKIP $name"; return; }
  [ "$cap" -gt "$l" ] && cap=$l; echo "== $name (cap ${cap}s)"; local t=$(date +%s)
  timeout "$cap" "$@" > "$OUT/$name.log" 2>&1; echo "== $name: exit $? in $(( $(date +%s) - t ))s"; tail -n 30 "$OUT/$name.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv
git log --oneline -1 2>/dev/null
step pytest 220 python3 -m pytest -q -p no:cacheprovider -n 14 -o addopts="" -rfE --tb=short \
  tests/test_phase4_lab03_tensor_cores_wgmma.py tests/test_phase4_lab07_transformer_block.py tests/test_bad_input_phase4.py
step lab07 150 python3 -m phase4_optimization.lab07_transformer_block
step lab02_timing 90 python3 logs/h200/session8/lab02_timing_study.py "$OUT/lab02_timing_study.json"
step prof_block_wgmma 90 python3 -m tools.profile --cases block_wgmma --out results/h200/profile_s8_block_wgmma
tar czf "$OUT/results.tgz" results/
echo "== done after $(( $(date +%s) - T0 ))s"
