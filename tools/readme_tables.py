"""Write the READMEs' generated blocks from the code and the committed results, or check they are current.

    python tools/readme_tables.py              # rewrite the blocks (README.md, README.ko.md, the phase guides
                                               # and the lab lessons, with their Korean twins)
                                               # and the page results/h200/README.md
    python tools/readme_tables.py --check      # exit 1 when any of them differs from what the sources say
    python tools/readme_tables.py --gpu rtx-4090   # write results/rtx-4090/README.md from results/rtx-4090/*.json
                                               # (the repository's READMEs keep the H200 figures)

Blocks (between <!-- NAME:start --> and <!-- NAME:end --> markers):
  labs            the phase map: every lab that exists, its title (its docstring's first line) and its command
  device          the GPU, the library versions and the measured ceilings the results were taken with
  headline        per lab: its best kernel vs its best library peer at the lab's headline case, as a ratio
  gpus            the headline ratios on every GPU with committed results (results/<gpu>/), side by side
  plots           the key plots that exist under results/<gpu>/, and the ones not measured yet
  targets         every performance target and prediction recorded in results/<gpu>/*.json, met or not
  answer-LABNAME  (phase READMEs) what the lab measured: headline, targets, plots; or "not yet measured"
Nothing in these blocks is typed by hand: change the code or the results, then run this again.
The headline case of a lab is the case of its first performance target against a peer (HEADLINE_CASE picks another
where the issue's main target is not the first), else the largest shape measured against a peer. A lab may also write
a "headline" entry in its JSON header ({"case", "ours", "peer", "ratio", "target", "met"}), which wins.
"""
from __future__ import annotations

import argparse
import glob
import importlib
import json
import math
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
PHASES = ["phase1_architecture", "phase2_cuda", "phase3_triton", "phase4_optimization"]
README_GPU = "h200"          # the GPU whose results the repository's READMEs show

