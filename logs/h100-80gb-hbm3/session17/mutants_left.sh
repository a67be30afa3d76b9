#!/usr/bin/env bash
# The CUDA C mutants session 17's H100 calls did not judge (the time limit), and the TMA-store one that survived,
# judged again now that a test holds warps 1-3 back (STORE_RACE). Run from the repository root; writes to $1 (a folder).
set -u
out=${1:-/tmp/run}; mkdir -p "$out"
python3 -m tools.mutants --tier gpu --jobs 8 --only "TMA store issued" --only "backward 05" --only "backward 06" \
  --only "backward 07" --only "backward 08" --only "backward 10" --only "backward 11" --only "backward 12" \
  --json "$out/mutants_left.json"
