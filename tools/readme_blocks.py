"""The READMEs' generated blocks in English and Korean (tools/readme_tables.py writes them into the pages): the words
of each language, the labs' Korean titles, the key plots, and each block - the phase map, the device, the headline
table, the plots, the targets, a lab's answer in its phase guide and its measured rows in its lesson, and a GPU's
results page. The GPUs side by side (gpus_block) read every results folder, and stay in tools/readme_tables.py."""
from __future__ import annotations

import glob
import os

from tools.readme_results import ROOT, _cell, _fmt, _is_num, _shape_label, headline, labs, target_rows

# Plots the README shows, in this order: (English caption, Korean caption, file names to try in results/<gpu>/).
KEY_PLOTS = [
    ("vector add: bandwidth vs size", "vector add: 크기별 대역폭", ["phase1_lab02_vector_add.png"]),
    ("bandwidth vs working set (L1, L2, HBM)", "working set 크기별 대역폭 (L1, L2, HBM)",
     ["phase1_lab04_memory_hierarchy_bandwidth.png"]),
    ("reduction ladder vs torch.sum", "reduction ladder와 torch.sum", ["phase2_lab06_reduction.png"]),
    ("softmax ladder vs torch.compile", "softmax ladder와 torch.compile",
     ["phase2_lab07_softmax_32768x4096_float32.png", "phase2_lab07_softmax.png"]),
    ("SGEMM ladder vs cuBLAS", "SGEMM ladder와 cuBLAS", ["phase2_lab08_sgemm_ladder.png", "phase2_lab08_sgemm.png"]),
    ("Triton matmul vs cuBLAS", "Triton matmul과 cuBLAS", ["phase3_lab02_matmul.png"]),
    ("attention vs torch SDPA", "attention과 torch SDPA", ["phase4_lab06_attention.png"]),
    ("the repository's roofline", "저장소 전체의 roofline", ["phase4_lab01_roofline.png"]),
]

# Korean titles of the labs (the English ones come from the docstrings; a lab missing here shows its English title).
KO_TITLES = {
    "phase1_architecture.lab01_device_tour":
        "디바이스 둘러보기: GPU와 소프트웨어 스택, 그리고 이 GPU에서 '빠르다'의 의미.",
    "phase1_architecture.lab02_vector_add": "Vector add: 첫 커널로 메모리 대역폭의 한계를 읽는 법.",
    "phase1_architecture.lab03_thread_hierarchy":
        "Thread, warp, block, grid: 각 thread가 어디서 언제 도는지, divergent branch의 비용.",
    "phase1_architecture.lab04_memory_hierarchy":
        "메모리 계층: working set 크기별 대역폭, 단계별 latency, shared memory와 register가 global memory보다 얼마나 "
        "빠른가.",
    "phase1_architecture.lab05_occupancy":
        "Occupancy: SM 하나가 담는 warp 수, 그것을 제한하는 자원, occupancy를 높여서 얻는 것.",
    "phase1_architecture.lab06_matmul_naive":
        "Naive 행렬 곱: 출력 하나에 thread 하나, coalescing 여부, phase 2가 개선할 기준선.",
    "phase2_cuda.lab01_coalescing_transpose": "Memory coalescing: 행렬 transpose, 그리고 sector를 세는 strided copy.",
    "phase2_cuda.lab02_bank_conflicts":
        "Shared memory와 bank conflict: 1-way부터 32-way까지 측정, padding과 swizzle로 해결.",
    "phase2_cuda.lab03_warp_shuffle":
        "Warp shuffle: register 안에서 하는 warp 단위 reduce와 scan, shared memory 버전과 비교.",
    "phase2_cuda.lab04_launch_config": "Launch configuration: block 크기, grid 크기, wave, 마지막 partial wave의 tail.",
    "phase2_cuda.lab05_register_pressure":
        "Register pressure: thread당 작업량, register, occupancy, spill, 그리고 register 상한을 걸면 달라지는 것.",
    "phase2_cuda.lab06_reduction":
        "Reduction: 2007년 교과서 ladder에서 HBM 한계에 닿는 single-pass 커널까지, 그리고 fp32 합에서 잃는 정밀도.",
    "phase2_cuda.lab07_softmax": "Softmax: 커널 세 개에서 바이트당 한 번 읽고 한 번 쓰기까지, torch.compile을 넘어.",
    "phase2_cuda.lab08_sgemm": "SGEMM ladder: naive 커널에서 CUDA core fp32로 cuBLAS의 90% 이상까지.",
    "phase3_triton.lab01_programming_model": "Triton 프로그래밍 모델: program 하나가 block 하나, load하는 것이 tile.",
    "phase3_triton.lab02_matmul": "Block tiling과 tile 단위 메모리 접근: 빠른 Triton matmul.",
    "phase3_triton.lab03_fused_softmax": "Fused softmax: 각 행을 한 번 읽고 한 번 쓴다.",
    "phase3_triton.lab04_layernorm":
        "LayerNorm forward와 backward: 행 통계를 구해 backward용으로 저장하고, 열 방향 reduction은 두 단계로.",
    "phase4_optimization.lab01_roofline":
        "Roofline: 저장소의 모든 커널이 메모리 한계와 연산 한계 사이 어디에 서 있는가.",
    "phase4_optimization.lab02_fusion":
        "커널 fusion: 커널 체인이 옮기는 바이트를 세고, 아무도 쓰지 않는 바이트는 옮기지 않는다.",
    "phase4_optimization.lab03_tensor_cores":
        "Tensor core: wmma, mma.sync(+ ldmatrix, swizzle, cp.async), wgmma + TMA, Triton tl.dot으로 짠 bf16/fp16 GEMM.",
    "phase4_optimization.lab04_tiling_strategy":
        "Tiling 전략: tensor-core GEMM의 tile 모양, warp 수, pipeline stage, wave quantization.",
    "phase4_optimization.lab05_mixed_precision":
        "Mixed precision: fp32, tf32, bf16, fp16, fp8로 정밀도를 낮추면 속도는 얼마나 빨라지고 오차는 얼마나 커지는가.",
    "phase4_optimization.lab06_attention":
        "Attention, naive에서 flash까지: S x S 행렬을 메모리에 두다가, 전혀 두지 않기까지.",
    "phase4_optimization.lab07_transformer_block":
        "이 저장소의 커널로 다시 만든 GPT식 transformer block, PyTorch와 비교.",
}

