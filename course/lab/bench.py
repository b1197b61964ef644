"""The token benchmark: what a long run costs, in tokens and in dollars, with and without pruning and caching.

``python -m course bench tokens [--turns N] [--json] [--plot PATH]`` runs one long task,
``offline-flood`` on N-2 log files (list the folder, read one log a turn, answer: N turns),
offline, each run in a fresh workspace and with a fresh client (so a fresh prompt cache). The
offline model's context window and the stages' turn limit and token budget are raised out of the
way, so that every run can finish and the bill is the only thing that differs. Seven runs:

* ``s03`` and ``s04``: no pruning, no cache breakpoint: every prompt token is billed at the input price;
* ``s04+cache``: s04 unchanged, with one cache breakpoint added on the latest block of each request
  on its way out (what a harness that caches but never prunes pays);
* ``s04+clearing`` and ``s04+compaction``: s04 cached as above, with the API's own context management
  on its requests (``clear_tool_uses_20250919`` with s05's numbers, ``compact_20260112`` at its lowest
  trigger; the offline model applies them as documented, ``offline/context_management.py``), a
  compaction's summary step billed from ``usage.iterations``;
* ``s05-every-turn``: s05 with its batch constants set to 0 (``CLEAR_TRIGGER``, ``CLEAR_AT_LEAST``),
  so it masks a little on every turn, as a loop that prunes without regard for the cache would; cached;
* ``s05``: the cache-aware s05 as it is: two breakpoints, masking in batches; cached.

Every model call's ``usage`` is recorded through ``course.capped(...).usages``, s05's summary
calls included, and priced with ``course/runtime/prices.py`` (the offline ids cost what the default
Claude model costs). Per run: completed (the model ended the run and its answer states the true
number of ERROR lines) or not, input tokens (every token of every prompt, whether read from the
cache, written to it or neither: what the run would bill without caching), cache writes, cache
reads, dollars, and the peak prompt. The course's targets at 100 turns: the cache-aware
s05 costs at most 45% of ``s04+cache`` and completes; its input tokens are at most 16% of s04's
(Anthropic reports an 84% cut for clearing old tool results on a 100-turn evaluation); its peak
prompt stays under 20,000 tokens.

``run_token_bench(turns) -> dict`` measures, ``report(result) -> str`` prints the table and what
it means, and ``plot_svg(result) -> str`` draws the dollars spent after each call, one line per run
(the docs call both at build time).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import shutil
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

from course.runtime import prices
from course.running.cli import as_dict
from course.running.client import make_client
from course.runtime.guard import capped
from course.helpers.limits import run_options
from course.runtime.models import CourseError
from course.offline import CONTEXT_MANAGEMENT_BETAS, FLOOD_TASK, flood_error_total, write_flood_logs
from course.lab.svgplot import line_chart
from course.viewer.markdown import markdown_table
from course.runtime.workspace import SAMPLE, snapshot
from course.lab.ladder import load_stage

REPOSITORY = Path(__file__).resolve().parents[2]
DEFAULT_TURNS = 100
TURNS_AROUND_THE_READS = 2           # listing the folder first, answering last
DEFAULT_PLOT = Path("runs") / "bench-tokens.svg"  # beside the runs log, never inside the published docs
TARGET_DOLLARS = 0.45                # cache-aware s05 / s04 with caching, in dollars, at 100 turns
TARGET_TOKENS = 0.16                 # s05 / s04 input tokens, without caching
TARGET_PEAK = 20_000                 # s05's largest prompt, in tokens
# Out of the way: a log read costs about 950 tokens and stays in an unpruned history, so 100 turns
# need about 100,000 tokens of window; the stages' own limits (40 turns, 300,000 tokens) would
# stop the unpruned stages long before the bill shows its shape.
WINDOW_PER_TURN = 2_000
LIMITS = {"max_turns": 10_000, "token_budget": 10**12}
CACHE_BREAKPOINT = {"type": "ephemeral"}


@dataclass(frozen=True)
class Variant:
    """One run of the benchmark: a stage, and what is changed around it (never its code)."""

    name: str
    stage: str
    label: str
    breakpoint_on_latest: bool = False                   # added to each request on its way out
    server_side: dict | None = None                      # a context_management edit the API applies
    constants: dict = field(default_factory=dict)        # the stage's constants, set for this run only


VARIANTS = (
    Variant("s03", "s03", "s03: no pruning, no cache"),
    Variant("s04", "s04", "s04: no pruning, no cache"),
    Variant("s04+cache", "s04", "s04 with a cache breakpoint on the latest block, no pruning", breakpoint_on_latest=True),
    # The API's own pruning beside s05's, on s04 (which prunes nothing itself), cached the same way. The
    # clearing uses s05's own numbers (trigger 8,000, keep 2, clear at least 3,000), so only who prunes
    # differs; compaction the documented lowest trigger, 50,000 (its default is 150,000).
    Variant("s04+clearing", "s04", "s04 with the API's clear_tool_uses_20250919, cached", breakpoint_on_latest=True,
            server_side={"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 8_000},
                         "keep": {"type": "tool_uses", "value": 2},
                         "clear_at_least": {"type": "input_tokens", "value": 3_000}}),
    Variant("s04+compaction", "s04", "s04 with the API's compact_20260112, cached", breakpoint_on_latest=True,
            server_side={"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50_000}}),
    Variant("s05-every-turn", "s05", "s05 masking a little every turn, cached",
            constants={"CLEAR_TRIGGER": 0, "CLEAR_AT_LEAST": 0}),
    Variant("s05", "s05", "s05 cache-aware: masking in batches, cached"),
)


def exponent(cumulative: list[int]) -> float | None:
    """b in cumulative ≈ a · call^b: the least-squares slope of ln(cumulative) on ln(call), calls 1..n."""
    points = [(math.log(call), math.log(total)) for call, total in enumerate(cumulative, start=1) if total > 0]
    if len(points) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread


def states_number(answer: str, number: int) -> bool:
    plain = re.sub(r"(?<=\d),(?=\d{3})", "", answer or "")
    return re.search(rf"(?<![\d.]){number}(?!\d)", plain) is not None


def mark_latest_block(messages: list) -> list:
    """The messages with a cache breakpoint on the last block of the last one (a copy)."""
    last = messages[-1]
    blocks = [{"type": "text", "text": last["content"]}] if isinstance(last["content"], str) else list(last["content"])
    blocks[-1] = dict(blocks[-1], cache_control=CACHE_BREAKPOINT)
    return list(messages[:-1]) + [dict(last, content=blocks)]


class _LatestBlockCached:
    """A client's ``messages`` that adds a breakpoint on the latest block to every request, and the
    API's own context management (``edit``, with its beta header) when the run asks for it."""

    def __init__(self, messages, edit: dict | None = None):
        self._messages, self._edit = messages, edit

    def create(self, **request):
        request = dict(request, messages=mark_latest_block(request["messages"]))
        if self._edit:
            request.update(extra_body={"context_management": {"edits": [self._edit]}},
                           extra_headers={"anthropic-beta": CONTEXT_MANAGEMENT_BETAS[self._edit["type"]]})
        return self._messages.create(**request)

    def __getattr__(self, name):
        return getattr(self._messages, name)


