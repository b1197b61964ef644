"""Grading student copies so that nothing a copy does can change its grade, one copy or a whole class.

How a copy is graded (``grade_copies``):

1. **Read and compare.** Each file of the copy (agent.py, a stage's other modules, extension.py) is
   decoded as Python decodes it (a ``# -*- coding: ... -*-`` line is honoured) and parsed (an error
   names the file and the line). With its exercise regions' bodies put back to the stubs, it must be
   the student copy ``course exercise`` wrote, line for line: a copy that changed anything outside
   its regions is refused, with the diff, and scores 0.
2. **Check each region before it runs** (``region_problems``): no imports, no dunder or private names,
   no frames, no eval/exec/open/getattr. This is a second line, for a clear message: the guarantee is 3.
3. **Run each exercise alone, confined** (``course.grading.jail``): the reference stage with only
   this exercise's region taken from the copy, so one exercise's bug fails only that exercise; in a
   child with its own namespaces, Landlock and seccomp, that can read the copy and the support
   package and write only its scratch folder (where the support package holds the exercise's answer,
   the child first takes it out of its memory and out of what it can read:
   ``course.grading.probes.keep_answers_out_of_reach``). The child runs the exercise's cases
   (``course.grading.probes``: values drawn from the run's seed, printed) and reports only what it
   observed; the judging happens here, against the reference stage's own observations (a child of
   its own, with no student code) or against what each case was built to expect. A case the child
   did not report (it exited, hung, crashed, skipped) has failed.
4. **Score.** An exercise passes when every case does; its points (``--points``, 1 by default) are
   shared out by groups of cases, a group counting when all its cases pass.
"""

from __future__ import annotations

import ast
import csv
import dataclasses
import difflib
import errno
import functools
import hashlib
import io
import json
import os
import random
import re
import stat
import tempfile
import threading
import time
import tokenize
import types
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from course.grading import exercise_text, exercises, jail as grading_jail, probes as grading_probes
from course.runtime.models import CourseError
from course.runtime.trace import escape_terminal_controls

EXTENSION_FILE = "extension.py"
PACKAGE = "graded_copy"
REASON_LIMIT = 240
# What the grader reads back of one child's observations. The reference's take tens of kilobytes; a
# line of JSON costs many times its size once parsed (a million empty lists), so a copy that reports
# more fails that exercise unread rather than swelling the grader that judges the whole class.
OBSERVATIONS_CAP = 2 << 20


@dataclass(frozen=True)
class Exercise:
    stage: str
    number: int
    title: str
    file: str
    extension: bool = False


@dataclass
class Options:
    seed: int | None = None
    limits: grading_jail.Limits = field(default_factory=grading_jail.Limits)
    points: dict = field(default_factory=dict)  # {(stage, number): points}
    extra_tests: list = field(default_factory=list)  # instructors' probe files
    jobs: int = 0  # 0: the machine's cores
    confine: bool = True
    check_regions: bool = True  # False only to prove, in the tests, that confinement alone holds

    def seed_value(self) -> int:
        if self.seed is None:
            # Drawn fresh for every grading; from a range too wide to search: a copy that sees its cases'
            # values and knows how they are drawn could otherwise try every seed until one draws them
            # (a million take seconds), and so learn the order of the cases.
            self.seed = random.SystemRandom().randrange(1, 10**12)
        return self.seed


@dataclass
class CaseResult:
    name: str
    group: str
    passed: bool
    reason: str = ""


@dataclass
class ExerciseResult:
    exercise: Exercise
    cases: list
    points: float
    max_points: float
    seconds: float = 0.0
    reason: str = ""   # one line: why it failed, the part to act on first
    printed: str = ""

    @property
    def passed(self) -> bool:
        return bool(self.cases) and all(case.passed for case in self.cases)


@dataclass
class CopyGrade:
    student: str
    stage: str
    folder: Path
    results: list
    seed: int
    refused: str = ""
    confinement: str = ""
    note: str = ""  # made from another version of the course, and graded all the same

    @property
    def points(self) -> float:
        return sum(result.points for result in self.results)

    @property
    def max_points(self) -> float:
        return sum(result.max_points for result in self.results)


# ---------------------------------------------------------------------------------------------
# The exercises of a stage, and the files of its copy

def stage_exercises(stage: str) -> list[Exercise]:
    found = [Exercise(stage, region.number, region.title, region.file) for region in _regions(stage, _versions(stage))]
    extension = exercise_text.extension(stage)
    if extension:
        found.append(Exercise(stage, extension.number, extension.title, EXTENSION_FILE, True))
    return found


def graded_modules(stage: str) -> list[Path]:
    """The stage's modules a copy is graded on: not a notebook's jupytext twin, which is the student's to run."""
    return [module for module in exercises.stage_modules(stage)
            if "jupytext" not in module.read_text(encoding="utf-8")[:400]]


def stub_files(stage: str) -> dict[str, str]:
    """The Python files of a fresh student copy, as ``course exercise`` writes them."""
    return dict(_files(stage, _versions(stage))[0])


def reference_files(stage: str) -> dict[str, str]:
    return dict(_files(stage, _versions(stage))[1])


_PINNED: dict = {}  # stage -> the version a grading run reads, whatever is edited while it runs


def _versions(stage: str) -> tuple:
    if stage in _PINNED:
        return _PINNED[stage]
    return tuple((path.name, path.stat().st_mtime_ns) for path in exercises.stage_modules(stage))


def pin_versions(stages) -> None:
    """Read each stage once and grade the whole run against that reading: a class is graded against one version."""
    _PINNED.clear()
    for stage in set(stages):
        versions = tuple((path.name, path.stat().st_mtime_ns) for path in exercises.stage_modules(stage))
        _files(stage, versions)
        _regions(stage, versions)
        _PINNED[stage] = versions


@functools.lru_cache(maxsize=64)
def _regions(stage: str, versions: tuple) -> tuple:
    return tuple(exercises.stage_regions(stage))


@functools.lru_cache(maxsize=64)
def _files(stage: str, versions: tuple) -> tuple[tuple, tuple]:
    """(stubbed, reference) files of a stage, read once per version of its modules: a class is many copies."""
    regions = _regions(stage, versions)
    modules = graded_modules(stage)
    stubbed = {module.name: (exercise_text.copy_header(stage) if any(r.file == module.name for r in regions) else "")
               + exercises.stub_out(module.read_text(encoding="utf-8"), [r for r in regions if r.file == module.name], stage)
               for module in modules}
    reference = {module.name: module.read_text(encoding="utf-8") for module in modules}
    if exercise_text.extension(stage):
        stubbed[EXTENSION_FILE] = reference[EXTENSION_FILE] = exercise_text.extension_template(stage)
    return tuple(stubbed.items()), tuple(reference.items())


class Refused(CourseError):
    """The copy cannot be graded as it is; the message says why, in one line, and ``detail`` shows where."""

    def __init__(self, message: str, detail: str = ""):
        super().__init__(message)
        self.detail = detail


def read_source(path: Path) -> str:
    """The file decoded as Python decodes it: its coding declaration, else UTF-8; refused if it holds a
    character that ends a line for str.splitlines but not for Python (OTHER_LINE_BREAKS)."""
    data = read_regular(path)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        source = data.decode(encoding).removeprefix("\ufeff")
    except (SyntaxError, UnicodeError, LookupError) as error:  # UnicodeError: the 'undefined' codec, say
        line = data[:getattr(error, "start", 0)].count(b"\n") + 1 if isinstance(error, UnicodeDecodeError) else 1
        raise Refused(f"{path.name}, line {line}: not valid text in its encoding ({error})") from None
    if found := OTHER_LINE_BREAKS.search(source):
        line = source[:found.start()].count("\n") + 1
        raise Refused(f"{path.name}, line {line}: the character {found.group()!r} ends a line for the grader but not "
                      "for Python, so the two would read different code; remove it")
    return source


# Python ends a line at \n, \r\n or \r only (https://docs.python.org/3/reference/lexical_analysis.html#physical-lines);
# str.splitlines, which the grader compares a copy's lines with, also at these
# (https://docs.python.org/3/library/stdtypes.html#str.splitlines). A form feed in a comment had opened a string
# only the grader saw, and code outside the regions passed for their text. No stage file holds one.
OTHER_LINE_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


# The grader reads and parses each copy itself, outside any confinement, so what a copy may hold is
# bounded before it is parsed: a stage's largest file is about 40 KB and an answer a few dozen lines, and
# a parse costs far more memory than its text (a 2 MB list literal took the grader past a gigabyte).
FILE_LIMIT = 256 << 10    # bytes of one file of a copy
REGION_LIMIT = 64 << 10   # characters of one exercise region's body