TEXT = {
    "en": {
        "labs_head": "| lab | what it teaches | command |",
        "head_head": "| lab | headline case | our best kernel | best library peer | ours / peer | target |",
        "no_peer": ("Labs that measure a mechanism and have no library peer: {labs} (their targets and answers are in "
                    "the targets table and the phase guides)."),
        "unmeasured": "Not yet measured on this GPU: {labs}.",
        "head_note": ("Ratio = speed of our kernel / speed of the peer in the same run (above 1: ours is faster). "
                      "From `{src}`; regenerate with `python -m tools.regenerate`."),
        "none": "(no results under `{src}` yet: run `python -m tools.regenerate` on a GPU)",
        "t_head": "| results file | case | ours | peer | measured | target | met | commit |",
        "yes": "yes", "no": "**no**", "unsteady": "no verdict (spread > 3%)", "not_measured": "not measured",
        "t_sum": ("{met} of {n} targets and predictions met. Measured: ours / peer (speed, above 1: ours is "
                  "faster) where a peer is named, else the measured value the prediction is about; from one run "
                  "each."),
        "p_missing": "Not measured yet (the lab writes it on a GPU): {names}.",
        "dev": ("Measured on an **{gpu}** ({sms} SMs, {arch}), CUDA driver {drv}, runtime {rt}; CuPy {cupy}, "
                "Triton {triton}, torch {torch}; {date}, commit {commit}."),
        "ceil": ("Measured HBM ceiling: **{hbm} GB/s** (the best of {methods} on 1 GiB arrays; {frac} of the "
                 "{ds} GB/s datasheet figure)."),
        "cublas": " cuBLAS SGEMM at 4096^3 (TF32 off): **{tf} TFLOP/s**.",
        "gpus_head": "| lab | headline case |",
        "gpus_note": ("Each column: our best kernel / the best library peer at the lab's headline case, measured on "
                      "that GPU in one run (`results/<gpu>/*.json`; a case in brackets where that GPU's headline case "
                      "differs; - not measured there). Ratios travel between GPUs; times do not. What runs on other "
                      "GPUs, and why: [GPUS.md](GPUS.md)."),
        "gpus_one": ("Only one GPU has committed headline results so far ({gpu}){others}; what runs on other GPUs: "
                     "[GPUS.md](GPUS.md)."),
        "gpus_others": "; other results: {links}",
        "a_none": ("*Not yet measured on the {gpu}.* On a GPU, `python -m {module}` writes "
                   "`results/<your-gpu>/{stem}.json`; `python -m tools.regenerate --only {name}` also writes your "
                   "results page."),
        "a_head": "*Measured on the {gpu}* ([{stem}.json]({src}), commit {commit}):",
        "a_best": "- best kernel `{ours}` at {case}: **{ratio}x** the speed of `{peer}`{tgt}.",
        "a_tgt": " (target {target}{met})",
        "a_met": " - met", "a_missed": " - **missed**",
        "a_row": "- {what}: measured {measured}, target {target} - {met}.",
        "met": "met", "missed": "**missed**",
        "a_fastest": "- fastest measured: {best}.",
        "a_plots": "- plots: {links}.",
        "m_gpu": "GPU: {gpu}; measured {date} at commit {commit}; versions {versions}.",
        "m_more": "({n} more cases in [{stem}.json]({src}).)",
        "m_rows": "({n} more rows in the JSON.)",
        "col_variant": "variant", "col_frac": "of HBM ceiling",
        "best_row": "`{variant}` at {case}: {value} {unit}{frac}", "best_frac": ", {frac} of the HBM ceiling",
        "page_title": "# Results on {gpu}",
        "page_intro": ("Generated by `python tools/readme_tables.py --gpu {slug}` (run by `python -m tools.regenerate`)"
                       " from the JSON files in this folder. Ratios compare with the library in the same run, so they "
                       "travel between GPUs better than times do; compare them with the H200 figures in the "
                       "repository's README."),
        "page_device": "## Device", "page_headline": "## Headline: our best kernel vs the library",
        "page_plots": "## Plots", "page_targets": "## Every target and prediction",
    },
    "ko": {
        "labs_head": "| 랩 | 배우는 것 | 명령 |",
        "head_head": "| 랩 | 기준 케이스 | 우리의 최고 커널 | 최고 라이브러리 peer | 우리 / peer | 목표 |",
        "no_peer": ("메커니즘을 측정하고 라이브러리 peer가 없는 랩: {labs} (목표 대비 결과는 목표 표와 phase 가이드에 "
                    "있습니다)."),
        "unmeasured": "이 GPU에서 아직 측정하지 않은 랩: {labs}.",
        "head_note": ("비율 = 같은 실행에서 잰 우리 커널의 속도 / peer의 속도 (1보다 크면 우리가 더 빠름). "
                      "출처 `{src}`; `python -m tools.regenerate`로 다시 만듭니다."),
        "none": "(`{src}`에 아직 결과가 없습니다: GPU에서 `python -m tools.regenerate`를 실행하세요)",
        "t_head": "| 결과 파일 | 케이스 | 우리 | peer | 측정값 | 목표 | 달성 | 커밋 |",
        "yes": "예", "no": "**아니오**", "unsteady": "판정 없음 (spread > 3%)", "not_measured": "측정 안 함",
        "t_sum": ("목표와 예측 {n}개 중 {met}개 달성. 측정값은 peer가 있으면 우리 / peer 속도 비율(1보다 크면 "
                  "우리가 더 빠름)이고, 없으면 예측이 다루는 값을 잰 것입니다. 각각 한 번의 실행에서 잰 값입니다."),
        "p_missing": "아직 측정되지 않음 (GPU에서 랩이 만듭니다): {names}.",
        "dev": ("측정 환경: **{gpu}** (SM {sms}개, {arch}), CUDA driver {drv}, runtime {rt}; CuPy {cupy}, "
                "Triton {triton}, torch {torch}; {date}, 커밋 {commit}."),
        "ceil": ("측정한 HBM 한계: **{hbm} GB/s** (1 GiB 배열에서 {methods} 중 최고값. datasheet {ds} GB/s의 {frac})."),
        "cublas": " 4096^3 cuBLAS SGEMM (TF32 끔): **{tf} TFLOP/s**.",
        "gpus_head": "| 랩 | 기준 케이스 |",
        "gpus_note": ("각 열은 그 GPU에서 한 번의 실행으로 잰, 랩 기준 케이스의 우리 최고 커널 / 최고 라이브러리 peer "
                      "비율입니다(`results/<gpu>/*.json`). 그 GPU의 기준 케이스가 다르면 괄호 안에 적고, 측정하지 "
                      "않은 칸은 비워 둡니다. 비율은 GPU가 바뀌어도 비교할 수 있지만 시간은 그렇지 않습니다. 다른 "
                      "GPU에서 무엇이 실행되고 왜 그런지는 [GPUS.ko.md](GPUS.ko.md)에 있습니다."),
        "gpus_one": ("아직 한 GPU({gpu})의 기준 결과만 커밋되어 있습니다{others}. 다른 GPU에서 무엇이 실행되는지는 "
                     "[GPUS.ko.md](GPUS.ko.md)에 있습니다."),
        "gpus_others": "(그 밖의 결과: {links})",
        "a_none": ("*{gpu}에서는 아직 측정하지 않았습니다.* GPU에서 `python -m {module}`을 실행하면 "
                   "`results/<your-gpu>/{stem}.json`이 만들어집니다. `python -m tools.regenerate --only {name}`은 "
                   "결과 페이지도 함께 씁니다."),
        "a_head": "*{gpu}에서 측정* ([{stem}.json]({src}), 커밋 {commit}):",
        "a_best": "- 최고 커널 `{ours}`, {case}: `{peer}` 속도의 **{ratio}배**{tgt}.",
        "a_tgt": " (목표 {target}{met})",
        "a_met": ": 달성", "a_missed": ": **미달**",
        "a_row": "- {what}: 측정 {measured}, 목표 {target}: {met}.",
        "met": "달성", "missed": "**미달**",
        "a_fastest": "- 가장 빠른 측정값: {best}.",
        "a_plots": "- plot: {links}.",
        "m_gpu": "GPU: {gpu}. {date}에 커밋 {commit}에서 측정했습니다. 버전: {versions}.",
        "m_more": "(나머지 케이스 {n}개는 [{stem}.json]({src})에 있습니다.)",
        "m_rows": "(나머지 행 {n}개는 JSON에 있습니다.)",
        "col_variant": "variant", "col_frac": "HBM 한계 대비",
        "best_row": "`{variant}`, {case}: {value} {unit}{frac}", "best_frac": ", HBM 한계의 {frac}",
        "page_title": "# {gpu}에서 측정한 결과",
        "page_intro": ("이 페이지는 이 폴더의 JSON 파일로 `python tools/readme_tables.py --gpu {slug}`가 만듭니다"
                       "(`python -m tools.regenerate`가 실행합니다). 비율은 같은 실행 안에서 라이브러리와 비교한 "
                       "값이므로 시간보다 GPU 사이에서 더 잘 비교됩니다. 저장소 README의 H200 수치와 비교해 "
                       "보십시오."),
        "page_device": "## 장치", "page_headline": "## 기준 비교: 우리 최고 커널과 라이브러리",
        "page_plots": "## Plot", "page_targets": "## 모든 목표와 예측",
    },
}