class LatestBlockCached:
    def __init__(self, client, edit: dict | None = None):
        self._client = client
        self.messages = _LatestBlockCached(client.messages, edit)

    def __getattr__(self, name):
        return getattr(self._client, name)


@contextlib.contextmanager
def constants_set(module, constants: dict):
    """Set a stage's module constants for one run, and put them back whatever happens."""
    saved = {name: getattr(module, name) for name in constants}
    for name, value in constants.items():
        setattr(module, name, value)
    try:
        yield module
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


def usage_dict(usage) -> dict:
    read = usage.get if isinstance(usage, dict) else lambda name: getattr(usage, name, None)
    return {name: read(name) or 0 for name in
            ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")}


def running_sum(values: list) -> list:
    total, sums = 0, []
    for value in values:
        total += value
        sums.append(total)
    return sums


def bench_variant(variant: Variant, turns: int) -> dict:
    """One run of the flood task of ``turns`` turns, in a fresh workspace; every call's usage recorded and priced."""
    files = turns - TURNS_AROUND_THE_READS
    model = f"offline-flood-{files}"
    agent = load_stage(variant.stage)
    with tempfile.TemporaryDirectory(prefix="agent-course-bench-") as folder:
        workspace = Path(shutil.copytree(SAMPLE, Path(folder) / "workspace"))
        write_flood_logs(workspace, files)
        truth = flood_error_total(snapshot(workspace))
        client = make_client(model, context_window=WINDOW_PER_TURN * turns + 50_000)
        client = capped(LatestBlockCached(client, variant.server_side) if variant.breakpoint_on_latest else client,
                        3 * turns + 50)
        options = run_options(agent.run, dict(LIMITS, runs_log=False, transcript=False))
        started = time.perf_counter()
        with constants_set(agent, variant.constants):
            result = as_dict(agent.run(FLOOD_TASK, client=client, model=model, workspace=workspace, **options))
        wall = time.perf_counter() - started
    # A compaction's summary is billed as a step of its own, listed in usage.iterations beside the answer.
    usages = [usage_dict(part) for usage in client.usages for part in (getattr(usage, "iterations", None) or [usage])]
    per_call = [prices.prompt_tokens(usage) for usage in usages]
    dollars = [prices.cost(model, usage) for usage in usages]
    b = exponent(running_sum(per_call))
    return {
        "stage": variant.name,
        "label": variant.label,
        "completed": result.get("stop_reason") == "end_turn" and states_number(result.get("answer", ""), truth),
        "stop_reason": result.get("stop_reason"),
        "turns": result.get("turns"),
        "calls": len(usages),
        "input_tokens": sum(per_call),
        "uncached_input_tokens": sum(usage["input_tokens"] for usage in usages),
        "cache_write_tokens": sum(usage["cache_creation_input_tokens"] for usage in usages),
        "cache_read_tokens": sum(usage["cache_read_input_tokens"] for usage in usages),
        "output_tokens": sum(usage["output_tokens"] for usage in usages),
        "dollars": sum(dollars),
        "peak_prompt_tokens": max(per_call, default=0),
        "exponent": None if b is None else round(b, 3),
        "error_lines": truth,
        "wall_s": round(wall, 2),
        "usages": usages,
        "input_per_call": per_call,
        "cumulative_input": running_sum(per_call),
        "dollars_per_call": dollars,
        "cumulative_dollars": running_sum(dollars),
    }


def ratio(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


def run_token_bench(turns: int = DEFAULT_TURNS, stages=None) -> dict:
    """The flood task of ``turns`` turns, once per run named in ``stages`` (default: all five, in
    order); per run, its bill in tokens and dollars."""
    if isinstance(turns, bool) or not isinstance(turns, int) or turns < TURNS_AROUND_THE_READS + 1:
        raise CourseError(f"--turns must be a whole number of at least {TURNS_AROUND_THE_READS + 1} "
                          f"(list the folder, read one log, answer), got {turns!r}")
    names = [variant.name for variant in VARIANTS]
    unknown = [name for name in stages or () if name not in names]
    if unknown:
        raise CourseError(f"no benchmark run named {', '.join(unknown)}; the runs are {', '.join(names)}")
    started = time.perf_counter()
    rows = {variant.name: bench_variant(variant, turns) for variant in VARIANTS if stages is None or variant.name in stages}
    s04, cached, s05 = rows.get("s04"), rows.get("s04+cache"), rows.get("s05")
    return {
        "benchmark": "tokens",
        "task": FLOOD_TASK,
        "model": f"offline-flood-{turns - TURNS_AROUND_THE_READS}",
        "priced_as": prices.DEFAULT_CLAUDE_MODEL,
        "price": vars(prices.price_of("offline")),
        "prices_date": prices.PRICES_DATE,
        "turns": turns,
        "log_files": turns - TURNS_AROUND_THE_READS,
        "context_window": WINDOW_PER_TURN * turns + 50_000,
        "stages": rows,
        "ratio_s05_s04": ratio(s05["input_tokens"], s04["input_tokens"]) if s04 and s05 else None,
        "dollar_ratio_s05_s04_cached": ratio(s05["dollars"], cached["dollars"]) if cached and s05 else None,
        "targets": {"dollars": TARGET_DOLLARS, "tokens": TARGET_TOKENS, "peak_prompt": TARGET_PEAK},
        "wall_s": round(time.perf_counter() - started, 2),
    }


WIDTH = 100  # a terminal's columns
COLUMNS = ("run", "completed", "input tokens", "cache writes", "cache reads", "dollars", "peak prompt")


def report(result: dict, markdown: bool = False) -> str:
    """What was measured, as a table (plain columns for a terminal, or Markdown for the docs), then in
    words: how the bills compare and why the runs differ."""
    price = result["price"]
    rows = [[row["stage"], "yes" if row["completed"] else "no", f"{row['input_tokens']:,}",
             f"{row['cache_write_tokens']:,}", f"{row['cache_read_tokens']:,}", f"${row['dollars']:.4f}",
             f"{row['peak_prompt_tokens']:,}"] for row in result["stages"].values()]
    lines = textwrap.wrap(f"Token benchmark: {result['task']!r} on {result['log_files']} log files "
                          f"({result['model']}, {result['turns']} turns), context window {result['context_window']:,}.", WIDTH)
    lines += textwrap.wrap(f"Priced like {result['priced_as']} (prices of {result['prices_date']}, $ per million tokens): "
                           f"input {price['input']:g}, cache write {price['cache_write']:g}, cache read "
                           f"{price['cache_read']:g}, output {price['output']:g}.", WIDTH)
    lines += [""] + (markdown_table(COLUMNS, rows, align="llrrrrr").splitlines() if markdown else text_table(rows)) + [""]
    lines += textwrap.wrap("Input tokens are every token of every prompt: those read from the cache, those written "
                           "to it, and the rest. Without caching, all of them are billed at the input price.", WIDTH)
    for sentence in verdicts(result):
        lines += textwrap.wrap(sentence, WIDTH)
    lines.append(f"Wall time: {result['wall_s']} s.")
    return "\n".join(lines)


def text_table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(cell) for cell in column) for column in zip(COLUMNS, *rows)]
    left = 2  # run and completed are words; the numbers line up on the right
    return ["  ".join(cell.ljust(width) if index < left else cell.rjust(width)
                      for index, (cell, width) in enumerate(zip(line, widths))).rstrip()
            for line in [list(COLUMNS)] + rows]


