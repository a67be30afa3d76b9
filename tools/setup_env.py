"""Install what this machine needs into the running interpreter's environment (the Makefile runs it inside .venv).

Run by `make run` / `make test`; by hand: `.venv/bin/python tools/setup_env.py [--dry-run]`.

It looks for an NVIDIA driver (nvidia-smi), reads the highest CUDA version the driver supports, and installs the
matching extra of pyproject.toml: `cuda13` (cupy-cuda13x, NVRTC 13.0, CUDA 13.0 headers) or `cuda12`. With no driver
it installs the CUDA 13 set anyway: CuPy then imports, CUDA C still compiles through the NVRTC wheel, and every
device call fails cleanly, which is what the CPU tier of the course relies on.
Set TORCH_SPEC to choose the torch requirement (default: torch==2.13.0 without a GPU, plain torch with one).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def driver_cuda_major() -> int | None:
    """The CUDA major version the installed driver supports, or None when no driver answers."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"CUDA Version:\s*(\d+)\.(\d+)", out)
    return int(m.group(1)) if m else None


def plan(cuda_major: int | None) -> tuple[str, list[str]]:
    if cuda_major is None:
        return "cuda13", ["torch==2.13.0"]
    if cuda_major >= 13:
        return "cuda13", ["torch"]
    if cuda_major == 12:
        return "cuda12", ["torch"]
    sys.exit(
        f"setup_env: the NVIDIA driver supports CUDA {cuda_major}.x only; this course needs a driver for CUDA 12 or "
        "newer (CuPy and PyTorch wheels are built for 12.x/13.x). Update the driver, or run without a GPU."
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true", help="print the pip commands without running them")
    args = ap.parse_args()

    major = driver_cuda_major()
    extra, torch_req = plan(major)
    if os.environ.get("TORCH_SPEC"):
        torch_req = [os.environ["TORCH_SPEC"]]
    where = f"NVIDIA driver for CUDA {major}" if major else "no NVIDIA driver (CPU-only: interpreter + NVRTC compile)"
    print(f"setup_env: {where}; installing extra [{extra}] and {' '.join(torch_req)}", flush=True)
    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    steps = [
        pip + ["--upgrade", "pip"],
        # torch first and pinned, so the project's open `torch>=2.4` does not pull a multi-GB build on a CPU machine
        pip + torch_req,
        pip + ["-e", f"{ROOT}[{extra}]"],
    ]
    for cmd in steps:
        print("  $", " ".join(cmd[2:]), flush=True)
        if not args.dry_run:
            subprocess.run(cmd, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