# ---------------------------------------------------------------------------------------------------------------------
# Blocks
# ---------------------------------------------------------------------------------------------------------------------
def labs_block(lang: str = "en") -> str:
    lines = [TEXT[lang]["labs_head"], "|---|---|---|"]
    for lab in labs():
        title = KO_TITLES.get(lab["module"], lab["title"]) if lang == "ko" else lab["title"]
        lines.append(f"| {lab['num']} | {_cell(title)} | `python -m {lab['module']}` |")
    return "\n".join(lines)


def device_block(docs: dict[str, dict], lang: str = "en") -> str:
    T = TEXT[lang]
    tour = docs.get("phase1_lab01_device_tour")
    if not tour:
        return T["none"].format(src="results/<gpu>/phase1_lab01_device_tour.json")
    d, v, bw = tour.get("device") or {}, tour.get("versions") or {}, tour.get("bandwidth") or {}
    out = T["dev"].format(gpu=tour.get("gpu", "?"), sms=d.get("sms", "?"), arch=d.get("arch", "?"),
                          drv=v.get("cuda_driver", "?"), rt=v.get("cuda_runtime", "?"), cupy=v.get("cupy", "?"),
                          triton=v.get("triton", "?"), torch=v.get("torch", "?"),
                          date=str(tour.get("date", "?"))[:10], commit=tour.get("commit", "?"))
    hbm, ds = bw.get("measured_ceiling_gbps"), bw.get("datasheet_gbps")
    if _is_num(hbm):
        methods = ", ".join(f"`{m}`" for m in (bw.get("measured_all") or {})) or "copies"
        out += "\n" + T["ceil"].format(hbm=_fmt(float(hbm)), methods=methods, ds=_fmt(ds) if ds else "?",
                                       frac=_fmt(hbm / ds) if _is_num(ds) and ds else "?")
    sg = docs.get("phase2_lab08_sgemm")
    if sg:
        peers = [r for r in sg.get("rows") or [] if r.get("impl") == "peer" and r.get("shape") == [4096] * 3
                 and _is_num(r.get("tflops"))]
        if peers:
            out += T["cublas"].format(tf=_fmt(max(r["tflops"] for r in peers)))
    return out


