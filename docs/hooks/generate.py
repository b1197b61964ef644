"""MkDocs hook: parts of the pages generated from the code at build time, never pasted.

A page asks for generated content with a placeholder on a line of its own (indentation is kept,
so a placeholder works inside a content tab or an admonition):

* ``<!-- diff sNN sMM -->``: the unified diff of ``sNN/agent.py`` to ``sMM/agent.py``, in a ``diff``
  block folded away (``???``) under a title that counts the lines added and removed. The snippet
  section markers (``# --8<-- [start:NAME]``) are left out: they are for this site, not the reader.
* ``<!-- changes sNN -->``: a table of the definitions stage ``sNN`` changes, adds or removes, and
  why, from ``course/changes.py`` (which ``tests/test_copy_forward.py`` checks against the code).
* ``<!-- trace sNN "TASK" [OPTION=VALUE ...] -->``: a ``text`` block with the trace of a real run
  of stage ``sNN`` on TASK, followed by the answer lines the command line prints. The run uses a
  fresh sample workspace, whose path is shown as ``<workspace>``, and a client capped at a number
  of model calls, so a model that never stops (``offline-looping`` on s01) ends the trace with a
  guard line instead of hanging the build. The options (see ``RUN_OPTIONS``):

  - ``model=ID``: the offline model (default ``offline``);
  - ``cap=N``: the guard's cap on model calls (default 50);
  - ``ledger=N``: a ``ledger/`` folder of N entry files in the workspace, for ``offline-long-N``;
  - ``faults=RATE`` and ``seed=N``: the offline model answers a share RATE of the requests with
    ``529 overloaded`` (seeded, so reproducible). A run that then raises the SDK's error shows
    the ``error:`` line the command line prints, instead of failing the build;
  - ``scenario=NAME``: a ladder scenario (``course/scenarios.py``) sets the task, the model, the
    workspace, the client and the stage options; the "TASK" is then left out;
  - ``shorten=N`` (trace only): a printed line longer than N characters is cut for the page,
    saying how much was left out (a model that thinks aloud for a thousand tokens prints one
    very long line);
  - any keyword parameter of the stage's ``run(...)``, such as s03's ``max_turns=5``: passed on,
    as the command line's ``--max-turns 5`` would.

* ``<!-- tokens sNN "TASK" [OPTION=VALUE ...] -->``: the same run, shown as a table of every model
  call's input tokens (as the API reported them), what each call added to the one before, and
  the input billed so far.
* ``<!-- growth sNN turns=A,B,... -->``: the input bill of ``offline-long-N`` on a ledger of N-2
  files (N turns) for each N, its split into the first call's share and the history's share,
  and how much it grew from the row above: seed 000's quadratic cost, measured.
* ``<!-- tool sNN NAME {JSON ARGUMENTS} [ledger=N] [tail=N] -->``: a ``text`` block with what
  stage ``sNN``'s dispatcher (``run_tool``) answers to that one call in a fresh sample workspace
  (with a ledger of N files if asked): what the model would read, in full, or only its last N
  characters with ``tail=N`` (the page says how much it left out).
* ``<!-- textcalls sNN -->``: a table of model replies that write tool calls as text (seed 001's
  shapes, and texts that only look like calls), and the calls stage ``sNN``'s
  ``calls_written_as_text`` finds in each: which would run.
* ``<!-- compare sNN sMM SCENARIO ... -->``: a table of ladder cells (``course.ladder.run_cell``):
  each scenario on each stage, its outcome, turns and input tokens.
* ``<!-- compare sNN sMM "TASK" [OPTION=VALUE ...] -->``: the same run (the trace options) on each
  stage, one row per stage: its stop reason, turns, tokens and answer. The runs are the traces'
  runs, made once per build.
* ``<!-- stats sNN -->``: a ``text`` block with what ``python -m course stats`` prints after
  stage ``sNN`` has run every ladder scenario once, into a runs log of its own.
* ``<!-- ladder -->``: the Markdown table returned by ``course.ladder.markdown()``, then whether
  the ladder's rule holds (``course.ladder.rule_violations``).
* ``<!-- scenarios -->``: a table of the ladder's scenarios (``course/scenarios.py``): the model,
  the task, and what each one shows.
* ``<!-- doctor MODEL -->``: a ``text`` block with what ``python -m course doctor --model MODEL``
  prints for that offline model (its times are this build's); ``<!-- doctor MODEL MODEL ... -->``:
  one table of the doctor's checks, a column for each model.
* ``<!-- exercises -->``: a table of every stage's exercise regions (``# >>> exercise N: TITLE``),
  read from the stage files by ``course.exercises``.

Two things happen without a placeholder:

* **Exercises shown as the learner meets them.** A fenced block that holds only a snippet line
  including a section of a stage file (``--8<-- "sNN/agent.py:NAME"``) is shown with every exercise
  region of that section stubbed out, as ``python -m course exercise`` writes it
  (``course.exercises.stub_out``), and is followed by each region's reference solution, folded
  away in a ``??? success`` block. A section with no exercise is left to pymdownx.snippets.
* **Diagrams drawn with no network.** Material for MkDocs draws ``mermaid`` blocks with the script
  it finds as the global ``mermaid``, and loads it from a CDN only when there is none. ``make
  install`` vendors the script of the npm package ``mermaid`` at the version pinned in the
  Makefile (``MERMAID_VERSION``) into ``.venv/share/agent-course/``; this hook adds it to the site
  as ``assets/javascripts/mermaid.min.js`` and loads it before Material's own script runs. Without
  it (no npm when the course was installed), the build says so and the diagrams need the network.

Placeholders inside fenced code blocks are left alone. A placeholder that cannot be honoured
(unknown stage, malformed arguments, a run that raises, a missing support module) fails the
build with a message naming the page and the line.

The hook is registered in ``mkdocs.yml`` under ``hooks:`` and kept out of the site by
``exclude_docs``.
"""

