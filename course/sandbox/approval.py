"""The approval question as a person sees it: what s06's ``ask_on_terminal`` prints, worked out here.

A person approves what the screen shows, so the screen must show all of it, and only as data:

* the whole call, wrapped by this program at the terminal's width (never cut at the screen's edge
  by a terminal whose line wrapping a reply switched off), each line between bars, a line that the
  call itself breaks ended with ⏎, so that a wrap and a line break look different;
* every character visible: a control character, an escape sequence, a zero-width or combining mark,
  a bidirectional control, a private-use or unassigned code point is written as its escape (\\x1b,
  \\u200b), never obeyed or hidden; so is a right-to-left letter or a digit other than ASCII's, which the
  terminal would lay out in another order, and a letter of another script inside a word of ASCII letters
  (`t\\u0456dy.py`, a Cyrillic і), which passes for an ASCII one: the reasons say so, naming each such
  letter and the letter it looks like; a wide character counts two columns;
* its length in characters, and every reason it is not plain, not only the first;
* a call too long to show whole on one screen is not asked about: ``TooLong`` says why, and the gate
  refuses it with that reason (the dangerous middle of a 4,000-character command would scroll off).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import textwrap
import unicodedata

from course.runtime.trace import escape_terminal_controls, escaped

MARGIN = "    │ "
LINE_BREAK = "⏎"
QUESTION_LINES = 2  # the question itself, and a line for the answer to be typed under


class TooLong(Exception):
    """The call would not fit on one screen: the reason the gate gives instead of asking."""


def terminal_size() -> tuple[int, int]:
    """The terminal's own size, asked of the terminal (COLUMNS and LINES, which shutil reads first, may
    be left over from another window); without a terminal, what shutil says."""
    try:
        size = os.get_terminal_size(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        size = shutil.get_terminal_size((80, 24))
    return max(size.columns, 20), max(size.lines, 5)


def visible(text: str) -> str:
    """``text`` with nothing invisible, obeyed, reordered or passing for another letter left: the terminal
    controls, private-use and unassigned code points (course.runtime.trace), tabs, every zero-width, format or
    combining character, every right-to-left letter and every digit that is not ASCII's, and every letter
    that is not ASCII's in a word of ASCII letters (look_alikes()), as its escape. Newlines are kept (they break lines)."""
    shown = escape_terminal_controls(text).replace("\t", "\\t")
    odd = {index for index, _ in look_alikes(shown)}
    return "".join(escaped_letter(character)
                   if hidden_character(character) or right_to_left(character) or index in odd else character
                   for index, character in enumerate(shown))


# A word is a run of letters and digits; one that holds an ASCII letter and a letter that is not ASCII's mixes
# scripts the way a spoofed name does: Unicode's mixed-script detection (https://www.unicode.org/reports/tr39/#Mixed_Script_Detection)
# and its confusables, where Cyrillic і, а, о, е, р, с and Greek ο, ν are drawn as i, a, o, e, p, c, o, v
# (https://www.unicode.org/Public/security/latest/confusables.txt). A wide character (CJK, kana, Hangul)
# takes two columns and passes for no ASCII letter, so `memo2メモ` is left as it is; full-width Latin is not.
WORD = re.compile(r"[^\W_]+")
# The ASCII letter each common look-alike is drawn as (confusables.txt, Cyrillic and Greek to Latin).
LOOKS_LIKE = dict(pair.split(":") for pair in (
    "а:a е:e о:o р:p с:c у:y х:x і:i ј:j ѕ:s ԁ:d һ:h ԛ:q ԝ:w ӏ:l "          # Cyrillic small
    "А:A В:B Е:E К:K М:M Н:H О:O Р:P С:C Т:T Х:X І:I Ј:J Ѕ:S Ԍ:G Ԛ:Q Ԝ:W "  # Cyrillic capital
    "α:a ι:i ν:v ο:o ρ:p "                                                    # Greek small
    "Α:A Β:B Ε:E Ζ:Z Η:H Ι:I Κ:K Μ:M Ν:N Ο:O Ρ:P Τ:T Υ:Y Χ:X").split())      # Greek capital


