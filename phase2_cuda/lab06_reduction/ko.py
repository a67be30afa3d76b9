"""Korean lines of what lab 2.6 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # --help
    "n of the ladder (default 2^28, quick 2^24; without a GPU: of the numerics table, 2^22 / 2^16)":
        "ladder의 n (기본값 2^28, quick 2^24. GPU가 없으면 수치 오차 표의 n으로 2^22 / 2^16)",
    "(GPU) sweep rung 09's and Triton's parameters vs torch.sum":
        "(GPU) rung 09와 Triton의 parameter를 torch.sum과 비교하며 sweep합니다",

    # the predictions, on every machine
    "predictions for {gpu} (its SMs, bandwidth and datasheet peaks)":
        "{gpu}에 대한 예측 (SM 수, 대역폭, datasheet 최대 성능 반영)",
    "floor at n = {n} (4 n B / {bw:.0f} GB/s)": "n = {n}에서 시간의 하한 (4 n B / {bw:.0f} GB/s)",
    "rungs 07-10: grid (SMs x blocks per SM)": "rung 07-10: grid (SM 수 x SM당 block)",
    "{grid:,} blocks of {threads} ({per_sm} per SM)": "{threads}-thread block {grid:,}개 (SM당 {per_sm}개)",
    "rungs 07-10: elements per thread": "rung 07-10: thread당 원소 수",
    "loads in flight per SM: {per_sm} blocks x {threads} threads x {unroll} x 16 B":
        "SM당 in flight load: block {per_sm}개 x thread {threads}개 x {unroll} x 16 B",
    "{kib:.0f} KiB (Little's law asks {need:.0f} KiB at {us:g} us)":
        "{kib:.0f} KiB ({us:g} us에서 Little's law가 요구하는 양은 {need:.0f} KiB)",
    "rungs 01-03 / 04-06: launches per sum (one per pass)": "rung 01-03 / 04-06: 합 하나당 launch 수 (pass마다 한 번)",
    "largest n whose 4 n bytes fit in L2": "4 n 바이트가 L2에 들어가는 최대 n",
    "fp32 ridge point (datasheet FLOP/s over bandwidth)": "fp32 ridge point (datasheet FLOP/s / 대역폭)",
    "{ridge:.1f} FLOP/B: 0.25 FLOP/B is {x:.0f}x below": "{ridge:.1f} FLOP/B: 0.25 FLOP/B는 그보다 {x:.0f}배 낮음",

    # numerics
    "numerics: sum of {n:,} uniform [0, 1) fp32 values vs float64 (on a GPU every CUDA rung and peer joins this "
    "table)":
        "수치 오차: 균등분포 [0, 1) fp32 값 {n:,}개의 합을 float64와 비교 (GPU에서는 모든 CUDA rung과 비교 대상이 "
        "이 표에 들어갑니다)",
    "numerics: sum of {n:,} uniform [0, 1) fp32 values vs float64":
        "수치 오차: 균등분포 [0, 1) fp32 값 {n:,}개의 합을 float64와 비교",
    "order": "더하는 순서",
    "sum": "합",
    "rel_err": "상대 오차",
    "bitwise same over 3 runs": "3번 실행에서 bit 단위로 같음",
    " (interpreter)": " (interpreter)",
    "NumPy fp32, one running sum": "NumPy fp32, 누적합 하나",
    "NumPy fp32 np.sum": "NumPy fp32 np.sum",
    "sequential (np.cumsum)": "순서대로 (np.cumsum)",
    "pairwise blocks of 128": "128개 block 단위 pairwise",
    "tree of 256 per block, tree of partials": "block마다 256개 tree, 부분합도 tree",
    "tree of 512 per block (shuffles), tree of partials": "block마다 512개 tree (shuffle), 부분합도 tree",
    "a running sum per thread (~1000 values at 2^28), then trees":
        "thread마다 누적합 하나 (2^28에서 값 약 1000개), 그다음 tree",
    "running sums, trees, partials added in arrival order": "누적합, tree, 부분합은 도착 순서대로 더함",
    "running sums, trees, partials in a fixed tree": "누적합, tree, 부분합은 고정된 tree로",
    "compensated running sums and trees (TwoSum)": "보정한 누적합과 tree (TwoSum)",
    "4096 running sums per program, tl.sum tree": "program마다 누적합 4096개, tl.sum tree",
    "CUB device reduction": "CUB의 device reduction",
    "torch's reduce kernel (vectorized, tree)": "torch의 reduce 커널 (vectorized, tree)",

    # the compile report
    "; this compiler emits more copies of the loop body: read the SASS":
        ". 이 컴파일러는 loop 본문을 더 많이 복제합니다: SASS를 읽어 보십시오",
    "computes the run-time `tid % (2*stride)` as an integer division by reciprocal ({ops} and their helpers) in "
    "every round":
        "loop는 round마다 실행 중에 `tid % (2*stride)`를 역수를 쓰는 정수 나눗셈({ops} 등 보조 명령어 포함)으로 계산합니다",
    "has no division: the compiler for {arch} proves 2*stride a power of two and turns `tid % (2*stride)` into a bit "
    "mask":
        "loop에는 나눗셈이 없습니다: {arch}용 컴파일러가 2*stride가 2의 거듭제곱임을 증명하고 `tid % (2*stride)`를 bit "
        "mask로 바꿉니다",
    "-> reduce_01: {n1} SASS instructions; its loop {how}; reduce_03: {n3} instructions, no division.":
        "-> reduce_01: SASS 명령어 {n1}개. {how}. reduce_03: 명령어 {n3}개, 나눗셈 없음.",
    "-> reduce_09: {ldg} x LDG.E.128 (UNROLL = {unroll} float4 in flight{more}), {shfl} SHFL, {bar} barriers, "
    "{atom} ATOM (the ticket); reduce_08 finishes with {red} RED (an atomic add that returns nothing, done in L2).":
        "-> reduce_09: LDG.E.128 {ldg}개 (UNROLL = in flight float4 {unroll}개{more}), SHFL {shfl}개, barrier {bar}개, "
        "ATOM {atom}개 (ticket). reduce_08은 RED {red}개로 끝납니다(아무것도 돌려주지 않는 atomic add, L2에서 "
        "처리).",
    "\nCUDA C variants were compiled, not run (no GPU); the Triton kernels ran in the interpreter.":
        "\nGPU가 없어 CUDA C variant는 컴파일만 하고 실행하지 않았습니다. Triton 커널은 interpreter에서 실행했습니다.",

    # the variants' notes, the plan
    "not deterministic": "결과가 결정적이지 않음",
    "compensated": "보정 합",
    "sum of {n} float32": "float32 {n}개의 합",
    "{case}, pass {i} of {n}": "{case}, pass {i}/{n}",
    "{case}, pass 1: one partial per block": "{case}, pass 1: block마다 부분합 하나",
    "{case}, pass 2: one block over {g} partials": "{case}, pass 2: block 하나가 부분합 {g}개를 더함",

    # the benchmark (GPU)
    "ladder n={n}": "ladder n={n}",
    "sizes": "크기",
    "size sweep (L2 flushed before each call)": "크기 sweep (호출마다 먼저 L2 flush)",
    "vs_torch_sum": "torch.sum 대비",
    "the ladder at n = {n:,} ({gib:.2f} GiB read), measured ceiling {hbm:.0f} GB/s":
        "n = {n:,}에서의 ladder ({gib:.2f} GiB 읽음), 측정한 한계 {hbm:.0f} GB/s",
    "targets (interleaved rounds, same run)": "목표 (번갈아 잰 round, 같은 실행)",
    "vs torch.sum": "torch.sum 대비",
    "rung 09 / Triton parameters at n = {n} (interleaved rounds vs torch.sum)":
        "n = {n}에서 rung 09 / Triton parameter (torch.sum과 번갈아 잰 round)",

    # the plots
    "GB/s (4 n bytes read)": "GB/s (4 n 바이트 읽기)",
    "Sum of {n:,} fp32 on {gpu}: the ladder": "{gpu}에서 fp32 {n:,}개의 합: ladder",
    "CUDA C (ours: the ladder's rungs)": "CUDA C (우리 커널: ladder의 rung)",
    "Triton (ours)": "Triton (우리 커널)",
    "library peer (cupy, torch)": "라이브러리 peer (cupy, torch)",
    "measured HBM ceiling {gbps:.0f} GB/s": "측정한 HBM 한계 {gbps:.0f} GB/s",
    "n (fp32 elements; 4 n bytes read)": "n (fp32 원소 수, 4 n 바이트 읽기)",
    "Sum: bandwidth vs size on {gpu} (L2 flushed)": "합: {gpu}의 크기별 대역폭 (L2 flush)",

    # --set values the kernels cannot take
    "reduce_07..10: UNROLL in 1, 2, 4, 8, 16, LOAD_HINT 0, 1 or 2, BLOCKS_PER_SM in 1..32; got {got}":
        "reduce_07..10: UNROLL은 1, 2, 4, 8, 16 중 하나, LOAD_HINT는 0, 1, 2 중 하나, BLOCKS_PER_SM은 1..32 범위여야 합니다. 받은 값: "
        "{got}",
    "triton reduce_chunk_kernel: BLOCK a power of two in 64..16384, ITERS in 1..256, num_warps a power of two up to "
    "32; got {got}":
        "triton reduce_chunk_kernel: BLOCK은 64..16384 범위의 2의 거듭제곱, ITERS는 1..256 범위, num_warps는 32 이하의 2의 거듭제곱이어야 "
        "합니다. 받은 값: {got}",
}
