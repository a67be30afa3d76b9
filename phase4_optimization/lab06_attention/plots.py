"""Lab 4.6's plots, drawn from the results' JSON (so --replot redraws them without a GPU): the targets' and the naive
rows as TFLOP/s bars grouped by case, ours in colour and the library's backends in grays, and the CUDA C rungs and
occupancy shapes; a legend says what each colour is, the title which shapes were measured."""
from __future__ import annotations

import os
import re

from common import report
from common.i18n import tr

from . import lab as L
from .cases import HOPPER_ROW, HOPPER_ROWS


# what each colour means (ours in colour, the library's backends in grays), matched on the variant's start
CONTENDERS = [("triton flash", "ours: Triton flash attention", "tab:orange"),
              ("naive", "ours: naive (S and P through HBM)", "#fdbf6f"),
              (HOPPER_ROWS[("03", 3)], "ours: CUDA C wgmma + TMA flash, 3 stages (sm_90a)", "mediumpurple"),
              (HOPPER_ROW, "ours: CUDA C wgmma + TMA flash (sm_90a)", "tab:purple"),
              (HOPPER_ROWS[("04", 3)], "ours: CUDA C wgmma + TMA ping-pong flash, 3 stages (sm_90a)", "hotpink"),
              (HOPPER_ROWS[("04", 2)], "ours: CUDA C wgmma + TMA ping-pong flash (sm_90a)", "tab:pink"),
              (HOPPER_ROWS[("05", 2)], "ours: CUDA C wgmma + TMA overlapped softmax, 2 stages (sm_90a)", "salmon"),
              (HOPPER_ROWS[("05", 3)], "ours: CUDA C wgmma + TMA overlapped softmax (sm_90a)", "tab:red"),
              (HOPPER_ROWS[("06", 3)], "ours: CUDA C wgmma + TMA overlapped softmax + ping-pong (sm_90a)", "darkred"),
              (HOPPER_ROWS[("07", 3)], "ours: CUDA C wgmma + TMA persistent, overlapped softmax (sm_90a)", "maroon"),
              ("cuda", "ours: CUDA C mma.sync flash", "tab:blue"),
              ("attn_", "ours: CUDA C mma.sync flash", "tab:blue"),
              ("torch SDPA cuDNN", "torch SDPA, cuDNN backend", "dimgray"),
              ("torch SDPA flash", "torch SDPA, FlashAttention-2 backend", "silver")]


def contender(variant: str, impl: str = "") -> tuple[str, str]:
    """(legend entry, colour) of a row's variant."""
    for start, name, color in CONTENDERS:
        if variant.startswith(start):
            return name, color
    return ("library peer", "gray") if impl == "peer" else (f"ours: {impl or variant}", "tab:green")


def _causal(r: dict):
    """The row's causal flag; the naive-vs-flash rows written before the field existed ran non-causal."""
    if r.get("causal") is None and r.get("case") == "naive vs flash":
        return False
    return r.get("causal")


