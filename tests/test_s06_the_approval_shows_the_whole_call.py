"""s06: the approval question shows a person the whole call, as data, or is not asked at all.

As a person sees it: the stage runs in a real terminal emulator (tmux), with a scripted model whose
reply tries to switch the terminal's line wrapping off and clear the screen before it asks to run a
long command with a harmful tail. The screen (tmux capture-pane) must show the escape as text, the
whole command wrapped by the program, its length and why it is not plain; a command too long for one
screen must be refused without a question. The question's layout (course.sandbox.approval) is pinned too.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import course.sandbox.approval

pytestmark = pytest.mark.stage("s06")

ROOT = Path(__file__).resolve().parents[1]
HARM = "python3 -c 'import os; os.remove(\"important.txt\")'"
LONG = "cat memo.md > summary.txt && echo " + "abcdefghij" * 140 + " > /dev/null && " + HARM
TOO_LONG = "cat memo.md > summary.txt && echo " + "klmnopqrst" * 400 + " && " + HARM

SCRIPT = textwrap.dedent("""\
    import json, sys
    sys.path[:0] = [{root!r}, {tests!r}]
    import course
    from helpers import DONE, load_stage, scripted_client
    s06 = load_stage("s06")
    paint = "\\x1b[?7l\\x1b[2J\\x1b[HAll good: summarising.\\x1b[8m"
    calls = [{{"type": "text", "text": paint}}] + [
        {{"type": "tool_use", "id": f"toolu_{{n}}", "name": call[0] if isinstance(call, list) else "run_command",
          "input": call[1] if isinstance(call, list) else {{"command": call}}}}
        for n, call in enumerate(json.loads(sys.argv[2]))]
    client, _ = scripted_client(calls, calls, DONE)  # the first is cut at max_tokens, and asked again with more room
    result = s06.run("Summarise memo.md", client=client, model="scripted", workspace=sys.argv[1],
                     trace=course.TracePrinter(), audit_log=False, runs_log=False, transcript=False)
    messages = [json.loads(block["content"])["message"] for message in result.messages
                if message["role"] == "user" and isinstance(message["content"], list) for block in message["content"]]
    print("RESULT", json.dumps([["no person was asked" in text, "a person refused" in text] for text in messages]))
""")


@pytest.fixture
def terminal(tmp_path):
    """A tmux server of this test's own (its own socket), 100 columns by 40 rows."""
    if not shutil.which("tmux"):
        pytest.skip("tmux is not installed")
    socket_name = f"course-test-{os.getpid()}-{tmp_path.name}"

    def tmux(*arguments) -> str:
        return subprocess.run(["tmux", "-L", socket_name, *arguments], capture_output=True, text=True,
                              check=False, timeout=10).stdout

    yield tmux
    tmux("kill-server")


def screen_until(tmux, text: str, timeout_s: float = 90) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        shown = tmux("capture-pane", "-p", "-t", "stage")
        if text in shown:
            return shown
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared; the screen:\n{shown}")


