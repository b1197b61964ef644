"""MkDocs hook: parts of the pages generated from the code at build time, never pasted.

A page asks for generated content with a placeholder on a line of its own (indentation is kept,
so a placeholder works inside a content tab or an admonition):

* ``<!-- diff sNN sMM -->``: a ``diff`` block, the unified diff of ``sNN/agent.py`` to ``sMM/agent.py``.
* ``<!-- trace sNN "TASK" -->``, optionally followed by ``model=ID`` (default ``offline``) and
  ``cap=N`` (default 50): a ``text`` block with the trace of a real run of stage ``sNN`` on TASK,
  followed by the answer lines the command line prints. The run uses a fresh sample workspace,
  whose path is shown as ``<workspace>``, and a client capped at N model calls, so a model that
  never stops (``offline-looping`` on s01) ends the trace with a guard line instead of hanging
  the build.
* ``<!-- ladder -->``: the Markdown table returned by ``course.ladder.markdown()``.

Placeholders inside fenced code blocks are left alone. A placeholder that cannot be honoured
(unknown stage, malformed arguments, a run that raises, a missing ``course.ladder``) fails the
build with a message naming the page and the line.

The hook is registered in ``mkdocs.yml`` under ``hooks:`` and kept out of the site by
``exclude_docs``.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import io
import os
import re
import shlex
import shutil
import sys
import tempfile
import types
from pathlib import Path

from mkdocs.exceptions import PluginError

DEFAULT_MODEL = "offline"
DEFAULT_CAP = 50  # model calls; far above what any tutor task needs, low enough to end a runaway fast

PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)<!--\s*(?P<kind>diff|trace|ladder)\b(?P<arguments>.*?)-->[ \t]*$")
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
    return expand(markdown, where=page.file.src_uri)


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
        return fenced("diff", stage_diff(*stages))
    if kind == "trace":
        stage, task, options = parse_trace_arguments(arguments)
        return fenced("text", trace(stage, task, **options))
    if kind == "ladder":
        if arguments:
            raise PluginError(f"<!-- ladder --> takes no arguments, got {arguments!r}")
        return ladder() + "\n\n"
    raise PluginError(f"unknown placeholder {kind!r}")


def parse_trace_arguments(arguments: str) -> tuple[str, str, dict]:
    usage = 'expected <!-- trace sNN "TASK" [model=ID] [cap=N] -->'
    try:
        words = shlex.split(arguments)
    except ValueError as error:
        raise PluginError(f"{usage}: {error}") from None
    if len(words) < 2:
        raise PluginError(f"{usage}, got {arguments!r}")
    stage, task, *rest = words
    options = {}
    for word in rest:
        name, equals, value = word.partition("=")
        if not equals or name not in ("model", "cap") or not value:
            raise PluginError(f"{usage}; unknown option {word!r}")
        options[name] = value
    if "cap" in options:
        if not options["cap"].isdigit() or int(options["cap"]) < 1:
            raise PluginError(f"cap must be a positive whole number, got {options['cap']!r}")
        options["cap"] = int(options["cap"])
    return stage, task, options


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

def stage_file(stage: str) -> Path:
    if not STAGE.match(stage):
        raise PluginError(f"a stage is named sNN (e.g. s01), got {stage!r}")
    path = ROOT / stage / "agent.py"
    if not path.is_file():
        raise PluginError(f"{stage}/agent.py does not exist")
    return path


def stage_diff(old: str, new: str) -> str:
    """The unified diff of one stage file to the next: the chapter, in code."""
    before = stage_file(old).read_text(encoding="utf-8").splitlines(keepends=True)
    after = stage_file(new).read_text(encoding="utf-8").splitlines(keepends=True)
    lines = difflib.unified_diff(before, after, fromfile=f"{old}/agent.py", tofile=f"{new}/agent.py")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


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


def trace(stage: str, task: str, model: str = DEFAULT_MODEL, cap: int = DEFAULT_CAP) -> str:
    """The trace of a real run, as ``python sNN/agent.py TASK --model MODEL`` prints it."""
    key = (stage, task, model, cap)
    if key not in _cache:
        _cache[key] = _run_and_trace(stage, task, model, cap)
    return _cache[key]


def _run_and_trace(stage: str, task: str, model: str, cap: int) -> str:
    import course

    module = stage_module(stage)
    workspace = course.prepare_workspace()
    buffer = io.StringIO()
    try:
        with _runs_log_elsewhere():
            client = course.capped(course.make_client(model), cap)
            try:
                result = module.run(task, client=client, model=model, workspace=workspace,
                                    trace=course.TracePrinter(stream=buffer))
            except course.Runaway as stop:
                buffer.write(f"\n■ guard: {stop}\n")
            else:
                buffer.write(answer_lines(course.summary(result)))
    finally:
        if workspace.parent.name.startswith("agent-course-"):
            shutil.rmtree(workspace.parent, ignore_errors=True)
    return buffer.getvalue().replace(str(workspace), "<workspace>")


def answer_lines(data: dict) -> str:
    """What the command line prints after the trace (course/cli.py; tests/test_docs.py pins the match)."""
    usage = data["usage"]
    return (f"\nanswer ({data['stop_reason']}, {data['turns']} turns, "
            f"{usage['input_tokens']} input + {usage['output_tokens']} output tokens):\n"
            f"{data['answer'] or '(no text)'}\n"
            f"workspace: {data['workspace']}\n")


@contextlib.contextmanager
def _runs_log_elsewhere():
    """Runs made for the docs stay out of the learner's runs log (course/runlog.py)."""
    variable = "AGENT_COURSE_RUNS_LOG"
    previous = os.environ.get(variable)
    with tempfile.TemporaryDirectory(prefix="agent-course-docs-") as folder:
        os.environ[variable] = str(Path(folder) / "runs.jsonl")
        try:
            yield
        finally:
            if previous is None:
                os.environ.pop(variable, None)
            else:
                os.environ[variable] = previous


def ladder() -> str:
    try:
        module = importlib.import_module("course.ladder")
    except ModuleNotFoundError as error:
        if error.name in ("course.ladder", "course"):
            raise PluginError("<!-- ladder --> needs course.ladder.markdown() (course/ladder.py), "
                              "which does not exist yet") from None
        raise
    return module.markdown().rstrip("\n")
