#!/usr/bin/env bash
# Session 21's first call for whichever card comes: an H200 runs the whole suite on this tree (main) through
# suite.sh start (then `LIM=... bash .whl/suite.sh wait` in the next call); an H100 runs pp.sh (next/session21 from
# .whl/branch.patch: the ping-pong build's tests and lab 4.7's training step with it).
set -u
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1); echo "card: $name"
if [[ "$name" == *H200* ]]; then exec bash .whl/suite.sh start; fi
exec bash .whl/pp.sh
