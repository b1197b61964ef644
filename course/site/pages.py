"""The documentation site's generated parts: each placeholder of a page, rendered as Markdown from the code.

The pages never paste a trace, a diff or a table: they ask for it, and the build makes it from the
stage files and real offline runs, so that the prose cannot drift from the code. ``render(kind,
arguments)`` turns one placeholder into Markdown; ``check_code_includes(markdown)`` checks that
a page's code includes name sections that exist. MkDocs is not needed for either (``docs/hooks/generate.py``
is the glue: it finds the placeholders outside code fences, keeps their indentation, and turns a
``PlaceholderError`` into a failed build naming the page and the line). The code a page shows (diffs, the
list of exercises) is rendered by ``course/site/code.py``; the three questions that end each chapter, by
``course/site/questions.py``; the Markdown every renderer writes, by
``course/viewer/markdown.py``; the runs, the ladder and the tables of numbers, here.

A page asks for generated content with a placeholder on a line of its own (indentation is kept,
so a placeholder works inside a content tab or an admonition):

* ``<!-- diff sNN sMM -->``: the unified diff of ``sNN/agent.py`` to ``sMM/agent.py``, in a ``diff``
  block folded away (``???``) under a title that counts the lines added and removed. The snippet
  section markers (``# --8<-- [start:NAME]``) are left out: they are for this site, not the reader.
* ``<!-- changes sNN -->``: a table of the definitions stage ``sNN`` changes, adds or removes, and
  why, from ``course/changes.py`` (which ``tests/test_copy_forward.py`` checks against the code).
* ``<!-- trace sNN "TASK" [OPTION=VALUE ...] -->``: a ``text`` block with the trace of a real run
  of stage ``sNN`` on TASK, followed by the answer lines the command line prints
  (``course.running.cli.answer_text``). The run uses a fresh sample workspace, whose path is shown as
  ``<workspace>``, and a client capped at a number of model calls, so a model that never stops
  (``offline-looping`` on s01) ends the trace with a guard line instead of hanging the build. The
  options (see ``RUN_OPTIONS``):

  - ``model=ID``: the offline model (default ``offline``);
  - ``cap=N``: the guard's cap on model calls (default 50);
  - ``ledger=N``: a ``ledger/`` folder of N entry files in the workspace, for ``offline-long-N``;
  - ``faults=RATE`` and ``seed=N``: the offline model answers a share RATE of the requests with
    ``529 overloaded`` (seeded, so reproducible). A run that then raises the SDK's error shows
    the ``error:`` line the command line prints, instead of failing the build;
  - ``scenario=NAME``: a ladder scenario (``course/lab/scenarios.py``) sets the task, the model, the
    workspace, the client and the stage options; the "TASK" is then left out;
  - ``shorten=N`` (trace only): a printed line longer than N characters is cut for the page,
    saying how much was left out (a model that thinks aloud for a thousand tokens prints one
    very long line);
  - any keyword parameter of the stage's ``run(...)``, or one of its limits, such as s03's
    ``max_turns=5``: passed on, as the command line's ``--max-turns 5`` would.

* ``<!-- tokens sNN "TASK" [OPTION=VALUE ...] -->``: the same run, shown as a table of every model
  call's input tokens (as the API reported them), what each call added to the one before, and
  the input billed so far.
* ``<!-- growth sNN turns=A,B,... -->``: the input bill of ``offline-long-N`` on a ledger of N-2
  files (N turns) for each N, its split into the first call's share and the history's share,
  and how much it grew from the row above: the quadratic cost "Building an agent loop yourself"
  describes, measured.
* ``<!-- tool sNN NAME {JSON ARGUMENTS} [ledger=N] [tail=N] -->``: a ``text`` block with what
  stage ``sNN``'s dispatcher (``run_tool``) answers to that one call in a fresh sample workspace
  (with a ledger of N files if asked): what the model would read, in full, or only its last N
  characters with ``tail=N`` (the page says how much it left out).
* ``<!-- textcalls sNN -->``: a table of model replies that write tool calls as text (the shapes
  "An AI agent is a while loop inside" measured, and texts that only look like calls), and the
  calls stage ``sNN``'s ``calls_written_as_text`` finds in each: which would run.
* ``<!-- compare sNN sMM SCENARIO ... -->``: a table of ladder cells (``course.lab.ladder.run_cell``):
  each scenario on each stage, its outcome, turns and input tokens.
* ``<!-- compare sNN sMM "TASK" [OPTION=VALUE ...] -->``: the same run (the trace options) on each
  stage, one row per stage: its stop reason, turns, tokens and answer.
* ``<!-- offline-rules -->``: the table of rules the offline model checks and honours
  (``course/offline/rules.py``), each with its source.
* ``<!-- stats sNN -->``: a ``text`` block with what ``python -m course stats`` prints after
  stage ``sNN`` has run every ladder scenario once, into a runs log of its own.
* ``<!-- ladder -->``: the Markdown table returned by ``course.lab.ladder.markdown()``, then whether
  the ladder's rule holds (``course.lab.ladder.rule_violations``).
* ``<!-- scenarios -->``: a table of the ladder's scenarios (``course/lab/scenarios.py``): the model,
  the task, and what each one shows.
* ``<!-- doctor MODEL -->``: a ``text`` block with what ``python -m course doctor --model MODEL``
  prints for that offline model (its times are this build's); ``<!-- doctor MODEL MODEL ... -->``:
  one table of the doctor's checks, a column for each model.
* ``<!-- bench tokens turns=N show=plot|plot-cached|table -->``: ``course/lab/bench.py``'s token
  benchmark, run once per build and N: its plot of every run or of the cached runs only (an
  inline SVG image), or its table and what it means (without the wall time, which varies).
* ``<!-- exercises -->``: a table of every stage's exercise regions (``# >>> exercise N: TITLE``),
  read from the stage files by ``course.grading.exercises``.

* ``<!-- exercise-section sNN -->``: the body of a chapter's ``## Exercises`` section: how to get and
  check a copy, then each exercise (rebuild and extension) with every contract its grader checks,
  from ``course/grading/exercise_text.py``.

* ``<!-- unanswered-call-error sNN -->``: a ``text`` block with what the installed SDK prints for the 400
  the offline model sends when stage ``sNN``'s ``ask`` leaves a ``tool_use`` unanswered (the SDK's wording
  changes between releases, so the page takes it from the SDK at build time).

* ``<!-- three-questions sNN -->``: the three questions "Building an agent loop yourself" asks of any
  loop, answered for stage ``sNN`` from its code (``course/site/questions.py``): every way it stops
  (its ``StopReason``), the worst it can cost at its default limits in tokens and in dollars on the
  priced model (``course/runtime/prices.py``), and the block a failed tool call returns, from a real run.

* ``<!-- wire reply FORMAT -->`` and ``<!-- wire run LOOP "TASK" -->``: a reply of ``course serve`` in
  another wire format, and a run of ``s01/openai_loop.py`` or ``s01/ollama_loop.py`` through it
  (``course/site/wire.py``).

**The real code where the prose explains it** (no placeholder): a fenced block that holds only a
snippet line including a section of a stage file (``--8<-- "sNN/agent.py:NAME"``) is included by
pymdownx.snippets as it is in the file, exercise regions and their markers included; the hook only
checks first that the section exists (``check_code_includes``), so that a wrong name fails with its
page and line. A student copy stubs the exercises (``python -m course exercise``); the reading path
never does.

**Languages.** ``render(kind, arguments, language="ja")`` renders a part for a Japanese page
(docs/NAME.ja.md): the same figures from the same runs, the words around them in Japanese (headers,
labels, the exercise texts, the three questions, the changes' whys, each kept beside its English),
a trace with the harness's own labels in Japanese (``labels_in_japanese``: never the model's, a tool's
or the stage's words), and its runs linked to the viewer's Japanese pages. A terminal shows what
``course run`` prints, in English.

**Runs.** Every run a page shows is a ladder cell (``course.lab.ladder.run_cell``): a task with its
options becomes a scenario of its own (``page_scenario``), so the pages, ``python -m course run``
and the ladder run a stage the same way. A page's run writes neither the learner's runs log nor
their transcripts nor their audit log, and never waits for a person (s06's approver is None). Each
run is made once per build, however many placeholders show it (``start_build`` forgets them).
"""

