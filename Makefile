# evalkit: two commands from a fresh clone (Python 3.11 + pip).
#   make demo   run the bundled demo suite and render its reports
#               (CONCURRENCY=N work items in flight, default 4)
#   make test   install everything the tests need and run the whole suite

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
RUNS   ?= runs
DEMO_RUN ?= demo-$(shell date +%Y%m%d-%H%M%S)
CONCURRENCY ?= 4

.PHONY: demo test test-fast lint venv dev lab system-deps clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed

$(VENV)/.installed-lab: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[lab]'
	touch $@ $(VENV)/.installed

venv: $(VENV)/.installed
dev: $(VENV)/.installed-dev

# JupyterLab on notebooks/ with the project's kernel (the venv's Python 3). The notebooks are
# jupytext percent-format .py files: the venv's lab settings open .py files as notebooks.
# LAB_ARGS="--no-browser --port 8899" etc. go to jupyter lab.
LAB_ARGS ?=
LAB_SETTINGS := $(VENV)/etc/jupyter/labconfig/default_setting_overrides.json
$(LAB_SETTINGS):
	mkdir -p $(@D)
	echo '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"python": "Jupytext Notebook"}}}' > $@

# Jupyter refuses to start as root without --allow-root (containers, CI machines).
LAB_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
lab: $(VENV)/.installed-lab $(LAB_SETTINGS)
	$(BIN)/jupyter lab $(LAB_ROOT) $(LAB_ARGS) notebooks/

demo: $(VENV)/.installed
	$(BIN)/evalkit run cases/demo --trials 3 --concurrency $(CONCURRENCY) --run-id $(DEMO_RUN) --runs-dir $(RUNS)
	$(BIN)/evalkit judge calibrate $(DEMO_RUN) --runs-dir $(RUNS) --labels cases/demo/labels.csv
	$(BIN)/evalkit report $(DEMO_RUN) --runs-dir $(RUNS) -o reports/$(DEMO_RUN)/run.html
	$(BIN)/evalkit report $(DEMO_RUN) --runs-dir $(RUNS) --kind compare --conditions none,preloaded -o reports/$(DEMO_RUN)/compare-none-preloaded.html
	@echo "demo run: $(RUNS)/$(DEMO_RUN)"
	@echo "reports:  reports/$(DEMO_RUN)/run.html  reports/$(DEMO_RUN)/compare-none-preloaded.html"
	@echo "the evalkit command is in $(BIN): run 'source $(BIN)/activate' (then 'evalkit --help'), or call $(BIN)/evalkit"

# Everything the tests start for themselves: bubblewrap for the command sandbox, a headless
# browser for the report tests, the agent CLIs for the provider tests.
system-deps:
	@bash scripts/install-system-deps.sh

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/mypy

# Two passes: everything not marked `serial` on every core (pytest-xdist; tests sharing a
# costly fixture stay together by xdist_group), then the `serial` tests alone (signals and
# timing, memory, I/O efficiency: see tests/conftest.py). Each prints its 15 slowest tests;
# any failure, or a pass that collects nothing (pytest's exit code 5), fails `make test`.
# Two workers per core: most tests wait more than they compute (sandboxed commands, a kernel
# starting, a browser rendering, a child process), so on two cores four workers finish the
# parallel pass sooner than two (BENCHMARKS.md, "The test suite").
# One BLAS thread per process: workers each starting their own BLAS threads oversubscribe the
# machine (OpenBLAS threads spin while they wait), which made the linear algebra of the
# simulations several times slower.
# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE, set in
# many CI images): otherwise every process the tests start (a CLI, a loky worker, a report
# kernel) compiles evalkit from source again, and every worker rewrites every test module
# (BENCHMARKS.md, "The test suite"). __pycache__ is ignored by git and left out of the wheel.
PYTEST_WORKERS ?= $(shell echo $$(( 2 * $$(nproc 2>/dev/null || echo 1) )))
test: export PYTHONDONTWRITEBYTECODE =
test: export OPENBLAS_NUM_THREADS = 1
test: export OMP_NUM_THREADS = 1
test: export MKL_NUM_THREADS = 1
# Lint (ruff, then mypy without a cache: about 40 CPU s) runs beside the parallel pass, whose
# workers spend much of their time waiting, and its output is printed after the pass; either
# failing fails `make test`. The serial pass starts only after both, so it runs alone.
test: $(VENV)/.installed-dev system-deps
	{ $(BIN)/ruff check . && $(BIN)/mypy; } > $(VENV)/lint.log 2>&1 & lint=$$!; \
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup -m "not serial" --durations=15; \
	tests=$$?; wait $$lint; linted=$$?; echo "lint (ruff, mypy):"; cat $(VENV)/lint.log; \
	test $$tests -eq 0 && test $$linted -eq 0
	$(BIN)/python -m pytest -m serial --durations=15

# The edit-test loop: no system packages, no lint, no `slow` (over 5 s here) or `serial` tests.
# Tests that use a browser, bubblewrap or an agent CLI still need them: run `make system-deps`
# once (it is what `make test` runs first). `make test` stays the one that runs everything.
test-fast: export PYTHONDONTWRITEBYTECODE =
test-fast: export OPENBLAS_NUM_THREADS = 1
test-fast: export OMP_NUM_THREADS = 1
test-fast: export MKL_NUM_THREADS = 1
test-fast: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup -m "not serial and not slow" -q

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
