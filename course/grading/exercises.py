"""Exercises for instructors: find the marked regions of a stage, stub them out, grade a student copy.

A stage marks each exercise as a block of complete statements, at one indentation, between two comments:

    # >>> exercise 1: Dispatch a tool call by name
    ...statements...
    # <<< exercise 1

* ``find_regions(source)`` reads those markers (and rejects malformed ones with a one-line error);
* ``make_student_copy(stage, dest)`` writes DEST/agent.py (and any other module of the stage, such as
  s06's permissions.py) with every region's statements replaced by a ``raise NotImplementedError`` that names
  the exercise, plus the stage's notebooks (and, inside a git work tree, a .gitignore that has git
  ignore the copy);
* ``check(stage, dest)`` runs the course's own tests that pin the stage (``@pytest.mark.stage``) against
  that copy in a child process (pytest) and prints a scorecard, one line per exercise. It is practice
  (``course check --course-tests``): the copy runs in the process that records the outcomes, so it
  could change them. Grades come from ``course.grading.grade``, which runs each exercise confined and
  judges outside the copy's process.

How a test run reaches the student copy: ``check`` sets ``AGENT_COURSE_STUDENT_STAGE="sNN=DEST"`` for the
child, and the tests' ``load_stage("sNN")`` then calls ``import_student_copy``, which imports
DEST/agent.py under its own module name, inside a package made of DEST (so that the copy's
``from .permissions import ...`` finds the student's permissions.py, not the reference's). The per-test outcomes and their ``@pytest.mark.exercise(N)``
markers come back as JSON from the small plugin in ``course.grading.scorecard_plugin``.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib.util
import io
import json
import multiprocessing
import multiprocessing.context
import os
import re
import subprocess
import sys
import threading
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from course.changes import BESIDE_THE_STAGES
from course.runtime.commands import course_command
from course.runtime.models import CourseError

REPO_ROOT = Path(__file__).resolve().parents[2]
STUDENT_STAGE_VARIABLE = "AGENT_COURSE_STUDENT_STAGE"
SCORECARD_JSON_VARIABLE = "AGENT_COURSE_SCORECARD_JSON"
GRADED_STAGE_VARIABLE = "AGENT_COURSE_GRADED_STAGE"  # the stage whose pinned tests the scorecard keeps
PLUGIN = "course.grading.scorecard_plugin"
# A student's loop can run forever (s01's loop has no stop of its own); the grader must not.
CHECK_TIMEOUT_SECONDS = 300

STAGE_NAME = re.compile(r"s\d\d")
OPENING = re.compile(r"(?P<indent>[ \t]*)#\s*>>>\s*exercise\s+(?P<number>\d+)\s*:\s*(?P<title>\S.*?)\s*")
CLOSING = re.compile(r"(?P<indent>[ \t]*)#\s*<<<\s*exercise\s+(?P<number>\d+)\s*")
# Anything that looks like a marker but matches neither pattern is a typo, not an ordinary comment.
MARKER_LIKE = re.compile(r"#\s*(>>>|<<<)\s*exercise\b", re.IGNORECASE)


# ---------------------------------------------------------------------------------------------
# Regions

@dataclass(frozen=True)
class Region:
    """One exercise region. ``start`` and ``end`` are the 1-based lines of its two markers."""
    number: int
    title: str
    start: int
    end: int
    indent: str
    file: str = "agent.py"  # the module of the stage that holds it

    def stub(self, stage: str) -> str:
        message = f"exercise {self.number}: {self.title} — see the {stage} chapter"
        return f"{self.indent}raise NotImplementedError({message!r})\n"


def find_regions(source: str, filename: str = "<source>") -> list[Region]:
    """The exercise regions of a stage's source, in order. Malformed markers raise CourseError."""
    return list(_regions_of(source, filename))


