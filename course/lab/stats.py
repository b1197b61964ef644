"""Statistics over the runs log: what ``python -m course stats`` prints.

"Building an agent loop yourself" names the three numbers without which a team cannot improve an agent: how many turns a
task took, which tool failed how often, and how often runs were cut off. Every run of s03 and
later appends one line to the runs log (``course/runtime/runlog.py``); this module adds them up, with a
fourth number a team watches as closely: what a run costs, in dollars (``course/runtime/prices.py``).

An offline run costs nothing: its dollars are what the same tokens would cost on the model the
offline ids are priced as (``models.DEFAULT_CLAUDE_MODEL``: see ``course/runtime/prices.py``), and the table says so, apart from the
money runs of real models spent.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from course.runtime import prices, runlog
from course.runtime.models import DEFAULT_CLAUDE_MODEL, CourseError, is_offline
from course.runtime.schema import first_problem

NATURAL_END = "end_turn"


# What stats reads in each record: a line of JSON in another shape (a number, a list, a count that is
# text, the log edited by hand) is one line of error naming the file, not a crash in the middle of the sums.
COUNT = {"type": ["integer", "null"], "minimum": 0, "maximum": 10**9}  # 10**400 overflowed the mean
COUNTS = {"type": "object", "additionalProperties": COUNT}
RECORD_SHAPE = {"type": "object", "properties": {
    "run": {"type": ["string", "null"]}, "stage": {"type": "string"}, "model": {"type": "string"},
    "stop_reason": {"type": ["string", "null"]}, "turns": COUNT,
    "tool_calls": COUNTS, "tool_errors": COUNTS, "usage": COUNTS, "cost_usd": {"type": ["number", "null"]}}}


def read_log(path: Path | None = None) -> list[dict]:
    """The records of the runs log, or a one-line error naming the file if a line is not JSON, or not
    a run's record."""
    where = path or runlog.log_path()
    try:
        records = runlog.read(path)
    except (ValueError, RecursionError) as error:
        raise CourseError(f"{where} is not a runs log (a line is not JSON: {error})") from None
    for number, record in enumerate(records, 1):
        problem = first_problem(RECORD_SHAPE, record)
        if problem:
            raise CourseError(f"{where} is not a runs log: record {number} is no run's record ({problem})")
    return records


def summarise(records: list[dict]) -> dict:
    """Runs, the share of each stop reason, turns (mean, max), and tool calls and errors by tool."""
    runs = len(records)
    reasons = Counter(record.get("stop_reason") for record in records)
    turns = [record.get("turns") or 0 for record in records]
    calls, errors = Counter(), Counter()
    for record in records:
        calls.update(record.get("tool_calls") or {})
        errors.update(record.get("tool_errors") or {})
    return {
        "runs": runs,
        "stop_reasons": {reason: count / runs for reason, count in reasons.most_common()},
        "cut_off": sum(count for reason, count in reasons.items() if reason != NATURAL_END) / runs if runs else 0.0,
        "turns": {"mean": sum(turns) / runs if runs else 0.0, "max": max(turns, default=0)},
        "tools": {tool: {"calls": calls[tool], "errors": errors[tool]} for tool in sorted(calls | errors)},
        "cost": cost_per_run(records),
    }


def run_cost(record: dict) -> float | None:
    """A run's dollars: as logged, or priced from its model and usage (a log written before costs were)."""
    if record.get("cost_usd") is not None:
        return record["cost_usd"]
    if record.get("model") and record.get("usage"):
        return prices.cost(record["model"], record["usage"])
    return None


def is_offline_run(record: dict) -> bool:
    return isinstance(record.get("model"), str) and is_offline(record["model"])


def cost_per_run(records: list[dict]) -> dict:
    """Mean, max and total dollars over the runs whose model has a price; how many had none. Of the
    total, ``spent_usd`` is what runs of real models spent, and ``offline_usd`` what the offline runs
    (which spent nothing) would cost on ``offline_priced_as``."""
    priced = [(record, cost) for record in records if (cost := run_cost(record)) is not None]
    costs = [cost for _, cost in priced]
    offline = [cost for record, cost in priced if is_offline_run(record)]
    return {"priced_runs": len(costs), "unpriced_runs": len(records) - len(costs),
            "mean_usd": sum(costs) / len(costs) if costs else 0.0,
            "max_usd": max(costs, default=0.0), "total_usd": sum(costs),
            "spent_usd": sum(costs) - sum(offline), "offline_runs": len(offline), "offline_usd": sum(offline),
            "offline_priced_as": DEFAULT_CLAUDE_MODEL}


def table(summary: dict, path: Path) -> str:
    """The summary as a few aligned lines for a terminal."""
    if not summary["runs"]:
        return f"no runs logged in {path} yet: runs of s03 and later stages are logged there"
    lines = [f"runs log: {path}",
             f"runs: {summary['runs']}",
             f"turns: mean {summary['turns']['mean']:.1f}, max {summary['turns']['max']}",
             f"cut off (any stop but {NATURAL_END}): {summary['cut_off']:.0%}",
             *cost_lines(summary["cost"]),
             "", f"{'stop reason':<16}{'share':>7}"]
    lines += [f"{str(reason):<16}{share:>7.0%}" for reason, share in summary["stop_reasons"].items()]
    lines += ["", f"{'tool':<16}{'calls':>7}{'errors':>8}{'failed':>8}"]
    for tool, counts in summary["tools"].items():
        failed = counts["errors"] / counts["calls"] if counts["calls"] else 0.0
        lines.append(f"{tool:<16}{counts['calls']:>7}{counts['errors']:>8}{failed:>8.0%}")
    return "\n".join(lines)


def cost_lines(cost: dict) -> list[str]:
    """The cost line, and for offline runs what their dollars are: a price, not money spent."""
    if not cost["priced_runs"]:
        return ["cost per run: no run of a model with a known price"]
    unpriced = f"; {cost['unpriced_runs']} run(s) of models with no price left out" if cost["unpriced_runs"] else ""
    lines = [f"cost per run: mean ${cost['mean_usd']:.4f}, max ${cost['max_usd']:.4f}; "
             f"${cost['total_usd']:.4f} over {cost['priced_runs']} run(s){unpriced}"]
    offline, model = cost["offline_runs"], cost["offline_priced_as"]
    if offline == cost["priced_runs"]:
        lines.append(f"  offline runs, nothing spent: this is what they would cost on {model}")
    elif offline:
        lines.append(f"  ${cost['spent_usd']:.4f} spent by {cost['priced_runs'] - offline} run(s) of real models; "
                     f"the {offline} offline run(s) spent nothing:")
        lines.append(f"  their ${cost['offline_usd']:.4f} is what they would cost on {model}")
    return lines


def whole_runs(records: list[dict]) -> list[dict]:
    """One record per run. A run that stopped and was resumed is logged again when it ends, with turns,
    calls and usage that cover the whole run: its last record stands for it. A record with no run id
    (a log written before the id was) counts alone."""
    last = {}
    for number, record in enumerate(records):
        last[record.get("run") or number] = record
    return list(last.values())


def report(path: Path | None = None, *, as_json: bool = False) -> str:
    """What the ``stats`` command prints for the runs log at ``path`` (default: the runs log's place)."""
    path = Path(path) if path else runlog.log_path()
    summary = summarise(whole_runs(read_log(path)))
    return json.dumps(summary, ensure_ascii=False) if as_json else table(summary, path)