from __future__ import annotations

import base64
import contextlib
import difflib
import html
import importlib
import inspect
import io
import json
import logging
import os
import re
import shlex
import shutil
import sys
import tempfile
import types
import typing
from pathlib import Path

from mkdocs.exceptions import PluginError

log = logging.getLogger("mkdocs.hooks.generate")

DEFAULT_MODEL = "offline"
DEFAULT_CAP = 50  # model calls; far above what any tutor task needs, low enough to end a runaway fast

KINDS = ("diff", "changes", "trace", "tokens", "growth", "tool", "textcalls", "compare", "stats", "ladder", "scenarios",
         "exercises", "bench", "doctor")
PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)<!--\s*(?P<kind>" + "|".join(KINDS) + r")\b(?P<arguments>.*?)-->[ \t]*$")
FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})")
STAGE = re.compile(r"^s\d\d$")
# Lines that pymdownx.snippets would treat as its own notation, inside generated text.
SNIPPET_NOTATION = re.compile(
    r"(-+8<-+[ \t]+\[[ \t]*(?:start|end)[ \t]*:[ \t]*[a-z][-_0-9a-z]*[ \t]*\])"                 # a section marker
    r"|^([ \t]*)(-+8<-+(?:[ \t]+(?:\"(?:\\\"|[^\"\n\r])+?\"|'(?:\\'|[^'\n\r])+?'))?)(?=\r?\n?$)"  # an include line
)

ROOT = Path(__file__).resolve().parents[2]  # the repository root; on_config confirms it from mkdocs.yml
_cache: dict[tuple, str] = {}  # traces of this build
# MkDocs executes this file afresh for every build (`mkdocs serve` rebuilds in one process), so what
# must outlive a build is kept in a module of its own: the source times of the stage files imported.
_STATE = sys.modules.setdefault("_docs_hook_state", types.ModuleType("_docs_hook_state"))
_STATE.__dict__.setdefault("imported", {})


# ---------------------------------------------------------------- MkDocs events

def on_config(config):
    global ROOT
    ROOT = Path(config.config_file_path).resolve().parent
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    _cache.clear()
    return config


def on_page_markdown(markdown: str, page, config, files) -> str:
    return expand(show_exercises_as_stubs(markdown, where=page.file.src_uri), where=page.file.src_uri)


# ---------------------------------------------------------------- mermaid, vendored

MERMAID_SITE_PATH = "assets/javascripts/mermaid.min.js"


