"""The reference stage running out of time is the grader's trouble, never the copy's.

Most exercises are judged against what the reference stage observes of the same cases, in a child of
its own. On a machine loaded by a class graded with many jobs, that child can run out of time; then it
is run once more with twice the time, and only if it fails again are the copies' exercises failed, with
a reason that says it was not their doing and what to do.
"""

from __future__ import annotations

import pytest

from course.grading import grade as grading, jail as grading_jail
from test_grading import make_copy, needs_confinement

pytestmark = pytest.mark.stage()  # grades a copy: it pins the grader, no stage


def grade_with_a_reference_that_times_out(tmp_path, monkeypatch, times: int, seed: int):
    """Grade a right s03 copy while the reference's child (one for exercises 1 and 2: a copy's child has
    one exercise) runs out of time its first ``times`` runs."""
    real, reference_runs = grading.run_child, []

    def run_child(stage, files, module, jobs, options):
        if files == grading.assemble(stage, None) and {job["exercise"] for job in jobs} == {1, 2}:
            reference_runs.append(options.limits.seconds)
            if len(reference_runs) <= times:
                return grading.ChildRun({}, "", grading_jail.TIMED_OUT, "", options.limits.seconds)
        return real(stage, files, module, jobs, options)
    monkeypatch.setattr(grading, "run_child", run_child)
    copy = make_copy(tmp_path / "s03", "s03", solved=(1, 2))
    options = grading.Options(seed=seed, jobs=1, limits=grading_jail.Limits(seconds=20))
    return grading.grade_copies([("ana", "s03", copy)], options)[0], reference_runs


@needs_confinement
def test_a_reference_that_runs_out_of_time_once_is_given_twice_the_time(tmp_path, monkeypatch):
    grade, reference_runs = grade_with_a_reference_that_times_out(tmp_path, monkeypatch, 1, seed=777_001)
    assert reference_runs == [20, 40]
    scored = {result.exercise.number: result.passed for result in grade.results}
    assert scored[1] and scored[2], [(result.exercise.number, result.reason) for result in grade.results]


@needs_confinement
def test_a_reference_that_never_finishes_says_it_was_not_the_copys_doing(tmp_path, monkeypatch):
    grade, reference_runs = grade_with_a_reference_that_times_out(tmp_path, monkeypatch, 99, seed=777_002)
    assert reference_runs == [20, 40]  # and not again for exercise 2: the failure is kept
    failed = [result for result in grade.results if result.exercise.number in (1, 2)]
    assert failed and all(not result.passed for result in failed)
    assert all("not the copy's doing" in result.reason and "--time-limit" in result.reason for result in failed), \
        [result.reason for result in failed]