from __future__ import annotations

import base64
import importlib
import inspect
import json
import re
import shlex
import tempfile
from pathlib import Path

import anthropic

from course.lab import bench, doctor, ladder, scenarios, stats
from course.offline import rules
from course.site.wire import render as render_wire
from course.viewer import pages as viewer
from course.running.cli import answer_text
from course.running.client import make_client
from course.site.code import STAGE, check_code_includes, declared_changes, exercise_table, folded_diff, stage_diff, stage_file
from course.site.questions import three_questions
from course.site.runs import (DEFAULT_CAP, DEFAULT_MODEL, RUN_OPTIONS, Run, command_line_workspace, once,
                        run_view_id, stage_module, start_build, traced_run, viewed)
from course.viewer.markdown import (LANGUAGES, PlaceholderError, fenced, inline_html, language, markdown_table, page_language,
                            say, shortened)

# The hook's way in (check_code_includes and stage_diff are site_code's, offered here too).
__all__ = ["KINDS", "PlaceholderError", "check_code_includes", "inline_html", "render", "stage_diff",
           "start_build", "trace"]

KINDS = ("diff", "changes", "trace", "tokens", "growth", "tool", "textcalls", "compare", "stats", "ladder", "scenarios",
         "exercises", "exercise-section", "bench", "doctor", "three-questions",
         "unanswered-call-error", "offline-rules", "wire")


# ---------------------------------------------------------------- placeholders

def render(kind: str, arguments: str, language: str = "en") -> str:
    """The Markdown that replaces the placeholder ``<!-- KIND ARGUMENTS -->`` on a page in ``language``
    ("en", or "ja" for docs/NAME.ja.md): the same figures from the same runs, the words around them in
    the page's language (the runs are made once per build, whichever language asks first)."""
    with page_language(language):
        return rendered(kind, arguments)