def read_regular(path: Path, limit: int = FILE_LIMIT) -> bytes:
    """A copy's file, refused unless it is a regular file of its own: a symbolic link (to the reference
    stage, say) or a device is not the student's work. O_NOFOLLOW refuses a link as the last part of
    the path, fstat on the opened descriptor the rest (https://man7.org/linux/man-pages/man2/open.2.html).
    A file of more than ``limit`` bytes is refused unread: no stage's file comes near it."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise Refused(f"{path.name} is a symbolic link: hand in the file itself") from None
        raise Refused(f"cannot read {path.name}: {error.strerror or error}") from None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise Refused(f"{path.name} is not a regular file")
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)  # the file may still be growing: its size is what was read
        if len(data) > limit:
            size = max(os.fstat(descriptor).st_size, len(data))
            raise Refused(f"{path.name} is {size:,} bytes: more than a stage's file could need ({limit // 1024} KB); not graded")
        return data
    finally:
        os.close(descriptor)


def _not_a_link(path: Path, what: str) -> None:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return
    if stat.S_ISLNK(mode):
        raise Refused(f"{what} {path} is a symbolic link: hand in the folder itself")


def _refuse_long_regions(name: str, lines: list[str], handed_out: int) -> None:
    """Each region's body is at most REGION_LIMIT characters, measured between the marker lines as text
    (find_regions, which parses the file, then checks that the markers are the regions), and what lies
    outside them not much longer than the file handed out (``handed_out`` characters, its stubs included)."""
    opened, length, outside = None, 0, 0
    for line in lines:
        if closing := exercises.CLOSING.fullmatch(line.rstrip("\r\n")):
            if opened and length > REGION_LIMIT:
                raise Refused(f"{name}: exercise {closing['number']} is {length:,} characters long, more than an "
                              f"answer could need ({REGION_LIMIT // 1024} KB); not graded")
            opened = None
        elif exercises.OPENING.fullmatch(line.rstrip("\r\n")):
            opened, length = line, 0
        elif opened:
            length += len(line)
        else:
            outside += len(line)
    if outside > handed_out + REGION_LIMIT:
        raise Refused(f"{name} was changed outside its exercise regions: {outside:,} characters there, "
                      f"{handed_out:,} in the file as handed out; only the code between the markers is yours")


CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")
_HEADER = re.compile(r"# A student copy of s\d\d: write only between .*")
_HEADER_LINES = len(exercise_text.copy_header("s00").splitlines())


def _comparable(text: str) -> list[str]:
    """The lines that count: trailing spaces, blank lines, a coding declaration (first two lines) and the
    copy's header (what a region may not use: a copy made before it, or without it, is the same copy) do not."""
    lines = [line.rstrip() for line in text.splitlines()]
    for at in (0, 1):  # after a coding declaration, if the student added one
        if len(lines) > at and _HEADER.fullmatch(lines[at]):
            lines = lines[:at] + lines[at + _HEADER_LINES:]
            break
    return [line for number, line in enumerate(lines) if line and not (number < 2 and CODING.match(line))]


@dataclass(frozen=True)
class Body:
    exercise: int
    file: str
    first_line: int        # in the student's file
    text: str              # the lines between the markers
    is_stub: bool
    indent: str = ""       # the markers' indentation: where each of the body's statements starts


def read_copy(stage: str, folder: Path) -> dict[int, Body]:
    """The copy's region bodies, by exercise number. Raises Refused when the copy is not a copy of ``stage``."""
    return read_copy_noted(stage, folder)[0]


def read_copy_noted(stage: str, folder: Path) -> tuple[dict[int, Body], str]:
    """The copy's region bodies, and a line to show when it was made from another version of the course.
    The regions are found by their markers, never by parsing the whole file: each body is parsed on its own
    when its exercise is graded, so that a syntax error in one fails that exercise only."""
    folder = Path(folder)
    _not_a_link(folder, "the copy's folder")
    if not os.path.lexists(folder / "agent.py"):
        raise Refused(f"no agent.py in {folder}: make a copy with `{exercises.course_command()} exercise {stage} DEST`")
    recorded = exercises.recorded_version(folder)
    if recorded.get("stage", stage) != stage and exercises.STAGE_NAME.fullmatch(recorded["stage"]):
        raise Refused(f"this is a copy of {recorded['stage']}, not of {stage} (its {exercises.VERSION_FILE} says so): "
                      f"grade it with `{exercises.course_command()} check {recorded['stage']} {folder}`")
    stubs, bodies, notes = stub_files(stage), {}, []
    for name, stub in stubs.items():
        path = folder / name
        if not os.path.lexists(path):
            if name == EXTENSION_FILE:  # a copy made before the extension existed: that exercise is not attempted
                continue
            raise Refused(f"{name} is missing from the copy")
        source = read_source(path)
        lines = source.splitlines(keepends=True)
        _refuse_long_regions(name, lines, len(stub))  # before any parse, which costs many times the text
        regions = exercises.marked_regions(source, name)
        expected = {(region.number, region.title) for region in exercises.find_regions(stub, name)}
        if {(region.number, region.title) for region in regions} != expected:
            raise Refused(_markers_changed(stage, name, regions))
        restubbed = exercises.stub_out(source, regions, stage)
        if _comparable(restubbed) != _comparable(stub):
            notes.append(_as_handed_out_then(stage, name, source, restubbed, stub, recorded))
        stub_lines = {region.number: region.stub(stage) for region in regions}
        for region in regions:
            text = "".join(lines[region.start:region.end - 1])
            bodies[region.number] = Body(region.number, name, region.start + 1, text,
                                         text.strip() == stub_lines[region.number].strip(), region.indent)
    return bodies, next(iter(notes), "")


def _markers_changed(stage: str, name: str, regions: list) -> str:
    """Why the copy's markers are not the stage's: most often, a copy of another stage."""
    found = {(region.number, region.title) for region in regions}
    for other in sorted(path.parent.name for path in exercises.REPO_ROOT.glob("s[0-9][0-9]/agent.py")):
        if other != stage and name in stub_files(other) and found == {
                (region.number, region.title) for region in exercises.find_regions(stub_files(other)[name], name)}:
            return (f"this is a copy of {other}, not of {stage} (its exercises are {other}'s): grade it with "
                    f"`{exercises.course_command()} check {other} DIR`")
    return f"{name}: the exercise markers were changed; keep each '# >>> exercise N: TITLE' as it was"


def _as_handed_out_then(stage: str, name: str, source: str, restubbed: str, stub: str, recorded: dict) -> str:
    """The text outside the regions differs from the stage as it is now. A copy made from an earlier version
    of the course is graded when it is that version's file as handed out (git knows the version it names);
    otherwise it is refused, saying where it differs, or which versions differ and what to do."""
    commit, now = recorded.get("commit", ""), exercises.course_version()
    then = exercises.file_at(commit, stage, name) if commit and commit != now["commit"] else None
    if then is not None:
        try:
            then_stub = exercises.stub_out(then, exercises.find_regions(then, name), stage)
        except CourseError:
            then_stub = None
        if then_stub is not None and _comparable(restubbed) == _comparable(then_stub):
            return (f"made from course {exercises.version_name(recorded)}, graded against {exercises.version_name(now)}: "
                    f"{name} is as that version handed it out")
    try:  # a syntax error outside the regions says where it is, rather than a diff
        with _ONE_PARSE_AT_A_TIME:
            ast.parse(source, name)
    except SyntaxError as error:
        raise Refused(f"{name}, line {error.lineno}: {error.msg} (outside the exercise regions: only the code "
                      "between the markers is yours)") from None
    diff = list(difflib.unified_diff(_comparable(stub), _comparable(restubbed), f"{name} (as handed out)",
                                     f"{name} (this copy)", lineterm="", n=1))
    changed = next((line for line in diff[2:] if line[:1] in "+-"), "")
    if recorded and recorded.get("commit") != now["commit"]:
        raise Refused(f"{name} differs from the file as handed out: the copy was made from course "
                      f"{exercises.version_name(recorded)}, this course is {exercises.version_name(now)}; grade it with the "
                      f"course at that version (git checkout {recorded.get('tag') or recorded.get('commit', '?')[:12]})",
                      "\n".join(escape_terminal_controls(line) for line in diff[:40]))
    raise Refused(f"{name} was changed outside its exercise regions ({escape_terminal_controls(changed[:100])!r}); "
                  "only the code between the markers is yours (or the course changed since the copy was made: grade it "
                  "with the version it was made from)",
                  "\n".join(escape_terminal_controls(line) for line in diff[:40]))


# ---------------------------------------------------------------------------------------------
# A region's code, checked before it runs

BANNED_CALLS = {"eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars", "getattr", "setattr",
                "delattr", "breakpoint", "input", "exit", "quit", "help", "memoryview", "super", "attrgetter",
                "methodcaller",
                # dataclasses compiles code from a class's field names, which a region can build at run time
                # (a class made by type() with names of its choosing): code no check has read
                # (https://github.com/python/cpython/blob/3.11/Lib/dataclasses.py, _create_fn)
                "dataclass", "make_dataclass", "dataclasses"}
BANNED_MODULES = {"sys", "os", "gc", "inspect", "importlib", "builtins", "ctypes", "subprocess", "signal", "threading",
                  "multiprocessing", "atexit", "resource", "socket", "shutil", "tempfile", "pytest", "unittest",
                  "pickle", "_pickle", "marshal", "shelve", "copyreg"}  # what turns bytes into calls or code
BANNED_ATTRIBUTES = {"grading", "grading_jail", "grading_probes", "exercises", "scorecard_plugin", "exercise_text",
                     "confinement", "modules", "environ", "import_module", "exec", "eval", "system", "popen",
                     "attrgetter", "methodcaller", "vformat", "get_field", "Formatter"} | BANNED_MODULES
# A module reached as an attribute (course.importlib, json.codecs.builtins) is refused as the bare name is;
# this check is for a clear message, and the confinement, not this list, is what a copy cannot get past.
ALLOWED_DUNDERS = {"__name__", "__qualname__"}  # type(error).__name__ is how a message names an exception
FRAME_ATTRIBUTE = re.compile(r"^(f|gi|cr|ag|tb|co)_\w+$")
# A dunder reached by a name in a string: getattr's, a format field ("{0.__class__}"), a mapping pattern's
# key, the key of a dict passed as **keywords. A string may not name one at all.
DUNDER_IN_TEXT = re.compile(r"__[A-Za-z0-9]")
FORMATS = {"format", "format_map"}  # str.format reaches attributes by the names in its fields


