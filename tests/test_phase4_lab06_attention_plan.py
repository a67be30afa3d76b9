"""Lab 4.6 on the GPUs learners have, simulated in the CPU tier (common.plan): which variants run on a T4, an RTX 4090
and an H200 and why the others do not; the Triton tiles each GPU's shared memory holds (the preferred tile where it
fits, a fallback where it does not); the CUDA C rungs' register caps from the SM's shared memory; the Hopper
persistent grid from the SM count; a tuned record applied only on the GPU it was made on; and `--set NAME=VALUE`
changing a kernel's configuration and the source the plan reports. Compiling every launch for every profile is
tests/test_gpu_plans.py's."""
import json

import pytest

from common import config, device, plan, tuned
from phase4_optimization.lab06_attention import bench as attb
from phase4_optimization.lab06_attention import hopper
from phase4_optimization.lab06_attention import lab as att


@pytest.fixture
def no_overrides():
    config.set_overrides([])
    yield
    config.set_overrides([])


def _plan(slug):
    return plan.make(att, attb, device.profile_info(slug))


def _launch(p, kernel, case_start=""):
    hits = [x for x in p.launches if x.kernel == kernel and x.case.startswith(case_start)]
    assert hits, f"no launch of {kernel} ({case_start!r}) in {[x.kernel for x in p.launches]}"
    return hits[0]


def test_t4_runs_only_the_naive_version(no_overrides):
    p = _plan("t4")
    why = {v.name: v.why for v in p.skipped}
    assert "sm_80" in why[att.FLASH_NAME] and "bf16 tl.dot" in why[att.FLASH_NAME]
    for rung in ("01", "02", "02w"):
        assert "sm_80" in why[att.CUDA_VARIANT_NAMES[rung]]
    for _rung, name, _kernel, _what in att.HOPPER_RUNGS:
        assert "Hopper-only" in why[name] and "sm_90a" in why[name]
    assert "cuDNN" in why["torch SDPA cuDNN"] and "sm_80" in why["torch SDPA flash"]
    assert p.running == [att.NAIVE_NAME]
    assert [x.kernel for x in p.launches] == ["naive_softmax_kernel"]
    assert p.configs == []                      # no tile was resolved for a kernel that does not run there


