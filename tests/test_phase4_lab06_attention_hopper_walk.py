"""Lab 4.6's persistent Hopper rungs walk the (query tile, head) work items (kernels_hopper.cu walk_tile): rung 07 in
head-major order, rung 08 causal in groups of WALK_HEADS heads, heaviest tiles first. CPU tier: a model of the walk,
the .cu's formulas pinned."""
import pytest

from phase4_optimization.lab06_attention import hopper as hp


def _walk(w, n_m, n_work, causal, lpt, heads_per_group):
    """kernels_hopper.cu's walk_tile: (query tile, head) of work item w."""
    if lpt and causal:
        per = heads_per_group * n_m
        grp, r = w // per, w % per
        gh = min(heads_per_group, n_work // n_m - heads_per_group * grp)
        return n_m - 1 - r // gh, heads_per_group * grp + r % gh
    m = w % n_m
    return (n_m - 1 - m if causal else m), w // n_m


@pytest.mark.parametrize("n_m,n_bh", [(1, 1), (3, 5), (32, 128), (7, 9), (33, 6)])
def test_rung08_causal_walk_visits_every_tile_once_and_balances_the_blocks(n_m, n_bh):
    """Rung 08's causal walk (walk_tile, lpt): every (query tile, head) once; inside a group of WALK_HEADS heads the
    tiles come heaviest first (tile i holds i + 1 key tiles); and at the forward target's grid (32 query tiles x 128
    heads) on 132 SMs - each block walking w = x, x + 132, ... as the persistent kernels do - the most loaded block
    ends within 4% of the average, where rung 07's head-major walk leaves one 10% or more above it."""
    wh = hp.CONFIG["WALK_HEADS"]
    n_work = n_m * n_bh
    for lpt in (False, True):
        order = [_walk(w, n_m, n_work, True, lpt, wh) for w in range(n_work)]
        assert sorted(order) == sorted((m, h) for m in range(n_m) for h in range(n_bh)), lpt
    lpt_order = [_walk(w, n_m, n_work, True, True, wh) for w in range(n_work)]
    for g0 in range(0, n_bh, wh):
        seq = [m for m, h in lpt_order if g0 <= h < g0 + wh]
        assert seq == sorted(seq, reverse=True), seq
    if (n_m, n_bh) == (32, 128):
        sms, load = 132, {}
        for lpt in (False, True):
            per_block = [0] * sms
            for w in range(n_work):
                per_block[w % sms] += _walk(w, n_m, n_work, True, lpt, wh)[0] + 1
            load[lpt] = max(per_block) / (sum(per_block) / sms)
        assert load[True] <= 1.04 and load[False] >= 1.10, load
    src = open(hp.KERNEL_PATH).read()
    for line in ("const int per = WALK_HEADS * n_m, grp = w / per, r = w - grp * per;",
                 "const int gh = min(WALK_HEADS, n_work / n_m - WALK_HEADS * grp);",
                 "return make_tile(n_m - 1 - r / gh, WALK_HEADS * grp + r % gh, a);",
                 "HOPPER_PERSISTENT(attn_07_wgmma_persistent, consumer_07, false)",
                 "HOPPER_PERSISTENT(attn_08_wgmma_persistent_pingpong, consumer_08, true)"):
        assert line in src, line
