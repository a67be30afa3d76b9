"""The course's conceptual figures, drawn by code from the models the labs use (no GPU, no measured figure).

    python -m tools.diagrams                    # every figure -> docs/diagrams/NAME.png and docs/diagrams/ko/NAME.png
    python -m tools.diagrams --only banks       # one figure (repeatable)
    python -m tools.diagrams --out /tmp/d       # somewhere else
    python -m tools.diagrams --check            # draw into a temporary folder; fail when a committed PNG is missing
                                                # or its pixel size differs from the one drawn now

Each figure is one function drawing from a label table per language (English and Korean, the Korean in a font with
Hangul). The numbers in the figures come from the labs' own code: the sector count of lab 2.1, the bank model of
lab 2.2, the occupancy calculator of common/occupancy.py, the tile sizes of lab 1.6 and lab 4.6, the GPU table of
common/gpu_specs.py (through common.device.profile_info, PROFILE below). The data of each figure is a separate
function (*_data), so tests/test_diagrams.py checks the numbers the pictures show.
"""
from __future__ import annotations

import argparse
import os
import shutil
import struct
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

from common import i18n, occupancy  # noqa: E402
from tools import diagram_figures as more  # noqa: E402
from tools.diagram_figures import EDGE, HIT, PROFILE, SOFT, bare, box, gpu  # noqa: E402,F401

OUT = os.path.join(ROOT, "docs", "diagrams")
DPI = 100
LANGS = ("en", "ko")


# ---------------------------------------------------------------------------------------------------------------------
# (1) thread -> warp -> block -> SM
# ---------------------------------------------------------------------------------------------------------------------
THREADS_LABELS = {
    "en": {"title": "Threads, warps, blocks, SMs",
           "block": "one block of {bx} x {by} threads (lab 1.3's 2-D block): warp = tid // 32, tid = tx + {bx} ty",
           "warp": "warp {w}", "tx": "tx", "ty": "ty",
           "row": "a block of {t} threads = {w} warps of 32 lanes",
           "gpu": "{name}: {sms} SMs. With {regs} registers/thread the occupancy calculator fits {bps} such blocks on "
                  "one SM:\n{wave} blocks run at once (one wave), the rest wait; one way of dealing them out",
           "sm": "SM {i}", "blk": "b{b}", "more": "... {n} more SMs ..."},
    "ko": {"title": "thread, warp, block, SM",
           "block": "{bx} x {by} thread의 block 하나 (lab 1.3의 2-D block): warp = tid // 32, tid = tx + {bx} ty",
           "warp": "warp {w}", "tx": "tx", "ty": "ty",
           "row": "thread {t}개의 block = lane 32개짜리 warp {w}개",
           "gpu": "{name}: SM {sms}개. thread당 register {regs}개이면 occupancy 계산기로 SM 하나에 이런 block이 "
                  "{bps}개 들어갑니다.\n한 번에 {wave}개 block이 돌고(wave 하나) 나머지는 기다립니다. "
                  "배분 방식의 한 예입니다",
           "sm": "SM {i}", "blk": "b{b}", "more": "... SM {n}개 더 ..."},
}
THREADS_REGS = 32             # registers/thread assumed for the SM panel (the figure says so)


def threads_data() -> dict:
    from phase1_architecture.lab03_thread_hierarchy import lab as l13

    rec = l13.predicted_records(blocks=1)
    g = gpu()
    occ = occupancy.occupancy(g.arch, l13.THREADS, THREADS_REGS)
    return {"block": l13.MAP_BLOCK, "records": rec, "threads": l13.THREADS, "warps": l13.THREADS // 32,
            "sms": g.sms, "name": g.name, "blocks_per_sm": occ.blocks_per_sm, "wave": g.sms * occ.blocks_per_sm}


