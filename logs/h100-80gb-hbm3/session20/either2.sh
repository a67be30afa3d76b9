#!/usr/bin/env bash
# Session 20's first suite call, for whichever card comes (a call naming nvidia-h200 may be served by an H100):
#   an H200: the whole suite on this tree (main, code = 56a9809's: the commit of the H100's suites of sessions 18
#            and 19), which issues 30 and 31 wait for;
#   an H100: the whole suite on this tree + .whl/branch.patch (`git diff main...next/session19`: main merged with
#            next/session19, whose GPU tests and mutants passed in this session's first call).
# Then `LIM=... bash .whl/suite.sh wait` in the next call, as before. OUT as the tool's; AFTER/COURSE_COMMIT as suite.sh.
set -u
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "card: $name"
if [[ "$name" == *H200* ]]; then
  exec bash .whl/suite.sh start
fi
br=/tmp/br; rm -rf "$br"; mkdir -p "$br"; cp -a . "$br/"; cd "$br" || exit 3
patch -p1 -s < .whl/branch.patch || { echo "patch failed"; exit 3; }
COURSE_COMMIT="${COURSE_COMMIT:-?} + next/session19 (${BRANCH_HEAD:-?})" exec bash .whl/suite.sh start
