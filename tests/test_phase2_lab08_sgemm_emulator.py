"""Lab 2.8 SGEMM ladder: the kernels themselves run on the CPU, by an emulator of the real CUDA C source.

The .cu file is compiled with g++ against a small shim (float4, threadIdx, __syncthreads, cp.async), one coroutine per
CUDA thread. The kernels include common/cuda's headers (store4 of epilogue.cuh; cp_async.cuh, whose copies are guarded
by __CUDA_ARCH__ and so left to the shim): the build adds -I common/cuda and host stand-ins for the few CUDA names the
headers use. Between two barriers the threads of a block run one after another, in forward or reverse order, which is
the most hostile schedule for a missing __syncthreads; cp.async copies land either at issue ("early") or only when the
thread waits for their group ("late"), which catches a wrong wait depth or a stage refilled too soon; dynamic shared
memory starts as NaN; A, B and C sit between NaN guard zones (a read past an edge poisons the result, a write past it
is seen); -fsanitize=alignment aborts on a misaligned float4. test_emulator_catches_pipeline_bugs shows that each of
these checks fails on a kernel with the matching bug. (Compiler facts, the plan, validation and the GPU tier:
tests/test_phase2_lab08_sgemm_ladder.py.)
"""
import ctypes
import hashlib
import json
import os
import pickle
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from common import check, cuda
from phase2_cuda.lab08_sgemm import bench as sgb
from phase2_cuda.lab08_sgemm import lab as sg


# ---------------------------------------------------------------------------------------------------------------------
# The emulator: the CUDA C source, compiled by g++ and run on the CPU
# ---------------------------------------------------------------------------------------------------------------------
EMU_PRELUDE = r'''
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
#include <ucontext.h>
using std::size_t;
struct emu_uint3 { unsigned x, y, z; };
static emu_uint3 threadIdx, blockIdx, blockDim, gridDim;
struct alignas(16) float4 { float x, y, z, w; };
static inline float4 make_float4(float x, float y, float z, float w)
{
    float4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v;
}
struct alignas(8) float2 { float x, y; };
static inline float2 make_float2(float x, float y) { float2 v; v.x = x; v.y = y; return v; }
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static
// host stand-ins for the CUDA names common/cuda's headers use outside their __CUDA_ARCH__ guards
static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
static inline size_t __cvta_generic_to_shared(const void* p) { return (size_t)p; }
void __syncthreads();
void cp_async_4(float* dst, const float* src, int src_bytes);
void cp_async_16(float* dst, const float* src, int src_bytes);
void cp_async_commit();
void emu_cp_async_wait(int n);
template <int N> inline void cp_async_wait() { emu_cp_async_wait(N); }
extern "C" { extern float4 dyn_smem[]; }
#line 1 "kernel.cu"
'''

