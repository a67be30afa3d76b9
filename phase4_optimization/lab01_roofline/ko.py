"""Korean lines of what lab 4.1 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # the variant, the plan, the command line
    "k FFMAs per element, AI = k/4 FLOP/B": "원소마다 FFMA k개, AI = k/4 FLOP/B",
    "the k-FMA sweep launches one compiled kernel for every k (k is a run-time argument); the placement of the other "
    "labs' kernels launches nothing":
        "k-FMA sweep은 모든 k에 대해 컴파일한 커널 하나를 launch합니다(k는 실행 시간 인자입니다). 다른 랩 커널의 "
        "배치는 아무것도 launch하지 않습니다",
    "folder of result JSON files to place (default: results/<this GPU>; without a GPU, where that folder does not "
    "exist, the first committed GPU folder)":
        "배치할 결과 JSON 파일의 폴더 (기본값: results/<this GPU>. GPU가 없고 그 폴더도 없으면 커밋된 첫 GPU 폴더)",
    "on a GPU: measure HBM and the tensor-core / fp32 peaks (torch.matmul 8192^3) and cache them in <out>/{file}":
        "GPU에서: HBM과 tensor core / fp32 최고 성능을 측정하고(torch.matmul 8192^3) <out>/{file}에 저장해 둡니다",
    "which figures are the roofs (default: measured where there is a measurement)":
        "어느 수치를 roof로 쓸지 (기본값: 측정값이 있으면 측정값)",
    "run the k-FMA AI sweep on a GPU": "GPU에서 k-FMA AI sweep을 실행합니다",

    # explain and predict
    "The roofs before any measurement: {source}, HBM {hbm:,} GB/s (a kernel left of its unit's ridge is memory-bound)":
        "측정 전의 roof: {source}, HBM {hbm:,} GB/s (연산 장치의 ridge보다 왼쪽에 있는 커널은 memory-bound입니다)",
    "The roofs before any measurement: {gpu} is not in the course's table of GPUs, so there are no datasheet peaks; "
    "HBM from its memory clock and bus width: {gbps:,.0f} GB/s. Measure the compute roofs with --measure.":
        "측정 전의 roof: {gpu}는 이 과정의 GPU 표에 없어서 datasheet 최고 성능이 없습니다. memory clock과 bus 폭으로 "
        "계산한 HBM은 {gbps:,.0f} GB/s입니다. 연산 roof는 --measure로 측정하십시오.",
    "unit": "연산 장치",
    "peak TFLOP/s": "최고 TFLOP/s",
    "(on this GPU the kernels are placed after the k-FMA sweep, on this run's measured roofs)":
        "(이 GPU에서는 k-FMA sweep 다음에, 이번 실행에서 측정한 roof 위에 커널을 배치합니다)",
    "HBM roof (datasheet, else memory clock x bus)": "HBM roof (datasheet, 없으면 memory clock x bus)",
    "k-FMA sweep leaves the HBM roof near (k = 4 x fp32 ridge)": "k-FMA sweep이 HBM roof를 떠나는 지점 (k = 4 x fp32 ridge)",
    "k-FMA sweep": "k-FMA sweep",
    "no fp32 datasheet peak for this GPU: the crossing is not predicted":
        "이 GPU에는 fp32 datasheet 최고 성능이 없어서 교차점을 예측하지 않습니다",
    "k-FMA sweep floor at k = 1, n = {n} (8 n B over HBM)": "k = 1, n = {n}에서 k-FMA sweep의 하한 (8 n B를 HBM으로 나눔)",

    # the placement
    "  note: {text}": "  참고: {text}",
    "Ceilings ({gpu}; results from {where}):": "한계 ({gpu}, 결과 출처: {where}):",
    "unknown GPU": "알 수 없는 GPU",
    "none recorded": "기록 없음",
    "measured ({method}, {file})": "측정값 ({method}, {file})",
    "measured HBM ceiling recorded in {file} (highest of {n} records)":
        "{file}에 기록된 측정 HBM 한계 (기록 {n}개 중 가장 높은 값)",
    "measured in this run ({how})": "이번 실행에서 측정 ({how})",
    "{gpu}'s memory clock x bus width (no datasheet entry)": "{gpu}의 memory clock x bus 폭 (datasheet 항목 없음)",
    "measured peer: {what}": "측정한 peer: {what}",
    "FFMA register probe ({variant}, {file}): {tflops} TFLOP/s fp32 - what the CUDA cores reach with no memory "
    "traffic":
        "FFMA register probe ({variant}, {file}): fp32 {tflops} TFLOP/s. 메모리 traffic이 없을 때 CUDA core가 내는 "
        "값입니다",
    "no datasheet entry for {gpu} in the course's table of GPUs: no datasheet roofs":
        "이 과정의 GPU 표에 {gpu}의 datasheet 항목이 없습니다: datasheet roof가 없습니다",
    "no datasheet entry for {gpu} in the course's table of GPUs: no datasheet roofs, and no compute roof at all "
    "(measure them with --measure)":
        "이 과정의 GPU 표에 {gpu}의 datasheet 항목이 없습니다: datasheet roof도, 연산 roof도 없습니다(--measure로 "
        "측정하십시오)",
    "no recorded results of {gpu} in results/{slug}/ yet: only this run's own measurements are placed (run the other "
    "labs on this GPU, then this one again, to place theirs)":
        "results/{slug}/에 아직 {gpu}의 기록된 결과가 없습니다. 이번 실행의 측정값만 배치합니다(다른 랩의 결과도 "
        "배치하려면 이 GPU에서 다른 랩을 실행한 다음 이 랩을 다시 실행하십시오)",
    "no recorded results in results/ at all (and none of {gpu}): nothing to place":
        "results/에 기록된 결과가 전혀 없습니다({gpu}의 결과도 없음). 배치할 것이 없습니다",
    "{gpu} has no recorded results (results/{slug}/): placing the committed results/{committed}/, on the roofs of the "
    "GPU they were measured on":
        "{gpu}에는 기록된 결과가 없습니다(results/{slug}/). 커밋된 results/{committed}/를 그 결과를 측정한 GPU의 roof "
        "위에 배치합니다",
    "--results: no folder {folder}; nothing recorded to place": "--results: {folder} 폴더가 없습니다. 배치할 기록이 없습니다",
    "{mem} of {placed} placed kernels are memory-bound, {compute} compute-bound. {left} rows left out (sweep points, "
    "duplicates, rows without counts: see 'left_out' in the JSON).":
        "배치한 커널 {placed}개 중 {mem}개는 memory-bound, {compute}개는 compute-bound입니다. 행 {left}개는 "
        "제외했습니다(sweep 점, 중복, 셈이 없는 행: JSON의 'left_out'을 보십시오).",
    "Every kernel placed ({n}; frac_roof = achieved / min(peak of its unit, AI x HBM); memory-only kernels: GB/s / "
    "HBM; on_plot: 'named' = a lab's headline pair, numbered on the roofline, 'listed' = a headline pair with no "
    "point there (no FLOPs), listed beside it, 'table only' = here and in the JSON)":
        "배치한 모든 커널 ({n}개, frac_roof = 달성값 / min(연산 장치의 최고 성능, AI x HBM), 메모리만 쓰는 커널은 "
        "GB/s / HBM, on_plot: '이름 표시' = 랩의 headline 쌍으로 roofline에 이름을 붙인 점, '목록' = roofline에 점이 "
        "없는 headline 쌍(FLOPs 없음)으로 옆 목록에만 있음, '표에만' = 이 표와 JSON에만 있음)",
    "exit 1 if the roofline JSON in DIR (default: the README's results folder) is older than the results files it read "
    "(a recorded content hash no longer matches, or a lab's file is new), 0 if current":
        "DIR(기본값: README가 보여 주는 결과 폴더)의 roofline JSON이 읽은 결과 파일보다 오래되었으면(기록한 내용 hash가 더는 맞지 "
        "않거나 랩의 파일이 새로 생겼으면) 1로, 최신이면 0으로 종료합니다",
    "achieved": "달성값",
    "bound": "병목",
    "frac_roof": "roof 대비",
    "frac_datasheet_roof": "datasheet roof 대비",
    "on_plot": "plot 위치",
    "counts": "셈 출처",
    "named": "이름 표시",
    "listed": "목록",
    "sweep line": "sweep 선",
    "table only": "표에만",
    "memory": "메모리",
    "compute": "연산",
    "memory (no compute peak known)": "메모리 (연산 최고 성능을 모름)",
    "memory (no FLOPs)": "메모리 (FLOPs 없음)",
    "compute? (bytes unknown)": "연산? (바이트를 모름)",
    "{what} from {model}": "{what}: {model}에서 계산",
    "{what} unknown: placed by what it has": "{what} 모름: 있는 값으로 배치",
    "bytes": "바이트",
    "lab's roofline_counts": "랩의 roofline_counts",
    "GEMM model: 2MNK FLOPs, (MK+KN+MN) x elt bytes": "GEMM 모델: 2MNK FLOPs, (MK+KN+MN) x 원소 바이트",
    "softmax model: 5 FLOP/elt": "softmax 모델: 원소당 5 FLOP",
    "attention model: Q, K, V, O once": "attention 모델: Q, K, V, O 한 번씩",
    "layernorm model: 8 (fwd) / 12 (bwd) FLOP/elt": "layernorm 모델: 원소당 8 (fwd) / 12 (bwd) FLOP",
    "The k-FMA sweep's predictions": "k-FMA sweep의 예측",
    "predicted": "예측",
    "measured": '측정',
    "k-FMA sweep, k <= 8 (AI <= 2): worst fraction of the HBM roof": "k-FMA sweep, k <= 8 (AI <= 2): HBM roof 대비 최저 비율",
    "k-FMA sweep, k >= 512 (AI >= 128): worst fraction of the datasheet fp32 peak":
        "k-FMA sweep, k >= 512 (AI >= 128): datasheet fp32 최고 성능 대비 최저 비율",

    # the compile report, the measurement
    "(compile report for sm_{cc} unavailable: {error})": "(sm_{cc}의 컴파일 보고서를 만들 수 없음: {error})",
    "fma_chain_kernel compiled for sm_{cc} (ahead of time): {n_fma} fp32 FMAs in the PTX{paired} (expected {main} in "
    "the 4-way main loop + {per} in the remainder loop: {per} elements a thread), loads {loads} (compiled as the sweep "
    "launches it: 16-byte aligned pointers, n % 16 == 0). The {per} chains of a thread are independent: that is what "
    "hides the FFMA latency.":
        "sm_{cc}용으로 ahead-of-time 컴파일한 fma_chain_kernel: PTX에 fp32 FMA {n_fma}개{paired} (예상: 4갈래 main "
        "loop에 {main}개 + 나머지 loop에 {per}개, thread당 원소 {per}개), load {loads} (sweep이 launch하는 그대로 "
        "컴파일: 16바이트 정렬 pointer, n % 16 == 0). thread 하나의 chain {per}개는 서로 독립입니다. 그것이 FFMA "
        "latency를 가립니다.",
    ", {pairs} of them as {n} packed fma.rn.f32x2 (two chains a instruction)":
        ", 그중 {pairs}개는 packed fma.rn.f32x2 {n}개 (명령어 하나에 chain 두 개)",
    "AI sweep": "AI sweep",
    "\nNo GPU: the k-FMA kernel ran in the interpreter (correctness only) and its sweep was not timed; the "
    "repository's kernels were placed from the recorded results.":
        "\nGPU 없음: k-FMA 커널은 interpreter에서 실행했고(정확도만 봅니다) sweep의 시간은 재지 않았습니다. 저장소의 "
        "커널은 기록된 결과로 배치했습니다.",

    # the plot
    "Roofline of {gpu}: each lab's headline kernel and its library peer (HBM {gbps:,.0f} GB/s; roofs: {roof})":
        "{gpu}의 roofline: 랩마다 headline 커널과 그 라이브러리 peer (HBM {gbps:,.0f} GB/s, roof: {roof})",
    "arithmetic intensity (FLOP per byte of compulsory HBM traffic)": "arithmetic intensity (꼭 필요한 HBM traffic 1바이트당 FLOP)",
    "achieved TFLOP/s": "달성한 TFLOP/s",
    "FFMA (CUDA cores)": "FFMA (CUDA core)",
    "ours, CUDA C": "우리 커널, CUDA C",
    "ours, Triton": "우리 커널, Triton",
    "library peer": "라이브러리 peer",
    "a lab's headline: its best kernel and its peer": "랩의 headline: 가장 좋은 커널과 그 peer",
    "datasheet roofs": "datasheet 기준 roof",
    "k-FMA chain sweep (this lab)": "k-FMA chain sweep (이 랩)",
    "colour = lab (its pair listed at right)": "색 = 랩 (그 쌍은 오른쪽 목록에)",
    "ours vs peer": "우리 커널 / peer",
    " - no roofline point": " - roofline에 점 없음",
    "(no headline pair recorded)": "(기록된 headline 쌍 없음)",
    "each lab's headline (as in the README): its best kernel vs its library peer\nnumber after a kernel = its "
    "fraction of the roof (achieved / min(peak, AI x HBM))":
        "랩마다 headline (README와 같음): 가장 좋은 커널 대 라이브러리 peer\n커널 뒤의 수 = roof 대비 비율 "
        "(달성값 / min(최고 성능, AI x HBM))",
    "(no library peer)": "(라이브러리 peer 없음)",
    "clock x bus": "clock x bus",
    "no roofs in the JSON: rebuilt from its rows' HBM ceiling and the datasheet":
        "JSON에 roof가 없습니다: 행의 HBM 한계와 datasheet로 다시 만들었습니다",
    "nothing placed: no recorded kernel and no k-FMA sweep": "배치한 것 없음: 기록된 커널도, k-FMA sweep도 없습니다",
    "no roofline drawn: the JSON has no roofs and none can be rebuilt ({error})":
        "roofline을 그리지 않았습니다: JSON에 roof가 없고 다시 만들 수도 없습니다 ({error})",
}
