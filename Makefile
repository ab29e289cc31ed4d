# cellboot developer and CI entry points (GNU make).
#
#   make test       venv + services + the whole test suite (what CI runs)
#   make chaos      only the chaos test (kills conductors mid-boot); its
#                   last line is the run's JSON summary
#   make faults     only the infrastructure fault runs: restarts this
#                   machine's RabbitMQ, MariaDB and Redis and cuts a cell's
#                   database off, each under load; one JSON line per run
#   make devstack-test  only the devstack plugin's test (both modes, and the
#                       door mode beside a real nova-api)
#   make pep8       flake8 over the code, the tests, the tools and the
#                   benchmarks
#   make genconfig  regenerate etc/cellboot/cellboot.conf.sample and
#                   etc/cellboot/policy.yaml.sample
#   make services   prepare MariaDB/PostgreSQL for the opportunistic tests
#   make venv       create .venv and install cellboot[test] into it
#   make nova-venv  create .nova-venv with nova 34 (nova-api for the
#                   Nova door's tests; cellboot never imports it)
#   make clean      remove build and test leftovers (keeps .venv)
#   make distclean  clean, and remove .venv and .nova-venv as well
#
# Everything a fresh clone needs is installed from here: CI runs
# `.ci/run` (that is, `make test`) on a machine with only Python and the
# database servers.

SHELL := /bin/bash
.DEFAULT_GOAL := test

VENV := .venv
VENV_PY := $(VENV)/bin/python
# Stamp written after a successful install; re-install when the packaging
# metadata changes (a new dependency, a new console script).
VENV_STAMP := $(VENV)/.cellboot-installed
PIP_LOG := $(VENV)/pip-install.log
PACKAGING := setup.cfg setup.py pyproject.toml requirements.txt constraints.txt

GENCONFIG_CONF := etc/cellboot/cellboot-config-generator.conf
GENPOLICY_CONF := etc/cellboot/cellboot-policy-generator.conf
PEP8_PATHS := cellboot tests tools benchmarks setup.py

# Python 3.11 or newer: prefer python3.11, else python3 when it is new
# enough. Override with `make PYTHON=/path/to/python3.x`.
PYTHON ?= $(shell \
	if command -v python3.11 >/dev/null 2>&1; then echo python3.11; \
	elif command -v python3 >/dev/null 2>&1 && python3 -c \
	  'import sys; sys.exit(sys.version_info < (3, 11))'; then echo python3; \
	fi)

PIP_QUIET := -q --disable-pip-version-check

# pytest-xdist workers: the suite spends most of its time waiting on
# databases and subprocesses, so one worker per core halves it.
TEST_WORKERS ?= 2

.PHONY: venv nova-venv services test suite faults chaos devstack-test \
	pep8 genconfig clean distclean demo

venv: $(VENV_STAMP)

$(VENV_PY):
	@if [ -z "$(PYTHON)" ]; then \
	  echo 'make: Python 3.11 or newer is needed (python3.11 or python3);' \
	       'set PYTHON=/path/to/python3.x' >&2; exit 1; fi
	$(PYTHON) -m venv $(VENV)

# pip's and setuptools' warnings (unused find-links, deprecated
# classifiers) go to a log that is shown only when the install fails.
$(VENV_STAMP): $(VENV_PY) $(PACKAGING)
	@echo "pip install -e '.[test]' into $(VENV) (log: $(PIP_LOG))"
	@{ $(VENV_PY) -m pip install $(PIP_QUIET) --upgrade \
	     pip setuptools wheel && \
	   $(VENV_PY) -m pip install $(PIP_QUIET) -c constraints.txt \
	     -e '.[test]'; \
	 } >$(PIP_LOG) 2>&1 || { cat $(PIP_LOG) >&2; \
	   echo 'make: installing cellboot[test] failed (see above)' >&2; \
	   exit 1; }
	@touch $@

# nova-api 34 in a virtualenv of its own: nova pins its own oslo.*
# releases. The stamp is written last, so a build cut short is redone.
NOVA_VENV := .nova-venv
NOVA_STAMP := $(NOVA_VENV)/.nova-installed
NOVA_PIP_LOG := $(NOVA_VENV)/pip-install.log
NOVA_REQUIREMENTS := nova==34.0.0 PyMySQL waitress

nova-venv: $(NOVA_STAMP)

