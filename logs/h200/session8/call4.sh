#!/usr/bin/env bash
# Session 8, fourth GPU call: initcheck on gemm_wgmma with and without the TMA-store epilogue (see initcheck_tma_store.py).
export PYTHONPATH=. PYTHONUNBUFFERED=1
for mode in tma reg; do
  echo "== $mode"
  timeout 120 compute-sanitizer --tool initcheck --print-limit 3 python3 logs/h200/session8/initcheck_tma_store.py $mode 2>&1 \
    | grep -E "tma_store=|ERROR SUMMARY|Uninitialized|  at " | head -12
done
