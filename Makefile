# The two commands: `make chat` (set up, build the index, start the chat app) and
# `make test` (set up, run the tests). Both create .venv here when it is missing.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
export HF_HUB_OFFLINE := 1

.PHONY: setup chat test index bench scale eval lint browser

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	# torch first: the CPU build on this disk; a plain requirement would pull CUDA.
	$(PY) -m pip install -q --disable-pip-version-check torch==2.13.0 2>&1 | grep -v "^WARNING: Location" || true
	$(PY) -m pip install -q --disable-pip-version-check -e '.[test,llm]' 2>&1 | grep -v "^WARNING: Location" || true
	$(PY) -c "import qa, faiss, sentence_transformers, gradio, playwright, openai, llama_cpp"
	touch $(STAMP)

setup: $(STAMP)

browser:
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

index: setup
	$(VENV)/bin/qa build

chat: index
	$(PY) app.py

test: setup browser
	$(PY) -m pytest -q

lint: setup
	$(VENV)/bin/ruff check qa tests eval app.py

bench: setup
	$(PY) eval/bench.py

# Needs the bench extra for the LangChain comparison: .venv/bin/pip install -e '.[bench]'.
scale: setup
	$(PY) eval/scale_bench.py

eval: setup
	$(PY) -m eval
