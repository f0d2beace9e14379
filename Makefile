# repspace: `make demo` runs the main job offline, `make test` runs the tests.
# Both create .venv when missing and install into it (idempotent: the install
# re-runs only when pyproject.toml changes). torch is pinned and installed first
# so that no package pulls a CUDA build.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install demo test test-fast bench evaluation clean web browser wordnet

install: $(STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[test,ray]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/repspace --store .demo/store.db demo

# The explorer's browser tests drive Debian's chromium (installed here when missing; never a browser download).
browser:
	@command -v chromium >/dev/null 2>&1 || { echo "installing Debian's chromium for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# WordNet 3.0 (Debian's wordnet-base, 28 MB of text files in /usr/share/wordnet): the noun hierarchy behind the
# Poincare tests and evaluation, and the synonym sets behind retrofitting (installed here when missing).
wordnet:
	@test -f /usr/share/wordnet/data.noun || { echo "installing Debian's wordnet-base for the learn tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordnet-base >/dev/null; }

# Rebuild the explorer's front end (web/, npm packages pinned by its lockfile) into the package.
web:
	cd web && npm ci --no-audit --no-fund && npm run build

# The import contract first (pyproject.toml: layers, independent engines, no cycles), then every test.
test: $(STAMP) browser wordnet
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q

# The quick loop: every test and docstring example except those marked slow (they load a transformer model,
# distil one or spawn processes; see the `slow` marker in pyproject.toml). `make test` still runs everything.
test-fast: $(STAMP) wordnet
	$(PY) -m pytest -q -m "not slow"

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,ray,bench]'
	$(PY) benchmarks/run.py

# Quality on real data (published figures reproduced): regenerates EVALUATION.md.
evaluation: $(STAMP) wordnet
	$(PY) benchmarks/evaluation.py

clean:
	rm -rf .demo benchmarks/.work
