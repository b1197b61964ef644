"""Grading a class: nothing in one student's folder ends the run, names another student, overwrites another
student's files, runs as a formula in a spreadsheet, or draws lines of its own in the terminal. Every
problem with one student's folder is that student's own row: 0 points and a one-line reason.

The copies here are the stubs ``course exercise`` writes: they are refused or scored 0 before any child
runs, so a class of them grades in well under a second with the real grader.
"""

from __future__ import annotations

import csv
import json
import os
import re

import pytest

from course.grading import grade as grading
from course.runtime.workspace import remove_tree
from course.__main__ import main
from test_grading import make_copy

pytestmark = pytest.mark.stage()  # these tests grade copies: they pin the grader, no stage

HOSTILE = os.fsdecode(b"j\xffx")  # a folder name that is not UTF-8


def hostile_class(root):
    """A class folder where each student but ana did something to the run."""
    klass = root / "class"
    make_copy(klass / "ana" / "s00", "s00")
    make_copy(klass / "bob" / "s00", "s00")
    make_copy(klass / "bob" / "old" / "s00", "s00")        # two copies of one stage
    make_copy(klass / "mallory", "s00")                    # a copy with no stage folder
    make_copy(klass / "nina" / "ana" / "s00", "s00")       # a copy in a folder named after another student
    (klass / "eve").mkdir()                                # nothing handed in
    make_copy(klass / "otto" / "s00", "s00")
    agent = klass / "otto" / "s00" / "agent.py"
    agent.write_text(agent.read_text(encoding="utf-8").replace('STAGE = "s00"', 'STAGE = "s99"'), encoding="utf-8")
    (klass / "zed").symlink_to(klass / "ana")               # a link where a folder should be
    make_copy(klass / HOSTILE / "s00", "s00")
    (klass / "roster.csv").write_text("ana,bob\n", encoding="utf-8")  # a file beside the students: no student
    return klass


STUDENTS = {"ana", "bob", "mallory", "nina", "eve", "otto", "zed", "j\\xffx"}  # the byte shown as its escape


@pytest.mark.parametrize("given", ["CLASS", "CLASS/*"])
def test_every_student_is_named_by_their_folder_and_no_folder_ends_the_run(tmp_path, given):
    klass = hostile_class(tmp_path)
    paths = [str(klass)] if given == "CLASS" else sorted(str(path) for path in klass.iterdir() if path.name != "roster.csv")
    found = grading.find_copies(paths)
    assert {student for student, *_ in found} == STUDENTS
    problems = {student: problem for student, _, _, problem in found if problem}
    assert set(problems) == {"bob", "eve", "otto", "zed"}
    assert "2 copies of s00" in problems["bob"] and "symbolic link" in problems["zed"]
    assert "s99" in problems["otto"] and "no copy" in problems["eve"]
    assert all("\n" not in problem for problem in problems.values())
    assert [stage for student, stage, _, problem in found if student == "mallory" and not problem] == ["s00"]
    assert [stage for student, stage, _, _ in found if student == "nina"] == ["s00"]

    out = tmp_path / "out"
    assert main(["grade", *paths, "--out", str(out), "--seed", "5"]) == 1
    book = json.loads((out / "gradebook.json").read_text(encoding="utf-8"))
    assert {row["student"] for row in book["rows"]} == STUDENTS
    for row in book["rows"]:
        assert row["points"] == 0
        if row["student"] in problems:
            assert row["reason"] and "\n" not in row["reason"]
    cards = list((out / "scorecards").iterdir())
    assert len(cards) == len(book["copies"])


def test_a_student_folder_given_alone_names_every_copy_in_it(tmp_path):
    klass = hostile_class(tmp_path)
    assert {student for student, *_ in grading.find_copies([str(klass / "nina")], student="nina")} == {"nina"}
    # Without --student, one path is a class folder whatever it holds: bob's folders are its "students".
    assert {student for student, *_ in grading.find_copies([str(klass / "bob")])} == {"s00", "old"}
    assert {student for student, *_ in grading.find_copies([str(klass / "bob")], student="bob")} == {"bob"}
    assert {student for student, *_ in grading.find_copies([str(klass / "ana" / "s00")])} == {"ana"}
    assert {student for student, *_ in grading.find_copies([str(klass / "bob")], student="bob-repo")} == {"bob-repo"}


def _grade(student: str, points: float = 1.0) -> grading.CopyGrade:
    exercise = grading.stage_exercises("s00")[0]
    result = grading.ExerciseResult(exercise, [grading.CaseResult("c", "g", points > 0)], points, 1.0,
                                    reason="" if points else "=1+1")
    return grading.CopyGrade(student, "s00", grading.Path("/nowhere") / student.replace("/", "_"), [result], 7,
                             confinement="confined")


RUNNER = {"CLASSROOM": "c", "ASSIGNMENT": "a", "SUBMISSION_TAG": "t", "COMMIT_URL": "u", "RELEASE_URL": "r"}


