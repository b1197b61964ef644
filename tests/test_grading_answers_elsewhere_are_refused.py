"""An exercise's answer that also exists in the support package cannot be called instead of written:
the grader keeps, beside each exercise's cases, where the support package holds its answer or the
heart of it (course.grading.probes.ANSWERS_ELSEWHERE), and the region check of that exercise refuses
the names that lead there. (The other stages are out of the child's reach: Landlock.)
"""

from __future__ import annotations

import importlib
import textwrap

import pytest

from course.grading import grade as grading, probes as grading_probes
from test_grading_constant_answers_score_nothing import judged, region_and_file

pytestmark = pytest.mark.stage()  # the grader's region check and judging: no stage

ENTRIES = [(stage, number, module, name) for (stage, number), found in sorted(grading_probes.ANSWERS_ELSEWHERE.items())
           for module, name in found]


@pytest.mark.parametrize("stage,number,module,name", ENTRIES)
def test_each_place_the_table_names_exists(stage, number, module, name):
    assert callable(getattr(importlib.import_module(module), name))
    assert any(exercise.number == number for exercise in grading.stage_exercises(stage))


@pytest.mark.parametrize("stage,number,module,name", ENTRIES)
def test_a_region_that_reaches_it_is_refused_by_that_exercises_check(stage, number, module, name):
    file, indent, _, _ = region_and_file(stage, number)
    for code in (f"return {module}.{name}", f"found = {module}\nreturn found.{name}",
                 f"return json.{module.rpartition('.')[2]}"):
        body = grading.Body(number, file, 1, textwrap.indent(code + "\n", indent), False)
        found = grading.region_problems(body, stage)
        assert found and f"{module}.{name}" in found[0], (code, found)


def test_another_exercise_may_use_the_module_for_its_own_work():
    body = grading.Body(2, "agent.py", 1, "    course.runtime.transcript.append(transcript, record)\n", False)
    assert not grading.region_problems(body, "s02")


def test_the_transcripts_reader_answers_s02s_extension_and_is_refused(tmp_path):
    calls_it = "import course.runtime.transcript\nreturn course.runtime.transcript.Loaded(None, records).history()"
    result = judged("s02", 4, calls_it, 7, tmp_path, check=False)
    assert result.points == 1  # it is the answer: every case passes when the region may call it
    body = grading.Body(4, grading.EXTENSION_FILE, 1, textwrap.indent(calls_it + "\n", "    "), False)
    assert grading.region_problems(body, "s02")
