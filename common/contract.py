"""What the shared runner (common.lab.run, common.plan.make) expects of a lab's two modules, written as Protocols.

A lab folder phaseN_xxx/labNN_name/ has
  lab.py     the kernels, their wrappers, the float64 reference and the checks' cases      -> `Lab` (+ `LabHooks`)
  bench.py   the measuring side: timing, predictions, plots                             -> `BenchHooks`
  __main__.py  the composition root: it imports both and hands them to common.lab.run; lab.py never imports bench.py
`Lab` lists what every lab.py must define; `LabHooks` and `BenchHooks` what a module may define, and the arguments
the runner passes when it does. `problems(module, protocol)` says where a module departs from one of them
(tests/test_contract.py runs it on every lab).
"""
from __future__ import annotations

import inspect
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Lab(Protocol):
    """Every lab.py: its results name, its kernels and peers, the cases it is checked on, its reference and inputs."""
    LAB: str                      # the results' file stem, e.g. "phase2_lab07_softmax"
    VARIANTS: list                # [common.lab.Variant]: our kernels, CUDA C and Triton side by side
    CHECK_CASES: list             # [(size, dtype)]: awkward cases for the GPU
    CPU_CHECK_CASES: list         # [(size, dtype)]: the same kind of cases, small enough for the interpreter

    def reference(self, *inputs) -> Any:
        """The float64 NumPy result (or a tuple of them) of the inputs make_inputs returned."""

    def make_inputs(self, size, dtype: str, rng, where: str) -> tuple:
        """Fresh random inputs of `size` and `dtype` on `where` ("cuda" or "cpu")."""


class LabHooks(Protocol):
    """What a lab.py may add; the runner falls back to a default where it does not."""
    PEERS: list                   # [common.lab.Variant]: the library calls a learner would use instead (none: [])
    QUICK_CASES: int              # how many of the cases --quick checks
    PLAN_NOTES: list              # lines --plan prints after its tables

    def out_dtype(self, dtype: str) -> str:
        """The output's dtype for inputs of `dtype` (default: the same)."""

    def tolerance(self, size, dtype: str) -> Any:
        """The check's common.check.Tol for this case (default: the dtype's)."""

    def launches(self, gpu, size=None) -> list:
        """[common.plan.Launch]: every kernel the benchmark's cases launch on `gpu` (--plan, and the CPU tier's
        compile-and-fit test on every GPU profile)."""


class BenchHooks(Protocol):
    """What a bench.py may define (every part is optional: a lab with no bench.py still checks its variants)."""
    CPU_NOTE: str                 # printed after the checks on a machine without a GPU
    HONOURS: tuple                # which of --size/--dtype/--variant the benchmark narrows its timing by

    def add_arguments(self, parser) -> None:
        """The lab's own flags (--tune, --compile-all, ...)."""

    def explain(self, args) -> None:
        """What to print before the checks on every machine: models, byte counts, plans."""

    def extra_checks(self, args) -> bool:
        """Checks beyond VARIANTS x cases; False fails the run."""

    def compile_report(self, args) -> None:
        """What the compiler made of the kernels (NVRTC, Triton ahead of time): every machine."""

    def benchmark(self, ctx) -> Any:
        """GPU: time the variants and peers; a common.lab.Result."""

    def tune(self, ctx) -> Any:
        """GPU, --tune: the sweep that finds the lab's recorded configuration; a common.lab.Result."""

    def plot(self, data: dict, out_dir: str) -> list:
        """Draw the lab's plots from its JSON (so --replot needs no GPU); the paths written."""

    def launches(self, gpu, size=None) -> list:
        """As LabHooks.launches, where the cases live in bench.py (plan.make looks here first)."""

    def predict(self, gpu) -> dict:
        """The lab's predictions for `gpu` (a common.device.DeviceInfo), from its models alone."""


def _members(protocol) -> tuple[list[str], list[str]]:
    """(data attributes, methods) a Protocol declares."""
    data = list(getattr(protocol, "__annotations__", {}))
    methods = [n for n, v in vars(protocol).items() if inspect.isfunction(v) and not n.startswith("_")]
    return data, methods


def _accepts(fn, template) -> bool:
    """Whether fn can be called with the arguments the runner passes to `template` (its parameters but self)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    params = [p for p in inspect.signature(template).parameters.values() if p.name != "self"]
    if any(p.kind is p.VAR_POSITIONAL for p in params):       # reference(*inputs): as many as make_inputs returns
        return True
    args = [object() for p in params if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty]
    try:
        sig.bind(*args)
    except TypeError:
        return False
    return True


def problems(module, protocol, *, required: bool) -> list[str]:
    """Where `module` departs from `protocol`: a member missing (when `required`), or a function the runner cannot
    call with the arguments it passes."""
    data, methods = _members(protocol)
    name = getattr(module, "__name__", repr(module))
    out = []
    for attr in data + methods:
        if not hasattr(module, attr):
            if required:
                out.append(f"{name}: no {attr}")
            continue
        if attr in methods:
            fn = getattr(module, attr)
            if not callable(fn):
                out.append(f"{name}.{attr}: not a function")
            elif not _accepts(fn, getattr(protocol, attr)):
                out.append(f"{name}.{attr}{inspect.signature(fn)}: the runner calls it as "
                           f"{attr}{inspect.signature(getattr(protocol, attr))}")
    return out
