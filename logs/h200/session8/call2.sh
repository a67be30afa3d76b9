#!/usr/bin/env bash
# Session 8, second GPU call (H200): the lab 4.2 timing study, then the WHOLE test suite.
set -u
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
DEADLINE=${DEADLINE:-585}; T0=$(date +%s)
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
step() { local name=$1 cap=$2; shift 2; local l; l=$(left); [ "$l" -lt 30 ] && { echo "== SKIP $name"; return; }
  [ "$cap" -gt "$l" ] && cap=$l; echo "== $name (cap ${cap}s)"; local t=$(date +%s)
  timeout "$cap" "$@" > "$OUT/$name.log" 2>&1; echo "== $name: exit $? in $(( $(date +%s) - t ))s"; tail -n ${TAIL:-40} "$OUT/$name.log"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv
TAIL=40 step lab02_timing 80 env PYTHONPATH=. python3 logs/h200/session8/lab02_timing_study.py "$OUT/lab02_timing_study.json"
TAIL=25 step suite 500 python3 -m pytest -q -p no:cacheprovider -n 14 --dist loadfile -o addopts="" -rfE --tb=short tests/
echo "== done after $(( $(date +%s) - T0 ))s"