def test_names_cleaned_alike_keep_a_file_each(tmp_path):
    names = ["ana~b", "ana_b", "ana b", "Ana_b", "ANA_B", HOSTILE]
    grades = [_grade(name, points) for name, points in zip(names, (1.0, 0.0, 1.0, 0.0, 1.0, 0.0))]
    grading.write_gradebook(grades, tmp_path / "out")
    written = grading.write_classroom50(grades, tmp_path / "out", RUNNER)
    cards = sorted((tmp_path / "out" / "scorecards").iterdir())
    assert len(cards) == len(names) and len({path.name.lower() for path in cards}) == len(names)
    assert len(written) == len({path.name.lower() for path in written}) == len(names)
    scores = sorted(json.loads(path.read_text(encoding="utf-8"))["score"] for path in written)
    assert scores == [0, 0, 0, 1, 1, 1]
    assert (tmp_path / "out" / "scorecards" / "ana_b-s00.txt").is_file()  # a plain name stays as it is


FORMULAS = ['=HYPERLINK("https://example.com","x")', "+1", "-2", "@SUM(A1)", "\tx", "\rx", "=1+1", " =1+1",
            "\uff1d1+1", " \uff0bSUM(A1)"]


def test_no_text_cell_of_the_gradebook_starts_a_formula(tmp_path):
    grading.write_gradebook([_grade(name, 0.0) for name in FORMULAS], tmp_path / "out")
    with (tmp_path / "out" / "gradebook.csv").open(encoding="utf-8", newline="") as handle:
        read = list(csv.DictReader(handle))
    assert [row["student"] for row in read] == ["'" + name for name in FORMULAS]
    assert all(row["reason"] == "'=1+1" for row in read)
    for row in read:
        assert not any(value.lstrip()[:1] in grading.FORMULA_STARTS or value[:1] in ("\t", "\r") for value in row.values())


FORGERY = "bob\x1b[2K\r\nbob  s00  3 of 3 points\x1b]8;;https://example.com\x07"


def test_a_folder_name_draws_no_line_of_its_own(tmp_path, capsys):
    klass = tmp_path / "class"
    make_copy(klass / FORGERY / "s00", "s00")
    make_copy(klass / "ana" / "s00", "s00")
    summary = tmp_path / "summary.md"
    main(["grade", str(klass), "--out", str(tmp_path / "out"), "--seed", "5", "--summary", str(summary)])
    printed = capsys.readouterr().out
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", printed)
    lines = printed.splitlines()
    assert len(lines) == 3 and not any(line.startswith("bob  s00  3 of 3") for line in lines)
    markdown = summary.read_text(encoding="utf-8")
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", markdown)
    assert not any(line.startswith("bob") for line in markdown.splitlines())  # the name stays inside its code span


def test_a_student_named_like_a_stage_or_a_folder_named_agent_py_leaves_the_class_a_class(tmp_path):
    """The class folder is one student's only when a copy (sNN/agent.py) or agent.py itself is directly in
    it: a student's folder named s01, or a folder named agent.py, does not make it so."""
    klass = tmp_path / "class"
    make_copy(klass / "s01" / "s03", "s03")
    make_copy(klass / "bob" / "s03", "s03")
    (klass / "agent.py").mkdir()
    found = grading.find_copies([str(klass)])
    assert {(student, stage) for student, stage, _, problem in found if not problem} == {("s01", "s03"), ("bob", "s03")}


def test_a_copy_the_grader_cannot_read_is_that_students_row_and_the_others_are_graded(tmp_path):
    """An unknown coding, an expression nested deeper than the parser goes, and a chain of folders
    thousands deep: each is one student's row; the run goes on and grades the others."""
    klass = tmp_path / "class"
    for student in ("ana", "bob", "carl", "dora"):
        make_copy(klass / student / "s00", "s00")
    ana = klass / "ana" / "s00" / "agent.py"
    ana.write_text("# -*- coding: undefined -*-\n" + ana.read_text(encoding="utf-8"), encoding="utf-8")
    bob = klass / "bob" / "s00" / "agent.py"
    bob.write_text(bob.read_text(encoding="utf-8") + "\nx = " + "+".join(["1"] * 200_000) + "\n", encoding="utf-8")
    deep = str(klass / "carl")
    descriptor = os.open(deep, os.O_RDONLY)
    try:
        for _ in range(1_400):  # by descriptor: a path this deep is longer than PATH_MAX
            os.mkdir("d", dir_fd=descriptor)
            descriptor, above = os.open("d", os.O_RDONLY, dir_fd=descriptor), descriptor
            os.close(above)
    finally:
        os.close(descriptor)
    try:
        found = grading.find_copies([str(klass)])
        grades = grading.grade_copies(found, grading.Options(confine=False, seed=1))
    finally:
        remove_tree(deep)  # pytest's own clean-up recurses, one level a call
    by_student = {grade.student: grade for grade in grades}
    assert set(by_student) == {"ana", "bob", "carl", "dora"}
    assert by_student["ana"].refused and by_student["bob"].refused and "\n" not in by_student["bob"].refused
    assert not by_student["carl"].refused and not by_student["dora"].refused
    assert grading.printable_name("a\ud800b") == "a\\ud800b"  # a lone surrogate, as a copy may report one


