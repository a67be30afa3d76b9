#!/usr/bin/env bash
# One first call for whichever card comes. A call that names nvidia-h200 may be served by an H100 (session 19's was;
# needs_h200 is for work that does not fit an H100's memory, not for choosing the card), so:
#   on an H200: suite.sh start (this tree: main's; the whole suite, then $AFTER) - `LIM=... bash .whl/suite.sh wait`
#               in the next call, as before;
#   on an H100: next/session19 (this tree + .whl/branch.patch, `git diff main...next/session19`) in a second copy,
#               callL.sh part 4 (its new GPU test, its mutants), then parts 2 and 3 with the time left.
# Copy this file, ../session16/{suite.sh,callL.sh,prof_train.py} and the patch into .whl/ first; OUT as the tool's.
set -u
T0=$(date +%s); name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "card: $name"
if [[ "$name" == *H200* ]]; then
  exec bash .whl/suite.sh start
fi
src=$(pwd); br=/tmp/br; rm -rf "$br"; mkdir -p "$br"; cp -a "$src/." "$br/"; cd "$br" || exit 3
patch -p1 -s < "$src/.whl/branch.patch" || { echo "patch failed"; exit 3; }
PART=4 DEADLINE=${D4:-240} bash .whl/callL.sh
left=$(( ${LIM:-560} - ($(date +%s) - T0) ))
[ "$left" -gt 60 ] && PART=23 DEADLINE=$left bash .whl/callL.sh
echo "== either.sh done after $(( $(date +%s) - T0 ))s"
