"""The region check refuses a dunder name however the code reaches it: an attribute, a class pattern's
keyword (``case object(__globals__=g)``), a mapping pattern's key, a string handed to getattr or vars,
a format field (``"{0.__class__}"``), operator.attrgetter, a keyword argument or the key of a ``**``
dict. Generated code (hypothesis) puts drawn names into each syntax; the same code with a plain name
in their place is accepted, so the check refuses the dunder, not the syntax.
"""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.grading import grade as grading

pytestmark = pytest.mark.stage()  # the grader's region check: no stage

# Each form reaches NAME (an attribute name) from a value the region has (`state`).
FORMS = {
    "attribute": "x = state.{name}",
    "class pattern": "match state:\n    case object({name}=found):\n        return found",
    "nested class pattern": "match [state]:\n    case [LoopState({name}=found)]:\n        return found",
    "mapping pattern": "match state:\n    case {{'{name}': found}}:\n        return found",
    "format field": "return '{{0.{name}}}'.format(state)",
    "format_map field": "return '{{s.{name}}}'.format_map({{'s': state}})",
    "f-string text": "return f'{{state!r}} {name}'",
    "attrgetter": "return json.attrgetter('{name}')(state)",
    "keyword argument": "return dict({name}=state)",
    "** keywords": "return dict(**{{'{name}': state}})",
    "bytes": "return b'{name}'",
}
# The forms that are fine Python for a region with a plain name in them.
PLAIN_OK = {"attribute", "class pattern", "nested class pattern", "mapping pattern", "format field",
            "format_map field", "f-string text", "keyword argument", "** keywords", "bytes"}

identifiers = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True)
dunders = st.one_of(st.sampled_from(["__globals__", "__class__", "__dict__", "__builtins__", "__subclasses__",
                                     "__code__", "__closure__", "__getattribute__", "__init__", "__base__"]),
                    identifiers.map(lambda name: f"__{name}__"))


def problems(code: str) -> list[str]:
    return grading.region_problems(grading.Body(1, "agent.py", 10, textwrap.indent(code + "\n", "    "), False))


@settings(max_examples=120, deadline=None)
@given(form=st.sampled_from(sorted(FORMS)), name=dunders)
def test_a_dunder_is_refused_whatever_the_syntax_that_reaches_it(form, name):
    assert problems(FORMS[form].format(name=name)), (form, name)


@settings(max_examples=60, deadline=None)
@given(form=st.sampled_from(sorted(PLAIN_OK)), name=identifiers.filter(lambda name: name not in grading.BANNED_ATTRIBUTES
                                                                      | grading.BANNED_CALLS | grading.BANNED_MODULES))
def test_the_same_code_with_a_plain_name_is_accepted(form, name):
    assert not problems(FORMS[form].format(name=name)), (form, name)


@pytest.mark.parametrize("code", [
    "match limit_reached:\n    case object(__globals__=g):\n        return g['sys']",
    "return vars(state)['__class__']",
    "return getattr(state, '__cl' 'ass__')",  # two literals, one string
    "return ('{0._' + '_class__}').format(state)",  # a format string made at run time
    "return str.format('{0}', state)",
    "return json.operator.attrgetter('x')(state)",
    "def __getattr__(name):\n    return name",
    "return (lambda __x: __x)(state)",
])
def test_the_ways_a_reader_of_the_check_found_are_refused(code):
    assert problems(code), code


def test_a_format_on_a_string_written_out_is_accepted():
    assert not problems("return '{} of {}'.format(state.turn_count, limits.max_turns)")
