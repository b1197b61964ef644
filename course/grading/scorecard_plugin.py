"""A pytest plugin for ``python -m course check --course-tests``: each test's outcome and its exercise numbers, as JSON.

Practice only: the student copy runs inside the pytest process this plugin records, so a copy could
change what it records. ``course.grading.grade`` makes the grades.

``course.grading.exercises.check`` loads it with ``-p course.grading.scorecard_plugin`` and names the output file in
AGENT_COURSE_SCORECARD_JSON; without that variable the plugin does nothing. The tests it keeps are those
that pin the graded stage (``@pytest.mark.stage``, named in AGENT_COURSE_GRADED_STAGE); the others are
deselected before they run. The file holds
``{"tests": [{"name", "outcome", "exercises", "message"}], "collection_errors": [...],
"student_copy_loaded": bool}``; ``outcome`` is passed, failed, skipped or "not run" (setup, call and
teardown folded into one: a test whose teardown fails has failed; one the session never reached was not run).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from course.grading.exercises import GRADED_STAGE_VARIABLE, SCORECARD_JSON_VARIABLE, student_copies, student_module_name


def pytest_configure(config):
    target = os.environ.get(SCORECARD_JSON_VARIABLE)
    if target:
        config.pluginmanager.register(OutcomeRecorder(Path(target)), "course-scorecard-recorder")


class OutcomeRecorder:
    def __init__(self, target: Path):
        self.target = target
        self.tests: dict[str, dict] = {}
        self.collection_errors: list[str] = []

    @pytest.hookimpl(trylast=True)  # after the suite's own hook has read every test
    def pytest_collection_modifyitems(self, config, items):
        stage = os.environ.get(GRADED_STAGE_VARIABLE)
        if not stage:
            return
        graded = [item for item in items if stage in pinned_by(item) and not is_live(item)]
        config.hook.pytest_deselected(items=[item for item in items if item not in graded])
        items[:] = graded

    def pytest_collection_finish(self, session):
        for item in session.items:
            exercises = [number for marker in item.iter_markers("exercise") for number in marker.args]
            self.tests[item.nodeid] = {"name": item.nodeid.split("::", 1)[-1], "outcome": "not run",
                                       "exercises": exercises, "message": ""}

    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors.append(f"{report.nodeid}: {_first_line(report)}")

    def pytest_runtest_logreport(self, report):
        test = self.tests.get(report.nodeid)
        if test is None or test["outcome"] == "failed":
            return  # the first failure is the one worth reading
        if report.failed:
            test.update(outcome="failed", message=_whole_reason(report))
        elif report.skipped:
            test["outcome"] = "skipped"
        elif report.when == "call":
            test["outcome"] = "passed"

    def pytest_sessionfinish(self, session):
        loaded = any(student_module_name(stage) in sys.modules for stage in student_copies())
        data = {"tests": list(self.tests.values()), "collection_errors": self.collection_errors,
                "student_copy_loaded": loaded}
        self.target.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def pinned_by(item) -> tuple:
    """The stages a test pins: its closest @pytest.mark.stage (the test's, its parameter's, or its module's)."""
    marker = item.get_closest_marker("stage")
    return marker.args if marker else ()


def is_live(item) -> bool:
    """A test of a real API: skipped without a key, so never a grade."""
    return "live" in item.keywords or "live_local" in item.keywords


def _whole_reason(report) -> str:
    """The failure's message, every line of it: the scorecard cuts it to one, `check -v` shows it whole."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = (crash.message if crash is not None else str(report.longrepr)).strip()
    return text or "(no message)"


def _first_line(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    lines = text.strip().splitlines()
    return lines[0] if lines else "(no message)"