# The case that stands for the lab when its first target is not the main one (a choice, not a number).
HEADLINE_CASE = {"phase2_lab08_sgemm": "4096^3"}
# Labs whose recorded target is about one rung, not the lab's best kernel: their headline comes from the rows (the
# largest case where ours and a peer were both timed); the target still shows in the targets table.
HEADLINE_FROM_ROWS = {"phase4_lab03_tensor_cores"}

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
    "phase1_architecture.lab01_device_tour": "디바이스 둘러보기: GPU와 소프트웨어 스택, 그리고 이 GPU에서 '빠르다'의 의미.",
    "phase1_architecture.lab02_vector_add": "Vector add: 첫 커널로 메모리 대역폭의 한계를 읽는 법.",
    "phase1_architecture.lab03_thread_hierarchy":
        "Thread, warp, block, grid: 각 thread가 어디서 언제 도는지, divergent branch의 비용.",
    "phase1_architecture.lab04_memory_hierarchy":
        "메모리 계층: working set 크기별 대역폭, 단계별 latency, shared memory와 register가 global memory보다 얼마나 빠른가.",
    "phase1_architecture.lab05_occupancy": "Occupancy: SM 하나가 담는 warp 수, 그것을 제한하는 자원, occupancy를 높여서 얻는 것.",
    "phase1_architecture.lab06_matmul_naive": "Naive 행렬 곱: 출력 하나에 thread 하나, coalescing 여부, phase 2가 개선할 기준선.",
    "phase2_cuda.lab01_coalescing_transpose": "Memory coalescing: 행렬 transpose, 그리고 sector를 세는 strided copy.",
    "phase2_cuda.lab02_bank_conflicts": "Shared memory와 bank conflict: 1-way부터 32-way까지 측정, padding과 swizzle로 해결.",
    "phase2_cuda.lab03_warp_shuffle": "Warp shuffle: register 안에서 하는 warp 단위 reduce와 scan, shared memory 버전과 비교.",
    "phase2_cuda.lab04_launch_config": "Launch configuration: block 크기, grid 크기, wave, 마지막 partial wave의 tail.",
    "phase2_cuda.lab05_register_pressure": "Register pressure: thread당 작업량, register, occupancy, spill, 그리고 register 상한을 걸면 달라지는 것.",
    "phase2_cuda.lab06_reduction": "Reduction: 2007년 교과서 ladder에서 HBM 한계에 닿는 single-pass 커널까지, 그리고 fp32 합에서 잃는 정밀도.",
    "phase2_cuda.lab07_softmax": "Softmax: 커널 세 개에서 바이트당 한 번 읽고 한 번 쓰기까지, torch.compile을 넘어.",
    "phase2_cuda.lab08_sgemm": "SGEMM ladder: naive 커널에서 CUDA core fp32로 cuBLAS의 90% 이상까지.",
    "phase3_triton.lab01_programming_model": "Triton 프로그래밍 모델: program 하나가 block 하나, load하는 것이 tile.",
    "phase3_triton.lab02_matmul": "Block tiling과 tile 단위 메모리 접근: 빠른 Triton matmul.",
    "phase3_triton.lab03_fused_softmax": "Fused softmax: 각 행을 한 번 읽고 한 번 쓴다.",
    "phase3_triton.lab04_layernorm": "LayerNorm forward와 backward: 행 통계를 구해 backward용으로 저장하고, 열 방향 reduction은 두 단계로.",
    "phase4_optimization.lab01_roofline": "Roofline: 저장소의 모든 커널이 메모리 한계와 연산 한계 사이 어디에 서 있는가.",
    "phase4_optimization.lab02_fusion": "커널 fusion: 커널 체인이 옮기는 바이트를 세고, 아무도 쓰지 않는 바이트는 옮기지 않는다.",
    "phase4_optimization.lab03_tensor_cores":
        "Tensor core: wmma, mma.sync(+ ldmatrix, swizzle, cp.async), wgmma + TMA, Triton tl.dot으로 짠 bf16/fp16 GEMM.",
    "phase4_optimization.lab04_tiling_strategy":
        "Tiling 전략: tensor-core GEMM의 tile 모양, warp 수, pipeline stage, wave quantization.",
    "phase4_optimization.lab05_mixed_precision": "Mixed precision: fp32, tf32, bf16, fp16, fp8로 정밀도를 낮추면 속도는 얼마나 빨라지고 오차는 얼마나 커지는가.",
    "phase4_optimization.lab06_attention": "Attention, naive에서 flash까지: S x S 행렬을 메모리에 두다가, 전혀 두지 않기까지.",
    "phase4_optimization.lab07_transformer_block": "이 저장소의 커널로 다시 만든 GPT식 transformer block, PyTorch와 비교.",
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
        "t_head": "| results file | case | measured | target | met | commit |",
        "yes": "yes", "no": "**no**",
        "t_sum": ("{met} of {n} targets and predictions met. Ratios are ours / the peer named in the case "
                  "(or measured / predicted), from one run each."),
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
        "gpus_one": "Only one GPU has committed results so far ({gpu}); what runs on other GPUs: [GPUS.md](GPUS.md).",
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
        "page_intro": ("Generated by `python tools/readme_tables.py --gpu {slug}` (run by `python -m tools.regenerate`) "
                       "from the JSON files in this folder. Ratios compare with the library in the same run, so they "
                       "travel between GPUs better than times do; compare them with the H200 figures in the "
                       "repository's README."),
        "page_device": "## Device", "page_headline": "## Headline: our best kernel vs the library",
        "page_plots": "## Plots", "page_targets": "## Every target and prediction",
    },
    "ko": {
        "labs_head": "| 랩 | 배우는 것 | 명령 |",
        "head_head": "| 랩 | 기준 케이스 | 우리의 최고 커널 | 최고 라이브러리 peer | 우리 / peer | 목표 |",
        "no_peer": "메커니즘을 측정하고 라이브러리 peer가 없는 랩: {labs} (목표 대비 결과는 목표 표와 phase 가이드에 있습니다).",
        "unmeasured": "이 GPU에서 아직 측정하지 않은 랩: {labs}.",
        "head_note": ("비율 = 같은 실행에서 잰 우리 커널의 속도 / peer의 속도 (1보다 크면 우리가 더 빠름). "
                      "출처 `{src}`; `python -m tools.regenerate`로 다시 만듭니다."),
        "none": "(`{src}`에 아직 결과가 없습니다: GPU에서 `python -m tools.regenerate`를 실행하세요)",
        "t_head": "| 결과 파일 | 케이스 | 측정값 | 목표 | 달성 | 커밋 |",
        "yes": "예", "no": "**아니오**",
        "t_sum": ("목표와 예측 {n}개 중 {met}개 달성. 비율은 우리 / 케이스에 적힌 peer (또는 측정 / 예측)이며, "
                  "각각 한 번의 실행에서 잰 값입니다."),
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
        "gpus_one": ("아직 한 GPU({gpu})의 결과만 커밋되어 있습니다. 다른 GPU에서 무엇이 실행되는지는 "
                     "[GPUS.ko.md](GPUS.ko.md)에 있습니다."),
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
# Sources: the labs (from the phase packages) and the results (from results/<gpu>/*.json)
# ---------------------------------------------------------------------------------------------------------------------
def _title(path: str) -> str:
    """First paragraph of a module's docstring, on one line, without importing it (no GPU or Triton needed)."""
    with open(path, encoding="utf-8") as f:
        src = f.read()
    m = re.search(r'^\s*[rub]*"""(.*?)(?:\n\s*\n|""")', src, re.S)
    return " ".join(m.group(1).split()) if m else ""


def labs() -> list[dict]:
    """Every lab that exists, in the planned order: phase, name, number ('2.7'), title, command, results stem."""
    out = []
    for phase in PHASES:
        pkg = importlib.import_module(phase)
        for name in getattr(pkg, "LABS", []):
            src = os.path.join(ROOT, phase, name, "lab.py")
            title = _title(src if os.path.exists(src) else os.path.join(ROOT, phase, name + ".py"))
            num, _, rest = title.partition(" - ")
            pnum = phase[len("phase")]
            out.append({"phase": phase, "name": name, "num": num.replace("Lab ", "") or f"{pnum}.?",
                        "title": rest or title, "module": f"{phase}.{name}",
                        "stem": f"phase{pnum}_{name}"})
    return out


def load_results(gpu: str) -> dict[str, dict]:
    docs = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "results", gpu, "*.json"))):
        try:
            with open(path, encoding="utf-8") as f:
                docs[os.path.basename(path)[:-5]] = json.load(f)
        except (OSError, ValueError):
            continue
    return docs