def verdicts(result: dict) -> list[str]:
    """The comparisons the course aims at, said in words, each with its aim (set for 100 turns)."""
    rows, targets, turns, said = result["stages"], result["targets"], result["turns"], []
    s05, cached, s04 = rows.get("s05"), rows.get("s04+cache"), rows.get("s04")
    every_turn = rows.get("s05-every-turn")
    if s05 and cached and result["dollar_ratio_s05_s04_cached"] is not None:
        share = result["dollar_ratio_s05_s04_cached"]
        said.append(f"With caching on for both, the cache-aware s05 costs {share:.0%} of what s04 costs "
                    f"(${s05['dollars']:.4f} against ${cached['dollars']:.4f})"
                    + aim(share <= targets["dollars"], f"at most {targets['dollars']:.0%}", turns)
                    + ("" if s05["completed"] else " It did not complete the task."))
    if every_turn and cached and cached["dollars"]:
        said.append(f"Masking a little every turn costs {every_turn['dollars'] / cached['dollars']:.0%} of s04 with caching: "
                    "each masking changes the prompt a few turns before its end, so those turns are written to the cache again.")
    if s05 and s04 and result["ratio_s05_s04"] is not None:
        share = result["ratio_s05_s04"]
        said.append(f"Without caching, s05 would be billed for {share:.1%} of s04's input tokens "
                    f"({s05['input_tokens']:,} against {s04['input_tokens']:,})"
                    + aim(share <= targets["tokens"], f"at most {targets['tokens']:.0%}", turns))
    server = [rows[name] for name in ("s04+clearing", "s04+compaction") if name in rows]
    if s05 and server:
        cheaper = min(server, key=lambda row: row["dollars"])
        said.append(f"Beside the API's own pruning on s04, the cache-aware s05 costs ${s05['dollars']:.4f}, against "
                    + " and ".join(f"${row['dollars']:.4f} ({row['stage']})" for row in server)
                    + f"; the course's aim is no more than the cheaper ({cheaper['stage']}), and this run "
                    + ("gets there." if s05["dollars"] <= cheaper["dollars"] else "does not get there."))
    if s05:
        said.append(f"s05's largest prompt was {s05['peak_prompt_tokens']:,} tokens"
                    + aim(s05["peak_prompt_tokens"] < targets["peak_prompt"], f"under {targets['peak_prompt']:,} tokens", turns))
    return said