EMU_RUNTIME = r'''
#line 1 "emulator"
extern "C" { float4 dyn_smem[(1 << 20) / 16]; }
namespace emu {
struct Copy { float* dst; const float* src; int n; int size; };
enum { READY, AT_BAR, DONE };
struct Thr { ucontext_t ctx; std::vector<char> stack; int state; emu_uint3 tid;
             std::vector<std::vector<Copy>> groups; std::vector<Copy> open; };
static std::vector<Thr> thr;
static ucontext_t sched;
static int cur = -1, copy_mode = 0;
static char errbuf[512];
static bool failed = false;
static const char* lo[2];
static const char* hi[2];
typedef void (*kfn)(int, int, int, float, const float*, const float*, float, float*, int);
static kfn g_fn;
static int gM, gN, gK, gvec;
static float galpha, gbeta;
static const float* gA;
static const float* gB;
static float* gC;
static size_t smem_bytes;
static void fail(const char* what, const void* p, long v) {
    if (!failed) { snprintf(errbuf, sizeof errbuf, "%s (address %p, %ld)", what, p, v); failed = true; }
}
static void do_copy(const Copy& c) {
    if (c.n > 0) {
        const char* s = (const char*)c.src;
        bool inside = false;
        for (int i = 0; i < 2; ++i) inside |= s >= lo[i] && s + c.n <= hi[i];
        if (!inside) { fail("cp.async reads outside A and B", c.src, c.n); return; }
        memcpy(c.dst, c.src, c.n);
    }
    memset((char*)c.dst + c.n, 0, c.size - c.n);     // zero-fill, as the hardware does for src-size < cp-size
}
static void issue(float* dst, const float* src, int n, int size) {
    if (n < 0 || n > size) fail("cp.async src-size out of range", src, n);
    if (((uintptr_t)dst % size) || ((uintptr_t)src % size)) fail("cp.async address not aligned to its size", src, size);
    const char* d = (const char*)dst;
    if (d < (const char*)dyn_smem || d + size > (const char*)dyn_smem + smem_bytes)
        fail("cp.async writes outside the dynamic shared memory", dst, size);
    if (failed) return;
    Copy c{dst, src, n, size};
    if (copy_mode == 1) do_copy(c); else thr[cur].open.push_back(c);
}
static void entry() { g_fn(gM, gN, gK, galpha, gA, gB, gbeta, gC, gvec); thr[cur].state = DONE; }
}  // namespace emu
void __syncthreads() { emu::Thr& t = emu::thr[emu::cur]; t.state = emu::AT_BAR; swapcontext(&t.ctx, &emu::sched); }
void cp_async_4(float* dst, const float* src, int n) { emu::issue(dst, src, n, 4); }
void cp_async_16(float* dst, const float* src, int n) { emu::issue(dst, src, n, 16); }
void cp_async_commit() { emu::Thr& t = emu::thr[emu::cur]; t.groups.push_back(t.open); t.open.clear(); }
void emu_cp_async_wait(int n) {
    emu::Thr& t = emu::thr[emu::cur];
    while ((int)t.groups.size() > n) {
        for (const emu::Copy& c : t.groups.front()) emu::do_copy(c);
        t.groups.erase(t.groups.begin());
    }
}
static emu::kfn lookup(const char* name) {
@DISPATCH@
    return nullptr;
}
// order: 0 = threads 0..n-1 between barriers, 1 = reverse, 2 = alternate per phase; copy_mode: 0 late, 1 early
extern "C" const char* emu_launch(const char* name, int gx, int gy, int gz, int bx, int by, int bz, long smem,
                                  int order, int copy_mode, int M, int N, int K, float alpha, const float* A,
                                  long a_elems, const float* B, long b_elems, float beta, float* C, int vec)
{
    using namespace emu;
    failed = false;
    g_fn = lookup(name);
    if (!g_fn) return "unknown kernel";
    gM = M; gN = N; gK = K; galpha = alpha; gbeta = beta; gA = A; gB = B; gC = C; gvec = vec;
    lo[0] = (const char*)A; hi[0] = lo[0] + 4 * a_elems;
    lo[1] = (const char*)B; hi[1] = lo[1] + 4 * b_elems;
    emu::copy_mode = copy_mode;
    smem_bytes = (size_t)smem;
    if (smem_bytes > sizeof(dyn_smem)) return "dynamic shared memory larger than the emulator's 1 MiB";
    const int nt = bx * by * bz;
    thr.resize(nt);
    for (Thr& t : thr) if (t.stack.size() < (1u << 16)) t.stack.resize(1u << 16);
    blockDim = {(unsigned)bx, (unsigned)by, (unsigned)bz};
    gridDim = {(unsigned)gx, (unsigned)gy, (unsigned)gz};
    for (int z = 0; z < gz; ++z) for (int y = 0; y < gy; ++y) for (int x = 0; x < gx; ++x) {
        blockIdx = {(unsigned)x, (unsigned)y, (unsigned)z};
        float* s = (float*)dyn_smem;
        for (size_t i = 0; i < smem_bytes / 4; ++i) s[i] = std::nanf("");   // unwritten shared memory reads NaN
        for (int i = 0; i < nt; ++i) {
            Thr& t = thr[i];
            t.state = READY; t.groups.clear(); t.open.clear();
            t.tid = {(unsigned)(i % bx), (unsigned)((i / bx) % by), (unsigned)(i / (bx * by))};
            getcontext(&t.ctx);
            t.ctx.uc_stack.ss_sp = t.stack.data();
            t.ctx.uc_stack.ss_size = t.stack.size();
            t.ctx.uc_link = &sched;
            makecontext(&t.ctx, (void (*)())entry, 0);
        }
        for (int phase = 0;; ++phase) {
            const bool rev = order == 1 || (order == 2 && (phase & 1));
            for (int j = 0; j < nt; ++j) {
                const int i = rev ? nt - 1 - j : j;
                if (thr[i].state == DONE) continue;
                cur = i; threadIdx = thr[i].tid; thr[i].state = READY;
                swapcontext(&sched, &thr[i].ctx);
            }
            int at_bar = 0, done = 0;
            for (Thr& t : thr) { at_bar += t.state == AT_BAR; done += t.state == DONE; }
            if (failed) return errbuf;
            if (at_bar == 0) break;
            if (done) return "barrier divergence: threads exited while others wait at __syncthreads";
        }
    }
    return failed ? errbuf : nullptr;
}
'''

