#!/usr/bin/env bash
# One call on a GPU machine: environment facts, the whole test suite (CPU and GPU tiers), then the benchmarks of the
# labs named in $LABS (module paths), everything logged and packed under $OUT (or ./gpu-out).
#   LABS="phase1_architecture.lab02_vector_add" COURSE_COMMIT=abc123 bash tools/gpu_session.sh
set -uo pipefail
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHON=${PYTHON:-python3}
log=$OUT/session.log
{
  echo "== $(date -u +%FT%TZ) commit ${COURSE_COMMIT:-?}"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  $PYTHON -c "import sys, cupy, torch, triton, numpy; print(sys.version.split()[0], 'cupy', cupy.__version__, 'torch', torch.__version__, 'triton', triton.__version__, 'numpy', numpy.__version__)"
} 2>&1 | tee "$log"
status=0
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  echo "== pytest ${PYTEST_ARGS:-}" | tee -a "$log"
  $PYTHON -m pytest -q -x --junitxml="$OUT/junit.xml" ${PYTEST_ARGS:-} 2>&1 | tail -n 60 | tee -a "$log"
  status=${PIPESTATUS[0]}
fi
for lab in ${LABS:-}; do
  echo "== $lab ${LAB_ARGS:-}" | tee -a "$log"
  timeout "${LAB_TIMEOUT:-900}" $PYTHON -m "$lab" ${LAB_ARGS:-} 2>&1 | tee -a "$log" | tail -n 80
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
done
tar czf "$OUT/results.tgz" results/ $(ls tests/data/*.json 2>/dev/null) 2>/dev/null
echo "== exit $status" | tee -a "$log"
exit $status
