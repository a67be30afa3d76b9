#!/usr/bin/env bash
# Session 14, H100 call: rung 09 checked + the bench (07, 09 and peers), ncu of rung 09 against cuDNN, ncu of lab 4.7's
# proj dX stage (GEMM + GELU' + bias sums) against the FC dX stage (same FLOPs, no epilogue), the GPU mutants of the
# Hopper backward, racecheck of the backward's rungs. One tarball: $OUT/d.tgz.
set -u
O=${OUT:?}/d; mkdir -p "$O"; T0=$(date +%s)
left() { echo $(( ${DEADLINE:-560} - ($(date +%s) - T0) )); }
run() {
  local name=$1 lim=$2; shift 2
  local l; l=$(left); [ "$l" -lt 20 ] && { echo "== SKIP $name"; return; }
  [ "$lim" -gt "$l" ] && lim=$l
  local t=$(date +%s)
  timeout "$lim" "$@" > "$O/$name.log" 2>&1; local rc=$?
  echo "== $name: exit $rc in $(( $(date +%s) - t ))s" | tee -a "$O/runlog"; tail -n "${TAILN:-12}" "$O/$name.log"
  ( cd "$OUT" && tar czf d.tgz d )
}
M=phase4_optimization.lab06_attention
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
TAILN=30 run check_09 90 python3 -m $M.hopper_bwd_check --rung 09
TAILN=12 run fwd_check 90 python3 -m $M.hopper --check --quick --kernel all --stages all --no-compile-report
TAILN=45 run bench 150 python3 -m $M.hopper_bwd_bench --json "$O/bwd.json"
for m in noncausal causal; do
  TAILN=3 run ncu_09_$m 80 ncu --clock-control none --nvtx --nvtx-include bwd/ $S -f -o "$O/ours_09_$m" python3 prof.py ours 09 $m
  ncu --import "$O/ours_09_$m.ncu-rep" --print-summary none > "$O/ours_09_$m.txt" 2>&1
done
TAILN=20 run mutants 200 python3 -m tools.mutants --tier gpu --only "Hopper backward" --json "$O/mutants_bwd.json"
TAILN=30 run racecheck 240 python3 -m tools.sanitize --tools racecheck --labs attention --variants "hopper bwd" --timeout 230 --out "$O/san"
for st in "proj dX" "FC dX"; do
  n=$(echo "$st" | tr ' ' _)
  TAILN=3 run ncu_$n 90 ncu --clock-control none --nvtx --nvtx-include stage/ $S -f -o "$O/$n" python3 prof_train.py "$st"
  ncu --import "$O/$n.ncu-rep" --print-summary none > "$O/$n.txt" 2>&1
done
echo "== done after $(( $(date +%s) - T0 ))s"
