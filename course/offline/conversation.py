"""How an offline behaviour reads a request: the task, the tools offered, and what happened so far.

A real model sees nothing but the request, so an offline behaviour sees nothing else either: it
is a pure function of this reading. Nothing here is remembered between calls.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


@dataclass
class Call:
    """One tool call the model made, and the result written back for it (None if not yet)."""

    name: str
    input: dict
    result: str | None = None
    is_error: bool = False

    @property
    def failed(self) -> bool:
        """An error result, whether flagged with is_error or only said in words."""
        if self.is_error:
            return True
        text = (self.result or "").lstrip().lower()
        return text.startswith(("error", "unknown tool", "エラー"))


@dataclass
class Conversation:
    task: str
    tools: list[str]
    turns: list[list[Call]] = field(default_factory=list)  # the calls of each assistant reply
    assistant_texts: list[str] = field(default_factory=list)
    last_user_text: str = ""
    system: str = ""
    max_tokens: int = 1024
    tool_table: list[dict] = field(default_factory=list)  # the tools as sent: names, descriptions, schemas
    thinking: dict | None = None  # the request's thinking parameter: a model thinks only when asked to

    @property
    def japanese(self) -> bool:
        return bool(JAPANESE.search(self.task))

    @property
    def calls(self) -> list[Call]:
        return [call for turn in self.turns for call in turn]

    def results_of(self, name: str) -> list[Call]:
        return [call for call in self.calls if call.name == name and call.result is not None]

    @property
    def failed_last_turn(self) -> list[Call]:
        """The calls of the latest reply whose results came back as errors."""
        return [call for call in (self.turns[-1] if self.turns else []) if call.result is not None and call.failed]

    def last_call(self) -> Call | None:
        calls = self.calls
        return calls[-1] if calls else None

    def say(self, english: str, japanese: str) -> str:
        """Answer in the language of the task."""
        return japanese if self.japanese else english


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
    return "\n".join(parts)


def read_request(body: dict) -> Conversation:
    messages = body["messages"]
    system = body.get("system") or ""
    conversation = Conversation(
        task=_text_of(messages[0]["content"]),
        tools=[tool["name"] for tool in body.get("tools") or []],
        system=system if isinstance(system, str) else _text_of(system),
        max_tokens=body.get("max_tokens", 1024),
        tool_table=list(body.get("tools") or []),
        thinking=body.get("thinking") if isinstance(body.get("thinking"), dict) else None,
    )
    pending: dict[str, Call] = {}
    for message in messages[1:]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if message["role"] == "assistant":
            turn = []
            for block in blocks:
                if block.get("type") == "tool_use":
                    call = Call(block["name"], block.get("input") or {})
                    pending[block["id"]] = call
                    turn.append(call)
                elif block.get("type") == "text":
                    conversation.assistant_texts.append(block.get("text", ""))
            conversation.turns.append(turn)
        else:
            for block in blocks:
                if block.get("type") == "tool_result" and block.get("tool_use_id") in pending:
                    call = pending.pop(block["tool_use_id"])
                    call.result, failed = read_result(_text_of(block.get("content", "")))
                    call.is_error = bool(block.get("is_error")) or failed
    conversation.last_user_text = _text_of(messages[-1]["content"]) if messages[-1]["role"] == "user" else ""
    return conversation


def read_result(text: str) -> tuple[str, bool]:
    """A tool result as a model reads it: (what it says, whether it reports a failure).

    A structured result, ``{"ok": true, "output": ...}`` (stage s04 on), is read as its output;
    ``{"ok": false, ...}`` stays whole, since its message and hint are what a model acts on.
    """
    try:
        value = json.loads(text)
    except ValueError:
        return text, False
    if isinstance(value, dict) and "ok" in value:
        if value["ok"]:
            return str(value.get("output", "")), False
        return text, True
    return text, False


def parse_listing(text: str) -> list[str]:
    """File names from a list_files result: a JSON list, or one name a line."""
    text = (text or "").strip()
    try:
        value = json.loads(text)
        if isinstance(value, list):
            return [str(name) for name in value]
        if isinstance(value, dict) and isinstance(value.get("files"), list):
            return [str(name) for name in value["files"]]
    except ValueError:
        pass
    return [line.strip().lstrip("-* ").strip() for line in text.splitlines() if line.strip()]
