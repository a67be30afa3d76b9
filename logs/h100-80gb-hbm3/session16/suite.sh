#!/usr/bin/env bash
# Whole suite in ONE pytest run that outlives a 600 s call: `start` copies the tree to /tmp/run/repo and launches
# pytest (setsid) there, then waits; `wait` (next call, same warm machine) waits for it; both pack what exists to
# $OUT/s.tgz. $BEFORE (e.g. a timing that wants a cold card) runs first, $AFTER (e.g. the headline tool) after the
# suite, both in the same background session (before.log / after.log beside suite.log).
set -u
R=/tmp/run; LIM=${LIM:-560}; T0=$(date +%s)
pack() { mkdir -p "$OUT"; ( cd $R && tar czf "$OUT/s.tgz" --exclude=repo . ); }
if [ "$1" = start ]; then
  rm -rf $R; mkdir -p $R; cp -a . $R/repo; cd $R/repo
  { echo "commit ${COURSE_COMMIT:-?} $(date -u +%FT%TZ)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
    python3 -c "import sys,cupy,torch,triton,numpy;print(sys.version.split()[0],'cupy',cupy.__version__,'torch',torch.__version__,'triton',triton.__version__,'numpy',numpy.__version__)"; nproc; } > $R/gpu.txt 2>&1
  cat $R/gpu.txt
  setsid bash -c "cd $R/repo; ${BEFORE:-true} > $R/before.log 2>&1; echo \$? > $R/before.rc; s=\$(date +%s); python3 -m pytest tests/ -n 14 --dist loadfile -p no:cacheprovider \
     --junitxml=$R/junit.xml --durations=60 > $R/suite.log 2>&1; echo \$? > $R/suite.rc; \
     echo \"suite wall \$(( \$(date +%s) - s ))s\" >> $R/suite.log; \
     ${AFTER:-true} > $R/after.log 2>&1; echo \$? > $R/after.rc" > /dev/null 2>&1 < /dev/null &
  sleep 5
fi
while [ $(( $(date +%s) - T0 )) -lt $LIM ]; do
  [ -e $R/after.rc ] && break
  [ -n "${NOAFTER:-}" ] && [ -e $R/suite.rc ] && break
  sleep 5
done
pack
echo "== $(( $(date +%s) - T0 ))s; suite rc: $(cat $R/suite.rc 2>/dev/null || echo running); after rc: $(cat $R/after.rc 2>/dev/null || echo -)"
[ -e $R/before.log ] && tail -n 25 $R/before.log; tail -n 25 $R/suite.log 2>/dev/null
[ -e $R/after.log ] && tail -n 30 $R/after.log
