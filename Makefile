# Two commands for a newcomer: `make demo` runs a stage agent offline, `make test` runs every test.
# Each creates .venv and installs the course into it on first use. `make lab` opens the notebooks.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAGE ?= s06
TASK ?= List the files and write their count and names to report.txt
# The notebooks' kernel: the .venv's Python, registered inside .venv (--sys-prefix), so that Jupyter
# and VS Code offer it by this name and nothing is installed outside the repository.
KERNEL := agent-loop-course
# Mermaid draws the chapters' diagrams. Its script comes from the npm package at this pinned version
# and is copied into the built site by docs/hooks/generate.py, so the site draws them with no network.
MERMAID_VERSION := 11.17.2
MERMAID := $(VENV)/share/agent-course/mermaid-$(MERMAID_VERSION).min.js

.PHONY: demo test docs lab install clean

install: $(BIN)/.installed

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (agent loop course)"
	@$(MAKE) --no-print-directory $(MERMAID)
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

demo: $(BIN)/.installed
	$(BIN)/python $(STAGE)/agent.py "$(TASK)"

test: $(BIN)/.installed
	$(BIN)/python -m pytest

docs: $(BIN)/.installed
	$(BIN)/python -m mkdocs serve

# JupyterLab on the repository, with jupytext's pairing active: saving a notebook rewrites its .py twin.
# (Jupyter refuses to run as root unless told; a container's root user is told.)
# LAB_OPTIONS passes more, e.g. make lab LAB_OPTIONS="--no-browser --port=8899".
lab: $(BIN)/.installed
	$(BIN)/jupyter lab --notebook-dir=. $(LAB_OPTIONS) $$([ "$$(id -u)" = 0 ] && echo --allow-root)

clean:
	rm -rf $(VENV) site .pytest_cache
