#!/usr/bin/env bash
# Issue 33's measurements on one GPU (either), in parts: PART=1 lab 4.6's full run (its Hopper MHA and GQA forward
# targets, the backward rows) into res/; PART=2 lab 4.7's training step (both cases tuned) into res/, then ncu of the
# training step's stages (proj dX at its default tile and at the small spill-free one; FC dX, Triton and wgmma; or
# NCU_STAGES, "stage:case:mode" items separated by ';', e.g. session 17's "proj dX:1:;proj dX:1:alt"; a forward stage
# such as "out GEMM:1:alt" too); with 3 as well (PART=23) lab 4.7's block forward between the two. Session 18 added,
# run first: PART 4, the GPU tests of next/session19's changes and its CUDA C mutants never judged on the H100;
# PART 5, lab 4.3's fused epilogues under compute-sanitizer. Parts run in the order 4, 5, 1, 2. Session 19: PART 4
# takes P4_TESTS and P4_MUTANTS. Session 20: P4_MUTANTS=none runs no mutant. Session 21: PART 6, P6_TESTS (pytest's
# arguments; default lab 4.3's ping-pong GPU tests) run first, alone, so that a hang there cannot eat the call;
# PART 3 without 2 runs the block forward alone; prof_train.py's "cand" mode profiles a stage's further candidate.
set -u
HERE=$(dirname "$0"); O=${OUT:?}/l; mkdir -p "$O"; T0=$(date +%s)   # run from the repository root
left() { echo $(( ${DEADLINE:-540} - ($(date +%s) - T0) )); }
run() { local name=$1 lim=$2; shift 2; local l; l=$(left); [ "$l" -lt 20 ] && { echo "== SKIP $name" | tee -a "$O/runlog"; return; }
  [ "$lim" -gt "$l" ] && lim=$l; local t=$(date +%s)
  timeout "$lim" "$@" > "$O/$name.log" 2>&1; local rc=$?
  echo "== $name: exit $rc in $(( $(date +%s) - t ))s" | tee -a "$O/runlog"; tail -n "${TAILN:-12}" "$O/$name.log"
  ( cd "$OUT" && tar czf l.tgz l ); }
{ echo "commit ${COURSE_COMMIT:-?} part $PART"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } | tee -a "$O/gpu.txt"
export PYTHONPATH=.
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
if [[ "$PART" == *6* ]]; then
  read -ra T6 <<< "${P6_TESTS:-tests/test_phase4_lab03_tensor_cores_pingpong_gpu.py}"
  run pp_tests 150 python3 -m pytest -q -n 8 -p no:cacheprovider "${T6[@]}"
fi
if [[ "$PART" == *4* ]]; then   # the GPU tests of a branch's changes, then its CUDA C mutants (P4_TESTS: pytest's
  # arguments; P4_MUTANTS: the mutants' names, ';' between them; session 19's defaults: Hopper backward 05 and 13, with
  # next/session19's LOAD_RACE test)
  read -ra TA <<< "${P4_TESTS:-tests/test_phase4_lab06_attention_hopper_bwd_gpu.py -k late_copies}"
  run tests 240 python3 -m pytest -q -n 8 -p no:cacheprovider "${TA[@]}"
  MA=(); IFS=';' read -ra ML <<< "${P4_MUTANTS:-backward 05;backward 13}"; for m in "${ML[@]}"; do MA+=(--only "$m"); done
  [ "${P4_MUTANTS:-}" != none ] && run mutants 200 python3 -m tools.mutants --tier gpu --jobs 8 "${MA[@]}" --json "$O/mutants.json"
fi
if [[ "$PART" == *5* ]]; then   # lab 4.3's fused epilogues (both builds) under the four sanitizer tools
  TAILN=20 run sanitize 300 python3 -m tools.sanitize --labs lab03_tensor_cores --variants epilogue --out "$O/sanitize"
fi
if [[ "$PART" == *1* ]]; then
  TAILN=40 run lab46 400 python3 -m phase4_optimization.lab06_attention --out "$O/res"
fi
if [[ "$PART" == *2* ]]; then
  TAILN=60 run train 300 python3 -m phase4_optimization.lab07_transformer_block.train_bench --out "$O/res"
  [[ "$PART" == *3* ]] && TAILN=40 run block 150 python3 -m phase4_optimization.lab07_transformer_block --out "$O/res"
  IFS=';' read -ra STL <<< "${NCU_STAGES:-proj dX:1:;proj dX:1:small;FC dX:1:;FC dX:1:alt}"
  for st in "${STL[@]}"; do
    IFS=: read -r sn sc sa <<< "$st"; n=$(echo "$sn $sc $sa" | tr ' ' _)
    TAILN=3 run ncu_$n 45 ncu --clock-control none --nvtx --nvtx-include stage/ $S -f -o "$O/$n" python3 "$HERE/prof_train.py" "$sn" $sc $sa
    ncu --import "$O/$n.ncu-rep" --print-summary none > "$O/$n.txt" 2>&1; rm -f "$O/$n.ncu-rep"
  done
fi
if [[ "$PART" == *3* && "$PART" != *2* ]]; then
  TAILN=40 run block 150 python3 -m phase4_optimization.lab07_transformer_block --out "$O/res"
fi
( cd "$OUT" && tar czf l.tgz l ); echo "== done after $(( $(date +%s) - T0 ))s"
