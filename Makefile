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

.PHONY: api install demo test test-fast test-portable bench evaluation clean web browser wordnet pylate-reference

install: $(STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[test,ray]'
	# The Ollivier-Ricci reference of tests/engines/analyze/test_ricci.py, without its declared pins: it asks
	# scipy<=1.13.1 (it runs on ours; the test checks its figures) and cython, which it does not import.
	$(PY) -m pip install --quiet --no-deps GraphRicciCurvature==0.6.1 networkit==11.3 python-louvain==0.16
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

# PyLate 1.6.0, the reference of the exact MaxSim tests (tests/engines/search/test_maxsim.py), in a virtual
# environment of its own: resolved with its dependencies it would replace the pinned CPU torch with a CUDA torch
# 2.11 (its fast-plaid pin), so pylate goes in without them, beside what its scoring module imports.
PYLATE_VENV ?= .venv-pylate
pylate-reference: $(PYLATE_VENV)/.installed

$(PYLATE_VENV)/.installed:
	$(PYTHON) -m venv $(PYLATE_VENV)
	$(PYLATE_VENV)/bin/python -m pip install --quiet torch==2.13.0
	$(PYLATE_VENV)/bin/python -m pip install --quiet --no-deps pylate==1.6.0
	$(PYLATE_VENV)/bin/python -m pip install --quiet transformers==5.3.0 datasets==5.2.0 tqdm==4.70.1
	touch $@

# Rebuild the explorer's front end (web/, npm packages pinned by its lockfile) into the package.
web:
	cd web && npm ci --no-audit --no-fund && npm run build

# The import contract first (pyproject.toml: layers, independent engines, no cycles), then every test.
test: $(STAMP) browser wordnet pylate-reference
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q

# The quick loop: every test and docstring example except those marked slow (they load a transformer model,
# distil one or spawn processes; see the `slow` marker in pyproject.toml). `make test` still runs everything.
test-fast: $(STAMP) wordnet
	$(PY) -m pytest -q -m "not slow"

# The numerics tests again under a second kernel set, so that a result that depends on the CPU fails here and not
# on a user's machine: every docstring example and every test marked `numerics` (equalities between backends,
# shard layouts, thread counts, batch sizes; comparisons with stored floats). tests/portable_env.py chooses the
# set for this machine, prints it, and runs pytest under it:
# - numpy: NPY_DISABLE_CPU_FEATURES names the AVX-512 groups of numpy's own dispatch list (the AVX2 loops of an
#   AVX2 machine), or without AVX-512 every dispatched group (numpy's baseline loops);
# - FAISS: FAISS_SIMD_LEVEL=AVX2 (NONE without AVX-512) is what the dynamic-dispatch faiss-cpu wheel reads;
#   FAISS_OPT_LEVEL=AVX2 is what older wheels' Python loader reads to pick swigfaiss_avx2 (it matches "AVX2"
#   case-sensitively, so not "avx2"); the wheel installed here has no such module and ignores it;
# - OpenBLAS: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE stay as the environment sets them (some processors need
#   them); when both are unset, OPENBLAS_CORETYPE=Haswell under AVX-512 (the kernels an AVX2 machine picks),
#   Sandybridge under AVX2 (no FMA);
# - torch: ATEN_CPU_CAPABILITY, MKL_ENABLE_INSTRUCTIONS and ONEDNN_MAX_CPU_ISA one step down likewise;
# - threads: BLAS, OpenMP and torch on 1 thread in the driver (make test: every core), 2 in each Ray worker
#   (make test: Ray's 1 per task), passed by tests/workflows/distributed/conftest.py.
test-portable: $(STAMP) wordnet
	$(PY) tests/portable_env.py $(PY) -m pytest -q -m numerics

# The public API page (docs/API.md) from the public modules' __all__ and docstrings.
api: $(STAMP)
	$(PY) docs/api_page.py

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,ray,bench]'
	$(PY) benchmarks/run.py

# Quality on real data (published figures reproduced): regenerates EVALUATION.md.
evaluation: $(STAMP) wordnet
	$(PY) benchmarks/evaluation.py

# The HTTP fuzzer at length: Schemathesis (all checks, all phases) against a read-only and a writable
# `repspace serve`, as in `make test` but with 200 cases per operation and up to 10 minutes per server.
.PHONY: fuzz
fuzz: $(STAMP)
	REPSPACE_FUZZ_EXAMPLES=$${REPSPACE_FUZZ_EXAMPLES:-200} REPSPACE_FUZZ_TIME=$${REPSPACE_FUZZ_TIME:-600} \
	  $(PY) -m pytest -q -s -p no:cacheprovider tests/security/test_http_fuzz.py

clean:
	rm -rf .demo benchmarks/.work