GUARD = 4096                     # floats of NaN on each side of every matrix
_BUILD_DIR = os.path.join(tempfile.gettempdir(), f"sgemm_emu_{os.getuid()}")
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++ (not installed)")


# <cuda_fp16.h> and <cuda_bf16.h> (which epilogue.cuh includes) for the host build: just the two storage types
HOST_HEADERS = {"cuda_fp16.h": "#pragma once\nstruct __half { unsigned short x; };\n",
                "cuda_bf16.h": "#pragma once\nstruct __nv_bfloat16 { unsigned short x; };\n"}


def _build(path: str, defines: dict | None = None, source: str | None = None, headers: dict | None = None) -> str:
    """Compile a .cu file for the emulator; returns the shared library's path (cached by content, the headers it may
    include too). `headers` ({name: text}) shadows common/cuda's headers of that name (for mutants)."""
    src = (source if source is not None else open(path).read()).replace("extern __shared__", "extern")
    names = cuda.kernel_names(path)
    dispatch = "\n".join(f'    if (!strcmp(name, "{n}")) return {n};' for n in names)
    full = EMU_PRELUDE + src + EMU_RUNTIME.replace("@DISPATCH@", dispatch)
    opts = [f"-D{k}={v}" for k, v in sorted((defines or {}).items())]
    inc = dict(HOST_HEADERS)
    lab_dir = os.path.dirname(os.path.abspath(path))        # common/cuda's headers, then the lab's own (.cuh)
    for d in (cuda.HEADER_DIR, lab_dir):
        for h in sorted(n for n in os.listdir(d) if n.endswith(".cuh")):
            with open(os.path.join(d, h)) as f:
                inc[h] = f.read()
    inc.update(headers or {})
    key = hashlib.sha1((full + " ".join(opts) + json.dumps(inc, sort_keys=True)).encode()).hexdigest()[:20]
    os.makedirs(_BUILD_DIR, exist_ok=True)
    so = os.path.join(_BUILD_DIR, f"emu_{key}.so")
    if not os.path.exists(so):
        work = tempfile.mkdtemp(dir=_BUILD_DIR)              # the source and the headers it includes, nothing else
        for h, text in inc.items():
            with open(os.path.join(work, h), "w") as f:
                f.write(text)
        cpp = os.path.join(work, "kernel.cpp")
        with open(cpp, "w") as f:
            f.write(full)
        # the library is built inside this build's own folder and renamed into place: two test workers building the
        # same key at once each rename a finished file (a shared name.tmp was renamed away under the other's feet)
        built = os.path.join(work, "emu.so")
        cmd = ["g++", "-std=c++17", "-O1", "-shared", "-fPIC", "-fno-strict-aliasing", "-fsanitize=alignment",
               "-fno-sanitize-recover=all", "-w", *opts, f"-I{work}", "-o", built, cpp]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"g++ failed on {os.path.basename(path)}:\n{r.stderr[-3000:]}"
        os.replace(built, so)
        shutil.rmtree(work, ignore_errors=True)
    return so


def _guarded(shape, rng, offset: int = 0):
    """(buffer, view): the view holds standard-normal values, NaN guard zones on both sides, `offset` floats in."""
    n = int(np.prod(shape))
    buf = np.full(n + 2 * GUARD + offset, np.nan, np.float32)
    view = buf[GUARD + offset: GUARD + offset + n].reshape(shape)
    view[...] = rng.standard_normal(shape)
    return buf, view