def headline_block(docs: dict[str, dict], gpu: str, lang: str = "en") -> str:
    T = TEXT[lang]
    if not docs:
        return T["none"].format(src=f"results/{gpu}/")
    lines = [T["head_head"], "|---|---|---|---|---|---|"]
    no_peer, missing = [], []
    for lab in labs():
        doc = docs.get(lab["stem"])
        if doc is None:
            missing.append(lab["num"])
            continue
        h = headline(doc, lab["stem"])
        if h is None:
            no_peer.append(lab["num"])
            continue
        tgt = h["target"]
        if tgt and h["met"] is not None:
            tgt = f"{tgt} ({T['yes'] if h['met'] else T['no']})"
        lines.append(f"| {lab['num']} | {_cell(h['case'])} | {_cell(h['ours'])} | {_cell(h['peer'])} | "
                     f"**{_fmt(h['ratio'])}** | {_cell(tgt)} |")
    lines += ["", T["head_note"].format(src=f"results/{gpu}/*.json")]
    if no_peer:
        lines += ["", T["no_peer"].format(labs=", ".join(no_peer))]
    if missing:
        lines += ["", T["unmeasured"].format(labs=", ".join(missing))]
    return "\n".join(lines)


def plots_block(gpu: str, lang: str = "en", rel: str = "") -> str:
    """The key plots as a two-column table of images; `rel` is the path from the page to results/<gpu>/."""
    T = TEXT[lang]
    have, missing = [], []
    for en, ko, names in KEY_PLOTS:
        cap = ko if lang == "ko" else en
        found = next((n for n in names if os.path.exists(os.path.join(ROOT, "results", gpu, n))), None)
        if found:
            have.append(f"![{cap}]({rel}{korean_png(gpu, found, lang)})<br>{cap}")
        else:
            missing.append(cap)
    lines = []
    if have:
        lines = ["| | |", "|---|---|"]
        for i in range(0, len(have), 2):
            pair = have[i:i + 2] + [""] * (2 - len(have[i:i + 2]))
            lines.append(f"| {pair[0]} | {pair[1]} |")
    if missing:
        lines += ([""] if lines else []) + [T["p_missing"].format(names=", ".join(missing))]
    return "\n".join(lines)


