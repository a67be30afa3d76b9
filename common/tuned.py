"""Tuning records: the configuration a lab's `--tune` sweep found fastest on one GPU, read back by the lab's wrappers.

A lab's `--tune` times its candidate configurations at its target shapes and writes the winners, with the whole
table, to results/<gpu>/<LAB>_tuned.json (the usual results header: GPU, date, commit, versions). The wrappers read
that file for the GPU they run on; a GPU without a record (or with a record that does not validate) gets the lab's
default configuration, and the lab's output says which of the two it used. Nothing tuned is hard-coded in a kernel.

    winner, source = tuned.record(LAB + "_tuned", validate=check_winner)
    # winner: the "winner" field of the record (whatever the lab stored there), or None; source: a sentence for the
    # report, e.g. "tuned on NVIDIA H200 (results/h200/phase3_lab03_fused_softmax_tuned.json)"

A lab that tunes at several sizes stores a list of {"shape": [...], ...} entries as its winner and picks the one tuned
nearest to a problem with nearest(). A lab may keep more than one record (one per kernel family it tunes): each is a
file of its own with its own "winner", read by its own record() call.
"""
from __future__ import annotations

import functools
import json
import math
import os
import warnings
from typing import Callable

from . import device

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NO_RECORD = "default (no tuning record for this GPU: run the lab with --tune)"


def path(name: str, slug: str | None = None) -> str:
    """results/<gpu>/<name>.json for this GPU (or for `slug`)."""
    return os.path.join(ROOT, "results", slug or device.gpu_slug(), name + ".json")


@functools.lru_cache(maxsize=None)
def _load(name: str, slug: str, validate: Callable | None, gpu_name: str | None = None):
    p = path(name, slug)
    if not os.path.exists(p):
        return None, NO_RECORD
    try:
        with open(p) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        warnings.warn(f"{p}: unreadable tuning record ({type(e).__name__}: {e}); using the default configuration")
        return None, "default (tuning record unreadable)"
    made_on = doc.get("gpu") if isinstance(doc, dict) else None
    if gpu_name and made_on and _same_gpu(made_on) != _same_gpu(gpu_name):
        # results/<slug>/ of two GPUs whose names give one slug: a record of the other card is never applied
        return None, f"default (the record in {os.path.relpath(p, ROOT)} was tuned on {made_on}, not this {gpu_name})"
    try:
        winner = doc["winner"]
        if validate is not None:
            winner = validate(winner)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
        why = f"{type(e).__name__}: {e}"
        warnings.warn(f"{p}: unusable tuning record ({why}); using the default configuration")
        return None, f"default (tuning record unusable: {why})"
    return winner, f"tuned on {doc.get('gpu', '?')} ({os.path.relpath(p, ROOT)})"


def _same_gpu(name: str) -> str:
    return " ".join(name.lower().split())


def record(name: str, validate: Callable | None = None, slug: str | None = None, gpu=None):
    """(winner, source): the recorded winner for this GPU (validated by `validate`, which raises ValueError, KeyError
    or TypeError on a bad record and may normalize it) or (None, why not).

    gpu: the GPU to look the record up for (a common.device.DeviceInfo, simulated ones included: a plan for another
    GPU); default the GPU at hand. A record whose "gpu" field names another card is not applied."""
    if gpu is None and device.has_gpu():
        gpu = device.info()
    if gpu is not None:
        return _load(name, slug or gpu.slug, validate, gpu.name)
    return _load(name, slug or device.gpu_slug(), validate, None)


def nearest(entries: list, shape) -> dict:
    """The entry of `entries` (dicts with a "shape": a list of positive sizes) tuned nearest to `shape`, measured as
    the distance between the logs of the products (4096^3 and 8192^3: a 5000^3 problem takes 4096^3's entry). The
    first of equally near entries wins; shapes of other lengths than `shape` are compared by their products too."""
    if not entries:
        raise ValueError("entries: nothing to choose from")
    size = math.log(max(1.0, math.prod(float(v) for v in shape)))
    return min(entries, key=lambda e: abs(math.log(max(1.0, math.prod(float(v) for v in e["shape"]))) - size))


def forget() -> None:
    """Drop the cached records (after --tune wrote a new one, or in tests that point a lab at another file)."""
    _load.cache_clear()
