"""Every stage notebook is a jupytext pair in sync, holds no output, names its exercises, and runs offline.

A stage's notebook is ``sNN/NAME.ipynb`` (what a learner opens) paired with ``sNN/NAME.py`` (jupytext's
percent format, what review reads), as ``jupytext.toml`` at the root says. Whichever side was edited,
``.venv/bin/jupytext --sync sNN/NAME.py`` brings the other up to date; Jupyter does it on every save.

The kernel is a subprocess started from this test, so it inherits the environment that
``conftest.py`` cleaned (no API key, no MODEL_ID, no base URL): the notebooks run on the offline
model. It talks to this process over loopback, which conftest's socket guard allows.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import jupytext
import nbformat
import pytest
from jupytext.compare import compare_notebooks
from jupytext.formats import guess_format
from nbclient import NotebookClient

from course.grading.exercises import stage_regions

ROOT = Path(__file__).resolve().parent.parent
STAGES = sorted(path.parent.name for path in ROOT.glob("s[0-9][0-9]/agent.py"))
NOTEBOOKS = sorted(ROOT.glob("s[0-9][0-9]/*.ipynb"))
KERNEL = "agent-loop-course"  # the kernel `make install` registers (Makefile's KERNEL)


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def twin(notebook: Path) -> Path:
    return notebook.with_suffix(".py")


def sync_hint(path: Path) -> str:
    return f"run `.venv/bin/jupytext --sync {relative(twin(path))}` and commit both files"


def test_every_stage_has_one_notebook():
    assert sorted(path.parent.name for path in NOTEBOOKS) == STAGES


def test_the_pairing_is_declared_at_the_root():
    config = (ROOT / "jupytext.toml").read_text(encoding="utf-8")
    assert re.search(r'^formats\s*=\s*"ipynb,py:percent"', config, re.MULTILINE)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=relative)
def test_notebook_and_its_text_twin_agree(path):
    assert twin(path).is_file(), f"{relative(path)} has no paired {twin(path).name}: {sync_hint(path)}"
    text = twin(path).read_text(encoding="utf-8")
    assert guess_format(text, ".py")[0] == "percent", f"{relative(twin(path))} is not in jupytext's percent format"
    try:
        compare_notebooks(jupytext.reads(text, fmt="py:percent"), jupytext.read(path), fmt="py:percent")
    except Exception as difference:  # jupytext says which cell differs, and how
        pytest.fail(f"{relative(path)} and {twin(path).name} differ ({sync_hint(path)}):\n{difference}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=relative)
def test_notebook_holds_no_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    stale = [index for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"
             and (cell.get("outputs") or cell.get("execution_count") is not None)]
    assert not stale, (f"{relative(path)}: cells {stale} hold outputs or execution counts; clear them "
                       f"before committing (Edit > Clear Outputs of All Cells, then save)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=relative)
def test_notebook_opens_on_the_course_kernel(path):
    assert nbformat.read(path, as_version=4).metadata["kernelspec"]["name"] == KERNEL


def your_turn(notebook) -> str:
    cells = [cell.source for cell in notebook.cells if cell.cell_type == "markdown"
             and cell.source.startswith("## Your turn")]
    assert len(cells) == 1, "a notebook ends with one markdown cell headed '## Your turn'"
    return cells[0]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=relative)
def test_your_turn_names_the_exercises_the_stage_marks(path):
    stage = path.parent.name
    text = your_turn(nbformat.read(path, as_version=4))
    # As the markers in the stage code name them: `# >>> exercise N: TITLE`.
    named = [f"{region.number}. *{region.title}*" for region in stage_regions(stage)]
    assert named and all(name in text for name in named), (
        f"{relative(path)}'s 'Your turn' should name {named}, as {stage}/agent.py marks them")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=relative)
def test_your_turn_prints_commands_that_work_from_the_repository_root(path):
    stage = path.parent.name
    text = your_turn(nbformat.read(path, as_version=4))
    assert f".venv/bin/python -m course exercise {stage} my-{stage}" in text
    assert f".venv/bin/python -m course check {stage} my-{stage}" in text
    assert not re.search(r"(?<![/\w])python -m", text), "a bare `python` fails outside the virtual environment"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=relative)
def test_notebook_names_articles_by_their_titles(path):
    text = "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells)
    labels = re.findall(r"\bseed\b(?!\s*=)|\bsource articles?\b", text, re.I)
    assert not labels, f"{relative(path)} says {labels}: name the article by its title"


# The code each notebook shows before it runs it: (the stage's module, its central functions).
CENTRAL_CODE = {"s00": ("agent", ["run_tool", "tool_result", "run"]), "s01": ("agent", ["run"]),
                "s02": ("agent", ["take_turn", "run"]), "s03": ("agent", ["limit_reached", "no_progress"]),
                "s04": ("agent", ["run_tool"]), "s05": ("agent", ["prune", "mask_old_results"]),
                "s06": ("permissions", ["decide"])}


def function_source(path: Path, name: str) -> str:
    """A top-level function's source, read off the file (as inspect.getsource gives it)."""
    text = path.read_text(encoding="utf-8")
    node = next(node for node in ast.parse(text).body if isinstance(node, ast.FunctionDef) and node.name == name)
    return "\n".join(text.splitlines()[node.lineno - 1 - len(node.decorator_list):node.end_lineno])