def targets_block(docs: dict[str, dict], gpu: str, lang: str = "en") -> str:
    T = TEXT[lang]
    rows = target_rows(docs, T["yes"], T["no"], T["unsteady"], T["not_measured"])
    if not rows:
        return T["none"].format(src=f"results/{gpu}/")
    out = [T["t_head"], "|---|---|---|---|---|---|---|---|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    met = sum(r[6] == T["yes"] for r in rows)
    out += ["", T["t_sum"].format(met=met, n=len(rows))]
    return "\n".join(out)


def korean_png(gpu: str, png: str, lang: str) -> str:
    """The plot a page of `lang` shows: results/<gpu>/ko/<png> (drawn with --lang ko) on a Korean page where it
    exists, else the plot itself."""
    if lang == "ko" and os.path.exists(os.path.join(ROOT, "results", gpu, "ko", png)):
        return f"ko/{png}"
    return png


def answer_block(lab: dict, docs: dict[str, dict], gpu: str, rel: str, lang: str = "en") -> str:
    """What a lab measured, for its phase README: headline, targets, plots; or how to measure it."""
    T = TEXT[lang]
    doc = docs.get(lab["stem"])
    if doc is None:
        return T["a_none"].format(gpu=gpu.upper(), module=lab["module"], stem=lab["stem"], name=lab["name"])
    gpu_name = doc.get("gpu", gpu)
    src = f"{rel}{lab['stem']}.json"
    lines = [T["a_head"].format(gpu=gpu_name, stem=lab["stem"], src=src, commit=doc.get("commit", "?"))]
    h = headline(doc, lab["stem"])
    if h:
        met = "" if h["met"] is None else (T["a_met"] if h["met"] else T["a_missed"])
        tgt = T["a_tgt"].format(target=h["target"], met=met) if h["target"] else ""
        lines.append(T["a_best"].format(ours=h["ours"], case=h["case"], ratio=_fmt(h["ratio"]), peer=h["peer"],
                                        tgt=tgt))
    for r in target_rows({lab["stem"]: doc}, T["met"], T["missed"], T["unsteady"], T["not_measured"]):
        what = ", ".join(x for x in (r[1], r[2]) if x) + (f" vs {r[3]}" if r[3] else "")
        what = what if lang == "en" else f"`{what}`"
        lines.append(T["a_row"].format(what=what, measured=r[4], target=r[5], met=r[6]))
    for f in doc.get("facts") or []:         # other measured figures a lab names (a ceiling, a fraction of it)
        if isinstance(f, dict) and _is_num(f.get("value")):
            fact = _cell(f.get("fact", "")) if lang == "en" else f"`{_cell(f.get('fact', ''))}`"
            lines.append(f"- {fact}: {_fmt(f['value'])}{_cell(f.get('unit', ''))}.")
    if not h:
        best = best_row(doc, lang)
        if best:
            lines.append(T["a_fastest"].format(best=best))
    pngs = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "results", gpu, lab["stem"] + "*.png")))
    if pngs:
        lines.append(T["a_plots"].format(links=", ".join(f"[{p[:-4]}]({rel}{korean_png(gpu, p, lang)})"
                                                          for p in pngs)))
    return "\n".join(lines)


