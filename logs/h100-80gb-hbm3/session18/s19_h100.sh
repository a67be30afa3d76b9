#!/usr/bin/env bash
# Session 19's H100 calls for issue 33, on main once next/session19 is merged; run from the repository root as
# .whl/s19_h100.sh with ../session16/prof_train.py and prof_block.py beside it in .whl/; $OUT set; DEADLINE seconds in
# all (default 540). PART=1: the GPU tests of what changed (the backward's bounded waits; lab 4.3's backward epilogue
# and its source by TMA; lab 4.7's training step), then the CUDA C mutants never judged on the H100. PART=2: lab 4.7's
# training step and block forward timed (tuned), then ncu of the stages attempt 5 changes. PART=3: lab 4.3's fused
# epilogues (both builds) under compute-sanitizer's four tools.
set -u
O=${OUT:?}/s19; mkdir -p "$O"; T0=$(date +%s); HERE=$(dirname "$0")
left() { echo $(( ${DEADLINE:-540} - ($(date +%s) - T0) )); }
run() { local name=$1 lim=$2; shift 2; local l; l=$(left); [ "$l" -lt 20 ] && { echo "== SKIP $name" | tee -a "$O/runlog"; return; }
  [ "$lim" -gt "$l" ] && lim=$l; local t=$(date +%s)
  timeout "$lim" "$@" > "$O/$name.log" 2>&1; local rc=$?
  echo "== $name: exit $rc in $(( $(date +%s) - t ))s" | tee -a "$O/runlog"; tail -n "${TAILN:-8}" "$O/$name.log"
  ( cd "$OUT" && tar czf s19.tgz s19 ); }
export PYTHONPATH=.
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader | tee "$O/gpu.txt"
if [[ "${PART:-12}" == *1* ]]; then
run tests 240 python3 -m pytest -q -n 8 -p no:cacheprovider tests/test_phase4_lab03_tensor_cores_wgmma_gpu.py \
  tests/test_phase4_lab07_train_step.py tests/test_phase4_lab06_attention_hopper_bwd_gpu.py
run mutants 200 python3 -m tools.mutants --tier gpu --jobs 8 --only "backward 05" --only "backward 06" \
  --only "backward 07" --only "backward 08" --only "backward 10" --only "backward 11" --only "backward 12" \
  --only "z staged by TMA" --only "source barrier" --json "$O/mutants.json"
fi
if [[ "${PART:-12}" == *3* ]]; then     # lab 4.3's fused epilogues under the four sanitizer tools (sanitize_extras)
  TAILN=20 run sanitize 300 python3 -m tools.sanitize --labs lab03_tensor_cores --variants epilogue --out "$O/sanitize"
fi
[[ "${PART:-12}" == *2* ]] || { ( cd "$OUT" && tar czf s19.tgz s19 ); exit 0; }
TAILN=40 run train 200 python3 -m phase4_optimization.lab07_transformer_block.train_bench --out "$O/res"
TAILN=40 run block 150 python3 -m phase4_optimization.lab07_transformer_block --out "$O/res"
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section SchedulerStats"
for st in "proj dX:0:alt" "proj dX:1:alt"; do
  IFS=: read -r sn sc sa <<< "$st"; n=$(echo "$sn $sc $sa" | tr ' ' _)
  TAILN=3 run ncu_$n 45 ncu --clock-control none --nvtx --nvtx-include stage/ $S -f -o "$O/$n" python3 "$HERE/prof_train.py" "$sn" $sc $sa
  ncu --import "$O/$n.ncu-rep" --print-summary none > "$O/$n.txt" 2>&1; rm -f "$O/$n.ncu-rep"
done
for st in "out GEMM:0:alt" "out GEMM:1:alt" "proj GEMM:0:alt"; do
  IFS=: read -r sn sc sa <<< "$st"; n=fwd_$(echo "$sn $sc $sa" | tr ' ' _)
  TAILN=3 run ncu_$n 45 ncu --clock-control none --nvtx --nvtx-include stage/ $S -f -o "$O/$n" python3 "$HERE/prof_block.py" "$sn" $sc $sa
  ncu --import "$O/$n.ncu-rep" --print-summary none > "$O/$n.txt" 2>&1; rm -f "$O/$n.ncu-rep"
done
( cd "$OUT" && tar czf s19.tgz s19 ); echo "== done after $(( $(date +%s) - T0 ))s"
