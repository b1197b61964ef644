"""A scorecard says what was wrong without handing out the reference's answer: a verbose scorecard
(``check -v``) of one grading is no table of answers for the next. The expected value is shown where
it is the lesson (a verdict, a kind, a count); a text, a list or an object is described instead.
"""

from __future__ import annotations

import pytest

from course.grading import grade as grading, probes as grading_probes
from test_grading_constant_answers_score_nothing import judged

pytestmark = pytest.mark.stage()  # the grader's judging: no stage


def test_a_computed_text_is_described_not_given():
    want = {"turns": 3, "answer": "amber birch cedar delta 4711", "roles": ["user", "assistant"]}
    reason = grading_probes.same({**want, "answer": "no idea"}, want)
    assert "amber" not in reason and "['answer']" in reason and "'no idea'" in reason
    assert "text of 28 characters" in reason


def test_a_verdict_a_kind_or_a_count_is_shown():
    assert "'allow'" in grading_probes.same(["deny", "rule"], ["allow", "rule"])
    assert "expected 3" in grading_probes.same({"turns": 2}, {"turns": 3})
    assert "expected 2 items, got 1" in grading_probes.same(["x"], ["x", "y"])


def test_a_wrong_history_is_told_without_the_right_one(tmp_path):
    result = judged("s02", 4, "return []", 5, tmp_path)
    drawn = {case.name: case for _, case in grading.draw_cases("s02", 4, 5)}
    failed = [case for case in result.cases if not case.passed]
    assert failed and all("expected" in case.reason for case in failed)
    for case in failed:
        assert not any(message["content"] in case.reason for message in drawn[case.name].expected), case.reason
