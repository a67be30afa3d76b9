#!/usr/bin/env bash
# Session 7's last GPU call (H200): the changed code's GPU tests, lab 4.7's benchmark, compute-sanitizer on lab 4.6's
# new kernels, then ncu profiles. Steps run in priority order within DEADLINE seconds; logs under $OUT.
set -u
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
DEADLINE=${DEADLINE:-420}; T0=$(date +%s)
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
step() { local name=$1 cap=$2; shift 2; local l; l=$(left); [ "$l" -lt 30 ] && { echo "== SKIP $name"; return; }
  [ "$cap" -gt "$l" ] && cap=$l; echo "== $name (cap ${cap}s)"; local t=$(date +%s)
  timeout "$cap" "$@" > "$OUT/$name.log" 2>&1; echo "== $name: exit $? in $(( $(date +%s) - t ))s"; tail -n 12 "$OUT/$name.log"; }
SAN="compute-sanitizer --print-limit 2000 --report-api-errors no"
HOP="python3 -m phase4_optimization.lab06_attention.hopper --check --quick --no-compile-report --kernel"
step pytest 75 python3 -m pytest -q -p no:cacheprovider -n 14 -o addopts="" -rfE tests/test_phase4_lab07_transformer_block.py \
  "tests/test_phase4_lab03_tensor_cores_wgmma.py::test_tune_records_the_winner_where_gemm_wgmma_reads_it" \
  tests/test_phase4_lab06_attention_hopper.py -k "prepared or strided or persistent or lab07 or tune_records or block or attention_choice or nan"
step lab07 90 python3 -m phase4_optimization.lab07_transformer_block
san() { local tool=$1; shift; for k in 07 06 05; do $SAN --tool "$tool" "$@" $HOP $k; done; }
l=$(left); cap=$(( l > 110 ? 110 : l ))
echo "== sanitizers (cap ${cap}s)"
for t in memcheck synccheck initcheck; do timeout "$cap" bash -c "$(declare -f san); SAN='$SAN'; HOP='$HOP'; san $t" > "$OUT/san_$t.log" 2>&1 & done
timeout "$cap" bash -c "$(declare -f san); SAN='$SAN'; HOP='$HOP'; san racecheck --racecheck-report analysis" > "$OUT/san_racecheck.log" 2>&1 &
timeout "$cap" $SAN --tool memcheck python3 -m phase4_optimization.lab06_attention --quick --no-bench --no-json --no-plot > "$OUT/san_lab06_memcheck.log" 2>&1 &
wait
for f in "$OUT"/san_*.log; do echo "-- $f"; grep -E "check:|ERROR SUMMARY|RACECHECK SUMMARY|HANG|FAIL|WRONG|Error" "$f" | tail -n 12; done
step prof_block_ours 60 python3 -m tools.profile --cases block_ours --out results/h200/profile_s7_block_ours
step prof_block_compile 70 python3 -m tools.profile --cases block_compile --out results/h200/profile_s7_block_compile
step prof_kernels 90 python3 -m tools.profile --cases ln_welford,ln_compile,attn_hopper06,attn_hopper07,attn_cudnn --out results/h200/profile_s7
tar czf "$OUT/results.tgz" results/
echo "== done after $(( $(date +%s) - T0 ))s"