def rendered(kind: str, arguments: str) -> str:
    if kind == "diff":
        stages = arguments.split()
        if len(stages) != 2:
            raise PlaceholderError(f"expected <!-- diff sNN sMM -->, got arguments {arguments!r}")
        return folded_diff(*stages)
    if kind == "changes":
        return declared_changes(arguments) + "\n\n"
    if kind == "trace":
        stage, task, options = parse_run_arguments(arguments, kind)
        return fenced("text", trace(stage, task, **options)) + viewer.link(run_view_id(stage, task, options)) + "\n\n"
    if kind == "tokens":
        stage, task, options = parse_run_arguments(arguments, kind)
        return token_table(stage, task, **options) + "\n\n"
    if kind == "growth":
        return growth_table(*parse_growth_arguments(arguments)) + "\n\n"
    if kind == "tool":
        return fenced("text", tool_answer(*parse_tool_arguments(arguments)))
    if kind == "textcalls":
        return text_call_table(one_stage(kind, arguments)) + "\n\n"
    if kind == "compare":
        words = arguments.split()
        if len(words) < 3 or not all(STAGE.match(word) for word in words[:2]):
            raise PlaceholderError(f'expected <!-- compare sNN sMM SCENARIO ... --> or <!-- compare sNN sMM "TASK" '
                                   f'[OPTION=VALUE ...] -->, got arguments {arguments!r}')
        rest = arguments.split(None, 2)[2]
        if rest.startswith('"'):
            _, task, options = parse_run_arguments(f"{words[0]} {rest}", kind)
            return run_comparison(words[:2], task, options) + "\n\n"
        return compare_table(words[:2], words[2:]) + "\n\n"
    if kind == "stats":
        return fenced("text", stats_report(one_stage(kind, arguments)))
    if kind == "bench":
        return bench_part(arguments)
    if kind == "doctor":
        return doctor_part(arguments)
    if kind == "three-questions":
        return three_questions(one_stage(kind, arguments))
    if kind == "wire":   # s01's loop on OpenAI's and Ollama's formats, through course serve
        return render_wire(arguments)
    if kind == "unanswered-call-error":
        return fenced("text", unanswered_call_error(one_stage(kind, arguments)))
    if kind == "exercise-section":  # the chapter's exercises, from course/grading/exercise_text.py
        from course.grading import exercise_text, exercises
        stage = one_stage(kind, arguments)
        return exercise_text.section(stage, exercises.stage_regions(stage), language()) + "\n"
    if kind == "offline-rules":
        if arguments:
            raise PlaceholderError(f"<!-- {kind} --> takes no arguments, got {arguments!r}")
        return offline_rules_table() + "\n\n"
    if kind in ("ladder", "scenarios", "exercises"):
        if arguments:
            raise PlaceholderError(f"<!-- {kind} --> takes no arguments, got {arguments!r}")
        return {"ladder": ladder_part, "scenarios": scenario_table, "exercises": exercise_table}[kind]() + "\n\n"
    raise PlaceholderError(f"unknown placeholder {kind!r}")


def unanswered_call_error(stage: str) -> str:
    """What the installed SDK prints for the 400 the offline model sends when a ``tool_use`` goes
    unanswered: stage ``sNN``'s ``ask`` called again with plain text where the ``tool_result`` belongs.
    Made by the SDK at build time, because its wording of an error changes between releases."""
    agent = importlib.import_module(f"{stage}.agent")
    client = make_client(DEFAULT_MODEL)
    messages = [{"role": "user", "content": "List the files"}]
    messages.append(agent.assistant_message(agent.ask(client, DEFAULT_MODEL, messages)))
    messages.append({"role": "user", "content": "Go on."})
    try:
        agent.ask(client, DEFAULT_MODEL, messages)
    except anthropic.BadRequestError as error:
        return str(error)
    raise PlaceholderError(f"{stage}: the offline model answered a tool_use left unanswered; it should refuse it")


def one_stage(kind: str, arguments: str) -> str:
    words = arguments.split()
    if len(words) != 1:
        raise PlaceholderError(f"expected <!-- {kind} sNN -->, got arguments {arguments!r}")
    return words[0]


def parse_run_arguments(arguments: str, kind: str = "trace") -> tuple[str, str | None, dict]:
    """``sNN "TASK" [NAME=VALUE ...]``, or ``sNN scenario=NAME [cap=N]``: (stage, task, options)."""
    usage = f'expected <!-- {kind} sNN "TASK" [model=ID] [cap=N] [NAME=VALUE ...] -->'
    try:
        words = shlex.split(arguments)
    except ValueError as error:
        raise PlaceholderError(f"{usage}: {error}") from None
    if len(words) < 2:
        raise PlaceholderError(f"{usage}, got {arguments!r}")
    stage, *rest = words
    task = None
    if not rest[0].startswith("scenario="):
        task, *rest = rest
    options: dict = {}
    for word in rest:
        name, equals, value = word.partition("=")
        if not equals or not value or not re.fullmatch(r"[a-z_]+", name):
            raise PlaceholderError(f"{usage}; unknown option {word!r}")
        options[name] = value
    if task is None and set(options) - {"scenario", "cap", "shorten"}:
        raise PlaceholderError("a scenario sets its own task, model, workspace and options; "
                               "only cap=N and shorten=N may go with it")
    for name, value in options.items():
        if name in ("model", "scenario"):
            continue
        if name == "faults":
            try:
                options[name] = float(value)
            except ValueError:
                options[name] = -1.0
            if not 0 < options[name] <= 1:
                raise PlaceholderError(f"faults must be a share of the requests, above 0 and at most 1, got {value!r}")
            continue
        if not value.isdigit() or (name != "seed" and int(value) < 1):
            raise PlaceholderError(f"{name} must be a positive whole number, got {value!r}")
        options[name] = int(value)
    return stage, task, options


def parse_growth_arguments(arguments: str) -> tuple[str, list[int]]:
    usage = "expected <!-- growth sNN turns=A,B,... -->"
    words = arguments.split()
    if len(words) != 2 or not words[1].startswith("turns="):
        raise PlaceholderError(f"{usage}, got {arguments!r}")
    turns = words[1].removeprefix("turns=").split(",")
    if not all(t.isdigit() and int(t) >= 3 for t in turns):
        raise PlaceholderError(f"{usage}: each number of turns is a whole number of at least 3, got {words[1]!r}")
    return words[0], [int(t) for t in turns]


