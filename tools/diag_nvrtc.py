"""Diagnose the NVRTC compile report on this machine: which libnvrtc, its version, the raw ptxas log."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cupy_backends.cuda.libs import nvrtc  # noqa: E402

from common import cuda  # noqa: E402

print("nvrtc", nvrtc.getVersion(), "cuobjdump", cuda.find_cuobjdump(), "headers", cuda._header_dirs())
src = 'extern "C" __global__ void k(float* x) { x[threadIdx.x] += 1.0f; }\n'
for opts in (["-arch=sm_90", "--ptxas-options=-v"], ["-arch=sm_90", "-Xptxas", "-v"], ["--gpu-architecture=sm_90", "--ptxas-options=--verbose"]):
    p = nvrtc.createProgram(src, "k.cu", [], [])
    try:
        nvrtc.compileProgram(p, opts)
        print(opts, "LOG:", repr(nvrtc.getProgramLog(p))[:600])
    except Exception as e:
        print(opts, "ERR", e)
try:
    maps = open("/proc/self/maps").read()
    print(sorted({l.split()[-1] for l in maps.splitlines() if "nvrtc" in l}))
except Exception as e:
    print(e)
