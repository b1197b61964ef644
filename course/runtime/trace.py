"""The trace printer: what a stage's command line shows while the loop runs.

A stage's loop reports what happens through one optional callback, ``trace(kind, payload)``, so
the loop itself never prints. The kinds:

* ``"assistant"``: the assistant message just added to the history;
* ``"tool_results"``: the user message of tool results just added to the history;
* ``"transition"``: why the loop goes on (from s02);
* ``"stop"``: why the loop ended, in one line (from s03);
* ``"usage"``: the ``usage`` of the reply just recorded (from s05): the call's tokens, split into
  those read from the prompt cache, those written to it, and the rest (``input_tokens``);
* ``"resumed"``: the state of a run loaded from its transcript (from s02), with its ``turn_count``,
  ``usage`` and ``transcript``: the trace numbers the next turn after the last one taken, and adds
  the next calls' tokens to those the run had sent;
* ``"note"``: anything else worth a line (pruning, a gate decision...).
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata

SHOWN_RESULT = 160  # characters of a tool result shown in the trace

# What a terminal obeys rather than shows: C0 controls but newline and tab, ESC, DEL, C1 (U+0080-U+009F,
# U+009B is a one-byte CSI), the bidirectional controls and the line and paragraph separators. Text a
# model or a tool wrote, printed raw, can draw a fake approval question and conceal (ESC[8m) the real one.
TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
# What a terminal draws as its font likes: private-use code points (icon fonts put arrows and check marks
# there) and code points this Python's Unicode has not assigned (a newer terminal may draw them, or not).
DRAWN_AS_IT_LIKES = ("Co", "Cn")
# What a terminal draws as nothing: format characters (category Cf) such as U+FEFF and the tag characters
# U+E0020-U+E007F, which can carry a whole sentence past a reader unseen (written in tags, an instruction
# reads as nothing at all). The two joiners stay as they are: emoji sequences and scripts such as Persian
# need them, and they hide no text of their own.
JOINERS = {"\u200c", "\u200d"}


def escape_terminal_controls(text) -> str:
    """``text`` shown as data: every character a terminal would obey (see TERMINAL_CONTROLS), every
    private-use or unassigned one and every format character but the joiners, written as a visible
    escape, \\x1b or \\u202e; newlines and tabs kept.
    Idempotent: its output has none left."""
    shown = TERMINAL_CONTROLS.sub(lambda found: escaped(found[0]), str(text))
    if shown.isascii():  # the usual case, at no cost
        return shown
    return "".join(escaped(character) if _drawn_unseen(character) else character for character in shown)


def _drawn_unseen(character: str) -> bool:
    category = unicodedata.category(character)
    return category in DRAWN_AS_IT_LIKES or (category == "Cf" and character not in JOINERS)


def escaped(character: str) -> str:
    """One character as its escape: \\x1b, \\u202e, \\U000f0000."""
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def shorten(text: str, limit: int = SHOWN_RESULT) -> str:
    shown = escape_terminal_controls(text)  # before splitlines(), which would take \x1c or U+2028 as line breaks
    flat = " ⏎ ".join(line.strip() for line in shown.strip().splitlines() if line.strip())
    return flat if len(flat) <= limit else f"{flat[:limit]}… ({len(str(text))} chars)"


def readable(content: str) -> str:
    """A structured result (s04 on) as a person reads it; any other text as it is."""
    try:
        result = json.loads(content)
    except ValueError:
        return content
    if not isinstance(result, dict) or "ok" not in result:
        return content
    if result["ok"]:
        return str(result.get("output", ""))
    return f"{result.get('error')}: {result.get('message')} (hint: {result.get('hint')})"


class TracePrinter:
    """Prints a readable turn-by-turn trace. Callable, so it can be passed as ``trace=``."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stdout
        self.turn = 0
        self.names: dict[str, str] = {}
        self.prompt_tokens_sent = 0  # every input token of the calls shown so far, cached or not

    def line(self, text: str = "") -> None:
        """One line of the trace. Whatever a model or a tool wrote in it is shown as data, never obeyed."""
        print(escape_terminal_controls(text), file=self.stream, flush=True)

    def __call__(self, kind: str, payload) -> None:
        getattr(self, f"show_{kind}", self.show_note)(payload)

    def show_assistant(self, message: dict) -> None:
        self.turn += 1
        self.line(f"── turn {self.turn} · model")
        for block in message["content"]:
            if block["type"] == "text" and block["text"].strip():
                for text_line in escape_terminal_controls(block["text"]).strip().splitlines():
                    self.line(f"   {text_line}")
            elif block["type"] == "tool_use":
                self.names[block["id"]] = block["name"]
                arguments = json.dumps(block["input"], ensure_ascii=False)
                self.line(f"   → {block['name']}({shorten(arguments, 200)})")

    def show_tool_results(self, message_or_blocks) -> None:
        blocks = message_or_blocks["content"] if isinstance(message_or_blocks, dict) else message_or_blocks
        for block in blocks:
            if block.get("type") != "tool_result":
                if block.get("type") == "text":
                    self.line(f"   ✎ note to the model: {shorten(block['text'])}")
                continue
            name = self.names.get(block["tool_use_id"], "tool")
            mark = "✗" if block.get("is_error") else "←"
            content = block.get("content", "")
            if isinstance(content, list):
                content = " ".join(part.get("text", "") for part in content)
            self.line(f"   {mark} {name}: {shorten(readable(content))}")

    def show_transition(self, reason) -> None:
        self.line(f"   ↻ continue: {reason}")

    def show_stop(self, explanation) -> None:
        self.line(f"■ stop: {explanation}")

    def show_usage(self, usage) -> None:
        read = getattr(usage, "cache_read_input_tokens", None) or 0
        written = getattr(usage, "cache_creation_input_tokens", None) or 0
        self.prompt_tokens_sent += usage.input_tokens + read + written
        self.line(f"   · tokens: {usage.input_tokens:,} uncached + {read:,} read from the cache + {written:,} "
                  f"written to it in, {usage.output_tokens:,} out; {self.prompt_tokens_sent:,} input tokens sent so far")

    def show_resumed(self, state) -> None:
        """A run resumed from its transcript (s02 on): turns and tokens go on from where it stopped."""
        self.turn = state.turn_count
        usage = state.usage
        self.prompt_tokens_sent = (usage.get("input_tokens", 0) + usage.get("cache_read_input_tokens", 0)
                                   + usage.get("cache_creation_input_tokens", 0))
        name = state.transcript.stem if state.transcript else "(unsaved)"
        self.line(f"   · resuming run {name} after turn {state.turn_count}")

    def show_note(self, text) -> None:
        self.line(f"   · {text}")
