# Two commands for a newcomer: `make demo` runs a stage agent offline, `make test` runs every test.
# The demo runs s01, the closed loop a newcomer builds first (s00's one call, then its loop), on the
# offline model even with a key set; STAGE=s06 make demo (or make demo STAGE=s06 MODEL=...) runs another.
# Each creates .venv and installs the course into it on first use. `make lab` opens the notebooks.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAGE ?= s01
MODEL ?= offline
TASK ?= List the files and write their count and names to report.txt
# The notebooks' kernel: the .venv's Python, registered inside .venv (--sys-prefix), so that Jupyter
# and VS Code offer it by this name and nothing is installed outside the repository.
KERNEL := agent-loop-course
# Mermaid draws the chapters' diagrams. Its script comes from the npm package at this pinned version
# and is copied into the built site by docs/hooks/generate.py, so the site draws them with no network.
MERMAID_VERSION := 11.17.2
MERMAID := $(VENV)/share/agent-course/mermaid-$(MERMAID_VERSION).min.js
TEST_PROCESSES ?= 2

.PHONY: demo test test-latest lock docs lab install clean browser

install: $(BIN)/.installed

# Every package comes from requirements.lock: exact versions, each file checked against its hash, so that
# today's install is tomorrow's. (pyproject.toml keeps compatible ranges, for installing the course into
# an environment of your own.) `make lock` refreshes the lock; `make test-latest` tries the newest releases.
$(BIN)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes --no-deps -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/python -m pip check
	$(BIN)/python -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (agent loop course)"
	@$(MAKE) --no-print-directory $(MERMAID)
	@$(MAKE) --no-print-directory browser
	touch $@

# Without npm the site still builds; its diagrams then need the network (Material loads mermaid itself).
$(MERMAID):
	@if ! command -v npm >/dev/null 2>&1; then \
	  echo "npm not found: the docs' diagrams will load mermaid from the network (install npm, then make install)"; \
	else \
	  scratch=$$(mktemp -d) && \
	  npm pack --silent --pack-destination "$$scratch" mermaid@$(MERMAID_VERSION) >/dev/null && \
	  tar -xzf "$$scratch"/mermaid-$(MERMAID_VERSION).tgz -C "$$scratch" package/dist/mermaid.min.js && \
	  mkdir -p $(dir $@) && mv "$$scratch"/package/dist/mermaid.min.js $@ && rm -rf "$$scratch" && \
	  echo "vendored mermaid $(MERMAID_VERSION) for the docs: $@"; \
	fi

# The trace viewer's tests open it in headless Chromium. As root with apt-get, the Debian package is
# installed when no Chromium is found (quietly); otherwise, or if that fails, those tests skip and say why.
browser:
	@if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium (apt-get) for the trace viewer's browser tests"; \
	    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || \
	      { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1; }; } || \
	      echo "could not install chromium: the trace viewer's browser tests will be skipped"; \
	  else \
	    echo "no chromium found: the trace viewer's browser tests will be skipped (install the chromium package)"; \
	  fi; \
	fi

demo: $(BIN)/.installed
	$(BIN)/python $(STAGE)/agent.py "$(TASK)" --model $(MODEL)

# Two test processes (pytest-xdist), a test file to each at a time: a file's module fixtures (the site
# build, the graded exercises, the ladder) are then made once. (--dist loadgroup would spread more finely,
# but pytest-xdist 3.8 cannot group tests on pytest 9, whose node ids it no longer rewrites.)
# Compiled bytecode is kept, in the environment's own folder rather than beside the sources: a machine
# that sets PYTHONDONTWRITEBYTECODE (many containers do) would otherwise compile every module of the
# course, and rewrite every test module's asserts, again in every process of every run.
test: $(BIN)/.installed
	PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(abspath $(VENV))/bytecode \
	  $(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist loadfile

# The lock, made anew from pyproject.toml's ranges by uv (a pinned release, in a folder of its own): for
# every platform and every Python the course supports (3.10 on), with the hash of every file.
UV_VERSION := 0.13.9
LATEST := .venv-latest
lock:
	$(PYTHON) -m venv .venv-tools
	.venv-tools/bin/python -m pip install --quiet 'uv==$(UV_VERSION)'
	.venv-tools/bin/uv pip compile pyproject.toml build-requirements.in --extra dev --universal \
	  --python-version 3.10 --generate-hashes --upgrade --quiet -o requirements.lock

# The whole suite on the newest releases that pyproject.toml allows, in an environment of its own: a new
# SDK is met here before a learner meets it. If it passes, `make lock` takes those releases.
test-latest:
	rm -rf $(LATEST)
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install --quiet --upgrade pip
	$(LATEST)/bin/python -m pip install --quiet --upgrade -e '.[dev]'
	$(LATEST)/bin/python -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (agent loop course)"
	$(LATEST)/bin/python -m pip list --format=freeze | grep -i -E '^(anthropic|httpx2|mkdocs-material|jupytext)=='
	PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(abspath $(LATEST))/bytecode \
	  $(LATEST)/bin/python -m pytest -n $(TEST_PROCESSES) --dist loadfile

docs: $(BIN)/.installed
	$(BIN)/python -m mkdocs serve

# JupyterLab on the repository, with jupytext's pairing active: saving a notebook rewrites its .py twin.
# (Jupyter refuses to run as root unless told; a container's root user is told.)
# LAB_OPTIONS passes more, e.g. make lab LAB_OPTIONS="--no-browser --port=8899".
lab: $(BIN)/.installed
	$(BIN)/jupyter lab --notebook-dir=. $(LAB_OPTIONS) $$([ "$$(id -u)" = 0 ] && echo --allow-root)

clean:
	rm -rf $(VENV) $(LATEST) .venv-tools site .pytest_cache