# A build of the site and a grading run read the same few stage files many times over; each reading
# tokenizes and parses the whole file. Regions are frozen, so the same tuple serves every caller.
@functools.lru_cache(maxsize=64)
def _regions_of(source: str, filename: str) -> tuple[Region, ...]:
    statement_lines = _statement_lines(source, filename)
    regions: list[Region] = []
    opened: re.Match | None = None
    opened_on = 0
    for number, line in _comment_lines(source):
        where = f"{filename}, line {number}"
        if not MARKER_LIKE.match(line.lstrip()):
            continue
        if opening := OPENING.fullmatch(line):
            if opened:
                raise CourseError(f"{where}: exercise {opening['number']} opens inside exercise "
                                  f"{opened['number']} (line {opened_on}); regions cannot nest")
            opened, opened_on = opening, number
        elif closing := CLOSING.fullmatch(line):
            if not opened:
                raise CourseError(f"{where}: '# <<< exercise {closing['number']}' closes no open exercise")
            if closing["number"] != opened["number"]:
                raise CourseError(f"{where}: '# <<< exercise {closing['number']}' closes exercise "
                                  f"{opened['number']} (line {opened_on}); the numbers must match")
            if closing["indent"] != opened["indent"]:
                raise CourseError(f"{where}: the closing marker of exercise {opened['number']} is not "
                                  f"indented like its opening marker (line {opened_on})")
            regions.append(Region(int(opened["number"]), opened["title"], opened_on, number, opened["indent"]))
            opened = None
        else:
            raise CourseError(f"{where}: malformed exercise marker; write '# >>> exercise N: TITLE' "
                              f"or '# <<< exercise N'")
    if opened:
        raise CourseError(f"{filename}, line {opened_on}: exercise {opened['number']} is never closed; "
                          f"add '# <<< exercise {opened['number']}'")
    lines = source.splitlines()
    for region in regions:
        _check_body(region, lines, statement_lines, filename)
    _check_unique_numbers(regions, filename)
    return tuple(regions)


def marked_regions(source: str, filename: str = "<source>") -> list[Region]:
    """The regions of a student's file, found by their marker lines alone, without parsing the file: a
    syntax error in one region must fail that exercise only, so each body is parsed on its own later.
    Malformed or unbalanced markers raise CourseError, as in ``find_regions``."""
    regions: list[Region] = []
    opened: re.Match | None = None
    opened_on = 0
    for number, line in enumerate(source.splitlines(), start=1):
        if not MARKER_LIKE.match(line.lstrip()):
            continue
        where = f"{filename}, line {number}"
        if opening := OPENING.fullmatch(line):
            if opened:
                raise CourseError(f"{where}: exercise {opening['number']} opens inside exercise "
                                  f"{opened['number']} (line {opened_on}); regions cannot nest")
            opened, opened_on = opening, number
        elif (closing := CLOSING.fullmatch(line)) and opened and closing["number"] == opened["number"]:
            regions.append(Region(int(opened["number"]), opened["title"], opened_on, number, opened["indent"]))
            opened = None
        else:
            raise CourseError(f"{where}: this exercise marker was changed or closes no open exercise; keep "
                              f"'# >>> exercise N: TITLE' and '# <<< exercise N' as they were")
    if opened:
        raise CourseError(f"{filename}, line {opened_on}: exercise {opened['number']} is never closed; "
                          f"add '# <<< exercise {opened['number']}'")
    return regions


def _comment_lines(source: str) -> list[tuple[int, str]]:
    """(line number, line) of each line that holds only a comment: a marker-like text inside a string
    (a docstring explaining the convention) is not a marker."""
    lines = source.splitlines()
    return [(token.start[0], lines[token.start[0] - 1])
            for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type == tokenize.COMMENT and not lines[token.start[0] - 1][:token.start[1]].strip()]


# CPython 3.11's ast.parse is not safe in two threads at once ("SystemError: AST constructor recursion
# depth mismatch", python/cpython#106905), and copies are graded side by side in threads.
_PARSING = threading.Lock()


def _statement_lines(source: str, filename: str) -> set[int]:
    """The lines where a statement begins; the others continue one (brackets, strings) and may sit anywhere."""
    try:
        with _PARSING:
            tree = ast.parse(source, filename)
    except SyntaxError as error:
        raise CourseError(f"{filename}, line {error.lineno}: {error.msg}") from None
    return {node.lineno for node in ast.walk(tree) if isinstance(node, ast.stmt)}


