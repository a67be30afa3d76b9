"""The Korean lines of phase 2's exercise checkers (course/exercises/ex_2_*): {english: korean}, with the same
{placeholders}. Read by common/i18n.py with course/ko.py and the other course/ko_phase*.py."""

KO = {
    # ---- 2.1.1 -------------------------------------------------------------------------------------------------------
    "{bad:,} of {size:,} elements wrong, in {tiles:,} of {all_tiles:,} tiles":
        "원소 {size:,}개 중 {bad:,}개가 틀렸고, tile {all_tiles:,}개 중 {tiles:,}개에 있습니다",
    "{words}{unwritten}: values written, but not the right ones. A warp writes elements that other warps loaded into "
    "the tile - were they in the tile yet?":
        "{words}{unwritten}: 값은 썼지만 맞는 값이 아닙니다. warp는 다른 warp가 tile에 load한 원소를 씁니다. 그때 "
        "그 원소가 이미 tile에 있었습니까?",
    "{words}, all of them never written: does every element of out get a thread, at the edges too?":
        "{words}. 모두 한 번도 쓰이지 않았습니다. 가장자리까지 out의 모든 원소가 thread를 받습니까?",
    "right on {shapes} shapes, the large ones {repeats} times: every warp now waits at __syncthreads() until the whole "
    "tile is in shared memory before it reads a column that other warps stored. Without it a warp whose loads "
    "returned early read elements its neighbours had not stored yet - left over from the previous tile or never "
    "written":
        "shape {shapes}개에서 맞습니다(큰 shape는 {repeats}번씩). 이제 모든 warp는 다른 warp가 저장한 열을 읽기 전에 "
        "tile 전체가 shared memory에 들어올 때까지 __syncthreads()에서 기다립니다. 이것이 없으면 load가 일찍 끝난 "
        "warp가 이웃 warp가 아직 저장하지 않은 원소를 읽었습니다. 이전 tile에서 남은 값이거나 한 번도 쓰이지 않은 "
        "값입니다",
    ", run {i} of {n}": ", {n}번 중 {i}번째 실행",
    " ({n:,} never written)": " (한 번도 쓰이지 않은 원소 {n:,}개)",
    'extern "C" __global__ void transpose_tiled(const float* in, float* out, long long M, long long N) '
    "launched with (32, 8)-thread blocks":
        'extern "C" __global__ void transpose_tiled(const float* in, float* out, long long M, long long N) '
        "((32, 8) thread block으로 launch)",

    # ---- 2.2.1 -------------------------------------------------------------------------------------------------------
    " Measured on the H200, stride 16 took {s16:.2f} SM clocks per warp load and stride 33 {s33:.2f} ({lab}.json).":
        " H200에서 측정하면 warp load 하나에 stride 16은 SM clock {s16:.2f}, stride 33은 {s33:.2f}이 걸렸습니다"
        "({lab}.json).",
    "column of tile[32][{pitch}]": "tile[32][{pitch}]의 열",
    "all {total} right: passes = the most distinct words one bank is asked for, so a lane stride (or a tile's pitch, "
    "for a column read) costs gcd(stride, 32), shared words are free, and one word of padding makes a 32-wide column "
    "conflict-free - but an aligned pitch cannot beat 4 passes, which is why tensor-core kernels swizzle (1 pass, no "
    "padding) instead of padding.":
        "{total}개 모두 맞습니다. pass 수는 한 bank가 요청받는 서로 다른 word의 최대 개수입니다. 그래서 lane stride"
        "(열 읽기에서는 tile의 pitch)는 gcd(stride, 32)의 비용이 들고, 같은 word는 공짜이며, word 하나의 padding으로 "
        "폭 32인 열에서 bank conflict가 사라집니다. 하지만 정렬된 pitch는 pass 4번보다 나아질 수 없습니다. 그래서 "
        "tensor core 커널은 padding 대신 swizzle을 씁니다(pass 1번, padding 없음).",
    "{case}: {said} is {off} - {why}": "{case}: {said}라고 답했고 {off}. {why}",
    "not a whole number": "정수가 아님",
    "pad": "pad",
    "{what} {said} is {off}": "{what} {said}: {off}",
    "ALIGNED_PAD: write a pair (pad, its passes), not {said!r}":
        "ALIGNED_PAD: {said!r}가 아니라 (pad, 그 pass 수)의 쌍으로 씁니다",
    "ALIGNED_PAD: {bad} - a row stays 16-byte aligned only when the pitch is a whole number of float4s: what does "
    "that force on the banks a column read's lanes can reach, and so on its passes? Then take the smallest pad that "
    "gets there":
        "ALIGNED_PAD: {bad}. pitch가 float4의 정수배일 때만 모든 행이 16바이트로 정렬됩니다. 그러면 열 읽기에서 "
        "lane들이 닿을 수 있는 bank는 어떻게 제한되고, 그래서 pass 수는 어떻게 됩니까? 그다음 그 pass 수에 닿는 가장 "
        "작은 pad를 고릅니다",
    "lane i reads word s i, in bank (s i) % 32: how many different banks do the 32 lanes reach, and so how many "
    "different words does the busiest bank get?":
        "lane i는 bank (s i) % 32에 있는 word s i를 읽습니다. lane 32개는 서로 다른 bank 몇 개에 닿고, 그래서 가장 "
        "바쁜 bank는 서로 다른 word를 몇 개 요청받습니까?",
    "lane i reads word P i + c, one row (the pitch P) after lane i - 1: the pitch acts as the lane stride - how many "
    "different banks do the 32 lanes reach, and how many different words does the busiest one get?":
        "lane i는 word P i + c를 읽습니다. lane i - 1보다 한 행(pitch P) 뒤입니다. pitch가 lane stride 역할을 합니다. "
        "lane 32개는 서로 다른 bank 몇 개에 닿고, 가장 바쁜 bank는 서로 다른 word를 몇 개 요청받습니까?",
    "a column read of tile[32][32 + p] is a lane stride of 32 + p words: for which pitches does every lane of the "
    "column get a bank of its own, and which is the smallest pad that makes one?":
        "tile[32][32 + p]의 열 읽기는 lane stride가 word 32 + p개인 접근입니다. 어떤 pitch에서 열의 모든 lane이 "
        "저마다 다른 bank를 받습니까? 그런 pitch를 만드는 가장 작은 pad는 무엇입니까?",
    "all 32 lanes ask for one and the same word - how many distinct words is that, and does a bank serve a word many "
    "lanes want more than once?":
        "lane 32개가 모두 같은 word 하나를 요청합니다. 서로 다른 word는 몇 개이고, 여러 lane이 원하는 word 하나를 "
        "bank가 여러 번 내줍니까?",
    "pairs of lanes ask for one word: which bank is each distinct word in, and does a word two lanes share cost a "
    "second pass?":
        "lane 두 개씩 word 하나를 요청합니다. 서로 다른 word는 각각 어느 bank에 있고, 두 lane이 함께 읽는 word가 "
        "pass를 한 번 더 씁니까?",
    "list the words the lanes read: which bank is each in, and how many of them are distinct? A word two lanes share "
    "counts once":
        "lane들이 읽는 word를 적어 봅니다. 각각 어느 bank에 있고, 그중 서로 다른 word는 몇 개입니까? 두 lane이 함께 "
        "읽는 word는 한 번만 셉니다",
    "32 i is a whole number of rows of banks, so the bank is (5 ^ i) % 32 - do two lanes ever land in the same bank?":
        "32 i는 bank 한 줄의 정수배이므로 bank는 (5 ^ i) % 32입니다. 두 lane이 같은 bank에 닿는 일이 있습니까?",
    "lane i reads word 65 (i + 32) + 7, and 65 is two rows of banks and one bank more - which bank does each lane "
    "land in, and do two lanes ever share one?":
        "lane i는 word 65 (i + 32) + 7을 읽고, 65는 bank 두 줄에 bank 하나를 더한 수입니다. lane마다 어느 bank에 "
        "닿고, 두 lane이 bank 하나를 함께 쓰는 일이 있습니까?",

    # ---- 2.4.1 -------------------------------------------------------------------------------------------------------
    " Measured on the H200 ({lab}.json): {t0:.3f}, {t1:.3f} and {t2:.3f} wave-times at 1.1, 1.25 and 2.5 waves; "
    "{g0:,.0f}, {g1:,.0f} and {g2:,.0f} GB/s at 1/8, 1/4 and 1 wave of 256-thread blocks - the model holds where the "
    "kernel is latency-bound, and over-promises where queueing in the memory system raises the latency.":
        " H200에서 측정한 값({lab}.json): 1.1, 1.25, 2.5 wave에서 각각 wave 시간의 {t0:.3f}, {t1:.3f}, {t2:.3f}배이고, "
        "256-thread block의 1/8, 1/4, 1 wave에서 {g0:,.0f}, {g1:,.0f}, {g2:,.0f} GB/s입니다. 커널이 latency-bound인 "
        "곳에서는 모델이 맞고, 메모리 시스템의 대기열이 latency를 늘리는 곳에서는 모델이 너무 좋게 예측합니다.",
    "every wave that starts costs a whole wave's time, a partial one too":
        "시작한 wave는 덜 찼더라도 모두 wave 하나의 시간이 듭니다",
    "time in proportion to the work, so a partial wave costs its fraction of a wave":
        "시간이 일의 양에 비례하므로 덜 찬 wave는 찬 비율만큼의 wave 시간이 듭니다",
    "the full waves run at the ceiling; in the partial wave only its own blocks are resident - what GB/s does "
    "Little's law give their threads, and how long does its share of the work take at that, in wave-times?":
        "가득 찬 wave는 한계 대역폭으로 돕니다. 덜 찬 wave에서는 그 wave의 block만 상주합니다. Little의 법칙으로 그 "
        "thread들이 내는 GB/s는 얼마이고, 그 속도로 그 wave가 맡은 일은 wave 시간으로 얼마나 걸립니까?",
    "{name}: {s} is {off}: {why}": "{name}: {s}라고 답했고 {off}. {why}",
    "all {total} right: residency is the smallest of the SM's limits (32-thread blocks hit the 32-block limit at half "
    "the threads), a wave is 132 x that, and a memory-bound kernel's bandwidth is bytes in flight over latency until "
    "the ceiling. A partial wave is latency-bound, so its time does not shrink with its size: any last wave under "
    "~0.28 costs ~0.28 of a wave, not a whole one.":
        "{total}개 모두 맞습니다. 상주 block 수는 SM의 제한 중 가장 작은 값입니다(32-thread block은 thread의 절반에서 "
        "block 32개 제한에 걸립니다). wave는 그 132배이고, memory-bound 커널의 대역폭은 한계에 닿기 전까지 in-flight "
        "바이트를 latency로 나눈 값입니다. 덜 찬 wave는 latency-bound라서 크기가 줄어도 시간이 줄지 않습니다. 약 "
        "0.28보다 작은 마지막 wave는 wave 하나가 아니라 약 0.28 wave의 시간이 듭니다.",
    "could not compile lab {lab}'s kernels.cu here ({error}: {detail}); its compile report needs the same":
        "여기서는 랩 {lab}의 kernels.cu를 컴파일할 수 없습니다({error}: {detail}). 그 랩의 compile report에도 같은 "
        "컴파일이 필요합니다",
    "TAIL[{w}]: no answer yet (three numbers: quantized, fluid, Little's law)":
        "TAIL[{w}]: 아직 답이 없습니다(숫자 세 개: quantized, fluid, Little의 법칙)",
    "BLOCKS_PER_SM[{t}]: {said} blocks is {off}: how many of these blocks does each limit of the SM allow - its "
    "threads, its blocks, its registers ({regs} a thread, allocated per warp in units of 256)? The SM holds as many as "
    "the scarcest allows":
        "BLOCKS_PER_SM[{t}]: block {said}개는 {off}. SM의 제한마다(thread 수, block 수, register 수: thread당 "
        "{regs}개를 warp 단위로 256개씩 할당) 이 block이 몇 개 들어갑니까? SM은 가장 부족한 자원이 허락하는 만큼만 "
        "담습니다",
    "WAVES[{t}, {grid}]: {said} is {off}: a wave is the blocks the whole GPU holds at once, {sms} SMs x the blocks one "
    "SM holds; the grid's blocks over a wave's blocks is a fraction, not rounded":
        "WAVES[{t}, {grid}]: {said}라고 답했고 {off}. wave는 GPU 전체가 한 번에 담는 block 수, 곧 SM {sms}개 x SM "
        "하나가 담는 block 수입니다. grid의 block 수를 wave 하나의 block 수로 나눈 값은 분수이고, 정수로 맞추지 "
        "않습니다",
    "GBPS[{t}, {grid}]: {said} GB/s is {off}: by Little's law, how many threads are resident (the grid's, but never "
    "more than a full wave), how many bytes of loads each keeps in flight, over the {us} us latency - and twice that "
    "for the writes, up to the HBM ceiling?":
        "GBPS[{t}, {grid}]: {said} GB/s라고 답했고 {off}. Little의 법칙으로 셉니다. 상주 thread는 몇 개입니까(grid의 "
        "thread, 단 가득 찬 wave 하나를 넘지 않음)? thread마다 in-flight load는 몇 바이트입니까? 그것을 latency "
        "{us} us로 나누고, 쓰기까지 세어 두 배로 합니다. HBM 한계를 넘지는 않습니다",

    # ---- 2.4.2 -------------------------------------------------------------------------------------------------------
    "{why} (the compile report for sm_90: {report})": "{why} (sm_90의 compile report: {report})",
    "n = {n}, {blocks} blocks of {threads} threads": "n = {n}, {threads}-thread block {blocks}개",
    "the loop still moves 4 bytes per access: read x as float4 (reinterpret_cast<const float4*>) and write y as "
    "float4, one 16-byte load and one 16-byte store per iteration":
        "loop가 아직 접근마다 4바이트를 옮깁니다. x를 float4로 읽고(reinterpret_cast<const float4*>) y를 float4로 "
        "써서 반복마다 16바이트 load 하나와 16바이트 store 하나로 만듭니다",
    "; the last {k} element(s) (n % 4) stay unwritten: the tail":
        ". 마지막 원소 {k}개(n % 4)가 쓰이지 않은 채 남습니다: tail입니다",
    "{what}: {message}{tail}. Does every element belong to exactly one float4 or to the scalar tail, for every grid?":
        "{what}: {message}{tail}. 어떤 grid에서든 모든 원소가 float4 하나나 scalar tail 중 정확히 한 곳에 속합니까?",
    "every load is 16 bytes wide, so nothing reads the last n % 4 elements: a float4 cannot start past the last whole "
    "group of 4, and those elements need single-float accesses":
        "모든 load가 16바이트 폭이라 마지막 n % 4개 원소는 아무도 읽지 않습니다. float4는 마지막 온전한 4개 묶음 "
        "너머에서 시작할 수 없으므로 그 원소들에는 float 하나씩의 접근이 필요합니다",
    "the compile report for sm_90 shows what was asked: {report}, {regs} registers, no spill - one 16-byte load in "
    "flight per thread where there were 4 bytes, and a quarter of the load and store instructions":
        "sm_90의 compile report가 요구한 대로입니다: {report}, register {regs}개, spill 없음. thread마다 4바이트였던 "
        "in-flight load가 16바이트 load 하나가 되었고, load와 store 명령은 4분의 1로 줄었습니다",
    "ptxas spills {n} bytes: nothing here needs more than a few registers":
        "ptxas가 {n}바이트를 spill합니다. 이 커널에는 register가 몇 개만 있으면 됩니다",

    # ---- 2.5.1 -------------------------------------------------------------------------------------------------------
    "{regs} registers, {stores} B spill stores / {loads} B spill loads, {stack} B stack frame, {stl} STL / {ldl} LDL, "
    "{smem} B shared":
        "register {regs}개, spill store {stores} B / spill load {loads} B, stack frame {stack} B, STL {stl} / LDL "
        "{ldl}, shared {smem} B",
    "{blocks} blocks of {threads} threads fit on an SM, limited by {limits}; the task keeps {keep} (100% occupancy): "
    "at most 65536 / ({threads} x {keep}) = 32 registers a thread, and no shared memory to speak of":
        "SM 하나에 {threads}-thread block {blocks}개가 들어가고, 제한하는 자원은 {limits}입니다. 이 연습 문제는 "
        "{keep}개(100% occupancy)를 지킵니다. 그러려면 thread당 register가 많아야 65536 / ({threads} x {keep}) = "
        "32개이고, shared memory는 거의 쓰지 않아야 합니다",
    "{rows} x {cols}: {message}. Spill-free does not count until it is right: every column's norm over all its rows, "
    "every element of y written once":
        "{rows} x {cols}: {message}. spill이 없어도 맞아야 인정됩니다. 모든 열의 norm을 그 열의 모든 행에 걸쳐 "
        "계산하고, y의 모든 원소를 한 번씩 씁니다",
    "ptxas spills: 32 registers cannot hold 32 column values plus the addresses and the sum, so some go to local "
    "memory (STL/LDL). The cap is fixed; what the thread keeps live is not - does it need every value of its column "
    "at once?":
        "ptxas가 spill합니다. register 32개에는 열의 값 32개와 주소와 합을 모두 담을 수 없어서 일부가 local "
        "memory(STL/LDL)로 갑니다. 상한은 고정이지만 thread가 살려 두는 값은 바꿀 수 있습니다. 열의 모든 값이 한꺼번에 "
        "필요합니까?",
    "the compile report for sm_90: {report}, {blocks} blocks of {threads} per SM - the promise kept, nothing in local "
    "memory: a thread that holds one running sum instead of its whole column fits 32 registers; the price is a second "
    "read of x, mostly from L2, where the spill paid local-memory stores and loads":
        "sm_90의 compile report: {report}, SM당 {threads}-thread block {blocks}개. 약속을 지켰고 local memory에는 "
        "아무것도 없습니다. 열 전체 대신 누적 합 하나만 들고 있는 thread는 register 32개에 들어갑니다. 그 대가는 "
        "x를 한 번 더 읽는 것이고 대부분 L2에서 옵니다. spill은 그 대가로 local memory의 store와 load를 치렀습니다",
    "0 bytes spilled, but a stack frame (local memory: LDL/STL in the SASS) - an array indexed at run time lives "
    "there, the silent cousin of a spill (lab 2.5's colnorm_03)":
        "spill은 0바이트지만 stack frame이 있습니다(local memory: SASS의 LDL/STL). 실행 중에 index하는 배열은 "
        "그곳에 놓입니다. 조용한 spill이라 할 수 있습니다(랩 2.5의 colnorm_03)",

    # ---- 2.6.1 -------------------------------------------------------------------------------------------------------
    "the result is {got:g}, the exact sum {want:g}": "결과는 {got:g}이고, 정확한 합은 {want:g}입니다",
    "{result}: NaN - a partial or the result was never written, or a NaN was read past the end":
        "{result}: NaN입니다. partial이나 결과가 쓰이지 않았거나, 끝을 넘어 NaN을 읽었습니다",
    "{what}: {why}. Every element belongs to exactly one of: the head, a whole float4, what comes after them":
        "{what}: {why}. 모든 원소는 앞부분(head), 온전한 float4, 그 뒤의 나머지 중 정확히 한 곳에 속합니다",
    "exact for {n} lengths from 1 to {last:,} and views at every 4-byte offset: the body is read as float4 (16-byte "
    "loads, 16 bytes in flight per thread per step), the up to 3 floats before the first 16-byte boundary and the up "
    "to 3 after the last whole float4 one float each, by the first threads of the grid - in both launches":
        "1부터 {last:,}까지 길이 {n}가지와 4바이트 offset마다의 view에서 정확합니다. 본문은 float4로 읽고(16바이트 "
        "load, step마다 thread당 16바이트 in flight), 첫 16바이트 경계 앞의 float 최대 3개와 마지막 온전한 float4 "
        "뒤의 최대 3개는 grid의 앞쪽 thread가 하나씩 읽습니다. 두 launch 모두 그렇습니다",
    ", a view {b} bytes past a 16-byte boundary": ", 16바이트 경계에서 {b}바이트 뒤에 시작하는 view",
    "the {n} elements after the last whole float4 sum {total:g}": "마지막 온전한 float4 뒤의 원소 {n}개는 합이 {total:g}입니다",
    "the {n} element after the last whole float4 is {total:g}": "마지막 온전한 float4 뒤의 원소 {n}개는 {total:g}입니다",
    "the {n} elements before the first float4 (the view starts {b} bytes past a 16-byte boundary) sum {total:g}":
        "첫 float4 앞의 원소 {n}개는 합이 {total:g}입니다(view가 16바이트 경계에서 {b}바이트 뒤에 시작합니다)",
    "the {n} element before the first float4 (the view starts {b} bytes past a 16-byte boundary) is {total:g}":
        "첫 float4 앞의 원소 {n}개는 {total:g}입니다(view가 16바이트 경계에서 {b}바이트 뒤에 시작합니다)",
    "and the second launch sums {n} partials, {k} of them after its last whole float4":
        "두 번째 launch도 partial {n}개를 더하고, 그중 {k}개는 마지막 온전한 float4 뒤에 있습니다",
    "and the second launch sums {n} partial, {k} of them after its last whole float4":
        "두 번째 launch도 partial {n}개를 더하고, 그중 {k}개는 마지막 온전한 float4 뒤에 있습니다",

    # ---- 2.7.1 -------------------------------------------------------------------------------------------------------
    "Row {r}'s largest value is {top:.0f}, and {fate}. Softmax does not change when every value of a row moves by the "
    "same amount: which amount keeps every exp in range - and does the kernel already have it?":
        "{r}행의 최댓값은 {top:.0f}입니다. {fate}. softmax는 한 행의 모든 값을 같은 양만큼 옮겨도 변하지 않습니다. "
        "어떤 양을 빼야 모든 exp가 범위 안에 머뭅니까? 커널이 그 값을 이미 가지고 있습니까?",
    "exp({top:.0f}) is inf in fp32, whose largest value is 3.4e38 = e^{limit:.1f}: the row's sum is inf, and inf / inf "
    "is NaN":
        "fp32의 최댓값은 3.4e38 = e^{limit:.1f}이므로 exp({top:.0f})는 fp32에서 inf입니다. 행의 합이 inf가 되고, "
        "inf / inf는 NaN입니다",
    "NaN or inf where the reference is finite": "기준은 유한한데 NaN이나 inf가 나왔습니다",
    "right on rows near 0, +30, +89, +100, -90 and -120 (with -inf entries): with the row max subtracted every "
    "exponent is <= 0, so exp never overflows, and the largest term is exactly 1, so the sum never underflows. The max "
    "was already computed - the bug was one subtraction in two places, and it cost no extra pass over memory":
        "0, +30, +89, +100, -90, -120 근처의 행(-inf 원소 포함)에서 맞습니다. 행의 최댓값을 빼면 모든 지수가 <= 0이라 "
        "exp가 overflow하지 않고, 가장 큰 항이 정확히 1이라 합이 underflow하지 않습니다. 최댓값은 이미 계산되어 "
        "있었습니다. 버그는 두 곳에서 빠진 뺄셈 하나였고, 고쳐도 메모리를 한 번 더 훑지 않습니다",
    "exp({top:.0f}) is below the smallest normal fp32, e^{limit:.1f}: every term is a subnormal with few bits left, or "
    "0, so the sum is inexact or 0, and 0 / 0 is NaN":
        "exp({top:.0f})는 fp32의 가장 작은 normal 값 e^{limit:.1f}보다 작습니다. 모든 항이 비트가 얼마 남지 않은 "
        "subnormal이거나 0이라 합이 부정확하거나 0이 되고, 0 / 0은 NaN입니다",
    "row {r} is neither large nor small (its max is {top:.0f}): compare your kernel with the starting point":
        "{r}행은 크지도 작지도 않습니다(최댓값 {top:.0f}). 내 커널을 시작 파일과 비교해 봅니다",
    "{rows} x {cols}: rows {shown} wrong ({how}). ": "{rows} x {cols}: {shown}행이 틀렸습니다({how}). ",
    'extern "C" __global__ void softmax_warp_rows(const float* x, float* y, long long rows, int cols) '
    "launched with (32, 4)-thread blocks (a warp per row)":
        'extern "C" __global__ void softmax_warp_rows(const float* x, float* y, long long rows, int cols) '
        "((32, 4) thread block으로 launch, 행마다 warp 하나)",

    # ---- the hints (HINTS in each exercise.py, `python -m course exercise ID --hint`) --------------------------------
    # 2.1.1
    "Look between the loop that writes the tile into shared memory and the loop that reads it back transposed: what "
    "makes a warp wait until the other warps have written?":
        "tile을 shared memory에 쓰는 loop와 전치해서 다시 읽는 loop 사이를 봅니다. 다른 warp가 다 쓸 때까지 warp를 "
        "기다리게 하는 것이 무엇입니까?",
    "Thread (tx, ty) reads row tx of the tile, which other warps of the block wrote. Warps run independently, so "
    "without a barrier a fast warp reads shared memory nobody has written yet: a race, different from run to run and "
    "likelier with many blocks.":
        "thread (tx, ty)는 tile의 tx번째 행을 읽는데, 그 행은 block의 다른 warp가 썼습니다. warp는 서로 독립적으로 "
        "돌기 때문에 barrier가 없으면 빠른 warp가 아직 아무도 쓰지 않은 shared memory를 읽습니다. 실행마다 달라지고 "
        "block이 많을수록 잦은 race입니다.",
    "Put a block-wide barrier after the store loop and before the read loop, where every thread of the block reaches "
    "it (not inside a branch that only some threads take).":
        "store loop 뒤, read loop 앞에 block 전체의 barrier를 둡니다. block의 모든 thread가 거기에 닿아야 합니다(일부 "
        "thread만 들어가는 분기 안에 두면 안 됩니다).",
    # 2.2.1
    "Every case is one rule: bank = word % 32, and the passes are the most distinct words any one bank is asked for. "
    "For each case, list the words lanes 0 .. 31 read and tally them by bank.":
        "모든 경우가 규칙 하나로 풀립니다. bank = word % 32이고, pass 수는 한 bank에 요청된 서로 다른 word 수의 "
        "최댓값입니다. 경우마다 lane 0 .. 31이 읽는 word를 적고 bank별로 셉니다.",
    "For word s x i the banks repeat every 32 / gcd(s, 32) lanes, so each bank gets gcd(s, 32) distinct words; a "
    "column of tile[32][P] is the same rule with the pitch P as the stride. Lanes that read the same word count once "
    "(a broadcast).":
        "word s x i이면 bank가 lane 32 / gcd(s, 32)개마다 반복되므로 bank마다 서로 다른 word가 gcd(s, 32)개씩 옵니다. "
        "tile[32][P]의 열은 pitch P를 stride로 둔 같은 규칙입니다. 같은 word를 읽는 lane은 한 번으로 "
        "셉니다(broadcast).",
    "PAD: the smallest p with gcd(32 + p, 32) = 1. ALIGNED_PAD: only pitches that are multiples of 4 qualify, so the "
    "gcd is at least 4 - find the first one that reaches it. For the XOR swizzle and tile[64][65], compute each "
    "lane's bank and see whether the 32 banks all differ.":
        "PAD는 gcd(32 + p, 32) = 1이 되는 가장 작은 p입니다. ALIGNED_PAD는 4의 배수인 pitch만 되므로 gcd가 적어도 "
        "4입니다. 그 값에 닿는 첫 pitch를 찾습니다. XOR swizzle과 tile[64][65]는 lane마다 bank를 계산해 32개가 모두 "
        "다른지 봅니다.",
    # 2.4.1
    "Start with blocks per SM: the smallest of 2048 / threads per block, 32, and what the registers allow (24 a "
    "thread, allocated per warp in units of 256). A wave is 132 x that many blocks.":
        "SM당 block 수부터 구합니다. 2048 / block당 thread 수, 32, register가 허락하는 수(thread당 24개, warp 단위로 "
        "256개씩 할당) 중 가장 작은 값입니다. wave 하나는 그 block 수 x 132입니다.",
    "Waves = the grid's blocks / a wave's blocks, a fraction. Little's law: GB/s = 2 x resident threads x 16 B / "
    "0.557 us, capped at 4341, with every block of the grid resident. For the tail, the quantized model rounds the "
    "waves up and the fluid model does not.":
        "wave 수 = grid의 block 수 / wave 하나의 block 수이고, 분수로 씁니다. Little의 법칙: GB/s = 2 x 상주 thread "
        "수 x 16 B / 0.557 us, 상한 4341이고, grid의 block이 모두 상주한다고 봅니다. tail에서 quantized 모델은 wave "
        "수를 올림하고 fluid 모델은 올림하지 않습니다.",
    "Little's-law tail: the full waves run at the ceiling; a partial wave with a fraction f of the blocks has f of "
    "the threads, so f x the full wave's uncapped GB/s. Its time is its f of the work over that bandwidth, in "
    "wave-times: f cancels while that bandwidth stays under the ceiling.":
        "Little의 법칙 tail: 꽉 찬 wave는 상한 속도로 돕니다. block의 비율 f만 찬 wave는 thread도 f배이므로 대역폭은 "
        "꽉 찬 wave의 상한 없는 GB/s의 f배입니다. 그 wave의 시간은 일의 f를 그 대역폭으로 나눈 값(wave 시간 "
        "단위)이고, 그 대역폭이 상한 아래인 동안 f가 약분됩니다.",
    # 2.4.2
    "The loop moves one float per iteration. See the array as n / 4 whole float4 followed by at most 3 leftover "
    "floats, and ask which pointer type makes one load move 16 bytes.":
        "이 loop는 iteration마다 float 하나를 옮깁니다. 배열을 온전한 float4 n / 4개와 남는 float 3개 이하로 보고, "
        "어떤 pointer 타입이면 load 하나가 16바이트를 옮기는지 생각합니다.",
    "Reinterpret x and y as float4 pointers (they start on 16-byte boundaries), run the grid-stride loop over the n / "
    "4 whole quads computing .x .y .z .w, then let a second grid-stride loop do the last n % 4 elements as single "
    "floats.":
        "x와 y를 float4 pointer로 reinterpret합니다(16바이트 경계에서 시작합니다). grid-stride loop를 온전한 quad n / "
        "4개에 돌려 .x .y .z .w를 계산하고, 두 번째 grid-stride loop가 마지막 n % 4개 원소를 float 하나씩 처리합니다.",
    "Both loops keep one iteration at a time (the unroll pragma stays); the quad loop stops at n / 4 in integer "
    "division, the tail loop starts at 4 x (n / 4) plus the thread's first index, with the same step. Build the "
    "result with make_float4 so that the store is a single STG.E.128.":
        "두 loop 모두 한 번에 iteration 하나를 유지합니다(unroll pragma는 그대로). quad loop는 정수 나눗셈 n / 4에서 "
        "멈추고, tail loop는 4 x (n / 4)에 thread의 첫 index를 더한 곳에서 같은 step으로 시작합니다. 결과는 "
        "make_float4로 만들어 store가 STG.E.128 하나가 되게 합니다.",
    # 2.5.1
    "Read the compile report of the start: registers, spill bytes, stack frame. The register array v[MAX_ROWS] keeps "
    "32 values of a thread alive at once; with the addresses and the sum that is more than the 32 registers the "
    "promise leaves.":
        "시작 파일의 compile report에서 register, spill 바이트, stack frame을 읽습니다. register 배열 v[MAX_ROWS]는 "
        "thread마다 값 32개를 한꺼번에 살려 둡니다. 주소와 합까지 더하면 약속이 남겨 주는 register 32개를 넘습니다.",
    "__launch_bounds__(256, 8) stays, so the kernel must need fewer registers: the values only have to live until the "
    "norm is known. Read the column twice instead of keeping it - once for the sum of squares, once to scale and "
    "write.":
        "__launch_bounds__(256, 8)는 그대로이므로 커널이 register를 덜 써야 합니다. 값은 norm을 알 때까지만 살아 "
        "있으면 됩니다. 열을 들고 있지 말고 두 번 읽습니다. 한 번은 제곱합을 위해, 한 번은 크기를 바꿔 쓰기 "
        "위해서입니다.",
    "Drop the array: a first loop over the rows adds the squares of x into one float; a second loop reads x again, "
    "multiplies by the inverse norm and writes y. Only the running sum lives across a loop, and although y may be x, "
    "each value is read before it is overwritten.":
        "배열을 없앱니다. 첫 loop는 행을 돌며 x의 제곱을 float 하나에 더하고, 두 번째 loop는 x를 다시 읽어 norm의 "
        "역수를 곱해 y에 씁니다. loop를 넘어 살아 있는 것은 누적 합뿐이고, y가 x일 수도 있지만 값마다 덮어쓰기 전에 "
        "읽습니다.",
    # 2.6.1
    "Count what the kernel reads: head single floats before the first 16-byte boundary, then quads whole float4. "
    "Compare head + 4 x quads with n for n = 1001, or for a view that starts 4 bytes past a boundary.":
        "커널이 읽는 원소를 셉니다. 첫 16바이트 경계 앞의 float head개, 그다음 온전한 float4 quads개입니다. n = "
        "1001일 때, 또는 경계에서 4바이트 지나 시작하는 view일 때 head + 4 x quads를 n과 비교합니다.",
    "Up to 3 elements after the last whole float4 are never read: the tail. The second launch, the same kernel over "
    "the partials, loses its own tail the same way whenever the partials do not end on a whole float4.":
        "마지막 온전한 float4 뒤의 원소 3개까지는 아무도 읽지 않습니다. 그것이 tail입니다. partial 위에 같은 커널을 "
        "다시 띄우는 두 번째 launch도 partial이 온전한 float4로 끝나지 않으면 같은 식으로 tail을 잃습니다.",
    "After the float4 loop and the head, let thread t of the grid add one more element, the one at head + 4 x quads + "
    "t, when t is below the number of elements left; the block reduction then sums it with the rest.":
        "float4 loop와 head 다음에, grid의 thread t가 남은 원소 수보다 t가 작을 때 원소 하나를 더 더하게 합니다. head "
        "+ 4 x quads + t에 있는 원소입니다. 그다음 block reduction이 나머지와 함께 더합니다.",
    # 2.7.1
    "Look at the two expf calls, in the sum and in the output, and at what the kernel computes before them and then "
    "never uses.":
        "합과 출력에 있는 expf 호출 두 개를 보고, 커널이 그 앞에서 계산해 놓고 쓰지 않는 값을 봅니다.",
    "expf overflows fp32 past about 88.7 and underflows below about -87.3: rows near +100 give inf / inf = NaN, rows "
    "near -120 give 0 / 0. Softmax does not change when the same constant is subtracted from every element of a row: "
    "subtract the row's max.":
        "expf는 약 88.7을 넘으면 fp32에서 overflow하고 약 -87.3보다 작으면 underflow합니다. +100 근처의 행은 inf / "
        "inf = NaN, -120 근처의 행은 0 / 0이 됩니다. softmax는 행의 모든 원소에서 같은 상수를 빼도 바뀌지 않습니다. "
        "행의 최댓값을 뺍니다.",
    "Give both expf calls the element minus m, the row max the kernel already has: the largest exponent becomes 0, "
    "the sum is at least 1, and nothing overflows or divides 0 by 0.":
        "두 expf 호출 모두에 원소에서 m(커널이 이미 구한 행 최댓값)을 뺀 값을 넘깁니다. 가장 큰 지수가 0이 되어 합이 "
        "1 이상이 되고, overflow도 0 / 0도 생기지 않습니다.",
}