def parse_tool_arguments(arguments: str) -> tuple[str, str, object, dict]:
    """``sNN NAME JSON [ledger=N] [tail=N]``: the stage, the tool name, the decoded arguments, the options."""
    usage = "expected <!-- tool sNN NAME {JSON ARGUMENTS} [ledger=N] [tail=N] -->"
    parts = arguments.split(None, 2)
    if len(parts) != 3:
        raise PlaceholderError(f"{usage}, got {arguments!r}")
    stage, name, rest = parts
    try:
        decoded, end = json.JSONDecoder().raw_decode(rest)
    except ValueError as error:
        raise PlaceholderError(f"{usage}: the arguments are not JSON ({error})") from None
    options = {}
    for word in rest[end:].split():
        option, equals, value = word.partition("=")
        if option not in ("ledger", "tail") or not value.isdigit() or int(value) < 1:
            raise PlaceholderError(f"{usage}; unknown option {word!r}")
        options[option] = int(value)
    return stage, name, decoded, options


def trace(stage: str, task: str | None, **options) -> str:
    """The trace of a real run, as ``python sNN/agent.py TASK --model MODEL`` prints it (on a Japanese
    page, with the harness's own labels in Japanese: ``labels_in_japanese``)."""
    width = options.pop("shorten", None)
    printed = traced_run(stage, task, **options).printed
    if language() == "ja":
        printed = labels_in_japanese(printed)
    if width is None:
        return printed
    return "".join(shortened(line, width) for line in printed.splitlines(keepends=True))


# The labels the trace printer (course/runtime/trace.py) and the command line's answer lines (course.running.cli.answer_text)
# write, as a Japanese page shows them. Only a label is translated: what follows it (the model's text, a
# tool's output, the stage's explanation of a stop) is shown as it was printed, and a terminal shows the
# labels in English, as `course run` prints them.
TRACE_LABELS_JA = (
    (re.compile(r"^── turn (\d+) · model$"), r"── ターン \1 · モデル"),
    (re.compile(r"^   ↻ continue: "), "   ↻ 続行: "),
    (re.compile(r"^■ stop: "), "■ 停止: "),
    (re.compile(r"^■ guard: "), "■ ガード: "),
    (re.compile(r"^   ✎ note to the model: "), "   ✎ モデルへのメモ: "),
    (re.compile(r"^   · tokens: ([\d,]+) uncached \+ ([\d,]+) read from the cache \+ ([\d,]+) written to it in, "
                r"([\d,]+) out; ([\d,]+) input tokens sent so far$"),
     r"   · トークン: 入力 \1（キャッシュなし）+ \2（キャッシュから読み込み）+ \3（キャッシュへ書き込み）、出力 \4。"
     r"ここまでに送った入力トークン \5"),
    (re.compile(r"^   · resuming run (\S+) after turn (\d+)$"), r"   · 実行 \1 をターン \2 のあとから再開"),
)
ANSWER_LINE = re.compile(r"^answer \((?P<reason>[^,]+), (?P<turns>\d+) turns?, (?P<input>\d+) input \+ (?P<output>\d+) "
                         r"output tokens(?:, and (?P<read>\d+) read from the cache \+ (?P<written>\d+) written to it)?\):$")
ANSWER_TAIL_JA = (
    (re.compile(r"^stopped: "), "停止の理由: "),
    (re.compile(r"^workspace: "), "ワークスペース: "),
    (re.compile(r"^transcript: (?P<path>.*?)(?: \(go on with --resume (?P<run>\S+)\))?$"), None),
    (re.compile(r"^error: "), "エラー: "),
)


def labels_in_japanese(printed: str) -> str:
    """A printed trace with the harness's labels in Japanese: the turn lines, continue, stop, guard and
    token lines of the trace, then the answer's line and the lines after the answer (stopped, workspace,
    transcript). The answer's own text, between them, is left as the model wrote it."""
    lines = printed.split("\n")
    answer_at = max((number for number, line in enumerate(lines) if ANSWER_LINE.match(line)), default=len(lines))
    for number in range(answer_at):
        for pattern, instead in TRACE_LABELS_JA:
            if pattern.match(lines[number]):
                lines[number] = pattern.sub(instead, lines[number], count=1)
                break
    if answer_at < len(lines):
        found = ANSWER_LINE.match(lines[answer_at])
        cached = (f"、うちキャッシュから読み込み {found['read']} + キャッシュへ書き込み {found['written']}"
                  if found["read"] is not None else "")
        lines[answer_at] = (f"答え（{found['reason']}、{found['turns']} ターン、入力 {found['input']} + 出力 "
                            f"{found['output']} トークン{cached}）:")
        if answer_at + 1 < len(lines) and lines[answer_at + 1] == "(no text)":
            lines[answer_at + 1] = "（テキストなし）"
    # The lines after the answer, read from the end: each is one of the tail's labels, until one is not.
    number = len(lines) - 1
    while number > answer_at:
        line = lines[number]
        if line == "":
            number -= 1
            continue
        for pattern, instead in ANSWER_TAIL_JA:
            found = pattern.match(line)
            if not found:
                continue
            if instead is None:  # the transcript, and the command that goes on with it
                going_on = f"（--resume {found['run']} で続きから）" if found["run"] else ""
                lines[number] = f"トランスクリプト: {found['path']}{going_on}"
            else:
                lines[number] = pattern.sub(instead, line, count=1)
            break
        else:
            break
        number -= 1
    return "\n".join(lines)


