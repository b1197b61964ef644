"""The ladder: every scenario against every stage, offline; the reason for each chapter, measured.

Each cell is the observed outcome of one stage on one scenario, in a fresh workspace, with a
capped client (a loop that never ends is stopped from outside and counted as a runaway):

* ``completed``: the model ended the run and the scenario's check of the answer and workspace held;
* ``stopped``: the run ended (any stop reason) without passing the check;
* ``runaway``: still going at the scenario's cap of model calls (``course.Runaway``);
* ``crashed``: another exception escaped the stage;
* ``damaged``: the workspace lost or changed a file the scenario does not allow to change, or, for
  a scenario that watches outside, a file beside the workspace was written, changed or removed.

A scenario can resume a run, as a person would: one that stops on an API error or is killed (the
``killed`` row) is resumed from its transcript, a few times at most, on stages that can (s02 on).

The rule the course keeps: every stage turns at least one cell of the stage before it into a
better outcome, and completes every scenario the stage before it completes.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import sys
import tempfile
import textwrap
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from course.runtime import prices
from course.running.cli import as_dict
from course.running.client import make_client
from course.runtime.guard import Runaway, capped
from course.helpers.limits import run_options
from course.runtime.models import CourseError
from course.lab.scenarios import SCENARIOS, Scenario, Snapshot
from course.runtime.workspace import SAMPLE, prepare_workspace, snapshot

REPOSITORY = Path(__file__).resolve().parents[2]
STAGE_FOLDER = re.compile(r"s\d\d")

# Worst to best. Damage is the worst: it outlives the run. A runaway comes next because its bill
# has no bound, then a crash, which at least ends. A stop that fails the check beats all three:
# the run ended under control and said why.
OUTCOMES = ("damaged", "runaway", "crashed", "stopped", "completed")
ROW_KEYS = ("scenario", "stage", "outcome", "stop_reason", "turns", "input_tokens")


# ---------------------------------------------------------------- the stages present

def stage_names() -> list[str]:
    """The stages present: every ``sNN/agent.py`` at the repository's root, in order."""
    return sorted(path.parent.name for path in REPOSITORY.glob("s??/agent.py")
                  if STAGE_FOLDER.fullmatch(path.parent.name))


def load_stage(name: str):
    """The agent module of stage ``name`` (``sNN.agent``), imported from the repository's root."""
    if name not in stage_names():
        raise CourseError(f"no stage {name!r}; present: {', '.join(stage_names())}")
    if str(REPOSITORY) not in sys.path:
        sys.path.insert(0, str(REPOSITORY))
    return importlib.import_module(f"{name}.agent")


def accepted_options(run, options: dict) -> dict:
    """The options ``run`` takes: s03's limits mean nothing to s01's signature (course.helpers.limits)."""
    return run_options(run, options)


# ---------------------------------------------------------------- one cell

@dataclass
class Cell:
    scenario: str
    stage: str
    outcome: str
    stop_reason: str | None
    turns: int
    input_tokens: int
    answer: str = ""
    error: str = ""
    workspace: Path | None = None
    # What the docs show of a run beside its row: the result (course.running.cli.as_dict; None if the stage
    # raised), the exception that escaped it, and the usage of every model call, a runaway's included.
    result: dict | None = None
    raised: BaseException | None = None
    usages: list = field(default_factory=list)

    def row(self) -> dict:
        return {key: getattr(self, key) for key in ROW_KEYS}


def outcome_of(scenario: Scenario, result: dict | None, error: Exception | None,
               workspace: Path, before: Snapshot, outside_before: Snapshot | None = None) -> str:
    """The one place a run becomes an outcome; damage trumps everything, since it outlives the run.
    ``outside_before`` is what lay around the workspace before the run, for a scenario that watches it."""
    if damaged_paths(before, snapshot(workspace), scenario.may_write):
        return "damaged"
    if outside_before is not None and outside_of(workspace) != outside_before:
        return "damaged"
    if isinstance(error, Runaway):
        return "runaway"
    if error is not None or result is None:
        return "crashed"
    return "completed" if scenario.passes(result, workspace, before) else "stopped"


