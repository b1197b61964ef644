"""The gradebook a row per student beside the long one (a row per exercise), and a student with nothing to
grade (a repository that cannot be cloned, an empty folder) scored 0 of each stage asked, saying why."""
from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

from course.__main__ import main
from course.grading import exercises, grade as grading


def _git(*arguments, cwd):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *arguments], cwd=cwd,
                   check=True, capture_output=True, timeout=30)


def test_a_student_with_nothing_to_grade_gets_0_of_each_stage_asked_with_the_clones_error(tmp_path, capsys):
    repository = tmp_path / "repos" / "ana-work"
    for stage in ("s00", "s01"):
        exercises.make_student_copy(stage, repository / stage)
    _git("init", "-q", "-b", "main", cwd=repository)
    _git("add", "-A", ".", cwd=repository)
    _git("commit", "-q", "-m", "work", cwd=repository)
    roster = tmp_path / "roster.txt"
    roster.write_text(f"ana {repository}\ncara {tmp_path / 'repos' / 'missing'}\n", encoding="utf-8")
    out = tmp_path / "grading"
    main(["grade", "--repos", str(roster), "--out", str(out), "--seed", "3", "--stages", "s00,s01"])
    capsys.readouterr()
    book = json.loads((out / "gradebook.json").read_text(encoding="utf-8"))
    cara = [copy for copy in book["copies"] if copy["student"] == "cara"]
    ana = {copy["stage"]: copy for copy in book["copies"] if copy["student"] == "ana"}
    assert sorted(copy["stage"] for copy in cara) == ["s00", "s01"]
    for copy in cara:  # the same maximum as a student who handed the stage in
        assert copy["points"] == 0 and copy["max_points"] == ana[copy["stage"]]["max_points"] > 0
        assert "could not clone" in copy["refused"] and "\n" not in copy["refused"]
    with (out / grading.WIDE_GRADEBOOK).open(encoding="utf-8") as handle:
        wide = {row["student"]: row for row in csv.DictReader(handle)}
    assert set(wide) == {"ana", "cara"}
    assert float(wide["cara"]["max_points"]) == float(wide["ana"]["max_points"]) == sum(
        copy["max_points"] for copy in ana.values())
    assert float(wide["cara"]["s01 points"]) == 0 and float(wide["ana"]["s01 max"]) == ana["s01"]["max_points"]


def test_the_wide_gradebook_sums_each_students_stages(tmp_path):
    exercise = grading.stage_exercises("s00")[0]
    later = grading.stage_exercises("s01")[0]

    def result(exercise, points):
        return grading.ExerciseResult(exercise, [], points, 2.0)
    grades = [grading.CopyGrade("ana", "s00", tmp_path, [result(exercise, 2.0)], 1),
              grading.CopyGrade("ana", "s01", tmp_path, [result(later, 0.5)], 1),
              grading.CopyGrade("=bob", "s01", tmp_path, [result(later, 1.5)], 1)]
    path = grading.write_wide_gradebook(grades, tmp_path / "wide.csv")
    with path.open(encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"ana", "'=bob"}  # a name that a spreadsheet would run as a formula stays text
    assert float(rows["ana"]["points"]) == 2.5 and float(rows["ana"]["max_points"]) == 4.0
    assert float(rows["'=bob"]["s01 points"]) == 1.5 and rows["'=bob"]["s00 points"] == ""