def _attribute_refused(name: str) -> bool:
    return (name.startswith("_") and name not in ALLOWED_DUNDERS) or name in BANNED_ATTRIBUTES or bool(FRAME_ATTRIBUTE.match(name))


# The names are a list, and a list misses what it does not name: ``re.enum.bltns`` is the builtins module
# (enum imports it under that name), and ``bltns.getattr`` is no name the list refuses. So an attribute chain
# that starts at a name the stage's file binds by an import is also followed here, on the real objects of
# this process (a lookup in a module's or a class's own dict: no code of the copy runs, no module's
# __getattr__ is called): a step that is a module must be one the file itself imports or a submodule of
# one (or one of REACHABLE_MODULES), never builtins, and a step that is one of the builtins the list refuses is refused.
# A module is used through its attributes only (``m = re`` then ``m.enum`` would hide the chain from this).
REACHABLE_MODULES: set[str] = set()  # beside the ones a stage's file imports by name
_MISSING = object()
_NOT_IMPORTED = object()  # a submodule this process has not imported, or what a module's __getattr__ makes


@functools.lru_cache(maxsize=64)
def _imported_by(source: str) -> tuple[tuple[str, object], ...]:
    """(name, object) for each name the file's imports bind at its top, as this process has them (and
    ("", module) for each module an import names)."""
    import importlib
    with _ONE_PARSE_AT_A_TIME:
        tree = ast.parse(source)
    bound = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        try:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    module = importlib.import_module(alias.name)
                    bound.append(("", module))  # no name: "import course.sandbox.paths" binds course, and imports course.sandbox.paths
                    bound.append((alias.asname, module) if alias.asname else
                                 (alias.name.partition(".")[0], importlib.import_module(alias.name.partition(".")[0])))
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module != "__future__":
                module = importlib.import_module(node.module)
                for alias in node.names:
                    value = module.__dict__.get(alias.name, _MISSING)
                    if value is _MISSING:
                        value = importlib.import_module(f"{node.module}.{alias.name}")
                    bound.append((alias.asname or alias.name, value))
        except (ImportError, ValueError):  # what this process cannot import, no copy's child imports either
            continue
    return tuple(bound)


def _step(holder, name: str):
    """``holder.name`` as a plain lookup in the module's or the class's own dict; _MISSING when there is no such
    attribute (a region that uses it fails on its own); _NOT_IMPORTED for a submodule not imported here (but
    the support package's, which is imported to be followed) or a name a module's __getattr__ would make
    (what either is cannot be told without running it)."""
    import importlib
    import importlib.util
    import sys
    if isinstance(holder, types.ModuleType):
        value = holder.__dict__.get(name, _MISSING)
        if value is _MISSING and isinstance(holder.__dict__.get("__name__"), str):
            qualified = f"{holder.__name__}.{name}"
            value = sys.modules.get(qualified, _MISSING)
            if value is _MISSING and holder.__dict__.get("__path__") is not None:
                try:
                    spec = importlib.util.find_spec(qualified)
                except (ImportError, ValueError):
                    spec = None
                value = _MISSING if spec is None else _NOT_IMPORTED
                if spec is not None and qualified.partition(".")[0] == __package__.partition(".")[0]:  # the course's own: imported
                    try:
                        value = importlib.import_module(qualified)
                    except ImportError:
                        value = _NOT_IMPORTED
            if value is _MISSING and "__getattr__" in holder.__dict__:  # a module that makes attributes on demand
                value = _NOT_IMPORTED
                if holder.__name__.partition(".")[0] == __package__.partition(".")[0]:  # the support package's: its own code, run
                    try:
                        value = getattr(holder, name)
                    except AttributeError:
                        value = _MISSING
        return value
    if isinstance(holder, type):
        for klass in type.__dict__["__mro__"].__get__(holder):
            if name in klass.__dict__:
                return klass.__dict__[name]
    return _MISSING


def _refused_value(value, allowed: set) -> str:
    """Why a region may not reach ``value`` ("" when it may)."""
    import builtins
    if value is _NOT_IMPORTED:
        return "is not imported here (a module not loaded yet, or made on demand): where it goes cannot be followed"
    if isinstance(value, types.ModuleType):
        name = value.__dict__.get("__name__", "?")
        if value is builtins or name == "builtins":
            return "is the builtins module"
        if not any(name == module or name.startswith(module + ".") for module in allowed) \
                or name.partition(".")[0] in BANNED_MODULES:
            return f"is the module {name}, which the file does not import"
        return ""
    for banned in BANNED_CALLS:
        if value is builtins.__dict__.get(banned, _MISSING):
            return f"is the builtin {banned}"
    if isinstance(value, types.BuiltinFunctionType) and isinstance(value.__self__, types.ModuleType):
        owner = value.__self__
        if owner is builtins or _refused_value(owner, allowed):
            return f"is {owner.__dict__.get('__name__', '?')}.{value.__name__}, a function of a module the file does not import"
    return ""


def _chains_refused(tree: ast.AST, bound: dict) -> list[tuple[ast.AST, str]]:
    """(node, why) for each attribute chain from a name the file imports that reaches what a region may not."""
    modules = {value.__name__ for value in bound.values() if isinstance(value, types.ModuleType)}
    allowed = modules | REACHABLE_MODULES
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id in bound and isinstance(node.ctx, ast.Load)):
            continue
        value, shown, current = bound[node.id], node.id, node
        while True:
            parent = parents.get(current)
            if isinstance(value, types.ModuleType) and not (isinstance(parent, ast.Attribute) and parent.value is current):
                found.append((current, f"the module {shown!r} is for its attributes only in an exercise region "
                                       f"({shown}.NAME): as a value, where it goes cannot be followed"))
                break
            if not (isinstance(parent, ast.Attribute) and parent.value is current):
                break
            value, shown, current = _step(value, parent.attr), f"{shown}.{parent.attr}", parent
            if value is _MISSING:
                break
            if why := _refused_value(value, allowed):
                found.append((current, f"{shown!r} {why}: it is not for an exercise region"))
                break
            if not isinstance(value, (types.ModuleType, type)):
                break
    return found


# An annotation is code a library may run later, in the module's globals (pydantic evaluates a model's, the
# string ones included, when it builds the class; the stage files defer every annotation, so each is a
# string to it), and a library's base class, decorator or metaclass runs code of its own on a class. In a
# region, an annotation names builtin types only, and a class derives from builtin classes only.
ANNOTATION_NAMES = {name for name, value in vars(__import__("builtins")).items() if isinstance(value, type)}


def _annotation_problem(annotation: ast.AST | None) -> str:
    if annotation is None:
        return ""
    for node in ast.walk(annotation):
        if isinstance(node, ast.Constant) and node.value is not None:
            return "a string annotation is code a library may run later: in a region, annotate with builtin types"
        if isinstance(node, ast.Name) and node.id not in ANNOTATION_NAMES:
            return f"the annotation {node.id!r} is not a builtin type: in a region, annotate with builtin types only"
        if not isinstance(node, (ast.Name, ast.Constant, ast.Subscript, ast.Tuple, ast.BinOp, ast.BitOr, ast.Load)):
            return "an annotation in a region names builtin types only (int, list[str], dict | None)"
    return ""


def _class_problem(node: ast.ClassDef) -> str:
    if node.keywords or node.decorator_list:
        return "a class in an exercise region takes no decorator, metaclass or keyword: they run a library's code on it"
    for base in node.bases:
        if not (isinstance(base, ast.Name) and base.id in ANNOTATION_NAMES):
            return (f"a class in an exercise region derives from builtin classes only (not {ast.unparse(base)!r}): "
                    "a library's base class runs code of its own on the class")
    return ""


# CPython 3.11 keeps the AST constructor's recursion depth in state every thread shares, so two parses at
# once can fail with "SystemError: AST constructor recursion depth mismatch" (seen on 3.11.7, where a
# finalizer run by the garbage collector mid-parse lets another thread parse;
# https://github.com/python/cpython/issues/106905 is the same message). A lock of the grader's own does
# not help while course.grading.exercises parses under another, so every parse of the course takes that one lock,
# and grade_copies parses in the calling thread only, before any copy's exercises go to the threads.
_ONE_PARSE_AT_A_TIME = exercises._PARSING


