"""An answer that does not depend on its case earns no part of any exercise: every group of cases holds
cases whose right answers differ, so one constant answer (None, False, True, 0, "", the input handed
back, a verdict that always denies or always allows) fails every group.

The copies are judged here in this process, by the grader's own drivers and judges on the cases it
draws, without the confined child: what this pins is the grouping of the cases, which the child has
no part in (tests/test_grading.py grades copies through the child).
"""

from __future__ import annotations

import ast
import importlib
import json
import sys
import textwrap

import pytest

from course.grading import exercise_text, exercises, grade as grading, probes as grading_probes

pytestmark = pytest.mark.stage()  # judges answers through the grader: it pins the grader, no stage

STAGES = sorted({stage for stage, _ in grading_probes.PROBES})
SEEDS = (20261201,)  # the grouping is the same for every seed; the values are not
VERDICTS = {  # the constants of an answer's own shape, for the exercises whose answer has one
    ("s00", 1): ['"failed", True', '"done", False'],
    ("s03", 1): ['"max_turns", "the limit"', '"token_budget", "the budget"'],
    ("s03", 2): ['"the same call again"'],
    ("s06", 1): ['Verdict("deny", "no", "rule")', 'Verdict("deny", "no", "default")', 'Verdict("allow", "ok", "rule")',
                 'Verdict("ask", "?", "rule")'],
    ("s06", 2): ['Verdict("deny", "no", "no terminal")', 'Verdict("deny", "no", "person")',
                 'Verdict("allow", "ok", "person")'],
}


def exercise_cases():
    return [(stage, exercise.number) for stage in STAGES for exercise in grading.stage_exercises(stage)]


def region_and_file(stage: str, number: int):
    """(file, indent, the function the region is in) for an exercise of a stage."""
    extension = exercise_text.extension(stage)
    if extension and extension.number == number:
        source = exercise_text.extension_template(stage)
        found = next(r for r in exercises.find_regions(source, grading.EXTENSION_FILE) if r.number == number)
        return grading.EXTENSION_FILE, "    ", source, found
    found = next(r for r in exercises.stage_regions(stage) if r.number == number)
    return found.file, found.indent, grading.reference_files(stage)[found.file], found


def first_argument(source: str, line: int) -> str:
    """The first parameter (not self) of the function that holds the line: the input, to hand back."""
    inside = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef)
              and node.lineno <= line <= node.end_lineno]
    function = max(inside, key=lambda node: node.lineno)
    names = [arg.arg for arg in function.args.args if arg.arg != "self"]
    return names[0]


def constants(stage: str, number: int) -> list[str]:
    file, _, source, found = region_and_file(stage, number)
    return ["None", "False", "True", "0", '""', first_argument(source, found.start + 1)] + VERDICTS.get((stage, number), [])


class InProcess:
    """A copy's module imported here, as the child imports it, under a package name of its own."""
    count = 0

    def __init__(self, root, files):
        InProcess.count += 1
        self.package = f"graded_here_{InProcess.count}"
        folder = root / self.package
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text("", encoding="utf-8")
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
        self.root = root

    def observe(self, stage, number, module, drawn, work):
        sys.path.insert(0, str(self.root))
        try:
            loaded = importlib.import_module(f"{self.package}.{module}")
            observed = {}
            for position, (index, case) in enumerate(drawn):
                probe = grading_probes.probes_for(stage, number)[index]
                folder = work / f"{self.package}-{position}"
                folder.mkdir(parents=True)
                try:
                    got = probe.drive(loaded, json.loads(json.dumps(case.params)), folder)
                except BaseException as error:  # noqa: BLE001 - as the child reports it
                    got = ["raised", type(error).__name__, str(error)]
                observed[position] = json.loads(json.dumps(got, ensure_ascii=False, default=repr))
            return observed
        finally:
            sys.path.remove(str(self.root))
            for name in [name for name in sys.modules if name.split(".")[0] == self.package]:
                del sys.modules[name]


def judged(stage, number, body_code, seed, tmp_path, want=None, check=True):
    file, indent, _, _ = region_and_file(stage, number)
    body = grading.Body(number, file, 1, textwrap.indent(body_code + "\n", indent), False)
    assert not check or not grading.region_problems(body, stage), grading.region_problems(body, stage)
    drawn = grading.draw_cases(stage, number, seed)
    probes = grading_probes.probes_for(stage, number)
    module = probes[0].module
    got = InProcess(tmp_path / "packages", grading.assemble(stage, body)).observe(stage, number, module, drawn, tmp_path)
    cases = []
    for position, (index, case) in enumerate(drawn):
        try:
            reason = probes[index].judge(case, got[position], (want or {}).get(position)) or ""
        except Exception as error:  # noqa: BLE001 - an answer of a shape the judge does not expect is wrong
            reason = f"{type(error).__name__}: {error}"
        cases.append(grading.CaseResult(case.name, case.group, not reason, reason))
    return grading._scored(grading.Exercise(stage, number, "", file), cases, 1.0, 0.0, "")


def reference_observations(stage, number, seed, tmp_path):
    drawn = grading.draw_cases(stage, number, seed)
    module = grading_probes.probes_for(stage, number)[0].module
    return InProcess(tmp_path / "packages", grading.assemble(stage, None)).observe(stage, number, module, drawn, tmp_path)


@pytest.mark.parametrize("stage,number", exercise_cases())
def test_no_constant_answer_earns_a_point(stage, number, tmp_path):
    judged_by_reference = any(probe.uses_reference for probe in grading_probes.probes_for(stage, number))
    for seed in SEEDS:
        want = reference_observations(stage, number, seed, tmp_path) if judged_by_reference else None
        for constant in constants(stage, number):
            result = judged(stage, number, f"return {constant}", seed, tmp_path, want)
            passed = sorted({case.group for case in result.cases} - {case.group for case in result.cases if not case.passed})
            assert result.points == 0, f"{stage} exercise {number}: 'return {constant}' passes {passed} (seed {seed})"


@pytest.mark.parametrize("stage,number", [("s03", 1), ("s06", 1)])
def test_the_reference_passes_the_same_judging(stage, number, tmp_path):
    """The judging above is the grader's: the reference's own region passes every case of it."""
    file, indent, source, found = region_and_file(stage, number)
    text = "".join(source.splitlines(keepends=True)[found.start:found.end - 1])
    want = reference_observations(stage, number, SEEDS[0], tmp_path)
    result = judged(stage, number, textwrap.dedent(text).strip("\n"), SEEDS[0], tmp_path, want)
    assert result.points == 1 and result.passed, result.reason
