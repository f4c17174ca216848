# Two entry points for a fresh machine: `make test` and `make stress`. Both create .venv and
# install the package with its test extras first; nothing else needs to be installed by hand.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
CLI    := $(VENV)/bin/aclnn-stress
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: all venv test test-slow stress lint bench bench-detect browser hostile clean help

all: test

help:
	@echo "make test     create .venv, install, ruff, run the test suite (short stress included)"
	@echo "make test-slow  the long tests behind the \`slow\` marker (each has a short version in make test)"
	@echo "make stress   create .venv, install, run the stress protocol over the shipped corpus"
	@echo "make lint     ruff (lint and format check) over the package, tests, benchmarks, examples;"
	@echo "              the README/docs figures against benchmarks/results (check_figures.py);"
	@echo "              lint-imports: the architecture's contracts (pyproject.toml [tool.importlinter]);"
	@echo "              deptry (the dependencies); check-wheel-contents (the built wheel)"
	@echo "make bench    run the benchmarks in benchmarks/"
	@echo "make bench-detect   detection power per simulated fault vs a naive harness (long)"
	@echo "make browser  install Debian's chromium for the HTML report's browser tests (as root)"
	@echo "make hostile  the hostile-input sweep: each row one CLI call, a table"
	@echo "make clean    remove .venv and caches"

venv: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "aclnn-stress needs Python >= 3.11; set PYTHON=/path/to/python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@# the package's bytecode, as a wheel install writes it (PYTHONDONTWRITEBYTECODE=1 machines
	@# would otherwise compile every module in every process: benchmarks/machine.py precompile)
	$(PY) -m compileall -q stress
	@touch $(STAMP)

# The suite over the cores with pytest-xdist (`-n auto`: one worker per core; loadgroup: tests
# marked xdist_group share one worker, e.g. the wheel test's one build); slow tests stay
# behind their marker (pyproject.toml's addopts). TEST_WORKERS='-n 0' runs it serially. The
# package's bytecode is brought up to date first: where PYTHONDONTWRITEBYTECODE is set no process
# writes it, and each of the suite's hundreds of CLI and phase processes would compile every
# stress module it imports from source. PYTEST_PYC: pytest rewrites the asserts of every test
# module, of conftest and of the plugins' packages (stress itself, hypothesis, xdist) in each
# process and caches the result as its own pyc only where bytecode may be written; with
# PYTHONDONTWRITEBYTECODE=1 each worker rewrote all of them again (collection 6.7 s of CPU a
# process, 2.1 s from the cache: benchmarks/results/make_test-cpu-2026-12-08.md, round 2). The
# empty value switches the variable off for the suite's processes; the messages stay rewritten.
TEST_WORKERS ?= -n auto --dist loadgroup
PYTEST_PYC := PYTHONDONTWRITEBYTECODE=
test: $(STAMP) lint browser
	@$(PY) -m compileall -q stress
	$(PYTEST_PYC) $(PY) -m pytest -q $(TEST_WORKERS) $(PYTEST_ARGS)

# The long tests `make test` leaves out (marked slow: more seeds, whole protocols, sweeps); each
# names the short version of its check that stays in `make test`. Not on a 2-core machine in a hurry.
test-slow: $(STAMP)
	@$(PY) -m compileall -q stress
	$(PYTEST_PYC) $(PY) -m pytest -q $(TEST_WORKERS) -m slow $(PYTEST_ARGS)

# Headless Chromium for the HTML report's browser tests (Debian's package). Installed only when
# missing and running as root; otherwise those tests skip and say why.
browser:
	@command -v chromium >/dev/null 2>&1 || [ -n "$$CHROMIUM" ] || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium (apt-get) for the HTML report's browser tests"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
	      >/dev/null 2>&1 || echo "chromium could not be installed: the browser tests will skip"; \
	  else echo "chromium missing (needs root and apt-get): the browser tests will skip"; fi; }

