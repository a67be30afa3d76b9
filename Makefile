# Two commands do all the set-up:  `make run`  and  `make test`.
# Both create .venv when it is missing and install what the machine needs (tools/setup_env.py picks the CuPy and
# NVRTC wheels that match the CUDA driver, or the CUDA 13 set when there is no GPU).
#   make run  ARGS="--quick"      run the phases in order (extra arguments go to every phase runner)
#   make test PYTEST_ARGS="-k vector"
#   make bench                    (GPU) the benchmarks, results written under results/<gpu>/
#   make sanitize                 (GPU) every CUDA C and Triton variant under compute-sanitizer (4 tools, ~5 min)
#   make results                  (GPU) re-measure every lab, write results/<gpu>/ and its README page
#   make profile                  (GPU + ncu) Nsight Compute profiles of the kernels that missed their targets
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PHASES := $(sort $(patsubst %/__main__.py,%,$(wildcard phase*/__main__.py)))

.PHONY: setup run test bench sanitize clean help
.PHONY: results profile
help:
	@echo "make run    - set up .venv if needed, then run the phases in order: $(PHASES)"
	@echo "make test   - set up .venv if needed, then run pytest (CPU tier always, GPU tier when a GPU is present)"
	@echo "make bench  - GPU only: run every lab's benchmark and write results/<gpu>/"
	@echo "make sanitize - GPU only: every CUDA C and Triton kernel under compute-sanitizer (memcheck, racecheck,"
	@echo "                initcheck, synccheck); table in results/<gpu>/sanitize.md (ARGS=\"--dry-run\" to list)"
	@echo "make results - GPU only: every lab's benchmark, then results/<gpu>/README.md (ARGS=\"--quick\", \"--only 2.7\", \"--dry-run\")"
	@echo "make profile - GPU + ncu: profiles of the kernels that missed their targets next to their peers"
	@echo "               (results/<gpu>/profile/; ARGS=\"--list\" to see the cases)"
	@echo "make clean  - remove .venv and caches"

$(STAMP): pyproject.toml tools/setup_env.py
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) tools/setup_env.py
	@touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	@set -e; for p in $(PHASES); do echo "=== $$p ==="; $(PY) -m $$p $(ARGS); done

test: $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	@set -e; for p in $(PHASES); do echo "=== $$p ==="; $(PY) -m $$p --bench $(ARGS); done

sanitize: $(STAMP)
	$(PY) -m tools.sanitize $(ARGS)

results: $(STAMP)
	$(PY) -m tools.regenerate $(ARGS)

profile: $(STAMP)
	$(PY) -m tools.profile $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
