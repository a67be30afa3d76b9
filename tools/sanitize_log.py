"""The log parser of the sanitizer sweep (tools/sanitize.py), a pure function: a compute-sanitizer log with the
worker's marker lines interleaved goes in, and each error comes out attributed - to the kernel it names when that
kernel is ours, to '(library)' when it names a library kernel (torch, CuPy, cuBLAS, ...), else to the variant whose
markers surround it, else to '(outside variants)' - with the parsed total beside the sanitizer's own ERROR SUMMARY."""
from __future__ import annotations

import re

MARK = "@@SANITIZE"
LIBRARY = "(library)"
OUTSIDE = "(outside variants)"

# kernels that belong to a library, by name: torch (at::, c10::), CuPy (cupy_*), CUB/Thrust, cuBLAS/cuBLASLt, cuDNN
_LIBRARY_KERNEL = re.compile(
    r"^(void\s+)?(at::|c10::|cub::|thrust::|cutlass|cublas|cudnn|cupy_|nvjet|sm\d+_xmma|ampere_|hopper_|gemv|gemm|"
    r"elementwise_kernel|vectorized_elementwise|unrolled_elementwise|reduce_kernel|distribution_|"
    r"(\w+::)*(native|philox|curand))", re.I)


_PREFIX = re.compile(r"^=+ ?")
_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+errors?")
# racecheck ends with its own line instead: "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
_RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY:\s*\d+\s+hazards?\s+displayed\s*\((\d+)\s+errors?")
_AT_NAME = re.compile(r"\bat (?:0x[0-9a-fA-F]+ in (?:\S*:\d+:)?)?(?P<k>[^\s+][^+]*?)\+0x[0-9a-fA-F]+")
_AT_OLD = re.compile(r"\bat 0x[0-9a-fA-F]+ in (?:\S+:\d+:)?(?P<k>[A-Za-z_][\w:<>, ]*?)(?:\(|$)")
_RACE = re.compile(r"^(?P<sev>Error|ERROR|Warning|WARNING|Information|INFO):\s*Race reported between")
_ERROR_HEAD = re.compile(
    r"^(Invalid __\w+__ (read|write|atomic)|Invalid (global|shared|local|generic|address)|Misaligned|"
    r"Out-of-range|Uninitialized __\w+__ memory|Host API uninitialized|Barrier error|Warp (level programming|"
    r"sync)? ?error|Illegal|Hardware exception|Malloc/Free|Leaked|Cuda Runtime API error|Program hit|"
    r"Invalid (PC|instruction)|Stack overflow|Invalid arguments|Unspecified|Error:)", re.I)


def _kernel_of(lines: list[str]) -> str | None:
    for ln in lines:
        m = _AT_NAME.search(ln)
        if m and not m.group("k").startswith("0x"):
            return _clean_name(m.group("k"))
        m = _AT_OLD.search(ln)
        if m:
            return _clean_name(m.group("k"))
    return None


def _clean_name(k: str) -> str:
    k = k.strip()
    k = re.sub(r"^void\s+", "", k)
    k = re.sub(r"\(.*$", "", k)          # drop a parameter list
    return k.strip()


def _is_library(kernel: str) -> bool:
    return bool(_LIBRARY_KERNEL.search(kernel)) or "::" in kernel


def parse_log(text: str, ours: set[str] | frozenset = frozenset()) -> dict:
    """Attribute the errors in a compute-sanitizer log (with the worker's markers interleaved) to variants.

    Returns {"variants": {"lab:variant": {"launches", "errors", "warnings", "exceptions", "kernels": {name: n},
    "impl"}}, "library": {kernel: n}, "outside": [messages], "summary_errors": N or None, "parsed_errors": N,
    "messages": [{"variant", "kernel", "message", "severity"}]}.
    """
    variants: dict[str, dict] = {}
    library: dict[str, int] = {}
    outside: list[str] = []
    messages: list[dict] = []
    summary = None
    race_summary = None      # racecheck's own line; used only when no ERROR SUMMARY line was printed
    current: str | None = None
    last_ended: str | None = None
    kernel_owner: dict[str, str] = {}      # kernel name -> the variant that was running when it was named first

    def row(key, impl=""):
        return variants.setdefault(key, {"launches": 0, "errors": 0, "warnings": 0, "exceptions": [],
                                         "kernels": {}, "impl": impl, "checks_failed": 0})

    block: list[str] | None = None
    block_owner: str | None = None

    def flush():
        nonlocal block
        if not block:
            block = None
            return
        head = block[0]
        sev = "error"
        m = _RACE.match(head)
        if m:
            sev = {"e": "error", "w": "warning", "i": "info"}[m.group("sev")[0].lower()]
        kernel = _kernel_of(block)
        owner = block_owner
        if kernel and kernel in ours and owner is None:
            owner = kernel_owner.get(kernel) or last_ended   # printed late: the variant that ran it last
        if kernel and kernel not in ours and _is_library(kernel):
            owner = LIBRARY
        msg = {"variant": owner or OUTSIDE, "kernel": kernel or "?", "severity": sev, "message": head[:200]}
        messages.append(msg)
        if sev == "error":
            if owner == LIBRARY:
                library[kernel or "?"] = library.get(kernel or "?", 0) + 1
            elif owner is None:
                outside.append(f"{kernel or '?'}: {head[:160]}")
            else:
                r = row(owner)
                r["errors"] += 1
                if kernel:
                    r["kernels"][kernel] = r["kernels"].get(kernel, 0) + 1
                    kernel_owner.setdefault(kernel, owner)
        elif sev == "warning" and owner not in (None, LIBRARY):
            row(owner)["warnings"] += 1
        block = None

    for raw in text.splitlines():
        line = raw.rstrip("\n")
        if line.startswith(MARK):
            flush()
            parts = line[len(MARK):].strip().split("\t")
            what = parts[0] if parts else ""
            if what == "BEGIN" and len(parts) >= 4:
                current = f"{parts[1]}:{parts[2]}"
                row(current, parts[3])
            elif what == "SKIP" and len(parts) >= 4:
                row(f"{parts[1]}:{parts[2]}")["skipped"] = parts[3][:200]
            elif what == "END" and len(parts) >= 4:
                key = f"{parts[1]}:{parts[2]}"
                r = row(key)
                status = parts[3]
                if status == "ok":
                    r["launches"] += 1
                elif status.startswith("mismatch"):
                    r["launches"] += 1
                    r["checks_failed"] += 1
                else:
                    r["exceptions"].append(status[:200])
                current, last_ended = None, key
            continue
        if not _PREFIX.match(line):
            continue
        body = _PREFIX.sub("", line)
        if m := _SUMMARY.search(body):
            flush()
            summary = (summary or 0) + int(m.group(1))
            continue
        if m := _RACE_SUMMARY.search(body):
            flush()
            race_summary = (race_summary or 0) + int(m.group(1))
            continue
        indented = body.startswith(" ") or body.startswith("\t")
        stripped = body.strip()
        if not stripped:
            flush()
            continue
        if not indented and (_ERROR_HEAD.match(stripped) or _RACE.match(stripped)):
            flush()
            block, block_owner = [stripped], current
            # a racecheck pair report names both kernels on its first two lines; keep the first line's kernel
            continue
        if block is not None and indented:
            block.append(stripped)
            continue
        flush()   # a header line of another kind (COMPUTE-SANITIZER, RACECHECK SUMMARY, ...)
    flush()
    parsed = sum(r["errors"] for r in variants.values()) + sum(library.values()) + len(outside)
    if summary is None:
        summary = race_summary
    return {"variants": variants, "library": library, "outside": outside, "summary_errors": summary,
            "parsed_errors": parsed, "messages": messages}
