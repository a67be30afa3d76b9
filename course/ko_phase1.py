"""The Korean lines of phase 1's exercise checkers (course/exercises/ex_1_*): {english: korean}, with the same
{placeholders}. Read by common/i18n.py with course/ko.py and the other course/ko_phase*.py."""

KO = {
    # ---- 1.2.1 -------------------------------------------------------------------------------------------------------
    "right for n = {sizes}: every element written once, none past the end (a mask on the loads and the store, and a "
    "grid of ceil(n / BLOCK) programs)":
        "n = {sizes}에서 맞습니다. 모든 원소를 한 번씩 쓰고 끝을 넘어서는 쓰지 않습니다(load와 store에 mask를 걸고, "
        "grid는 program ceil(n / BLOCK)개입니다)",
    "n = {why}. How many programs does grid(n) launch, and what does the last one do with its lanes past n?":
        "n = {why}. grid(n)은 program을 몇 개 띄웁니까? 마지막 program은 n을 넘는 lane으로 무엇을 합니까?",

    # ---- 1.5.1 -------------------------------------------------------------------------------------------------------
    "all four right: you counted threads, blocks, registers (per warp, in units of 256) and shared memory (with the "
    "runtime's 1 KiB per block) the way the hardware does":
        "네 개 모두 맞습니다. thread, block, register(warp 단위, 256개씩), shared memory(block마다 runtime이 쓰는 "
        "1 KiB 포함)를 하드웨어와 같은 방식으로 셌습니다",
    "keep the four kernels of the starting point": "시작 파일의 커널 네 개를 그대로 둡니다",
    "{n} of 4 not yet right: {reasons}": "4개 중 {n}개가 아직 맞지 않습니다:{reasons}",

    # ---- 1.5.2 -------------------------------------------------------------------------------------------------------
    "all right: bytes in flight per SM = resident threads (from registers and the occupancy rules) x the bytes each "
    "thread has outstanding, against bandwidth x latency / SMs. One float per thread leaves HBM waiting even at full "
    "occupancy; 16-byte loads, or several of them per thread, cover it with room to spare - even at the 75% occupancy "
    "mem_02's registers allow":
        "모두 맞습니다. SM당 in-flight 바이트는 상주 thread 수(register와 occupancy 규칙으로 정해짐) x thread마다 "
        "기다리는 load 바이트이고, 이것을 대역폭 x latency / SM 수와 비교합니다. thread마다 float 하나면 occupancy가 "
        "가득 차도 HBM이 기다립니다. 16바이트 load나 thread마다 그런 load 여러 개면 넉넉히 가립니다. mem_02의 "
        "register가 허락하는 75% occupancy에서도 그렇습니다",
    "{name}: no answer yet": "{name}: 아직 답이 없습니다",
    "could not compile the labs' kernels here ({error}: {detail}); the labs' compile reports need the same NVRTC":
        "여기서는 랩의 커널을 컴파일할 수 없습니다({error}: {detail}). 랩의 compile report에도 같은 NVRTC가 필요합니다",
    "{name}: {said} bytes is {off}: NVRTC gives it {regs} registers a thread - how many {size}-thread blocks does "
    "that let an SM hold, so how many threads are resident? And which loads, how wide each, does one thread issue "
    "before its first wait?":
        "{name}: {said}바이트라고 답했고 {off}. NVRTC는 이 커널에 thread당 register {regs}개를 줍니다. 그러면 SM "
        "하나에 {size}-thread block이 몇 개 들어가고, 상주 thread는 몇 개입니까? 그리고 thread 하나가 처음 기다리기 "
        "전에 어떤 load를 몇 바이트 폭으로 냅니까?",
    "NEEDED_PER_SM: {said} bytes is {off}: by Little's law the whole GPU keeps bandwidth x latency bytes in flight - "
    "at {tbps:.1f} TB/s and {us:.1f} us, in bytes/s and seconds - and its {sms} SMs share them":
        "NEEDED_PER_SM: {said}바이트라고 답했고 {off}. Little의 법칙으로 GPU 전체의 in-flight 바이트는 대역폭 x "
        "latency입니다({tbps:.1f} TB/s와 {us:.1f} us를 바이트/s와 초로 바꿔서 곱합니다). 그 바이트를 SM {sms}개가 "
        "나눠 가집니다",
    "COVERS[{name}]: {said!r} is not what the model says: compare the bytes this kernel keeps in flight per SM with "
    "the bytes per SM Little's law asks for - it covers the latency when they are at least as many":
        "COVERS[{name}]: {said!r}는 모델의 답과 다릅니다. 이 커널이 SM당 in flight로 유지하는 바이트를 Little의 "
        "법칙이 요구하는 SM당 바이트와 비교합니다. 요구하는 만큼 이상이면 latency를 가립니다",

    # ---- 1.6.1 -------------------------------------------------------------------------------------------------------
    "all right: a load costs the distinct 32-byte sectors its 32 addresses fall in - one for a broadcast, four for 128 "
    "aligned contiguous bytes, a fifth when the row starts mid-sector, and one per lane once lanes are 32 bytes or "
    "more apart. The same instructions, another mapping: 33 sectors against 5 per step, the 6.6x lab 1.6 predicts (the "
    "H200 measured ~9x)":
        "모두 맞습니다. load 하나의 비용은 주소 32개가 들어가는 서로 다른 32바이트 sector의 수입니다. broadcast는 "
        "1개, 정렬된 연속 128바이트는 4개, 행이 sector 중간에서 시작하면 5개, lane 사이가 32바이트 이상이면 lane마다 "
        "1개입니다. 명령은 같고 mapping만 다릅니다. step마다 sector 33개 대 5개로, 랩 1.6이 예측하는 6.6배입니다"
        "(H200에서는 약 9배로 측정되었습니다)",
    "{case}: no answer yet (write a pair: A sectors, B sectors)":
        "{case}: 아직 답이 없습니다(A sector 수, B sector 수의 쌍으로 씁니다)",
    "RATIO at {shape}: no answer yet": "{shape}의 RATIO: 아직 답이 없습니다",
    "which element of {matrix} does each lane read in this mapping - how many different addresses is that? Lanes that "
    "read one address share its sector":
        "이 mapping에서 lane마다 {matrix}의 어느 원소를 읽습니까? 서로 다른 주소는 몇 개입니까? 같은 주소를 읽는 "
        "lane들은 그 sector를 함께 씁니다",
    "lane l reads A[l, k], one row of A (K floats) after lane l - 1: how far apart are the lanes in bytes, and how "
    "many distinct 32-byte sectors do the 32 addresses fall in?":
        "lane l은 A[l, k]를 읽습니다. lane l - 1보다 A의 한 행(float K개) 뒤입니다. lane 사이는 몇 바이트이고, 주소 "
        "32개는 서로 다른 32바이트 sector 몇 개에 들어갑니까?",
    "the lanes read 32 consecutive floats of row k of B, which starts k x N floats after B's first one: does that put "
    "it on a 32-byte boundary, and how many 32-byte sectors do those bytes overlap from there?":
        "lane들은 B의 k행에서 연속된 float 32개를 읽습니다. 그 행은 B의 첫 원소에서 float k x N개 뒤에서 시작합니다. "
        "그러면 32바이트 경계에서 시작합니까? 거기서부터 그 바이트들은 32바이트 sector 몇 개에 걸칩니까?",
    "RATIO at {shape}: {said} is {off} - add A's and B's sectors per k step for each mapping, B's averaged over the "
    "first 8 steps where its rows differ, and divide the uncoalesced warp's sum by the coalesced one's":
        "{shape}의 RATIO: {said}라고 답했고 {off}. mapping마다 k step당 A와 B의 sector를 더합니다. 행마다 sector 수가 "
        "다른 B는 처음 8 step의 평균을 씁니다. 그다음 coalescing되지 않은 warp의 합을 coalescing된 warp의 합으로 "
        "나눕니다",
    "{case}, {matrix}: {said} is {off} - {why}": "{case}, {matrix}: {said}라고 답했고 {off}. {why}",

    # ---- 1.6.2 -------------------------------------------------------------------------------------------------------
    "right on every shape, and at {m}^3 {yours:.2f} TFLOP/s against {first:.2f} for the starting kernel ({ratio:.1f}x; "
    "the sector model says 17 / 4 = 4.25x): with threadIdx.x on the column a warp's A load touches 2 sectors (two "
    "rows) and its B load 2 (64 consecutive bytes), where threadIdx.x on the row made A touch 16 and B 1":
        "모든 shape에서 맞습니다. {m}^3에서 {yours:.2f} TFLOP/s로, 시작 커널의 {first:.2f}보다 {ratio:.1f}배입니다"
        "(sector 모델의 예측은 17 / 4 = 4.25배). threadIdx.x가 열을 따라가면 warp의 A load는 sector 2개(두 행), "
        "B load는 2개(연속된 64바이트)를 건드립니다. threadIdx.x가 행을 따라갈 때는 A가 16개, B가 1개였습니다",
    "this exercise times kernels, which needs a GPU ({why})":
        "이 연습 문제는 커널의 시간을 재므로 GPU가 필요합니다({why})",
    "{file} must define extern \"C\" __global__ void {kernel}(A, B, C, M, N, K) and compile: {why}":
        "{file} 파일은 extern \"C\" __global__ void {kernel}(A, B, C, M, N, K)를 정의하고 컴파일되어야 합니다: {why}",
    "the starting kernel does not compile here, so there is nothing to time against: {why}":
        "여기서는 시작 커널이 컴파일되지 않아 비교할 시간이 없습니다: {why}",
    "right, but at {m}^3 yours ran at {yours:.2f} TFLOP/s and the starting kernel at {first:.2f} ({ratio:.2f}x, "
    "{needed:.0f}x needed). A warp is threadIdx.x = 0 .. 15 at two values of threadIdx.y: which of row and col should "
    "the 16 fast lanes walk so that one A load is a broadcast and one B load reads consecutive floats?":
        "맞지만 {m}^3에서 내 커널은 {yours:.2f} TFLOP/s, 시작 커널은 {first:.2f} TFLOP/s입니다({ratio:.2f}배, "
        "필요한 것은 {needed:.0f}배). warp 하나는 threadIdx.y 두 값에서 threadIdx.x = 0 .. 15입니다. A load 하나가 "
        "broadcast가 되고 B load 하나가 연속된 float를 읽으려면 빠르게 변하는 lane 16개가 row와 col 중 어느 쪽을 "
        "따라가야 합니까?",
    "{why}. Faster does not count until it is right: does every (row, col) of C get exactly one thread, and does each "
    "thread still check row < M and col < N?":
        "{why}. 빨라도 맞아야 인정됩니다. C의 모든 (row, col)이 thread를 정확히 하나씩 받습니까? thread마다 여전히 "
        "row < M과 col < N을 검사합니까?",
    "{m} x {n} x {k}: the kernel failed ({error}: {detail}); an index past the end of A, B or C is the usual cause":
        "{m} x {n} x {k}: 커널이 실패했습니다({error}: {detail}). 보통은 A, B, C의 끝을 넘는 index 때문입니다",

    # ---- the hints (HINTS in each exercise.py, `python -m course exercise ID --hint`) --------------------------------
    # 1.2.1
    "Look at grid(n) and at the tl.load and tl.store lines: for n = 1000 and BLOCK = 256, how many programs does n // "
    "BLOCK launch, and which elements does no program reach?":
        "grid(n)과 tl.load, tl.store 줄을 봅니다. n = 1000, BLOCK = 256이면 n // BLOCK은 program을 몇 개 띄우고, 어느 "
        "원소에는 아무 program도 닿지 않습니까?",
    "Two things are wrong: the grid must round up, so that the partial last block gets a program too, and in that "
    "last program the lanes whose offset is n or more must neither load nor store: a mask.":
        "두 가지가 틀렸습니다. grid는 올림으로 세어 덜 찬 마지막 block도 program을 받아야 하고, 그 마지막 program에서 "
        "offset이 n 이상인 lane은 load도 store도 하지 않아야 합니다. 그것이 mask입니다.",
    "Build one boolean per lane, true where its offset is below n, and pass it as mask= to both loads and to the "
    "store; make grid() return the ceiling of n / BLOCK (triton.cdiv computes it).":
        "lane마다 offset이 n보다 작은지를 나타내는 boolean을 만들어 두 load와 store에 mask=로 넘깁니다. grid()는 n / "
        "BLOCK의 올림을 돌려주게 합니다(triton.cdiv가 계산해 줍니다).",
    # 1.5.1
    "For each kernel count the blocks per SM four times, once per limit: threads (2048 / block size), blocks (32), "
    "registers and shared memory. The answer is the smallest count, and its limit is the one that gives it.":
        "커널마다 SM당 block 수를 제한마다 한 번씩, 네 번 셉니다. thread(2048 / block 크기), block(32), register, "
        "shared memory입니다. 답은 그중 가장 작은 값이고, 그 값을 준 제한이 답의 제한입니다.",
    "Registers are handed out per warp in units of 256: a block needs (registers per thread x 32, rounded up to a "
    "multiple of 256) x its warps, out of 65536. Shared memory per block is what the kernel asks for plus the 1 KiB "
    "the runtime reserves, out of 228 KiB.":
        "register는 warp 단위로 256개씩 나눠 줍니다. block 하나에는 (thread당 register x 32를 256의 배수로 올림) x "
        "block의 warp 수가 필요하고, SM에는 65536개가 있습니다. block당 shared memory는 커널이 요청한 양에 runtime이 "
        "잡아 두는 1 KiB를 더한 값이고, SM에는 228 KiB가 있습니다.",
    "Take the 1024-thread kernel: 40 x 32 = 1280 registers a warp (already a multiple of 256), times its 32 warps, "
    "against 65536 - how many whole blocks fit? For the last kernel: 48 KiB + 1 KiB per block against 228 KiB, "
    "rounded down.":
        "1024-thread 커널을 예로 들면 warp당 40 x 32 = 1280 register(이미 256의 배수)에 block의 warp 32개를 곱해 "
        "65536과 비교합니다. 온전한 block이 몇 개 들어갑니까? 마지막 커널은 block당 48 KiB + 1 KiB를 228 KiB와 비교해 "
        "내림합니다.",
    # 1.5.2
    "Each answer is the resident threads per SM x the bytes one thread has in flight. Start from the registers: the "
    "labs' compile reports (python -m phase1_architecture.lab04_memory_hierarchy --quick, and labs 1.2 and 1.5) list "
    "each kernel's.":
        "답은 모두 SM당 상주 thread 수 x thread 하나가 기다리는 load 바이트입니다. register부터 봅니다. 랩의 compile "
        "report(python -m phase1_architecture.lab04_memory_hierarchy --quick, 랩 1.2와 1.5도)에 커널마다 나와 "
        "있습니다.",
    "Resident threads come from the occupancy rules of lab 1.5 for 256-thread blocks: 2048 per SM, unless the "
    "registers allow fewer blocks. A thread's bytes in flight are the loads it issues before its first wait: two "
    "4-byte loads, two float4, or UNROLL = 4 float4. The need per SM is bandwidth x latency / SMs.":
        "상주 thread 수는 256-thread block에 랩 1.5의 occupancy 규칙을 적용해 구합니다. register가 block 수를 줄이지 "
        "않으면 SM당 2048개입니다. thread 하나의 in-flight 바이트는 처음 기다리기 전에 낸 load입니다. 4바이트 load 두 "
        "개, float4 두 개, 또는 UNROLL = 4개의 float4입니다. SM당 필요한 양은 대역폭 x latency / SM 수입니다.",
    "For each kernel multiply blocks per SM x 256 x its bytes per thread; a kernel with more than 32 registers a "
    "thread fits fewer than 8 blocks. The need is 4.8e12 x 0.6e-6 / 132, about 21 KB; COVERS is True exactly for the "
    "kernels that reach it.":
        "커널마다 SM당 block 수 x 256 x thread당 바이트를 곱합니다. thread당 register가 32개를 넘는 커널은 block이 "
        "8개보다 적게 들어갑니다. 필요한 양은 4.8e12 x 0.6e-6 / 132, 약 21 KB이고, COVERS는 이 값에 닿는 커널에서만 "
        "True입니다.",
    # 1.6.1
    "Write down the byte address each lane reads for A[row, k] and for B[k, col] (the docstring says which element): "
    "element (r, c) of a row-major matrix with C columns is at 4 x (r x C + c). Then count the distinct 32-byte "
    "sectors, address // 32.":
        "lane마다 A[row, k]와 B[k, col]에서 읽는 바이트 주소를 적습니다(어느 원소인지는 docstring에 있습니다). 열이 "
        "C개인 row-major 행렬의 원소 (r, c)는 4 x (r x C + c)에 있습니다. 그다음 서로 다른 32바이트 sector(주소 // "
        "32)를 셉니다.",
    "Lanes that read one address share its sector; lanes 4 bytes apart fill a sector 8 at a time; lanes a whole row "
    "apart (4 x K bytes) need a sector each unless a row is shorter than 32 bytes. A row of B that does not start on "
    "a 32-byte boundary spreads its 128 bytes over one more sector.":
        "같은 주소를 읽는 lane들은 sector 하나를 나눠 씁니다. 4바이트 간격의 lane은 8개가 sector 하나를 채웁니다. 한 "
        "행씩(4 x K 바이트) 떨어진 lane은 행이 32바이트보다 짧지 않으면 각자 sector가 필요합니다. 32바이트 경계에서 "
        "시작하지 않는 B의 행은 128바이트가 sector 하나에 더 걸칩니다.",
    "For the ratio, add the A and B sectors per step of each mapping and divide the row-walking one by the "
    "column-walking one. At N = 4100, row k of B starts at 4 x 4100 x k bytes: take that mod 32 for k = 1 and 2, and "
    "average B's sectors over the two kinds of rows.":
        "비율은 mapping마다 step당 A와 B의 sector를 더한 다음, 행을 따라가는 쪽을 열을 따라가는 쪽으로 나눕니다. N = "
        "4100에서 B의 k번째 행은 4 x 4100 x k 바이트에서 시작합니다. k = 1과 2에서 그 값을 32로 나눈 나머지를 보고, "
        "두 종류의 행에 걸쳐 B의 sector를 평균합니다.",
    # 1.6.2
    "Look at the two lines that compute row and col from threadIdx: which one does threadIdx.x - the index that "
    "changes fastest within a warp - feed?":
        "threadIdx로 row와 col을 계산하는 두 줄을 봅니다. warp 안에서 가장 빨리 바뀌는 index인 threadIdx.x는 어느 "
        "쪽에 들어갑니까?",
    "A warp is 16 consecutive threadIdx.x at two threadIdx.y. With threadIdx.x on the row, its lanes read A from 16 "
    "rows K floats apart (16 sectors) and B at two addresses. With threadIdx.x on the column, each half-warp reads "
    "one A address and 16 consecutive floats of B: 4 sectors in all.":
        "warp는 threadIdx.y 두 값에서 연속된 threadIdx.x 16개입니다. threadIdx.x가 행에 들어가면 lane들은 A를 K float "
        "간격의 16개 행에서 읽어 sector 16개를 건드리고, B는 주소 두 개만 읽습니다. 열에 들어가면 half-warp마다 A "
        "주소 하나와 B의 연속된 float 16개를 읽어 모두 sector 4개입니다.",
    "Swap the two roles: threadIdx.y picks the row of C and threadIdx.x the column, with the blockIdx offsets, the "
    "bounds check and the launch left as they are.":
        "두 역할을 바꿉니다. threadIdx.y가 C의 행을, threadIdx.x가 열을 고르게 하고, blockIdx offset과 경계 검사, "
        "launch는 그대로 둡니다.",
}
