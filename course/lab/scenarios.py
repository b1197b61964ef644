"""The ladder's scenarios: a task, an offline model, a workspace, and a check of what came out.

A scenario is the unit the ladder measures every stage on. Its check is computed from the
workspace as it was before the run (the files, the ledger amounts, the words in the files),
never from an answer written down in advance, so a scenario keeps meaning the same thing when
the sample workspace changes.

Adding one: append a ``Scenario`` to ``SCENARIOS`` and its expected row to ``tests/test_ladder.py``.
Each stage comes with the scenarios of the failure it fixes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable

from course.runtime.models import CourseError
from course.offline import FLOOD_TASK, Faults, flood_error_total, write_flood_logs
from course.runtime.workspace import snapshot

Snapshot = dict[str, bytes]
Check = Callable[[dict, Path, Snapshot], bool]

LIST_TASK = "List the files in the workspace"
SUMMARY_TASK = "Read memo.md and summarise it"
REPORT_TASK = "List the files and write their count and names to report.txt"
TOTAL_TASK = "Read sample.txt and compute the total price"
FIND_TASK = "Which files mention the word agent?"
LEDGER_TASK = "Add up the amounts in every file of the ledger folder"
TIDY_TASK = "Tidy up the workspace, then write the list of files and their count to report.txt"

LEDGER_FOLDER = "ledger"

# Well above the 32 turns after which s03's token budget ends the long task, and small enough
# that a runaway costs about a second offline.
DEFAULT_CAP = 100
# The same call twenty-five times over settles that a loop will not end; the default cap would
# only make the ladder slower (each call resends the growing history).
LOOPING_CAP = 25


def leave_as_is(workspace: Path) -> None:
    """The sample workspace as it is."""


@dataclass(frozen=True)
class Scenario:
    """One row of the ladder.

    ``options`` go to the stage's ``run(...)`` only if its signature accepts them (s03's limits
    mean nothing to s01); ``client_options`` go to ``course.make_client`` (``faults``,
    ``context_window``); ``may_write`` lists the files the task is allowed to create or change;
    ``cap`` is the number of model calls after which the run counts as a runaway; ``shows`` says
    in a few words what the row demonstrates (the docs list it); ``watches_outside`` makes the
    folder around the workspace part of what a run may damage (a file written, changed or removed
    beside the workspace), for a task whose model tries to get out.

    ``resumes``: a run that does not end by itself (an API error, a kill) is resumed, as a person
    would, once per entry, each entry being the ``client_options`` of that attempt; only a stage
    that can resume (``run(..., resume=...)``, s02 on) is. ``kill_after``: the run is killed (an
    exception no stage catches, as a SIGKILL would end it) right after the first call to this tool
    has run, before the stage can save its result.
    """

    name: str
    task: str
    check: Check
    model: str = "offline"
    setup: Callable[[Path], None] = leave_as_is
    options: dict = field(default_factory=dict)
    client_options: dict = field(default_factory=dict)
    may_write: tuple[str, ...] = ()
    cap: int = DEFAULT_CAP
    shows: str = ""
    watches_outside: bool = False
    resumes: tuple[dict, ...] = ()
    kill_after: str = ""

    def passes(self, result: dict, workspace: Path, before: Snapshot) -> bool:
        """Completed: the model ended the run itself and the check holds.

        A run cut short did not complete even when the workspace happens to be right: the
        looping model writes a correct report.txt, and then never stops.
        """
        return result.get("stop_reason") == "end_turn" and self.check(result, workspace, before)


# ---------------------------------------------------------------- setups

def ledger_amount(number: int) -> int:
    """The amount of ledger entry ``number``: deterministic, varied, between 100 and 999."""
    return 100 + (number * 7919) % 900


def ledger(workspace: Path, count: int) -> None:
    """Write ``ledger/entry-001.txt`` ... ``entry-{count}.txt``, each with one amount line."""
    folder = workspace / LEDGER_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(1, count + 1):
        (folder / f"entry-{number:03d}.txt").write_text(
            f"Ledger entry {number:03d}\namount: {ledger_amount(number)}\n", encoding="utf-8")


# ---------------------------------------------------------------- checks, from the workspace

def mentions_number(text: str, number: int) -> bool:
    """Whether ``text`` states ``number``, written with or without thousands separators."""
    plain = re.sub(r"(?<=\d),(?=\d{3})", "", text or "")
    return re.search(rf"(?<![\d.]){number}(?!\d)", plain) is not None


def answer_of(result: dict) -> str:
    return result.get("answer") or ""


def lists_every_file(result: dict, workspace: Path, before: Snapshot) -> bool:
    """The answer names every file the workspace held."""
    return all(Path(path).name in answer_of(result) for path in before)


def summarises(path: str) -> Check:
    """The answer names ``path`` and its title (the first line of the file, without markup)."""
    def check(result: dict, workspace: Path, before: Snapshot) -> bool:
        lines = [line.strip("#-* \t") for line in before[path].decode("utf-8").splitlines() if line.strip()]
        title = lines[0] if lines else ""
        answer = answer_of(result).lower()
        return path in answer and title.lower() in answer
    return check


def reports_every_file(result: dict, workspace: Path, before: Snapshot) -> bool:
    """report.txt exists and states the count and every name of the files the workspace held."""
    report = workspace / "report.txt"
    if not report.is_file():
        return False
    text = report.read_text(encoding="utf-8")
    names = [path for path in before if path != "report.txt"]
    return mentions_number(text, len(names)) and all(name in text for name in names)


def sample_total(text: str) -> int | None:
    """Unit price times quantity, as the English order line of sample.txt states them."""
    price = re.search(r"unit price\D{0,12}?(\d[\d,]*)", text, re.I)
    quantity = re.search(r"quantity\D{0,12}?(\d[\d,]*)", text, re.I)
    if not (price and quantity):
        return None
    return int(price.group(1).replace(",", "")) * int(quantity.group(1).replace(",", ""))


def states_total_of(path: str) -> Check:
    """The answer states the total price computed from ``path`` as it was before the run."""
    def check(result: dict, workspace: Path, before: Snapshot) -> bool:
        total = sample_total(before[path].decode("utf-8"))
        return total is not None and mentions_number(answer_of(result), total)
    return check


def names_files_mentioning(word: str) -> Check:
    """The answer names every file that contains ``word`` and no file that does not."""
    def check(result: dict, workspace: Path, before: Snapshot) -> bool:
        answer = answer_of(result)
        mentioned = {path for path, data in before.items() if word.lower() in data.decode("utf-8", "ignore").lower()}
        return all(path in answer for path in mentioned) and not any(path in answer for path in set(before) - mentioned)
    return check


def ledger_total(before: Snapshot) -> int:
    """The sum of the amounts of every ledger file, as the files state them."""
    amounts = (re.search(r"amount:\s*(-?\d+)", data.decode("utf-8")) for path, data in before.items()
               if Path(path).parts[0] == LEDGER_FOLDER)
    return sum(int(match.group(1)) for match in amounts if match)


def states_ledger_total(result: dict, workspace: Path, before: Snapshot) -> bool:
    """The answer states the full total of the ledger: every file counted, none assumed."""
    return mentions_number(answer_of(result), ledger_total(before))


def states_error_total(result: dict, workspace: Path, before: Snapshot) -> bool:
    """The answer states the number of ERROR lines in every log, as counted from the files."""
    return mentions_number(answer_of(result), flood_error_total(before))


def reports_and_leaves_the_rest_intact(result: dict, workspace: Path, before: Snapshot) -> bool:
    """report.txt is right about the files the workspace held, and nothing else in it is new or different.
    (Outside the workspace, the ladder watches: see ``Scenario.watches_outside``.)"""
    after = snapshot(workspace)
    return (reports_every_file(result, workspace, before) and set(after) - set(before) <= {"report.txt"}
            and all(after.get(path) == data for path, data in before.items() if path != "report.txt"))


# ---------------------------------------------------------------- the scenarios

SCENARIOS: list[Scenario] = [
    Scenario("list", LIST_TASK, lists_every_file, shows="one tool call, then the answer"),
    Scenario("summarise", SUMMARY_TASK, summarises("memo.md"), shows="read a file, then summarise it"),
    Scenario("report", REPORT_TASK, reports_every_file, may_write=("report.txt",),
             shows="two dependent tool calls: list, then write (“An AI agent is a while loop inside”)"),
    Scenario("total", TOTAL_TASK, states_total_of("sample.txt"),
             shows="read, calculate, answer "
                   "(“Building an AI agent without a framework”)"),
    Scenario("find", FIND_TASK, names_files_mentioning("agent"), shows="search, then answer"),
    Scenario("looping", REPORT_TASK, reports_every_file, model="offline-looping", may_write=("report.txt",),
             cap=LOOPING_CAP, shows="a model that repeats its last call forever "
                                    "(“An AI agent is a while loop inside”)"),
    Scenario("long-budget", LEDGER_TASK, states_ledger_total, model="offline-long-200",
             setup=partial(ledger, count=198), options={"token_budget": 60_000},
             shows="a legitimate 200-turn task against a 60,000-token budget (“Building an agent loop yourself”)"),
    Scenario("cut", TOTAL_TASK, states_total_of("sample.txt"), model="offline-verbose",
             shows="every reply longer than max_tokens: cut, its tool call lost"),
    Scenario("outage", LIST_TASK, lists_every_file,
             client_options={"faults": Faults(rate=1.0, kinds=("overloaded",))},
             resumes=tuple({"faults": Faults(rate=0.5, seed=seed, kinds=("overloaded",)), "max_retries": 0}
                           for seed in range(1, 4)),
             shows="the API overloaded (529) past the SDK's retries, then half the calls for a while; resumed up to 3 times"),
    Scenario("killed", REPORT_TASK, reports_every_file, may_write=("report.txt",), kill_after="write_file",
             resumes=({},), shows="killed after writing report.txt, before saving that it did; resumed once"),
    Scenario("typo", "Summarise memo.md", summarises("memo.md"), model="offline-typo", cap=LOOPING_CAP,
             shows="a misspelled path, fixed only if the error names the file (“Building an agent loop yourself”)"),
    Scenario("unknown-tool", TOTAL_TASK, states_total_of("sample.txt"), model="offline-unknown-tool", cap=LOOPING_CAP,
             shows="a tool that does not exist, left only when the error lists the real ones "
                   "(“Building an AI agent without a framework”)"),
    Scenario("bad-args", SUMMARY_TASK, summarises("memo.md"), model="offline-bad-args", cap=LOOPING_CAP,
             shows="read_file without its path, fixed only if the error says what it expects"),
    Scenario("text-calls", REPORT_TASK, reports_every_file, model="offline-text-calls", may_write=("report.txt",),
             shows="tool calls written as JSON text, never as tool_use (“An AI agent is a while loop inside”)"),
    # 24 logs of about 950 tokens each: read whole and kept, they pass a 20,000-token window around
    # the 20th read; masked, the prompt stays near 5,000 tokens.
    Scenario("flood", FLOOD_TASK, states_error_total, model="offline-flood-24", setup=partial(write_flood_logs, count=24),
             client_options={"context_window": 20_000},
             shows="a long task whose big tool results outgrow a 20,000-token context window "
                   "(“Building an agent loop yourself”)"),
    # Nobody is at a terminal during a ladder: s06's "ask" is a deny, and no decision is audited.
    Scenario("reckless", TIDY_TASK, reports_and_leaves_the_rest_intact, model="offline-reckless",
             may_write=("report.txt",), options={"approver": None, "audit_log": False}, watches_outside=True,
             shows="deletes, overwrites, writes outside, rm -rf and a chained rm on the way to a report "
                   "(“Building an agent loop yourself”)"),
    # Measured on a small local model (Gemma 3 270M base through llama.cpp): course/offline/small_local.py.
    Scenario("echo", LIST_TASK, lists_every_file, model="offline-echo",
             shows="the prompt copied back until cut at max_tokens (measured on a small local model)"),
    Scenario("rambling", REPORT_TASK, reports_every_file, model="offline-ramble-text", may_write=("report.txt",),
             shows="one complete call written as text, then more text until cut at max_tokens (measured)"),
    Scenario("stubborn", "Summarise memo.md", summarises("memo.md"), model="offline-stubborn", cap=LOOPING_CAP,
             shows="a misspelled path sent again whatever the error says, hints and all (measured)"),
    Scenario("borrowing", TOTAL_TASK, states_total_of("sample.txt"), model="offline-borrowing",
             shows="the example file of a tool description read instead of the task's, its text repeated (measured)"),
]


def scenario_named(name: str) -> Scenario:
    for scenario in SCENARIOS:
        if scenario.name == name:
            return scenario
    raise CourseError(f"no scenario is called {name!r}; known: {', '.join(s.name for s in SCENARIOS)}")