def shape_text(shape, dtype: str | None = None, causal=None) -> str:
    """'B<b> H<h> S<s> D<d> bf16 causal', e.g. B 4, H 32 ... written as the plots' titles write them (the parts that
    are known)."""
    parts = []
    if shape and len(shape) == 4:
        parts.append(" ".join(f"{k}{v}" for k, v in zip("BHSD", shape)))
    if dtype:
        parts.append({"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(dtype, dtype))
    if causal is not None:
        parts.append("causal" if causal else "non-causal")
    return " ".join(parts)


def shapes_in_title(rows: list[dict]) -> list[str]:
    """One line per shape measured: '<shape_text>: fwd non-causal, fwd causal, ...' (the case names say
    fwd/bwd and causal or not, less the D the shape gives; a case without 'causal' in its name gets it added)."""
    by_shape: dict = {}
    for r in rows:
        key = (tuple(r.get("shape") or ()), r.get("dtype"))
        case = r.get("case") or r.get("variant")
        if len(key[0]) == 4:
            case = re.sub(rf"\s+D{key[0][3]}\b", "", case)
        if "causal" not in case and _causal(r) is not None:
            case += " (causal)" if _causal(r) else " (non-causal)"
        by_shape.setdefault(key, [])
        if case not in by_shape[key]:
            by_shape[key].append(case)
    return [f"{shape_text(list(k[0]), k[1]) or tr('shape not recorded')}: {', '.join(v)}" for k, v in by_shape.items()]


def plot(data: dict, out_dir: str) -> list[str]:
    """The targets' and naive rows as TFLOP/s bars grouped by case (<LAB>.png); the CUDA C rungs and shapes, when
    measured (<LAB>_cuda.png). A legend says what each colour is, the title which shapes (B, H, S, D, dtype, causal)
    were measured."""
    rows, gpu = data["rows"], data.get("gpu", "GPU")
    if not rows:                        # a GPU the flash kernels do not run on measured nothing
        return []
    # the axis label short (the axes are narrow beside the long bar labels: a longer one ran off the figure), how the
    # FLOPs are counted in the footnote
    xlabel = "TFLOP/s (higher is better)"
    flops = "TFLOP/s counts 4 B H S^2 D FLOPs per forward, half that when causal, 2.5x for a backward"
    main = [r for r in rows if r.get("part") != "cuda shapes"]
    groups, legend = [], {}
    order = {name: i for i, (_, name, _) in enumerate(CONTENDERS)}
    for case in dict.fromkeys(r.get("case") or "" for r in main):
        rs = [r for r in main if (r.get("case") or "") == case]
        bars = []
        for r in sorted(rs, key=lambda r: order.get(contender(r["variant"], r.get("impl", ""))[0], 99)):
            name, color = contender(r["variant"], r.get("impl", ""))
            legend.setdefault(name, color)
            bars.append((r["variant"], r.get("tflops") or 0.0, color))
        head = case or "(no case)"
        shape = shape_text(rs[0].get("shape"), None, None if "causal" in head else _causal(rs[0]))
        groups.append((f"{head}  [{shape}]" if shape else head, bars))
    lines = shapes_in_title(main)
    title = tr("Attention on {gpu}: ours against torch SDPA, TFLOP/s by case", gpu=gpu) + "\n" + "\n".join(lines)
    legend = dict(sorted(legend.items(), key=lambda kv: order.get(kv[0], 99)))
    paths = [report.plot_grouped_bars(os.path.join(out_dir, f"{L.LAB}.png"), groups, xlabel=xlabel, title=title,
                                      legend=legend, note=flops)]
    cuda_rows = [r for r in rows if r.get("part") == "cuda shapes"]
    if cuda_rows:
        groups, legend = [], {}
        for causal in dict.fromkeys(bool(r.get("causal")) for r in cuda_rows):
            bars = []
            for r in sorted((r for r in cuda_rows if bool(r.get("causal")) == causal),
                            key=lambda r: order.get(contender(r["variant"], r.get("impl", ""))[0], 99)):
                name, color = contender(r["variant"], r.get("impl", ""))
                legend.setdefault(name, color)
                bars.append((r["variant"], r.get("tflops") or 0.0, color))
            groups.append(("causal" if causal else "non-causal", bars))
        shape = cuda_rows[0].get("shape")
        causals = sorted({bool(r.get("causal")) for r in cuda_rows})
        how = "causal and non-causal" if len(causals) == 2 else ("causal" if causals[0] else "non-causal")
        paths.append(report.plot_grouped_bars(
            os.path.join(out_dir, f"{L.LAB}_cuda.png"), groups, xlabel=xlabel,
            title=tr("CUDA C mma.sync forward: rungs and occupancy shapes against torch SDPA, on {gpu}", gpu=gpu)
            + f"\n{shape_text(shape, cuda_rows[0].get('dtype') or 'bfloat16')}, {how}",
            legend=dict(sorted(legend.items(), key=lambda kv: order.get(kv[0], 99))), note=flops))
    return paths