def damaged_paths(before: Snapshot, after: Snapshot, may_write: tuple[str, ...]) -> list[str]:
    """Files that were there before and are now gone or different, other than those the task may write."""
    return [path for path, data in before.items() if path not in may_write and after.get(path) != data]


def outside_of(workspace: Path) -> Snapshot:
    """Every file around the workspace (in its parent folder, not under the workspace), with its bytes.
    A link is recorded by its target, never followed."""
    found = {}
    for folder, folders, files in os.walk(workspace.parent):
        if Path(folder) == workspace.parent and workspace.name in folders:
            folders.remove(workspace.name)
        for name in files + [name for name in folders if os.path.islink(os.path.join(folder, name))]:
            path = Path(folder, name)
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            found[str(path.relative_to(workspace.parent))] = data
    return found


class Killed(BaseException):
    """The ladder's SIGKILL: no stage catches it (they catch Exception at most), so the run ends where it is."""


def killer(tool: str, trace):
    """A trace that kills the run once, right after the first results of ``tool`` are in the history:
    the tool has run, and the stage has not yet saved that it did."""
    names, fired = {}, []

    def watch(kind, payload):
        if trace:
            trace(kind, payload)
        if kind == "assistant":
            names.update({block["id"]: block["name"] for block in payload["content"] if block["type"] == "tool_use"})
        if kind == "tool_results" and not fired and any(
                names.get(block.get("tool_use_id")) == tool for block in payload["content"]):
            fired.append(True)
            if trace:
                trace("note", f"killed here, as by SIGKILL: {tool} ran, and its result is not saved yet")
            raise Killed(f"killed after {tool} ran")
    return watch


def run_attempts(agent, scenario: Scenario, workspace: Path, options: dict, trace) -> tuple:
    """The run, then as many resumptions as the scenario allows while it stops on an API error or is
    killed (a stage that cannot resume gets one attempt). Returns (result, error, usages)."""
    resumable = "resume" in accepted_options(agent.run, {"resume": None})
    attempts = [scenario.client_options] + (list(scenario.resumes) if resumable else [])
    result = error = None
    usages = []
    for number, client_options in enumerate(attempts):
        # The capped client keeps every reply's usage: a runaway or a crash returns no result to read
        # the bill from, yet its bill is the point.
        client = capped(make_client(scenario.model, **client_options), scenario.cap - len(usages))
        again = {"resume": options["transcript"]} if number else {}
        watch = killer(scenario.kill_after, trace) if scenario.kill_after and not number else trace
        result = error = None
        try:
            result = as_dict(agent.run(None if again else scenario.task, client=client, model=scenario.model,
                                       workspace=workspace, trace=watch, **accepted_options(agent.run, dict(options, **again))))
        except (Exception, Killed) as escaped:  # a crash is an outcome to record, not a reason to stop the ladder
            error = escaped
        usages += client.usages
        if not (isinstance(error, Killed) or (result and result.get("stop_reason") == "api_error")):
            break  # ended by itself (or crashed): a person would not resume it
    return result, error, usages