$(NOVA_STAMP):
	@rm -rf $(NOVA_VENV) && $(PYTHON) -m venv $(NOVA_VENV)
	@echo "pip install $(NOVA_REQUIREMENTS) into $(NOVA_VENV) (log: $(NOVA_PIP_LOG))"
	@$(NOVA_VENV)/bin/python -m pip install $(PIP_QUIET) \
	   $(NOVA_REQUIREMENTS) >$(NOVA_PIP_LOG) 2>&1 || { \
	   cat $(NOVA_PIP_LOG) >&2; \
	   echo 'make: installing nova into $(NOVA_VENV) failed' >&2; exit 1; }
	@touch $@

services: venv
	$(VENV_PY) tools/prepare_services.py

# pytest exits 5 when it collected no test: that is a failure here too,
# with a line that says so. --durations names the slowest tests, so that
# a suite creeping towards CI's time limit shows where the time goes.
#
# The fault runs restart the machine's own servers, so they run after the
# rest, alone; they run even when the rest failed (their figures tell the
# next session as much), and either failing fails `make test`.
test: venv nova-venv services
	@rc=0; $(MAKE) --no-print-directory suite || rc=$$?; \
	$(MAKE) --no-print-directory faults || rc=$$?; \
	exit $$rc

suite: venv nova-venv services
	@$(VENV_PY) -m pytest -q -n $(TEST_WORKERS) --durations=10 \
	  --ignore=tests/functional/faults tests; \
	rc=$$?; \
	if [ $$rc -eq 5 ]; then \
	  echo 'make test: pytest collected no tests' >&2; fi; \
	exit $$rc

# One JSON line per fault run, gathered in FAULTS_RESULT and printed last.
FAULTS_RESULT := $(CURDIR)/.faults-result.json

faults: venv services
	@rm -f $(FAULTS_RESULT); \
	CELLBOOT_FAULTS=1 CELLBOOT_FAULTS_RESULT=$(FAULTS_RESULT) \
	  $(VENV_PY) -m pytest -q tests/functional/faults; \
	rc=$$?; \
	if [ -s $(FAULTS_RESULT) ]; then cat $(FAULTS_RESULT); \
	else echo '{"error": "the fault runs wrote no summary"}'; fi; \
	exit $$rc

# The chaos test writes its JSON summary to CHAOS_RESULT; it is printed
# last, pass or fail, so that the run's figures are the last line.
CHAOS_RESULT := $(CURDIR)/.chaos-result.json

chaos: venv services
	@rm -f $(CHAOS_RESULT); \
	CELLBOOT_CHAOS_RESULT=$(CHAOS_RESULT) $(VENV_PY) -m pytest -q \
	  tests/functional/chaos; \
	rc=$$?; \
	if [ -s $(CHAOS_RESULT) ]; then cat $(CHAOS_RESULT); \
	else echo '{"error": "the chaos test wrote no summary"}'; fi; \
	exit $$rc

devstack-test: venv nova-venv services
	$(VENV_PY) -m pytest -q tests/functional/devstack

# A whole deployment in one process (SQLite in a temporary directory,
# fake://): 20 servers booted through the REST API across three cells of
# two hosts. cell1-host1 fails every build, so builds sent there are
# rescheduled to cell1-host2 (a reschedule in the cell); every host of
# cell3 fails, so cell3 hands its builds back and the super conductors
# move them to cell1 or cell2 (a move to another cell). Exits 0 when all
# 20 are ACTIVE. Port 0: any free port, so a running API is no obstacle.
#
# Why a build is moved in every run, although the cell is drawn: the
# API level sends a server to the cell with the roomiest host, equal
# cells in random order (cell_filters.ranked). Until one is sent to
# cell3, its hosts are empty, so cell3 is among the roomiest for each of
# the 20 servers (with cell1, whose failing host stays empty too, and
# with cell2 until both its hosts hold a server): one chance in three at
# worst, one in two once cell2 is fuller. No move at all is below
# (2/3)^20, one run in 3,000, at worst; in practice 2 to 5 are moved.
DEMO_ARGS := --demo 20 --cells 3 --hosts-per-cell 2 --fail-host cell1-host1 \
	--fail-cell cell3

demo: venv
	@state=$$(mktemp -d); trap 'rm -rf "$$state"' EXIT; \
	$(VENV)/bin/cellboot all-in-one $(DEMO_ARGS) --state-dir "$$state" \
	  --port 0

pep8: venv
	$(VENV_PY) -m flake8 $(PEP8_PATHS)

genconfig: venv
	$(VENV)/bin/oslo-config-generator --config-file $(GENCONFIG_CONF)
	$(VENV)/bin/oslopolicy-sample-generator --config-file $(GENPOLICY_CONF)

clean:
	rm -rf build dist .eggs *.egg-info .stestr .pytest_cache .tox \
	  AUTHORS ChangeLog
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d \
	  -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) $(NOVA_VENV)