def test_an_easier_stage_handed_in_as_a_harder_one_is_that_students_row(tmp_path):
    klass = tmp_path / "class"
    make_copy(klass / "ana" / "s03", "s00")  # s00's copy in a folder named s03
    make_copy(klass / "bob" / "s03", "s03")
    found = {student: (stage, problem) for student, stage, _, problem in grading.find_copies([str(klass)])}
    assert "the folder says s03, its agent.py says s00" in found["ana"][1] and found["bob"] == ("s03", "")


def test_a_name_that_draws_nothing_is_shown_and_every_cell_is_quoted(tmp_path):
    """A zero-width space makes "bob\\u200b" look like bob: it is shown as its escape. Every field of the
    CSV is quoted, so a spreadsheet that splits on ';' keeps "x;=1+1" one cell that begins with x."""
    klass = tmp_path / "class"
    for student in ("bob", "bob\u200b", "x;=1+1"):
        make_copy(klass / student / "s00", "s00")
    found = grading.find_copies([str(klass)])
    assert {student for student, *_ in found} == {"bob", "bob\\u200b", "x;=1+1"}
    book, _ = grading.write_gradebook(grading.grade_copies(found, grading.Options(confine=False, seed=1)), tmp_path / "out")
    rows = book.read_text(encoding="utf-8").splitlines()
    assert all(line.startswith('"') and line.endswith('"') for line in rows) and any('"x;=1+1"' in line for line in rows)


def test_a_name_written_like_a_line_of_grades_is_quoted_and_cut_and_the_points_stay_on_the_screen(tmp_path, capsys):
    klass = tmp_path / "class"
    fake = "zed  s03  3 of 3 points  all passed" + " " * 150
    for student in (fake, "ana"):
        make_copy(klass / student / "s00", "s00")
    main(["grade", str(klass), "--out", str(tmp_path / "out")])
    lines = [line for line in capsys.readouterr().out.splitlines() if "points" in line]
    zed = next(line for line in lines if line.startswith('"zed'))
    assert len(zed.split("…", 1)[0]) <= 33 and zed.split("…", 1)[1].split()[:4] == ['"', "s00", "0", "of"]


def test_an_easier_stage_in_a_folder_named_like_no_stage_is_a_zero_of_the_stages_asked_for(tmp_path, capsys):
    klass = tmp_path / "class"
    make_copy(klass / "ana" / "hw", "s00")  # s00's copy handed in for an assignment of s03
    make_copy(klass / "bob" / "hw", "s03")
    kept = grading.only_stages(grading.find_copies([str(klass)]), {"s03"})
    rows = {student: (stage, problem) for student, stage, _, problem in kept}
    assert rows["bob"] == ("s03", "")
    assert rows["ana"][0] == "s03" and "no copy of s03 (found s00 in " in rows["ana"][1]
    main(["grade", str(klass), "--out", str(tmp_path / "out"), "--seed", "5", "--stages", "s03"])
    book = [row for row in csv.DictReader((tmp_path / "out" / "gradebook.csv").open(encoding="utf-8"))
            if row["student"] == "ana"]
    assert book and all(row["stage"] == "s03" and float(row["points"]) == 0 and "no copy of s03" in row["reason"]
                        for row in book)


def test_one_student_graded_for_a_stage_they_did_not_hand_in_gets_a_row_not_a_crash(tmp_path, capsys, monkeypatch):
    from test_grading import RUNNER
    for name, value in RUNNER.items():
        monkeypatch.setenv(name, value)
    repository = tmp_path / "repo"
    make_copy(repository / "hw", "s00")
    main(["grade", str(repository), "--student", "ana", "--stages", "s03", "--out", str(tmp_path / "out"),
          "--format", "classroom50", "--seed", "5"])
    printed = capsys.readouterr().out
    assert "no copy of s03" in printed
    assert (tmp_path / "out" / "result.json").is_file()



def test_a_folder_named_like_a_runners_workflow_command_starts_no_line(tmp_path, capsys):
    klass = tmp_path / "class"
    make_copy(klass / "::add-mask::points" / "s00", "s00")
    make_copy(klass / "ana" / "s00", "s00")
    main(["grade", str(klass), "--out", str(tmp_path / "out"), "--seed", "5"])
    lines = capsys.readouterr().out.splitlines()
    assert any("::add-mask::points" in line for line in lines)  # the student is shown
    assert not any(line.lstrip().startswith("::") for line in lines), lines
