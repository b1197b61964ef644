"""Who a student is depends on the paths an instructor gives, never on how students named their folders.

A student's folder named like a stage (``CLASS/s03``) is the student "s03"; it does not make the class folder
one student's, which had put every classmate under one name with "3 copies of s03" and 0 points. The same name
in two sections is two students, and two names that print alike (a Latin-1 byte shown as ``\\xe9`` beside a
folder literally named ``jos\\xe9``; an invisible joiner; an NFD ``josé`` beside the NFC one; a Cyrillic ``а``
beside a Latin ``a``) are two students, each with a hash to tell them apart.
The copies are the stubs ``course exercise`` writes, so nothing here runs a child.
"""

from __future__ import annotations

import os

import pytest

from course.grading import grade as grading
from course.__main__ import main
from test_grading import make_copy

pytestmark = pytest.mark.stage()  # these tests read a class as the grader does: they pin the grader, no stage


def rows(paths) -> dict[str, list[tuple[str, str]]]:
    found = {}
    for student, stage, folder, problem in grading.find_copies([str(path) for path in paths]):
        found.setdefault(student, []).append((stage, problem))
    return found


def test_a_student_folder_named_like_a_stage_is_one_student_and_the_class_stays_a_class(tmp_path, capsys):
    klass = tmp_path / "class"
    for name in ("bob", "carol"):
        make_copy(klass / name / "s00", "s00")
    make_copy(klass / "s00", "s00")  # a student who named their hand-in after the stage
    found = rows([klass])
    assert found == {"bob": [("s00", "")], "carol": [("s00", "")], "s00": [("s00", "")]}
    assert main(["grade", str(klass), "--out", str(tmp_path / "out"), "--seed", "3"]) in (0, 1)
    assert "note: every student" not in capsys.readouterr().err


def test_one_students_folder_given_as_a_class_is_said_once_and_graded_as_given(tmp_path, capsys):
    ana = tmp_path / "ana"
    make_copy(ana / "s00", "s00")
    assert rows([ana]) == {"s00": [("s00", "")]}
    main(["grade", str(ana), "--out", str(tmp_path / "out"), "--seed", "3"])
    assert "give --student NAME" in capsys.readouterr().err
    assert set(rows_with_student(ana, "ana")) == {"ana"}


def rows_with_student(path, student):
    return {name for name, *_ in grading.find_copies([str(path)], student=student)}


def test_the_same_name_in_two_sections_is_two_students(tmp_path):
    for section in ("secA", "secB"):
        make_copy(tmp_path / section / "ana" / "s00", "s00")
    make_copy(tmp_path / "secA" / "bob" / "s00", "s00")
    paths = sorted(path for section in ("secA", "secB") for path in (tmp_path / section).iterdir())
    assert rows(paths) == {"secA/ana": [("s00", "")], "secB/ana": [("s00", "")], "bob": [("s00", "")]}
    copies = [(tmp_path / "secA" / "ana" / "s00"), (tmp_path / "secB" / "ana" / "s00")]
    assert rows(copies) == {"secA/ana": [("s00", "")], "secB/ana": [("s00", "")]}  # each copy given itself


@pytest.mark.parametrize("raw, literal", [(b"jos\xe9", "jos\\xe9"), ("mohammad\u200creza".encode(), "mohammad\\u200creza")],
                         ids=["a Latin-1 byte", "an invisible joiner"])
def test_two_names_that_print_alike_are_two_students_each_with_a_hash(tmp_path, raw, literal):
    klass = tmp_path / "class"
    os.makedirs(os.path.join(os.fsencode(klass), raw))
    make_copy(klass / os.fsdecode(raw) / "s00", "s00")
    make_copy(klass / literal / "s00", "s00")
    found = rows([klass])
    assert len(found) == 2 and all(stage_rows == [("s00", "")] for stage_rows in found.values()), found
    assert all(name.startswith(f"{literal} ~") for name in found), found


@pytest.mark.parametrize("one, other", [("jos\u00e9", "jose\u0301"), ("\u0430na", "ana"), ("Ana", "ana"),
                                        ("\uff41na", "ana"), ("ana ", "ana")],
                         ids=["NFC and NFD", "a Cyrillic a", "a capital", "a full-width a", "a trailing space"])
def test_two_names_drawn_alike_are_two_students_each_with_a_hash(tmp_path, one, other):
    """Unlike in their code points, alike on the screen: each is shown with a hash, so neither passes for the other."""
    klass = tmp_path / "class"
    make_copy(klass / one / "s00", "s00")
    make_copy(klass / other / "s00", "s00")
    found = rows([klass])
    assert len(found) == 2 and all(stage_rows == [("s00", "")] for stage_rows in found.values()), found
    assert sorted(name.rpartition(" ~")[0] for name in found) == sorted([one, other]), found
    assert len({name.rpartition(" ~")[2] for name in found}) == 2, found


def test_names_unlike_on_the_screen_keep_no_hash(tmp_path):
    klass = tmp_path / "class"
    for name in ("ana", "anna", "jos\u00e9", "jose"):
        make_copy(klass / name / "s00", "s00")
    assert sorted(rows([klass])) == sorted(["ana", "anna", "jos\u00e9", "jose"])
