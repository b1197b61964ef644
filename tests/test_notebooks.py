"""Every stage notebook runs top to bottom offline, holds no stale output, and is what its generator writes.

The kernel is a subprocess started from this test, so it inherits the environment that
``conftest.py`` cleaned (no API key, no MODEL_ID, no base URL): the notebooks run on the offline
model. It talks to this process over loopback, which conftest's socket guard allows.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(ROOT.glob("s*/*.ipynb"))


def load_generator():
    spec = importlib.util.spec_from_file_location("course_notebooks", ROOT / "tools" / "notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_every_stage_with_a_notebook_is_found():
    assert {"s00", "s01"} <= {path.parent.name for path in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=relative)
def test_notebook_holds_no_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    stale = [index for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"
             and (cell.get("outputs") or cell.get("execution_count") is not None)]
    assert not stale, f"{relative(path)}: cells {stale} hold outputs or execution counts; clear them before committing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=relative)
def test_notebook_runs_top_to_bottom_offline(path):
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, kernel_name="python3", timeout=60,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError, naming the cell, if any cell fails
    printed = "".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                      for output in cell.outputs)
    if "model in use:" in printed:
        assert "model in use: offline" in printed, "the notebook's kernel did not run on the offline model"


GENERATED = sorted(load_generator().NOTEBOOKS)


@pytest.mark.parametrize("relative_path", GENERATED)
def test_notebook_is_what_the_generator_writes(relative_path):
    committed = (ROOT / relative_path).read_text(encoding="utf-8")
    assert committed == load_generator().render(relative_path), (
        f"{relative_path} differs from tools/notebooks.py: run `python tools/notebooks.py` and commit the result")
