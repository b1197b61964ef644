"""A copy's exercises are graded each on its own: a syntax error in one region fails that exercise and
names the copy's own line; a copy records the course version it was made from, and one made before an
edit outside the regions is still graded; a copy of another stage is named as such."""
from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from course.grading import exercise_text, exercises, grade as grading, jail as grading_jail

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = Path(__file__).parent / "grading_solutions"
SEED = 515151
needs_confinement = pytest.mark.skipif(bool(grading_jail.available()), reason=f"no confinement: {grading_jail.available()}")


def solved_copy(dest: Path, stage: str) -> Path:
    """A copy made as a student makes one, every region and the extension then answered as the reference does."""
    exercises.make_student_copy(stage, dest)
    reference = grading.reference_files(stage)
    for name in reference:
        if name == grading.EXTENSION_FILE:
            continue
        ours = exercises.find_regions(reference[name], name)
        lines, copy = reference[name].splitlines(keepends=True), (dest / name).read_text(encoding="utf-8")
        copy_lines = copy.splitlines(keepends=True)
        for theirs, region in reversed(list(zip(exercises.marked_regions(copy, name), ours))):
            copy_lines[theirs.start:theirs.end - 1] = lines[region.start:region.end - 1]
        (dest / name).write_text("".join(copy_lines), encoding="utf-8")
    extension = exercise_text.extension(stage)
    stub = f"    raise NotImplementedError('exercise {extension.number}: {extension.title} — see the {stage} chapter')\n"
    template = (dest / grading.EXTENSION_FILE).read_text(encoding="utf-8")
    assert template.count(stub) == 1
    body = textwrap.indent(textwrap.dedent((SOLUTIONS / f"{stage}.py").read_text(encoding="utf-8")).strip("\n") + "\n", "    ")
    (dest / grading.EXTENSION_FILE).write_text(template.replace(stub, body), encoding="utf-8")
    return dest


def first_region(folder: Path) -> exercises.Region:
    return exercises.marked_regions((folder / "agent.py").read_text(encoding="utf-8"), "agent.py")[0]


@needs_confinement
def test_a_syntax_error_in_one_region_fails_only_that_exercise_at_the_copys_line(tmp_path, capsys):
    copy = solved_copy(tmp_path / "s03", "s03")
    region = first_region(copy)
    lines = (copy / "agent.py").read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(region.start, region.indent + "if True\n")  # the first line of the region's body
    (copy / "agent.py").write_text("".join(lines), encoding="utf-8")
    grade, = grading.grade_copies([("ana", "s03", copy)], grading.Options(seed=SEED))
    assert not grade.refused
    broken = next(result for result in grade.results if result.exercise.number == region.number)
    assert broken.points == 0 and broken.reason.startswith(f"agent.py, line {region.start + 1}: "), broken.reason
    others = [result for result in grade.results if result.exercise.number != region.number]
    assert others[-1].exercise.extension and all(result.passed for result in others), grading.scorecard(grade)


@needs_confinement
def test_a_statement_left_of_its_markers_fails_only_its_exercise(tmp_path):
    copy = solved_copy(tmp_path / "s03", "s03")
    region = first_region(copy)
    lines = (copy / "agent.py").read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(region.start, "x = 1\n")
    (copy / "agent.py").write_text("".join(lines), encoding="utf-8")
    grade, = grading.grade_copies([("ana", "s03", copy)], grading.Options(seed=SEED))
    broken = next(result for result in grade.results if result.exercise.number == region.number)
    assert broken.points == 0 and re.match(r"agent\.py, line \d+: ", broken.reason), broken.reason
    assert all(result.passed for result in grade.results if result is not broken), grading.scorecard(grade)


def test_a_copy_records_the_course_version_and_prints_its_own_lines(tmp_path, capsys):
    copy = exercises.make_student_copy("s06", tmp_path / "s06")
    printed = capsys.readouterr().out
    recorded = exercises.recorded_version(copy)
    assert recorded["stage"] == "s06" and recorded["commit"] == exercises.course_version()["commit"]
    for name in ("agent.py", "permissions.py"):
        text = (copy / name).read_text(encoding="utf-8")
        for region in exercises.marked_regions(text, name):
            assert f"exercise {region.number} ({name}, line {region.start}):" in printed
            assert "# >>> exercise" in text.splitlines()[region.start - 1]