def _emulate_cases(so: str, cases: list) -> list[str]:
    """Run every case in a forked child (a crash or a sanitizer abort fails the test, not pytest).

    A case: (launch, M, N, K, alpha, beta, A, B, C, C_buffer, vec, order, copy_mode, reference). Returns failures."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                          # child: run, compare, report
        os.close(r)
        try:
            lib = ctypes.CDLL(so)
            f = lib.emu_launch
            f.restype = ctypes.c_char_p
            f.argtypes = [ctypes.c_char_p] + [ctypes.c_int] * 6 + [ctypes.c_long, ctypes.c_int, ctypes.c_int] + \
                [ctypes.c_int] * 3 + [ctypes.c_float, ctypes.c_void_p, ctypes.c_long, ctypes.c_void_p, ctypes.c_long,
                                      ctypes.c_float, ctypes.c_void_p, ctypes.c_int]
            fails = []
            for (p, m, n, k, alpha, beta, a, b, c, cbuf, vec, order, mode, ref) in cases:
                tag = f"{p.kernel} {m}x{n}x{k} alpha={alpha} beta={beta} vec={vec} order={order} " \
                      f"copies={'early' if mode else 'late'}"
                err = f(p.kernel.encode(), *p.grid, *p.block, p.smem, order, mode, m, n, k, alpha, a.ctypes.data,
                        a.size, b.ctypes.data, b.size, beta, c.ctypes.data, vec)
                if err:
                    fails.append(f"{tag}: {err.decode()}")
                    continue
                lo, hi = c.ctypes.data - cbuf.ctypes.data, c.ctypes.data - cbuf.ctypes.data + c.nbytes
                guards = np.concatenate([cbuf[:lo // 4], cbuf[hi // 4:]])
                if not np.isnan(guards).all():
                    fails.append(f"{tag}: wrote outside C")
                    continue
                res = check.compare(c, ref, "float32", sg.tolerance((m, n, k), "float32"))
                if not res.ok:
                    fails.append(f"{tag}: {res.message}")
            data = pickle.dumps(fails)
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            data = pickle.dumps([f"emulator raised {type(e).__name__}: {e}"])
        with os.fdopen(w, "wb") as fw:
            fw.write(data)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as fr:
        data = fr.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        return [f"emulator process died (wait status {status}): a crash, or -fsanitize=alignment found a misaligned "
                "16-byte access (its message is on stderr)"]
    return pickle.loads(data)


# Small shapes cover every edge (1, primes, tails of M, N and K, N or K % 4 != 0, K < one k-tile); BIG has interior
# blocks, full k-tiles and 16-byte rows, so the vector and unpredicated paths run too.
EMU_SHAPES = [(1, 1, 1), (5, 7, 3), (127, 129, 131), (3, 257, 17), (300, 200, 4), (1, 4097, 3), (129, 8, 33)]
BIG = (260, 264, 136)


def _cases(rung, shapes, rng, *, offsets=(0, 1), schedules=((2, 0), (1, 1)), big=True):
    """Each shape with aligned and offset views, beta = 0 (NaN in C) and alpha/beta with a real C, cycling through
    the schedules; BIG once, aligned, for each schedule."""
    out = []
    combos = [(off, ab) for off in offsets for ab in ((1.0, 0.0), (-0.75, 0.5))]
    todo = [(s, off, ab, schedules[i % len(schedules)]) for s in shapes for i, (off, ab) in enumerate(combos)]
    if big:
        todo += [(BIG, 0, ((1.0, 0.0), (-0.75, 0.5))[i % 2], sch) for i, sch in enumerate(schedules)]
    for (m, n, k), off, (alpha, beta), (order, mode) in todo:
        _, a = _guarded((m, k), rng, off)
        _, b = _guarded((k, n), rng, off)
        cbuf, c = _guarded((m, n), rng, off)
        ref = alpha * (a.astype(np.float64) @ b.astype(np.float64)) + (beta * c.astype(np.float64) if beta else 0.0)
        if beta == 0.0:
            c[...] = np.nan                       # beta = 0 must never read C
        out.append((sg.plan(rung, m, n, k), m, n, k, alpha, beta, a, b, c, cbuf, sg.vec_flags(a, b, c, n, k), order,
                    mode, ref))
    return out


@needs_gxx
@pytest.mark.parametrize("rung", range(1, 10), ids=lambda r: sg.RUNGS[r].kernel)
def test_emulated_rungs_01_09_match_reference(rung):
    so = _build(sg.CU, sg.compile_defines(sg.CU))
    shapes = EMU_SHAPES if rung > 3 else EMU_SHAPES[:5]         # 1024-thread blocks are slow to emulate
    fails = _emulate_cases(so, _cases(rung, shapes, check.rng(100 + rung), big=rung >= 4))
    assert not fails, f"{len(fails)} failures, first: {fails[:3]}"


EMU_CONFIGS = [sg.ASYNC_DEFAULT, sg.AsyncConfig(128, 256, 8, 64, 32, 8, 8, 3, 1),
               sg.AsyncConfig(64, 64, 16, 32, 32, 8, 4, 4, 4), sg.AsyncConfig(256, 128, 16, 32, 64, 8, 8, 3, 1),
               sg.AsyncConfig(128, 128, 16, 64, 32, 8, 8, 4, 2, 1)]      # DB: warp_tile_fma_db


@needs_gxx
@pytest.mark.parametrize("cfg", EMU_CONFIGS, ids=lambda c: c.short())
def test_emulated_cp_async_configs_match_reference(cfg):
    assert cfg in sgb.TUNE_SPACE
    so = _build(sg.CU_ASYNC, cfg.defines)
    default = cfg == sg.ASYNC_DEFAULT
    schedules = ((2, 0), (1, 1), (0, 0), (0, 1)) if default else ((2, 0), (1, 1))
    fails = _emulate_cases(so, _cases(cfg, EMU_SHAPES if default else EMU_SHAPES[:5], check.rng(7),
                                      schedules=schedules))
    assert not fails, f"{len(fails)} failures, first: {fails[:3]}"


def _mutant(text: str, old: str, new: str) -> str:
    assert old in text, f"mutation anchor not found: {old[:60]!r}"
    return text.replace(old, new, 1)


@needs_gxx
def test_emulator_catches_pipeline_bugs():
    """Each check of the emulator must be able to fail: one mutant per bug class, each must be caught."""
    src = open(sg.CU_ASYNC).read()
    pipeline = """        cp_async_wait<STAGES - 2>();     // this thread's copies of tile kt have landed ...
        __syncthreads();                 // ... and everyone's; and nobody still reads the stage refilled next
        const int next = kt + STAGES - 1;
        if (next < num_k_tiles) load_tile(next % STAGES, next);
        cp_async_commit();
