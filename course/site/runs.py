"""The runs the site's pages show, made once per build: a page's run is a ladder cell, run on a fresh sample
workspace and recorded for the trace viewer. course.site.pages renders placeholders with them, and so does
course.site.questions; neither imports the other for them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import io
import shutil
import typing
from functools import partial
from pathlib import Path

import anthropic

from course.site import build_cache
from course.lab import ladder, scenarios
from course.viewer import pages as viewer
from course.running.cli import answer_text, explain_api_error
from course.runtime.guard import Runaway
from course.offline import Faults
from course.site.code import stage_file
from course.viewer.markdown import PlaceholderError
from course.runtime.trace import TracePrinter
from course.runtime.workspace import prepare_workspace

DEFAULT_MODEL = "offline"
DEFAULT_CAP = 50  # model calls; far above what any tutor task needs, low enough to end a runaway fast

# Options every run placeholder takes; any other NAME=VALUE must be a keyword parameter of the
# stage's run(...) or one of its limits (s03's max_turns), and is passed on as a whole number.
RUN_OPTIONS = ("model", "cap", "ledger", "faults", "seed", "scenario", "shorten")


# ---------------------------------------------------------------- one build

_runs: dict[tuple, object] = {}  # the runs of this build, by what they ran
_imported: dict[str, int] = {}  # each stage file's time when its module was imported: `mkdocs serve` shows edits


_remembered = build_cache.Remembered(None)  # runs kept from earlier builds of the same code (the hook's only)


def start_build(*, remember: bool = False) -> None:
    """Forget the runs of the build before: the code may have changed since. With ``remember``, a run
    an earlier build made of byte-for-byte the same code is taken as it is (``course/site/build_cache.py``)."""
    global _remembered
    _runs.clear()
    viewer.forget_site_views()
    _remembered = build_cache.Remembered.for_this_build() if remember else build_cache.Remembered(None)


def once(key: tuple, make):
    """``make()``, made once per build for ``key``."""
    if key not in _runs:
        _runs[key] = _remembered.get(key, make)
    return _runs[key]


def stage_module(stage: str):
    """The stage's agent module (``course.lab.ladder.load_stage``), reloaded when its file changed, so that
    `mkdocs serve` shows edits. (Changes to the course package itself need a restart of `mkdocs serve`.)"""
    path = stage_file(stage)
    module = ladder.load_stage(stage)
    changed = path.stat().st_mtime_ns
    if _imported.setdefault(stage, changed) != changed:
        module = importlib.reload(module)
        _imported[stage] = changed
    return module


# ---------------------------------------------------------------- runs: a page's run is a ladder cell

class Run(typing.NamedTuple):
    """One run made for the pages: what it printed, and what every model call was billed."""

    printed: str
    usages: list  # the usage of every reply, in order (course.capped keeps them)
    result: dict | None  # the run's result (course.running.cli.as_dict); None if the run raised
    view: dict | None = None  # the run as the trace viewer shows it (course/viewer/pages.py)


@contextlib.contextmanager
def command_line_workspace():
    """A fresh sample workspace where the command line makes one: its path is part of what the model
    reads (an error names it), so a trace's token counts are the command line's only with its length."""
    workspace = prepare_workspace()
    try:
        yield workspace
    finally:
        shutil.rmtree(workspace.parent, ignore_errors=True)


def shown_as_is(result: dict, workspace: Path, before) -> bool:
    """A page's run is shown, not judged."""
    return True


def page_scenario(stage: str, task: str | None, options: dict) -> scenarios.Scenario:
    """The run a placeholder asks for, as a ladder scenario: a scenario of the ladder by name
    (``scenario=``, with ``cap=`` if given), or the task with its model, cap, ledger, faults and
    stage options. Either way a build never waits for a person, nor writes the learner's audit log."""
    options = dict(options)
    quiet = {"approver": None, "audit_log": False}
    if "scenario" in options:
        scenario = scenarios.scenario_named(options.pop("scenario"))
        return dataclasses.replace(scenario, cap=options.pop("cap", scenario.cap), options={**quiet, **scenario.options})
    model = options.pop("model", DEFAULT_MODEL)
    cap = options.pop("cap", DEFAULT_CAP)
    ledger_files = options.pop("ledger", None)
    client_options = {}
    if "faults" in options:
        client_options["faults"] = Faults(rate=options.pop("faults"), seed=options.pop("seed", 0), kinds=("overloaded",))
    elif "seed" in options:
        raise PlaceholderError("seed=N goes with faults=RATE")
    check_stage_options(stage, options)
    return scenarios.Scenario(
        name="page", task=task, check=shown_as_is, model=model, cap=cap, options={**quiet, **options},
        client_options=client_options,
        setup=partial(scenarios.ledger, count=ledger_files) if ledger_files else scenarios.leave_as_is)


def check_stage_options(stage: str, options: dict) -> None:
    """Every option left must be a keyword parameter of the stage's run(...), or one of its limits."""
    run = stage_module(stage).run
    parameters = inspect.signature(run).parameters
    limits = parameters["limits"].default if "limits" in parameters else None
    unknown = [name for name in options if name in ("client", "model", "workspace", "trace", "task")
               or (name not in parameters and not (dataclasses.is_dataclass(limits) and hasattr(limits, name)))]
    if unknown:
        raise PlaceholderError(f"unknown option {unknown[0]!r}: not one of {', '.join(RUN_OPTIONS)}, "
                               f"and not a parameter of {stage}'s run()")


def traced_run(stage: str, task: str | None, **options) -> Run:
    """The run, as ``python sNN/agent.py TASK`` would print it, made once per build."""
    made = once((stage, task, tuple(sorted(options.items()))), lambda: run_and_trace(stage, task, options))
    viewer.register(run_view_id(stage, task, options), made.view)
    return made


def run_view_id(stage: str, task: str | None, options: dict) -> str:
    """The name of a page's run in the site's viewer (how a page shows it, shorten=, is not part of it)."""
    ran = {name: value for name, value in options.items() if name != "shorten"}
    return viewer.site_run_id(f"{stage} {task or ran.get('scenario', '')}", (stage, task, sorted(ran.items())))


def run_and_trace(stage: str, task: str | None, options: dict) -> Run:
    stage_module(stage)  # a stage edited under `mkdocs serve` is reloaded before the ladder imports it
    scenario = page_scenario(stage, task, options)
    printed = io.StringIO()
    recording = viewer.Recording(TracePrinter(stream=printed))
    with command_line_workspace() as workspace:
        cell = ladder.run_cell(stage, scenario, workspace, trace=recording)
    error = cell.raised
    if isinstance(error, Runaway):
        printed.write(f"\n■ guard: {error}\n")
    elif error is not None:
        if not (isinstance(error, anthropic.APIError) and "faults" in scenario.client_options):
            raise error
        # What the command line prints when the stage lets the SDK's error escape (course/running/cli.py).
        printed.write(f"error: {explain_api_error(error)}\n")
    else:
        printed.write(answer_text(cell.result))
    return Run(printed.getvalue().replace(str(workspace), "<workspace>"), cell.usages, cell.result,
               viewed(recording, stage, scenario, cell, workspace))


def viewed(recording, stage: str, scenario: scenarios.Scenario, cell: ladder.Cell, workspace: Path) -> dict:
    """What the viewer shows of a run the site made, its scratch workspace written as <workspace>."""
    view = recording.view(stage, scenario.model, scenario.task, usages=cell.usages, result=cell.result, raised=cell.raised)
    return viewer.without(view, str(workspace), "<workspace>")