MEASURE_KEYS = (("gbps", "GB/s"), ("tflops", "TFLOP/s"))
ROW_CAP = 24          # rows per case table in a lab's measured block (the JSON has every row)


def _case_groups(doc: dict) -> list[tuple[str, list[dict]]]:
    """The lab's timed rows grouped by (shape, dtype[, part]), in the order the lab wrote them (its main table
    first)."""
    groups: dict[tuple, list[dict]] = {}
    for r in doc.get("rows") or []:
        if not isinstance(r, dict) or not any(_is_num(r.get(k)) for k, _ in MEASURE_KEYS) or not r.get("variant"):
            continue
        key = (tuple(r.get("shape") or []), r.get("dtype", ""), r.get("part", ""))
        groups.setdefault(key, []).append(r)
    order = list(groups)
    return [((_shape_label(list(k[0]), k[1]) or "all rows") + (f" ({k[2]})" if k[2] else ""), groups[k])
            for k in order]


def rows_table(rows: list[dict], lang: str = "en") -> list[str]:
    """A Markdown table of timed rows: variant, time, throughput, fraction of the ceiling, and every vs_* ratio."""
    # the unit that judges the case: TFLOP/s for compute-bound rows (many FLOPs per byte: GEMMs, attention), GB/s
    # for memory-bound ones (softmax rows carry a TFLOP/s figure too, at ~1 FLOP per byte)
    def intensity(r):
        return 1000.0 * r["tflops"] / r["gbps"] if _is_num(r.get("tflops")) and _is_num(r.get("gbps")) and r["gbps"] \
            else None
    dense = [i for i in (intensity(r) for r in rows) if i is not None]
    if any(_is_num(r.get("tflops")) for r in rows) and (not any(_is_num(r.get("gbps")) for r in rows)
                                                       or (dense and min(dense) > 50)):
        unit_key, unit = "tflops", "TFLOP/s"
    else:
        unit_key, unit = next(((k, u) for k, u in MEASURE_KEYS if any(_is_num(r.get(k)) for r in rows)),
                              MEASURE_KEYS[0])
    ratios = [k for k in dict.fromkeys(k for r in rows for k in r if k.startswith("vs_")) if
              any(_is_num(r.get(k)) for r in rows)]
    frac = any(_is_num(r.get("frac_ceiling")) for r in rows) and unit_key == "gbps"
    T = TEXT[lang]
    head = [T["col_variant"], "ms", unit] + ([T["col_frac"]] if frac else []) + [k.replace("_", " ") for k in ratios]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows[:ROW_CAP]:
        cells = [f"`{r['variant']}`", _fmt(r.get("ms")), _fmt(r.get(unit_key))]
        cells += [_fmt(r.get("frac_ceiling"))] if frac else []
        cells += [_fmt(r.get(k)) for k in ratios]
        out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    if len(rows) > ROW_CAP:
        out.append("\n" + T["m_rows"].format(n=len(rows) - ROW_CAP))
    return out


