"""The calculator behind every stage's ``calculate`` tool (course.helpers.arithmetic): Python's own arithmetic,
read as a syntax tree and never eval()'d, and bounded so that no answer takes the machine with it."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings, strategies as st

import course
import course.helpers.arithmetic as arithmetic
from helpers import load_stage, each_stage

STAGES = ["s00", "s01", "s02", "s03", "s04", "s05", "s06"]


def expressions(depth: int = 3):
    """Small arithmetic over whole numbers: what Python computes at once, exactly."""
    number = st.integers(min_value=-50, max_value=50).map(lambda n: f"({n})" if n < 0 else str(n))
    return st.recursive(number, lambda inner: st.tuples(inner, st.sampled_from(["+", "-", "*", "//", "%"]), inner)
                        .map(lambda parts: f"({parts[0]} {parts[1]} {parts[2]})"), max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(expressions())
def test_the_calculator_agrees_with_python_on_whole_number_arithmetic(expression):
    try:
        expected = str(eval(compile(ast.parse(expression, mode="eval"), "<test>", "eval")))  # the reference
    except ZeroDivisionError:
        with pytest.raises(ZeroDivisionError):
            course.calculator(expression)
        return
    assert course.calculator(expression) == expected


@pytest.mark.parametrize("expression", ["__import__('os').system('true')", "open('x')", "x", "[1, 2]", "1 if 1 else 2",
                                        "True + 1", "(1).__class__", "'a' * 3", "lambda: 1"])
def test_anything_but_numbers_and_operators_is_refused(expression):
    with pytest.raises((ValueError, SyntaxError)):
        course.calculator(expression)


@pytest.mark.parametrize("expression, why", [("9 ** 9 ** 9", "digits"), ("10 ** 999 * 10 ** 999", "digits"),
                                             ("1e308 * 10", "overflowed"), ("(-8) ** 0.5", "complex"),
                                             ("1 + " * 100 + "1", "longer than")])
def test_an_answer_too_big_to_use_is_refused_before_it_is_computed(expression, why):
    with pytest.raises(ValueError, match=why):
        course.calculator(expression)


def test_a_refusal_says_what_to_do_instead():
    with pytest.raises(ValueError) as refused:
        course.calculator("9 ** 9 ** 9")
    assert str(refused.value).endswith("use smaller numbers") and str(arithmetic.MAX_DIGITS) in str(refused.value)


@pytest.mark.parametrize("stage_name", each_stage(*STAGES))
def test_every_stage_answers_a_calculation_and_a_refusal_as_one_tool_result(stage_name, workspace):
    stage = load_stage(stage_name)
    options = {"gate": stage.Gate(rules=stage.RULES, approver=None, audit_log=False)} if hasattr(stage, "Gate") else {}
    text, is_error = stage.run_tool(workspace, "calculate", {"expression": "1250 * 16"}, *options.values())
    assert not is_error and "20000" in text
    text, is_error = stage.run_tool(workspace, "calculate", {"expression": "9 ** 9 ** 9"}, *options.values())
    assert is_error and "digits" in text