def test_rtx_4090_gets_tiles_its_99_kib_hold(no_overrides):
    p = _plan("rtx-4090")
    g = p.gpu
    assert g.smem_per_block_optin < 100 * 1024
    assert all(not x.variant.startswith("cuda 0" + r) for x in p.launches for r in "34567")
    skipped = {v.name: v.why for v in p.skipped}
    assert set(skipped) == {n for _r, n, _k, _w in att.HOPPER_RUNGS}
    assert all("Hopper-only" in w and "sm_89" in w for w in skipped.values())
    fwd = _launch(p, "attn_fwd_kernel", "fwd D128 non-causal")
    # the preferred 128 x 128 tile with 3 stages needs ~224 KiB: the first fallback that fits is 128 x 64, 2 stages
    assert att.fwd_preferred(128) == {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3}
    assert (fwd.defines["BLOCK_M"], fwd.defines["BLOCK_N"], fwd.num_stages) == (128, 64, 2)
    assert fwd.grid == (4096 // 128, 4 * 32)
    dkdv, dq = _launch(p, "attn_bwd_dkdv_kernel"), _launch(p, "attn_bwd_dq_kernel")
    assert (dkdv.defines["BLOCK_M"], dkdv.defines["BLOCK_N"], dq.defines["BLOCK_M"], dq.defines["BLOCK_N"]) == \
        (32, 128, 128, 32)
    fitted = [r for r in p.configs if "needs more than 99 KiB" in r.family]
    assert any(r.family.startswith("triton attn_fwd_kernel D128 full") for r in fitted)
    # D = 64 keeps the preferred tile: it fits
    d64 = _launch(p, "attn_fwd_kernel", "fwd D64")
    assert (d64.defines["BLOCK_N"], d64.num_stages) == (64, 3)
    # one 64 KiB CTA of rung 02 per ~100 KiB SM: no register cap for three
    rung02 = _launch(p, att.KERNELS["02"])
    assert rung02.defines["MIN_BLOCKS"] == 1 and rung02.dyn_smem == 64 * 1024 and rung02.threads == 128
    pred = p.predictions
    tile = next(v for k, v in pred.items() if k.startswith("Triton forward tile"))
    assert tile.startswith("128 x 64, 2 stages")


def test_h200_runs_everything_with_the_preferred_tiles(no_overrides):
    p = _plan("h200")
    assert not p.skipped
    fwd = _launch(p, "attn_fwd_kernel", "fwd D128 non-causal")
    assert (fwd.defines["BLOCK_N"], fwd.num_stages, fwd.config_source) == (128, 3, "default")
    assert _launch(p, att.KERNELS["02"]).defines["MIN_BLOCKS"] == 3
    # rung 07 is persistent: one block per SM of this GPU
    rung07 = [x for x in p.launches if x.kernel == hopper.KERNELS["07"]]
    assert rung07 and all(x.grid == (p.gpu.sms,) for x in rung07)
    rung06 = _launch(p, hopper.KERNELS["06"])
    assert rung06.arch == "sm_90a" and rung06.dyn_smem == hopper.smem_bytes(128, 3) <= p.gpu.smem_per_block_optin
    assert _plan("h100-pcie").gpu.sms != p.gpu.sms
    assert _launch(_plan("h100-pcie"), hopper.KERNELS["07"]).grid == (device.profile_info("h100-pcie").sms,)


def test_set_changes_a_kernels_configuration_and_its_source(no_overrides):
    config.set_overrides(["FWD_BLOCK_N=64", "STAGES_06=2", "NWARPS=8"])
    p = _plan("h100-sxm")
    fwd = _launch(p, "attn_fwd_kernel", "fwd D128 non-causal")
    assert fwd.defines["BLOCK_N"] == 64 and "--set FWD_BLOCK_N=64" in fwd.config_source
    rung06 = [x for x in p.launches if x.kernel == hopper.KERNELS["06"] and "--set" in x.config_source]
    assert rung06 and rung06[0].dyn_smem == hopper.smem_bytes(128, 2)
    rung02 = _launch(p, att.KERNELS["02"])
    assert rung02.threads == 256 and rung02.defines["NWARPS"] == 8 and rung02.grid[0] == 4096 // 128
    assert rung02.defines["MIN_BLOCKS"] == 1                  # the 4-warp cap of 3, halved for 8 warps
    assert _launch(p, att.KERNELS["02w"]).threads == 128       # rung 02w keeps its 4 warps
    config.set_overrides([])
    assert _launch(_plan("h100-sxm"), "attn_fwd_kernel").config_source == "default"


def test_a_set_that_breaks_the_tile_is_refused_by_name(no_overrides):
    config.set_overrides(["FWD_BLOCK_N=96"])
    with pytest.raises(ValueError, match="BLOCK_N must be a power of two"):
        att.config_for("fwd", 128, False, "bfloat16", device.profile_info("h200"))


def test_a_tuned_record_applies_only_on_its_gpu(tmp_path, monkeypatch, no_overrides):
    monkeypatch.setattr(tuned, "ROOT", str(tmp_path))
    folder = tmp_path / "results" / "h200"
    folder.mkdir(parents=True)
    rec = {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 4, "TMA": True}
    (folder / f"{att.TUNED_RECORD}.json").write_text(json.dumps(
        {"gpu": "NVIDIA H200", "winner": {att.record_key("fwd", 128, False, "bfloat16"): rec}}))
    tuned.forget()
    try:
        fwd = _launch(_plan("h200"), "attn_fwd_kernel", "fwd D128 non-causal")
        assert fwd.num_stages == 4 and fwd.defines["TMA"] is True and "tuned on NVIDIA H200" in fwd.config_source
        other = _launch(_plan("h100-sxm"), "attn_fwd_kernel", "fwd D128 non-causal")
        assert other.num_stages == 3 and other.config_source == "default"
    finally:
        tuned.forget()


@pytest.mark.parametrize("slug", device.profiles())
def test_every_default_tile_fits_its_gpu_by_the_estimate(slug):
    """The estimate the fallback is chosen by (an upper bound of what Triton allocates: the plan test compiles the
    benchmark's tiles) holds every head dim's default within the GPU's limit, where the flash kernels run."""
    g = device.profile_info(slug)
    if att.triton_unavailable(g):
        pytest.skip(att.triton_unavailable(g))
    for d in att.FLASH_HEAD_DIMS:
        for causal in (False, True):
            assert att.smem_estimate("fwd", att.fwd_default_gpu(d, causal, g), d, arch=g.arch) <= \
                g.smem_per_block_optin
        assert att.smem_estimate("bwd", att.bwd_default_gpu(d, g), d, arch=g.arch) <= g.smem_per_block_optin


def test_min_blocks_follow_the_architecture_and_the_sms_shared_memory():
    assert att.min_blocks_default("02", 128, 4, "sm_90") == 3
    assert att.min_blocks_default("02", 64, 4, "sm_90") == 4
    assert att.min_blocks_default("02", 128, 4, "sm_80") == 2
    assert att.min_blocks_default("02", 128, 4, "sm_120") == 1       # ~100 KiB an SM: one 64 KiB CTA
    assert att.min_blocks_default("02", 128, 8, "sm_90") == 1
    assert att.min_blocks_default("02w", 128, 4, "sm_90") == 2 == att.WIDE_MAX_BLOCKS[128]
