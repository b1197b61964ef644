"""An instructor's hidden cases (``--extra-tests``) are imported by the graded child for their drivers only:
once imported, and before the copy is, the child keeps of that file only what its drivers name. Its probes'
cases and judge are stand-ins there, the probe class loses them, every other global of the file (the solver
the instructor computes expected answers with) is gone, and the file cannot be read again.

The attack this pins: a copy called the instructor's solver through
``course.grading.probes.PROBES[...][i].cases.__globals__`` and answered every hidden case with it.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from course.grading import grade as grading
from course.grading.cli import load_extra_tests
from test_grading import make_copy, needs_confinement, solution

pytestmark = pytest.mark.stage()  # grades copies: it pins the grader, no stage

HIDDEN = '''
from course.grading.probes import Case, probe, word

TABLE = {"kept by": "the judge only"}


def cycles(calls, rounds):  # the instructor's own answer, used to build the expected values
''' + textwrap.indent(solution("s03"), "") + '''

@probe("s03", 3, uses_reference=False, module="extension")
class LongCycles:
    def cases(rng):
        out = []
        for _ in range(3):
            period, rounds = rng.randint(8, 12), rng.randint(2, 3)
            calls = [(word(rng), "{}") for _ in range(period)] * rounds
            if rng.random() < 0.5:
                calls[-1] = (word(rng), "{}")
            out.append(Case(f"a long cycle of {period}", "long cycles", {"calls": calls, "rounds": rounds},
                            cycles(calls, rounds)))
        return out

    def drive(module, params, work):
        return module.cycling([tuple(pair) for pair in params["calls"]], params["rounds"])

    def judge(case, got, want):
        return None if got is case.expected and TABLE else f"expected {case.expected}"
'''

# Every way back to the instructor's file a region with the full language has, each tried and said.
LOOKS = '''
import gc, json, sys, types
from pathlib import Path
probes = [one for one in sys.modules["course.grading.probes"].PROBES[("s03", 3)] if one.origin]
seen = {"probes": len(probes)}
for one in probes:
    for part in ("cases", "judge", "drive"):
        try:
            found = sorted(name for name in getattr(one, part).__globals__ if name in ("cycles", "TABLE", "LongCycles"))
        except Exception as error:
            found = type(error).__name__
        seen[part] = found
    try:
        seen["source"] = "cycles" in Path(one.origin).read_text()
    except OSError as error:
        seen["source"] = type(error).__name__
gc.unfreeze()
seen["heap"] = sorted({item.__name__ for item in gc.get_objects()
                       if isinstance(item, (types.FunctionType, type)) and item.__name__ in ("cycles", "LongCycles")
                       and "extra_tests" in getattr(item, "__module__", "")})
print("LOOKS " + json.dumps(seen))
'''


@needs_confinement
def test_a_copy_reaches_no_solver_of_the_hidden_cases_and_a_right_answer_still_passes(tmp_path):
    hidden = tmp_path / "hidden" / "long_cycles.py"
    hidden.parent.mkdir()
    hidden.write_text(HIDDEN, encoding="utf-8")
    load_extra_tests([hidden])
    body = textwrap.dedent(LOOKS) + textwrap.dedent(solution("s03"))
    copy = make_copy(tmp_path / "eve" / "s03", "s03", {3: body})
    options = grading.Options(seed=5, jobs=1, check_regions=False, extra_tests=[hidden])
    grade = grading.grade_copies([("eve", "s03", copy)], options)[0]
    result = next(result for result in grade.results if result.exercise.number == 3)
    assert result.passed and any(case.group == "long cycles" for case in result.cases), result.reason  # still driven
    looks = [json.loads(line[6:]) for line in result.printed.splitlines() if line.startswith("LOOKS ")]
    assert looks and len(looks) == len(result.cases), result.printed
    for seen in looks:
        assert seen["probes"] == 1, seen
        assert seen["cases"] == seen["judge"] == "AnswerOutOfReach", seen  # stand-ins
        assert seen["drive"] == [], seen  # the driver's globals hold none of the rest of the file
        assert seen["source"] == "PermissionError", seen
        assert seen["heap"] == [], seen