def _check_body(region: Region, lines: list[str], statement_lines: set[int], filename: str) -> None:
    """The statements between the markers start at the markers' indentation and never go left of it,
    so that one stub at that indentation can stand in for all of them."""
    statements = [(number, lines[number - 1]) for number in range(region.start + 1, region.end)
                  if number in statement_lines]
    if not statements:
        raise CourseError(f"{filename}, line {region.start}: exercise {region.number} has no statements")
    first_number, first_line = statements[0]
    if _indentation(first_line) != region.indent:
        raise CourseError(f"{filename}, line {first_number}: exercise {region.number} must start at its markers' "
                          f"indentation (uneven indentation)")
    for number, line in statements:
        if not line.startswith(region.indent):
            raise CourseError(f"{filename}, line {number}: this statement of exercise {region.number} is indented "
                              f"less than its markers (uneven indentation)")


def _indentation(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _check_unique_numbers(regions: list[Region], filename: str) -> None:
    seen: dict[int, Region] = {}
    for region in regions:
        if region.number in seen:
            raise CourseError(f"{filename}, line {region.start}: exercise {region.number} is already used on "
                              f"line {seen[region.number].start}; numbers are unique within a stage")
        seen[region.number] = region


def stub_out(source: str, regions: list[Region], stage: str) -> str:
    """The source with each region's statements replaced by its stub; the markers stay for the student."""
    lines = source.splitlines(keepends=True)
    for region in reversed(regions):  # from the bottom up, so earlier line numbers stay valid
        lines[region.start:region.end - 1] = [region.stub(stage)]
    return "".join(lines)


# ---------------------------------------------------------------------------------------------
# Stages and student copies

def stage_folder(stage: str) -> Path:
    folder = REPO_ROOT / stage
    if not STAGE_NAME.fullmatch(stage) or not (folder / "agent.py").is_file():
        known = ", ".join(sorted(path.parent.name for path in REPO_ROOT.glob("s[0-9][0-9]/agent.py")))
        raise CourseError(f"no stage {stage!r}; the stages are {known}")
    return folder


def stage_modules(stage: str) -> list[Path]:
    """The stage's modules: agent.py first, then any module beside it (s06's permissions.py)."""
    folder = stage_folder(stage)
    return [folder / "agent.py"] + sorted(path for path in folder.glob("*.py") if path.name not in ("agent.py", "__init__.py")
                                          and f"{stage}/{path.name}" not in BESIDE_THE_STAGES)


def stage_regions(stage: str) -> list[Region]:
    """Every exercise region of the stage, in every module; numbers are unique across the modules."""
    regions = [dataclasses.replace(region, file=module.name) for module in stage_modules(stage)
               for region in find_regions(module.read_text(encoding="utf-8"), f"{stage}/{module.name}")]
    _check_unique_numbers(regions, f"{stage}")
    return sorted(regions, key=lambda region: region.number)


def make_student_copy(stage: str, dest, *, force: bool = False) -> Path:
    """Write a student copy of ``stage`` into ``dest``: agent.py with its exercises stubbed, __init__.py,
    and the stage's notebooks. Refuses a non-empty ``dest`` unless ``force``. Returns ``dest``."""
    regions = stage_regions(stage)
    if not regions:
        raise CourseError(f"{stage}/agent.py marks no exercise regions; nothing to stub out")
    students = {}
    for module in stage_modules(stage):
        stubbed = stub_out(module.read_text(encoding="utf-8"), [r for r in regions if r.file == module.name], stage)
        if any(r.file == module.name for r in regions):
            from course.grading import exercise_text  # what a region may not use, before the student writes one
            stubbed = exercise_text.copy_header(stage) + stubbed
        _ensure_compiles(stubbed, f"the student copy of {stage}/{module.name}")
        students[module.name] = stubbed
    try:
        dest = _write_copy(_prepare_destination(Path(dest), force), stage, students, regions)
    except OSError as error:  # a file where a folder should be, a folder not ours...: one line, no traceback
        raise CourseError(f"cannot write a student copy to {dest}: {error.strerror or error}") from None
    print(f"grade it with: {course_command()} check {stage} {dest}")
    return dest


VERSION_FILE = ".course-version"


def _git(*arguments: str) -> str:
    """One line of git's answer about the course's own repository, or "" (no git, not a checkout)."""
    try:
        done = subprocess.run(["git", "-C", str(REPO_ROOT), *arguments], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


@functools.lru_cache(maxsize=1)
def course_version() -> dict[str, str]:
    """The course as it is here: its package version, and the git commit and tag when it is a checkout."""
    try:
        import importlib.metadata
        version = importlib.metadata.version("agent-loop-course")
    except Exception:  # not installed as a package: the commit still tells the versions apart
        version = "unknown"
    commit = _git("rev-parse", "HEAD")
    return {"course": version, "commit": commit or "unknown", "tag": _git("describe", "--tags", "--exact-match") if commit else ""}


def version_text(stage: str) -> str:
    known = course_version()
    return ("# The course version this copy was made from: the grader compares the copy with that version's files.\n"
            f"stage: {stage}\ncourse: {known['course']}\ncommit: {known['commit']}\n"
            + (f"tag: {known['tag']}\n" if known["tag"] else ""))


def recorded_version(folder: Path) -> dict[str, str]:
    """What a copy's .course-version says (empty for a copy made before copies recorded it)."""
    try:
        text = (Path(folder) / VERSION_FILE).read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return {}
    return {key.strip(): value.strip() for key, _, value in (line.partition(":") for line in text.splitlines())
            if not key.startswith("#") and value.strip()}


def version_name(recorded: dict[str, str]) -> str:
    commit = recorded.get("commit", "unknown")
    return " ".join(part for part in (recorded.get("tag") or "", recorded.get("course", "?"),
                                      f"(commit {commit[:12]})" if commit != "unknown" else "") if part)


def file_at(commit: str, stage: str, name: str) -> str | None:
    """A stage file as it was at ``commit`` of the course's repository, or None when git cannot say."""
    if not re.fullmatch(r"[0-9a-f]{7,40}", commit or ""):
        return None
    try:
        done = subprocess.run(["git", "-C", str(REPO_ROOT), "show", f"{commit}:{stage}/{name}"],
                              capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.decode("utf-8", errors="replace") if done.returncode == 0 else None


IGNORE_EVERYTHING = "# A student copy of the course: git ignores this folder (delete this file to track it).\n*\n"


def enclosing_work_tree(folder: Path) -> Path | None:
    """The git work tree that holds ``folder`` (a parent with .git, a folder or a worktree's file), or None.
    ``folder``'s own .git does not count: a copy that is a repository of its own dirties no one else's."""
    return next((parent for parent in folder.parents if (parent / ".git").exists()), None)


def _ignore_in_work_tree(dest: Path) -> None:
    """A copy written inside a work tree (``course exercise s00 my-s00`` in the course's clone) would show
    in ``git status`` as an untracked folder: a .gitignore of ``*`` in the copy makes git ignore the
    whole folder, .gitignore included, and leaves the repository's own .gitignore alone."""
    tree = enclosing_work_tree(dest)
    if tree is None:
        return
    ignore = dest / ".gitignore"
    if ignore.exists():
        print(f"kept {ignore}: it says what git ignores here (the copy lies inside the git work tree {tree})")
        return
    ignore.write_text(IGNORE_EVERYTHING, encoding="utf-8")
    print(f"wrote {ignore}: git ignores the copy, which lies inside the git work tree {tree}")


def _write_copy(dest: Path, stage: str, students: dict[str, str], regions: list) -> Path:
    for name, student_source in students.items():
        (dest / name).write_text(student_source, encoding="utf-8")
        stubbed_here = [region for region in regions if region.file == name]
        print(f"wrote {dest / name}" + (f": {len(stubbed_here)} exercise(s) stubbed out" if stubbed_here else ""))
    for name, student_source in students.items():  # the line numbers of the copy, where the stubs are shorter
        for region in marked_regions(student_source, name):
            print(f"  exercise {region.number} ({name}, line {region.start}): {region.title}")
    from course.grading import exercise_text  # the extension exercise, when the stage has one: a file of its own
    if exercise_text.extension(stage):
        (dest / "extension.py").write_text(exercise_text.extension_template(stage), encoding="utf-8")
        extension = exercise_text.extension(stage)
        print(f"wrote {dest / 'extension.py'}: exercise {extension.number} (extension): {extension.title}")
    (dest / VERSION_FILE).write_text(version_text(stage), encoding="utf-8")
    print(f"wrote {dest / VERSION_FILE}: the course version it was made from ({version_name(course_version())})")
    (dest / "__init__.py").write_text(f'"""A student copy of stage {stage}: fill in the exercises of agent.py."""\n',
                                      encoding="utf-8")
    print(f"wrote {dest / '__init__.py'}")
    for notebook in sorted(stage_folder(stage).glob("*.ipynb")):
        text, points_at_copy = student_notebook(notebook.read_text(encoding="utf-8"), stage)
        (dest / notebook.name).write_text(text, encoding="utf-8")
        print(f"wrote {dest / notebook.name}"
              + ("" if points_at_copy else f" (note: it does not say `from {stage} import agent`, so it may run the reference)"))
    _ignore_in_work_tree(dest)
    return dest


def student_notebook(text: str, stage: str) -> tuple[str, bool]:
    """The stage's notebook, importing the student's agent.py beside it instead of the reference
    `from sNN import agent` (a notebook kernel starts in the notebook's folder, so `import agent` finds
    the copy). Also says whether such an import was found."""
    notebook = json.loads(text)
    reference_import = re.compile(rf"from {stage} import agent[ \t]*(?P<end>\n?)")
    found = False
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell["source"] if isinstance(cell["source"], list) else cell["source"].splitlines(keepends=True)
        for index, line in enumerate(source):
            if match := reference_import.fullmatch(line):
                source[index] = "import agent  # your copy: the agent.py beside this notebook" + match["end"]
                found = True
        cell["source"] = source
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", found


def _ensure_compiles(source: str, what: str) -> None:
    try:
        compile(source, what, "exec")
    except SyntaxError as error:
        raise CourseError(f"{what} does not compile: {error.msg} (line {error.lineno})") from None


def _prepare_destination(dest: Path, force: bool) -> Path:
    if dest.exists() and not dest.is_dir():
        raise CourseError(f"{dest} is a file, not a folder")
    if dest.is_dir() and any(dest.iterdir()) and not force:
        raise CourseError(f"{dest} is not empty; choose an empty folder, or pass --force to overwrite the files it writes")
    dest.mkdir(parents=True, exist_ok=True)
    return dest.resolve()


# ---------------------------------------------------------------------------------------------
# Loading a student copy inside the test process (called by tests/helpers.py's load_stage)

def student_copies() -> dict[str, Path]:
    """The student copies a check asked for: AGENT_COURSE_STUDENT_STAGE="s01=/path/to/dest"
    (several pairs joined by os.pathsep)."""
    pairs = [pair for pair in os.environ.get(STUDENT_STAGE_VARIABLE, "").split(os.pathsep) if pair]
    copies = {}
    for pair in pairs:
        stage, separator, folder = pair.partition("=")
        if not separator:
            raise CourseError(f"{STUDENT_STAGE_VARIABLE} expects STAGE=FOLDER, got {pair!r}")
        copies[stage] = Path(folder)
    return copies


def student_module_name(stage: str) -> str:
    # A name of its own, so that the reference `sNN.agent` can still be imported beside it.
    return f"student_copy_of_{stage}_agent"


def import_student_copy(stage: str) -> ModuleType | None:
    """The student's agent module for ``stage`` when a check asked for one, else None."""
    folder = student_copies().get(stage)
    if folder is None:
        return None
    name = student_module_name(stage)
    if name in sys.modules:  # imported once per test session, like any module
        return sys.modules[name]
    package = f"student_copy_of_{stage}"  # the copy's folder as a package: its agent.py imports its permissions.py
    for loaded in [loaded for loaded in sys.modules if loaded == package or loaded.startswith(package + ".")]:
        del sys.modules[loaded]
    sys.modules[package] = ModuleType(package)
    sys.modules[package].__path__ = [str(folder)]
    spec = importlib.util.spec_from_file_location(name, folder / "agent.py")
    module = importlib.util.module_from_spec(spec)
    module.__package__ = package
    sys.modules[name] = module  # before running it: dataclasses look their module up while it loads
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


# ---------------------------------------------------------------------------------------------
# Grading

@dataclass(frozen=True)
class PinnedTest:
    name: str
    outcome: str  # "passed", "failed", "skipped" or "not run"
    exercises: tuple[int, ...]  # the numbers of its exercise markers, sorted
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome in ("passed", "skipped")


@dataclass(frozen=True)
class PytestRun:
    outcomes: list[PinnedTest]
    collection_errors: list[str]
    student_copy_loaded: bool

    @property
    def passed(self) -> bool:
        return (bool(self.outcomes) and not self.collection_errors and self.student_copy_loaded
                and all(test.ok for test in self.outcomes))


@dataclass(frozen=True)
class ScoreLine:
    """One line of the scorecard: one exercise, a group of exercises pinned together, or the rest."""
    label: str
    tests: tuple[PinnedTest, ...]
    exercise: int | None = None

    def failures(self) -> list[PinnedTest]:
        return [test for test in self.tests if not test.ok]

    def status(self, collected: bool) -> str:
        if not self.tests:
            return "NOT PINNED" if collected else "NOT RUN"
        return "FAILED" if self.failures() else "PASSED"


def pinned_tests(stage: str) -> list[Path]:
    """The test files that may hold tests pinning ``stage``: those that declare pins (@pytest.mark.stage,
    or helpers.each_stage) and name the stage. Which of their tests pin it, the tests say themselves;
    the scorecard plugin keeps only those (reading fewer files makes a check start sooner)."""
    named, declares = re.compile(rf"\b{re.escape(stage)}\b"), re.compile(r"mark\.stage\(\s*[\"']|each_stage\(")
    tests = [path for path in sorted((REPO_ROOT / "tests").glob("test_*.py"))
             if declares.search(text := path.read_text(encoding="utf-8")) and named.search(text)]
    if not tests:
        raise CourseError(f"stage {stage} has no pinned tests (no test in tests/ names it)")
    return tests


def check(stage: str, dest, *, out=None, whole_reasons: bool = False) -> int:
    """Run ``stage``'s pinned tests against the student copy in ``dest`` and print a scorecard (to ``out``,
    default stdout), each failure's reason cut to a line unless ``whole_reasons``. Returns 0 only when
    every test passed."""
    regions = stage_regions(stage)
    tests = pinned_tests(stage)
    student_agent = Path(dest).resolve() / "agent.py"
    if not student_agent.is_file():
        raise CourseError(f"no student copy at {student_agent}; make one with: {course_command()} exercise {stage} {dest}")
    try:
        _ensure_compiles(student_agent.read_text(encoding="utf-8"), str(student_agent))
    except (UnicodeDecodeError, OSError) as error:
        raise CourseError(f"cannot read {student_agent} as Python source: {error}") from None
    run = run_pinned_tests(stage, student_agent.parent, tests)
    print(scorecard(stage, student_agent.parent, tests, regions, run, whole_reasons), file=out or sys.stdout)
    return 0 if run.passed else 1


def run_pinned_tests(stage: str, dest: Path, tests: list[Path]) -> PytestRun:
    """Run pytest in a child process with the student copy in place of the stage; read back the outcomes."""
    with tempfile.TemporaryDirectory(prefix="course-check-") as scratch:
        report, printed = Path(scratch) / "outcomes.json", Path(scratch) / "printed.txt"
        variables = {STUDENT_STAGE_VARIABLE: f"{stage}={dest}", SCORECARD_JSON_VARIABLE: str(report),
                     GRADED_STAGE_VARIABLE: stage,
                     # The pinned tests need no third-party pytest plugin: not loading them (hypothesis's
                     # alone takes a second to import) makes a check faster, and keeps pytest-xdist out of it.
                     "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        arguments = ["-q", "-p", "no:cacheprovider", "-p", PLUGIN, *(str(test) for test in tests)]
        # A fresh process, so the student's module and the reference never share one interpreter's state.
        child = _graders().Process(target=_pytest_in_child, args=(arguments, variables, str(printed)))
        child.start()
        child.join(CHECK_TIMEOUT_SECONDS)
        if child.is_alive():
            child.kill()
            child.join()
            raise CourseError(f"the {stage} tests ran longer than {CHECK_TIMEOUT_SECONDS} s against {dest}: "
                              f"does a loop in the student copy never end?")
        if not report.is_file():
            raise CourseError(f"pytest ended (exit {child.exitcode}) without results: {_last_line(printed)}")
        data = json.loads(report.read_text(encoding="utf-8"))
    return PytestRun(outcomes=[_pinned_test(item) for item in data["tests"]],
                     collection_errors=data["collection_errors"],
                     student_copy_loaded=data["student_copy_loaded"])


def _graders() -> multiprocessing.context.BaseContext:
    """Where checks run: children forked from a small server process that has imported pytest and the SDK
    once (multiprocessing's "forkserver"), so that checking many copies pays those imports once, not once
    a copy (they are most of a check's time). The server never imports a stage or a student copy, so every
    child starts as clean as a new interpreter. Where there is no fork (Windows), each child is a new one."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["anthropic", "pytest", "course.running.client"])
    return context


def _pytest_in_child(arguments: list[str], variables: dict[str, str], printed: str) -> None:
    """The child's work: pytest from the repository's root, its output kept in a file for the error line."""
    os.environ.update(variables)
    os.chdir(REPO_ROOT)
    output = os.open(printed, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(output, 1)
    os.dup2(output, 2)
    import pytest  # already imported by the server where there is one

    sys.exit(pytest.main(arguments))


def _pinned_test(item: dict) -> PinnedTest:
    numbers = item["exercises"]
    if not all(isinstance(number, int) and not isinstance(number, bool) for number in numbers):
        raise CourseError(f"{item['name']}: an exercise marker takes whole numbers, e.g. @pytest.mark.exercise(1)")
    return PinnedTest(item["name"], item["outcome"], tuple(sorted(set(numbers))), item["message"])


def _last_line(printed: Path) -> str:
    lines = printed.read_text(encoding="utf-8", errors="replace").strip().splitlines() if printed.is_file() else []
    return lines[-1] if lines else "it printed nothing: does the student copy end the process itself (sys.exit, os._exit)?"


def score(regions: list[Region], outcomes: list[PinnedTest]) -> list[ScoreLine]:
    """The scorecard's lines. An exercise is judged by the tests that pin it alone; a test that pins
    several exercises (a whole run needs both the dispatcher and the tool_result) gets a line of its
    own, so that solving exercise 1 shows as such while exercise 2 is still a stub. A marker number that
    no region has gets a line too, so that a typo in a marker shows."""
    titles = {region.number: region.title for region in regions}
    for test in outcomes:
        for number in test.exercises:
            titles.setdefault(number, "(no such exercise region)")
    lines = []
    for number, title in sorted(titles.items()):
        alone = [test for test in outcomes if test.exercises == (number,)]
        shared = [test for test in outcomes if number in test.exercises]
        lines.append(ScoreLine(f"exercise {number}: {title}", tuple(alone or shared), number))
    for group in sorted({test.exercises for test in outcomes if len(test.exercises) > 1}):
        together = tuple(test for test in outcomes if test.exercises == group)
        lines.append(ScoreLine(f"exercises {' + '.join(map(str, group))} together", together))
    untied = tuple(test for test in outcomes if not test.exercises)
    if untied:
        lines.append(ScoreLine("not tied to an exercise", untied))
    return lines


def scorecard(stage: str, dest: Path, tests: list[Path], regions: list[Region], run: PytestRun,
              whole_reasons: bool = False) -> str:
    lines = score(regions, run.outcomes)
    collected = not run.collection_errors
    width = max(len(line.label) for line in lines) if lines else 0
    text = [f"{stage} scorecard for {dest}  ({len(run.outcomes)} tests that pin {stage}, in {len(tests)} files of tests/)"]
    text += [f"  {line.label:<{width}}  {_verdict(line, collected)}" for line in lines]
    text += [f"  could not collect {error}" for error in run.collection_errors]
    if run.outcomes and not run.student_copy_loaded:
        text.append(f"  warning: no test loaded the student copy; the tests must get {stage} through load_stage()")
    text.append(_total(lines, regions, run.outcomes, collected))
    text += _failure_reasons(run.outcomes, whole_reasons)
    return "\n".join(text)


def _verdict(line: ScoreLine, collected: bool) -> str:
    status = line.status(collected)
    if status == "NOT PINNED":
        return f"NOT PINNED  no test carries @pytest.mark.exercise({line.exercise})"
    if status == "FAILED":
        return f"FAILED  {', '.join(_names(line.failures()))}"
    if status == "PASSED":
        return f"PASSED  ({len(line.tests)} test{'' if len(line.tests) == 1 else 's'})"
    return status


def _total(lines: list[ScoreLine], regions: list[Region], outcomes: list[PinnedTest], collected: bool) -> str:
    numbers = {region.number for region in regions}
    exercises = [line for line in lines if line.exercise in numbers]
    solved = sum(line.status(collected) == "PASSED" for line in exercises)
    passed = sum(test.outcome == "passed" for test in outcomes)
    skipped = sum(test.outcome == "skipped" for test in outcomes)
    return (f"total: {solved} of {len(exercises)} exercises passed; {passed} of {len(outcomes)} tests passed"
            + (f", {skipped} skipped" if skipped else ""))


def _names(tests: list[PinnedTest]) -> list[str]:
    """Test names, the cases of one parametrized test folded into one name: `test_x (3 cases)`."""
    counts: dict[str, int] = {}
    for test in tests:
        base = test.name.split("[", 1)[0]
        counts[base] = counts.get(base, 0) + 1
    return [name + (f" ({count} cases)" if count > 1 else "") for name, count in counts.items()]


def _failure_reasons(outcomes: list[PinnedTest], whole: bool = False) -> list[str]:
    """Why the tests failed, each distinct first failure once: a fresh copy's fifteen failures are two stubs.
    A reason is cut to one line of the scorecard unless ``whole``; the scorecard then says how to see it whole."""
    by_reason: dict[str, list[PinnedTest]] = {}
    for test in outcomes:
        if not test.ok:
            reason = test.message or test.outcome
            by_reason.setdefault(reason if whole else _shorten(reason), []).append(test)
    if not by_reason:
        return []
    lines = ["why:"]
    for reason, tests in by_reason.items():
        if whole:
            names = tests[0].name if len(tests) == 1 else f"{len(tests)} tests: {', '.join(_names(tests))}"
            lines.append(f"  {names}:")
            lines += [f"    {line}" for line in reason.splitlines()]
        else:
            lines.append(f"  {tests[0].name}: {reason}" if len(tests) == 1 else f"  {reason}  ({len(tests)} tests)")
    if not whole and any(reason.endswith("…") for reason in by_reason):
        lines.append("(reasons cut to one line: add -v to the check command to see them whole)")
    return lines


def _shorten(text: str, limit: int = 160) -> str:
    """The first line of ``text``, at most ``limit`` characters."""
    first = text.strip().splitlines()[0] if text.strip() else text
    cut = first if len(first) <= limit else first[:limit - 1]
    return cut if cut == text else cut.rstrip() + "…"