def vendored_mermaid() -> Path | None:
    """The mermaid script `make install` vendored, at the version the Makefile pins; None if absent."""
    pinned = re.search(r"^MERMAID_VERSION\s*:=\s*(\S+)", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    if not pinned:
        raise PluginError("the Makefile pins no MERMAID_VERSION")
    path = Path(sys.prefix) / "share" / "agent-course" / f"mermaid-{pinned[1]}.min.js"
    return path if path.is_file() else None


def on_files(files, config):
    script = vendored_mermaid()
    if script is None:
        log.info("mermaid is not vendored (run make install, which needs npm): the diagrams will load it "
                 "from the network")
        return files
    from mkdocs.structure.files import File

    files.append(File.generated(config, MERMAID_SITE_PATH, abs_src_path=str(script)))
    # Material's own script runs after the extra scripts; finding a global `mermaid`, it loads no other.
    if MERMAID_SITE_PATH not in [str(entry) for entry in config.extra_javascript]:
        config.extra_javascript.append(MERMAID_SITE_PATH)
    return files


# ---------------------------------------------------------------- exercises, shown as stubs

SNIPPET_FENCE = re.compile(
    r'^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>python\b[^\n]*)\n'
    r'(?P=indent)--8<-- "(?P<stage>s\d\d)/(?P<module>\w+\.py):(?P<section>[\w-]+)"\n'
    r'(?P=indent)(?P=fence)[ \t]*$', re.M)
SECTION_MARKER = re.compile(r"^[ \t]*# --8<-- \[(?:start|end):[\w-]+\][ \t]*$")


def show_exercises_as_stubs(markdown: str, where: str = "<page>") -> str:
    """Each included section that holds exercises: shown stubbed, each solution folded away after it."""
    def replace(match: re.Match) -> str:
        try:
            return stubbed_section(match["stage"], match["section"], match["fence"], match["info"], match["indent"],
                                   module=match["module"])
        except PluginError as error:
            raise PluginError(f"{where}: {error}") from None
    return SNIPPET_FENCE.sub(replace, markdown)


def stubbed_section(stage: str, name: str, fence: str, info: str, indent: str, module: str = "agent.py") -> str:
    exercises = support_module("course.exercises", "a chapter's exercises")
    source = stage_file(stage, module).read_text(encoding="utf-8")
    regions = exercises.find_regions(source, f"{stage}/{module}")
    lines = source.splitlines(keepends=True)
    start, end = section_bounds(lines, f"{stage}/{module}", name)
    inside = [region for region in regions if start < region.start and region.end < end]
    original = f'{indent}{fence}{info}\n{indent}--8<-- "{stage}/{module}:{name}"\n{indent}{fence}'
    if not inside:
        return original  # pymdownx.snippets includes it as it is
    stubbed = exercises.stub_out("".join(lines[:end]), inside, stage).splitlines(keepends=True)
    shift = sum(region.end - region.start - 2 for region in inside)  # each region became one line
    shown = [line for line in stubbed[start:end - 1 - shift] if not SECTION_MARKER.match(line)]
    blocks = [fenced(info, "".join(shown))]
    for region in inside:
        solution = "".join(lines[region.start:region.end - 1])  # indented as it sits in the function
        title = f"Exercise {region.number}, {region.title}: a reference solution (try it yourself first)"
        body = fenced("python", solution)
        blocks.append(f'??? success "{title}"\n\n' + "".join(f"    {line}" if line.strip("\n") else line
                                                          for line in body.splitlines(keepends=True)))
    return "\n".join("".join(indent + line if line.strip("\n") else line for line in block.splitlines(keepends=True))
                     for block in blocks).rstrip("\n")


def section_bounds(lines: list[str], where: str, name: str) -> tuple[int, int]:
    """The 1-based lines of a section's start and end markers."""
    marks = {kind: number for number, line in enumerate(lines, start=1)
             for kind in ("start", "end") if line.strip() == f"# --8<-- [{kind}:{name}]"}
    if set(marks) != {"start", "end"} or marks["start"] > marks["end"]:
        raise PluginError(f"{where} has no section {name!r} (# --8<-- [start:{name}] ... [end:{name}])")
    return marks["start"], marks["end"]


# ---------------------------------------------------------------- placeholders

def expand(markdown: str, where: str = "<page>") -> str:
    """Replace every placeholder line of ``markdown`` that is not inside a fenced code block."""
    out = []
    fence = None
    for number, line in enumerate(markdown.splitlines(keepends=True), start=1):
        opening = FENCE.match(line)
        if fence is not None:
            if opening and opening["fence"][0] == fence[0] and len(opening["fence"]) >= len(fence):
                fence = None
            out.append(line)
            continue
        if opening:
            fence = opening["fence"]
            out.append(line)
            continue
        match = PLACEHOLDER.match(line)
        if not match:
            out.append(line)
            continue
        try:
            generated = generate(match["kind"], match["arguments"].strip())
        except PluginError as error:
            raise PluginError(f"{where}:{number}: {error}") from None
        except Exception as error:  # a generator that crashes must fail the build, with its place
            raise PluginError(f"{where}:{number}: {match['kind']} failed: {type(error).__name__}: {error}") from error
        indent = match["indent"]
        out.append("".join(indent + generated_line if generated_line.strip() else generated_line
                           for generated_line in generated.splitlines(keepends=True)))
    return "".join(out)


def generate(kind: str, arguments: str) -> str:
    if kind == "diff":
        stages = arguments.split()
        if len(stages) != 2:
            raise PluginError(f"expected <!-- diff sNN sMM -->, got arguments {arguments!r}")
        return folded_diff(*stages)
    if kind == "changes":
        return declared_changes(arguments) + "\n\n"
    if kind == "trace":
        stage, task, options = parse_run_arguments(arguments, kind)
        return fenced("text", trace(stage, task, **options))
    if kind == "tokens":
        stage, task, options = parse_run_arguments(arguments, kind)
        return token_table(stage, task, **options) + "\n\n"
    if kind == "growth":
        return growth_table(*parse_growth_arguments(arguments)) + "\n\n"
    if kind == "tool":
        return fenced("text", tool_answer(*parse_tool_arguments(arguments)))
    if kind == "textcalls":
        words = arguments.split()
        if len(words) != 1:
            raise PluginError(f"expected <!-- textcalls sNN -->, got arguments {arguments!r}")
        return text_call_table(words[0]) + "\n\n"
    if kind == "compare":
        words = arguments.split()
        if len(words) < 3 or not all(STAGE.match(word) for word in words[:2]):
            raise PluginError(f'expected <!-- compare sNN sMM SCENARIO ... --> or <!-- compare sNN sMM "TASK" '
                              f'[OPTION=VALUE ...] -->, got arguments {arguments!r}')
        rest = arguments.split(None, 2)[2]
        if rest.startswith('"'):
            _, task, options = parse_run_arguments(f"{words[0]} {rest}", kind)
            return run_comparison(words[:2], task, options) + "\n\n"
        return compare_table(words[:2], words[2:]) + "\n\n"
    if kind == "stats":
        words = arguments.split()
        if len(words) != 1:
            raise PluginError(f"expected <!-- stats sNN -->, got arguments {arguments!r}")
        return fenced("text", stats_report(words[0]))
    if kind == "bench":
        return bench(arguments)
    if kind == "doctor":
        return doctor(arguments)
    if kind in ("ladder", "scenarios", "exercises"):
        if arguments:
            raise PluginError(f"<!-- {kind} --> takes no arguments, got {arguments!r}")
        return {"ladder": ladder, "scenarios": scenario_table, "exercises": exercise_table}[kind]() + "\n\n"
    raise PluginError(f"unknown placeholder {kind!r}")


# Options every run placeholder takes; any other NAME=VALUE must be a keyword parameter of the
# stage's run(...) (s03's limits), and is passed on as a whole number.
RUN_OPTIONS = ("model", "cap", "ledger", "faults", "seed", "scenario", "shorten")


def parse_run_arguments(arguments: str, kind: str = "trace") -> tuple[str, str | None, dict]:
    """``sNN "TASK" [NAME=VALUE ...]``, or ``sNN scenario=NAME [cap=N]``: (stage, task, options)."""
    usage = f'expected <!-- {kind} sNN "TASK" [model=ID] [cap=N] [NAME=VALUE ...] -->'
    try:
        words = shlex.split(arguments)
    except ValueError as error:
        raise PluginError(f"{usage}: {error}") from None
    if len(words) < 2:
        raise PluginError(f"{usage}, got {arguments!r}")
    stage, *rest = words
    task = None
    if not rest[0].startswith("scenario="):
        task, *rest = rest
    options: dict = {}
    for word in rest:
        name, equals, value = word.partition("=")
        if not equals or not value or not re.fullmatch(r"[a-z_]+", name):
            raise PluginError(f"{usage}; unknown option {word!r}")
        options[name] = value
    if task is None and set(options) - {"scenario", "cap", "shorten"}:
        raise PluginError("a scenario sets its own task, model, workspace and options; "
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
                raise PluginError(f"faults must be a share of the requests, above 0 and at most 1, got {value!r}")
            continue
        if not value.isdigit() or (name != "seed" and int(value) < 1):
            raise PluginError(f"{name} must be a positive whole number, got {value!r}")
        options[name] = int(value)
    return stage, task, options


def parse_growth_arguments(arguments: str) -> tuple[str, list[int]]:
    usage = "expected <!-- growth sNN turns=A,B,... -->"
    words = arguments.split()
    if len(words) != 2 or not words[1].startswith("turns="):
        raise PluginError(f"{usage}, got {arguments!r}")
    turns = words[1].removeprefix("turns=").split(",")
    if not all(t.isdigit() and int(t) >= 3 for t in turns):
        raise PluginError(f"{usage}: each number of turns is a whole number of at least 3, got {words[1]!r}")
    return words[0], [int(t) for t in turns]


def parse_tool_arguments(arguments: str) -> tuple[str, str, object, dict]:
    """``sNN NAME JSON [ledger=N]``: the stage, the tool name, the decoded arguments, the options."""
    usage = "expected <!-- tool sNN NAME {JSON ARGUMENTS} [ledger=N] [tail=N] -->"
    parts = arguments.split(None, 2)
    if len(parts) != 3:
        raise PluginError(f"{usage}, got {arguments!r}")
    stage, name, rest = parts
    try:
        decoded, end = json.JSONDecoder().raw_decode(rest)
    except ValueError as error:
        raise PluginError(f"{usage}: the arguments are not JSON ({error})") from None
    options = {}
    for word in rest[end:].split():
        option, equals, value = word.partition("=")
        if option not in ("ledger", "tail") or not value.isdigit() or int(value) < 1:
            raise PluginError(f"{usage}; unknown option {word!r}")
        options[option] = int(value)
    return stage, name, decoded, options


def fenced(language: str, text: str) -> str:
    """A fenced block holding ``text`` verbatim, safe from pymdownx.snippets."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = "".join(escape_snippet_notation(line) for line in text.splitlines(keepends=True))
    if not body.endswith("\n"):
        body += "\n"
    return f"{fence}{language}\n{body}{fence}\n"


def escape_snippet_notation(line: str) -> str:
    # pymdownx.snippets runs before the code blocks are formed: a section marker such as
    # "# --8<-- [start:run]" in a diff would be swallowed. Its escape is a ';' before the marker,
    # which snippets removes again, so the reader sees the line as it is in the file.
    def add_escape(match: re.Match) -> str:
        if match.group(1):
            return ";" + match.group(1)
        return match.group(2) + ";" + match.group(3)

    return SNIPPET_NOTATION.sub(add_escape, line, count=1)


# ---------------------------------------------------------------- generators

def stage_file(stage: str, module: str = "agent.py") -> Path:
    if not STAGE.match(stage):
        raise PluginError(f"a stage is named sNN (e.g. s01), got {stage!r}")
    path = ROOT / stage / module
    if not path.is_file():
        raise PluginError(f"{stage}/{module} does not exist")
    return path


def stage_diff(old: str, new: str) -> str:
    """The unified diff of one stage file to the next: the chapter, in code."""
    before, after = (without_section_markers(stage_file(stage).read_text(encoding="utf-8")) for stage in (old, new))
    lines = difflib.unified_diff(before, after, fromfile=f"{old}/agent.py", tofile=f"{new}/agent.py")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def without_section_markers(source: str) -> list[str]:
    return [line for line in source.splitlines(keepends=True) if not SECTION_MARKER.match(line)]


def folded_diff(old: str, new: str) -> str:
    """The diff in a block folded away, titled with what it adds and removes: long, and read on demand."""
    diff = stage_diff(old, new)
    changed = [line for line in diff.splitlines() if not line.startswith(("+++", "---"))]
    added = sum(line.startswith("+") for line in changed)
    removed = sum(line.startswith("-") for line in changed)
    title = f"{old}/agent.py → {new}/agent.py: {added} lines added, {removed} removed (click to open)"
    return f'??? abstract "{title}"\n\n' + "".join(f"    {line}" if line.strip("\n") else line
                                                  for line in fenced("diff", diff).splitlines(keepends=True))
def declared_changes(stage: str) -> str:
    """The stage's row of course/changes.py as a table: what changed, was added or removed, and why."""
    table = support_module("course.changes", "<!-- changes -->")
    row = table.CHANGES.get(stage)
    if not row:
        raise PluginError(f"expected <!-- changes sNN --> with a stage listed in course/changes.py, got {stage!r}")
    rows = [[f"`{name}`", kind, inline_html(why)] for kind in table.KINDS for name, why in row.get(kind, {}).items()]
    return markdown_table(["definition", "change", "why"], rows, align="lll")


def stage_module(stage: str):
    """The stage's agent module; reloaded when its file changed, so that `mkdocs serve` shows edits.
    (Changes to the course package itself need a restart of `mkdocs serve`.)"""
    path = stage_file(stage)
    name = f"{stage}.agent"
    changed = path.stat().st_mtime_ns
    module = importlib.import_module(name)
    if _STATE.imported.setdefault(name, changed) != changed:
        module = importlib.reload(module)
        _STATE.imported[name] = changed
    return module


def trace(stage: str, task: str | None, **options) -> str:
    """The trace of a real run, as ``python sNN/agent.py TASK --model MODEL`` prints it."""
    width = options.pop("shorten", None)
    printed = traced_run(stage, task, **options).printed
    if width is None:
        return printed
    return "".join(shortened(line, width) for line in printed.splitlines(keepends=True))


def shortened(line: str, width: int) -> str:
    """A printed line cut to ``width`` characters for the page, saying how much was left out."""
    text = line.rstrip("\n")
    if len(text) <= width:
        return line
    return f"{text[:width]}… ({len(text) - width} more characters on this line, left out on this page)\n"


class Run(typing.NamedTuple):
    """One run made for the docs: what it printed, and what every model call was billed."""

    printed: str
    usages: list  # the usage of every reply, in order (course.capped keeps them)
    result: dict | None  # the command line's summary of the result; None if the run raised


def traced_run(stage: str, task: str | None, **options) -> Run:
    key = (stage, task, tuple(sorted(options.items())))
    if key not in _cache:
        _cache[key] = _run_and_trace(stage, task, dict(options))
    return _cache[key]


def _run_and_trace(stage: str, task: str | None, options: dict) -> Run:
    import anthropic
    import course

    module = stage_module(stage)
    scenario = None
    if "scenario" in options:
        scenarios = support_module("course.scenarios", "scenario=")
        try:
            scenario = scenarios.scenario_named(options.pop("scenario"))
        except course.CourseError as error:
            raise PluginError(str(error)) from None
    model = options.pop("model", scenario.model if scenario else DEFAULT_MODEL)
    cap = options.pop("cap", scenario.cap if scenario else DEFAULT_CAP)
    ledger_files = options.pop("ledger", None)
    client_options = dict(scenario.client_options) if scenario else {}
    if "faults" in options:
        client_options["faults"] = course.Faults(rate=options.pop("faults"), seed=options.pop("seed", 0),
                                                  kinds=("overloaded",))
    elif "seed" in options:
        raise PluginError("seed=N goes with faults=RATE")
    stage_options = stage_run_options(module, stage, options)
    if scenario:
        stage_options = course.limits.run_options(module.run, scenario.options)

    parameters = inspect.signature(module.run).parameters
    if "approver" in parameters:  # s06: a build never waits for a person, nor writes the learner's audit log
        stage_options.setdefault("approver", None)
        stage_options.setdefault("audit_log", False)
    workspace = course.prepare_workspace()
    buffer = io.StringIO()
    client = course.capped(course.make_client(model, **client_options), cap)
    result = None
    try:
        if scenario:
            scenario.setup(workspace)
        if ledger_files:
            support_module("course.scenarios", "ledger=").ledger(workspace, ledger_files)
        with _runs_log_elsewhere():
            try:
                result = module.run(scenario.task if scenario else task, client=client, model=model,
                                    workspace=workspace, trace=course.TracePrinter(stream=buffer), **stage_options)
            except course.Runaway as stop:
                buffer.write(f"\n■ guard: {stop}\n")
            except anthropic.APIError as error:
                if "faults" not in client_options:
                    raise
                # What the command line prints when the stage lets the SDK's error escape (course/cli.py).
                buffer.write(f"error: {course.explain_api_error(error)}\n")
            else:
                result = course.summary(result)
                buffer.write(answer_lines(result))
    finally:
        if workspace.parent.name.startswith("agent-course-"):
            shutil.rmtree(workspace.parent, ignore_errors=True)
    return Run(buffer.getvalue().replace(str(workspace), "<workspace>"), list(client.usages), result)


def stage_run_options(module, stage: str, options: dict) -> dict:
    """Options that are keyword parameters of the stage's run(...), or one of its limits (s03's max_turns)."""
    taken = support_module("course.limits", "a limit").run_options(module.run, options)
    limits = taken.get("limits")
    unknown = [name for name in options if (name not in taken and not hasattr(limits, name))
               or name in ("client", "model", "workspace", "trace", "task")]
    if unknown:
        raise PluginError(f"unknown option {unknown[0]!r}: not one of {', '.join(RUN_OPTIONS)}, "
                          f"and not a parameter of {stage}'s run()")
    return taken


def support_module(name: str, wanted_by: str):
    """A module of the support package that a placeholder needs; a missing one fails the build plainly."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name in (name, "course"):
            raise PluginError(f"{wanted_by} needs {name} ({name.replace('.', '/')}.py), which does not exist yet") from None
        raise


def answer_lines(data: dict) -> str:
    """What the command line prints after the trace (course/cli.py; tests/test_docs.py pins the match)."""
    usage = data["usage"]
    turns = f"{data['turns']} turn" + ("" if data["turns"] == 1 else "s")
    return (f"\nanswer ({data['stop_reason']}, {turns}, "
            f"{usage['input_tokens']} input + {usage['output_tokens']} output tokens):\n"
            f"{data['answer'] or '(no text)'}\n"
            f"workspace: {data['workspace']}\n")


@contextlib.contextmanager
def _runs_log_elsewhere():
    """Runs made for the docs stay out of the learner's runs log (course/runlog.py); yields the one they use."""
    variable = "AGENT_COURSE_RUNS_LOG"
    previous = os.environ.get(variable)
    transcripts = os.environ.get("AGENT_COURSE_TRANSCRIPTS")  # and out of the learner's runs/transcripts/
    with tempfile.TemporaryDirectory(prefix="agent-course-docs-") as folder:
        os.environ[variable] = str(Path(folder) / "runs.jsonl")
        os.environ["AGENT_COURSE_TRANSCRIPTS"] = str(Path(folder) / "transcripts")
        try:
            yield Path(os.environ[variable])
        finally:
            for name, value in ((variable, previous), ("AGENT_COURSE_TRANSCRIPTS", transcripts)):
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


BENCH = re.compile(r"^tokens turns=(?P<turns>\d+) show=(?P<show>plot|plot-cached|table)$")


def bench(arguments: str) -> str:
    """``<!-- bench tokens turns=N show=plot|plot-cached|table -->``: course/bench.py's token benchmark, run
    once per build and turns; the plot inline (an SVG image) of every run or of the cached runs only, or
    its table and what it means, without the wall time, which varies."""
    match = BENCH.match(arguments)
    if not match:
        raise PluginError(f"expected <!-- bench tokens turns=N show=plot|plot-cached|table -->, got arguments {arguments!r}")
    benchmark = support_module("course.bench", "bench")
    key = ("bench", int(match["turns"]))
    if key not in _cache:
        with _runs_log_elsewhere():
            _cache[key] = benchmark.run_token_bench(int(match["turns"]))
    result = _cache[key]
    if match["show"] in ("plot", "plot-cached"):
        runs = benchmark.CACHED_RUNS if match["show"] == "plot-cached" else None
        image = base64.b64encode(benchmark.plot_svg(result, runs).encode("utf-8")).decode("ascii")
        return (f'<img alt="Dollars spent after each call, one line per run" '
                f'src="data:image/svg+xml;base64,{image}">\n\n')
    report = [line for line in benchmark.report(result, markdown=True).splitlines() if not line.startswith("Wall time")]
    return "\n".join(report) + "\n\n"


def doctor(arguments: str) -> str:
    """``<!-- doctor MODEL [MODEL ...] -->``: course/doctor.py on offline models, run at build time."""
    models = arguments.split()
    if not models or not all(model.startswith("offline") for model in models):
        raise PluginError(f"expected <!-- doctor MODEL [MODEL ...] --> with offline model ids, got {arguments!r}")
    module = support_module("course.doctor", "<!-- doctor -->")
    diagnoses = [module.diagnose(model) for model in models]
    if len(diagnoses) == 1:
        return fenced("text", module.table(diagnoses[0]) + "\n")
    marks = {True: "ok", False: "**!!**", None: ""}
    rows = [[check.name] + [f"{marks[d.checks[row].good]} {d.checks[row].value}".strip() for d in diagnoses]
            for row, check in enumerate(diagnoses[0].checks)]
    return markdown_table(["check"] + [f"`{model}`" for model in models], rows, align="l" * (len(models) + 1)) + "\n\n"


def ladder() -> str:
    """The ladder's table, and whether its rule holds (``python -m course ladder`` says the same)."""
    module = support_module("course.ladder", "<!-- ladder -->")
    scenarios = support_module("course.scenarios", "<!-- ladder -->")
    # course.ladder.run_ladder(), cell by cell, so that the chapters' tables reuse these runs.
    rows = [ladder_cell(stage, scenario) for scenario in scenarios.SCENARIOS for stage in module.stage_names()]
    table = module.markdown(rows).rstrip("\n")
    if not hasattr(module, "rule_violations"):
        return table
    violations = module.rule_violations(rows)
    if not violations:
        return table + ("\n\nThe rule holds: every stage turns at least one scenario of the stage before it "
                        "into a better outcome, and completes every scenario the stage before it completes.")
    return table + "\n\n**The rule is broken in this build:**\n\n" + "\n".join(f"- {v}" for v in violations)


def scenario_table() -> str:
    """The ladder's scenarios: what each row runs and what it shows."""
    scenarios = support_module("course.scenarios", "<!-- scenarios -->")
    rows = [[f"`{s.name}`", f"`{s.model}`", inline_html(s.task), inline_html(s.shows)] for s in scenarios.SCENARIOS]
    return markdown_table(["scenario", "model", "task", "what it shows"], rows, align="llll")


# ---------------------------------------------------------------- tokens: the bill of a run, call by call

def markdown_table(header: list[str], rows: list[list], align: str = "") -> str:
    """A Markdown table; ``align`` gives one letter per column, l or r (default: first left, others right)."""
    align = align or "l" + "r" * (len(header) - 1)
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = [header, rule] + [[str(cell) for cell in row] for row in rows]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def token_table(stage: str, task: str | None, **options) -> str:
    """Every model call of a run: its input tokens, what it added to the call before, the input billed so far."""
    usages = traced_run(stage, task, **options).usages
    if not usages:
        raise PluginError("the run made no model call, so it has no tokens to show")
    rows, billed, previous = [], 0, None
    for call, usage in enumerate(usages, start=1):
        billed += usage.input_tokens
        added = "" if previous is None else f"+{usage.input_tokens - previous:,}"
        rows.append([call, f"{usage.input_tokens:,}", added, f"{billed:,}"])
        previous = usage.input_tokens
    return markdown_table(["model call", "input tokens", "added since the call before", "input billed so far"], rows)


def long_run_usages(stage: str, turns: int) -> list:
    """offline-long-N on a ledger of N-2 files: N turns, with the stage's own limits out of the way."""
    scenarios = support_module("course.scenarios", "<!-- growth -->")
    options = {"ledger": turns - 2, "model": f"offline-long-{turns}", "cap": turns + 10}
    if "limits" in inspect.signature(stage_module(stage).run).parameters:
        options.update(max_turns=10 * turns, token_budget=10**12)
    run = traced_run(stage, scenarios.LEDGER_TASK, **options)
    if run.result is None or run.result["stop_reason"] != "end_turn" or len(run.usages) != turns:
        ended = run.result["stop_reason"] if run.result else "no result"
        raise PluginError(f"offline-long-{turns} on {stage} should end on its own after {turns} calls; "
                          f"it made {len(run.usages)} and ended with {ended}")
    return run.usages


def growth_table(stage: str, turn_counts: list[int]) -> str:
    """Seed 000's quadratic cost, measured: N turns bill N·T0 + t·N(N-1)/2 input tokens when every
    call resends the history (T0 the first call's input, t what each round trip adds)."""
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
    return markdown_table(["turns N", "first call T0", "added per turn t", "input billed", "N·T0 + t·N²/2",
                           "N·T0", "history", "billed ÷ row above", "history ÷ row above"], rows)


# ---------------------------------------------------------------- tool: one call, answered by a stage's dispatcher

def tool_answer(stage: str, name: str, arguments, options: dict) -> str:
    """What ``run_tool`` answers to one call, in full, as the model reads it."""
    import course

    module = stage_module(stage)
    if not hasattr(module, "run_tool"):
        raise PluginError(f"{stage}/agent.py has no run_tool() to ask")
    workspace = course.prepare_workspace()
    try:
        if options.get("ledger"):
            support_module("course.scenarios", "ledger=").ledger(workspace, options["ledger"])
        text, is_error = module.run_tool(workspace, name, arguments)
    finally:
        if workspace.parent.name.startswith("agent-course-"):
            shutil.rmtree(workspace.parent, ignore_errors=True)
    text = text.replace(str(workspace), "<workspace>")
    if options.get("tail") and len(text) > options["tail"]:
        text = f"(the first {len(text) - options['tail']} characters are left out on this page) …{text[-options['tail']:]}"
    shown = json.dumps(arguments, ensure_ascii=False)
    return f"→ {name}({shown})\n{'✗' if is_error else '←'} {text}\n"


# ---------------------------------------------------------------- textcalls: what a stage recognises as a call

# Replies a model might send with no tool_use block. The first four are the shapes seed 001
# measured on qwen2.5-coder (7b and 1.5b, through Ollama) and the shape their chat template asks
# for; the rest only look like calls, and must run nothing.
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


def inline_html(text: str) -> str:
    """Text for a table cell, shown as it is: no Markdown, no HTML, no column break."""
    escaped = html.escape(text)
    for character, entity in (("`", "&#96;"), ("*", "&#42;"), ("_", "&#95;"), ("|", "&#124;"), ("\\", "&#92;")):
        escaped = escaped.replace(character, entity)
    return escaped


def text_call_table(stage: str) -> str:
    module = stage_module(stage)
    if not hasattr(module, "calls_written_as_text"):
        raise PluginError(f"{stage}/agent.py has no calls_written_as_text() to ask")
    rows = []
    for shape, text in TEXT_CALL_SAMPLES:
        found = module.calls_written_as_text(text)
        runs = "<br>".join(f"`{name}({json.dumps(arguments, ensure_ascii=False)})`" for name, arguments in found)
        rows.append([inline_html(shape), f"<code>{inline_html(text.replace(chr(10), ' ⏎ '))}</code>", runs or "nothing"])
    return markdown_table(["the reply's text", "as the model wrote it (⏎: a new line)", f"{stage} runs"], rows,
                          align="lll")


# ---------------------------------------------------------------- ladder cells, the runs log, exercises

def compare_table(stages: list[str], names: list[str]) -> str:
    """Scenarios down, stages across: what each stage did with each scenario, and its cost."""
    ladder_module = support_module("course.ladder", "<!-- compare -->")
    scenarios = support_module("course.scenarios", "<!-- compare -->")
    import course

    rows = []
    for name in names:
        try:
            scenario = scenarios.scenario_named(name)
        except course.CourseError as error:
            raise PluginError(str(error)) from None
        cells = []
        for stage in stages:
            stage_file(stage)
            row = ladder_cell(stage, scenario)
            cells.append(f"{ladder_module.cell_text(row)} · {row['input_tokens']:,} input tokens")
        rows.append([f"`{name}`"] + cells)
    return markdown_table(["scenario"] + stages, rows, align="l" * (len(stages) + 1))


def run_comparison(stages: list[str], task: str, options: dict) -> str:
    """The same task, model and options on each stage: how each run ended and what it cost."""
    rows = []
    for stage in stages:
        result = traced_run(stage, task, **options).result
        if result is None:
            raise PluginError(f"the run on {stage} returned no result to compare")
        usage = result["usage"]
        rows.append([stage, f"`{result['stop_reason']}`", result["turns"], f"{usage['input_tokens']:,}",
                     f"{usage['output_tokens']:,}", inline_html(result["answer"] or "(no text)")])
    return markdown_table(["stage", "stop reason", "turns", "input tokens", "output tokens", "answer"], rows,
                          align="llrrrl")


def ladder_cell(stage: str, scenario) -> dict:
    """One cell of the ladder (its row dict), run once per build whichever pages show it."""
    key = ("ladder cell", stage, scenario.name)
    if key not in _cache:
        ladder_module = support_module("course.ladder", "a ladder cell")
        with ladder_module.scratch_workspace() as workspace:
            _cache[key] = ladder_module.run_cell(stage, scenario, workspace).row()
    return _cache[key]


def stats_report(stage: str) -> str:
    """``python -m course stats`` after ``stage`` ran every ladder scenario once."""
    ladder_module = support_module("course.ladder", "<!-- stats -->")
    scenarios = support_module("course.scenarios", "<!-- stats -->")
    stats = support_module("course.stats", "<!-- stats -->")
    stage_file(stage)
    with _runs_log_elsewhere() as log:
        for scenario in scenarios.SCENARIOS:
            with ladder_module.scratch_workspace() as workspace:
                ladder_module.run_cell(stage, scenario, workspace, log_runs=True)
        if not log.exists():
            raise PluginError(f"{stage} wrote nothing to the runs log; only s03 and later stages log their runs")
        return stats.report(log).replace(str(log), "runs/runs.jsonl") + "\n"


def exercise_table() -> str:
    """Every stage's exercises, read from the markers in the stage files, so the list cannot drift."""
    exercises = support_module("course.exercises", "<!-- exercises -->")
    rows = []
    for path in sorted(ROOT.glob("s[0-9][0-9]/agent.py")):
        stage = path.parent.name
        source = path.read_text(encoding="utf-8").splitlines()
        chapters = sorted((ROOT / "docs").glob(f"{stage}-*.md"))
        chapter = f"[{stage}]({chapters[0].name})" if chapters else f"`{stage}`"
        try:
            regions = exercises.stage_regions(stage)
        except exercises.CourseError as error:
            # What `python -m course exercise` would answer: shown, so that an instructor sees it.
            rows.append([chapter, "", f"⚠ the exercise markers are refused: {error}", "", ""])
            continue
        for region in regions:
            function = next((match["name"] for line in reversed(source[:region.start])
                             if (match := re.match(r"\s*def (?P<name>\w+)", line))), None)
            rows.append([chapter, region.number, region.title, f"`{function}()`" if function else "",
                         f"`{path.relative_to(ROOT).as_posix()}:{region.start}`"])
    return markdown_table(["stage", "exercise", "title", "in", "at"], rows, align="lrlll")
