"""Install what this machine needs into the running interpreter's environment (the Makefile runs it inside .venv).

Run by `make setup` / `make run` / `make test`; by hand: `.venv/bin/python tools/setup_env.py [--dry-run] [--unpinned]`.

It looks for an NVIDIA driver (nvidia-smi), reads the highest CUDA version the driver supports, and picks one of
three set-ups, each with a constraints file of the exact versions it was tested with:

    no driver   requirements/cpu.txt     torch (CPU build), triton, CuPy + NVRTC + CUDA 13.0 headers: the CPU tier
                                         (Triton in its interpreter, CUDA C compiled with NVRTC, nothing timed)
    CUDA 13.x   requirements/cuda13.txt  what the H200 runs used (torch built for CUDA 13.0, triton, cupy-cuda13x)
    CUDA 12.x   requirements/cuda12.txt  the same versions with the CUDA 12 wheels of CuPy and NVRTC

`--unpinned` (`make setup UNPINNED=1`) installs without the constraints file: the newest releases the project's
open ranges allow, to try whether a newer torch / triton / CuPy still passes `make test` (then refresh the file).
Environment: TORCH_SPEC replaces the torch requirement; TORCH_INDEX adds a package index for torch (e.g.
https://download.pytorch.org/whl/cpu for the CPU build on a machine where PyPI's default torch is a CUDA build).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (extra of pyproject.toml, constraints file, why this set) per set-up
SETUPS = {
    "cpu": ("cuda13", "requirements/cpu.txt", "no NVIDIA driver (CPU-only: interpreter + NVRTC compile)"),
    "cuda13": ("cuda13", "requirements/cuda13.txt", "NVIDIA driver for CUDA 13"),
    "cuda12": ("cuda12", "requirements/cuda12.txt", "NVIDIA driver for CUDA 12"),
}


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


def choose(cuda_major: int | None) -> str:
    if cuda_major is None:
        return "cpu"
    if cuda_major >= 13:
        return "cuda13"
    if cuda_major == 12:
        return "cuda12"
    sys.exit(
        f"setup_env: the NVIDIA driver supports CUDA {cuda_major}.x only; this course needs a driver for CUDA 12 or "
        "newer (CuPy and PyTorch wheels are built for 12.x/13.x). Update the driver, or run without a GPU."
    )


def pinned(path: str, name: str) -> str | None:
    """The version a constraints file pins for a package, or None."""
    with open(os.path.join(ROOT, path)) as f:
        for line in f:
            m = re.match(rf"^{re.escape(name)}==(\S+)", line.strip(), re.I)
            if m:
                return m.group(1)
    return None


def commands(setup: str, unpinned: bool) -> list[list[str]]:
    extra, constraints, _ = SETUPS[setup]
    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    cons = [] if unpinned else ["-c", os.path.join(ROOT, constraints)]
    torch_req = os.environ.get("TORCH_SPEC") or "torch"
    if torch_req == "torch" and unpinned and setup == "cpu":
        # the CPU build: an open `torch` would pull a multi-GB CUDA build on a machine without a GPU
        torch_req = f"torch=={pinned(constraints, 'torch')}"
    index = ["--extra-index-url", os.environ["TORCH_INDEX"]] if os.environ.get("TORCH_INDEX") else []
    return [
        pip + ["--upgrade", "pip"],
        # torch first, on its own, so its build (CPU or CUDA) is decided before anything that depends on it
        pip + index + cons + [torch_req],
        pip + cons + ["-e", f"{ROOT}[{extra},test,docs]"],
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry-run", action="store_true", help="print the pip commands without running them")
    ap.add_argument("--unpinned", action="store_true", default=os.environ.get("UNPINNED", "") not in ("", "0"),
                    help="ignore the constraints file: newest releases (also UNPINNED=1)")
    ap.add_argument("--setup", choices=sorted(SETUPS), default=None,
                    help="force a set-up instead of detecting the driver")
    args = ap.parse_args(argv)

    setup = args.setup or choose(driver_cuda_major())
    _, constraints, why = SETUPS[setup]
    how = "newest releases (unpinned)" if args.unpinned else f"versions pinned by {constraints}"
    print(f"setup_env: {why}; set-up '{setup}', {how}", flush=True)
    for cmd in commands(setup, args.unpinned):
        print("  $", " ".join(cmd[2:]), flush=True)
        if not args.dry_run:
            subprocess.run(cmd, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