def region_problems(body: Body, stage: str = "") -> list[str]:
    """What an exercise region may not do, each with its line in the student's file (with ``stage``, also
    the names that lead to where the support package holds the exercise's answer)."""
    elsewhere = grading_probes.ANSWERS_ELSEWHERE.get((stage, body.exercise), ())
    answers = {part for module, name in elsewhere for part in (module.rpartition(".")[2], name)}
    answer_paths = answers | {f"{module}.{name}" for module, name in elsewhere} | {module for module, _ in elsewhere}
    source = _dedented(body.text)
    try:
        with _ONE_PARSE_AT_A_TIME:
            tree = ast.parse(source)
    except SyntaxError as error:
        return [f"{body.file}, line {body.first_line + (error.lineno or 1) - 1}: {error.msg}"]
    if misplaced := _misindented(body, tree):
        return [misplaced]
    problems = []

    def say(node, what):
        problems.append(f"{body.file}, line {body.first_line + getattr(node, 'lineno', 1) - 1}: {what}")
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and (why := _class_problem(node)):
            say(node, why)
        elif isinstance(node, ast.AnnAssign) and (why := _annotation_problem(node.annotation)):
            say(node, why)
        elif isinstance(node, ast.arg) and (why := _annotation_problem(node.annotation)):
            say(node, why)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (why := _annotation_problem(node.returns)):
            say(node, why)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type" and (
                len(node.args) + len(node.keywords) > 1 or any(isinstance(arg, ast.Starred) for arg in node.args)):
            say(node, "type() with a class's name, bases and namespace makes a class no check has read: write a class "
                      "statement (of builtin bases) instead")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            say(node, "no import in an exercise region: use the names the module already has")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            say(node, f"no {type(node).__name__.lower()} in an exercise region: it changes only its own function")
        elif isinstance(node, ast.Name) and (node.id.startswith("__") or node.id in BANNED_CALLS | BANNED_MODULES):
            say(node, f"{node.id!r} is not for an exercise region")
        elif isinstance(node, ast.Attribute) and _attribute_refused(node.attr):
            say(node, f"'.{node.attr}' is not for an exercise region")
        elif isinstance(node, ast.Attribute) and node.attr in FORMATS and not isinstance(node.value, ast.Constant):
            say(node, f"'.{node.attr}' only on a string written out in the region: its fields can name attributes")
        elif isinstance(node, ast.MatchClass) and (refused := [name for name in node.kwd_attrs if _attribute_refused(name)]):
            say(node, f"'{refused[0]}=' in a class pattern reads that attribute: it is not for an exercise region")
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and (node.name or "").startswith("__"):
            say(node, f"{node.name!r} is not for an exercise region")
        elif isinstance(node, ast.keyword) and (node.arg or "").startswith("__"):
            say(node, f"the keyword {node.arg!r} is not for an exercise region")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name.startswith("__"):
            say(node, f"{node.name!r} is not for an exercise region")
        elif isinstance(node, ast.arg) and node.arg.startswith("__"):
            say(node, f"the parameter {node.arg!r} is not for an exercise region")
        elif isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and DUNDER_IN_TEXT.search(
                node.value if isinstance(node.value, str) else node.value.decode("latin-1")):
            say(node, "a string that names a dunder ('__...') is not for an exercise region")
        # No stage imports these by name: the way to them is an attribute (course.runtime.transcript.Loaded), or a string.
        elif (isinstance(node, ast.Attribute) and node.attr in answers) or (isinstance(node, ast.Constant)
                                                                           and node.value in answer_paths):
            named = node.attr if isinstance(node, ast.Attribute) else node.value
            where = next(f"{module}.{name}" for module, name in elsewhere if named in (name, module, f"{module}.{name}")
                         or module.endswith("." + named))
            say(node, f"{named!r} leads to {where}, which does this exercise's work: write it here")
    source_of_file = reference_files(stage).get(body.file) if stage else None
    if source_of_file is not None:  # after the names' messages, which say more where both refuse
        for node, why in _chains_refused(tree, dict(_imported_by(source_of_file))):
            say(node, why)
    return problems[:5]


def _misindented(body: Body, tree: ast.AST) -> str:
    """A statement that does not start at the markers' indentation would not fit the file (the copy's regions
    are found by their markers, not by a parse of the whole file, which a syntax error would fail whole)."""
    lines = body.text.splitlines()
    starts = sorted({node.lineno for node in ast.walk(tree) if isinstance(node, ast.stmt)})
    if not starts or not body.indent:  # a body read without its markers (a check of the text alone)
        return ""
    first = lines[starts[0] - 1]
    if first[:len(first) - len(first.lstrip())] != body.indent:
        return (f"{body.file}, line {body.first_line + starts[0] - 1}: exercise {body.exercise} must start at its "
                "markers' indentation (uneven indentation)")
    for number in starts:
        if not lines[number - 1].startswith(body.indent):
            return (f"{body.file}, line {body.first_line + number - 1}: this statement of exercise {body.exercise} "
                    "is indented less than its markers (uneven indentation)")
    return ""


def _dedented(text: str) -> str:
    lines = text.splitlines()
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return "\n".join(line[cut:] for line in lines) + "\n"


def assemble(stage: str, body: Body | None) -> dict[str, str]:
    """The reference stage with one region's body taken from the copy (None: the reference whole)."""
    files = reference_files(stage)
    if body is None:
        return files
    source = files[body.file]
    if body.file == EXTENSION_FILE:  # the extension's template is no module of the stage: its region is read here
        region = next(region for region in exercises.find_regions(source, body.file) if region.number == body.exercise)
    else:
        region = next(region for region in _regions(stage, _versions(stage))
                      if region.file == body.file and region.number == body.exercise)
    lines = source.splitlines(keepends=True)
    text = body.text if body.text.endswith("\n") else body.text + "\n"
    lines[region.start:region.end - 1] = [text]
    files[body.file] = "".join(lines)
    return files


# ---------------------------------------------------------------------------------------------
# Cases, children, judging

def draw_cases(stage: str, number: int, seed: int, extra_files=()) -> list[tuple[int, grading_probes.Case]]:
    """(probe index, case) for an exercise, drawn from the seed: the same for every copy of one run."""
    drawn = []
    for index, probe in enumerate(grading_probes.probes_for(stage, number, extra_files)):
        rng = random.Random(f"{seed}:{stage}:{number}:{index}")
        drawn += [(index, case) for case in probe.cases(rng)]
    # The order is drawn too: the cases' values change with the seed, and so does which comes first, so
    # that a copy that knows where it is in the run (a count kept in a file) still cannot answer by position.
    random.Random(f"{seed}:{stage}:{number}:order").shuffle(drawn)
    return drawn


@dataclass
class ChildRun:
    observations: dict
    import_error: str
    code: int
    printed: str
    seconds: float
    over_quota: str = ""  # what the copy passed in its scratch folder ("wrote more than 64 MB"), if it did
    cpu_seconds: float | None = None  # the CPU the copy had used when its time ran out
    too_much: str = ""  # the copy reported more than OBSERVATIONS_CAP: none of its observations was read


def run_child(stage: str, files: dict[str, str], module: str, jobs: list[dict], options: Options) -> ChildRun:
    with tempfile.TemporaryDirectory(prefix="course-grade-") as scratch:
        job = Path(scratch)
        package = job / "copy" / PACKAGE
        package.mkdir(parents=True)
        (job / "work").mkdir()
        (package / "__init__.py").write_text('"""A copy being graded."""\n', encoding="utf-8")
        for name, source in files.items():
            (package / name).write_text(source, encoding="utf-8")
        # The instructor's case files are copied into a folder of their own: the child may read those files
        # and nothing beside them (hidden solutions kept next to them stay hidden).
        probes_folder = job / "probes"
        probes_folder.mkdir()
        extra = []
        for position, path in enumerate(options.extra_tests):
            target = probes_folder / f"{position}-{Path(path).name}"
            target.write_bytes(Path(path).read_bytes())
            extra.append(str(target))
        order = {"stage": stage, "package": PACKAGE, "module": module, "cases": jobs, "probe_files": extra,
                 "readable": [str(probes_folder)] if extra else [], "report_cap": OBSERVATIONS_CAP}
        # Beside the copy, not in it: the child reads it before its confinement begins, and then cannot (the
        # copy's folder stays readable, and every case's inputs in it would let a case answer from the others).
        (job / "job.json").write_text(json.dumps(order), encoding="utf-8")
        started = time.perf_counter()
        code = grading_jail.run(job, options.limits, options.confine)
        seconds = time.perf_counter() - started
        observations, import_error, too_much = {}, "", ""
        path = job / "work" / "observations.jsonl"
        if path.is_file():
            with path.open("rb") as handle:
                data = handle.read(OBSERVATIONS_CAP + 1)
            if len(data) > OBSERVATIONS_CAP:  # not parsed at all: its objects would cost the grader many times its size
                data, too_much = b"", f"reported more than {OBSERVATIONS_CAP >> 20} MB of observations"
            # Lines end at "\n" only, as the worker wrote them (each one json.dumps made, so holding no raw line
            # break); str.splitlines would also break at "\r" or U+2028 inside one case's line.
            for line in data.decode("utf-8", errors="replace").split("\n"):
                try:
                    item = json.loads(line)
                except (ValueError, RecursionError, MemoryError):  # nesting deep enough to exhaust the stack
                    continue
                if not isinstance(item, dict):
                    continue
                if "import_error" in item and not import_error:
                    import_error = str(item["import_error"])
                if item.get("too_much") is True:  # one case's fork wrote more than the bound before its line
                    too_much = f"reported more than {OBSERVATIONS_CAP >> 20} MB of observations"
                case = item.get("case")
                if isinstance(case, int) and not isinstance(case, bool) and case not in observations and "observed" in item:
                    observations[case] = item["observed"]
        printed_path = job / "work" / "printed.txt"
        printed = ""
        setup = job / "work" / "setup-error.txt"
        if code == grading_jail.SETUP_FAILED and setup.is_file() and not import_error and not observations:
            import_error = "the grader could not start the copy: " + setup.read_text(encoding="utf-8", errors="replace")[:500]
        if printed_path.is_file():
            with printed_path.open("rb") as handle:
                printed = handle.read(options.limits.output_cap + 1).decode("utf-8", errors="replace")
        note = job / "work" / grading_jail.OVER_QUOTA_NOTE
        over_quota = note.read_text(encoding="utf-8")[:100] if code == grading_jail.WROTE_TOO_MUCH and note.is_file() else ""
        cpu_seconds = None
        if code == grading_jail.TIMED_OUT and (job / "work" / grading_jail.CPU_NOTE).is_file():
            try:
                cpu_seconds = float((job / "work" / grading_jail.CPU_NOTE).read_text(encoding="utf-8")[:20])
            except ValueError:
                pass
    return ChildRun(observations, import_error, code, printed, seconds, over_quota, cpu_seconds, too_much)


