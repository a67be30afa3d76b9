#!/usr/bin/env bash
# Session 15, the one call (either GPU): the new kernels checked (bwd rungs 10-12, fwd rung 08, wgmma on W^T, the
# training step with the wgmma input gradients), the bwd bench of every rung, lab 4.7's training step (tuned, both
# cases), ncu of the training step's proj dX / FC dX (Triton and wgmma), then (time left) ncu fwd 08, racecheck.
set -u
cd "$(dirname "$0")"; O=${OUT:?}/k; mkdir -p "$O"; T0=$(date +%s)
left() { echo $(( ${DEADLINE:-540} - ($(date +%s) - T0) )); }
run() { local name=$1 lim=$2; shift 2; local l; l=$(left); [ "$l" -lt 20 ] && { echo "== SKIP $name"; return; }
  [ "$lim" -gt "$l" ] && lim=$l; local t=$(date +%s)
  timeout "$lim" "$@" > "$O/$name.log" 2>&1; local rc=$?
  echo "== $name: exit $rc in $(( $(date +%s) - t ))s" | tee -a "$O/runlog"; tail -n "${TAILN:-12}" "$O/$name.log"
  ( cd "$OUT" && tar czf k.tgz k ); }
echo "commit ${COURSE_COMMIT:-?}" > "$O/gpu.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee -a "$O/gpu.txt"
M=phase4_optimization.lab06_attention
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
TAILN=6 run check_10 50 python3 -m $M.hopper_bwd_check --rung 10
TAILN=6 run check_11 50 python3 -m $M.hopper_bwd_check --rung 11
TAILN=6 run check_12 50 python3 -m $M.hopper_bwd_check --rung 12
TAILN=8 run fwd_check_08 50 python3 -m $M.hopper --check --quick --kernel 08 --stages all --no-compile-report
TAILN=45 run bench 130 python3 -m $M.hopper_bwd_bench --json "$O/bwd.json"
TAILN=12 run pytest_new 80 python3 -m pytest -q -p no:cacheprovider -n 8 -o addopts="" -rfE \
  tests/test_phase4_lab03_tensor_cores_wgmma_gpu.py::test_gpu_b_kmajor_on_a_transposed_weight \
  tests/test_phase4_lab07_train_step.py::test_train_step_with_the_wgmma_input_gradients_on_gpu \
  "tests/test_phase4_lab07_train_step.py::test_train_step_with_the_hopper_attention_backward_on_gpu[10]" \
  "tests/test_phase4_lab07_train_step.py::test_train_step_with_the_hopper_attention_backward_on_gpu[11]" \
  "tests/test_phase4_lab07_train_step.py::test_train_step_with_the_hopper_attention_backward_on_gpu[12]"
TAILN=60 run train 200 python3 -m phase4_optimization.lab07_transformer_block.train_bench --out "$O/res"
for st in "proj dX:1:" "FC dX:1:" "FC dX:1:alt"; do
  IFS=: read -r sn sc sa <<< "$st"; n=$(echo "$sn $sa" | tr ' ' _)
  TAILN=3 run ncu_$n 40 ncu --clock-control none --nvtx --nvtx-include stage/ $S -f -o "$O/$n" python3 prof_train.py "$sn" $sc $sa
  ncu --import "$O/$n.ncu-rep" --print-summary none > "$O/$n.txt" 2>&1; rm -f "$O/$n.ncu-rep"
done
for x in "ours 08 noncausal" "ours 08 causal"; do
  n=fwd_$(echo "$x" | tr ' ' _)
  TAILN=3 run ncu_$n 40 ncu --clock-control none --nvtx --nvtx-include fwd/ $S -f -o "$O/$n" python3 prof_fwd.py $x
  ncu --import "$O/$n.ncu-rep" --print-summary none > "$O/$n.txt" 2>&1; rm -f "$O/$n.ncu-rep"
done
TAILN=20 run racecheck 60 python3 -m tools.sanitize --tools racecheck --labs attention --variants "hopper bwd 1" --timeout 50 --out "$O/san"
echo "== done after $(( $(date +%s) - T0 ))s"