def _fmt(v) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float) and 0 < abs(v) < 1e-3:
        return f"{v:.2e}"
    if isinstance(v, float) and abs(v - 1) < 5e-4 and v != 1:
        return f"{v:.5f}"           # a ratio within rounding of 1.000: show which side of it
    if isinstance(v, float):
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        return f"{v:.3f}".rstrip("0").rstrip(".") if abs(v) < 10 else f"{v:.1f}"
    if isinstance(v, int) and v >= 2**10 and (v & (v - 1)) == 0:
        return f"2^{v.bit_length() - 1}"
    return str(v)


def _cell(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def all_targets(doc: dict) -> list[dict]:
    """Targets wherever a lab put them: header 'targets' (list) or 'target' (dict or list), or rows of impl 'target'."""
    out = []
    for key in ("targets", "target"):
        t = doc.get(key)
        if isinstance(t, dict):
            out.append(t)
        elif isinstance(t, list):
            out += [x for x in t if isinstance(x, dict)]
    out += [r for r in doc.get("rows") or [] if isinstance(r, dict) and r.get("impl") == "target"]
    return out


_WHAT = ("case", "size", "shape", "n", "variant")
_MEASURED = ("ratio", "vs_cublas", "vs_peer", "vs torch.add", "vs torch.sum", "measured")
_RATIO = ("ratio", "vs_peer", "vs_cublas", "vs_compile", "vs torch.add", "vs torch.sum")
_NOT_PEER_RATIO = ("vs eager", "vs_eager", "vs unfused", "vs_unfused", "vs_uniform", "vs_best", "vs_copy")


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _ratio(t: dict):
    """(key, value) of the ours/peer ratio a target records, or None (a prediction, a range, a count)."""
    if "predicted" in t or "range" in t:
        return None
    for k in _RATIO:
        if _is_num(t.get(k)):
            return k, t[k]
    for k, v in t.items():
        if (k.startswith("vs ") or k.startswith("vs_")) and k not in _NOT_PEER_RATIO and _is_num(v):
            return k, v
    return None


def target_rows(docs: dict[str, dict], yes: str = "yes", no: str = "**no**") -> list[list[str]]:
    rows = []
    for stem, doc in docs.items():
        for t in all_targets(doc):
            if t.get("met") is None:
                continue            # a reference row (the peer itself), not a target
            met = t["met"]
            if "predicted" in t or "range" in t:
                what, goal = t.get("target", ""), t.get("predicted", t.get("range"))
            else:
                what = ", ".join(_fmt(t[k]) for k in _WHAT if k in t and t[k] not in (None, ""))
                goal = t.get("target", "")
            meas = next((t[k] for k in _MEASURED if k in t), "")
            shown = (yes if met else no) if isinstance(met, bool) else _cell(met)
            if met is False and t.get("steady") is False:
                shown += " (spread > 3%)"      # not quotable either way: too few steady rounds
            rows.append([stem, _cell(what), _fmt(meas), _cell(_fmt(goal)), shown,
                         str(doc.get("commit", "?"))])
    return rows


def _case_label(t: dict) -> str:
    for k in ("case", "size", "shape", "n"):
        v = t.get(k)
        if isinstance(v, (list, tuple)) and v:
            return _shape_label(v, str(t.get("dtype", "")))
        if v not in (None, ""):
            return _fmt(v)
    return ""


def _peer_name(t: dict, key: str) -> str:
    if t.get("peer"):
        return str(t["peer"])
    m = re.match(r"target vs (.+)$", str(t.get("variant", "")))
    if m:
        return m.group(1)
    m = re.search(r"\bx\s+(\S.*)$", str(t.get("target", "")))
    if m:
        return m.group(1).strip()
    if key.startswith("vs ") or key.startswith("vs_"):
        name = key[3:]
        return {"cublas": "cuBLAS", "compile": "torch.compile"}.get(name, name)
    if any("copy" in k for k in t):
        return "device copy (the lab's HBM ceiling)"
    return "library peer"


def _shape_label(shape, dtype: str) -> str:
    shape = list(shape) if isinstance(shape, (list, tuple)) else [shape]
    if len(shape) == 1:
        s = _fmt(shape[0])
    elif len(set(shape)) == 1 and len(shape) == 3:
        s = f"{shape[0]}^3"
    else:
        s = "x".join(str(x) for x in shape)
    return f"{s} {dtype}".strip()


def headline(doc: dict, stem: str) -> dict | None:
    """The lab's best kernel against its best library peer at its headline case, or None (no peer measured)."""
    h = doc.get("headline")
    if isinstance(h, dict) and _is_num(h.get("ratio")):
        return {"case": str(h.get("case", "")), "ours": str(h.get("ours", "")), "peer": str(h.get("peer", "")),
                "ratio": float(h["ratio"]), "target": str(h.get("target", "")), "met": h.get("met")}
    # 1. from the targets the lab recorded against a peer
    cands = []
    for t in ([] if stem in HEADLINE_FROM_ROWS else all_targets(doc)):
        if not isinstance(t.get("met"), bool):
            continue                # a reference row, or a target that could not be measured here
        r = _ratio(t)
        if r:
            cands.append((_case_label(t), t, r))
    if cands:
        cases = list(dict.fromkeys(c for c, _, _ in cands))
        want = HEADLINE_CASE.get(stem)
        case = want if want in cases else cases[0]
        label, t, (key, ratio) = max((c for c in cands if c[0] == case), key=lambda c: c[2][1])
        variant = str(t.get("variant") or "")
        if not variant or variant.startswith("target vs "):     # name ours after its throughput column, if any
            variant = next((k.split(" ")[0] for k in t if k.endswith(("GB/s", "TFLOP/s")) and
                            not k.startswith(("peer", "copy", "cublas"))), "ours")
        ours = variant
        return {"case": label, "ours": str(ours), "peer": _peer_name(t, key), "ratio": float(ratio),
                "target": str(t.get("target", "")), "met": t.get("met")}
    # 2. from the rows: the largest case where a kernel of ours and a library peer were both timed
    groups: dict[tuple, dict] = {}
    for r in doc.get("rows") or []:
        if not isinstance(r, dict) or r.get("impl") not in ("cuda", "triton", "peer") or not _is_num(r.get("ms")):
            continue
        if r["ms"] <= 0:
            continue
        lab_of = str(r.get("lab") or "")
        if re.match(r"phase\d_lab\d\d_", lab_of) and not lab_of.startswith(stem):
            continue                # another lab's row that this lab re-reads (the roofline places every lab's)
        v = str(r.get("variant", ""))
        if r["impl"] == "peer" and v.startswith("phase "):
            continue                # one of the repository's own kernels, run as a reference
        if r["impl"] != "peer" and "(probe)" in v:
            continue                # a measuring probe, not a solution
        op = v.split(": ", 1)[0] if ": " in v else ""
        shape = r.get("shape") or []
        key = (r.get("lab"), op, tuple(shape) if isinstance(shape, list) else (shape,), r.get("dtype", ""))
        g = groups.setdefault(key, {"ours": [], "peer": []})
        g["peer" if r["impl"] == "peer" else "ours"].append((r["ms"], v))
    both = [(k, g) for k, g in groups.items() if g["ours"] and g["peer"]]
    if not both:
        return None

    def size(k):
        try:
            return math.prod(int(x) for x in k[2])
        except (TypeError, ValueError):
            return 0

    k, g = max(both, key=lambda kg: size(kg[0]))   # max keeps the first of equal sizes
    (oms, ov), (pms, pv) = min(g["ours"]), min(g["peer"])
    case = _shape_label(list(k[2]), k[3])
    return {"case": (f"{k[1]} " if k[1] else "") + case, "ours": ov, "peer": pv, "ratio": pms / oms,
            "target": "", "met": None}


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


def committed_gpus() -> list[str]:
    """GPU folders under results/ with committed JSON results, the README's GPU first."""
    root = os.path.join(ROOT, "results")
    found = [d for d in sorted(os.listdir(root)) if os.path.isdir(os.path.join(root, d))
             and not d.endswith("-quick") and d not in ("no-gpu", "scratch")
             and glob.glob(os.path.join(root, d, "phase*.json"))]
    return sorted(found, key=lambda d: (d != README_GPU, d))


def gpus_block(lang: str = "en") -> str:
    """The headline ratio of every lab on every GPU with committed results, side by side."""
    T = TEXT[lang]
    gpus = committed_gpus()
    docs = {g: load_results(g) for g in gpus}
    names = {g: next((d.get("gpu") for d in docs[g].values() if d.get("gpu")), g) for g in gpus}
    if len(gpus) < 2:
        return T["gpus_one"].format(gpu=", ".join(names.get(g, g) for g in gpus) or "-")
    lines = [T["gpus_head"][:-1] + "".join(f" {names[g]} |" for g in gpus), "|---|---|" + "---|" * len(gpus)]
    for lab in labs():
        heads = {g: headline(docs[g][lab["stem"]], lab["stem"]) if lab["stem"] in docs[g] else None for g in gpus}
        if not any(heads.values()):
            continue
        case = next(h["case"] for h in heads.values() if h)
        cells = []
        for g in gpus:
            h = heads[g]
            cells.append("-" if h is None else f"**{_fmt(h['ratio'])}**" + (f" ({_cell(h['case'])})"
                                                                          if h["case"] != case else ""))
        lines.append(f"| {lab['num']} | {_cell(case)} | " + " | ".join(cells) + " |")
    return "\n".join(lines + ["", T["gpus_note"]])


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
    rows = target_rows(docs, T["yes"], T["no"])
    if not rows:
        return T["none"].format(src=f"results/{gpu}/")
    out = [T["t_head"], "|---|---|---|---|---|---|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    met = sum(r[4] == T["yes"] for r in rows)
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
    for r in target_rows({lab["stem"]: doc}, T["met"], T["missed"]):
        what = r[1] if lang == "en" else f"`{r[1]}`"
        lines.append(T["a_row"].format(what=what, measured=r[2], target=r[3], met=r[4]))
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


def results_page(docs: dict[str, dict], gpu: str, lang: str = "en") -> str:
    """results/<gpu>/README.md (README.ko.md): the same tables and plots as the README, for one GPU's results."""
    T = TEXT[lang]
    name = next((d.get("gpu") for d in docs.values() if d.get("gpu")), gpu)
    return "\n".join([
        T["page_title"].format(gpu=name), "", T["page_intro"].format(slug=gpu), "",
        T["page_device"], "", device_block(docs, lang),
        "", T["page_headline"], "", headline_block(docs, gpu, lang),
        "", T["page_plots"], "", plots_block(gpu, lang, ""),
        "", T["page_targets"], "", targets_block(docs, gpu, lang),
        "",
    ])


# ---------------------------------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------------------------------
def render(text: str, blocks: dict[str, str], where: str = "README.md") -> str:
    for name, body in blocks.items():
        pat = re.compile(rf"(<!-- {re.escape(name)}:start -->\n).*?(<!-- {re.escape(name)}:end -->)", re.S)
        if not pat.search(text):
            raise SystemExit(f"{where} has no <!-- {name}:start --> ... <!-- {name}:end --> block")
        text = pat.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)
    return text


def block_names(text: str) -> list[str]:
    return re.findall(r"<!-- ([\w.-]+):start -->", text)


def outputs(gpu: str) -> dict[str, str]:
    """{path: new text} for every file this tool writes for results/<gpu>/."""
    docs = load_results(gpu)
    out = {}
    if gpu == README_GPU:
        readme_blocks = {
            "README.md": ("en", "results/%s/" % gpu),
            "README.ko.md": ("ko", "results/%s/" % gpu),
        }
        for fname, (lang, rel) in readme_blocks.items():
            path = os.path.join(ROOT, fname)
            if not os.path.exists(path):
                continue
            with open(path, encoding="utf-8") as f:
                old = f.read()
            avail = {"labs": lambda: labs_block(lang), "device": lambda: device_block(docs, lang),
                     "headline": lambda: headline_block(docs, gpu, lang), "gpus": lambda: gpus_block(lang),
                     "plots": lambda: plots_block(gpu, lang, rel), "targets": lambda: targets_block(docs, gpu, lang)}
            present = block_names(old)
            out[path] = render(old, {k: fn() for k, fn in avail.items() if k in present}, fname)
        by_phase: dict[str, list[dict]] = {}
        for lab in labs():
            by_phase.setdefault(lab["phase"], []).append(lab)
        for phase, ls in by_phase.items():
            for guide in ("README.md", "README.ko.md"):      # the phase guide and its Korean twin
                path = os.path.join(ROOT, phase, guide)
                if not os.path.exists(path):
                    continue
                with open(path, encoding="utf-8") as f:
                    old = f.read()
                present = block_names(old)
                lang = "ko" if guide.endswith(".ko.md") else "en"
                blocks = {f"answer-{lab['name']}": answer_block(lab, docs, gpu, f"../results/{gpu}/", lang)
                          for lab in ls if f"answer-{lab['name']}" in present}
                out[path] = render(old, blocks, os.path.relpath(path, ROOT))
            for lab in ls:                         # each lab's lesson: its README's measured block
                for fname in ("README.md", "README.ko.md"):
                    lpath = os.path.join(ROOT, phase, lab["name"], fname)
                    if not os.path.exists(lpath):
                        continue
                    with open(lpath, encoding="utf-8") as f:
                        ltext = f.read()
                    if "measured" in block_names(ltext):
                        lang = "ko" if fname.endswith(".ko.md") else "en"
                        block = measured_block(lab, docs, gpu, f"../../results/{gpu}/", lang=lang)
                        out[lpath] = render(ltext, {"measured": block}, os.path.relpath(lpath, ROOT))
    if docs:
        out[os.path.join(ROOT, "results", gpu, "README.md")] = results_page(docs, gpu)
        out[os.path.join(ROOT, "results", gpu, "README.ko.md")] = results_page(docs, gpu, "ko")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--check", action="store_true", help="exit 1 when a generated file is not current")
    ap.add_argument("--gpu", default=README_GPU,
                    help=f"results/<gpu>/ to summarise (default {README_GPU}, which also feeds the READMEs)")
    args = ap.parse_args(argv)
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", args.gpu):
        ap.error(f"--gpu: expected a folder name like h200 or rtx-4090, got {args.gpu!r}")
    files = outputs(args.gpu)
    if not files:
        print(f"nothing to write: results/{args.gpu}/ has no JSON results", file=sys.stderr)
        return 1 if args.check else 0
    stale = []
    for path, new in files.items():
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if new == old:
            continue
        stale.append(os.path.relpath(path, ROOT))
        if not args.check:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
    if args.check:
        if stale:
            print(f"out of date: {', '.join(stale)}; run python tools/readme_tables.py"
                  + ("" if args.gpu == README_GPU else f" --gpu {args.gpu}"), file=sys.stderr)
            return 1
        print(f"current: {', '.join(os.path.relpath(p, ROOT) for p in files)}")
        return 0
    print(("updated: " + ", ".join(stale)) if stale else "already current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
