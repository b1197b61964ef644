"""Exercises for instructors: regions are found, a student copy is stubbed, and a check grades it.

The checks run the stage's pinned tests in a child process, as an instructor's `python -m course check`
does: each is forked from a server that has imported pytest and the SDK once.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import course
from helpers import load_stage
from course.grading import exercises
from course.grading.exercises import (STUDENT_STAGE_VARIABLE, Region, PinnedTest, PytestRun, check, find_regions,
                              make_student_copy, run_pinned_tests, scorecard, stub_out)

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.stage()  # these tests grade copies of the stages: they pin the grader, no stage

GRADED_STAGES = ["s00", "s01", "s02", "s03"]  # graded for real (a child process each): the four
ALL_STAGES = sorted(path.parent.name for path in ROOT.glob("s0*/agent.py"))


def reference_source(stage: str) -> str:
    return (ROOT / stage / "agent.py").read_text(encoding="utf-8")


def verdicts(printed: str) -> dict[int, str]:
    """{exercise number: PASSED / FAILED / NOT PINNED / NOT RUN}, read from a printed scorecard."""
    found = re.findall(r"^  exercise (\d+): .*?  (PASSED|FAILED|NOT PINNED|NOT RUN)\b", printed, re.MULTILINE)
    return {int(number): verdict for number, verdict in found}


def solve(dest: Path, stage: str, number: int) -> None:
    """Paste the reference statements of one exercise back over its stub, as a student who solved it."""
    reference = reference_source(stage)
    region = next(region for region in find_regions(reference) if region.number == number)
    solution = "".join(reference.splitlines(keepends=True)[region.start:region.end - 1])
    student = (dest / "agent.py").read_text(encoding="utf-8")
    assert student.count(region.stub(stage)) == 1
    (dest / "agent.py").write_text(student.replace(region.stub(stage), solution), encoding="utf-8")


# ---------------------------------------------------------------- finding regions

SOURCE = '''\
def dispatch(name):
    # >>> exercise 1: Dispatch by name
    function = TABLE[name]
    return function()
    # <<< exercise 1


def answer(call):
    # >>> exercise 2: Answer the call
    return {"id": call.id,
"name": call.name}
    # <<< exercise 2
'''


def test_finds_each_region_with_its_number_title_lines_and_indentation():
    assert find_regions(SOURCE) == [Region(1, "Dispatch by name", 2, 5, "    "),
                                    Region(2, "Answer the call", 9, 12, "    ")]


def test_marker_text_inside_a_string_is_not_a_marker():
    source = 'HELP = """\n# >>> exercise 1: Not a region\n"""\n'
    assert find_regions(source) == []


@pytest.mark.parametrize("stage", ALL_STAGES)
def test_every_stage_marks_at_least_two_exercises(stage):
    numbers = [region.number for region in exercises.stage_regions(stage)]
    assert len(numbers) >= 2 and numbers == sorted(set(numbers))


MALFORMED = {
    "unclosed": ("x = 1\n# >>> exercise 1: Open\ny = 2\n", "line 2", "never closed"),
    "nested": ("# >>> exercise 1: Outer\n# >>> exercise 2: Inner\nx = 1\n# <<< exercise 2\n# <<< exercise 1\n",
               "line 2", "cannot nest"),
    "mismatched": ("# >>> exercise 1: One\nx = 1\n# <<< exercise 2\n", "line 3", "must match"),
    "closed twice": ("# >>> exercise 1: One\nx = 1\n# <<< exercise 1\n# <<< exercise 1\n", "line 4", "closes no open"),
    "uneven markers": ("if True:\n    # >>> exercise 1: One\n    x = 1\n# <<< exercise 1\n", "line 4", "indented like"),
    "statements left of the markers": ("if True:\n    # >>> exercise 1: One\n    x = 1\ny = 2\n    # <<< exercise 1\n",
                                       "line 4", "uneven indentation"),
    "statements right of the markers": ("def f():\n# >>> exercise 1: One\n    x = 1\n# <<< exercise 1\n", "line 3",
                                        "uneven indentation"),
    "not python": ("# >>> exercise 1: One\nx = (\n# <<< exercise 1\n", "line 2", "never closed"),
    "no statements": ("# >>> exercise 1: Empty\n# just a comment\n# <<< exercise 1\n", "line 1", "no statements"),
    "number used twice": ("# >>> exercise 1: A\nx = 1\n# <<< exercise 1\n# >>> exercise 1: B\ny = 2\n# <<< exercise 1\n",
                          "line 4", "already used"),
    "no title": ("# >>> exercise 1\nx = 1\n# <<< exercise 1\n", "line 1", "malformed exercise marker"),
    "capital E": ("# >>> Exercise 1: One\nx = 1\n# <<< exercise 1\n", "line 1", "malformed exercise marker"),
}


