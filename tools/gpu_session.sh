#!/usr/bin/env bash
# One call on a GPU machine: environment facts, optionally the test suite, then the labs named in $LABS, each as
# `python -m <lab> $LAB_ARGS`, all within a deadline; results and logs packed under $OUT (default ./gpu-out).
#
#   COURSE_COMMIT=abc123 TESTS=1 LABS="phase1_architecture.lab02_vector_add phase2_cuda.lab08_sgemm:--tune" \
#       DEADLINE=540 bash tools/gpu_session.sh
#
# A lab may carry its own arguments after a colon (commas for spaces): "phase2_cuda.lab08_sgemm:--tune", and a time
# limit of its own after an @ (seconds; default: what is left of the deadline), so that one step that hangs - a new
# kernel waiting on a barrier forever, say - costs its limit and not the call: "phase4_optimization.lab06_attention.
# hopper_bwd_check:--rung,06@60".
# PRE is an optional command run first (e.g. recording a fixture). Each step gets what is left of DEADLINE seconds;
# a step that cannot start with 30 s left is skipped and named in $OUT/skipped.txt, so the next call can resume.
# ALSO: commands separated by ';' run in the background alongside the steps (each logs to $OUT/also_N.log and is
# stopped at the deadline): e.g. the phases' --quick runs beside the test suite, where only their exit status matters.
set -uo pipefail
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
DEADLINE=${DEADLINE:-540}
T0=$(date +%s)
log=$OUT/session.log
: > "$OUT/skipped.txt"
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
pack() { tar czf "$OUT/results.tgz" results/ $(ls tests/data/*.json 2>/dev/null) 2>/dev/null; }
step() {  # step NAME CMD...   (STEP_LIMIT: at most this many seconds)
  local name=$1; shift
  local l; l=$(left)
  if [ "$l" -lt 30 ]; then echo "$name" >> "$OUT/skipped.txt"; echo "== SKIP $name (deadline)" | tee -a "$log"; return; fi
  echo "== $name (${l}s left)" | tee -a "$log"
  [ -n "${STEP_LIMIT:-}" ] && [ "$STEP_LIMIT" -lt "$l" ] && l=$STEP_LIMIT
  local t=$(date +%s)
  timeout "$l" "$@" > "$OUT/step.log" 2>&1
  local rc=$?
  cat "$OUT/step.log" >> "$log"
  tail -n "${TAIL:-25}" "$OUT/step.log"
  echo "== $name: exit $rc in $(( $(date +%s) - t ))s" | tee -a "$log"
  [ $rc = 0 ] || status=1
  pack
}
status=0
{
  echo "== $(date -u +%FT%TZ) commit ${COURSE_COMMIT:-?}"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  $PY -c "import sys, cupy, torch, triton, numpy; print(sys.version.split()[0], 'cupy', cupy.__version__, 'torch', torch.__version__, 'triton', triton.__version__, 'numpy', numpy.__version__)"
} 2>&1 | tee "$log"
[ -n "${PRE:-}" ] && step "pre" bash -c "$PRE"
also_pids=()
if [ -n "${ALSO:-}" ]; then
  IFS=';' read -ra also_cmds <<< "$ALSO"
  for i in "${!also_cmds[@]}"; do
    ( t=$(date +%s); timeout "$(left)" bash -c "${also_cmds[$i]}" > "$OUT/also_$i.log" 2>&1; rc=$?
      echo "== also_$i (${also_cmds[$i]}): exit $rc in $(( $(date +%s) - t ))s" >> "$OUT/also_$i.log" ) &
    also_pids+=($!)
  done
fi
if [ "${TESTS:-0}" = 1 ]; then
  eval "pyargs=(${PYTEST_ARGS:-})"     # shell words, so -k "a or b" survives
  # -v: every result line names its test, so a run cut off at the deadline (no summary, no junit file) still says
  # which tests failed; those lines are repeated at the end of the log
  TAIL=40 step "pytest" $PY -m pytest -v -p no:cacheprovider -n "${WORKERS:-8}" --dist loadfile \
    --junitxml="$OUT/junit.xml" -o addopts="" -rfE "${pyargs[@]}"
  grep -E "(FAILED|ERROR) tests/" "$log" | sed 's/^/   /' | sort -u | head -n 60 | tee -a "$log.failed"
  [ -s "$log.failed" ] && { echo "== failed tests:"; cat "$log.failed"; } >> "$log"; rm -f "$log.failed"
fi
for item in ${LABS:-}; do
  limit=""
  case "$item" in *@*) limit=${item##*@}; item=${item%@*};; esac
  lab=${item%%:*}; args=""
  [ "$item" != "$lab" ] && args=$(echo "${item#*:}" | tr ',' ' ')
  STEP_LIMIT=$limit step "$lab $args" $PY -m "$lab" $args
done
for pid in "${also_pids[@]}"; do wait "$pid"; done
for f in "$OUT"/also_*.log; do [ -e "$f" ] && tail -n 3 "$f" | tee -a "$log"; done
grep -q "exit [1-9]" "$OUT"/also_*.log 2>/dev/null && status=1
echo "== exit $status after $(( $(date +%s) - T0 ))s; skipped: $(tr '\n' ' ' < "$OUT/skipped.txt")" | tee -a "$log"
rm -f "$OUT/step.log"
pack
exit $status
