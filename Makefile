# The two entry points: `make demo` and `make test`. Each provisions what is missing first.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTHON ?= python3

.PHONY: demo test setup kubernetes browser a2a-v0.3 verifiers doctor lint bench clean-venv

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "netdojo needs Python 3.11 or newer"'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || { \
		echo "python venv support missing; installing python3-venv"; \
		apt-get update -q && apt-get install -y -q python3-venv && $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install -q --upgrade "pip>=23"
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP)
	$(BIN)/netdojo setup

# The Kubernetes labs' control plane (kube-apiserver, kubectl, etcd), built from Go modules
# once and cached; the tests of those labs need it.
kubernetes: setup
	$(BIN)/netdojo setup --kubernetes

demo: setup kubernetes
	$(BIN)/netdojo run --agent heuristic --episodes 8 --concurrency 2 --out results/demo

# The report tests open the HTML report in Debian's headless Chromium.
browser:
	@command -v chromium >/dev/null || { echo "chromium missing; installing it"; \
		apt-get update -q && apt-get install -y -q chromium; }

# The A2A 0.3 SDK (latest 0.3.x) in a virtual environment of its own under netdojo's state
# folder, made once: the tests run 0.3 clients and agents with it, as AgentBeats' stack speaks.
a2a-v0.3: $(STAMP)
	$(BIN)/python -m tests.a2a_v0_3.env

# The verifiers library, which pins an mcp release of its own, with this tree's netdojo in a
# virtual environment of its own under netdojo's state folder, made once and brought up to date
# when the tree or pyproject.toml changes: the tests run its evaluations with it.
verifiers: $(STAMP)
	$(BIN)/python -m tests.verifiers_env.env

test: setup kubernetes browser a2a-v0.3 verifiers lint
	$(BIN)/python -m tests.suite

doctor: $(STAMP)
	$(BIN)/netdojo doctor

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy netdojo labs scenarios tools judges reports servers clients

bench: setup
	$(BIN)/python benchmarks/lab_lifecycle.py
	$(BIN)/python benchmarks/tool_latency.py
	$(BIN)/python benchmarks/episode_overhead.py
	$(BIN)/python benchmarks/image_build.py

clean-venv:
	rm -rf $(VENV)