_REFERENCE: dict = {}
_REFERENCE_LOCK = threading.Lock()


def reference_observations(stage: str, number: int, seed: int, options: Options) -> dict:
    """The reference stage's observations of an exercise's cases, {position: observation}. The reference
    holds no student code, so every exercise of the stage judged against it through the same module is
    observed in one child, once per stage, seed and version."""
    module = _driven_module(stage, number, options)
    numbers = sorted({found for named, found in grading_probes.PROBES if named == stage})
    group = tuple(found for found in numbers if _judged_by_reference(stage, found, options)
                  and _driven_module(stage, found, options) == module)
    key = (stage, group, seed, tuple(options.extra_tests), _versions(stage))
    with _REFERENCE_LOCK:
        lock = _REFERENCE.setdefault(("lock",) + key, threading.Lock())
    with lock:
        if key not in _REFERENCE:
            jobs, places = [], []
            for found in group:
                drawn = draw_cases(stage, found, seed, options.extra_tests)
                jobs += [{"exercise": found, "probe": index, "params": case.params} for index, case in drawn]
                places += [(found, position) for position in range(len(drawn))]
            run = run_child(stage, assemble(stage, None), module, jobs, options)
            if run.code == grading_jail.TIMED_OUT and not run.import_error:
                # The reference ran out of time: a machine too loaded (a class graded with many --jobs), never a
                # copy's doing, so it is given once more with twice the time before any copy is failed for it.
                longer = dataclasses.replace(options, limits=dataclasses.replace(options.limits, seconds=2 * options.limits.seconds))
                run = run_child(stage, assemble(stage, None), module, jobs, longer)
            if run.import_error or len(run.observations) < len(jobs):
                # Kept like an observation, so the next copy fails at once rather than waiting as long again.
                _REFERENCE[key] = CourseError(
                    f"the reference {stage} could not be observed for exercises {', '.join(map(str, group))} "
                    f"({run.import_error or f'{len(run.observations)} of {len(jobs)} cases, exit {run.code}'}; "
                    f"not the copy's doing: grade again with fewer --jobs or a longer --time-limit): {run.printed[-300:]}")
            else:
                observed = {found: {} for found in group}
                for place, (found, position) in enumerate(places):
                    observed[found][position] = run.observations[place]
                _REFERENCE[key] = observed
        if isinstance(_REFERENCE[key], CourseError):
            raise _REFERENCE[key]
        return _REFERENCE[key][number]


def _driven_module(stage: str, number: int, options: Options) -> str:
    probes = grading_probes.probes_for(stage, number, options.extra_tests)
    return probes[0].module if probes else "agent"


def _judged_by_reference(stage: str, number: int, options: Options) -> bool:
    return any(probe.uses_reference for probe in grading_probes.probes_for(stage, number, options.extra_tests))


@dataclass
class Prepared:
    """An exercise of a copy made ready to run: its cases, and the files of its child (or its result, when
    nothing needs to run). Made in the calling thread, which parses; the threads only run and judge."""
    exercise: Exercise
    drawn: list
    max_points: float
    files: dict = field(default_factory=dict)
    result: ExerciseResult | None = None


def prepare_exercise(exercise: Exercise, body: Body | None, seed: int, options: Options) -> Prepared:
    max_points = float(options.points.get((exercise.stage, exercise.number), 1.0))
    drawn = draw_cases(exercise.stage, exercise.number, seed, options.extra_tests)
    ready = Prepared(exercise, drawn, max_points)
    if not drawn:
        ready.result = ExerciseResult(exercise, [], 0.0, max_points, reason="no cases for this exercise (a grader bug)")
    elif body is None:
        ready.result = _all_failed(exercise, drawn, max_points, f"{exercise.file} is not in the copy")
    elif body.is_stub:
        ready.result = _all_failed(exercise, drawn, max_points, "still the stub: write the code between the markers")
    elif problems := (region_problems(body, exercise.stage) if options.check_regions else []):
        ready.result = _all_failed(exercise, drawn, max_points, problems[0])
    else:
        ready.files = assemble(exercise.stage, body)
    return ready


def run_and_judge(ready: Prepared, seed: int, options: Options) -> ExerciseResult:
    """Run a prepared exercise in its confined child and judge what it observed."""
    if ready.result is not None:
        return ready.result
    exercise, drawn = ready.exercise, ready.drawn
    probes = grading_probes.probes_for(exercise.stage, exercise.number, options.extra_tests)
    jobs = [{"exercise": exercise.number, "probe": index, "params": case.params} for index, case in drawn]
    run = run_child(exercise.stage, ready.files, probes[0].module, jobs, options)
    wants = reference_observations(exercise.stage, exercise.number, seed, options) \
        if _judged_by_reference(exercise.stage, exercise.number, options) else {}
    cases = []
    for position, (index, case) in enumerate(drawn):
        if run.code == grading_jail.WROTE_TOO_MUCH:  # its run was cut short: no case of it counts
            reason = (f"the copy {run.over_quota or 'wrote too much'} in its scratch folder and was stopped "
                      f"(a copy may write {options.limits.disk_mb} MB, in at most {options.limits.files} files)")
        elif run.too_much:
            reason = f"the copy {run.too_much} (at most {OBSERVATIONS_CAP >> 20} MB are read back): none was judged"
        elif run.import_error:
            reason = f"the copy does not import: {run.import_error}"
        elif position not in run.observations:
            reason = _missing(run, position, options)
        else:
            try:
                reason = probes[index].judge(case, run.observations[position], wants.get(position)) or ""
            except Exception as error:  # an observation of a shape no judge expects is simply wrong
                reason = f"an answer of an unexpected shape ({type(error).__name__}: {error})"
        cases.append(CaseResult(case.name, case.group, not reason, reason))
    return _scored(exercise, cases, ready.max_points, run.seconds, run.printed)


def _failed_to_judge(exercise: Exercise, seed: int, options: Options, error: Exception) -> ExerciseResult:
    """Whatever goes wrong with one exercise of one copy fails it, with its reason, and no other copy's grade."""
    drawn = draw_cases(exercise.stage, exercise.number, seed, options.extra_tests)
    return _all_failed(exercise, drawn, float(options.points.get((exercise.stage, exercise.number), 1.0)),
                       f"the grader could not judge this copy: {type(error).__name__}: {error}")


def _prepared_alone(exercise: Exercise, body: Body | None, seed: int, options: Options) -> Prepared:
    try:
        return prepare_exercise(exercise, body, seed, options)
    except Exception as error:
        return Prepared(exercise, [], 0.0, result=_failed_to_judge(exercise, seed, options, error))


def _judged_alone(ready: Prepared, seed: int, options: Options) -> ExerciseResult:
    try:
        return run_and_judge(ready, seed, options)
    except Exception as error:
        return _failed_to_judge(ready.exercise, seed, options, error)


def _missing(run: ChildRun, position: int, options: Options) -> str:
    first_missing = position == min(set(range(position + 1)) - set(run.observations))
    if run.code == grading_jail.TIMED_OUT:
        if not first_missing:
            return "not reached before the time limit"
        limit = options.limits.seconds
        if run.cpu_seconds is None:
            return f"still running at the time limit ({limit:g} s): does a loop never end?"
        # The CPU the case used, against a bound that a loaded machine still lets a loop reach: a loop that
        # never ends computes whenever it is scheduled (a twentieth of a core is enough to pass the bound),
        # a wait computes nothing, and right code that was starved used less than it needs (about a second).
        if run.cpu_seconds >= min(limit / 2, max(1.0, limit / 20)):
            return f"still running at the time limit ({limit:g} s), computing all along ({run.cpu_seconds:.1f} s of CPU): does a loop never end?"
        # Little CPU in all that time: the copy waited, or the machine was too busy to run it. Right code on
        # a loaded machine must not lose its points without a word: the line says to grade it again.
        return (f"still running at the time limit ({limit:g} s), with only {run.cpu_seconds:.1f} s of CPU used: it waited "
                f"(a sleep, a read that never ends), or the machine was too loaded to run it; grade it again with a "
                f"longer --time-limit to tell which")
    if run.code == grading_jail.SIGNALLED:
        return "the copy's process was killed (out of memory, or a signal it sent itself)"
    # Each case runs in a process of its own: one that ended early took only its own case with it (exit 0),
    # unless it ended the process that runs the cases.
    return "the copy ended the process before this case was done (sys.exit, os._exit, or a crash)" \
        if first_missing or run.code == 0 else "not run: the process had ended"


def _all_failed(exercise, drawn, max_points, reason) -> ExerciseResult:
    return _scored(exercise, [CaseResult(case.name, case.group, False, reason) for _, case in drawn], max_points, 0.0, "")


def _scored(exercise, cases, max_points, seconds, printed) -> ExerciseResult:
    groups = sorted({case.group for case in cases})
    passed_groups = [group for group in groups if all(case.passed for case in cases if case.group == group)]
    points = round(max_points * len(passed_groups) / len(groups), 2) if groups else 0.0
    failed = next((case for case in cases if not case.passed), None)
    reason = one_line(f"{failed.reason} (case: {failed.name})") if failed else ""
    return ExerciseResult(exercise, cases, points, max_points, seconds, reason, printed)