def test_every_stage_notebook_names_its_central_code():
    assert sorted(CENTRAL_CODE) == STAGES


def assert_shows_its_central_code_before_running_it(path: Path, notebook) -> None:
    stage = path.parent.name
    module, names = CENTRAL_CODE[stage]
    sources = [function_source(ROOT / stage / f"{module}.py", name) for name in names]

    def shown(cell) -> str:
        return "".join(output.get("data", {}).get("text/plain", "") + output.get("text", "")
                       for output in cell.get("outputs", []))
    code = [index for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"
            and all(source in shown(cell) for source in sources)]
    assert code, f"{relative(path)} never shows {', '.join(names)} as {stage}/{module}.py has it"
    called = re.compile(rf"\b{module}\.({'|'.join(names)})\(")
    calls = [index for index, cell in enumerate(notebook.cells) if cell.cell_type == "code" and called.search(cell.source)]
    assert not calls or code[0] < calls[0], f"{relative(path)} runs {names} before it shows them"


def test_the_loop_notebook_walks_the_five_steps_one_cell_each():
    notebook = nbformat.read(ROOT / "s01" / "s01_closed_loop.ipynb", as_version=4)
    steps = [("# 1. ask", "agent.ask("), ("# 2. record the reply", "agent.assistant_message("),
             ("# 3. does it ask for tools?", "agent.tool_calls("), ("# 4. act", "agent.tool_result("),
             ("# 5. write every result back", '"role": "user"')]
    cells = [next((index for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"
                   and comment in cell.source and call in cell.source), None) for comment, call in steps]
    assert None not in cells and cells == sorted(set(cells)), f"the five steps, one cell each and in order: {cells}"


# Each notebook runs as a learner runs it, top to bottom, but the seven share one kernel process: starting
# a kernel costs seconds of CPU (ipykernel and the SDK's imports), most of this file's time. Before each
# notebook, FRESH_START gives the kernel back what a new one has: an empty namespace, the notebook's
# folder as working directory, the environment and sys.path it started with, and no stage module
# imported, so a notebook that leans on an earlier one's names, modules or variables still fails.
FRESH_START = """
get_ipython().run_line_magic("reset", "-f")
def _fresh_start(os, sys):
    os.environ.clear(); os.environ.update(%(environment)r)
    sys.path[:] = %(path)r
    os.chdir(%(folder)r)
    for name in [name for name in sys.modules if name.split(".")[0] in %(stages)r or name in ("agent", "permissions")]:
        del sys.modules[name]
_fresh_start(__import__("os"), __import__("sys"))
del _fresh_start
"""
STARTED = "import json, os, sys; print(json.dumps({'environment': dict(os.environ), 'path': sys.path}))"


@pytest.fixture(scope="module")
def kernel():
    """One kernel for the module's notebooks (python3: the kernel of this very interpreter, there even
    before `make install` registers the course's), with what it started with: its environment and path."""
    from jupyter_client.manager import start_new_kernel
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(ROOT))
    printed = []
    client.execute_interactive(STARTED, output_hook=lambda message: printed.append(message["content"].get("text", "")),
                               timeout=60)
    started = json.loads("".join(printed))
    client.stop_channels()
    yield manager, started
    manager.shutdown_kernel(now=True)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=relative)