@pytest.mark.parametrize("source, line, reason", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_markers_are_a_one_line_error_naming_the_line(source, line, reason):
    with pytest.raises(course.CourseError) as raised:
        find_regions(source, "s09/agent.py")
    message = str(raised.value)
    assert f"s09/agent.py, {line}:" in message and reason in message
    assert "\n" not in message


# ---------------------------------------------------------------- the student copy

@pytest.mark.parametrize("stage", GRADED_STAGES)
def test_the_stubbed_stage_compiles_keeps_its_markers_and_names_each_exercise(stage):
    source = reference_source(stage)
    regions = find_regions(source)
    stubbed = stub_out(source, regions, stage)
    compile(stubbed, f"student {stage}", "exec")
    assert find_regions(stubbed) == [Region(region.number, region.title, *_stubbed_lines(regions, region), region.indent)
                                     for region in regions]
    for region in regions:
        assert f"raise NotImplementedError('exercise {region.number}: {region.title} — see the {stage} chapter')" in stubbed


def _stubbed_lines(regions: list[Region], region: Region) -> tuple[int, int]:
    """Where a region's markers land once every region before it shrank to one stub line."""
    removed = sum(earlier.end - earlier.start - 2 for earlier in regions if earlier.start < region.start)
    return region.start - removed, region.start - removed + 2


def test_a_student_copy_holds_the_stubbed_agent_and_the_notebooks_pointed_at_it(tmp_path, capsys):
    dest = make_student_copy("s01", tmp_path / "student")
    assert dest == (tmp_path / "student").resolve()
    agent = (dest / "agent.py").read_text(encoding="utf-8")
    assert "# >>> exercise 1: " in agent and "raise NotImplementedError('exercise 1: " in agent
    assert (dest / "__init__.py").is_file()
    printed = capsys.readouterr().out
    assert str(dest / "agent.py") in printed and ".venv/bin/python -m course check s01" in printed
    for notebook in (ROOT / "s01").glob("*.ipynb"):
        copied = (dest / notebook.name).read_text(encoding="utf-8")
        assert "from s01 import agent" not in copied and "import agent  # your copy" in copied


def test_a_student_copy_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(course.CourseError, match="not empty"):
        make_student_copy("s00", tmp_path)
    assert not (tmp_path / "agent.py").exists()
    make_student_copy("s00", tmp_path, force=True)
    assert (tmp_path / "agent.py").is_file() and (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_an_unknown_stage_is_a_one_line_error(tmp_path):
    with pytest.raises(course.CourseError, match=r"no stage 's99'; the stages are s00, s01"):
        make_student_copy("s99", tmp_path / "student")


def test_checking_a_folder_without_a_copy_says_how_to_make_one(tmp_path):
    with pytest.raises(course.CourseError, match=re.escape(".venv/bin/python -m course exercise s00")):
        check("s00", tmp_path)


# ---------------------------------------------------------------- loading a student copy

@pytest.fixture
def forget_student_copies():
    yield
    for stage in GRADED_STAGES:
        sys.modules.pop(exercises.student_module_name(stage), None)


def test_load_stage_imports_the_student_copy_a_check_names(tmp_path, monkeypatch, forget_student_copies):
    make_student_copy("s00", tmp_path)
    monkeypatch.setenv(STUDENT_STAGE_VARIABLE, f"s00={tmp_path}")
    student = load_stage("s00")
    assert Path(student.__file__) == tmp_path / "agent.py"
    with pytest.raises(NotImplementedError, match="exercise 2"):
        student.tool_result(tmp_path, None)
    assert load_stage("s01").__name__ == "s01.agent"  # other stages load normally


@pytest.mark.stage()  # it tests how a copy is loaded; it pins no stage's code
def test_a_student_copy_of_s06_decides_with_its_own_permissions_module(tmp_path, monkeypatch):
    # s06's decision is in permissions.py beside its agent.py: the copy's agent must use the copy's
    # module, stubs and all, never the reference's; what the gate reads it on is the support package's.
    make_student_copy("s06", tmp_path)
    assert not (tmp_path / "gate.py").exists() and not (tmp_path / "confine.py").exists()
    monkeypatch.setenv(STUDENT_STAGE_VARIABLE, f"s06={tmp_path}")
    try:
        student = load_stage("s06")
        student_permissions = sys.modules["student_copy_of_s06.permissions"]
        assert Path(student_permissions.__file__) == tmp_path / "permissions.py"
        assert student.Gate is student_permissions.Gate
        text, is_error = student.run_tool(tmp_path, "list_files", {"path": "."},
                                          student.Gate(rules=student.RULES, audit_log=False))
        assert is_error and "exercise 1: Decide: deny, then ask, then allow, then the default" in text
    finally:
        for name in [name for name in sys.modules if name.startswith("student_copy_of_s06")]:
            del sys.modules[name]


def test_load_stage_imports_the_reference_without_a_check(monkeypatch):
    monkeypatch.delenv(STUDENT_STAGE_VARIABLE, raising=False)
    assert load_stage("s00").__name__ == "s00.agent"


# ---------------------------------------------------------------- the scorecard

PLUGIN_TESTS = '''
import pytest
from course.grading.exercises import import_student_copy

pytestmark = pytest.mark.stage("s00")

@pytest.fixture
def stage():
    return import_student_copy("s00")

@pytest.mark.stage("s01")
@pytest.mark.exercise(1)
def test_of_another_stage_is_left_out(stage):
    assert False, "grading s00 must not run a test that pins s01"

@pytest.mark.stage()
def test_that_pins_no_stage_is_left_out(stage):
    assert False, "grading s00 must not run a test that pins no stage"

@pytest.mark.exercise(1)
def test_one_passes(stage):
    assert stage.STAGE == "s00"

@pytest.mark.exercise(2)
@pytest.mark.parametrize("n", [1, 2])
def test_two_fails(stage, n):
    assert n == 1, "two is not one"

@pytest.mark.exercise(1, 2)
def test_both_skip():
    pytest.skip("not today")

@pytest.fixture
def broken():
    raise RuntimeError("setup broke")

def test_untied_errors_in_setup(broken):
    pass
'''


def test_the_plugin_records_outcomes_markers_and_whole_first_failures(tmp_path):
    make_student_copy("s00", tmp_path / "student")
    (tmp_path / "test_plugin_s00.py").write_text(PLUGIN_TESTS, encoding="utf-8")
    run = run_pinned_tests("s00", tmp_path / "student", [tmp_path / "test_plugin_s00.py"])
    outcomes = {test.name: (test.outcome, test.exercises, test.message) for test in run.outcomes}
    assert outcomes == {
        "test_one_passes": ("passed", (1,), ""),
        "test_two_fails[1]": ("passed", (2,), ""),
        "test_two_fails[2]": ("failed", (2,), "AssertionError: two is not one\nassert 2 == 1"),  # whole, for -v
        "test_both_skip": ("skipped", (1, 2), ""),
        "test_untied_errors_in_setup": ("failed", (), "RuntimeError: setup broke"),
    }
    assert run.student_copy_loaded and not run.collection_errors and not run.passed


def test_a_copy_that_never_finishes_is_stopped_at_the_time_limit_in_one_line(tmp_path, monkeypatch):
    (tmp_path / "agent.py").write_text("import time\nSTAGE = 's00'\nwhile True:\n    time.sleep(1)\n", encoding="utf-8")
    (tmp_path / "test_waits_s00.py").write_text(PLUGIN_TESTS, encoding="utf-8")
    monkeypatch.setattr(exercises, "CHECK_TIMEOUT_SECONDS", 1)
    with pytest.raises(course.CourseError, match=r"ran longer than 1 s .* does a loop in the student copy never end"):
        run_pinned_tests("s00", tmp_path, [tmp_path / "test_waits_s00.py"])


def test_a_copy_that_ends_the_test_process_is_reported_in_one_line(tmp_path):
    (tmp_path / "agent.py").write_text("import os\nprint('bye')\nos._exit(3)\n", encoding="utf-8")
    (tmp_path / "test_exits_s00.py").write_text(PLUGIN_TESTS, encoding="utf-8")
    with pytest.raises(course.CourseError, match=r"^pytest ended \(exit 3\) without results: it printed nothing: does the student copy end the process itself"):
        run_pinned_tests("s00", tmp_path, [tmp_path / "test_exits_s00.py"])


def test_a_scorecard_has_a_line_per_exercise_per_shared_group_and_for_the_rest():
    regions = [Region(1, "One", 1, 3, ""), Region(2, "Two", 4, 6, ""), Region(3, "Three", 7, 9, "")]
    run = PytestRun([PinnedTest("test_a", "passed", (1,)),
                   PinnedTest("test_b[x]", "failed", (2,), "AssertionError: no"),
                   PinnedTest("test_b[y]", "failed", (2,), "AssertionError: no"),
                   PinnedTest("test_c", "failed", (1, 2), "NotImplementedError: exercise 2"),
                   PinnedTest("test_d", "passed", ()),
                   PinnedTest("test_e", "passed", (7,))], [], True)
    printed = scorecard("s09", Path("/student"), [Path("test_s09.py")], regions, run)
    assert verdicts(printed) == {1: "PASSED", 2: "FAILED", 3: "NOT PINNED", 7: "PASSED"}
    assert "exercise 2: Two" in printed and "test_b (2 cases)" in printed
    assert "exercise 3: Three" in printed and "no test carries @pytest.mark.exercise(3)" in printed
    assert "exercise 7: (no such exercise region)" in printed
    assert re.search(r"exercises 1 \+ 2 together +FAILED  test_c", printed)
    assert re.search(r"not tied to an exercise +PASSED  \(1 test\)", printed)
    assert "total: 1 of 3 exercises passed; 3 of 6 tests passed" in printed
    assert "AssertionError: no  (2 tests)" in printed and "test_c: NotImplementedError: exercise 2" in printed


def test_a_scorecard_cuts_reasons_to_a_line_and_shows_them_whole_when_asked():
    long_reason = "AssertionError: the loop should trace each reply " + "x" * 200 + "\nassert 0 == 3\n +  where 0 = len([])"
    run = PytestRun([PinnedTest("test_a", "failed", (1,), long_reason)], [], True)
    regions = [Region(1, "One", 1, 3, "")]
    cut = scorecard("s09", Path("/student"), [Path("test_s09.py")], regions, run)
    assert long_reason not in cut and "assert 0 == 3" not in cut
    assert max(len(line) for line in cut.splitlines()) <= 200 and "add -v" in cut
    whole = scorecard("s09", Path("/student"), [Path("test_s09.py")], regions, run, whole_reasons=True)
    assert all(f"    {line}" in whole.splitlines() for line in long_reason.splitlines())
    assert "add -v" not in whole


def test_check_runs_the_course_tests_only_when_asked_for_practice(monkeypatch):
    from course.grading import exercises
    from course.__main__ import main

    asked = {}
    monkeypatch.setattr(exercises, "check", lambda stage, dest, whole_reasons=False: asked.update(whole=whole_reasons) or 0)
    assert main(["check", "s01", "somewhere", "--course-tests", "-v"]) == 0 and asked == {"whole": True}
    assert main(["check", "s01", "somewhere", "--course-tests"]) == 0 and asked == {"whole": False}
    asked.clear()
    assert main(["check", "s01", "nowhere-at-all"]) == 1 and asked == {}  # a grade never comes from them


def test_a_scorecard_says_when_the_tests_could_not_be_collected():
    run = PytestRun([], ["tests/test_s09.py: ImportError: boom"], False)
    printed = scorecard("s09", Path("/student"), [Path("test_s09.py")], [Region(1, "One", 1, 3, "")], run)
    assert verdicts(printed) == {1: "NOT RUN"}
    assert "could not collect tests/test_s09.py: ImportError: boom" in printed and not run.passed


@pytest.mark.parametrize("stage", ALL_STAGES)
def test_every_exercise_of_every_stage_is_pinned_by_a_test(stage):
    """Read off the test files, without running them: a region no test marks could never fail a student."""
    pinned = set()
    for test_file in ROOT.glob(f"tests/test_{stage}*.py"):
        for numbers in re.findall(r"@pytest\.mark\.exercise\(([\d, ]+)\)", test_file.read_text(encoding="utf-8")):
            pinned.update(int(number) for number in numbers.split(","))
    assert {region.number for region in exercises.stage_regions(stage)} <= pinned


# ---------------------------------------------------------------- grading real stages

# Grading real stages, confined, is tests/test_grading.py's: every stage's reference passes and its
# fresh copy fails there. Here, only what the practice run of the course's own tests needs.


def test_a_copy_to_where_no_folder_can_be_is_one_line(tmp_path):
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    with pytest.raises(course.CourseError, match=r"^cannot write a student copy to .*a-file/copy"):
        make_student_copy("s00", tmp_path / "a-file" / "copy")


def test_checking_a_copy_that_is_not_utf8_is_one_line(tmp_path):
    make_student_copy("s00", tmp_path)
    (tmp_path / "agent.py").write_bytes(b"x = '\xff'\n")
    with pytest.raises(course.CourseError, match=r"^cannot read .*agent\.py as Python source"):
        check("s00", tmp_path)