def one_line(text: str, limit: int = REASON_LIMIT) -> str:
    """One line, at most ``limit`` characters; the case name in parentheses at the end goes first."""
    text = " ".join(escape_terminal_controls(text).split())
    if len(text) <= limit:
        return text
    reason, _, case = text.rpartition(" (case: ")
    if reason and len(reason) < limit - 10:
        return (reason + " (case: " + case)[:limit - 2] + "…)"
    return text[:limit - 1] + "…"


# ---------------------------------------------------------------------------------------------
# Copies and classes

def grade_copies(copies: list[tuple], options: Options) -> list[CopyGrade]:
    """Grade (student, stage, folder) copies side by side on the machine's cores. A fourth item, when it is
    not empty, is why that copy cannot be graded (``find_copies``): it scores 0 with that reason, and a
    stage of "" (none could be told) is a row of its own."""
    seed = options.seed_value()
    unavailable = grading_jail.available() if options.confine else "turned off"
    options.confine = options.confine and not unavailable
    confinement = ("confined: namespaces, Landlock, seccomp, rlimits" if options.confine
                   else f"NOT CONFINED ({unavailable}): a copy could change its own grade")
    if options.confine and not grading_jail.namespaces_available():
        confinement = ("confined: Landlock, seccomp, rlimits; no namespaces here (unprivileged user namespaces are "
                       "refused), so UDP is not refused and leftover processes are ended by a subreaper")
    if options.confine and grading_jail.stages_readable():
        confinement += "; WARNING: the reference stages lie inside the Python a copy can read (install the course with pip install -e)"
    grades, tasks = [], []
    owned = not _PINNED  # a caller that pinned the stages (the benchmark) keeps its own reading
    if owned:
        pin_versions(copy[1] for copy in copies if copy[1])
    for student, stage, folder, *problem in copies:
        grade = CopyGrade(student, stage, Path(folder), [], seed, confinement=confinement)
        grades.append(grade)
        try:
            if problem and problem[0]:
                raise Refused(problem[0])
            bodies, grade.note = read_copy_noted(stage, Path(folder))
            prepared = [_prepared_alone(exercise, bodies.get(exercise.number), seed, options)  # parsed here, in
                        for exercise in stage_exercises(stage)]                              # this thread: see _ONE_PARSE_AT_A_TIME
        except Exception as error:  # nothing in one copy ends the class's run (a parse too deep, an odd file)
            if not isinstance(error, CourseError):
                error = Refused(one_line(f"the grader could not read this copy: {type(error).__name__}: {error}"))
            grade.refused = str(error)
            detail = getattr(error, "detail", "")
            for exercise in stage_exercises(stage) if stage else []:
                grade.results.append(_all_failed(exercise, draw_cases(stage, exercise.number, seed, options.extra_tests),
                                                 float(options.points.get((stage, exercise.number), 1.0)),
                                                 f"refused: {error}"))
                grade.results[-1].printed = detail
            continue
        tasks += [(grade, one) for one in prepared]
    workers = options.jobs or os.cpu_count() or 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        done = list(pool.map(lambda task: (task[0], _judged_alone(task[1], seed, options)), tasks))
    for grade, result in done:
        grade.results.append(result)
    for grade in grades:
        grade.results.sort(key=lambda result: result.exercise.number)
    if owned:
        _PINNED.clear()
    return grades


STAGE_NAME = re.compile(r"s\d\d")


def only_stages(copies: list[tuple], wanted: set[str]) -> list[tuple]:
    """The copies of the ``wanted`` stages (``grade --stages``), and, for a student who has no copy of one of
    them, a row of 0 points for it that says what was found instead: an easier stage handed in for the
    assignment's (an s00 in a folder named ``hw``) is a 0 of the assignment, never a student left out. A
    student whose folder held no copy at all has that row already (find_copies)."""
    kept = [copy for copy in copies if copy[1] in wanted]
    for student in dict.fromkeys(copy[0] for copy in copies):
        theirs = [copy for copy in copies if copy[0] == student]
        if nothing := next((copy for copy in theirs if not copy[1]), None):
            # no copy at all (a repository that could not be cloned, an empty folder): 0 of each stage's
            # points, with the reason, so that the gradebook's maximum is the same for every student
            kept += [(student, stage, nothing[2], nothing[3] if len(nothing) > 3 else "no copy") for stage in sorted(wanted)]
            continue
        others = [copy for copy in theirs if copy[1] not in wanted]
        found = ", ".join(f"{copy[1]} in {printable_name(str(copy[2]))}" for copy in others[:3]) or "nothing"
        for stage in sorted(wanted - {copy[1] for copy in theirs}):
            kept.append((student, stage, theirs[0][2], f"no copy of {stage} (found {found}): hand in {stage}"))
    return kept


def find_copies(paths: list[str], student: str | None = None) -> list[tuple[str, str, Path, str]]:
    """Every copy under the paths, as (student, stage, folder, problem): ``problem`` is "" for a copy to grade,
    else the one line that is that student's row (0 points). Which folder is a student's is decided from the
    paths given, never from what a student's folder holds (which the student made):

    - with ``student`` (CI: one student's repository), every copy under every path is that student's;
    - a path named like a stage that holds agent.py (``CLASS/ana/s03``) is one copy, the folder above names it;
    - several paths (``grade CLASS/*``): each is one student's folder, named by its own name;
    - one path: a class folder, each folder directly under it a student named by that folder's name,
      whatever it holds or is called (a student's folder named ``s03`` is the student "s03", never a
      sign that the class folder is one student's: one student's folder is graded with ``student``).

    Two students are one only if their folders have the same name in the same folder: ``ana`` of two
    sections (``grade secA/* secB/*``) are "secA/ana" and "secB/ana", and two names that print alike
    (``jos\xe9`` in Latin-1 and ``jos\\xe9``; a name with an invisible character; an NFD ``josé`` and the NFC
    one; a Cyrillic ``а`` for a Latin ``a``) keep a hash each.

    Nothing in one student's folder ends the run or names another student: two copies of one stage, a copy
    of no stage of this course, a link where the folder should be, a folder with no copy, each is that
    student's own row."""
    given = [Path(path) for path in paths]
    for path in given:
        if not os.path.lexists(path):
            raise CourseError(f"{path} does not exist")
    students: list[tuple[str, Path, bool]] = []  # (name, folder, whether the folder is itself one copy)
    for path in given:
        own_name = Path(os.path.abspath(path)).name  # abspath, not resolve: a link is not named by its target
        holds_agent = (path / "agent.py").is_file()  # a folder named agent.py is no copy
        if student is not None:
            students.append((student, path, False))
        elif STAGE_NAME.fullmatch(own_name) and holds_agent:
            students.append((Path(os.path.abspath(path)).parent.name, path, True))
        elif len(given) > 1 or os.path.islink(path):
            students.append((own_name, path, False))
        elif not os.path.isdir(path):
            raise CourseError(f"{path} is not a folder")
        else:
            for entry in sorted(os.scandir(path), key=lambda entry: entry.name):
                if not entry.name.startswith(".") and (entry.is_symlink() or entry.is_dir(follow_symlinks=False)):
                    students.append((entry.name, Path(entry.path), False))  # a file beside them (a roster) is no student
    by_student: dict[str, list] = {}
    for name, folders in _named_apart(students, one_student=student is not None).items():
        by_student[name] = folders
    known = {found.parent.name for found in exercises.REPO_ROOT.glob("s[0-9][0-9]/agent.py")}
    found = []
    for name, folders in by_student.items():
        copies, problems = {}, []
        for folder, one_copy in folders:
            if os.path.islink(folder):
                problems.append(("", folder, f"{printable_name(str(folder))} is a symbolic link: hand in the folder itself"))
                continue
            if not os.path.isdir(folder):
                problems.append(("", folder, f"{printable_name(str(folder))} is not a folder"))
                continue
            try:
                agents = [folder / "agent.py"] if one_copy else _agents_under(folder)
            except OSError as error:
                problems.append(("", folder, f"cannot read {printable_name(str(folder))}: {error.strerror or error}"))
                continue
            for agent in agents:
                stage = _stage_of(agent)
                where = printable_name(str(agent.parent))
                folder_says = agent.parent.name if STAGE_NAME.fullmatch(agent.parent.name) else None
                if stage and folder_says and stage != folder_says:  # an easier stage handed in as a harder one
                    problems.append(("", agent.parent, f"{where}: the folder says {folder_says}, its agent.py says {stage}: "
                                                       "hand in the stage the folder names"))
                elif stage is None:
                    problems.append(("", agent.parent, f"{where}: no STAGE line in agent.py and not a stage folder (sNN)"))
                elif stage not in known:
                    problems.append(("", agent.parent, f"{where}: {stage} is not a stage of this course"))
                elif os.path.abspath(agent.parent) not in {os.path.abspath(other) for other in copies.get(stage, [])}:
                    copies.setdefault(stage, []).append(agent.parent)
        for stage, places in sorted(copies.items()):
            if len(places) == 1:
                found.append((name, stage, places[0], ""))
            else:
                shown = " and ".join(printable_name(str(place)) for place in places[:3])
                found.append((name, stage, places[0], f"{len(places)} copies of {stage} in one student's folder ({shown}"
                              f"{', ...' if len(places) > 3 else ''}): keep one"))
        if problems:  # one row for all of them: a student has one file per stage, and these have none
            found.append((name, "", problems[0][1], one_line("; ".join(problem for _, _, problem in problems))))
        if not copies and not problems:
            found.append((name, "", folders[0][0], "no copy: a copy is a folder holding agent.py (STUDENT/sNN/agent.py)"))
    if not found:
        raise CourseError(f"no student copy (a folder with agent.py) under {', '.join(paths)}")
    return found