def test_notebook_runs_top_to_bottom_offline(path, kernel):
    manager, started = kernel
    notebook = nbformat.read(path, as_version=4)
    fresh = FRESH_START % {**started, "folder": str(path.parent), "stages": tuple(STAGES)}
    notebook.cells.insert(0, nbformat.v4.new_code_cell(fresh))
    client = NotebookClient(notebook, km=manager, timeout=60, resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError, naming the cell, if any cell fails
    notebook.cells.pop(0)
    printed = "".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                      for output in cell.outputs)
    if "model in use:" in printed:
        assert "model in use: offline" in printed, "the notebook's kernel did not run on the offline model"
    assert_shows_its_central_code_before_running_it(path, notebook)


def test_a_fresh_start_forgets_what_the_notebook_before_defined(kernel):
    """The shared kernel is only as good as its fresh start: a name, a module or a variable of the
    environment that one notebook set is gone for the next."""
    manager, started = kernel
    leaky = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in (
        "import os\nfrom s01 import agent\nleft_behind = 1\nos.environ['LEFT_BEHIND'] = '1'\nos.chdir('/')",
        FRESH_START % {**started, "folder": str(ROOT / "s02"), "stages": tuple(STAGES)},
        "import os, sys\nprint('left_behind' in dir(), 's01.agent' in sys.modules, 'LEFT_BEHIND' in os.environ, os.getcwd())")])
    NotebookClient(leaky, km=manager, timeout=60).execute()
    assert leaky.cells[2].outputs[0]["text"].split() == ["False", "False", "False", str(ROOT / "s02")]


# ---------------------------------------------------------------- what `make lab` serves

def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def jupyter_server(tmp_path):
    """JupyterLab as `make lab` starts it, on a copy of one stage's notebook pair; yields a GET/PUT helper."""
    jupyter = Path(sys.executable).parent / "jupyter"
    if not (Path(sys.executable).parent / "jupyter-lab").exists():
        pytest.skip("JupyterLab is not installed in this environment (make install adds it)")
    folder = tmp_path / "course"
    (folder / "s01").mkdir(parents=True)
    shutil.copy(ROOT / "jupytext.toml", folder)
    for path in (ROOT / "s01").glob("s01_*"):
        shutil.copy(path, folder / "s01")
    port, token = free_port(), "course-test"
    environment = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    server = subprocess.Popen(
        [str(jupyter), "lab", "--no-browser", f"--notebook-dir={folder}", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", f"--IdentityProvider.token={token}", "--ServerApp.port_retries=0"]
        + (["--allow-root"] if os.geteuid() == 0 else []),  # as `make lab` does for root
        env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def call(method: str, route: str, body: dict | None = None) -> dict:
        request = urllib.request.Request(f"http://127.0.0.1:{port}{route}", method=method,
                                         data=json.dumps(body).encode() if body is not None else None,
                                         headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read() or b"{}")

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                call("GET", "/api/status")
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"jupyter lab did not answer on 127.0.0.1:{port}: {server.stderr.read()[-2000:]}")
                time.sleep(0.3)
        yield call, folder
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        server.stderr.close()


def test_jupyter_lab_serves_the_notebooks_and_keeps_each_pair_in_sync(jupyter_server):
    call, folder = jupyter_server
    listed = {item["name"] for item in call("GET", "/api/contents/s01")["content"]}
    assert "s01_closed_loop.ipynb" in listed
    assert KERNEL in call("GET", "/api/kernelspecs")["kernelspecs"], "make install registers the course's kernel"

    # Save a notebook as JupyterLab does: jupytext's contents manager must rewrite the .py twin too.
    model = call("GET", "/api/contents/s01/s01_closed_loop.ipynb?content=1")
    model["content"]["cells"][0]["source"] += "\n\nA line added in Jupyter."
    call("PUT", "/api/contents/s01/s01_closed_loop.ipynb", {"type": "notebook", "format": "json",
                                                            "content": model["content"]})
    assert "# A line added in Jupyter." in (folder / "s01" / "s01_closed_loop.py").read_text(encoding="utf-8")
