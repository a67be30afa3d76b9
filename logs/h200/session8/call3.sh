#!/usr/bin/env bash
# Session 8, third GPU call (H200): lab 4.2 with its new steady timing (one call per graph replay), then
# compute-sanitizer (all four tools) over labs 4.3, 4.6 and 4.7 (the fused-epilogue GEMM runs in lab 4.7's wgmma block).
set -u
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
DEADLINE=${DEADLINE:-560}; T0=$(date +%s)
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
step() { local name=$1 cap=$2; shift 2; local l; l=$(left); [ "$l" -lt 30 ] && { echo "== SKIP $name"; return; }
  [ "$cap" -gt "$l" ] && cap=$l; echo "== $name (cap ${cap}s)"; local t=$(date +%s)
  timeout "$cap" "$@" > "$OUT/$name.log" 2>&1; echo "== $name: exit $? in $(( $(date +%s) - t ))s"; tail -n ${TAIL:-40} "$OUT/$name.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv
TAIL=45 step lab02 300 python3 -m phase4_optimization.lab02_fusion
l=$(left); to=$(( l - 25 )); [ $to -gt 240 ] && to=240
TAIL=60 step sanitize $(( to + 20 )) python3 -m tools.sanitize --labs lab03_tensor_cores --labs lab06_attention --labs lab07_transformer --timeout $to --out results/h200/sanitize_s8
tar czf "$OUT/results.tgz" results/
echo "== done after $(( $(date +%s) - T0 ))s"
