"""Lab 4.3's code as modules, on the CPU, nothing compiled: no module over 600 lines, each with a docstring naming its
job; imports inside the folder go one way (no circle, counting imports inside functions; lab.py never reaches a
bench module); common/hopper.py imports no lab; and every name other code reaches through lab.py, bench.py and
wgmma.py (lab 4.4, lab 4.6's Hopper rungs, lab 4.7's block, tools/, the course's exercises, the tests) is still
there, re-exported from the module that now holds it."""
import ast
import glob
import os

import pytest

from common import hopper
from phase4_optimization.lab03_tensor_cores import bench as tcb
from phase4_optimization.lab03_tensor_cores import lab as tc
from phase4_optimization.lab03_tensor_cores import wgmma as wg

FOLDER = os.path.dirname(os.path.abspath(tc.__file__))
ROOT = os.path.dirname(os.path.dirname(FOLDER))
PKG = "phase4_optimization.lab03_tensor_cores"
MODULES = {os.path.basename(p)[:-3]: p for p in glob.glob(os.path.join(FOLDER, "*.py"))}


def _imported(path: str, package: str) -> set[str]:
    """The modules of `package` that the file at `path` imports, anywhere in it (module level or in a function)."""
    out = set()
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                out.update([node.module.split(".")[0]] if node.module else [a.name for a in node.names])
            elif node.module and (node.module == package or node.module.startswith(package + ".")):
                rest = node.module[len(package) + 1:]
                out.update([rest.split(".")[0]] if rest else [a.name for a in node.names])
        elif isinstance(node, ast.Import):
            out.update(a.name[len(package) + 1:].split(".")[0] for a in node.names
                       if a.name.startswith(package + "."))
    return out


GRAPH = {name: sorted(_imported(path, PKG) & set(MODULES)) for name, path in MODULES.items()}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_is_short_and_says_its_job(name):
    text = open(MODULES[name], encoding="utf-8").read()
    assert text.count("\n") <= 600, f"{name}.py has {text.count(chr(10))} lines (split it by job)"
    assert ast.get_docstring(ast.parse(text)), f"{name}.py has no docstring naming its job"


def test_imports_inside_the_folder_go_one_way():
    state, cycles = {}, []

    def visit(node, path):
        state[node] = "open"
        for nxt in GRAPH[node]:
            if state.get(nxt) == "open":
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for m in sorted(GRAPH):
        if m not in state:
            visit(m, [m])
    assert not cycles, f"import circles: {cycles}"
    reach, todo = set(), ["lab"]
    while todo:
        for nxt in GRAPH[todo.pop()]:
            if nxt not in reach:
                reach.add(nxt)
                todo.append(nxt)
    assert not {m for m in reach if m.startswith("bench")}, f"lab.py reaches {sorted(reach)}"
    assert set(GRAPH["__main__"]) == {"bench", "lab"}


def test_the_import_walk_sees_imports_inside_functions(tmp_path):
    """The check can fail: an import inside a function counts like one at the top."""
    p = tmp_path / "m.py"
    p.write_text("def f():\n    from . import bench\n    from phase4_optimization.lab03_tensor_cores import wgmma\n")
    assert _imported(str(p), PKG) == {"bench", "wgmma"}


def test_common_hopper_imports_no_lab():
    for path in glob.glob(os.path.join(ROOT, "common", "*.py")):
        for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            assert not [n for n in names if n.startswith("phase")], f"{path} imports a lab: {names}"
    assert hopper.__name__ == "common.hopper"


# The names other code reaches through lab 4.3's modules (grep for "wgmma as", "lab03_tensor_cores" and lab_module
# across the repository): lab 4.6's hopper.py and its tests, lab 4.7's lab.py, tools/profile.py, tests/ and
# logs/h200/session8/initcheck_tma_store.py.
WGMMA_NAMES_USED = {
    "lab 4.6": ["smem_descriptor", "tma_write_a", "wgmma_read_kmajor", "wgmma_read_mnmajor", "unavailable_reason",
                "encode_tiled"],
    "lab 4.7": ["gemm_wgmma", "unavailable_reason", "default_b_kmajor", "resolve_build", "launch_cluster",
                "launch_shape", "epi_mask", "KERNEL", "THREADS", "KERNEL_PATH", "ARCH", "build_label", "say_note"],
    "tools, tests": ["gemm_wgmma", "reference", "check_shape", "hang_report", "make_inputs", "tolerance",
                     "builds", "verify_sample", "_LOADED", "_tensor_map", "TUNED", "EPILOGUES"],
}
LAB_NAMES_USED = ["CU", "DEFAULT_CONFIG", "TC_ARCHS", "_cfg", "_defines", "_tcfg", "compile_rows", "config_problems",
                  "config_smem", "config_threads", "gemm_mma", "gemm_triton", "make_inputs", "mma_launch",
                  "out_dtype", "peer_torch", "reference", "tc_dot_kernel", "tolerance", "triton_launch",
                  "triton_smem", "triton_unavailable", "gemm_wgmma_tma", "gemm_wmma", "LAB", "TUNED", "VARIANTS",
                  "PEERS", "CHECK_CASES", "CPU_CHECK_CASES", "SANITIZE_CASES", "QUICK_CASES", "launches",
                  "_row_stride", "vec_flags", "VEC_A", "VEC_B", "swizzle", "ldmatrix_conflicts", "mma_config",
                  "triton_candidates", "TRITON_COMPACT", "TRITON_CONFIGS", "TRITON_SMALL", "OPTIONAL", "CONFIG_KEYS"]
BENCH_NAMES_USED = ["mma_peak_launch", "show_compile_reports", "wgmma_compile_report", "tune_wgmma",
                    "wgmma_tune_and_record", "_edge_check", "plot", "compile_report", "benchmark", "tune",
                    "add_arguments", "explain", "predict", "extra_checks", "CPU_NOTE", "WGMMA_SIZES"]


@pytest.mark.parametrize("who", sorted(WGMMA_NAMES_USED))
def test_wgmma_keeps_every_name_other_code_uses(who):
    missing = [n for n in WGMMA_NAMES_USED[who] if not hasattr(wg, n)]
    assert not missing, f"wgmma.py no longer offers {missing} ({who} uses them)"
    assert set(wg.__all__) <= set(vars(wg)) and len(wg.__all__) == len(set(wg.__all__))


def test_wgmma_re_exports_the_objects_themselves():
    """The same objects, not copies: lab 4.6 builds its descriptors with common/hopper.py's encoder through wgmma.py,
    and the hang record's set of loaded builds is one set."""
    from phase4_optimization.lab03_tensor_cores import wgmma_launch

    assert wg.smem_descriptor is hopper.smem_descriptor and wg.encode_tiled is hopper.encode_tiled
    assert wg.tma_write_a is hopper.tma_write_box and wg._LOADED is wgmma_launch._LOADED


def test_lab_and_bench_keep_every_name_other_code_uses():
    assert not [n for n in LAB_NAMES_USED if not hasattr(tc, n)]
    assert not [n for n in BENCH_NAMES_USED if not hasattr(tcb, n)]
