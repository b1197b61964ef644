"""The grader never imports from the folder it grades: the CI workflow starts it outside the student's
repository with ``python -I``, the grader refuses to run when its own code or the standard library would be
read from the folder being graded, and the trusted setup (``grade --repos ROSTER``, on the instructor's
machine) clones each student's repository and names it from the roster.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import pytest
import yaml

from course.grading import cli as grading_cli
from course.__main__ import main
from course.runtime.models import CourseError
from test_grading import ROOT, make_copy, needs_confinement

pytestmark = pytest.mark.stage()  # these tests grade copies: they pin the grader, no stage

WORKFLOW = ROOT / "course" / "classroom" / "grade.yml"


def forger(marker) -> str:
    """What a student would commit to forge a grade: it runs, if it is ever imported, and leaves a mark."""
    return (f"import os, pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
            "summary = os.environ.get('GITHUB_STEP_SUMMARY')\n"
            "if summary:\n    open(summary, 'a').write('| forged | s00 | 3 of 3 | 3 of 3 |\\n')\n"
            "os._exit(0)\n")


def grading_step() -> dict:
    steps = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["grade"]["steps"]
    return next(step for step in steps if "-m course grade" in step.get("run", ""))


def run_step(step: dict, repository, tmp_path) -> tuple[subprocess.CompletedProcess, object]:
    """The step's own script, as the runner runs it: the course checked out in RUNNER_TEMP/course (here this
    checkout, installed editable in the venv), the student's repository in GITHUB_WORKSPACE."""
    runner = tmp_path / "runner"
    runner.mkdir()
    (runner / "course").symlink_to(ROOT)
    summary = tmp_path / "summary.md"
    environment = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_REPOSITORY": "class/ana",
                   "GITHUB_WORKSPACE": str(repository), "RUNNER_TEMP": str(runner),
                   **{name: str(value) for name, value in step.get("env", {}).items()}}
    environment["PATH"] = f"{ROOT / '.venv' / 'bin'}:{environment['PATH']}"
    finished = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repository, env=environment,
                              capture_output=True, text=True, timeout=120)
    return finished, runner


@needs_confinement
def test_a_course_package_or_a_stdlib_module_in_the_students_repository_never_runs(tmp_path):
    repository = tmp_path / "student-repo"
    make_copy(repository / "s00", "s00")  # the stubs: nothing to run, 0 points
    marker = tmp_path / "forger-ran"
    (repository / "course").mkdir()
    for name in ("__init__.py", "__main__.py"):
        (repository / "course" / name).write_text(forger(marker), encoding="utf-8")
    for module in ("random.py", "json.py", "sitecustomize.py"):
        (repository / module).write_text(forger(marker), encoding="utf-8")
    finished, runner = run_step(grading_step(), repository, tmp_path)
    assert not marker.exists(), "the student's code ran inside the grader"
    assert finished.returncode in (0, 1), finished.stderr
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "forged" not in summary and "| s00 | 0 of 3 |" in summary
    book = json.loads((runner / "grading" / "gradebook.json").read_text(encoding="utf-8"))
    assert [copy["points"] for copy in book["copies"]] == [0]


def test_the_workflow_runs_every_python_isolated_and_outside_the_repository():
    steps = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["grade"]["steps"]
    for step in steps:
        script = step.get("run", "")
        for line in script.splitlines():
            if "python " in line:
                assert "python -I " in line, line
        if "python " in script:
            assert script.lstrip().startswith('cd "$RUNNER_TEMP'), script
    assert "$GITHUB_WORKSPACE" in grading_step()["run"]
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["path"].startswith("${{ runner.temp }}")  # not a folder the student's tree could hold


def test_the_grader_started_inside_the_folder_it_grades_refuses(tmp_path):
    repository = tmp_path / "student-repo"
    make_copy(repository / "s00", "s00")
    environment = {**os.environ, "PYTHONPATH": ""}
    finished = subprocess.run([sys.executable, "-m", "course", "grade", ".", "--student", "ana", "--out",
                               str(tmp_path / "out")], cwd=repository, env=environment,
                              capture_output=True, text=True, timeout=60)
    assert finished.returncode == 2 and "would read its own code" in finished.stderr + finished.stdout
    assert not (tmp_path / "out").exists()


def test_a_module_already_read_from_the_graded_folder_refuses_the_run(tmp_path, monkeypatch):
    klass = tmp_path / "class"
    make_copy(klass / "ana" / "s00", "s00")
    grading_cli.grader_outside([str(klass)])  # nothing of the grader's there: it runs
    stand_in = types.ModuleType("random_of_the_student")
    stand_in.__file__ = str(klass / "ana" / "random.py")
    monkeypatch.setitem(sys.modules, "random_of_the_student", stand_in)
    with pytest.raises(CourseError, match="would read its own code"):
        grading_cli.grader_outside([str(klass / "ana")])
    monkeypatch.delitem(sys.modules, "random_of_the_student")
    monkeypatch.syspath_prepend(str(klass))
    with pytest.raises(CourseError, match="would read its own code"):
        grading_cli.grader_outside([str(klass)])


def _git(*arguments, cwd):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *arguments], cwd=cwd,
                   check=True, capture_output=True, timeout=30)


def test_the_trusted_setup_clones_each_students_repository_and_names_it_from_the_roster(tmp_path, capsys):
    repos = tmp_path / "repos"
    for student in ("ana", "bob"):
        repository = repos / f"{student}-work"
        make_copy(repository / "s00", "s00")
        _git("init", "-q", "-b", "main", cwd=repository)
        _git("add", ".", cwd=repository)
        _git("commit", "-q", "-m", "work", cwd=repository)
    roster = tmp_path / "roster.txt"
    roster.write_text(f"# student  repository\nana {repos / 'ana-work'}\nbob {repos / 'bob-work'} main\n"
                      f"cara {repos / 'missing'}\n", encoding="utf-8")
    out = tmp_path / "grading"
    main(["grade", "--repos", str(roster), "--out", str(out), "--seed", "3"])
    printed = capsys.readouterr().out
    assert "cara: could not clone" in printed
    assert (out / "submissions" / "ana" / "s00" / "agent.py").is_file()
    book = json.loads((out / "gradebook.json").read_text(encoding="utf-8"))
    assert sorted({row["student"] for row in book["rows"]}) == ["ana", "bob", "cara"]
    assert {copy["student"]: copy["stage"] for copy in book["copies"]} == {"ana": "s00", "bob": "s00", "cara": ""}
    guide = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    assert "course grade --repos" in guide and "STUDENT URL" in guide


def test_a_roster_line_that_names_no_folder_is_refused(tmp_path):
    roster = tmp_path / "roster.txt"
    roster.write_text("../ana https://example.com/ana.git\n", encoding="utf-8")
    with pytest.raises(CourseError, match="line 1"):
        grading_cli.collect(roster, tmp_path / "into")
