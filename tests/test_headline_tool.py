"""tools/headline.py (the before/after check of every lab's headline): its cases name real labs, variants and
functions, so the GPU run cannot fail on a stale name; --list works without a GPU."""
import subprocess
import sys

from common import device, lab
from tools import headline


def test_every_case_names_a_real_lab_and_its_variants_or_functions():
    for num, (phase, name, _, spec) in headline.CASES.items():
        L = lab.lab_module(phase, name)
        kind = spec[0]
        if kind == "V":
            headline._variant(L, spec[3])
            headline._variant(L, spec[4])
        elif kind in ("copy", "cumsum") or (kind == "softmax" and spec[3]):
            headline._variant(L, spec[3])
        need = {"layernorm": ["layernorm_fwd", "make_inputs"], "epilogue": ["linear"],
                "attention": ["flash_attn_fwd", "sdpa_fwd"], "block": ["BlockPlan", "torch_module", "make_inputs"],
                "softmax": ["make_inputs"]}.get(kind, [])
        for attr in need:
            assert callable(getattr(L, attr, None)), f"{num}: {L.__name__} has no {attr}"
        if kind == "layernorm":
            assert callable(lab.bench_module(phase, name).compiled_peers)
        assert headline.committed(num, "h200") is not None, f"{num}: no committed headline to compare with"


def test_list_and_the_no_gpu_sentence():
    r = subprocess.run([sys.executable, "-m", "tools.headline", "--list"], capture_output=True, text=True)
    assert r.returncode == 0 and "4.6" in r.stdout
    if not device.has_gpu():
        r = subprocess.run([sys.executable, "-m", "tools.headline", "--only", "2.7"], capture_output=True, text=True)
        assert r.returncode != 0 and "Traceback" not in r.stderr