"""
    early_refill = """        cp_async_wait<STAGES - 2>();
        const int next = kt + STAGES - 1;
        if (next < num_k_tiles) load_tile(next % STAGES, next);
        cp_async_commit();
        __syncthreads();
"""
    mutants = {
        "wait one group too shallow (needs late copies)": _mutant(
            src, "cp_async_wait<STAGES - 2>();", "cp_async_wait<STAGES - 1>();"),
        "refill issued before the barrier (needs early copies)": _mutant(src, pipeline, early_refill),
        "no barrier (needs serialized threads)": _mutant(
            src, "        __syncthreads();                 // ... and everyone's", "        //"),
        "no zero-fill in the K tail (needs NaN shared memory)": _mutant(
            src, "cp_async_4(as + i * A_ROW_STEP, ok ? a + i * a_row_step : A, ok ? 4 : 0);",
            "if (ok) cp_async_4(as + i * A_ROW_STEP, a + i * a_row_step, 4);"),
        "16-byte copies of B without checking VEC_B (needs the alignment check)": _mutant(
            src, "const bool vb = vec & VEC_B;", "const bool vb = true;"),
        "an A row past M is read (needs the bounds check on copies)": _mutant(
            src, "if (bm + a_m0 + i * A_ROW_STEP < M) a_rows_ok |= 1u << i;", "a_rows_ok |= 1u << i;"),
    }
    mutants = {what: (text, None) for what, text in mutants.items()}
    # the epilogue comes from common/cuda/epilogue.cuh: the host build must compile THAT store4, so a bug there fails
    with open(os.path.join(cuda.HEADER_DIR, "epilogue.cuh")) as f:
        epilogue = f.read()
    mutants["store4 without its column guard (needs the guard zones around C)"] = (
        src, {"epilogue.cuh": _mutant(epilogue, "if (c + j < N) p[j] = ", "p[j] = ")})
    rng = check.rng(5)
    missed = []
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:   # g++ runs in parallel
        libs = dict(zip(mutants, pool.map(lambda m: _build(sg.CU_ASYNC, sg.ASYNC_DEFAULT.defines, source=m[0],
                                                           headers=m[1]), mutants.values())))
    for what, so in libs.items():
        # K = 100: 7 k-tiles, more than STAGES, so stages are refilled while others are read
        cases = _cases(sg.ASYNC_DEFAULT, [(5, 7, 3), (150, 130, 100)], rng, schedules=((0, 0), (0, 1)), big=False)
        if not _emulate_cases(so, cases):
            missed.append(what)
    assert not missed, f"the emulator let these bugs through: {missed}"