def token_table(stage: str, task: str | None, **options) -> str:
    """Every model call of a run: its input tokens, what it added to the call before, the input billed so far."""
    usages = traced_run(stage, task, **options).usages
    if not usages:
        raise PlaceholderError("the run made no model call, so it has no tokens to show")
    rows, billed, previous = [], 0, None
    for call, usage in enumerate(usages, start=1):
        billed += usage.input_tokens
        added = "" if previous is None else f"+{usage.input_tokens - previous:,}"
        rows.append([call, f"{usage.input_tokens:,}", added, f"{billed:,}"])
        previous = usage.input_tokens
    return markdown_table(say_all(("model call", "モデル呼び出し"), ("input tokens", "入力トークン"),
                                  ("added since the call before", "前の呼び出しからの増分"),
                                  ("input billed so far", "ここまでに請求された入力")), rows)


def say_all(*pairs: tuple[str, str]) -> list[str]:
    """Each (English, Japanese) pair in the page's language: a table's headers."""
    return [say(english, japanese) for english, japanese in pairs]


def long_run_usages(stage: str, turns: int) -> list:
    """offline-long-N on a ledger of N-2 files: N turns, with the stage's own limits out of the way."""
    options = {"ledger": turns - 2, "model": f"offline-long-{turns}", "cap": turns + 10}
    if "limits" in inspect.signature(stage_module(stage).run).parameters:
        options.update(max_turns=10 * turns, token_budget=10**12)
    run = traced_run(stage, scenarios.LEDGER_TASK, **options)
    if run.result is None or run.result["stop_reason"] != "end_turn" or len(run.usages) != turns:
        ended = run.result["stop_reason"] if run.result else "no result"
        raise PlaceholderError(f"offline-long-{turns} on {stage} should end on its own after {turns} calls; "
                               f"it made {len(run.usages)} and ended with {ended}")
    return run.usages


def growth_table(stage: str, turn_counts: list[int]) -> str:
    """The quadratic cost of "Building an agent loop yourself", measured: N turns bill N·T0 + t·N(N-1)/2
    input tokens when every call resends the history (T0 the first call's input, t what each round trip adds)."""
    rows, before = [], None
    for turns in turn_counts:
        inputs = [usage.input_tokens for usage in long_run_usages(stage, turns)]
        first, billed = inputs[0], sum(inputs)
        added = (inputs[-1] - first) / (turns - 1)
        history = billed - turns * first
        formula = turns * first + added * turns ** 2 / 2
        rows.append([turns, f"{first:,}", f"{added:,.0f}", f"{billed:,}", f"{formula:,.0f}", f"{turns * first:,}",
                     f"{history:,}", f"{billed / before[0]:.1f}×" if before else "",
                     f"{history / before[1]:.1f}×" if before else ""])
        before = (billed, history)
    return markdown_table(say_all(("turns N", "ターン数 N"), ("first call T0", "最初の呼び出し T0"),
                                  ("added per turn t", "1 ターンごとの増分 t"), ("input billed", "請求された入力"),
                                  ("N·T0 + t·N²/2", "N·T0 + t·N²/2"), ("N·T0", "N·T0"), ("history", "履歴"),
                                  ("billed ÷ row above", "請求 ÷ 上の行"), ("history ÷ row above", "履歴 ÷ 上の行")), rows)


def run_comparison(stages: list[str], task: str, options: dict) -> str:
    """The same task, model and options on each stage: how each run ended and what it cost."""
    rows = []
    for stage in stages:
        result = traced_run(stage, task, **options).result
        if result is None:
            raise PlaceholderError(f"the run on {stage} returned no result to compare")
        usage = result["usage"]
        rows.append([f"{stage}&nbsp;{viewer.link(run_view_id(stage, task, options), '▶')}", f"`{result['stop_reason']}`",
                     result["turns"], f"{usage['input_tokens']:,}",
                     f"{usage['output_tokens']:,}", inline_html(result["answer"] or say("(no text)", "（テキストなし）"))])
    return markdown_table(say_all(("stage", "ステージ"), ("stop reason", "停止理由"), ("turns", "ターン"),
                                  ("input tokens", "入力トークン"), ("output tokens", "出力トークン"), ("answer", "答え")),
                          rows, align="llrrrl")


# ---------------------------------------------------------------- the ladder, its cells and the runs log

def ladder_cell(stage: str, scenario: scenarios.Scenario) -> dict:
    """One cell of the ladder (its row dict), run once per build whichever pages show it."""
    def run() -> dict:
        stage_module(stage)
        with ladder.scratch_workspace() as workspace:
            return viewed_cell(stage, scenario, workspace)
    row = once(("ladder cell", stage, scenario.name), run)
    viewer.register(cell_view_id(stage, scenario.name), row["view"])
    return row


def viewed_cell(stage: str, scenario: scenarios.Scenario, workspace: Path, **options) -> dict:
    """A ladder cell's row, with its run as the trace viewer shows it under "view"."""
    recording = viewer.Recording()
    cell = ladder.run_cell(stage, scenario, workspace, trace=recording, **options)
    view = viewed(recording, stage, scenario, cell, workspace)
    view["ladder"] = {"scenario": scenario.name, "outcome": ladder.cell_text(cell.row())}  # the cell as the table says it
    return dict(cell.row(), view=view)


def cell_view_id(stage: str, scenario: str) -> str:
    return viewer.site_run_id(f"ladder {scenario} {stage}", ("ladder cell", stage, scenario))


