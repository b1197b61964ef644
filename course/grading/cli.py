"""The command line of grading: ``check`` (one copy), ``grade`` (a class), ``bench grading`` (how long a class takes).

    check STAGE DEST [-v] [--seed N] [--json PATH] [limits] [--extra-tests DIR] [--points SPEC]
    check STAGE DEST --course-tests [-v]        the course's own pinned tests on the copy: practice, never a grade
    grade PATH... [--out DIR] [--stages s03,s04] [--jobs N] [--summary FILE] [--format classroom50] [--seed N] [limits] [...]

The limits, per exercise of a copy: ``--time-limit SECONDS`` (default 60), ``--memory MB`` (1024) and
``--disk MB`` (64, its scratch folder's files together).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

from course.grading import grade as grading, jail as grading_jail
from course.runtime.models import CourseError


def add_grading_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, help="draw the cases of this seed (a scorecard prints its own)")
    parser.add_argument("--time-limit", type=float, default=60.0, metavar="SECONDS",
                        help="seconds each exercise of a copy may run (default 60); a case not reached has failed")
    parser.add_argument("--memory", type=int, default=1024, metavar="MB", help="address space of a copy (default 1024)")
    parser.add_argument("--disk", type=int, default=64, metavar="MB",
                        help="what a copy may write in its scratch folder, all files together (default 64)")
    parser.add_argument("--extra-tests", action="append", default=[], metavar="PATH",
                        help="a Python file (or a folder of them) of your own cases, kept out of the student's view; "
                             "see the instructors' guide")
    parser.add_argument("--points", action="append", default=[], metavar="SPEC",
                        help="points per exercise, e.g. s03:1=4,s03:2=6 (default 1 each); "
                             "shared out by the exercise's groups of cases")
    parser.add_argument("--jobs", type=int, default=0, help="copies graded at once (default: the machine's cores)")


def options_from(args) -> grading.Options:
    if args.time_limit <= 0 or args.memory < 64 or args.disk < 1:
        raise CourseError("--time-limit takes a number of seconds above 0, --memory at least 64 (MB), --disk at least 1 (MB)")
    files = []
    for given in map(Path, args.extra_tests):
        if not given.exists():
            raise CourseError(f"--extra-tests {given}: no such file or folder")
        files += sorted(given.glob("*.py")) if given.is_dir() else [given]
    load_extra_tests(files)
    _drop_secrets()
    return grading.Options(seed=args.seed, limits=grading_jail.Limits(args.time_limit, args.memory, disk_mb=args.disk),
                           points=grading.parse_points(args.points), extra_tests=files, jobs=args.jobs)


_LOADED: set = set()


def load_extra_tests(files: list[Path]) -> None:
    """An instructor's case files register their probes here, as they will in each child."""
    import importlib.util
    for path in files:
        key = str(path.resolve())
        if key in _LOADED:
            continue
        spec = importlib.util.spec_from_file_location(f"course_extra_tests_{len(_LOADED)}", path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as error:
            raise CourseError(f"--extra-tests {path}: {type(error).__name__}: {error}") from None
        _LOADED.add(key)


def _drop_secrets() -> None:
    """The children are forked from a server this process starts: it must not hold a key to leak."""
    for name in [name for name in os.environ if name.startswith(("ANTHROPIC_", "AWS_", "GITHUB_TOKEN", "OPENAI_"))]:
        del os.environ[name]


# ---------------------------------------------------------------- check

def add_check(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("stage", help="the stage the copy was made from, e.g. s01")
    parser.add_argument("dest", help="the folder holding the student copy")
    parser.add_argument("-v", "--verbose", action="store_true", help="show every case and why each failed")
    parser.add_argument("--json", metavar="PATH", help="also write the result as JSON to PATH")
    parser.add_argument("--course-tests", action="store_true",
                        help="run the course's own pinned tests on the copy instead (practice: they run in one "
                             "process with the copy, which can fool them; never a grade)")
    add_grading_options(parser)


def do_check(args, _) -> int:
    if args.course_tests:
        from course.grading import exercises
        return exercises.check(args.stage, args.dest, whole_reasons=args.verbose)
    grading.stage_exercises(args.stage)  # an unknown stage is one line
    grade = grading.grade_copies([(Path(args.dest).resolve().name, args.stage, Path(args.dest))], options_from(args))[0]
    print(grading.scorecard(grade, whole=args.verbose))
    if args.json:
        Path(args.json).write_text(json.dumps(grading.as_json([grade]), ensure_ascii=False, indent=1), encoding="utf-8")
    return 0 if grade.points == grade.max_points else 1


# ---------------------------------------------------------------- grade

def add_grade(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", help="copies, or folders of them (CLASS/STUDENT/sNN/agent.py)")
    parser.add_argument("--out", default="grading", help="where to write gradebook.csv, gradebook.json and the "
                                                         "scorecards (default: ./grading)")
    parser.add_argument("--repos", metavar="ROSTER",
                        help="first clone each student's repository named in ROSTER (a line each: STUDENT URL [REF]) "
                             "into OUT/submissions/STUDENT, then grade those: the grade is computed here, not in "
                             "the student's repository")
    parser.add_argument("--stages", help="grade only these stages, e.g. s03,s04")
    parser.add_argument("--summary", metavar="FILE", help="append a Markdown summary to FILE (CI: $GITHUB_STEP_SUMMARY)")
    parser.add_argument("--student", help="the student's name, for a single student's repository (CI)")
    parser.add_argument("--format", choices=["classroom50"],
                        help="also write the grades as Classroom 50's result.json (OUT/result.json for one student, "
                             "OUT/results/STUDENT.json for several); see the instructors' guide")
    parser.add_argument("--audit", action="store_true",
                        help="instead of grading copies, audit the cases: grade mutants of each exercise's reference on "
                             "several seeds and list those that get full marks (PATHS: stages, e.g. s06 or s06:1; none: all)")
    add_grading_options(parser)


def do_audit(args) -> int:
    from course.grading import audit as grading_audit
    stages, numbers = [], set()
    for spec in args.paths or sorted(path.parent.name for path in grading_audit.exercises.REPO_ROOT.glob("s[0-9][0-9]/agent.py")):
        stage, _, number = spec.partition(":")
        grading.stage_exercises(stage)  # an unknown stage is one line
        stages.append(stage)
        if number:
            numbers.add(int(number))
    options = options_from(args)
    started = time.perf_counter()
    results = grading_audit.audit(stages, options, numbers=numbers or None)
    print(grading_audit.report(results))
    print(f"audited in {time.perf_counter() - started:.0f} s")
    return 1 if any(found.survivors for found in results) else 0


def do_grade(args, _) -> int:
    if args.audit:
        return do_audit(args)
    paths, not_cloned = list(args.paths), {}
    if args.repos:
        paths.append(str(collect(Path(args.repos), Path(args.out) / "submissions", not_cloned)))
    if not paths:
        raise CourseError("grade takes the folders to grade (CLASS, or CLASS/*), or --repos ROSTER")
    grader_outside(paths)
    copies = grading.find_copies(paths, student=args.student)
    # a student whose repository could not be cloned: the clone's error is the row's reason, not "no copy"
    copies = [(name, stage, folder, f"could not clone the repository: {not_cloned[name]}")
              if not stage and name in not_cloned else (name, stage, folder, *problem)
              for name, stage, folder, *problem in copies]
    if args.student is None and all(grading.STAGE_NAME.fullmatch(name) for name, *_ in copies):
        # Said, never acted on: a class folder is read the same whatever its students named their folders.
        print(f"note: every student found is named like a stage ({', '.join(sorted({name for name, *_ in copies}))}): "
              "to grade one student's folder, give --student NAME", file=sys.stderr)
    if args.stages:
        copies = grading.only_stages(copies, set(args.stages.split(",")))
    options = options_from(args)
    if args.format == "classroom50":  # a missing variable is said before anything is graded
        grading.classroom50_result([grading.CopyGrade("", "", Path(), [], 0)], os.environ)
    started = time.perf_counter()
    grades = grading.grade_copies(copies, options)
    book_csv, book_json = grading.write_gradebook(grades, Path(args.out))
    if args.format == "classroom50":
        grading.write_classroom50(grades, Path(args.out), os.environ)
    # A student's name is a folder's name, theirs to choose, and so are the reasons that quote a folder: each
    # line is shown with its control characters escaped, so that a name cannot draw a line of its own.
    width = max((len(name_column(grade.student)) for grade in grades), default=0)
    for grade in grades:
        failing = next((r for r in grade.results if not r.passed), None)
        print(f"{name_column(grade.student):<{width}}  {grade.stage or '-':<3}  {grade.points:g} of {grade.max_points:g} points"
              + (f"  ({shown(grade.refused)})" if grade.refused else f"  first failure: exercise "
                 f"{failing.exercise.number}: {shown(failing.reason)}" if failing else ""))
    print(f"{len(grades)} copies graded in {time.perf_counter() - started:.1f} s (seed {options.seed}; "
          f"{grades[0].confinement}); wrote {book_csv}, {book_json} and "
          f"{Path(args.out) / grading.WIDE_GRADEBOOK} (a row per student)")
    if args.summary:
        with open(args.summary, "a", encoding="utf-8", errors="backslashreplace") as summary:
            summary.write(grading.summary_markdown(grades))
    return 0 if all(grade.points == grade.max_points for grade in grades) else 1


NAME_COLUMN = 32  # the most characters of a name a line shows: the points stay on the screen


def name_column(name: str) -> str:
    """A student's name as the first column of a line: at most NAME_COLUMN characters, and in quotes when
    it holds a blank, so that a name written to look like a line of grades ("zed  s03  3 of 3 points" and
    150 spaces) neither passes for one nor pushes the real points off the screen."""
    text = shown(name)
    if len(text) > NAME_COLUMN:
        text = text[:NAME_COLUMN - 1] + "…"
    quoted = not text or any(character.isspace() for character in text) or text.startswith(WORKFLOW_COMMAND)
    return json.dumps(text, ensure_ascii=False) if quoted else text


# A line of a job's log that begins with "::" is a command to a GitHub Actions runner (::add-mask::, ::error::,
# ::stop-commands::; https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands): a
# student's folder named so would mask or annotate the log. A name is the first thing on a line, so such a
# name is shown in quotes, and the line begins with the quote.
WORKFLOW_COMMAND = "::"


def shown(text: str) -> str:
    """One line of a student's text, safe to print: no control character, no byte that is not UTF-8."""
    return grading.shown_line(grading.printable_name(text))


def grader_outside(paths: list[str]) -> None:
    """Refuse to grade a folder the grader itself would be read from. Python puts the folder it starts in
    first on sys.path (https://docs.python.org/3/library/sys_path_init.html), so a grader started inside a
    student's repository would import that repository's ``course/`` or ``random.py`` before its own, and run
    the student's code outside any confinement: start it elsewhere, with ``python -I``, which leaves the
    current folder off sys.path (https://docs.python.org/3/using/cmdline.html#cmdoption-I). Checked here
    too, so that a setup that forgets is refused rather than fooled (a student module already imported
    could hide from this check; the setup is what holds)."""
    graded = {Path(os.path.realpath(path)) for path in paths} | {Path(os.path.abspath(path)) for path in paths}
    own = [entry or os.getcwd() for entry in sys.path]
    own += [module.__file__ for module in list(sys.modules.values()) if isinstance(getattr(module, "__file__", None), str)]
    for place in own:
        where = Path(os.path.realpath(place))
        for folder in graded:
            if where == folder or folder in where.parents:
                raise CourseError(f"the grader would read its own code from {where}, inside {folder}, the folder "
                                  "being graded: start it from another folder with `python -I -m course grade FOLDER` "
                                  "(the course's own checkout, say), never from a student's repository")


ROSTER_LINE = re.compile(r"(?P<student>[A-Za-z0-9][A-Za-z0-9._-]{0,63})\s+(?P<url>\S+)(?:\s+(?P<ref>\S+))?")


def collect(roster: Path, into: Path, not_cloned: dict | None = None) -> Path:
    """Clone each student's repository of the roster (``STUDENT URL [REF]`` a line; # a comment) into
    INTO/STUDENT, named by the roster, never by the repository. A repository that cannot be cloned leaves
    its student's folder empty (graded 0, with the clone's error in ``not_cloned``), and the next is cloned."""
    import subprocess
    try:
        lines = roster.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise CourseError(f"--repos {roster}: {error.strerror or error}") from None
    into.mkdir(parents=True, exist_ok=True)
    for number, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = ROSTER_LINE.fullmatch(line)
        if not match or match["student"] in (".", ".."):
            raise CourseError(f"--repos {roster}, line {number}: expected STUDENT URL [REF] (a STUDENT of letters, "
                              f"digits, . _ -), got {line!r}")
        target = into / match["student"]
        if os.path.lexists(target):
            raise CourseError(f"--repos: {target} is already there: collect into an --out of its own")
        target.mkdir()
        # No hooks, no submodules, no credentials asked for on a terminal: a clone that cannot be made is one line.
        command = ["git", "-c", "core.hooksPath=/dev/null", "clone", "--quiet",
                   "--depth", "1", "--no-recurse-submodules"] + (["--branch", match["ref"]] if match["ref"] else []) \
            + ["--", match["url"], str(target)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
        if done.returncode:
            error = shown(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "git failed")
            print(f"{match['student']}: could not clone {shown(match['url'])}: {error}")
            if not_cloned is not None:
                not_cloned[match["student"]] = error[:200]
    return into


# ---------------------------------------------------------------- bench grading

def add_bench_grading(benchmarks) -> None:
    bench = benchmarks.add_parser("grading", help="how long grading a class takes: N copies of every stage")
    bench.add_argument("--copies", type=int, default=30, help="students in the class (default 30)")
    bench.add_argument("--jobs", type=int, default=0, help="copies graded at once (default: the machine's cores)")
    bench.add_argument("--json", action="store_true", help="print the result as JSON")


def do_bench_grading(args) -> int:
    result = grading.bench(args.copies, args.jobs)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{result['copies']} copies x {result['stages']} stages on {result['jobs']} jobs: {result['seconds']} s "
          f"({result['points']:g} of {result['max_points']:g} points: every rebuild exercise solved, no extension)")
    for stage, seconds in result["per_copy_cpu_seconds"].items():
        print(f"  {stage}: {seconds} s per copy (the children's wall time, summed over its exercises)")
    return 0


if __name__ == "__main__":
    sys.exit(0)