def aim(reached: bool, goal: str, turns: int) -> str:
    """The end of a sentence: the course's aim for 100 turns, and, at 100 turns, whether the run reaches it."""
    if turns != DEFAULT_TURNS:
        return f" (the course's aim, at {DEFAULT_TURNS} turns: {goal})."
    return f"; the course's aim is {goal}, and {'this run gets there' if reached else 'this run does not get there'}."


CACHED_RUNS = ("s04+cache", "s04+clearing", "s04+compaction", "s05-every-turn", "s05")


def plot_svg(result: dict, runs=None) -> str:
    """Dollars spent after each model call, one line per run (or per run named in ``runs``): the
    unpruned runs bend upwards, s05 stays low. ``runs=CACHED_RUNS`` zooms in on the cached ones."""
    names = [name for name in result["stages"] if runs is None or name in runs]
    series = {f"{name} (${result['stages'][name]['dollars']:.2f})":
              [(0, 0)] + list(enumerate(result["stages"][name]["cumulative_dollars"], start=1)) for name in names}
    which = "" if runs is None else ", the runs with caching"
    first = list(result["stages"]).index(names[0]) if names else 0  # each run keeps its colour in both charts
    return line_chart(series, title=f"Dollars spent over a {result['turns']}-turn task{which}",
                      x_label="model call (one a turn)", y_label="cumulative dollars", first_style=first)


