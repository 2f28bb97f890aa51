# Two entry points for a fresh machine: `make demo` and `make test`.
# Both create the virtual environment in .venv when it is missing. While working,
# `make test-fast` runs the fast lane (the lanes are pytest markers: pyproject.toml).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-fast test-pg test-browser lint bench docs clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,semantic,server]'
	touch $(STAMP)

setup: $(STAMP)

## Build the demo database from the bundled snapshot and show its feed.
demo: $(STAMP)
	$(BIN)/lightnews demo

## Lint, type-check and run every test.
test: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -n 2 -q

## Lint, then every test outside the slow, PostgreSQL, browser and multi-process lanes
## (under a minute on two quiet cores).
FAST := not slow and not postgres and not browser and not multiprocess
test-fast: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n 2 -q -m "$(FAST)"

## One lane of the whole suite: every run on PostgreSQL; every test in Chromium.
test-pg: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q -m postgres

test-browser: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q -m browser

## Regenerate docs/cli.md from the command line itself.
docs: $(STAMP)
	$(BIN)/python -m lightnews.cli.docs > docs/cli.md

bench: $(STAMP)
	$(BIN)/python bench/snapshot_import.py --records 200000

clean:
	rm -rf $(VENV) build dist *.egg-info
