"""Korean lines of what lab 3.1 prints: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # the command line
    "write the full TTIR/TTGIR/LLIR/PTX of the vector-add and row-sum kernels to DIR":
        "vector add 커널과 행 합 커널의 전체 TTIR/TTGIR/LLIR/PTX를 DIR에 씁니다",

    # explain: the predictions
    "What the lesson predicts for {gpu} (from its description: bandwidth, SMs, the kernels' registers)":
        "{gpu}에 대한 레슨의 예측 (GPU 설명의 대역폭과 SM 수, 커널의 register 수로 계산)",
    "floor of row sums {rows} x {cols} fp32 ({mib:.0f} MiB / {bw:.0f} GB/s)":
        "행 합 {rows} x {cols} fp32의 하한 ({mib:.0f} MiB / {bw:.0f} GB/s)",
    "floor of the vector add at n = {n} (12 n B)": "n = {n}에서 vector add의 하한 (12 n B)",
    "fp32 ridge point (datasheet FLOP/s over bandwidth)": 'fp32 ridge point (datasheet FLOP/s / 대역폭)',
    "{ridge:.1f} FLOP/B: a row sum's 0.25 FLOP/B is {times:.0f}x below":
        "{ridge:.1f} FLOP/B: 행 합의 0.25 FLOP/B는 이보다 {times:.0f}배 낮습니다",
    "rowsum_01 at {rows} x {cols}: blocks of {threads} resident per SM ({regs} registers)":
        "{rows} x {cols}에서 rowsum_01: SM당 상주하는 {threads}-thread block 수 (register {regs}개)",
    "{per_sm} ({waves:.0f} waves over {sms} SMs; {kib:.0f} KiB of 4-byte loads in flight per SM)":
        "{per_sm} (SM {sms}개에 wave {waves:.0f}개, SM당 in flight인 4바이트 load {kib:.0f} KiB)",
    "Row sums: CUDA C and Triton, one reference": "행 합: CUDA C와 Triton, 같은 기준값",
    "Vector add (lab 1.2's kernels, imported): CUDA C and Triton, one reference":
        "Vector add (랩 1.2의 커널을 import): CUDA C와 Triton, 같은 기준값",

    # the concept map
    "CUDA C -> Triton: the same ideas, a different interface": "CUDA C -> Triton: 같은 개념, 다른 interface",
    "idea": "개념",
    "which block am I": "나는 어느 block인가",
    "the elements I touch": "내가 맡는 원소",
    "threadIdx.x + blockIdx.x * blockDim.x (one per thread)": "threadIdx.x + blockIdx.x * blockDim.x (thread마다 하나)",
    "pid * BLOCK + tl.arange(0, BLOCK) (a tile per program)": "pid * BLOCK + tl.arange(0, BLOCK) (program마다 tile 하나)",
    "bounds check": "경계 검사",
    "threads per block": 'block당 thread',
    "blockDim.x (launch argument)": "blockDim.x (launch 인자)",
    "num_warps * 32 (launch option)": "num_warps * 32 (launch 옵션)",
    "who holds which element": "어느 thread가 어느 원소를 맡는가",
    "you decide (i = threadIdx.x ...)": "직접 정합니다 (i = threadIdx.x ...)",
    "the compiler's layout (TTGIR #blocked)": "컴파일러가 정하는 layout (TTGIR #blocked)",
    "16-byte loads": "16바이트 load",
    "float4 casts + an alignment check in the wrapper": "float4 cast + wrapper의 alignment 검사",
    "automatic when pointers and sizes are known divisible by 16":
        "pointer와 크기가 16으로 나누어떨어진다고 알려지면 자동",
    "block reduction": "block 단위 reduction",
    "shared-memory tree / __shfl_xor_sync + __syncthreads":
        "shared memory tree 또는 __shfl_xor_sync + __syncthreads",
    "tl.sum(tile, axis) (shuffles + shared memory, generated)":
        "tl.sum(tile, axis) (shuffle과 shared memory를 컴파일러가 생성)",
    "__shared__ arrays, sized by you": "__shared__ 배열, 크기는 직접 정함",
    "allocated by the compiler (reductions, tl.dot staging)": "컴파일러가 할당 (reduction, tl.dot staging)",
    "cp.async + hand-written stages (phase 2/4)": "cp.async + 손으로 쓴 stage (phase 2/4)",
    "num_stages (for loads that feed tl.dot)": "num_stages (tl.dot에 공급하는 load에 적용)",
    "64-bit indexing": "64비트 indexing",

    # the compile reports
    "Triton vector add (lab 1.2's add_kernel, BLOCK={block}, num_warps={warps}) compiled ahead of time for {arch} "
    "with Triton {version}, stage by stage:":
        "Triton {version}으로 {arch}용 ahead-of-time 컴파일한 Triton vector add (랩 1.2의 add_kernel, BLOCK={block}, "
        "num_warps={warps}), 단계별:",
    "  sass (cuobjdump of the cubin):": "  sass (cubin을 cuobjdump로 읽은 것):",
    "  -> sizePerThread [{spt}]: each of the {threads} threads holds {spt} consecutive floats per layout repetition; "
    "{regs} registers, {shared} B shared memory.":
        "  -> sizePerThread [{spt}]: thread {threads}개가 각각 layout이 한 번 반복될 때마다 연속된 float {spt}개를 "
        "맡습니다. register {regs}개, shared memory {shared} B입니다.",
    "Alignment and divisibility decide the load width (same kernel, same BLOCK; only the promise about the arguments "
    "changes)":
        "alignment와 나누어떨어짐이 load 폭을 정합니다 (같은 커널, 같은 BLOCK에서 인자에 대한 약속만 바꿈)",
    "what the launch knows": "launch가 아는 것",
    "PTX global loads": "PTX의 global load",
    "nothing known (odd n, any pointer)": "아는 것 없음 (홀수 n, 임의의 pointer)",
    "pointers 16-byte aligned, n odd": "pointer 16바이트 정렬, n은 홀수",
    "pointers aligned and n % 16 == 0": "pointer 정렬, n % 16 == 0",
    "  The mask `offs < n` must be constant across a vector's 4 lanes; Triton can prove that only when n is\n"
    "  known divisible by 16. A GPU launch makes these promises itself, from the actual arguments: data_ptr()\n"
    "  % 16 and n % 16 (try n = 2^20 and 2^20 + 1 on a GPU, or a view starting one element in).":
        "  mask `offs < n`은 vector의 lane 4개에서 값이 같아야 합니다. Triton은 n이 16으로 나누어떨어진다고 알려져\n"
        "  있을 때만 이것을 증명할 수 있습니다. GPU launch는 실제 인자의 data_ptr() % 16과 n % 16을 보고 이 약속을\n"
        "  스스로 정합니다 (GPU에서 n = 2^20과 2^20 + 1, 또는 한 원소 뒤에서 시작하는 view로 해 보십시오).",
    "num_warps splits the 1024-element tile across threads: fewer elements per thread, narrower loads":
        "num_warps는 원소 1024개짜리 tile을 thread들에 나눕니다: thread당 원소가 줄고 load가 좁아집니다",
    "elements/thread": "thread당 원소",
    "rowsum_kernel (a loop of loads feeding a sum) at num_stages 1 and 3: what the pipeliner did":
        "num_stages 1과 3에서 rowsum_kernel (합으로 들어가는 load의 loop): pipeliner가 한 일",
    "shared bytes": "shared 바이트",
    "num_stages changed nothing here: these loads feed a reduction, not tl.dot, so no shared-memory ring was built; "
    "lab 3.2 shows num_stages at work (shared memory grows by one A+B tile per stage).":
        "여기서는 num_stages가 아무것도 바꾸지 않았습니다. 이 load는 tl.dot이 아니라 reduction으로 들어가서 shared "
        "memory ring을 만들지 않았습니다. num_stages가 일하는 모습은 랩 3.2에서 봅니다 (stage마다 shared memory가 "
        "A+B tile 하나만큼 늘어납니다).",
    "num_stages changed the generated code here (shared memory / cp.async above).":
        "여기서는 num_stages가 생성된 코드를 바꾸었습니다 (위의 shared memory / cp.async).",
    "  The tl.sum became {shfl} shuffles and {bar} barrier(s) in PTX: the tree of rowsum_02, generated.":
        "  tl.sum은 PTX에서 shuffle {shfl}개와 barrier {bar}개가 되었습니다. rowsum_02의 tree를 컴파일러가 만든 "
        "것입니다.",
    "  full IR written: {names} in {dir}": "  전체 IR 저장: {dir}에 {names}",
    "-> SASS: rowsum_01 has {bar1} BAR and {ldg1} loads; rowsum_02 has {bar2} BAR, {shfl} SHFL and {ldg2} loads "
    "(float4).":
        "-> SASS: rowsum_01에는 BAR {bar1}개와 {ldg1} load가 있고, rowsum_02에는 BAR {bar2}개, SHFL {shfl}개, "
        "{ldg2} load(float4)가 있습니다.",
    "What the GPU launches compiled (Triton specializes on the actual arguments: alignment and n % 16)":
        "GPU launch가 컴파일한 것 (Triton은 실제 인자의 alignment와 n % 16에 맞춰 커널을 특수화합니다)",
    "add_kernel, n = 2^20, aligned": "add_kernel, n = 2^20, 정렬됨",
    "add_kernel, n = 2^20 + 1 (odd n)": "add_kernel, n = 2^20 + 1 (홀수 n)",
    "add_kernel, views starting 1 element in": "add_kernel, 한 원소 뒤에서 시작하는 view",
    "SASS of the launched rowsum_kernel ({n} instructions; memory, shuffles and barriers):":
        "launch한 rowsum_kernel의 SASS (명령어 {n}개 중 메모리, shuffle, barrier):",
    "launch": "launch",
    "spills": "spill",
    "\nCUDA C kernels were compiled (NVRTC), not run: no GPU. The Triton kernels ran in the interpreter (correctness "
    "only; num_warps and num_stages are ignored there) and were compiled ahead of time for the --arch target to show "
    "registers, layouts and load widths.":
        "\nGPU가 없어 CUDA C 커널은 실행하지 않고 NVRTC로 컴파일만 했습니다. Triton 커널은 interpreter에서 실행했고"
        "(정확도만 봅니다. interpreter는 num_warps와 num_stages를 무시합니다), register, layout, load 폭을 보여 주려고 "
        "--arch target용으로 ahead-of-time 컴파일했습니다.",

    # the plan and the benchmark
    "row sums {rows} x {cols} float32": "행 합 {rows} x {cols} float32",
    "vector add (lab 1.2's {variant}), {case}": "vector add (랩 1.2의 {variant}), {case}",
    "row-sum shapes": "행 합 shape",
    "Lab 3.1: bandwidth (measured HBM ceiling {ceiling:.0f} GB/s)": "랩 3.1: 대역폭 (측정한 HBM 한계 {ceiling:.0f} GB/s)",
    "num_warps for rowsum_kernel at {shape} fp32 (BLOCK_N = {bn})":
        "{shape} fp32에서 rowsum_kernel의 num_warps (BLOCK_N = {bn})",
    "elements_per_thread": "thread당 원소",
    "frac_ceiling": "한계 대비",
    "vs_peer": '비교 대상 대비',
    "spread": "편차",

    # the plot
    "GB/s (bytes read + written once)": "GB/s (읽고 쓰는 바이트를 한 번씩 셈)",
    "Lab 3.1 on {gpu}: CUDA C and Triton side by side": "{gpu}에서 랩 3.1: CUDA C와 Triton 나란히",
    "HBM ceiling {gbps:.0f}": "HBM 한계 {gbps:.0f}",
}
