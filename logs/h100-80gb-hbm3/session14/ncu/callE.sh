#!/usr/bin/env bash
# H200: racecheck of the backward (the empty-barrier fix), then the whole suite; one tarball $OUT/s.tgz
cd "$(dirname "$0")"
export COURSE_COMMIT=${COURSE_COMMIT:?}
OUT=$OUT/s TESTS=1 WORKERS=14 PYTEST_ARGS="$(bash order.sh) --durations=80" DEADLINE=${DEADLINE:-570} \
  PRE="python3 -m tools.sanitize --tools racecheck --labs attention --variants 'hopper bwd' --timeout 60 --out \$OUT/san" \
  bash tools/gpu_session.sh > "$OUT/callE.out" 2>&1
cd "$OUT" && tar czf s.tgz s callE.out; tail -60 callE.out