def draw_threads(t: dict):
    d = threads_data()
    bx, by = d["block"]
    fig = plt.figure(figsize=(11, 7.2))
    fig.suptitle(t["title"], fontsize=13)
    ax = fig.add_axes([0.05, 0.53, 0.9, 0.34])
    colors = plt.get_cmap("tab10")
    for row in d["records"]:
        _, tx, ty, tid, warp, lane = (int(v) for v in row[:6])
        box(ax, tx, ty, 1, 1, colors(warp), f"{tid}", fs=8, tc="white")
    ax.set_xlim(-0.9, bx + 3.2)
    ax.set_ylim(by + 0.2, -0.9)
    for w in range(bx * by // 32):
        ax.text(bx + 0.3, (w * 32 // bx) + 1.0, t["warp"].format(w=w), color=colors(w), fontsize=10, va="center",
                fontweight="bold")
    for x in range(bx):
        ax.text(x + 0.5, -0.3, str(x), ha="center", fontsize=7)
    for y in range(by):
        ax.text(-0.3, y + 0.5, str(y), ha="center", va="center", fontsize=7)
    ax.text(bx / 2, -0.75, t["tx"], ha="center", fontsize=9)
    ax.text(-0.6, by / 2, t["ty"], ha="center", va="center", fontsize=9)
    ax.set_title(t["block"].format(bx=bx, by=by), fontsize=10, pad=16)
    bare(ax)

    ax = fig.add_axes([0.05, 0.41, 0.9, 0.1])
    for w in range(d["warps"]):
        box(ax, w * 32, 0, 32, 1, colors(w), t["warp"].format(w=w), fs=9, tc="white")
    ax.set_xlim(-2, d["threads"] + 2)
    ax.set_ylim(-0.1, 1.1)
    ax.set_title(t["row"].format(t=d["threads"], w=d["warps"]), fontsize=10)
    bare(ax)

    ax = fig.add_axes([0.05, 0.03, 0.9, 0.3])
    bps, sms = d["blocks_per_sm"], d["sms"]
    shown = [0, 1, 2, None, sms - 1]
    cols = max(1, (bps + 1) // 2)
    for k, sm in enumerate(shown):
        x0 = k * (cols + 1.5)
        if sm is None:
            ax.text(x0 + cols / 2, 1.2, t["more"].format(n=sms - 4), ha="center", va="center", fontsize=10)
            continue
        box(ax, x0 - 0.2, -0.2, cols + 0.4, 2.9, "#f0f0f0")
        ax.text(x0 + cols / 2, 2.45, t["sm"].format(i=sm), ha="center", fontsize=9, fontweight="bold")
        for s in range(bps):
            b = s * sms + sm                       # one way of dealing blocks out: block b on SM b % sms
            box(ax, x0 + s % cols, 1 - s // cols, 0.9, 0.9, SOFT, t["blk"].format(b=b), fs=7)
    ax.set_xlim(-0.5, 5 * (cols + 1.5))
    ax.set_ylim(-0.4, 2.9)
    ax.set_title(t["gpu"].format(name=d["name"], sms=sms, regs=THREADS_REGS, bps=bps, wave=d["wave"]), fontsize=9,
                 wrap=True)
    bare(ax)
    return fig


# ---------------------------------------------------------------------------------------------------------------------
# (2) coalesced vs strided: the 32-byte sectors one warp touches
# ---------------------------------------------------------------------------------------------------------------------
COALESCING_LABELS = {
    "en": {"title": "One warp load of 32 floats: the 32-byte sectors it touches (lab 2.1's sector model)",
           "row": "stride {s}", "info": "{sec} sectors, {moved} B moved for 128 B used ({eff:g}%)",
           "x": "memory, in 32-byte sectors (addresses 0 .. {end} B)", "used": "bytes a lane asks for",
           "moved": "sector moved", "idle": "sector not touched"},
    "ko": {"title": "float 32개를 읽는 warp load 하나: 건드리는 32바이트 sector (lab 2.1의 sector 모델)",
           "row": "stride {s}", "info": "sector {sec}개, 128 B를 쓰려고 {moved} B 이동 ({eff:g}%)",
           "x": "메모리, 32바이트 sector 단위 (주소 0 .. {end} B)", "used": "lane이 요청한 바이트",
           "moved": "옮기는 sector", "idle": "건드리지 않는 sector"},
}
STRIDES = (1, 2, 4, 8, 32)


def coalescing_data() -> list[dict]:
    from phase2_cuda.lab01_coalescing_transpose import lab as l21

    rows = []
    for s in STRIDES:
        addrs = [lane * s * 4 for lane in range(32)]
        sec = l21.strided_sectors(s)
        assert sec == l21.sectors_per_request(addrs)
        rows.append({"stride": s, "addresses": addrs, "sectors": sec, "moved": sec * l21.SECTOR,
                     "touched": sorted({a // l21.SECTOR for a in addrs}), "sector_bytes": l21.SECTOR})
    return rows


def draw_coalescing(t: dict):
    rows = coalescing_data()
    sb = rows[0]["sector_bytes"]
    n_sec = max(STRIDES) * 32 * 4 // sb          # the widest request's span, in sectors
    fig, ax = plt.subplots(figsize=(12, 5))
    fig.suptitle(t["title"], fontsize=12)
    for i, r in enumerate(rows):
        y = len(rows) - 1 - i
        touched = set(r["touched"])
        for s in range(n_sec):
            box(ax, s, y, 1, 0.7, "#9ecae1" if s in touched else "white", lw=0.3)
        for a in r["addresses"]:
            ax.add_patch(Rectangle((a / sb, y), 4 / sb, 0.7, facecolor=HIT, lw=0))
        ax.text(-1.5, y + 0.35, t["row"].format(s=r["stride"]), ha="right", va="center", fontsize=10)
        ax.text(n_sec + 1.5, y + 0.35, t["info"].format(sec=r["sectors"], moved=r["moved"], eff=12800 / r["moved"]),
                va="center", fontsize=9)
    ax.set_xlim(-9, n_sec + 30)
    ax.set_ylim(-0.4, len(rows))
    ax.set_xlabel(t["x"].format(end=n_sec * sb), fontsize=9)
    bare(ax)
    handles = [Rectangle((0, 0), 1, 1, facecolor=c, edgecolor=EDGE, lw=0.4) for c in (HIT, "#9ecae1", "white")]
    ax.legend(handles, [t["used"], t["moved"], t["idle"]], loc="lower center", ncol=3, fontsize=9, frameon=False,
              bbox_to_anchor=(0.45, -0.22))
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


# ---------------------------------------------------------------------------------------------------------------------
# (3) shared-memory banks: one column read, plain, padded and swizzled (lab 2.2's model)
# ---------------------------------------------------------------------------------------------------------------------
BANKS_LABELS = {
    "en": {"title": "32 lanes read column {c} of a 32 x 32 float tile in shared memory",
           "conflicted": "plain: word r*32 + c", "padded": "padded: word r*33 + c",
           "swizzled": "swizzled: r*32 + (c^r)",
           "passes": "{p}-way: {p} pass(es)", "bank": "bank (word % 32)", "row": "shared-memory row (word // 32)",
           "note": "each colour is one lane (lane r reads row r); passes = the most distinct words one bank is asked "
                   "for (lab 2.2's passes())"},
    "ko": {"title": "lane 32개가 shared memory의 32 x 32 float tile에서 열 {c}를 읽습니다",
           "conflicted": "그대로: word r*32 + c", "padded": "padding: word r*33 + c",
           "swizzled": "swizzle: r*32 + (c^r)",
           "passes": "{p}-way: pass {p}번", "bank": "bank (word % 32)", "row": "shared memory 행 (word // 32)",
           "note": "색 하나가 lane 하나입니다 (lane r은 행 r을 읽음). pass 수 = 한 bank가 요청받는 서로 다른 word의 "
                   "최댓값 (lab 2.2의 passes())"},
}
BANK_COLUMN = 3
LAYOUTS = ("conflicted", "padded", "swizzled")


def bank_address(layout: str, r: int, c: int) -> int:
    """The word of element (r, c): the same formulas as lab 2.2's tile_passes."""
    return {"conflicted": r * 32 + c, "padded": r * 33 + c, "swizzled": r * 32 + (c ^ r)}[layout]


def banks_data(column: int = BANK_COLUMN) -> dict:
    from phase2_cuda.lab02_bank_conflicts import lab as l22

    out = {}
    for lay in LAYOUTS:
        words = [bank_address(lay, lane, column) for lane in range(32)]
        out[lay] = {"words": words, "passes": l22.passes(words)}
    return out


def draw_banks(t: dict):
    d = banks_data()
    fig, axes = plt.subplots(1, 3, figsize=(13, 5.6))
    fig.suptitle(t["title"].format(c=BANK_COLUMN), fontsize=12)
    cmap = plt.get_cmap("turbo")
    for ax, lay in zip(axes, LAYOUTS):
        words = d[lay]["words"]
        nrows = max(words) // 32 + 1
        ax.add_patch(Rectangle((0, 0), 32, nrows, facecolor="#f4f4f4", edgecolor=EDGE, lw=0.5))
        for lane, w in enumerate(words):
            ax.add_patch(Rectangle((w % 32, w // 32), 1, 1, facecolor=cmap(lane / 32), edgecolor="black", lw=0.3))
        ax.set_xlim(0, 32)
        ax.set_ylim(nrows, 0)
        ax.set_xticks(range(0, 33, 8))
        ax.set_yticks(range(0, nrows + 1, 8))
        ax.tick_params(labelsize=8)
        ax.set_xlabel(t["bank"], fontsize=9)
        ax.set_aspect("equal")
        p = d[lay]["passes"]
        ax.set_title(t[lay] + "\n" + t["passes"].format(p=p), fontsize=10, color=HIT if p > 1 else "#2a7f2a")
    axes[0].set_ylabel(t["row"], fontsize=9)
    fig.text(0.5, 0.02, t["note"], ha="center", fontsize=9)
    fig.tight_layout(rect=(0, 0.04, 1, 0.95))
    return fig


# ---------------------------------------------------------------------------------------------------------------------
# (4) a matmul tile walking K
# ---------------------------------------------------------------------------------------------------------------------
MATMUL_LABELS = {
    "en": {"title": "One program's C tile walks K (lab 1.6's Triton tile: BLOCK_M={bm}, BLOCK_N={bn}, BLOCK_K={bk})",
           "a": "A ({m} x {k})", "b": "B ({k} x {n})", "c": "C ({m} x {n})",
           "step": "step {s}", "tile": "C tile\n{bm} x {bn}",
           "note": "{steps} steps; each loads {bm} x {bk} of A and {bk} x {bn} of B ({loads} elements) and does "
                   "{fma} multiply-adds into the tile: {ratio:g} per element loaded"},
    "ko": {"title": "program 하나의 C tile이 K를 따라 갑니다 (lab 1.6의 Triton tile: BLOCK_M={bm}, BLOCK_N={bn}, "
                    "BLOCK_K={bk})",
           "a": "A ({m} x {k})", "b": "B ({k} x {n})", "c": "C ({m} x {n})",
           "step": "단계 {s}", "tile": "C tile\n{bm} x {bn}",
           "note": "{steps}단계입니다. 단계마다 A에서 {bm} x {bk}, B에서 {bk} x {bn} ({loads}개 원소)를 읽고 tile에 "
                   "곱셈-덧셈 {fma}번을 합니다: 읽은 원소 하나당 {ratio:g}번"},
}
MATMUL_SHAPE = (256, 256, 256)      # M, N, K of the picture: 4 x 4 tiles of C, 8 steps of K
MATMUL_TILE = (1, 2)                # the C tile drawn (tile row, tile column)


def matmul_data() -> dict:
    from phase1_architecture.lab06_matmul_naive import lab as l16

    tile = l16.TRITON_TILE
    bm, bn, bk = tile["BLOCK_M"], tile["BLOCK_N"], tile["BLOCK_K"]
    m, n, k = MATMUL_SHAPE
    loads = bm * bk + bk * bn
    return {"bm": bm, "bn": bn, "bk": bk, "m": m, "n": n, "k": k, "steps": -(-k // bk), "loads": loads,
            "fma": bm * bn * bk, "ratio": bm * bn * bk / loads}


def draw_matmul(t: dict):
    d = matmul_data()
    bm, bn, bk, m, n, k = (d[x] for x in ("bm", "bn", "bk", "m", "n", "k"))
    ti, tj = MATMUL_TILE
    fig, ax = plt.subplots(figsize=(9, 8))
    fig.suptitle(t["title"].format(bm=bm, bn=bn, bk=bk), fontsize=11)
    gap = 40
    cmap = plt.get_cmap("viridis")
    # A at the lower left, B at the upper right, C at the lower right; y grows downwards
    ax_ = (0, k + gap)
    bx_ = (k + gap, 0)
    cx_ = (k + gap, k + gap)
    for (x0, y0), w, h in ((ax_, k, m), (bx_, n, k), (cx_, n, m)):
        box(ax, x0, y0, w, h, "#f4f4f4", lw=1)
    for s in range(d["steps"]):
        c = cmap(s / max(1, d["steps"] - 1))
        box(ax, ax_[0] + s * bk, ax_[1] + ti * bm, bk, bm, c, str(s), fs=8, tc="white")
        box(ax, bx_[0] + tj * bn, bx_[1] + s * bk, bn, bk, c, str(s), fs=8, tc="white")
    for i in range(m // bm):
        for j in range(n // bn):
            box(ax, cx_[0] + j * bn, cx_[1] + i * bm, bn, bm, "none", lw=0.4)
    box(ax, cx_[0] + tj * bn, cx_[1] + ti * bm, bn, bm, HIT, t["tile"].format(bm=bm, bn=bn), fs=9, tc="white")
    ax.add_patch(FancyArrowPatch((ax_[0] + 5, ax_[1] + ti * bm - 8), (ax_[0] + k - 5, ax_[1] + ti * bm - 8),
                                 arrowstyle="-|>", mutation_scale=14, color="black"))
    ax.add_patch(FancyArrowPatch((bx_[0] + tj * bn - 8, 5), (bx_[0] + tj * bn - 8, k - 5), arrowstyle="-|>",
                                 mutation_scale=14, color="black"))
    ax.text(ax_[0] + k / 2, ax_[1] + m + 14, t["a"].format(m=m, k=k), ha="center", fontsize=10)
    ax.text(bx_[0] + n / 2, -8, t["b"].format(k=k, n=n), ha="center", fontsize=10)
    ax.text(cx_[0] + n / 2, cx_[1] + m + 14, t["c"].format(m=m, n=n), ha="center", fontsize=10)
    ax.set_xlim(-10, k + gap + n + 10)
    ax.set_ylim(k + gap + m + 40, -25)
    ax.set_aspect("equal")
    bare(ax)
    fig.text(0.5, 0.03, t["note"].format(steps=d["steps"], bm=bm, bn=bn, bk=bk, loads=d["loads"], fma=d["fma"],
                                         ratio=d["ratio"]), ha="center", fontsize=9, wrap=True)
    return fig


# ---------------------------------------------------------------------------------------------------------------------
# Registry, drawing, CLI
# ---------------------------------------------------------------------------------------------------------------------
FIGURES = {
    "thread_hierarchy": (draw_threads, THREADS_LABELS),
    "coalescing": (draw_coalescing, COALESCING_LABELS),
    "banks": (draw_banks, BANKS_LABELS),
    "matmul_tile": (draw_matmul, MATMUL_LABELS),
    "occupancy": (more.draw_occupancy, more.OCCUPANCY_LABELS),
    "online_softmax": (more.draw_online_softmax, more.SOFTMAX_LABELS),
    "flash_tiles": (more.draw_flash, more.FLASH_LABELS),
    "ws_pipeline": (more.draw_pipeline, more.PIPELINE_LABELS),
}


def path_of(out: str, name: str, lang: str) -> str:
    return os.path.join(out, name + ".png") if lang == "en" else os.path.join(out, lang, name + ".png")


def _korean_font() -> None:
    i18n.matplotlib_fonts()
    try:                                         # again on every figure: each one draws inside its own rc_context
        import koreanize_matplotlib

        koreanize_matplotlib.koreanize()
    except ImportError:
        pass
    matplotlib.rcParams["axes.unicode_minus"] = False


def draw(name: str, lang: str, out: str = OUT) -> str:
    """Draw one figure in one language into out (Korean: out/ko); the PNG's path."""
    fn, labels = FIGURES[name]
    before = i18n._CHOSEN
    path = path_of(out, name, lang)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with matplotlib.rc_context():
        i18n.set_lang(lang)
        try:
            if lang == "ko":
                _korean_font()
            fig = fn(labels[lang])
            fig.savefig(path, dpi=DPI)
            plt.close(fig)
        finally:
            i18n.set_lang(before)
    return path


def png_size(path: str) -> tuple[int, int]:
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    return struct.unpack(">II", head[16:24])


def check(names, out: str = OUT) -> list[str]:
    """Problems: a committed PNG missing, or of another pixel size than the one drawn now (redrawn in a temp dir)."""
    bad = []
    tmp = tempfile.mkdtemp(prefix="diagrams-")
    try:
        for name in names:
            for lang in LANGS:
                new = draw(name, lang, tmp)
                old = path_of(out, name, lang)
                if not os.path.exists(old):
                    bad.append(f"{os.path.relpath(old, ROOT)}: missing (python -m tools.diagrams --only {name})")
                elif png_size(old) != png_size(new):
                    bad.append(f"{os.path.relpath(old, ROOT)}: {png_size(old)} px, drawn now {png_size(new)} px")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--out", default=OUT, help="folder of the PNGs (default docs/diagrams; Korean in its ko/)")
    ap.add_argument("--check", action="store_true", help="redraw into a temporary folder; exit 1 when a PNG of --out "
                                                         "is missing or has another size")
    ap.add_argument("--only", action="append", choices=sorted(FIGURES), metavar="NAME",
                    help=f"only this figure (repeatable): {', '.join(FIGURES)}")
    args = ap.parse_args(argv)
    names = args.only or list(FIGURES)
    if args.check:
        bad = check(names, args.out)
        for b in bad:
            print(b)
        print(f"{len(names)} figure(s) x {len(LANGS)} languages redrawn: "
              + ("OK" if not bad else f"{len(bad)} problem(s)"))
        return 1 if bad else 0
    for name in names:
        for lang in LANGS:
            print(os.path.relpath(draw(name, lang, args.out), ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
