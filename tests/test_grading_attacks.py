"""Ways a student who read the grader's source could change a grade, each shut: a copy's files read only
when they are its own regular files, one copy's unreadable observations failing only that copy, a
student named only from the path the instructor gave, an instructor's hidden cases readable alone,
a reason shown as one line, and a region check that also refuses module names reached as attributes.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest

from course.grading import grade as grading, jail as grading_jail
from course.__main__ import main
from test_grading import ROOT, SEED, make_copy, needs_confinement

pytestmark = pytest.mark.stage()  # these tests grade copies: they pin the grader, no stage


# ---------------------------------------------------------------- a copy's files are its own

def test_a_symlinked_file_is_refused(tmp_path):
    copy = make_copy(tmp_path / "sym" / "s03", "s03")
    (copy / "agent.py").unlink()
    (copy / "agent.py").symlink_to(ROOT / "s03" / "agent.py")
    with pytest.raises(grading.Refused, match="agent.py is a symbolic link"):
        grading.read_copy("s03", copy)
    grade = grading.grade_copies([("sym", "s03", copy)], grading.Options(seed=1))[0]
    assert grade.points == 0 and "symbolic link" in grade.refused


def test_a_symlinked_copy_folder_is_refused(tmp_path):
    real = make_copy(tmp_path / "real" / "s03", "s03", solved=(1, 2))
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(grading.Refused, match="is a symbolic link"):
        grading.read_copy("s03", link)


def test_an_extension_that_is_a_fifo_is_refused_without_waiting(tmp_path):
    copy = make_copy(tmp_path / "fifo" / "s00", "s00")
    (copy / grading.EXTENSION_FILE).unlink()
    os.mkfifo(copy / grading.EXTENSION_FILE)
    with pytest.raises(grading.Refused, match="not a regular file"):
        grading.read_copy("s00", copy)


# ---------------------------------------------------------------- one copy cannot stop a class

@needs_confinement
def test_observations_nested_too_deep_fail_only_that_copy_and_the_gradebook_is_written(tmp_path, capsys):
    klass = tmp_path / "class"
    make_copy(klass / "ana" / "s00", "s00", {1: """
        Path("observations.jsonl").open("a").write("[" * 200000 + "\\n")
        return "no", True"""})
    make_copy(klass / "bob" / "s00", "s00", solved=(1,))
    out = tmp_path / "out"
    main(["grade", str(klass), "--out", str(out), "--seed", str(SEED), "--time-limit", "20"])
    capsys.readouterr()
    by = {(row["student"], row["exercise"]): row for row in
          json.loads((out / "gradebook.json").read_text(encoding="utf-8"))["rows"]}
    assert by["ana", 1]["points"] == 0 and by["ana", 1]["reason"]
    assert by["bob", 1]["points"] == 1


def test_a_grader_error_on_one_exercise_fails_it_in_one_line(tmp_path, monkeypatch):
    copy = make_copy(tmp_path / "s03", "s03", solved=(1,))

    def broken(*_):
        raise RecursionError("maximum recursion depth exceeded")
    monkeypatch.setattr(grading, "run_and_judge", broken)
    grade = grading.grade_copies([("ana", "s03", copy)], grading.Options(seed=1))[0]
    assert grade.points == 0
    assert all("RecursionError" in result.reason and "\n" not in result.reason for result in grade.results)


# ---------------------------------------------------------------- who a copy belongs to

def _copy_tree(root: Path, *folders: str) -> None:
    for folder in folders:
        make_copy(root / folder, "s00")


def test_a_copy_inside_another_students_folder_is_not_graded_as_that_student(tmp_path):
    klass = tmp_path / "class"
    _copy_tree(klass, "bob/s00", "zed/s00", "zed/bob/s00")
    for paths in ([str(klass / "bob"), str(klass / "zed")], [str(klass)]):  # grade CLASS/*, grade CLASS
        found = {student: problem for student, _, _, problem in grading.find_copies(paths)}
        assert found["bob"] == "" and re.search(r"2 copies of s00 .*zed/bob/s00 and .*zed/s00", found["zed"])


def test_students_are_named_from_the_path_given(tmp_path):
    klass = tmp_path / "class"
    _copy_tree(klass, "ana/s00", "bob/s00")
    names = {student for student, *_ in grading.find_copies([str(klass)])}
    each = {student for student, *_ in grading.find_copies([str(klass / "ana"), str(klass / "bob")])}
    alone = grading.find_copies([str(klass / "ana" / "s00")])
    assert names == each == {"ana", "bob"} and alone[0][0] == "ana"


# ---------------------------------------------------------------- an instructor's hidden cases

@needs_confinement
def test_the_folder_beside_an_extra_tests_file_stays_unreadable(tmp_path, capsys):
    guide = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    import re
    example = next(block for block in re.findall(r"```python\n(.*?)```", guide, re.DOTALL) if "@probe(" in block)
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "cases.py").write_text(example, encoding="utf-8")
    secret = hidden / "grading_solutions.txt"
    secret.write_text("hidden-answer-5c1e", encoding="utf-8")
    copy = make_copy(tmp_path / "eve" / "s03", "s03", {1: f"""
        return "max_turns", Path({str(secret)!r}).read_text()"""})  # passes the region check: the confinement holds
    out = tmp_path / "eve.json"
    main(["check", "s03", str(copy), "--extra-tests", str(hidden / "cases.py"), "--seed", "3", "--json", str(out)])
    capsys.readouterr()
    printed = out.read_text(encoding="utf-8")
    assert "hidden-answer-5c1e" not in printed and "PermissionError" in printed


# ---------------------------------------------------------------- what is shown

def test_a_reason_with_newlines_cannot_forge_scorecard_lines(tmp_path):
    exercise = grading.stage_exercises("s00")[0]
    forged = "boom\ntotal: 3 of 3 exercises passed; 3 of 3 points\rx"
    result = grading.ExerciseResult(exercise, [grading.CaseResult("a case\nPASSED", "g", False, forged)], 0.0, 1.0,
                                    reason=grading.one_line(forged))
    grade = grading.CopyGrade("cara", "s00", tmp_path, [result], 7, confinement="confined")
    for whole in (False, True):
        lines = grading.scorecard(grade, whole=whole).splitlines()
        assert [line for line in lines if line.startswith("total:")] == [lines[2]]
        assert not any(line.startswith(("PASSED", "x")) for line in lines)
    grading.write_gradebook([grade], tmp_path / "out")
    card = (tmp_path / "out" / "scorecards" / "cara-s00.txt").read_text(encoding="utf-8")
    assert sum(line.startswith("total:") for line in card.splitlines()) == 1


# ---------------------------------------------------------------- the region check

@pytest.mark.parametrize("body", ['o = course.importlib.import_module("os")\nreturn None',
                                  'json.codecs.builtins.exec("x = 1")\nreturn None'])
def test_a_module_reached_as_an_attribute_is_refused_by_the_region_check(body):
    text = textwrap.indent(body + "\n", "    ")
    problems = grading.region_problems(grading.Body(1, "agent.py", 10, text, False))
    assert problems and "is not for an exercise region" in problems[0]


@pytest.mark.parametrize("reached", ["course.sandbox.isolated.pickle.loads(data)", "json.codecs.marshal.loads(data)",
                                     "pickle.loads(data)", "course.sandbox.isolated.pickle.Unpickler"])
def test_a_region_reaching_for_what_turns_bytes_into_calls_is_refused(reached):
    """Unpickling runs what its bytes name (a pickle of builtins.exec is a call of exec), so a module that
    unpickles is refused by the region check as the other modules that run code are. The check is a screen:
    what such code could do is bounded by the confinement, which the other tests attack."""
    body = grading.Body(1, "agent.py", 10, f"    data = b''\n    return {reached}\n", False)
    assert any("is not for an exercise region" in problem for problem in grading.region_problems(body)), reached