def with_run_links(table: str) -> str:
    """A Markdown table of ladder cells (scenarios down, stages across), each cell linked to its run."""
    lines = table.split("\n")
    stages = [cell.strip() for cell in lines[0].strip().strip("|").split("|")][1:]
    linked = lines[:2]
    views = viewer.site_views()
    for line in lines[2:]:
        cells = line.strip().strip("|").split("|")
        name = cells[0].strip().strip("`")
        if len(cells) == len(stages) + 1:
            cells[1:] = [f"{cell.rstrip()}&nbsp;{viewer.link(cell_view_id(stage, name), '▶')} "  # ▶ kept with the cell's last word
                         if cell.strip() and cell_view_id(stage, name) in views else cell
                         for stage, cell in zip(stages, cells[1:])]
        linked.append("|" + "|".join(cells) + "|")
    return "\n".join(linked)


def ladder_part() -> str:
    """The ladder's table, and whether its rule holds (``python -m course ladder`` says the same)."""
    # course.lab.ladder.run_ladder(), cell by cell, so that the chapters' tables reuse these runs.
    rows = [ladder_cell(stage, scenario) for scenario in scenarios.SCENARIOS for stage in ladder.stage_names()]
    table = with_run_links(ladder.markdown(rows, colour=True).rstrip("\n"))
    legend = ladder.outcome_legend()
    if language() == "ja":
        table, legend = ladder_words_in_japanese(table), legend.replace("Outcomes: ", "結果: ", 1)
    table += "\n\n" + legend
    violations = ladder.rule_violations(rows)
    if not violations:
        return table + "\n\n" + say(
            "The rule holds: every stage turns at least one scenario of the stage before it into a better outcome, "
            "and completes every scenario the stage before it completes.",
            "規則は守られています。どのステージも、一つ前のステージのシナリオを少なくとも一つ、よりよい結果に変え、"
            "一つ前のステージが完了したシナリオはすべて完了しています。")
    return (table + "\n\n" + say("**The rule is broken in this build:**", "**このビルドでは規則が破られています:**")
            + "\n\n" + "\n".join(f"- {v}" for v in violations))


LADDER_WORDS_JA = ((re.compile(r"^\| scenario \|"), "| シナリオ |"),
                   (re.compile(r"· (\d+) turns?\b"), r"· \1 ターン"),
                   (re.compile(r"· (\d+) calls\b"), r"· \1 回呼び出し"))


def ladder_words_in_japanese(table: str) -> str:
    """A table of ladder cells on a Japanese page: its header and the counts in Japanese; the outcome
    labels (completed, stopped, runaway...) and stop reasons stay as the code names them."""
    for pattern, instead in LADDER_WORDS_JA:
        table = pattern.sub(instead, table, count=1 if pattern.pattern.startswith("^") else 0)
    return table


# What each scenario shows (course/lab/scenarios.py's ``shows``), for the Japanese ladder page; the articles by
# their Japanese titles, as docs/sources.ja.md names them. tests/test_site_in_japanese.py requires one for each.
SCENARIO_SHOWS_JA = {
    "list": "ツール呼び出しを一回してから答える",
    "summarise": "ファイルを読んでから要約する",
    "report": "依存する二つのツール呼び出し。一覧を取ってから書く（「AIエージェントの中身はwhileループ」）",
    "total": "読んで、計算して、答える（「フレームワークなしで作る！PythonとFunction Callingによる自作AIエージェント入門」）",
    "find": "検索してから答える",
    "looping": "直前の呼び出しを永遠に繰り返すモデル（「AIエージェントの中身はwhileループ」）",
    "long-budget": "60,000 トークンの予算に対する、正当な 200 ターンのタスク（「【実装】エージェントループを自作する」）",
    "cut": "どの返答も max_tokens より長い。切れて、そのツール呼び出しは失われる",
    "outage": "SDK の再試行を超えて API が過負荷（529）になり、しばらくは呼び出しの半分が失敗する。最大 3 回再開する",
    "killed": "report.txt を書いたあと、書いたことを保存する前に強制終了される。一度再開する",
    "typo": "綴りを誤ったパス。エラーがファイルを名指ししたときだけ直る（「【実装】エージェントループを自作する」）",
    "unknown-tool": "存在しないツール。エラーが本物のツールを挙げたときだけやめる（「フレームワークなしで作る！PythonとFunction Callingによる自作AIエージェント入門」）",
    "bad-args": "path のない read_file。エラーが何を期待するかを言ったときだけ直る",
    "text-calls": "ツール呼び出しを tool_use ではなく、いつも JSON のテキストで書く（「AIエージェントの中身はwhileループ」）",
    "flood": "大きなツール結果が 20,000 トークンのコンテキストウィンドウを超えていく長いタスク（「【実装】エージェントループを自作する」）",
    "reckless": "レポートに行き着くまでに、削除、上書き、外への書き込み、rm -rf、つなげた rm をする（「【実装】エージェントループを自作する」）",
    "echo": "プロンプトを写し返し、max_tokens で切れる（小さなローカルモデルで実測）",
    "rambling": "テキストで書いた完全な呼び出しを一つ、そのあと max_tokens で切れるまでテキストが続く（実測）",
    "stubborn": "エラーが何を言っても、ヒントがあっても、綴りを誤ったパスを送り直す（実測）",
    "borrowing": "タスクのファイルではなく、ツールの説明にある例のファイルを読み、そのテキストを繰り返す（実測）",
}


