"""Korean lines of what lab 2.4 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # --help
    "n of the heat map (default 2^27, quick 2^24)": "heat map의 n (기본값 2^27, quick 2^24)",

    # the predictions (--plan)
    "floor at n = {n} (8 n B / {bw:.0f} GB/s)": "n = {n}에서 시간의 하한 (8 n B / {bw:.0f} GB/s)",
    "resident threads that saturate {gbps:.0f} GB/s at {us} us": "{us} us에서 {gbps:.0f} GB/s를 채우는 상주 thread 수",
    "{n:,} of {total:,}": "{total:,}개 중 {n:,}개",
    "{b}-thread blocks: one wave": "{b}-thread block: wave 하나",
    "{blocks:,} blocks ({per_sm}/SM, {limit}), {threads:,} threads, {gbps:.0f} GB/s":
        "block {blocks:,}개 (SM당 {per_sm}개, {limit}), thread {threads:,}개, {gbps:.0f} GB/s",
    "one float4 per thread, 256-thread blocks": "thread마다 float4 하나, 256-thread block",
    "{n:.0f} waves": "wave {n:.0f}개",
    "tail: {w:g} waves (in wave-times; fluid {w:g}, quantized {q})":
        "tail: wave {w:g}개 (wave 시간 단위. 연속 모델 {w:g}, 양자화 모델 {q})",

    # the compile report, on every machine
    "{gpu}: one wave of scale_grid_stride_float4 ({regs} registers), predicted with Little's law, capped at 90% of "
    "{gbps:.0f} GB/s":
        "{gpu}: scale_grid_stride_float4(register {regs}개)의 wave 하나, Little's law로 예측, {gbps:.0f} GB/s의 90%로 "
        "상한",
    "threads/block": "block당 thread",
    "blocks/SM": "SM당 block",
    "limited by": "제한 요인",
    "wave ({sms} SMs)": "wave (SM {sms}개)",
    "resident threads": "상주 thread",
    "pred GB/s (L={us} us)": "예측 GB/s (L={us} us)",
    "-> Little's law: {n:,} resident threads x 16 B in flight reach the cap at {us} us; this GPU holds {total:,}.":
        "-> Little's law: {us} us에서는 상주 thread {n:,}개 x in flight 16 B가 상한에 닿습니다. 이 GPU에는 {total:,}개가 "
        "상주할 수 있습니다.",
    "tail effect, predicted time in units of one full wave (256-thread blocks)":
        "tail 효과, 꽉 찬 wave 하나를 단위로 한 예측 시간 (256-thread block)",
    "quantized": "양자화 모델",
    "fluid": "연속 모델",
    "Little's law": "Little's law 모델",
    "\nCUDA C kernels were compiled, not run (no GPU); the Triton kernel ran in the interpreter. The tables above are "
    "predictions: the GPU run measures the heat map and the tail.":
        "\nGPU가 없어 CUDA C 커널은 컴파일만 하고 실행하지 않았습니다. Triton 커널은 interpreter에서 실행했습니다. "
        "위의 표는 예측입니다. GPU에서 실행하면 heat map과 tail을 잽니다.",

    # the plan
    ", {waves:g} waves": ", wave {waves:g}개",
    ", {waves:g} wave": ", wave {waves:g}개",
    "tail: 1.25 waves, {iters} float4 per thread": "tail: wave 1.25개, thread마다 float4 {iters}개",

    # the benchmark (GPU)
    "block x grid": "block x grid 조합",
    "tail": "tail 측정",
    "-> latency implied by the latency-bound cells (median): {lat:.2f} us (a priori assumption: {us} us)":
        "-> latency에 묶인 칸에서 계산한 latency (중앙값): {lat:.2f} us (처음 가정: {us} us)",
    "heat map: y = a*x on {n:,} fp32, measured ceiling {c:.0f} GB/s; pred_gbps assumes {us} us of latency":
        "heat map: fp32 {n:,}개에 y = a*x, 측정한 한계 {c:.0f} GB/s. pred_gbps는 latency {us} us를 가정합니다",
    "waves": "wave 수",
    "resident_threads": "상주 thread",
    "implied_latency_us": "계산한 latency us",
    "tail effect: {iters} float4 per thread, 256-thread blocks, 1 wave = {blocks} blocks (tail_cost: 0 = no tail "
    "penalty, 1 = a whole wave)":
        "tail 효과: thread마다 float4 {iters}개, 256-thread block, wave 1개 = block {blocks}개 (tail_cost: 0 = tail "
        "손해 없음, 1 = wave 하나 전체)",
    "time_in_waves": "wave 단위 시간",
    "quantized_model": "양자화 모델",
    "fluid_model": "연속 모델",
    "little_model": "Little's law 모델",
    "tail_cost": "tail 비용",
    "how to choose: the best grid for each block size": "고르는 법: block 크기마다 가장 좋은 grid",
    "best grid": "가장 좋은 grid",
    "of ceiling": "한계 대비",

    # the plots
    "grid size (waves of resident blocks; grid-stride loop)": "grid 크기 (상주 block wave 수, grid-stride loop)",
    "threads per block": "block당 thread",
    "y = a*x, {n:,} fp32: GB/s on {gpu} (ceiling {c:.0f})": "y = a*x, fp32 {n:,}개: {gpu}의 GB/s (한계 {c:.0f})",
    "measured time / time of 1 wave": "측정 시간 / wave 1개의 시간",
    "quantized: ceil(waves)": "양자화 모델: ceil(wave 수)",
    "fluid: waves": "연속 모델: wave 수",
    "Little's law (fitted latency)": "Little's law (맞춘 latency)",
    "grid size in waves (256 threads, fixed work per block)": "wave 단위 grid 크기 (thread 256개, block마다 같은 일)",
    "time in units of one full wave": "꽉 찬 wave 하나를 단위로 한 시간",
    "Tail effect on {gpu}": "{gpu}의 tail 효과",

    # --set values the kernels cannot take
    "triton scale_kernel: BLOCK a power of two in 128..16384, num_warps in 1..32 (a power of two); got {got}":
        "triton scale_kernel: BLOCK은 128..16384 범위의 2의 거듭제곱, num_warps는 1..32 범위의 2의 거듭제곱이어야 합니다. 받은 값: {got}",
}
