"""common/compile_cache.py: NVRTC's outputs kept on disk by a key of every input, so that pytest's workers and the
labs do not compile the same kernel twice. A cache must never answer for a compile whose inputs changed."""
import os
import pickle

import pytest

from common import compile_cache, cuda

SRC = """extern "C" __global__ void k(float* x) { x[threadIdx.x] = SCALE * HELPER(threadIdx.x); }
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    where = tmp_path / "cache"
    monkeypatch.setenv("COURSE_COMPILE_CACHE", str(where))
    cuda._compile.cache_clear()
    yield where
    cuda._compile.cache_clear()


def _kernel_dir(tmp_path, helper="(float)(i)"):
    d = tmp_path / "src"
    d.mkdir(exist_ok=True)
    (d / "helper.cuh").write_text(f"#define HELPER(i) {helper}\n")
    (d / "k.cu").write_text('#include "helper.cuh"\n' + SRC)
    return d


def test_a_second_compile_is_read_from_disk_and_is_the_same(cache, tmp_path, monkeypatch):
    d = _kernel_dir(tmp_path)
    a = cuda.compile_report(str(d / "k.cu"), "sm_80", defines={"SCALE": 2})
    entries = [p for p in os.listdir(cache) if p.startswith("nvrtc-")]
    assert len(entries) == 1
    cuda._compile.cache_clear()                          # a new process, as far as the in-memory cache knows
    monkeypatch.setattr(cuda, "_nvrtc_compile", lambda *a_: pytest.fail("NVRTC ran for a compile on disk"))
    b = cuda.compile_report(str(d / "k.cu"), "sm_80", defines={"SCALE": 2})
    assert b.cubin == a.cubin and b.ptx == a.ptx and b.kernels["k"].registers == a.kernels["k"].registers


@pytest.mark.parametrize("change", ["define", "arch", "header", "source"])
def test_every_input_is_in_the_key(cache, tmp_path, change):
    """A changed define, architecture, included header or source compiles anew: its PTX shows the change."""
    d = _kernel_dir(tmp_path)
    cuda.compile_report(str(d / "k.cu"), "sm_80", defines={"SCALE": 2})
    cuda._compile.cache_clear()
    defines, arch = {"SCALE": 2}, "sm_80"
    if change == "define":
        defines = {"SCALE": 3}
    elif change == "arch":
        arch = "sm_90"
    elif change == "header":
        _kernel_dir(tmp_path, helper="(float)(i) + 7.0f")
    else:
        (d / "k.cu").write_text('#include "helper.cuh"\n' + SRC.replace("SCALE *", "SCALE * 5.0f *"))
    rep = cuda.compile_report(str(d / "k.cu"), arch, defines=defines)
    assert len([p for p in os.listdir(cache) if p.startswith("nvrtc-")]) == 2
    # what the PTX must show: 3.0f, sm_90, 7.0f, 10.0f (2 x 5) as PTX writes them
    want = {"define": "0f40400000", "arch": ".target sm_90", "header": "0f40E00000", "source": "0f41200000"}[change]
    assert want in rep.ptx, rep.ptx[-600:]


def test_an_unreadable_entry_is_a_miss_and_the_cache_can_be_off(cache, tmp_path, monkeypatch):
    d = _kernel_dir(tmp_path)
    cuda.compile_report(str(d / "k.cu"), "sm_80", defines={"SCALE": 2})
    (entry,) = [p for p in os.listdir(cache) if p.startswith("nvrtc-")]
    (cache / entry).write_bytes(b"not a pickle")
    assert compile_cache.get(entry) is None
    cuda._compile.cache_clear()
    assert cuda.compile_report(str(d / "k.cu"), "sm_80", defines={"SCALE": 2}).kernels["k"].registers > 0
    assert isinstance(pickle.loads((cache / entry).read_bytes()), tuple)      # rewritten by the fresh compile
    monkeypatch.setenv("COURSE_COMPILE_CACHE", "0")
    assert compile_cache.folder() is None and compile_cache.get(entry) is None
    compile_cache.put("nvrtc-x", (1,))
    assert not (cache / "nvrtc-x").exists()


def test_the_cli_says_where_and_clears(cache, capsys):
    compile_cache.put("nvrtc-a", ("log", "ptx", b"cubin"))
    assert compile_cache.main([]) == 0 and "1 entries" in capsys.readouterr().out
    assert compile_cache.main(["--clear"]) == 0 and "removed 1" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        compile_cache.main(["--help"])


def test_the_folder_is_kept_under_its_limit_least_recently_used_first(cache, monkeypatch):
    """Every kernel edit makes new keys: prune removes the least recently used entries past the limit (a hit counts as
    a use), and the first write of a process prunes."""
    import time

    for i in range(4):
        compile_cache.put(f"nvrtc-{i}", b"x" * 1000)
    now = time.time()
    for i in range(4):
        os.utime(cache / f"nvrtc-{i}", (now - 100 + i, now - 100 + i))     # 0 oldest ... 3 newest
    assert compile_cache.get("nvrtc-0") is not None                       # used now: the newest
    assert compile_cache.prune(str(cache), max_bytes=2500) == 2
    assert sorted(os.listdir(cache)) == ["nvrtc-0", "nvrtc-3"]
    monkeypatch.setattr(compile_cache, "_pruned", False)
    monkeypatch.setattr(compile_cache, "MAX_BYTES", 1500)
    compile_cache.put("nvrtc-new", b"y" * 10)
    assert sorted(os.listdir(cache)) == ["nvrtc-0", "nvrtc-new"]
