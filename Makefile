# Two commands do all the set-up:  `make run`  and  `make test`.
# Both create .venv when it is missing and install what the machine needs through the constraints file of its set-up
# (requirements/cpu.txt without a GPU, cuda13.txt / cuda12.txt by the driver; tools/setup_env.py picks).
#   make run  ARGS="--quick"      run the phases in order (extra arguments go to every phase runner)
#   make test PYTEST_ARGS="-k vector"   (JOBS=1 for one process; the gate uses a fixed seed list: tests/seeds.py)
#   make setup UNPINNED=1         reinstall with the newest releases instead of the tested versions
#   make fuzz SEEDS=50            the randomized suites with 50 fresh seeds; prints every failing seed
#   make mutants                  plant realistic one-line bugs, one at a time, and report which the tests miss
#   make site / make serve        the course site (English and Korean), built from the lessons; served locally
#   make bench                    (GPU) the benchmarks, results written under results/<gpu>/
#   make sanitize                 (GPU) every CUDA C and Triton variant under compute-sanitizer (4 tools, ~5 min)
#   make results                  (GPU) re-measure every lab, write results/<gpu>/ and its README page
#   make profile                  (GPU + ncu) Nsight Compute profiles of the kernels that missed their targets
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PHASES := $(sort $(patsubst %/__main__.py,%,$(wildcard phase*/__main__.py)))
# pytest processes: one per core, at most 8 (each imports torch)
JOBS   ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 8 ] && n=8; echo $$n)
SEEDS  ?= 10
UNPINNED ?=
export UNPINNED

.PHONY: setup run test fuzz mutants site serve bench sanitize results profile clean help
help:
	@echo "make run    - set up .venv if needed, then run the phases in order: $(PHASES)"
	@echo "make test   - set up .venv if needed, then run pytest (CPU tier always, GPU tier when a GPU is present)"
	@echo "make setup  - (re)install .venv's packages at the tested versions (UNPINNED=1: the newest)"
	@echo "make fuzz SEEDS=N - the randomized suites with N fresh seeds; prints every failing seed"
	@echo "make mutants - plant realistic one-line bugs one at a time; report which ones the tests miss"
	@echo "               (ARGS=\"--list\", \"--only NAME\"; CUDA C mutants need a GPU)"
	@echo "make site   - build the course site (English and Korean) into site/ (mkdocs build --strict)"
	@echo "make serve  - build and serve the site at http://127.0.0.1:8000"
	@echo "make bench  - GPU only: run every lab's benchmark and write results/<gpu>/"
	@echo "make sanitize - GPU only: every CUDA C and Triton kernel under compute-sanitizer (memcheck, racecheck,"
	@echo "                initcheck, synccheck); table in results/<gpu>/sanitize.md (ARGS=\"--dry-run\" to list)"
	@echo "make results - GPU only: every lab's benchmark, then results/<gpu>/README.md (ARGS=\"--quick\", \"--only 2.7\", \"--dry-run\")"
	@echo "make profile - GPU + ncu: profiles of the kernels that missed their targets next to their peers"
	@echo "               (results/<gpu>/profile/; ARGS=\"--list\" to see the cases)"
	@echo "make clean  - remove .venv and caches"

$(STAMP): pyproject.toml tools/setup_env.py $(wildcard requirements/*.txt)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) tools/setup_env.py
	@touch $(STAMP)

setup:
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) tools/setup_env.py
	@touch $(STAMP)

run: $(STAMP)
	@$(PY) -m tools.run_phases $(ARGS)

test: $(STAMP)
	$(PY) -m pytest -n $(JOBS) --dist loadgroup $(PYTEST_ARGS)

fuzz: $(STAMP)
	$(PY) -m tools.fuzz --seeds $(SEEDS) $(ARGS)

mutants: $(STAMP)
	$(PY) -m tools.mutants $(ARGS)

site: $(STAMP)
	$(PY) -m tools.site build

serve: $(STAMP)
	$(PY) -m tools.site serve $(ARGS)

bench: $(STAMP)
	@$(PY) -m tools.run_phases --bench $(ARGS)

sanitize: $(STAMP)
	$(PY) -m tools.sanitize $(ARGS)

results: $(STAMP)
	$(PY) -m tools.regenerate $(ARGS)

profile: $(STAMP)
	$(PY) -m tools.profile $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache build site
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
