"""A content-addressed disk cache for what NVRTC and cuobjdump produce, shared by every process of one user.

The course compiles the same kernels many times: every GPU profile's plan compiles its launches for that profile's
architecture, the GPU page redraws from the same plans, the compile tests and the labs' compile tables compile them
again, and pytest's workers are separate processes, so common.cuda's in-memory cache never sees the others' work. A
compile is a pure function of its inputs, so its outputs are kept on disk under a key made of every input:

  the source text, the text of every header in the file's own folder and in common/cuda/ (the project's headers:
  an edit to one changes every key that may include it), the options (arch, defines, include folders), and the
  NVRTC version (which stands for the CUDA headers of the wheel it came with).

A disassembly is keyed by the cubin's bytes and the cuobjdump binary's path and size. Entries are written to a
temporary file and renamed into place, so a reader never sees half an entry; an unreadable entry is a miss. Every
edit of a kernel makes new keys, so the folder is kept under MAX_BYTES: a hit marks its entry used, and the first write
of a process removes the least recently used entries past the limit.

Where: $COURSE_COMPILE_CACHE (a folder), else <the system's temporary folder>/gpu-course-compile-<uid>.
COURSE_COMPILE_CACHE=0 turns the cache off (every compile runs NVRTC). `python -m common.compile_cache --help`.
"""
from __future__ import annotations

import glob
import hashlib
import os
import pickle
import tempfile

HEADER_SUFFIXES = (".cuh", ".h", ".hpp")
VERSION = 1                          # bumped when an entry's layout changes: older entries are then never read
MAX_BYTES = 1 << 30                  # past this, the least recently used entries go (checked once a process)
_pruned = False


def folder() -> str | None:
    """The cache folder (created, private to this user), or None when COURSE_COMPILE_CACHE=0."""
    where = os.environ.get("COURSE_COMPILE_CACHE", "")
    if where == "0":
        return None
    if not where:
        uid = os.getuid() if hasattr(os, "getuid") else 0
        where = os.path.join(tempfile.gettempdir(), f"gpu-course-compile-{uid}")
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
    except OSError:
        return None
    return where


def _headers(dirs) -> list[tuple[str, bytes]]:
    out = []
    for d in sorted(set(dirs)):
        for p in sorted(glob.glob(os.path.join(d, "*"))):
            if p.endswith(HEADER_SUFFIXES) and os.path.isfile(p):
                with open(p, "rb") as f:
                    out.append((p, f.read()))
    return out


def compile_key(src: str, header_dirs, options, nvrtc_version: str) -> str:
    """The key of one compile: sha256 over the source, the headers in `header_dirs`, the options and NVRTC's
    version."""
    h = hashlib.sha256()
    for part in (f"v{VERSION}", nvrtc_version, "\0".join(options), src):
        h.update(part.encode("utf-8", "surrogateescape") + b"\1")
    for path, text in _headers(header_dirs):
        h.update(path.encode() + b"\2" + text + b"\3")
    return "nvrtc-" + h.hexdigest()


def sass_key(cubin: bytes, tool: str) -> str:
    h = hashlib.sha256(f"v{VERSION}\1{tool}\1{os.path.getsize(tool) if os.path.exists(tool) else 0}\1".encode())
    h.update(cubin)
    return "sass-" + h.hexdigest()


def get(key: str):
    """The value stored under `key`, or None (a miss, the cache off, or an entry that cannot be read)."""
    where = folder()
    if where is None:
        return None
    path = os.path.join(where, key)
    try:
        with open(path, "rb") as f:
            value = pickle.load(f)
        os.utime(path)                                            # used now: the last to go when the folder is full
        return value
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ValueError):
        return None


def put(key: str, value) -> None:
    """Store `value` under `key` (atomically: a temporary file renamed into place); a failure to write is ignored.
    The first write of a process first trims the folder to MAX_BYTES (prune)."""
    global _pruned
    where = folder()
    if where is None:
        return
    if not _pruned:
        _pruned = True
        prune(where)
    try:
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, os.path.join(where, key))
    except OSError:
        pass


def _entries(where: str) -> list[str]:
    """The paths of every entry in the cache folder `where` (not the temporary files of a write under way)."""
    return glob.glob(os.path.join(where, "nvrtc-*")) + glob.glob(os.path.join(where, "sass-*"))


def prune(where: str, max_bytes: int | None = None) -> int:
    """Remove the least recently used entries of `where` until the rest fit in max_bytes (MAX_BYTES); the number
    removed."""
    limit = MAX_BYTES if max_bytes is None else max_bytes
    stats = []
    for p in _entries(where):
        try:
            st = os.stat(p)
        except OSError:
            continue
        stats.append((st.st_mtime, st.st_size, p))
    total, n = sum(size for _, size, _ in stats), 0
    for _, size, p in sorted(stats):                              # oldest use first
        if total <= limit:
            break
        try:
            os.unlink(p)
            total -= size
            n += 1
        except OSError:
            pass
    return n


def clear() -> int:
    """Remove every entry; the number removed."""
    where = folder()
    if where is None:
        return 0
    n = 0
    for p in _entries(where):
        try:
            os.unlink(p)
            n += 1
        except OSError:
            pass
    return n


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m common.compile_cache",
                                 description="The disk cache of NVRTC compiles and SASS disassemblies: where it is, "
                                             "how big, and --clear to empty it. COURSE_COMPILE_CACHE=<folder> moves "
                                             "it, COURSE_COMPILE_CACHE=0 turns it off.")
    ap.add_argument("--clear", action="store_true", help="remove every entry")
    args = ap.parse_args(argv)
    where = folder()
    if where is None:
        print("the compile cache is off (COURSE_COMPILE_CACHE=0, or its folder cannot be made)")
        return 0
    if args.clear:
        print(f"removed {clear()} entries from {where}")
        return 0
    entries = _entries(where)
    size = sum(os.path.getsize(p) for p in entries if os.path.exists(p))
    print(f"{where}: {len(entries)} entries, {size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
