#!/usr/bin/env bash
# Branch attempt/wgmma-dgelu on the GPU without checking it out: main's tree (this copy) + .whl/branch.patch
# (git diff main..branch) in a second copy at $1/br; its new GPU tests, then its two CUDA C mutants.
set -u
out=${1:-/tmp/run}; src=$(pwd)
rm -rf "$out/br"; mkdir -p "$out/br"; cp -a "$src/." "$out/br/"; cd "$out/br"
patch -p1 -s < "$src/.whl/branch.patch" || { echo "patch failed"; exit 3; }
echo "== branch tests"; s=$(date +%s)
python3 -m pytest -n 8 -p no:cacheprovider tests/test_phase4_lab03_tensor_cores_wgmma_gpu.py \
  tests/test_phase4_lab07_train_step.py -k "backward_epilogue or wgmma" -q 2>&1 | tail -n 40
echo "branch tests rc ${PIPESTATUS[0]} $(( $(date +%s) - s ))s"
echo "== branch mutants"; s=$(date +%s)
python3 -m tools.mutants --tier gpu --jobs 4 --only "backward's column sums" --only "wgmma: GELU's derivative" \
  --json "$out/branch_mutants.json" 2>&1 | tail -n 20
echo "branch mutants rc ${PIPESTATUS[0]} $(( $(date +%s) - s ))s"