def tokens_command(turns: int = DEFAULT_TURNS, as_json: bool = False, plot: str | Path | None = None) -> int:
    """``bench tokens``: measure, write the plot, print the table (or one JSON object)."""
    result = run_token_bench(turns)
    path = Path(plot) if plot else DEFAULT_PLOT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(plot_svg(result), encoding="utf-8")
    if as_json:
        print(json.dumps(dict(result, plot=str(path)), ensure_ascii=False))
    else:
        print(report(result))
        print(f"Plot: {path}")
    return 0


# ---------------------------------------------------------------- the offline model's own speed

def run_call_bench(calls: int = 200) -> dict:
    """Median and quartiles of one offline model call through the real SDK, in milliseconds.

    The request is the tutor's first turn of a task with the s01 tool table: what a test pays per call.
    """
    import statistics
    import time

    import course

    stage = load_stage("s01")
    client = course.make_client("offline")
    request = dict(model="offline", max_tokens=stage.MAX_TOKENS, system=stage.SYSTEM_PROMPT, tools=stage.TOOLS,
                   messages=[{"role": "user", "content": "List the files and write their count and names to report.txt"}])
    client.messages.create(**request)  # the first call builds the SDK's models: not what later calls cost
    timings = []
    for _ in range(calls):
        started = time.perf_counter()
        client.messages.create(**request)
        timings.append((time.perf_counter() - started) * 1000)
    quartiles = statistics.quantiles(timings, n=4)
    return {"calls": calls, "median_ms": round(statistics.median(timings), 3),
            "q1_ms": round(quartiles[0], 3), "q3_ms": round(quartiles[2], 3)}


def calls_command(calls: int = 200, as_json: bool = False) -> int:
    result = run_call_bench(calls)
    if as_json:
        print(json.dumps(result))
    else:
        print(f"one offline call through the SDK, over {result['calls']} calls: median {result['median_ms']} ms "
              f"(quartiles {result['q1_ms']}–{result['q3_ms']} ms)")
    return 0