# The whole protocol over the shipped corpus (corpus/mhc.toml + corpus/control.toml), concurrent
# phases under both stream policies; records baselines/control+mhc.<backend>.json when missing.
# Then the tests marked `stress` (the pytest plugin). Not beside the run: on 2 cores the plugin
# step took the mixed phase's core and some case met no other there (coverage "mixed: >= 0
# others" in 4 of 5 idle runs, benchmarks/results/make_stress.json).
# STRESS_TESTS: the files that hold them (collecting the whole suite to select 11 tests cost
# ~12 s of the ~37 s of this step on the loaded 2-core machine; tests/test_plugin.py, where they
# were, ~0.5 s of CPU more than their own module); `make stress STRESS_TESTS=tests` looks
# everywhere.
STRESS_ARGS ?=
# seconds for the CLI run (the whole protocol): `make stress` <= 15 s on 2 idle cores (issue 31;
# benchmarks/results/make_stress.json).
# 12, not less: under ~11 the mixed phase's cap (2x its share) ends it before one epoch of
# rounds, and some case meets no other in the mixed rounds (coverage "mixed: >= 0 others")
STRESS_BUDGET ?= 12
# the mHC corpus and corpus/pool (two operators sharing a staging-pool key: the fault
# `scratch-pool` lives there), so the shipped corpus can meet every simulator fault
STRESS_CORPUS ?= --corpus corpus/mhc.toml --corpus corpus/pool/mul.toml --corpus corpus/pool/softmax.toml
STRESS_TESTS ?= tests/test_plugin_stress.py
# xdist (a worker per core, each on a device of its own) only with more than 2 cores: on 2 the
# workers' start costs more than the second core gives back for 11 tests
NPROC := $(shell nproc 2>/dev/null || echo 1)
STRESS_XDIST ?= $(if $(filter 1 2,$(NPROC)),,-n auto)
# 0.5 s per concurrent phase (the plugin's own default): the in-flight test still covers every
# interleaved pair and every mixed pair of its corpus (64/64, 45/45), as at 1.5 s, 4 s sooner
# --assert=plain: pytest rewrites the asserts of a plugin's whole package (134 stress modules
# at collection), parsed and compiled on every step where bytecode is not written
# (PYTHONDONTWRITEBYTECODE): ~0.6 s of CPU; the tests' failures carry their own messages
STRESS_PYTEST_ARGS ?= $(STRESS_XDIST) --stress-duration 0.5 --assert=plain
STRESS_RUN := $(CLI) run --record-baseline --stream both --budget $(STRESS_BUDGET) $(STRESS_CORPUS) $(STRESS_ARGS)
STRESS_PLUGIN := $(PY) -m pytest -p stress -m stress -q $(STRESS_PYTEST_ARGS) $(STRESS_TESTS)
# STRESS_BESIDE=idle: the plugin step beside the run instead of after it, on the next device, as a
# SCHED_IDLE process (chrt --idle 0; nice 19 where chrt is missing) that gets only the cycles the
# run leaves idle: the run's phases keep both cores whenever they want them (beside it at the same
# priority the plugin took the mixed phase's core). A call of the plugin's that waits for a core
# is no false hang: the hang rule does not count run-queue wait (README "Hangs"). Its output
# follows the run's; exit status: the run's, else the tests'. Not the default until measured idle
# (`benchmarks/bench_make_stress.py -- STRESS_BESIDE=idle`).
STRESS_BESIDE ?=
STRESS_IDLE := $(shell chrt --idle 0 true >/dev/null 2>&1 && echo 'chrt --idle 0' || echo 'nice -n 19')
# the package's bytecode written first (~0.05 s when up to date): where PYTHONDONTWRITEBYTECODE is
# set nothing else writes it, and each step compiled every stress module it imports again
# (~0.2 s of CPU before the run's first phase)
STRESS_PYC := $(PY) -m compileall -q stress tests/conftest.py $(STRESS_TESTS)
stress: $(STAMP)
	@$(STRESS_PYC)
ifeq ($(STRESS_BESIDE),idle)
	@log=$$(mktemp); echo '$(STRESS_IDLE) $(STRESS_PLUGIN) --stress-device 1 (beside the run)'; \
	echo '$(STRESS_RUN)'; \
	$(STRESS_IDLE) $(STRESS_PLUGIN) --stress-device 1 >"$$log" 2>&1 & tests=$$!; \
	trap 'kill $$tests 2>/dev/null' INT TERM HUP; \
	$(STRESS_RUN); run=$$?; \
	wait $$tests; code=$$?; \
	echo '-- the plugin step (beside the run):'; cat "$$log"; rm -f "$$log"; \
	if [ $$run -ne 0 ]; then exit $$run; fi; exit $$code
else
	$(STRESS_RUN)
	$(STRESS_PLUGIN)
endif

# Hostile inputs, kills and concurrent runs, each row a real CLI call (< 3 min idle).
hostile: $(STAMP)
	$(PY) tests/hostile_sweep.py

# deptry: the runtime dependencies are exactly what the package imports ([tool.deptry]);
# check-wheel-contents: the wheel `python -m build` makes (from the sdist) holds what it should.
lint: $(STAMP)
	$(VENV)/bin/ruff check stress tests benchmarks examples
	$(VENV)/bin/ruff format --check stress tests benchmarks examples
	$(PY) benchmarks/check_figures.py
	$(VENV)/bin/lint-imports
	$(VENV)/bin/deptry .
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	  $(PY) -m build --no-isolation --outdir "$$d" . >"$$d/build.log" 2>&1 || { cat "$$d/build.log"; exit 1; }; \
	  $(VENV)/bin/check-wheel-contents "$$d"/*.whl

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# Every simulated fault x 10 seeds, the CLI vs the naive harness under both stream policies,
# each a process from exec (the naive harness and the numeric faults' stress runs 2 seeds on the
# rows where nothing is expected to be found; --budget 20 bounds the runs that find nothing):
# about 40 min on the idle 2-core machine (2026-12-05: benchmarks/results/detection.md).
# Regenerates benchmarks/results/detection.{json,md}, the README's table.
DETECT_ARGS ?= --seeds 10 --naive-seeds 2 --numeric-seeds 2 --record-runs 2 --budget 20 --label idle
bench-detect: $(STAMP)
	$(PY) benchmarks/detection.py $(DETECT_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build dist *.egg-info
