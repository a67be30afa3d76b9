"""Lab 3.4's backward pass, the launch settings that depend on nothing else of the lab: the backward kernel's default
warps and programs per SM, and the second level that sums the G partial dw/db rows (its configuration, the names
--set takes for it, its launch). The backward's wrapper (layernorm_bwd), its resolved configuration (bwd_config) and
its launch (bwd_launch, which reads the row limits long_rows_forced changes) are in lab.py, beside the forward's."""
from __future__ import annotations

from common import config
from common.triton_support import INTERPRETER, triton


def bwd_default(cols: int) -> dict:
    """Warps for the backward and G as a multiple of the SM count (2 programs of this size fit an SM at a time: the
    compile report shows it). More programs per SM than fit at once means more partial rows for the second level to
    sum, fewer means idle SMs at the tail; --tune times 1, 2 and 4 per SM."""
    bn = triton.next_power_of_2(max(cols, 1))
    return {"num_warps": 4 if bn <= 1024 else 8 if bn <= 4096 else 16, "programs_per_sm": 4}


# The second level sums G partial rows: on a GPU 64 columns per program (64 programs at N = 4096), 64 partial rows per
# step; in the interpreter few, wide programs (each program costs it milliseconds), still 2+ steps over the partial
# rows when G > 8.
DWDB = dict(DWDB_BLOCK_C=64, DWDB_BLOCK_P=64)
DWDB_INTERPRETER = dict(DWDB_BLOCK_C=128, DWDB_BLOCK_P=8)


def dwdb_config(interpreter: bool | None = None) -> config.Resolved:
    interp = INTERPRETER if interpreter is None else interpreter
    return config.resolve("layernorm dw/db second level" + (" (interpreter)" if interp else ""),
                          DWDB_INTERPRETER if interp else DWDB, validate=_check_dwdb)


def _check_dwdb(v: dict) -> dict:
    for k, x in v.items():
        if x < 1 or x & (x - 1) or x > 1024:
            raise ValueError(f"{k}: expected a power of two from 1 to 1024, got {x}")
    return v


def dwdb_launch(n: int, cfg: dict):
    """(programs, constexprs, num_warps) of layernorm_dwdb_kernel."""
    return triton.cdiv(n, cfg["DWDB_BLOCK_C"]), {"BLOCK_P": cfg["DWDB_BLOCK_P"], "BLOCK_C": cfg["DWDB_BLOCK_C"]}, 4