def run_stage_in_the_terminal(terminal, tmp_path: Path, commands: list) -> Path:
    """Start the SCRIPT's run, which asks about ``commands`` in turn (a command, or [a tool's name, its
    input]), in the tmux terminal; its workspace."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "memo.md").write_text("memo\n")
    (workspace / "important.txt").write_text("keep me\n")
    script = tmp_path / "stage.py"
    script.write_text(SCRIPT.format(root=str(ROOT), tests=str(ROOT / "tests")))
    command = " ".join(shlex.quote(part) for part in (sys.executable, str(script), str(workspace), json.dumps(commands)))
    terminal("-f", "/dev/null", "new-session", "-d", "-s", "stage", "-x", "100", "-y", "40", f"{command}; sleep 120")
    return workspace


def test_a_person_sees_the_whole_command_and_no_escape_takes_effect(terminal, tmp_path):
    workspace = run_stage_in_the_terminal(terminal, tmp_path, [TOO_LONG, LONG])
    shown = screen_until(terminal, "allow [o]nce")
    assert "\\x1b[?7l\\x1b[2J" in shown and "\\x1b[8m" in shown  # the escapes are text, not obeyed
    body = [line[len(course.sandbox.approval.MARGIN):] for line in shown.splitlines() if line.startswith(course.sandbox.approval.MARGIN)]
    assert "".join(body) == LONG  # every character, in order, wrapped by the program
    assert all(len(line) <= 100 for line in shown.splitlines())
    assert f"{len(LONG)} characters" in shown and "python3" in shown and "redirection" in shown
    assert "klmnopqrst" not in "".join(body)  # the 4,000-character one was not asked about
    terminal("send-keys", "-t", "stage", "n", "Enter")
    shown = screen_until(terminal, "RESULT")
    assert "RESULT [[true, false], [false, true]]" in shown and (workspace / "important.txt").exists()
    assert shown.count("allow [o]nce") == 1


# ---------------------------------------------------------------- the question's layout

def test_every_character_is_shown_and_none_is_obeyed():
    command = "cat a\x1b]0;title\x07 b\u202e\u200b\u0301 日本語\tx\nrm -f y ⏎"
    lines = course.sandbox.approval.screen("run_command", {"command": command}, "why", "once only: x", (40, 30))
    body = "".join(line[len(course.sandbox.approval.MARGIN):] for line in lines if line.startswith(course.sandbox.approval.MARGIN))
    assert body == "cat a\\x1b]0;title\\x07 b\\u202e\\u200b\\u0301 日本語\\tx⏎rm -f y \\u23ce"
    assert not any(ord(character) < 32 or 0x7F <= ord(character) < 0xA0 for line in lines for character in line)
    width = max(sum(course.sandbox.approval.columns(character) for character in line) for line in lines)
    assert width <= 40  # a wide character counts two columns


@pytest.mark.parametrize("blank", ["\u3164", "\u115f", "\u1160", "\uffa0", "\u2800", "\u00a0", "\u2003", "\u3000",
                                   "\u1161", "\u11a8", "\u11ff", "\ud7b0", "\ud7fb"])  # Hangul's joining vowels, finals
def test_a_character_drawn_blank_is_shown_as_its_escape(blank):
    command = f"ls{blank}-la"  # on screen it reads 'ls -la'; the shell sees one word, a program of that name
    lines = course.sandbox.approval.screen("run_command", {"command": command}, "why", "once only: x", (80, 30))
    body = "".join(line[len(course.sandbox.approval.MARGIN):] for line in lines if line.startswith(course.sandbox.approval.MARGIN))
    assert body == f"ls\\u{ord(blank):04x}-la" and blank not in "".join(lines)
    assert course.sandbox.approval.visible("a plain space") == "a plain space"


@pytest.mark.parametrize("columns, rows", [(80, 24), (120, 50), (40, 80)])
def test_a_call_fits_on_the_screen_or_is_not_asked(columns, rows):
    for length in range(0, 6000, 250):
        arguments = {"command": "x" * length}
        try:
            lines = course.sandbox.approval.screen("run_command", arguments, "it is not plain", "once only: y", (columns, rows))
        except course.sandbox.approval.TooLong as too_long:
            assert f"{length} characters" in str(too_long) and "split it" in str(too_long)
            assert length > (rows - 6) * (columns - len(course.sandbox.approval.MARGIN)) // 2  # not refused when it fits easily
            continue
        assert len(lines) + course.sandbox.approval.QUESTION_LINES <= rows and f"{length} characters" in lines[0]
        assert all(sum(course.sandbox.approval.columns(character) for character in line) <= columns for line in lines)


# ---------------------------------------------------------------- what the terminal would reorder or draw as it likes

def body_of(lines: list[str]) -> str:
    return "".join(line[len(course.sandbox.approval.MARGIN):] for line in lines if line.startswith(course.sandbox.approval.MARGIN))


@pytest.mark.parametrize("character", ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068",
                                       "\u2069", "\u200e", "\u200f", "\u061c",  # the bidirectional controls
                                       "\ue000", "\uf8ff", "\U000f0000", "\U0010fffd",  # private use (Co)
                                       "\u0378", "\U0002fffe"])  # unassigned (Cn)
def test_a_bidirectional_control_a_private_use_or_an_unassigned_code_point_is_shown_as_its_escape(character):
    command = f"ls {character}x"
    lines = course.sandbox.approval.screen("run_command", {"command": command}, "why", "once only: x", (80, 30))
    code = ord(character)
    assert body_of(lines) == "ls " + (f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}") + "x"
    assert character not in "".join(lines)
    assert character not in course.escape_terminal_controls(f"a model wrote {character}")  # and in the trace


@pytest.mark.parametrize("letters", ["שלום", "مرحبا", "ﭐ"])  # Hebrew (R), Arabic (AL), an Arabic presentation form
def test_right_to_left_letters_are_shown_as_escapes_and_said_why(letters):
    command = f"rm -rf {letters} /tmp/x"
    lines = course.sandbox.approval.screen("run_command", {"command": command}, "it is not plain", "once only: x", (80, 30))
    assert body_of(lines) == "rm -rf " + "".join(f"\\u{ord(letter):04x}" for letter in letters) + " /tmp/x"
    assert not any(letter in "".join(lines) for letter in letters)
    said = " ".join(line.strip() for line in lines)
    assert "it is not plain; the command contains right-to-left letters or digits, which the terminal may show in another order" in said


# Arabic-Indic (AN), Extended Arabic-Indic (EN), Devanagari's and full-width digits, a superscript: between two
# such digits a neutral may resolve right to left, and `cat memo.md ٠>٠/../memo.md` may be drawn mirrored.
@pytest.mark.parametrize("digit", ["\u0660", "\u0669", "\u06f0", "\u06f9", "\uff11", "\u00b2", "\u2081"])
def test_digits_other_than_asciis_are_shown_as_escapes_and_said_why(digit):
    command = f"cat memo.md {digit}>{digit}/../memo.md"
    lines = course.sandbox.approval.screen("run_command", {"command": command}, "it is not plain", "once only: x", (80, 30))
    code = f"\\u{ord(digit):04x}"
    assert body_of(lines) == f"cat memo.md {code}>{code}/../memo.md" and digit not in "".join(lines)
    said = " ".join(line.strip() for line in lines)
    assert "the command contains right-to-left letters or digits, which the terminal may show in another order" in said


def test_asciis_digits_and_other_scripts_numerals_that_keep_their_order_are_shown_as_they_are():
    lines = course.sandbox.approval.screen("run_command", {"command": "head -n 20 memo.md > 第3章.txt"}, "why", "once only: x",
                                   (80, 30))
    assert body_of(lines) == "head -n 20 memo.md > 第3章.txt" and "right-to-left" not in " ".join(lines)


def test_a_call_without_right_to_left_letters_says_nothing_of_them():
    lines = course.sandbox.approval.screen("run_command", {"command": "rm -rf 日本語 /tmp/x"}, "why", "once only: x", (80, 30))
    assert "right-to-left" not in " ".join(lines) and "日本語" in body_of(lines)
    assert course.escape_terminal_controls("שלום, 日本語") == "שלום, 日本語"  # the trace keeps readable text as it is


BIDI = "python3 -c 'print(1)' # \u05e9\u05dc\u05d5\u05dd \u202e\u2067 \ue000 \u0378 && " + HARM
BIDI_SHOWN = course.sandbox.approval.visible(BIDI)


def test_a_person_sees_right_to_left_letters_and_bidirectional_controls_as_escapes(terminal, tmp_path):
    workspace = run_stage_in_the_terminal(terminal, tmp_path, [BIDI])
    shown = screen_until(terminal, "allow [o]nce")
    question = shown[shown.index("? run_command"):]
    assert not any(course.sandbox.approval.right_to_left(character) or character in "\u202e\u2067\ue000\u0378"
                   for character in question)
    body = [line[len(course.sandbox.approval.MARGIN):] for line in question.splitlines() if line.startswith(course.sandbox.approval.MARGIN)]
    assert "".join(body) == BIDI_SHOWN and "\\u05e9\\u05dc\\u05d5\\u05dd \\u202e\\u2067 \\ue000 \\u0378" in BIDI_SHOWN
    said = " ".join(line.strip() for line in question.splitlines())
    assert "contains right-to-left letters or digits, which the terminal may show in another order" in said
    terminal("send-keys", "-t", "stage", "n", "Enter")
    shown = screen_until(terminal, "RESULT")
    assert "RESULT [[false, true]]" in shown and (workspace / "important.txt").exists()



# ---------------------------------------------------------------- a letter that passes for another

TIDY = "python3 t\u0456dy.py memo.md"  # a Cyrillic і, drawn as i: not the tidy.py the person knows
CYRILLIC_I = "\\u0456 is CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I, not i"


@pytest.mark.parametrize("tool, arguments, shown", [
    ("run_command", {"command": TIDY}, "python3 t\\u0456dy.py memo.md"),
    ("delete_file", {"path": "t\u0456dy.py"}, 'path: "t\\u0456dy.py"'),
    ("move_file", {"source": "memo.md", "destination": "m\u0435mo.md"}, 'destination: "m\\u0435mo.md"'),
])
def test_a_letter_of_another_script_in_an_ascii_word_is_escaped_and_named(tool, arguments, shown):
    lines = course.sandbox.approval.screen(tool, arguments, "it is not plain", "once only: x", (100, 30))
    assert shown in body_of(lines) and "\u0456" not in body_of(lines) and "\u0435" not in body_of(lines)
    said = " ".join(line.strip() for line in lines if not line.startswith(course.sandbox.approval.MARGIN))
    assert "it is not plain; " in said and course.sandbox.approval.MIXED_SCRIPTS in said
    assert (CYRILLIC_I if "\u0456" in json.dumps(arguments, ensure_ascii=False)
            else "\\u0435 is CYRILLIC SMALL LETTER IE, not e") in said


@pytest.mark.parametrize("word, named", [
    ("g\u03bfogle", "GREEK SMALL LETTER OMICRON, not o"), ("caf\u00e9", "LATIN SMALL LETTER E WITH ACUTE, not e"),
    ("\uff52m", "FULLWIDTH LATIN SMALL LETTER R, not r"),  # full-width Latin is wide, and still passes for r
    ("\u0440\u043e\u0440", "CYRILLIC SMALL LETTER ER, not p"),  # every letter a look-alike: drawn as pop
    ("x\u0436", "CYRILLIC SMALL LETTER ZHE, not an ASCII letter"),
])
def test_each_kind_of_letter_that_passes_for_ascii_is_named(word, named):
    said = " ".join(course.sandbox.approval.screen("run_command", {"command": f"cat {word}"}, "why", "once only: x", (100, 30)))
    assert named in said and word not in said


@pytest.mark.parametrize("command", ["head -n 20 memo.md > 第3章.txt", "cat memo2メモ.md", "cat привет.txt", "cat tidy.py"])
def test_words_of_one_script_are_shown_as_they_are(command):
    lines = course.sandbox.approval.screen("run_command", {"command": command}, "why", "once only: x", (100, 30))
    assert body_of(lines) == command and course.sandbox.approval.MIXED_SCRIPTS not in " ".join(lines)


def test_a_person_sees_a_look_alike_letter_escaped_and_named(terminal, tmp_path):
    """A command, then a file tool's call, each naming a file with a Cyrillic і: the screen shows it as its
    escape in the call and by its name in the reasons."""
    workspace = run_stage_in_the_terminal(terminal, tmp_path, [TIDY, ["delete_file", {"path": "\u0456mportant.txt"}]])
    for tool, shown_as in (("run_command", "python3 t\\u0456dy.py memo.md"), ("delete_file", 'path: "\\u0456mportant.txt"')):
        shown = screen_until(terminal, shown_as)
        question = shown[shown.rindex(f"? {tool}"):]
        body = "".join(line[len(course.sandbox.approval.MARGIN):] for line in question.splitlines()
                       if line.startswith(course.sandbox.approval.MARGIN))
        assert shown_as in body and "\u0456" not in body
        said = " ".join(line.strip() for line in question.splitlines())
        assert "CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I, not i" in said, said
        screen_until(terminal, "allow [o]nce")
        terminal("send-keys", "-t", "stage", "n", "Enter")
    shown = screen_until(terminal, "RESULT")
    assert "RESULT [[false, true], [false, true]]" in shown and (workspace / "important.txt").exists()