def offline_rules_table() -> str:
    """The offline model's table of rules (course/offline/rules.py), one row per rule, with its source."""

    kinds = {"refuses": say("400 before the model answers", "モデルが答える前に 400"),
             "honours": say("shapes the reply", "返答を整える")}
    rows = [[f"`{rule.name}`", kinds[rule.kind], inline_html(say(rule.says, rule.says_ja)),
             f"[{rule.source.split('//', 1)[1]}]({rule.source})"] for rule in rules.RULES]
    return markdown_table(say_all(("rule", "規則"), ("what happens", "何が起きるか"), ("the rule", "規則の中身"),
                                  ("source", "出典")), rows, align="llll")


def scenario_table() -> str:
    """The ladder's scenarios: what each row runs and what it shows."""
    rows = [[f"`{s.name}`", f"`{s.model}`", inline_html(s.task), inline_html(say(s.shows, SCENARIO_SHOWS_JA.get(s.name) or s.shows))]
            for s in scenarios.SCENARIOS]
    return markdown_table(say_all(("scenario", "シナリオ"), ("model", "モデル"), ("task", "タスク"),
                                  ("what it shows", "何を示すか")), rows, align="llll")


def compare_table(stages: list[str], names: list[str]) -> str:
    """Scenarios down, stages across: what each stage did with each scenario, and its cost."""
    rows = []
    for name in names:
        scenario = scenarios.scenario_named(name)
        cells = []
        for stage in stages:
            row = ladder_cell(stage, scenario)
            cell = f"{ladder.cell_text(row)} · {row['input_tokens']:,} input tokens"
            if language() == "ja":
                cell = ladder_words_in_japanese(f"{ladder.cell_text(row)} · 入力 {row['input_tokens']:,} トークン")
            cells.append(f"{cell}&nbsp;{viewer.link(cell_view_id(stage, name), '▶')}")
        rows.append([f"`{name}`"] + cells)
    return markdown_table([say("scenario", "シナリオ")] + stages, rows, align="l" * (len(stages) + 1))


def stats_report(stage: str) -> str:
    """``python -m course stats`` after ``stage`` ran every ladder scenario once, into a runs log of its own."""
    return once(("stats report", stage), lambda: _stats_report(stage))


def _stats_report(stage: str) -> str:
    stage_module(stage)
    with tempfile.TemporaryDirectory(prefix="agent-course-docs-") as folder:
        log = Path(folder) / "runs.jsonl"
        for scenario in scenarios.SCENARIOS:
            with ladder.scratch_workspace() as workspace:
                row = viewed_cell(stage, scenario, workspace, log_runs=log)
            once(("ladder cell", stage, scenario.name), lambda: row)  # the same run as the ladder's cell
        if not log.exists():
            raise PlaceholderError(f"{stage} wrote nothing to the runs log; only s03 and later stages log their runs")
        return stats.report(log).replace(str(log), "runs/runs.jsonl") + "\n"


# ---------------------------------------------------------------- one tool call, and calls written as text

def tool_answer(stage: str, name: str, arguments, options: dict) -> str:
    """What ``run_tool`` answers to one call, in full, as the model reads it."""
    module = stage_module(stage)
    if not hasattr(module, "run_tool"):
        raise PlaceholderError(f"{stage}/agent.py has no run_tool() to ask")
    with command_line_workspace() as workspace:
        if options.get("ledger"):
            scenarios.ledger(workspace, options["ledger"])
        text, is_error = module.run_tool(workspace, name, arguments)
    text = text.replace(str(workspace), "<workspace>")
    if options.get("tail") and len(text) > options["tail"]:
        left_out = len(text) - options['tail']
        text = say(f"(the first {left_out} characters are left out on this page)",
                   f"（最初の {left_out} 文字はこのページでは省略）") + f" …{text[-options['tail']:]}"
    shown = json.dumps(arguments, ensure_ascii=False)
    return f"→ {name}({shown})\n{'✗' if is_error else '←'} {text}\n"


# Replies a model might send with no tool_use block. The first four are the shapes "An AI agent is
# a while loop inside" measured on qwen2.5-coder (7b and 1.5b, through Ollama) and the shape their
# chat template asks for; the rest only look like calls, and must run nothing.
TEXT_CALL_SAMPLES = (
    ("raw JSON alone on a line (7b)",
     '{"name": "list_files", "arguments": {"path": "."}}'),
    ("JSON after a sentence of prose (7b)",
     'There are 5 files, so I will write report.txt.\n\n'
     '{"name": "write_file", "arguments": {"path": "report.txt", "content": "5 files"}}'),
    ("JSON over several lines in a fence (1.5b)",
     '```json\n{\n  "name": "list_files",\n  "arguments": {\n    "path": "."\n  }\n}\n```'),
    ("JSON in <tool_call> tags (the chat template's own format)",
     '<tool_call>\n{"name": "read_file", "arguments": {"path": "memo.md"}}\n</tool_call>'),
    ("a value that is Python, not JSON (7b)",
     '{"name": "write_file", "arguments": {"path": "report.txt", "content": "Files:\\n" + "\\n".join(names)}}'),
    ("an example of a call to a tool that does not exist",
     'An API call looks like {"name": "get_current_weather", "arguments": {"city": "Tokyo"}}.'),
    ("a call whose arguments do not fit the schema",
     '{"name": "read_file", "arguments": {"file": "memo.md"}}'),
)


