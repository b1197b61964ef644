"""The mutation audit: small wrong versions of a reference solution, and the wrong solutions a chapter warns
about, fail their exercise on every seed; the generator makes the changes it names. The full audit of every
exercise is `python -m course grade --audit` (minutes); these tests grade a sample, in seconds."""

from __future__ import annotations

import ast
import textwrap

import pytest

from course.grading import grade as grading, audit as grading_audit, jail as grading_jail

pytestmark = pytest.mark.stage()  # they pin the grader, no stage

needs_confinement = pytest.mark.skipif(bool(grading_jail.available()), reason=f"no confinement: {grading_jail.available()}")

BODY = textwrap.indent(textwrap.dedent("""\
    found = []
    for item in items:
        if item.size > 3 and item.name != "":
            found.append(item)
    if any(found):
        return found[0]
    return None
"""), "    ")


def test_the_generator_makes_each_kind_of_change_once_and_never_the_reference_itself():
    made = grading_audit.mutants(BODY)
    texts = [textwrap.dedent(mutant.text) for mutant in made]
    original = ast.unparse(ast.parse(textwrap.dedent(BODY)))
    assert original + "\n" not in texts
    assert len(set(texts)) == len(texts)
    assert len({mutant.key for mutant in made}) == len(made)
    changes = "\n".join(texts)
    assert "item.size >= 3" in changes                  # a comparison
    assert "item.size > 4" in changes and "item.size > 2" in changes  # a constant, one off either way
    assert " or item.name" in changes                    # and/or
    assert "all(found)" in changes                       # any/all
    assert any("found.append" not in text for text in texts)  # a statement dropped
    assert any(text.index("return None") < text.index("if any") for text in texts if "return None" in text
               and "if any" in text)                     # two statements swapped
    for mutant in made:  # every mutant keeps the region's indentation, so it can be put back in the file
        assert all(line.startswith("    ") for line in mutant.text.splitlines() if line.strip())
        compile(textwrap.dedent(mutant.text), "<mutant>", "exec", flags=ast.PyCF_ONLY_AST)


def exercise(stage: str, number: int) -> grading.Exercise:
    return next(found for found in grading.stage_exercises(stage) if found.number == number)


@needs_confinement
@pytest.mark.parametrize("stage,number", sorted(grading_audit.WRONG_SOLUTIONS))
def test_every_wrong_solution_a_chapter_warns_about_fails_on_every_seed(stage, number):
    """The wrong solutions written out (s06's first-match-in-list-order decide and an "always" read before the
    deny rules; s01's result in any later message; s04's marker that forgets the offset): none gets full marks on
    the audit's first two seeds (the full audit, `python -m course grade --audit`, grades them on all five: a
    reference run per seed costs seconds, more than the suite's budget allows here)."""
    grading.pin_versions([stage])
    try:
        found = grading_audit.audit_exercise(exercise(stage, number), grading.Options(jobs=2),
                                             seeds=grading_audit.SEEDS[:2], only_written=True)
    finally:
        grading._PINNED.clear()
    assert not found.skipped, found.skipped
    assert found.made == len(grading_audit.WRONG_SOLUTIONS[stage, number])
    assert not found.survivors, grading_audit.report([found], grading_audit.SEEDS[:2])


@needs_confinement
@pytest.mark.parametrize("stage,number,sample", [("s01", 3, 7)])
def test_no_sampled_mutant_gets_full_marks_unless_listed_as_equivalent(stage, number, sample):
    """A sample of the generated mutants of an exercise, on two seeds."""
    grading.pin_versions([stage])
    try:
        found = grading_audit.audit_exercise(exercise(stage, number), grading.Options(jobs=2), seeds=(7, 8), sample=sample)
    finally:
        grading._PINNED.clear()
    assert not found.skipped, found.skipped
    assert found.made >= 3
    assert not found.survivors, grading_audit.report([found], (7, 8))


def test_every_wrong_solution_written_out_compiles_and_differs_from_the_reference():
    for (stage, number), written in grading_audit.WRONG_SOLUTIONS.items():
        reference = ast.unparse(ast.parse(textwrap.dedent(grading_audit.reference_body(exercise(stage, number)))))
        for what, text in written:
            assert ast.unparse(ast.parse(textwrap.dedent(text))) != reference, what