def measured_block(lab: dict, docs: dict[str, dict], gpu: str, rel: str, max_cases: int = 4,
                   lang: str = "en") -> str:
    """A lab README's generated block: the summary its phase guide shows, then the measured rows case by case and
    the plots inline (on a Korean page the plots drawn for Korean, where they exist). Nothing in it is typed by hand."""
    T = TEXT[lang]
    doc = docs.get(lab["stem"])
    lines = [answer_block(lab, docs, gpu, rel, lang)]
    if doc is None:
        return lines[0]
    versions = ", ".join(f"{k} {v}" for k, v in (doc.get("versions") or {}).items() if k in ("cupy", "triton", "torch"))
    lines += ["", T["m_gpu"].format(gpu=doc.get("gpu", gpu), date=str(doc.get("date", "?"))[:10],
                                    commit=doc.get("commit", "?"), versions=versions)]
    groups = _case_groups(doc)
    for label, rows in groups[:max_cases]:
        lines += ["", f"**{label}**", ""] + rows_table(rows, lang)
    if len(groups) > max_cases:
        lines += ["", T["m_more"].format(n=len(groups) - max_cases, stem=lab["stem"], src=f"{rel}{lab['stem']}.json")]
    pngs = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "results", gpu, lab["stem"] + "*.png")))
    for png in pngs:
        lines += ["", f"![{png[:-4]}]({rel}{korean_png(gpu, png, lang)})"]
    return "\n".join(lines)


def best_row(doc: dict, lang: str = "en") -> str:
    """The highest-throughput row of a lab without a peer ('' when none), at the largest size measured."""
    T = TEXT[lang]
    rows = [r for r in doc.get("rows") or [] if isinstance(r, dict) and r.get("impl") in ("cuda", "triton")]
    for unit, key, scale in (("GB/s", "gbps", 1.0), ("TFLOP/s", "tflops", 1.0)):
        rs = [r for r in rows if _is_num(r.get(key)) and r[key] > 0]
        if rs:
            r = max(rs, key=lambda r: r[key])
            fc = r.get("frac_ceiling")
            frac = T["best_frac"].format(frac=_fmt(fc)) if key == "gbps" and _is_num(fc) and fc <= 1.5 else ""
            return T["best_row"].format(variant=r.get("variant"), case=_shape_label(r.get("shape") or [],
                                                                                     r.get("dtype", "")),
                                        value=_fmt(r[key] * scale), unit=unit, frac=frac)
    return ""


def gpu_name(docs: dict[str, dict], gpu: str) -> str:
    """The GPU's name as its results files record it (the first that does), else its folder's name."""
    return next((d.get("gpu") for d in docs.values() if d.get("gpu")), gpu)


def results_page(docs: dict[str, dict], gpu: str, lang: str = "en") -> str:
    """results/<gpu>/README.md (README.ko.md): the same tables and plots as the README, for one GPU's results."""
    T = TEXT[lang]
    name = gpu_name(docs, gpu)
    return "\n".join([
        T["page_title"].format(gpu=name), "", T["page_intro"].format(slug=gpu), "",
        T["page_device"], "", device_block(docs, lang),
        "", T["page_headline"], "", headline_block(docs, gpu, lang),
        "", T["page_plots"], "", plots_block(gpu, lang, ""),
        "", T["page_targets"], "", targets_block(docs, gpu, lang),
        "",
    ])
