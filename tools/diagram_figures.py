"""Figures 5-8 of tools/diagrams.py (occupancy, online softmax, flash attention's tiles, a warp-specialized pipeline),
and the drawing helpers both files use. Run them through `python -m tools.diagrams`."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

from common import device, occupancy  # noqa: E402

PROFILE = "h100-sxm"          # the GPU profile (common/gpu_specs.py) the figures with SM counts or limits use
EDGE = "#555555"
HIT = "#d62728"
SOFT = "#c6dbef"
OK = "#2a7f2a"


def gpu() -> device.DeviceInfo:
    return device.profile_info(PROFILE)


def box(ax, x, y, w, h, color, text="", fs=8, tc="black", lw=0.6, hatch=None, ec=EDGE):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor=ec, lw=lw, hatch=hatch))
    if text:
        bb = dict(facecolor="white", edgecolor="none", pad=0.5) if hatch else None
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fs, color=tc, bbox=bb)


def bare(ax):
    ax.set_xticks([])
    ax.set_yticks([])
    for s in ax.spines.values():
        s.set_visible(False)


# ---------------------------------------------------------------------------------------------------------------------
# (5) the occupancy limits of one kernel on one GPU profile
# ---------------------------------------------------------------------------------------------------------------------
OCCUPANCY_LABELS = {
    "en": {"title": "Blocks per SM each resource allows: {t} threads/block, {r} registers/thread, {s} KiB dynamic "
                    "shared memory\n({name}, {arch}; common/occupancy.py)",
           "registers": "registers", "shared memory": "shared memory", "warps": "warps (threads)", "blocks": "blocks",
           "barriers": "barriers",
           "why_registers": "{r} x 32 -> {rw} per warp: {w} warps fit",
           "why_shared memory": "{b} B per block ({res} B of it reserved) into {sm} B per SM",
           "why_warps": "{max} warps per SM // {wpb} per block",
           "why_blocks": "resident-block limit",
           "why_barriers": "{sm} barriers per SM // {b} per block",
           "x": "blocks per SM", "answer": "=> {b} blocks x {wpb} warps = {a}/{max} warps: {occ:.0%} occupancy, "
                                           "limited by {lim}"},
    "ko": {"title": "자원별로 SM에 들어가는 block 수: block당 thread {t}개, thread당 register {r}개, dynamic shared "
                    "memory {s} KiB\n({name}, {arch}; common/occupancy.py)",
           "registers": "register", "shared memory": "shared memory", "warps": "warp (thread)", "blocks": "block",
           "barriers": "barrier",
           "why_registers": "{r} x 32 -> warp당 {rw}개: warp {w}개가 들어감",
           "why_shared memory": "block당 {b} B (그중 {res} B는 예약), SM당 {sm} B",
           "why_warps": "SM당 warp {max}개 // block당 {wpb}개",
           "why_blocks": "상주 block 한도",
           "why_barriers": "SM당 barrier {sm}개 // block당 {b}개",
           "x": "SM당 block 수", "answer": "=> block {b}개 x warp {wpb}개 = warp {a}/{max}개: occupancy {occ:.0%}, "
                                          "제한 요인은 {lim}"},
}
OCC_KERNEL = (256, 64, 32 * 1024)       # threads/block, registers/thread, dynamic shared memory: one example kernel


def occupancy_data() -> occupancy.Occupancy:
    t, r, s = OCC_KERNEL
    return occupancy.occupancy(gpu().arch, t, r, 0, s)


def draw_occupancy(t: dict):
    o = occupancy_data()
    g = gpu()
    a = device.arch_info(g.arch)
    names = [n for n in occupancy.LIMIT_ORDER if n in o.limits]
    fig, ax = plt.subplots(figsize=(11, 5))
    thr, regs, smem = OCC_KERNEL
    fig.suptitle(t["title"].format(t=thr, r=regs, s=smem // 1024, name=g.name, arch=g.arch), fontsize=11)
    warps_fit = occupancy.SUB_PARTITIONS * ((a.regs_per_sm // occupancy.SUB_PARTITIONS) // o.regs_per_warp)
    why = {"registers": dict(r=regs, rw=o.regs_per_warp, w=warps_fit),
           "shared memory": dict(b=o.smem_per_block, res=a.smem_reserved_per_block, sm=o.smem_per_sm),
           "warps": dict(max=o.max_warps_per_sm, wpb=o.warps_per_block), "blocks": {},
           "barriers": dict(sm=occupancy.BARRIERS_PER_BLOCK_SLOT * a.max_blocks_per_sm, b=o.barriers)}
    top = max(o.limits[n] for n in names)
    for i, n in enumerate(names):
        v = o.limits[n]
        lim = n in o.limiters
        ax.barh(i, v, color=HIT if lim else SOFT, edgecolor=EDGE)
        ax.text(v + top * 0.01, i, f"{v}   " + t["why_" + n].format(**why[n]), va="center", fontsize=9,
                fontweight="bold" if lim else "normal")
    ax.axvline(o.blocks_per_sm, color=HIT, ls="--", lw=1)
    ax.set_yticks(range(len(names)), [t[n] for n in names])
    ax.invert_yaxis()
    ax.set_xlim(0, top * 1.55)
    ax.set_xlabel(t["x"])
    ax.spines[["top", "right"]].set_visible(False)
    fig.text(0.5, 0.02, t["answer"].format(b=o.blocks_per_sm, wpb=o.warps_per_block, a=o.active_warps,
                                           max=o.max_warps_per_sm, occ=o.occupancy,
                                           lim=", ".join(t[x] for x in o.limiters)),
             ha="center", fontsize=10, color=HIT)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


# ---------------------------------------------------------------------------------------------------------------------
# (6) the online softmax: running max and rescaled sum over tiles of one row
# ---------------------------------------------------------------------------------------------------------------------
SOFTMAX_LABELS = {
    "en": {"title": "Online softmax over one random row of {n} values, {tile} per tile: one pass, max and sum together",
           "x": "x[i]", "m": "running max m after each tile", "tmax": "the tile's own max",
           "col": "column i", "sum": "running sum l (in units of exp(x - m))",
           "old": "alpha x l (the old sum, rescaled)", "new": "+ sum of exp(x - m) over the tile",
           "exact": "sum of exp(x - max(x)) over the row", "tile": "tile {k}",
           "alpha": "alpha = {a:.2f}", "note": "softmax = exp(x - m) / l at the end: equal to lab 2.7's reference(x) "
                                               "(max error {err:.0e})"},
    "ko": {"title": "무작위 값 {n}개짜리 행 하나의 online softmax, tile당 {tile}개: 한 번 훑으며 최댓값과 합을 함께 "
                    "구합니다",
           "x": "x[i]", "m": "tile마다 갱신한 최댓값 m", "tmax": "tile 자체의 최댓값",
           "col": "열 i", "sum": "누적 합 l (exp(x - m) 단위)",
           "old": "alpha x l (이전 합을 다시 맞춘 값)", "new": "+ tile의 exp(x - m) 합",
           "exact": "행 전체의 exp(x - max(x)) 합", "tile": "tile {k}",
           "alpha": "alpha = {a:.2f}", "note": "마지막에 softmax = exp(x - m) / l: lab 2.7의 reference(x)와 같습니다 "
                                               "(최대 오차 {err:.0e})"},
}
SOFTMAX_N, SOFTMAX_TILE, SOFTMAX_SEED = 48, 8, 3


def online_softmax_data(n: int = SOFTMAX_N, tile: int = SOFTMAX_TILE, seed: int = SOFTMAX_SEED) -> dict:
    """The running max and sum, tile by tile (m_new = max(m, tile max); l = l exp(m - m_new) + sum exp(x - m_new))."""
    from phase2_cuda.lab07_softmax import lab as l27

    x = np.random.default_rng(seed).normal(0.0, 1.5, n)
    x[n // 2 + 3] += 3.0                       # a late, larger maximum: the rescale is visible
    m, l_ = -np.inf, 0.0
    steps = []
    for k in range(0, n, tile):
        xs = x[k:k + tile]
        m_new = max(m, float(xs.max()))
        alpha = float(np.exp(m - m_new)) if np.isfinite(m) else 0.0
        part = float(np.exp(xs - m_new).sum())
        steps.append({"start": k, "tile_max": float(xs.max()), "m": m_new, "alpha": alpha, "old": l_ * alpha,
                      "part": part, "l": l_ * alpha + part})
        m, l_ = m_new, l_ * alpha + part
    ref = l27.reference(x[None, :])[0]
    err = float(np.abs(np.exp(x - m) / l_ - ref).max())
    return {"x": x, "tile": tile, "steps": steps, "m": m, "l": l_, "exact": float(np.exp(x - x.max()).sum()),
            "err": err}


def draw_online_softmax(t: dict):
    d = online_softmax_data()
    x, tile, steps = d["x"], d["tile"], d["steps"]
    n = len(x)
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(11, 7.4), gridspec_kw={"height_ratios": [1.2, 1]})
    fig.suptitle(t["title"].format(n=n, tile=tile), fontsize=11)
    a1.bar(range(n), x, color="#9ecae1", edgecolor=EDGE, lw=0.3, label=t["x"])
    for k, s in enumerate(steps):
        a1.axvline(s["start"] - 0.5, color="#aaaaaa", lw=0.6)
        a1.plot([s["start"] - 0.5, s["start"] + tile - 0.5], [s["m"]] * 2, color=HIT, lw=2.2,
                label=t["m"] if k == 0 else None)
        a1.plot([s["start"] - 0.5, s["start"] + tile - 0.5], [s["tile_max"]] * 2, color="black", lw=0.8, ls=":",
                label=t["tmax"] if k == 0 else None)
        a1.text(s["start"] + tile / 2 - 0.5, x.min() - 0.6, t["tile"].format(k=k), ha="center", fontsize=8)
    a1.set_ylim(x.min() - 1.0, x.max() + 2.2)
    a1.set_xlim(-1, n)
    a1.set_xlabel(t["col"], fontsize=9)
    a1.legend(fontsize=8, loc="upper left", ncol=3)
    a1.spines[["top", "right"]].set_visible(False)
    ks = range(len(steps))
    a2.bar(ks, [s["old"] for s in steps], color="#bdbdbd", edgecolor=EDGE, label=t["old"])
    a2.bar(ks, [s["part"] for s in steps], bottom=[s["old"] for s in steps], color="#fdae6b", edgecolor=EDGE,
           label=t["new"])
    a2.axhline(d["exact"], color=OK, ls="--", lw=1, label=t["exact"])
    for k, s in enumerate(steps):
        if 0 < s["alpha"] < 1:
            a2.text(k, s["l"] + d["exact"] * 0.03, t["alpha"].format(a=s["alpha"]), ha="center", fontsize=8, color=HIT)
    a2.set_xticks(list(ks), [t["tile"].format(k=k) for k in ks], fontsize=8)
    a2.set_ylabel(t["sum"], fontsize=9)
    a2.set_ylim(0, max(s["l"] for s in steps) * 1.35)
    a2.legend(fontsize=8, loc="upper left", ncol=3)
    a2.spines[["top", "right"]].set_visible(False)
    fig.text(0.5, 0.015, t["note"].format(err=max(d["err"], 1e-16)), ha="center", fontsize=9)
    fig.tight_layout(rect=(0, 0.03, 1, 0.97))
    return fig


# ---------------------------------------------------------------------------------------------------------------------
# (7) flash attention: a Q tile sweeping the K/V tiles; causal: the skipped tiles
# ---------------------------------------------------------------------------------------------------------------------
FLASH_LABELS = {
    "en": {"title": "Flash attention's forward (lab 4.6's tiled_model): S = {s} keys, Q tiles of {bm} rows, K/V tiles "
                    "of {bn} keys",
           "full": "not causal: {v} of {n} tiles computed", "causal": "causal: {v} of {n} tiles computed",
           "kv": "K/V tile (keys)", "q": "Q tile (queries)", "sweep": "Q tile {i} sweeps its K/V tiles in order",
           "legend_done": "computed", "legend_mask": "computed, masked inside (the diagonal)",
           "legend_skip": "skipped (wholly above the diagonal)"},
    "ko": {"title": "flash attention forward (lab 4.6의 tiled_model): key S = {s}개, Q tile은 {bm}행, K/V tile은 "
                    "key {bn}개",
           "full": "causal 아님: tile {n}개 중 {v}개 계산", "causal": "causal: tile {n}개 중 {v}개 계산",
           "kv": "K/V tile (key)", "q": "Q tile (query)", "sweep": "Q tile {i}가 자기 K/V tile을 차례로 훑습니다",
           "legend_done": "계산", "legend_mask": "계산하되 안쪽을 mask (대각선)",
           "legend_skip": "건너뜀 (통째로 대각선 위)"},
}
FLASH_S = 512
FLASH_ROW = 5                 # the Q tile whose sweep is drawn


def flash_data(s: int = FLASH_S) -> dict:
    """Which (Q tile, K/V tile) pairs the forward computes: the loop bounds of models.tiled_model (causal: keys up to
    the Q tile's last row), with lab 4.6's tile sizes (block_m = tiled_model's default, block_n = CUDA_BLOCK_N)."""
    import inspect

    from phase4_optimization.lab06_attention import models

    params = inspect.signature(models.tiled_model).parameters
    bm, bn = params["block_m"].default, params["block_n"].default
    nq, nk = -(-s // bm), -(-s // bn)
    out = {"s": s, "bm": bm, "bn": bn, "nq": nq, "nk": nk}
    for causal in (False, True):
        state = np.zeros((nq, nk), dtype=int)      # 0 skipped, 1 computed, 2 computed with a mask inside
        for i in range(nq):
            m0 = i * bm
            kv_end = min(s, m0 + bm) if causal else s
            for j in range(-(-kv_end // bn)):
                n0 = j * bn
                masked = (causal and n0 + bn - 1 > m0) or n0 + bn > s
                state[i, j] = 2 if masked else 1
        out["causal" if causal else "full"] = state
    return out


def draw_flash(t: dict):
    d = flash_data()
    fig, axes = plt.subplots(1, 2, figsize=(12, 6.6))
    fig.suptitle(t["title"].format(s=d["s"], bm=d["bm"], bn=d["bn"]), fontsize=11)
    colors = {0: "#eeeeee", 1: SOFT, 2: "#fdd0a2"}
    for ax, key in zip(axes, ("full", "causal")):
        st = d[key]
        for i in range(d["nq"]):
            for j in range(d["nk"]):
                box(ax, j, i, 1, 1, colors[st[i, j]], hatch="//" if st[i, j] == 2 else None, lw=0.5)
        row = FLASH_ROW
        visits = [j for j in range(d["nk"]) if st[row, j]]
        for k, j in enumerate(visits):
            box(ax, j + 0.08, row + 0.08, 0.84, 0.84, "none", str(k + 1), fs=11, tc=HIT, lw=2, ec=HIT)
        ax.add_patch(FancyArrowPatch((0.1, row + 1.22), (visits[-1] + 0.9, row + 1.22), arrowstyle="-|>",
                                     mutation_scale=16, color=HIT, lw=1.5))
        ax.set_xlim(0, d["nk"])
        ax.set_ylim(d["nq"], 0)
        ax.set_aspect("equal")
        ax.set_xticks([j + 0.5 for j in range(d["nk"])], [str(j) for j in range(d["nk"])])
        ax.set_yticks([i + 0.5 for i in range(d["nq"])], [str(i) for i in range(d["nq"])])
        ax.set_xlabel(t["kv"])
        ax.set_ylabel(t["q"])
        ax.xaxis.set_label_position("top")
        ax.xaxis.tick_top()
        done = int((st > 0).sum())
        ax.set_title(t[key].format(v=done, n=st.size), fontsize=10, pad=28)
    handles = [Rectangle((0, 0), 1, 1, facecolor=colors[k], edgecolor=EDGE, hatch="//" if k == 2 else None)
               for k in (1, 2, 0)]
    fig.legend(handles, [t["legend_done"], t["legend_mask"], t["legend_skip"]], loc="lower center", ncol=3,
               fontsize=9, frameon=False)
    fig.text(0.5, 0.075, t["sweep"].format(i=FLASH_ROW), ha="center", fontsize=9, color=HIT)
    fig.tight_layout(rect=(0, 0.1, 1, 0.9))
    return fig


# ---------------------------------------------------------------------------------------------------------------------
# (8) a warp-specialized pipeline: a producer's TMA loads into a ring of stages, consumers computing, mbarrier waits
# ---------------------------------------------------------------------------------------------------------------------
PIPELINE_LABELS = {
    "en": {"title": "Warp specialization (lab 4.6's Hopper rungs): 1 producer warpgroup, {c} consumer warpgroups, a "
                    "ring of {s} K/V stages",
           "producer": "producer (TMA)", "consumer": "consumer {i}", "stage": "stage {s}",
           "load": "K/V {n}", "compute": "tile {n}", "hold": "tile {n}",
           "wait_full": "wait full[{s}]", "wait_empty": "empty[{s}]",
           "wait": "waiting on an mbarrier",
           "x": "time (schematic units: a load takes {tl:g}, a tile's S = QK^T, softmax, O += PV takes {tc:g}; "
                "not a measurement)",
           "note": "the producer refills a stage only after both consumers arrive on its empty barrier; a consumer "
                   "starts a tile when the TMA bytes arrive on its full barrier"},
    "ko": {"title": "warp specialization (lab 4.6의 Hopper rung): producer warpgroup 1개, consumer warpgroup {c}개, "
                    "K/V stage {s}개짜리 ring",
           "producer": "producer (TMA)", "consumer": "consumer {i}", "stage": "stage {s}",
           "load": "K/V {n}", "compute": "tile {n}", "hold": "tile {n}",
           "wait_full": "full[{s}] 대기", "wait_empty": "empty[{s}]",
           "wait": "mbarrier에서 대기",
           "x": "시간 (개념용 단위: load 하나 {tl:g}, tile 하나의 S = QK^T, softmax, O += PV가 {tc:g}. 측정값이 아님)",
           "note": "producer는 두 consumer가 empty barrier에 도착한 뒤에만 stage를 다시 채웁니다. consumer는 TMA "
                   "바이트가 full barrier에 도착하면 tile을 시작합니다"},
}
PIPE_TILES, PIPE_LOAD, PIPE_COMPUTE = 7, 1.0, 1.6


def pipeline_data(tiles: int = PIPE_TILES, t_load: float = PIPE_LOAD, t_compute: float = PIPE_COMPUTE,
                  stages: int | None = None) -> dict:
    """The schedule of the ring: load n goes into stage n % STAGES once tile n - STAGES is released (empty barrier);
    the consumers start tile n when its load lands (full barrier) and release it when both are done."""
    from phase4_optimization.lab06_attention import hopper

    stages = hopper.STAGES if stages is None else stages
    loads, computes, release = [], [[] for _ in range(hopper.CONSUMERS)], []
    for n in range(tiles):                     # tile n depends only on tiles before it: one pass in order
        prev = loads[-1][1] if loads else 0.0
        start = max(prev, release[n - stages] if n >= stages else 0.0)
        loads.append((start, start + t_load, prev))          # (start, end, when the producer began waiting)
        for c in range(hopper.CONSUMERS):
            done = computes[c][-1][1] if computes[c] else 0.0
            begin = max(done, start + t_load)
            computes[c].append((begin, begin + t_compute, done))
        release.append(max(computes[c][-1][1] for c in range(hopper.CONSUMERS)))
    return {"stages": stages, "consumers": hopper.CONSUMERS, "loads": loads, "computes": computes,
            "release": release, "t_load": t_load, "t_compute": t_compute}


def draw_pipeline(t: dict):
    d = pipeline_data()
    S, C = d["stages"], d["consumers"]
    cmap = plt.get_cmap("Set2")
    fig, ax = plt.subplots(figsize=(12, 5.4))
    fig.suptitle(t["title"].format(c=C, s=S), fontsize=11)
    rows = [t["producer"]] + [t["consumer"].format(i=i) for i in range(C)] + [t["stage"].format(s=s)
                                                                                for s in range(S)]
    h = 0.7
    for n, (a, b, waited) in enumerate(d["loads"]):
        s = n % S
        if a - waited > 1e-9:
            box(ax, waited, 0, a - waited, h, "white", t["wait_empty"].format(s=s), fs=7, hatch="..", ec="#999999")
        box(ax, a, 0, b - a, h, cmap(s), t["load"].format(n=n), fs=8)
    for c in range(C):
        for n, (a, b, prev) in enumerate(d["computes"][c]):
            s = n % S
            if a - prev > 1e-9:
                box(ax, prev, 1 + c, a - prev, h, "white", t["wait_full"].format(s=s), fs=7, hatch="..",
                    ec="#999999")
            box(ax, a, 1 + c, b - a, h, cmap(s), t["compute"].format(n=n), fs=8)
    for n, (a, _, _) in enumerate(d["loads"]):
        s = n % S
        box(ax, a, 1 + C + s, d["release"][n] - a, h, cmap(s), t["hold"].format(n=n), fs=8, lw=0.4)
    for n in range(min(3, len(d["loads"]))):            # a few barrier arrows: full (load -> consumer)
        x = d["loads"][n][1]
        ax.add_patch(FancyArrowPatch((x, h), (d["computes"][0][n][0] + 0.02, 1), arrowstyle="-|>", mutation_scale=9,
                                     color="black", lw=0.7))
    for n in range(S, len(d["loads"])):                 # empty (last consumer -> the producer's next load)
        x = d["release"][n - S]
        ax.add_patch(FancyArrowPatch((x, 1 + C - 1), (d["loads"][n][0] + 0.02, h), arrowstyle="-|>",
                                     mutation_scale=9, color=HIT, lw=0.7, ls="--"))
    ax.legend([Rectangle((0, 0), 1, 1, facecolor="white", edgecolor="#999999", hatch="..")], [t["wait"]],
              loc="lower right", fontsize=8)
    end = max(d["release"])
    ax.set_xlim(0, end + 0.2)
    ax.set_ylim(len(rows), -0.3)
    ax.set_yticks([i + h / 2 for i in range(len(rows))], rows)
    ax.set_xlabel(t["x"].format(tl=d["t_load"], tc=d["t_compute"]), fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    fig.text(0.5, 0.015, t["note"], ha="center", fontsize=9, wrap=True)
    fig.tight_layout(rect=(0, 0.04, 1, 0.97))
    return fig
