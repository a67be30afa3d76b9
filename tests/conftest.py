"""Two tiers: the CPU tier always runs real code; tests marked `gpu` run on a CUDA GPU and skip elsewhere."""
import json
import os
import tempfile

import pytest

from tests.seeds import GATE_SEEDS

# Fixed seeds gate: a plain `make test` draws every random input from one fixed process seed, so a landing cannot fail
# by chance. `make fuzz SEEDS=N` (or COURSE_SEED=<n> by hand) explores other seeds.
os.environ.setdefault("COURSE_SEED", str(GATE_SEEDS[0]))
# Tests read the English output (a learner's Korean locale must not change what they compare); the Korean output has
# its own tests, which choose it (tests/test_i18n.py).
os.environ["COURSE_LANG"] = "en"
# Tests write only to temporary folders: every lab's JSON and PNG go here instead of results/<gpu>/.
os.environ.setdefault("COURSE_RESULTS", tempfile.mkdtemp(prefix="course-results-"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from common import check, device  # noqa: E402 - after the seed is fixed
from tests.helpers import PHASES, changed_entries, git_status, heaviest_files_first, lab_modules  # noqa: E402,F401



def pytest_configure(config):
    # pytest-xdist's --dist loadfile hands out whole files in the collection's order once this is off (it sorts them
    # by item count otherwise); the workers collect, and set that order below, heaviest files first
    if getattr(config.option, "dist", "no") == "loadfile" and hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    # a worker runs with dist "no": it learns the controller's mode from its workerinput
    node.workerinput["course_dist"] = node.config.getvalue("dist")


def _dist(config) -> str:
    return getattr(config, "workerinput", {}).get("course_dist", getattr(config.option, "dist", "no"))


def _file_seconds() -> dict:
    try:
        with open(os.path.join(ROOT, "tests", "file_seconds.json")) as f:
            return json.load(f)["seconds"]
    except (OSError, ValueError, KeyError):
        return {}


def pytest_collection_modifyitems(config, items):
    if _dist(config) == "loadfile":
        # the longest files first, so that none starts when the others are nearly done (tools/suite_weights.py)
        items[:] = heaviest_files_first(items, _file_seconds())
    if device.has_gpu():
        skip = pytest.mark.skip(reason="interpreter test on host arrays; the GPU tier checks the same kernel on the "
                                       "device")
        for item in items:
            if "cpu_only" in item.keywords:
                item.add_marker(skip)
        return
    skip = pytest.mark.skip(reason=f"no CUDA GPU: {device.no_gpu_reason()}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_report_header(config):
    seed = (f"process seed {check.seed()} "
            f"(COURSE_SEED; {'the fixed gate seed' if check.seed() == GATE_SEEDS[0] else 'chosen'})")
    if device.has_gpu():
        d = device.info()
        return [f"GPU tier: {d.name} ({d.arch}); CPU tier too", seed]
    return [f"CPU tier only; GPU tests skip ({device.no_gpu_reason()})", seed]


# ---------------------------------------------------------------------------------------------------------------------
# A test run never changes a tracked file: `git status --porcelain` is compared before and after the whole session
# (in the controller process only, when running under pytest-xdist).
# ---------------------------------------------------------------------------------------------------------------------


def pytest_sessionstart(session):
    # a pytest run inside a test (tests/test_regression_seeds.py) leaves the check to the run around it
    if not hasattr(session.config, "workerinput") and os.environ.get("COURSE_TREE_GUARD", "1") != "0":
        session.config._git_status_before = git_status()


def pytest_sessionfinish(session, exitstatus):
    before = getattr(session.config, "_git_status_before", None)
    if before is None or hasattr(session.config, "workerinput"):
        return
    after = git_status()
    if after is not None and after != before:
        changed = changed_entries(before, after)
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        msg = ("the test run changed files of the working tree (tests must write only to temporary folders):\n  "
               + "\n  ".join(changed))
        if tr is not None:
            tr.write_line("")
            tr.write_line(msg, red=True, bold=True)
        else:
            print(msg)
        session.exitstatus = 1


@pytest.fixture
def tuning_record(tmp_path, monkeypatch):
    """write(name, winner, slug=None): a tuning record results/<slug>/<name>.json in a temporary root that
    common.tuned reads instead of the repository's (winner=None writes `text` as the whole file, for unreadable
    records); the cached records are dropped after each write and at the end."""
    import json

    from common import tuned

    monkeypatch.setattr(tuned, "ROOT", str(tmp_path))

    made_on = device.info().name if device.has_gpu() else "test"    # a record of another GPU is never applied

    def write(name, winner=None, slug=None, *, text=None):
        folder = tmp_path / "results" / (slug or device.gpu_slug())
        folder.mkdir(parents=True, exist_ok=True)
        (folder / (name + ".json")).write_text(text if text is not None
                                               else json.dumps({"gpu": made_on, "winner": winner}))
        tuned.forget()

    write.made_on = made_on      # what a source line says the record was tuned on ("test" without a GPU)
    tuned.forget()
    yield write
    tuned.forget()


@pytest.fixture(autouse=True)
def _no_leftover_overrides():
    """A test that runs a lab with --set NAME=VALUE leaves no override behind for the next test (the overrides and
    the record of resolved configurations are process-wide, like the command line they come from)."""
    yield
    from common import config

    config.set_overrides([])
    config.forget()


def pytest_terminal_summary(terminalreporter):
    """The skipped tests counted by reason, one line a reason (not one line a test file): on a machine without a GPU
    most of the GPU tier skips for the same reason."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    reasons: dict[str, int] = {}
    for rep in skipped:
        longrepr = rep.longrepr
        why = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        why = why.removeprefix("Skipped: ")
        reasons[why] = reasons.get(why, 0) + 1
    terminalreporter.section(f"{len(skipped)} skipped, by reason", sep="-")
    for why, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"{n:6d}  {why}")