def _named_apart(students: list[tuple[str, Path, bool]], one_student: bool) -> dict[str, list[tuple[Path, bool]]]:
    """{the name a student is shown by: their (folder, whether it is one copy)}: a student is a name in a
    folder (the folder above a copy given itself), so the same name under two folders is two students, shown
    with their folder's name; two names that print alike (the same _skeleton) are two students too, each shown
    with a hash."""
    grouped: dict[tuple[str, str], list] = {}
    for name, folder, one_copy in students:
        holder = "" if one_student else os.path.dirname(os.path.abspath(folder.parent if one_copy else folder))
        grouped.setdefault((name, holder), []).append((folder, one_copy))
    names = {}
    for name, holder in grouped:
        shown = printable_name(name)
        if sum(other == name for other, _ in grouped) > 1:  # one name in several folders: say which
            shown = f"{printable_name(os.path.basename(holder))}/{shown}"
        names[name, holder] = shown
    printed = [_skeleton(shown) for shown in names.values()]
    for key, shown in names.items():
        if printed.count(_skeleton(shown)) > 1:  # alike in print, not in bytes
            raw = key[0].encode("utf-8", "surrogatepass") + b"\0" + key[1].encode("utf-8", "surrogatepass")
            names[key] = f"{shown} ~{hashlib.sha256(raw).hexdigest()[:6]}"
    return {names[key]: folders for key, folders in grouped.items()}


def _skeleton(shown: str) -> str:
    """What a shown name looks like, to compare two by: its compatibility form (NFKC: an NFD ``josé`` is the
    NFC one, a full-width ａ is a), case folded, each look-alike letter as the Latin one it is drawn as
    (Cyrillic а as a: the letters s06's approval screen knows, course.sandbox.approval.LOOKS_LIKE, from Unicode's
    confusables, https://www.unicode.org/reports/tr39/#Confusable_Detection), and spaces run together."""
    from course.sandbox.approval import LOOKS_LIKE
    text = "".join(LOOKS_LIKE.get(character, character) for character in unicodedata.normalize("NFKC", shown).casefold())
    return " ".join(text.casefold().split())


COPY_DEPTH = 8  # how deep under a student's folder a copy is looked for (a repository's sNN/agent.py is 2)


def _agents_under(folder: Path) -> list[Path]:
    """Every agent.py under the folder, at most COPY_DEPTH folders down, links not followed: a walk without
    recursion, so that a chain of folders a student made thousands deep ends nothing."""
    found, waiting = [], [(folder, 0)]
    while waiting:
        current, depth = waiting.pop()
        with os.scandir(current) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if depth < COPY_DEPTH:
                        waiting.append((Path(entry.path), depth + 1))
                elif entry.name == "agent.py":
                    found.append(Path(entry.path))
    return sorted(found)


