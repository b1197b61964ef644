# Two commands for a newcomer: `make demo` runs a stage agent offline, `make test` runs every test.
# Each creates .venv and installs the course into it on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAGE ?= s06
TASK ?= List the files and write their count and names to report.txt
TEST_PROCESSES ?= 2

.PHONY: demo test docs install clean

install: $(BIN)/.installed

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

demo: $(BIN)/.installed
	$(BIN)/python $(STAGE)/agent.py "$(TASK)"

# Two test processes (pytest-xdist), a test file to each at a time: a file's module fixtures (the site
# build, the graded exercises, the ladder) are then made once. (--dist loadgroup would spread more finely,
# but pytest-xdist 3.8 cannot group tests on pytest 9, whose node ids it no longer rewrites.)
test: $(BIN)/.installed
	$(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist loadfile

docs: $(BIN)/.installed
	$(BIN)/python -m mkdocs serve

clean:
	rm -rf $(VENV) site .pytest_cache