def escaped_letter(character: str) -> str:
    return f"\\u{ord(character):04x}" if ord(character) <= 0xFFFF else escaped(character)


def passes_for_ascii(character: str) -> bool:
    """A letter drawn as an ASCII one: a look-alike of LOOKS_LIKE, or one whose compatibility form is ASCII (ｒ, 𝐚)."""
    return character in LOOKS_LIKE or unicodedata.normalize("NFKC", character).isascii()


def look_alikes(text: str) -> list[tuple[int, str]]:
    """Each letter that is not ASCII's in a word that holds an ASCII letter, or whose every letter passes for
    an ASCII one (Cyrillic рор is drawn as pop), as (its index, what it is):
    "\\u0456 is CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I, not i" (the letter as its escape)."""
    found = []
    for word in WORD.finditer(text):
        letters = word.group()
        if letters.isascii() or not (any(character.isascii() and character.isalpha() for character in letters)
                                     or all(passes_for_ascii(character) for character in letters if character.isalpha())):
            continue
        for offset, character in enumerate(letters):
            if character.isascii() or not character.isalpha() or (
                    columns(character) == 2 and not unicodedata.normalize("NFKC", character).isascii()):
                continue
            name = unicodedata.name(character, f"U+{ord(character):04X}")
            plain = LOOKS_LIKE.get(character) or (unicodedata.normalize("NFKD", character)[:1]
                                                  if unicodedata.normalize("NFKD", character)[:1].isascii() else "")
            found.append((word.start() + offset, f"{escaped_letter(character)} is {name}, "
                                                 + (f"not {plain}" if plain else "not an ASCII letter")))
    return found


def right_to_left(character: str) -> bool:
    """A letter written right to left (Hebrew, Arabic: bidirectional class R or AL), or a digit that is
    not ASCII's (Arabic-Indic: AN; Extended Arabic-Indic, superscript, full-width: EN). The terminal lays
    a run of such letters out in its own order, and the neutral characters around them with it, so that
    `rm -rf שלום /` may look like another command; digits pull the neutrals between them the same way:
    rule N1 of the bidirectional algorithm takes an Arabic number for R there (a European one too where
    no left-to-right letter comes before it, W7), so the `>` of `cat memo.md ٠>٠/../memo.md` may be drawn
    mirrored (https://www.unicode.org/reports/tr9/#N1). Terminals apply the algorithm in their own ways,
    so every digit but ASCII's is escaped; those stay readable, since every command is written with them."""
    kind = unicodedata.bidirectional(character)
    return kind in ("R", "AL", "AN") or (kind == "EN" and not character.isascii())


RIGHT_TO_LEFT = "contains right-to-left letters or digits, which the terminal may show in another order"
MIXED_SCRIPTS = "mixes letters of other scripts into a word of ASCII letters, where they look like ASCII's"


# Letters that fonts draw blank: the Hangul fillers, which Unicode lists as Default_Ignorable_Code_Point
# although their category is Lo (https://www.unicode.org/Public/UCD/latest/ucd/DerivedCoreProperties.txt),
# and U+2800, braille's empty pattern: a command holding one looks like a command without it.
BLANK_DRAWN = {"\u3164", "\u115f", "\u1160", "\uffa0", "\u2800"}
# Hangul's medial vowels and final consonants, which join the syllable before them: a terminal gives each no
# column of its own (wcwidth's zero-width ranges, after Markus Kuhn's wcwidth.c:
# https://www.cl.cam.ac.uk/~mgk25/ucs/wcwidth.c), so after a space or an ASCII letter they are drawn as nothing.
ZERO_WIDTH_JAMO = (("\u1160", "\u11ff"), ("\ud7b0", "\ud7ff"))


