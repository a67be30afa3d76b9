#!/usr/bin/env bash
# Session 21, one H100 call: next/session21 (this tree + .whl/branch.patch, `git diff main...next/session21`) in a copy,
# through session 16's callL.sh: part 6 (lab 4.3's ping-pong GPU tests, alone), part 2 (lab 4.7's training step, the
# ping-pong proj dX timed as a third candidate, then ncu of NCU_STAGES), part 4 (the branch's other GPU tests, no
# mutants), part 3 (the block forward) with the time left. OUT as the tool's; LIM the call's seconds.
set -u
T0=$(date +%s); left() { echo $(( ${LIM:-560} - ($(date +%s) - T0) )); }
src=$(pwd); br=/tmp/br; rm -rf "$br"; mkdir -p "$br"; cp -a "$src/." "$br/"; cd "$br" || exit 3
patch -p1 -s < "$src/.whl/branch.patch" || { echo "patch failed"; exit 3; }
PART=6 DEADLINE=150 bash .whl/callL.sh
PART=2 DEADLINE=$(( $(left) - 210 )) NCU_STAGES="${NCU_STAGES:-proj dX:0:cand;proj dX:1:cand}" TAILN=40 bash .whl/callL.sh
T4="tests/test_phase4_lab03_tensor_cores_wgmma_gpu.py tests/test_phase4_lab07_train_step.py"
T4="$T4 tests/test_phase4_lab07_transformer_block.py tests/test_phase4_lab06_attention_hopper_gpu.py"
T4="$T4 tests/test_phase4_lab06_attention_hopper_bwd_gpu.py"
PART=4 DEADLINE=$(( $(left) - 100 )) P4_MUTANTS=none P4_TESTS="$T4" bash .whl/callL.sh
PART=3 DEADLINE=$(left) bash .whl/callL.sh
echo "== pp.sh done after $(( $(date +%s) - T0 ))s"