def run_cell(stage: str, scenario: Scenario, workspace: Path, *, trace=None, log_runs: bool | Path = False) -> Cell:
    """Set the scenario up in ``workspace``, run ``stage`` on it (resuming it as the scenario says), and judge the outcome.

    ``log_runs``: False, the run is logged nowhere; True, in the learner's runs log and audit log (as
    ``python -m course run`` does); a path, in that runs log only (the docs' ``course stats``)."""
    agent = load_stage(stage)
    scenario.setup(workspace)
    before = snapshot(workspace)
    outside_before = outside_of(workspace) if scenario.watches_outside else None
    # A run is saved only when the scenario resumes it, and then to a folder of its own, never into
    # runs/ nor beside the workspace (watched). A measurement is no decision of the learner's to audit.
    with (tempfile.TemporaryDirectory(prefix="agent-course-transcript-") if scenario.resumes else nullcontext()) as saved:
        logs = {"runs_log": None} if log_runs is True else {"runs_log": log_runs, "audit_log": False}
        options = dict(logs, **scenario.options,
                       transcript=Path(saved) / f"{stage}-{scenario.name}.jsonl" if saved else False)
        result, error, usages = run_attempts(agent, scenario, workspace, options, trace)
    return Cell(
        scenario=scenario.name, stage=stage, outcome=outcome_of(scenario, result, error, workspace, before, outside_before),
        stop_reason=result.get("stop_reason") if result else None,
        turns=result["turns"] if result else len(usages),
        input_tokens=sum(map(prices.prompt_tokens, usages)),  # cached or not: every token sent
        answer=(result or {}).get("answer") or "", error=f"{type(error).__name__}: {error}" if error else "",
        workspace=workspace, result=result, raised=error, usages=usages,
    )


@contextmanager
def scratch_workspace():
    """A fresh copy of the sample workspace, removed afterwards (the ladder makes dozens)."""
    with tempfile.TemporaryDirectory(prefix="agent-course-ladder-") as folder:
        yield prepare_workspace(shutil.copytree(SAMPLE, Path(folder) / "workspace"))


# ---------------------------------------------------------------- the whole ladder

def run_ladder(stages: list[str] | None = None, scenarios: list[Scenario] = SCENARIOS) -> list[dict]:
    """Every scenario against every stage: a list of rows with ROW_KEYS."""
    stages = stages or stage_names()
    rows = []
    for scenario in scenarios:
        for stage in stages:
            with scratch_workspace() as workspace:
                rows.append(run_cell(stage, scenario, workspace).row())
    return rows


def cell_text(row: dict) -> str:
    """One cell of the table: the outcome, with the stop reason and the number of turns where they say something."""
    outcome, turns = row["outcome"], row["turns"]
    plural = "" if turns == 1 else "s"
    if outcome == "completed":
        return f"completed · {turns} turn{plural}"
    if outcome == "stopped":
        return f"stopped: {row['stop_reason']} · {turns} turn{plural}"
    if outcome == "runaway":
        return f"runaway · {turns} calls"
    return outcome


def grid(rows: list[dict] | None, show) -> tuple[list[str], list[str], dict]:
    """The ladder's stages (across), scenarios (down, in their order) and each cell as ``show`` words it."""
    rows = run_ladder() if rows is None else rows
    stages = sorted({row["stage"] for row in rows})
    scenarios = list(dict.fromkeys(row["scenario"] for row in rows))
    return stages, scenarios, {(row["scenario"], row["stage"]): show(row) for row in rows}


# The site colours each cell by its outcome and puts the outcome's symbol before its word
# (docs/stylesheets/course.css), so that the table does not rely on colour alone.
def marked(outcome: str, text: str) -> str:
    return f'<span class="ladder-outcome ladder-outcome--{outcome}">{text}</span>'


def outcome_legend() -> str:
    """The legend of the site's table: each outcome's word (with its symbol and colour), from best to worst."""
    return "Outcomes: " + " ".join(marked(outcome, outcome) for outcome in reversed(OUTCOMES))


def markdown(rows: list[dict] | None = None, *, colour: bool = False) -> str:
    """The ladder as a markdown table: scenarios down, stages across (the docs include it at build time).
    ``colour``: each cell in HTML that carries its outcome's class (see ``outcome_legend``)."""
    stages, scenarios, cells = grid(rows, (lambda row: marked(row["outcome"], cell_text(row))) if colour else cell_text)
    lines = ["| scenario | " + " | ".join(stages) + " |", "|---|" + "---|" * len(stages)]
    for scenario in scenarios:
        lines.append(f"| `{scenario}` | " + " | ".join(cells.get((scenario, stage), "") for stage in stages) + " |")
    return "\n".join(lines)


