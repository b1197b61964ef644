"""The calculator every stage's ``calculate`` tool uses: arithmetic read as a syntax tree, never eval().

Only numbers and the operators below get through, and each answer is bounded: an expression of at
most MAX_EXPRESSION characters, no result of more than MAX_DIGITS digits (checked before computing,
so 9**9**9 never starts), and no inf, nan or complex number (a model would carry them on as answers).
A refusal is a ValueError whose message says what to do instead.
"""

from __future__ import annotations

import ast
import math
import operator

OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
             ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
             ast.USub: operator.neg, ast.UAdd: operator.pos}
MAX_EXPRESSION = 200
MAX_DIGITS = 1000


def evaluate(expression: str) -> str:
    """The value of ``expression`` as text, e.g. evaluate('1250 * 16') == '20000'."""
    if not isinstance(expression, str):
        raise ValueError(f"the expression must be text, got {type(expression).__name__}")
    if len(expression) > MAX_EXPRESSION:
        raise ValueError(f"the expression is longer than {MAX_EXPRESSION} characters; split the calculation")
    return str(real_and_finite(value_of(ast.parse(expression, mode="eval").body)))


def value_of(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        left, right = value_of(node.left), value_of(node.right)
        refuse_huge(type(node.op), left, right)
        return OPERATORS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](value_of(node.operand))
    raise ValueError(f"unsupported expression: {ast.unparse(node)}; use numbers and + - * / // % ** ( )")


def real_and_finite(result):
    if isinstance(result, complex):
        raise ValueError(f"the result is the complex number {result}: a negative number to a fractional power "
                         "has no real result; check the signs")
    if isinstance(result, float) and not math.isfinite(result):
        raise ValueError(f"the result is {result}: the floating-point calculation overflowed; use smaller "
                         "numbers, or whole numbers (they do not overflow)")
    return result


def digits(number) -> float:
    """Decimal digits of an integer (floats cannot grow without bound: they overflow to an error)."""
    return math.log10(abs(number)) + 1 if isinstance(number, int) and number else 0


def refuse_huge(operation, left, right) -> None:
    if operation is ast.Pow and isinstance(right, int) and abs(left) > 1:
        size = right * math.log10(abs(left)) + 1
    elif operation is ast.Mult:
        size = digits(left) + digits(right)
    else:
        return
    if size > MAX_DIGITS:
        raise ValueError(f"the result would have about {int(size)} digits (at most {MAX_DIGITS}); use smaller numbers")