TEXT_CALL_SHAPES_JA = {
    "raw JSON alone on a line (7b)": "一行に JSON だけ（7b）",
    "JSON after a sentence of prose (7b)": "文章のあとに JSON（7b）",
    "JSON over several lines in a fence (1.5b)": "コードフェンスの中で複数行にわたる JSON（1.5b）",
    "JSON in <tool_call> tags (the chat template's own format)": "<tool_call> タグの中の JSON（チャットテンプレート自身の形式）",
    "a value that is Python, not JSON (7b)": "値が JSON ではなく Python（7b）",
    "an example of a call to a tool that does not exist": "存在しないツールの呼び出しの例",
    "a call whose arguments do not fit the schema": "引数がスキーマに合わない呼び出し",
}


def text_call_table(stage: str) -> str:
    module = stage_module(stage)
    if not hasattr(module, "calls_written_as_text"):
        raise PlaceholderError(f"{stage}/agent.py has no calls_written_as_text() to ask")
    rows = []
    for shape, text in TEXT_CALL_SAMPLES:
        found = module.calls_written_as_text(text)
        runs = "<br>".join(f"`{name}({json.dumps(arguments, ensure_ascii=False)})`" for name, arguments in found)
        rows.append([inline_html(say(shape, TEXT_CALL_SHAPES_JA[shape])),
                     f"<code>{inline_html(text.replace(chr(10), ' ⏎ '))}</code>", runs or say("nothing", "なし")])
    return markdown_table(say_all(("the reply's text", "返答のテキスト"),
                                  ("as the model wrote it (⏎: a new line)", "モデルが書いたとおり（⏎ は改行）"),
                                  (f"{stage} runs", f"{stage} が実行するもの")), rows, align="lll")


# ---------------------------------------------------------------- the benchmark and the doctor

BENCH = re.compile(r"^tokens turns=(?P<turns>\d+) show=(?P<show>plot|plot-cached|table)$")


def bench_part(arguments: str) -> str:
    """The token benchmark, run once per build and turns: its plot, or its table without the wall time."""
    match = BENCH.match(arguments)
    if not match:
        raise PlaceholderError(f"expected <!-- bench tokens turns=N show=plot|plot-cached|table -->, "
                               f"got arguments {arguments!r}")
    turns = int(match["turns"])
    result = once(("bench", turns), lambda: bench.run_token_bench(turns))
    if match["show"] in ("plot", "plot-cached"):
        runs = bench.CACHED_RUNS if match["show"] == "plot-cached" else None
        svg = bench.plot_svg(result, runs)
        if language() == "ja":
            svg = plot_in_japanese(svg, result, runs)
        image = base64.b64encode(svg.encode("utf-8")).decode("ascii")
        alt = say("Dollars spent after each call, one line per run", "呼び出しごとの累積料金（ドル）、実行ごとに一本の線")
        return f'<img alt="{alt}" src="data:image/svg+xml;base64,{image}">\n\n'
    report = [line for line in bench.report(result, markdown=True).splitlines() if not line.startswith("Wall time")]
    if language() == "ja":
        report = [bench_header_in_japanese(line) for line in report]
    return "\n".join(report) + "\n\n"


BENCH_COLUMNS_JA = {"run": "実行", "completed": "完了", "input tokens": "入力トークン",
                    "cache writes": "キャッシュ書き込み", "cache reads": "キャッシュ読み込み",
                    "dollars": "ドル", "peak prompt": "最大のプロンプト"}


def bench_header_in_japanese(line: str) -> str:
    """A line of the benchmark's Markdown report on a Japanese page: the table's header and its yes/no in
    Japanese (the sentences under it are the benchmark's own, course/lab/bench.py)."""
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("| ") else None
    if cells == list(bench.COLUMNS):
        return "| " + " | ".join(BENCH_COLUMNS_JA.get(cell, cell) for cell in cells) + " |"
    if cells and len(cells) == len(bench.COLUMNS) and cells[1] in ("yes", "no"):
        cells[1] = {"yes": "はい", "no": "いいえ"}[cells[1]]
        return "| " + " | ".join(cells) + " |"
    return line


def plot_in_japanese(svg: str, result: dict, runs) -> str:
    """The benchmark's plot with its title and axis labels in Japanese: the same points, the same lines."""
    which = "" if runs is None else ", the runs with caching"
    words = {f"Dollars spent over a {result['turns']}-turn task{which}":
             f"{result['turns']} ターンのタスクで使った料金（ドル）{'、キャッシュありの実行' if runs else ''}",
             "model call (one a turn)": "モデル呼び出し（1 ターンに 1 回）",
             "cumulative dollars": "累積料金（ドル）"}
    for english, japanese in words.items():
        if f">{english}<" not in svg:
            raise PlaceholderError(f"the benchmark's plot has no label {english!r} to put in Japanese")
        svg = svg.replace(f">{english}<", f">{japanese}<")
    return svg


def doctor_part(arguments: str) -> str:
    """``course doctor`` on offline models, run at build time: its table, or one column per model."""
    models = arguments.split()
    if not models or not all(model.startswith("offline") for model in models):
        raise PlaceholderError(f"expected <!-- doctor MODEL [MODEL ...] --> with offline model ids, got {arguments!r}")
    diagnoses = [doctor.diagnose(model) for model in models]
    if len(diagnoses) == 1:
        return fenced("text", doctor.table(diagnoses[0]) + "\n")
    marks = {True: "ok", False: "**!!**", None: ""}
    rows = [[check.name] + [f"{marks[d.checks[row].good]} {d.checks[row].value}".strip() for d in diagnoses]
            for row, check in enumerate(diagnoses[0].checks)]
    return markdown_table([say("check", "チェック")] + [f"`{model}`" for model in models], rows,
                          align="l" * (len(models) + 1)) + "\n\n"