# The terminal's table fits 100 columns: each cell is a word and a count, spelled out in the legend.
STOP_WORDS = {"end_turn": "end", "tool_use": "tool", "api_error": "api", "no_progress": "repeat",
              "max_tokens": "cut", "token_budget": "budget", "max_turns": "turns", "refusal": "refused"}
STOP_GLOSSES = {"end_turn": " (the model thought it was done)", "tool_use": " (a call left unanswered)"}
CELL_WIDTH = 10


def short_cell(row: dict) -> str:
    """One cell of the terminal's table: ``done 3``, ``repeat 4`` (stopped, with its reason), ``RUNAWAY``..."""
    outcome = row["outcome"]
    if outcome == "completed":
        return f"done {row['turns']}"
    if outcome == "stopped":
        reason = row["stop_reason"] or "stopped"
        return f"{STOP_WORDS.get(reason, reason[:CELL_WIDTH - 4])} {row['turns']}"
    return outcome.upper()


def legend(rows: list[dict]) -> list[str]:
    """What the words of the terminal's table mean, the stop reasons it abbreviates included."""
    reasons = sorted({row["stop_reason"] for row in rows if row["outcome"] == "stopped" and row["stop_reason"]},
                     key=lambda reason: list(STOP_WORDS).index(reason) if reason in STOP_WORDS else len(STOP_WORDS))
    spelled = ", ".join(f"{STOP_WORDS.get(reason, reason[:CELL_WIDTH - 4])} = {reason}{STOP_GLOSSES.get(reason, '')}"
                        for reason in reasons)
    lines = [
        "done N    completed: the run ended on its own and passed the scenario's check, in N turns",
        "WORD N    stopped under control after N turns, the check not passed; WORD is the stop reason:",
    ]
    lines += ["          " + line for line in textwrap.wrap(spelled, 100 - 10)] if spelled else []
    lines += [
        "RUNAWAY   still going when the guard cut it, at the scenario's cap of model calls",
        "CRASHED   an exception escaped the stage",
        "DAMAGED   a file the task had no business touching was changed or deleted (the worst outcome)",
    ]
    return lines


def text_table(rows: list[dict] | None = None) -> str:
    """The ladder for a terminal: scenarios down, stages across, at most 100 columns, and a legend."""
    stages, scenarios, cells = grid(rows, short_cell)
    first = max(len("scenario"), *(len(name) for name in scenarios))
    lines = [f"{'scenario':<{first}}  " + " ".join(f"{stage:<{CELL_WIDTH}}" for stage in stages)]
    for scenario in scenarios:
        lines.append(f"{scenario:<{first}}  " + " ".join(f"{cells.get((scenario, stage), ''):<{CELL_WIDTH}}"
                                                          for stage in stages))
    return "\n".join(line.rstrip() for line in lines) + "\n\n" + "\n".join(legend(rows))


def rank(outcome: str) -> int:
    return OUTCOMES.index(outcome)


def rule_violations(rows: list[dict]) -> list[str]:
    """Where the ladder's rule is broken: a stage that breaks a completed scenario, or fixes nothing."""
    outcomes = {(row["stage"], row["scenario"]): row["outcome"] for row in rows}
    stages = sorted({row["stage"] for row in rows})
    scenarios = list(dict.fromkeys(row["scenario"] for row in rows))
    violations = []
    for earlier, later in zip(stages, stages[1:]):
        pairs = [(outcomes[earlier, name], outcomes[later, name], name) for name in scenarios]
        violations += [f"{later} no longer completes {name}, which {earlier} completes ({new})"
                       for old, new, name in pairs if old == "completed" and new != "completed"]
        if not any(rank(new) > rank(old) for old, new, _ in pairs):
            violations.append(f"{later} improves no scenario that {earlier} fails")
    return violations