def printable_name(name: str) -> str:
    """A file name as text that can be written and printed: bytes that are not UTF-8 as \\xNN escapes."""
    try:
        text = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate no file name holds (a copy's own text): shown as its escape
        text = name.encode("utf-8", "backslashreplace").decode("utf-8")
    # What draws nothing or moves the text (a zero-width space, a control, a line separator) is shown as its
    # escape too: "bob\u200b" is not a second bob.
    return "".join(f"\\u{ord(character):04x}" if unicodedata.category(character) in INVISIBLE
                   or (unicodedata.category(character) == "Zs" and character != " ") else character for character in text)


INVISIBLE = {"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"}


def _stage_of(agent: Path) -> str | None:
    try:
        match = re.search(r'^STAGE = "(s\d\d)"', read_source(agent), re.MULTILINE)
    except CourseError:
        match = None
    if match:
        return match[1]
    return agent.parent.name if re.fullmatch(r"s\d\d", agent.parent.name) else None


def parse_points(specs: list[str]) -> dict:
    """``s03:1=4`` (or several, comma-separated): exercise 1 of s03 is worth 4 points."""
    points = {}
    for spec in specs:
        for item in filter(None, spec.split(",")):
            match = re.fullmatch(r"\s*(s\d\d):(\d+)=(\d+(?:\.\d+)?)\s*", item)
            if not match:
                raise CourseError(f"--points takes STAGE:EXERCISE=POINTS, e.g. s03:1=4; got {item!r}")
            points[match[1], int(match[2])] = float(match[3])
    return points


# ---------------------------------------------------------------------------------------------
# What is shown

def scorecard(grade: CopyGrade, whole: bool = False) -> str:
    width = max((len(_label(result)) for result in grade.results), default=0)
    text = [f"{grade.stage} scorecard for {shown_line(str(grade.folder))}  (seed {grade.seed}: "
            f"add --seed {grade.seed} to draw the same cases; {grade.confinement})"]
    for result in grade.results:
        passed = sum(case.passed for case in result.cases)
        verdict = "PASSED" if result.passed else "FAILED"
        text.append(f"  {_label(result):<{width}}  {verdict}  {passed} of {len(result.cases)} cases, "
                    f"{result.points:g} of {result.max_points:g} points")
    solved = sum(result.passed for result in grade.results)
    text.append(f"total: {solved} of {len(grade.results)} exercises passed; {grade.points:g} of {grade.max_points:g} points")
    if grade.note:
        text.append(f"note: {shown_line(grade.note)}")
    if grade.refused:
        text.append(f"refused: {shown_line(grade.refused)}")
        detail = grade.results[0].printed if grade.results else ""
        text += [f"  {line}" for line in detail.splitlines()]
        return "\n".join(text)
    failing = [result for result in grade.results if not result.passed]
    if failing:
        text.append("why:")
    for result in failing:
        if whole:
            text.append(f"  exercise {result.exercise.number}:")
            text += [f"    {'ok  ' if case.passed else 'FAIL'} {shown_line(case.name)}"
                     + ("" if case.passed else f": {shown_line(case.reason)}") for case in result.cases]
        else:
            text.append(f"  exercise {result.exercise.number}: {result.reason}")
    for result in grade.results:
        if result.printed.strip():
            shown = result.printed[:2000]
            text.append(f"exercise {result.exercise.number} printed ({len(result.printed)} characters"
                        + (", the first 2000 shown" if len(result.printed) > 2000 else "") + "):")
            text += [f"  | {escape_terminal_controls(line)}" for line in shown.splitlines()[:40]]
    return "\n".join(text)


def shown_line(text: str) -> str:
    """Text shown as one line whatever it holds: a reason with a newline in it cannot add lines of its own
    (a forged "total:" line) to a scorecard."""
    return escape_terminal_controls(text).replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")


def _label(result: ExerciseResult) -> str:
    kind = " (extension)" if result.exercise.extension else ""
    return f"exercise {result.exercise.number}{kind}: {result.exercise.title}"


def rows(grades: list[CopyGrade]) -> list[dict]:
    """One row per exercise of each copy; a copy refused before any exercise (no stage could be told) is one
    row of 0 points with its reason, so that every student the run found is in the gradebook."""
    return [{"student": grade.student, "stage": grade.stage, "exercise": result.exercise.number,
             "title": result.exercise.title, "extension": result.exercise.extension,
             "points": result.points, "max_points": result.max_points,
             "passed": sum(case.passed for case in result.cases), "failed": sum(not case.passed for case in result.cases),
             "seconds": round(result.seconds, 2), "reason": result.reason or grade.refused, "seed": grade.seed}
            for grade in grades for result in (grade.results or [_nothing_graded(grade)])]


def _nothing_graded(grade: CopyGrade) -> ExerciseResult:
    return ExerciseResult(Exercise(grade.stage, 0, "(nothing could be graded)", ""), [], 0.0, 0.0,
                          reason=one_line(f"refused: {grade.refused}"))


def as_json(grades: list[CopyGrade]) -> dict:
    return {"seed": grades[0].seed if grades else None, "confinement": grades[0].confinement if grades else "",
            "copies": [{"student": grade.student, "stage": grade.stage, "folder": str(grade.folder),
                        "points": grade.points, "max_points": grade.max_points, "refused": grade.refused,
                        "exercises": [{"exercise": r.exercise.number, "title": r.exercise.title, "points": r.points,
                                       "max_points": r.max_points, "passed": r.passed, "seconds": round(r.seconds, 2),
                                       "reason": r.reason, "printed": r.printed[:2000],
                                       "cases": [dataclasses.asdict(case) for case in r.cases]}
                                      for r in grade.results]} for grade in grades],
            "rows": rows(grades)}


COLUMNS = ["student", "stage", "exercise", "title", "extension", "points", "max_points", "passed", "failed",
           "seconds", "reason", "seed"]


def write_gradebook(grades: list[CopyGrade], out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    book_csv, book_json = out / "gradebook.csv", out / "gradebook.json"
    # A folder's name can hold bytes that are not UTF-8 (os.fsdecode makes them surrogates): written as escapes.
    with book_csv.open("w", newline="", encoding="utf-8", errors="backslashreplace") as handle:
        # Every field quoted: a spreadsheet that splits on ';' (its locale's separator) then keeps "x;=1+1" one
        # cell, which begins with x (OWASP's CSV injection advice: https://owasp.org/www-community/attacks/CSV_Injection).
        writer = csv.DictWriter(handle, COLUMNS, quoting=csv.QUOTE_ALL)
        writer.writeheader()
        writer.writerows({column: spreadsheet_text(value) for column, value in row.items()} for row in rows(grades))
    book_json.write_text(json.dumps(as_json(grades), ensure_ascii=False, indent=1), encoding="utf-8", errors="backslashreplace")
    write_wide_gradebook(grades, out / WIDE_GRADEBOOK)
    cards = out / "scorecards"
    cards.mkdir(exist_ok=True)
    for grade in grades:
        (cards / f"{file_name(grade.student)}-{grade.stage or 'none'}.txt").write_text(
            scorecard(grade, whole=True) + "\n", encoding="utf-8", errors="backslashreplace")
    return book_csv, book_json


WIDE_GRADEBOOK = "gradebook-by-student.csv"


def wide_rows(grades: list[CopyGrade]) -> tuple[list[str], list[dict]]:
    """A row per student: each stage's points, each stage's maximum, and the totals (the spreadsheet an
    instructor copies into a course's gradebook; the long gradebook keeps a row per exercise)."""
    stages = sorted({grade.stage for grade in grades if grade.stage})
    columns = ["student"] + [f"{stage} {what}" for stage in stages for what in ("points", "max")] + ["points", "max_points"]
    table: dict[str, dict] = {}
    for grade in grades:
        row = table.setdefault(grade.student, {"student": grade.student, "points": 0.0, "max_points": 0.0})
        if grade.stage:
            row[f"{grade.stage} points"] = round(row.get(f"{grade.stage} points", 0.0) + grade.points, 2)
            row[f"{grade.stage} max"] = round(row.get(f"{grade.stage} max", 0.0) + grade.max_points, 2)
        row["points"] = round(row["points"] + grade.points, 2)
        row["max_points"] = round(row["max_points"] + grade.max_points, 2)
    return columns, list(table.values())


def write_wide_gradebook(grades: list[CopyGrade], path: Path) -> Path:
    columns, table = wide_rows(grades)
    with path.open("w", newline="", encoding="utf-8", errors="backslashreplace") as handle:
        writer = csv.DictWriter(handle, columns, quoting=csv.QUOTE_ALL, restval="")
        writer.writeheader()
        writer.writerows({column: spreadsheet_text(value) for column, value in row.items()} for row in table)
    return path


def file_name(student: str) -> str:
    """A student's name as a file name of its own: kept when it is plain (lower-case letters, digits, ``._-``),
    else cleaned and followed by ``~`` and a hash of the whole name. A plain name holds no ``~``, and two
    names cleaned alike (``ana~b``, ``ana b``) differ in their hash, so no student's file overwrites
    another's, on a file system that ignores case too."""
    if re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,63}", student):
        return student
    digest = hashlib.sha256(student.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return re.sub(r"[^A-Za-z0-9._-]+", "_", student)[:48].lower() + "~" + digest


def spreadsheet_text(value):
    """A cell a spreadsheet shows as text: a student's folder named ``=HYPERLINK(...)`` is not run as a formula
    when the gradebook is opened (https://owasp.org/www-community/attacks/CSV_Injection)."""
    if isinstance(value, str) and (value[:1] in ("=", "+", "-", "@", "\t", "\r")
                                   or value.lstrip()[:1] in FORMULA_STARTS):
        return "'" + value
    return value


# A formula's first character, after any blanks a spreadsheet may skip, in ASCII and as the full-width forms an
# input method types (U+FF1D ＝, U+FF0B ＋, U+FF0D －, U+FF20 ＠), which a spreadsheet may take for them.
FORMULA_STARTS = ("=", "+", "-", "@", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def summary_markdown(grades: list[CopyGrade]) -> str:
    """For a CI job summary (GitHub Flavored Markdown): one table, then each copy's scorecard in a code block.
    A student's name and folder are theirs to choose, so each is shown as code, where Markdown and HTML are
    only text: an ``<img onerror=...>`` or a ``|`` in a folder's name stays those characters. (A stage is
    always sNN: find_copies reads it with that pattern.)"""
    lines = ["| student | stage | points | exercises passed |", "|---|---|---|---|"]
    for grade in grades:
        lines.append(f"| {code_span(grade.student, in_table=True)} | {grade.stage} | "
                     f"{grade.points:g} of {grade.max_points:g} | {sum(r.passed for r in grade.results)} of {len(grade.results)} |")
    for grade in grades:
        card = scorecard(grade)
        fence = "`" * max(3, _longest_run(card, "`") + 1)
        lines += ["", f"### {code_span(grade.student)} {grade.stage}", "", f"{fence}text", card, fence]
    return "\n".join(lines) + "\n"


def code_span(text: str, in_table: bool = False) -> str:
    """Text as a Markdown code span, whatever it holds: one line, a fence longer than any run of backticks
    in it (https://spec.commonmark.org/0.31.2/#code-spans), and in a table each ``|`` escaped, which GFM
    asks for even inside a code span (https://github.github.com/gfm/#tables-extension-)."""
    shown = shown_line(text)
    fence = "`" * (_longest_run(shown, "`") + 1)
    if in_table:
        shown = shown.replace("|", "\\|")
    return f"{fence} {shown} {fence}"


def _longest_run(text: str, character: str) -> int:
    return max((len(run) for run in re.findall(f"{re.escape(character)}+", text)), default=0)


# Classroom 50 (https://github.com/foundation50/classroom50), which instructors moved to when GitHub
# Classroom's autograding was retired, takes one result.json per graded repository; its contract is
# https://github.com/foundation50/classroom50/wiki/Advanced-Autograding#the-resultjson-contract. Its
# runner names the submission in environment variables; the scores are whole numbers.
CLASSROOM50_SCHEMA = "classroom50/result/v1"
CLASSROOM50_VARIABLES = {"classroom": "CLASSROOM", "assignment": "ASSIGNMENT", "submission": "SUBMISSION_TAG",
                         "commit": "COMMIT_URL", "release": "RELEASE_URL"}


def classroom50_result(grades: list[CopyGrade], environ: dict, now: float | None = None) -> dict:
    """One student's copies as a Classroom 50 result.json: a test per exercise, its reason as the message.
    A part of a point (a group of cases passed) is rounded down: the contract counts whole points."""
    missing = [name for name in CLASSROOM50_VARIABLES.values() if not environ.get(name)]
    if missing:
        raise CourseError(f"--format classroom50 reads the submission from Classroom 50's runner: {', '.join(missing)} "
                          "not set (see the instructors' guide)")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    tests = [{"test-name": f"{grade.stage} {_label(result)}", "passed": result.passed,
              "score": min(int(result.points + 1e-9), round(result.max_points)), "max-score": round(result.max_points),
              "points": result.points, "message": result.reason or grade.refused}
             for grade in grades for result in (grade.results or [_nothing_graded(grade)])]
    found = {field: environ[name] for field, name in CLASSROOM50_VARIABLES.items()}
    return {"schema": CLASSROOM50_SCHEMA, **found, "assignment_type": "individual",
            "owner": environ.get("OWNER") or environ.get("USERNAME") or grades[0].student,
            "review": environ.get("REVIEW_URL") or environ["COMMIT_URL"], "datetime": stamp, "graded_at": stamp,
            "score": sum(test["score"] for test in tests), "max-score": sum(test["max-score"] for test in tests),
            "tests": tests}


def write_classroom50(grades: list[CopyGrade], out: Path, environ: dict) -> list[Path]:
    """OUT/result.json for one student (what the runner reads); OUT/results/STUDENT.json for each of several."""
    students = {}
    for grade in grades:
        students.setdefault(grade.student, []).append(grade)
    written = []
    for student, theirs in students.items():
        path = out / "result.json" if len(students) == 1 else out / "results" / (file_name(student) + ".json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(classroom50_result(theirs, environ), ensure_ascii=False, indent=2), encoding="utf-8",
                        errors="backslashreplace")
        written.append(path)
    return written


# ---------------------------------------------------------------------------------------------
# A benchmark: a synthetic class

def bench(copies: int, jobs: int = 0, seed: int = 1) -> dict:
    """Grade ``copies`` students on every stage, each copy with every rebuild exercise solved as the
    reference solves it (the most work a copy can make the grader do), and time it."""
    stages = sorted(path.parent.name for path in exercises.REPO_ROOT.glob("s[0-9][0-9]/agent.py"))
    pin_versions(stages)
    with tempfile.TemporaryDirectory(prefix="course-grade-bench-") as folder:
        made = []
        for student in range(copies):
            for stage in stages:
                dest = Path(folder) / f"student-{student:02d}" / stage
                dest.mkdir(parents=True)
                for name, source in reference_files(stage).items():
                    (dest / name).write_text(source, encoding="utf-8")
                made.append((f"student-{student:02d}", stage, dest))
        started = time.perf_counter()
        try:
            grades = grade_copies(made, Options(seed=seed, jobs=jobs))
        finally:
            _PINNED.clear()
        total = time.perf_counter() - started
    by_stage = {stage: [sum(r.seconds for r in g.results) for g in grades if g.stage == stage] for stage in stages}
    return {"copies": copies, "stages": len(stages), "jobs": jobs or os.cpu_count(), "seconds": round(total, 1),
            "per_copy_cpu_seconds": {stage: round(sum(times) / len(times), 2) for stage, times in by_stage.items()},
            "points": sum(g.points for g in grades), "max_points": sum(g.max_points for g in grades)}
