"""A copy whose case loops until its time runs out is counted as computing, not blamed on a busy machine.

Each case runs in a fork of the child; the CPU the copy used is what tells a loop from a wait or a
loaded machine (course/grading/grade.py turns it into the reason). The fork that was running when the
time ran out is never reaped by the child, so the child's own account left out the very loop that
ran out of time, and a plain busy loop was blamed on the machine.
"""

from __future__ import annotations

import re

import pytest

from course.grading import grade as grading, jail as grading_jail
from test_grading import make_copy, needs_confinement

pytestmark = pytest.mark.stage()  # grades a copy: it pins the grader, no stage

SECONDS = 4


def reason_of(tmp_path, body: str) -> str:
    copy = make_copy(tmp_path / "s03", "s03", {1: body})
    options = grading.Options(seed=20261201, jobs=1, check_regions=False, limits=grading_jail.Limits(seconds=SECONDS))
    grade = grading.grade_copies([("looper", "s03", copy)], options)[0]
    return next(result for result in grade.results if result.exercise.number == 1).reason


def cpu_seconds(reason: str) -> float:
    found = re.search(r"([0-9.]+) s of CPU", reason)
    assert found, reason
    return float(found[1])


@needs_confinement
def test_a_case_that_busy_loops_is_counted_as_computing(tmp_path):
    """The loop's CPU is counted: the child alone (importing the copy) uses a tenth of a second, and the
    loop most of the time limit. The grader names it a loop from half the limit; on a machine loaded
    by other work the loop gets less (the reason then says to grade it again), so the bound asserted
    here is a quarter of the limit, which the child alone never reaches."""
    reason = reason_of(tmp_path, """
        while True:
            pass""")
    assert reason.startswith(f"still running at the time limit ({SECONDS} s)"), reason
    assert cpu_seconds(reason) >= SECONDS / 4, reason
    if cpu_seconds(reason) >= SECONDS / 2 + 0.05:  # the reason rounds to a tenth: 1.96 s is shown as 2.0
        assert "computing all along" in reason and "does a loop never end?" in reason, reason


@needs_confinement
def test_a_case_that_sleeps_is_not_named_a_loop(tmp_path):
    """The other side: the count is of CPU, so a wait is still told apart."""
    reason = reason_of(tmp_path, """
        import time
        time.sleep(60)""")
    assert "it waited" in reason and "computing all along" not in reason and cpu_seconds(reason) < SECONDS / 4, reason
