# ncu of the backward: ours (rung 07) and SDPA cuDNN, non-causal and causal, B4 H32 S4096 D128 bf16
O=$OUT/p; mkdir -p $O
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
for m in noncausal causal; do
  for who in "ours 07" cudnn; do
    n=$(echo $who | tr ' ' _)_$m
    F="--nvtx --nvtx-include bwd/"; [ "$who" = cudnn ] && F="--launch-count 12"
    timeout 100 ncu --clock-control none $F $S -f -o $O/$n python3 ../prof.py $who $m > $O/$n.log 2>&1 || true
    [ -f $O/$n.ncu-rep ] && ncu --import $O/$n.ncu-rep --print-summary none > $O/$n.txt 2>&1
    echo "== $n $(grep -c 'Duration' $O/$n.txt 2>/dev/null)"
  done
done
cd $OUT && tar czf p.tgz p