def hidden_character(character: str) -> bool:
    """Whether a character would be drawn as nothing, or as a plain space that is not one: zero-width,
    format, combining, a line or paragraph separator, a space other than ' ' (U+00A0, U+2003...), a filler,
    a private-use or an unassigned code point (a font draws what it likes there)."""
    category = unicodedata.category(character)
    return (category in ("Mn", "Me", "Cf", "Zl", "Zp", "Co", "Cn") or (category == "Zs" and character != " ")
            or unicodedata.combining(character) != 0 or character == LINE_BREAK or character in BLANK_DRAWN
            or any(first <= character <= last for first, last in ZERO_WIDTH_JAMO))


def columns(character: str) -> int:
    return 2 if unicodedata.east_asian_width(character) in ("W", "F") else 1


def wrapped(text: str, width: int) -> list[str]:
    """``text`` (already visible) in lines of at most ``width`` columns, every character kept in order;
    a line the text itself ends is marked with LINE_BREAK."""
    lines = []
    physical = text.split("\n")
    for number, line in enumerate(physical):
        line += LINE_BREAK if number < len(physical) - 1 else ""
        current, used = "", 0
        for character in line:
            if used + columns(character) > width:
                lines.append(current)
                current, used = "", 0
            current += character
            used += columns(character)
        lines.append(current)
    return lines


def subject(tool: str, arguments: dict) -> str:
    """What the person approves, as text: a command itself; any other call's arguments, one a line."""
    if tool == "run_command" and isinstance(arguments.get("command"), str):
        return arguments["command"]
    return "\n".join(f"{name}: {json.dumps(value, ensure_ascii=False)}" for name, value in arguments.items())


def screen(tool: str, arguments: dict, why: str, covers: str, size: tuple[int, int] | None = None) -> list[str]:
    """The lines of the question, each within the terminal's width; the last is the prompt for the
    answer. Raises TooLong when they would not fit on one screen."""
    width, rows = size or terminal_size()
    room = width - len(MARGIN)
    text = subject(tool, arguments)
    what = "the command" if tool == "run_command" else f"the {tool} call"
    body = [MARGIN + line for line in wrapped(visible(text), room)]
    if any(right_to_left(character) for character in text):  # shown escaped, and said why
        why = f"{why}; {what} {RIGHT_TO_LEFT}"
    mixed = list(dict.fromkeys(said for _, said in look_alikes(escape_terminal_controls(text))))
    if mixed:  # each letter escaped in the call, and said here by its name beside the letter it passes for
        why = f"{why}; {what} {MIXED_SCRIPTS}: " + "; ".join(mixed)
    # The words around the call are wrapped at blanks (textwrap); the call itself at any character.
    reasons = textwrap.wrap(visible(f"why: {why}"), width, initial_indent="    ", subsequent_indent="      ",
                            break_on_hyphens=False)
    always = visible(covers)
    choices = textwrap.wrap((f"allow [o]nce ({always})" if covers.startswith("once only")
                             else f"allow [o]nce, [a]lways ({always})") + ", or [n]o (no, REASON):", width - 4,
                            break_on_hyphens=False)
    choices[-1] += " "
    head = textwrap.wrap(f"? {visible(tool)}: {len(text)} characters, shown whole between the bars:", width - 2)
    lines = ["  " + line for line in head] + body + reasons + ["    " + line for line in choices]
    if len(lines) + QUESTION_LINES > rows:
        raise TooLong(f"{what} is {len(text)} characters: at this terminal's {width} columns it takes "
                      f"{len(body)} lines, and the question {len(lines) + QUESTION_LINES}, more than the "
                      f"{rows} a screen shows at once, so no person was asked (a part would have scrolled "
                      "off); " + ("split it into shorter commands" if tool == "run_command" else "make the call smaller"))
    return lines