def test_a_copy_of_another_stage_is_named_as_such(tmp_path):
    copy = exercises.make_student_copy("s01", tmp_path / "s01")
    with pytest.raises(grading.Refused, match=r"copy of s01, not of s03"):
        grading.read_copy("s03", copy)
    (copy / exercises.VERSION_FILE).unlink()  # a copy made before copies recorded their version
    with pytest.raises(grading.Refused, match=r"copy of s01, not of s03"):
        grading.read_copy("s03", copy)


def _earlier_version_outside_the_regions(stage: str) -> tuple[str, str] | None:
    """(commit, file) of the stage's agent.py at an earlier commit of this repository, whose exercises are
    today's but whose text outside the regions is not: a copy made then."""
    try:
        commits = subprocess.run(["git", "-C", str(ROOT), "log", "--format=%H", "-n", "30", "--", f"{stage}/agent.py"],
                                 capture_output=True, text=True, timeout=30).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    now = grading.stub_files(stage)["agent.py"]
    titles = [(r.number, r.title) for r in exercises.find_regions(now, "agent.py")]
    for commit in commits[1:]:
        then = exercises.file_at(commit, stage, "agent.py")
        if then is None:
            continue
        regions = exercises.find_regions(then, "agent.py")
        stub = exercises.stub_out(then, regions, stage)
        if [(r.number, r.title) for r in regions] == titles and grading._comparable(stub) != grading._comparable(now):
            return commit, stub
    return None


def test_a_copy_made_before_an_edit_outside_the_regions_is_still_graded(tmp_path):
    found = _earlier_version_outside_the_regions("s03")
    if found is None:
        pytest.skip("no earlier version of s03/agent.py in this checkout's history")
    commit, stub = found
    copy = exercises.make_student_copy("s03", tmp_path / "s03")
    (copy / "agent.py").write_text(stub, encoding="utf-8")
    (copy / exercises.VERSION_FILE).write_text(f"stage: s03\ncourse: 0.1.0\ncommit: {commit}\n", encoding="utf-8")
    bodies, note = grading.read_copy_noted("s03", copy)
    assert note.startswith("made from course") and commit[:12] in note
    assert all(body.is_stub for body in bodies.values())
    # the same file, claiming no version: refused, with a way out
    (copy / exercises.VERSION_FILE).unlink()
    with pytest.raises(grading.Refused, match="outside its exercise regions"):
        grading.read_copy("s03", copy)


def test_a_copy_that_names_a_version_it_does_not_match_is_refused_saying_both(tmp_path):
    copy = exercises.make_student_copy("s03", tmp_path / "s03")
    agent = copy / "agent.py"
    agent.write_text(agent.read_text(encoding="utf-8").replace("max_turns: int = 40", "max_turns: int = 4"), encoding="utf-8")
    (copy / exercises.VERSION_FILE).write_text("stage: s03\ncourse: 0.0.9\ncommit: 0000000000000000\n", encoding="utf-8")
    with pytest.raises(grading.Refused, match=r"made from course 0\.0\.9 .*this course is .*git checkout"):
        grading.read_copy("s03", copy)


@pytest.mark.parametrize("code", ["import json\nreturn None", "return open('x').read()", "return eval('1')",
                                  "exec('x = 1')\nreturn None", "return getattr(state, 'turn_count')",
                                  "setattr(state, 'turn_count', 0)\nreturn None", "return globals()",
                                  "return sys.argv", "return os.getcwd()", "return state.__class__"])
def test_each_thing_the_copys_header_and_the_chapter_forbid_is_refused(code):
    named = [word for word in exercise_text.REGION_RULES_NAMED if word in code]
    assert named and all(f"{word}" in exercise_text.REGION_RULES for word in named)
    body = grading.Body(1, "agent.py", 10, textwrap.indent(code + "\n", "    "), False, "    ")
    assert grading.region_problems(body, "s03"), code


def test_the_rules_stand_at_the_top_of_the_copy_and_in_both_chapters(tmp_path):
    copy = exercises.make_student_copy("s03", tmp_path / "s03")
    assert (copy / "agent.py").read_text(encoding="utf-8").startswith(exercise_text.copy_header("s03"))
    regions = exercises.stage_regions("s03")
    assert exercise_text.REGION_RULES in exercise_text.section("s03", regions)
    assert exercise_text.REGION_RULES_JA in exercise_text.section("s03", regions, "ja")
    # a copy without the header (deleted, or made before it was written) is the same copy
    agent = copy / "agent.py"
    agent.write_text(agent.read_text(encoding="utf-8").removeprefix(exercise_text.copy_header("s03")), encoding="utf-8")
    assert all(body.is_stub for body in grading.read_copy("s03", copy).values())
