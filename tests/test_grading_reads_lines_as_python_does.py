"""The grader compares a copy's lines with the stub's and finds its regions line by line; Python reads the
same file as code. The two must agree on where a line ends: a character that ends a line for
str.splitlines but not for Python (a form feed, a vertical tab, U+2028...) in a comment had opened a
triple-quoted string only the grader saw, and code outside the regions passed for a region's text. A copy
holding one is refused, naming the file and the line; the same copy without it is graded."""

from __future__ import annotations

import pytest

from course.grading import grade as grading
from test_grading import make_copy

pytestmark = pytest.mark.stage()  # the grader's reading of a copy: no stage

BREAKS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def test_python_and_splitlines_disagree_on_exactly_these_characters():
    for code in range(0x110000):
        character = chr(code)
        if 0xD800 <= code <= 0xDFFF:
            continue
        splits = len(f"a{character}b".splitlines()) == 2
        python_ends_a_line = character in "\n\r"
        assert (splits and not python_ends_a_line) == bool(grading.OTHER_LINE_BREAKS.fullmatch(character)), repr(character)


@pytest.mark.parametrize("character", BREAKS, ids=[f"U+{ord(c):04X}" for c in BREAKS])
def test_a_copy_with_a_line_break_python_does_not_see_is_refused_naming_the_line(tmp_path, character):
    body = f"# a comment with one{character}    \"\"\"\nreturn None"
    copy = make_copy(tmp_path / "s03", "s03", {2: body})
    with pytest.raises(grading.Refused) as refused:
        grading.read_copy("s03", copy)
    line = next(number for number, text in enumerate((copy / "agent.py").read_text(encoding="utf-8").split("\n"), 1)
                if character in text)
    assert f"agent.py, line {line}: the character {character!r}" in str(refused.value)


def test_the_same_copy_without_it_is_read(tmp_path):
    copy = make_copy(tmp_path / "s03", "s03", {2: "# a comment with one    \"\"\"\nreturn None"})
    assert grading.read_copy("s03", copy)[2].text.strip().endswith("return None")


def test_the_attack_that_hid_code_in_a_string_only_the_grader_saw_is_refused(tmp_path):
    # A comment ending in a form feed and a triple quote opens a string for the line-by-line reading; the
    # code after it (an import the region check refuses) is Python's, and a second comment closes it.
    hidden = "# start\x0c    \"\"\"\nimport os\nx = os.getpid()\n# end\x0c    \"\"\"\nreturn None"
    copy = make_copy(tmp_path / "s03", "s03", {2: hidden})
    with pytest.raises(grading.Refused, match="ends a line for the grader but not for Python"):
        grading.read_copy("s03", copy)
