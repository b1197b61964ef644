"""Offline models that fail the way a real small local model was measured to fail.

Where it was measured: Gemma 3 270M, the base model, served by llama.cpp behind an
Anthropic-compatible endpoint (``ANTHROPIC_BASE_URL``), at temperature 0; 72 runs of s01, s03, s04
and s06 on three sample tasks, 103 model calls. A base model has no chat or tool training, so
these are the failures a learner meets when a local model, or its chat template, does not support
tools. What came back, and the model that reproduces each:

* ``offline-echo``: the prompt copied back until ``max_tokens`` (62 of the 103 calls were cut at
  1,024 tokens);
* ``offline-ramble`` and ``offline-ramble-text``: one complete, valid call, then more text
  until the cut (written as JSON text, as a model without tool support writes it; or as a
  ``tool_use`` block, as a server that parses calls out of the text returns it);
* ``offline-stubborn``: a failing call sent again, identical, whatever the error said (s04's
  "nearest existing names" was never used);
* ``offline-borrowing``: a file name taken from an example in the prompt instead of from the task,
  and a tool result repeated back as the answer.

Each one is a pure function of the request, like every offline model. None of them knows which
stage sent the request; each reproduces the measured behaviour and nothing else, so that what a
stage does with it is the stage's own outcome.
"""

from __future__ import annotations

import re
from dataclasses import replace

from course.offline.behaviours import Reply
from course.offline.conversation import Conversation
from course.offline.faulty_callers import file_to_misspell, misspell, note, notes_in, results_written_back, written_call
from course.offline.tutor import FILE_NAME, tutor


# ---------------------------------------------------------------- offline-echo

def prompt_text(c: Conversation) -> str:
    """What a chat template puts before the model's turn: the system prompt, then the latest user text."""
    latest = c.last_user_text or c.task
    return "\n\n".join(part for part in (c.system, latest) if part.strip())


def echo(c: Conversation) -> Reply:
    """Copies its prompt back, over and over, until the reply is cut at ``max_tokens``.

    Measured: Gemma 3 270M (base) copied its prompt back until the cut; 62 of its 103 calls were
    cut at 1,024 tokens. A base model continues the text it is given, and with no chat training
    the likeliest continuation of a prompt is more of it. s01 returned the copy as its answer;
    s03 to s06 stopped at ``max_tokens`` and advised raising MAX_TOKENS, which buys more copying.

    Here: the system prompt and the latest user text (the task, on the first turn), repeated
    until the reply is longer than ``max_tokens``; the offline model then cuts it, as the server
    did. A simplification, said plainly: these copies are exact and always of the same two
    parts; a real model's copy need not be.
    """
    prompt = prompt_text(c) or "(empty prompt)"
    copies = 1 + (c.max_tokens * 4) // max(len(prompt.encode("utf-8")), 1)
    return Reply().text("\n\n".join([prompt] * (copies + 1)))


# ---------------------------------------------------------------- offline-ramble, offline-ramble-text

def ramble(c: Conversation, name: str) -> str:
    """What came after the call: the model going on as if the tool had answered, sentence after
    sentence, until the budget ran out. It holds no brace, so no second call can be read into it,
    and nothing copied from the prompt: it is not an echo."""
    sentence = c.say(f"The {name} tool returns its result, and then I look at the result and think about "
                     "what it means for the task, and then I continue with the next step. ",
                     f"{name} の結果が返ってきたら、その結果を見て、次に何をするかを考えて、続けます。")
    return sentence * (1 + (c.max_tokens * 4) // len(sentence.encode("utf-8")))


def first_call_then_ramble(c: Conversation, plan: Reply) -> Reply:
    """The plan's reasoning and its first tool_use, complete, then a text block that runs past the cut."""
    calls = [block for block in plan.blocks if block["type"] == "tool_use"]
    reply = Reply()
    reply.blocks = [dict(block) for block in plan.blocks if block["type"] == "text"]
    reply.blocks.append(dict(calls[0]))
    return reply.text(ramble(c, calls[0]["name"]))


def rambling(c: Conversation) -> Reply:
    """Writes one complete call as a ``tool_use`` block, then keeps writing until cut at ``max_tokens``.

    Measured (see ``rambling_text``): one complete, valid call, then text until the cut. This is the
    same reply as a server that parses tool calls out of a model's text returns it: a complete
    ``tool_use`` block, then a text block cut at ``max_tokens``, and ``stop_reason: "max_tokens"``.

    Here: the tutor's plan, cut down to its reasoning and its first call, then ``ramble``. Its
    final answer, with no call to write past, ends normally: the row of the ladder asks whether a
    harness runs a cut reply's complete call, and nothing else.
    """
    plan = tutor(c)
    if not any(block["type"] == "tool_use" for block in plan.blocks):
        return plan
    return first_call_then_ramble(c, plan)


def rambling_text(c: Conversation) -> Reply:
    """Writes one complete call as JSON text, then keeps writing until cut at ``max_tokens``.

    Measured: Gemma 3 270M (base) wrote one complete, valid call and then went on until the cut;
    s03 to s06 refused to run it, since the reply was cut (s04's recovery of calls written as text
    never saw it: the ``max_tokens`` check comes first).

    Here: the tutor's first call of each turn, written as one JSON object on a line of its own
    after the reasoning, then ``ramble``, cut by the offline model. It reads the results a
    harness writes back as text ("Result of NAME ARGS ...:"), and, like ``offline-text-calls``,
    notes the results it has read at the top of its reply ("Noted: ..."), since an offline model
    is handed only the last user message's text (see ``faulty_callers.text_calls``). Its final
    answer ends normally.
    """
    noted = notes_in(c.assistant_texts[-1] if c.assistant_texts else "")
    latest = results_written_back(c.last_user_text)
    plan = tutor(replace(c, turns=[[call] for call in noted] + ([latest] if latest else [])))
    calls = [block for block in plan.blocks if block["type"] == "tool_use"]
    reasoning = " ".join(block["text"] for block in plan.blocks if block["type"] == "text").strip()
    if not calls:
        return Reply(stop_reason=plan.stop_reason).text(reasoning)
    lines = [note(c, call) for call in noted + latest]
    lines += [reasoning, written_call(calls[0]["name"], calls[0]["input"]), "", ramble(c, calls[0]["name"])]
    return Reply().text("\n".join(lines))


# ---------------------------------------------------------------- offline-stubborn

def stubborn(c: Conversation) -> Reply:
    """Asks for a misspelled file, and sends the same failing call again whatever the error says.

    Measured: Gemma 3 270M (base) asked for files that did not exist and never used the hint of
    s04's errors ("nearest existing names: ..."); every offline model the course had before
    recovered from a good error, so the course never showed a model that does not.

    Here: the slip of ``offline-typo`` (the first file the task names, two letters swapped), in
    the call and in the sentence before it. After a failed call, whatever the error says, the
    same call again, to the letter. Tasks that name no file are done as the tutor does them.
    """
    failed = c.failed_last_turn
    if failed:
        reply = Reply().text(c.say(f"Let me run {failed[0].name} again.", f"もう一度 {failed[0].name} を実行します。"))
        for call in failed:
            reply.call(call.name, **call.input)
        return reply
    target = file_to_misspell(c.task)
    plan = tutor(c)
    if target is None:
        return plan
    wrong = misspell(target)
    reply = Reply(stop_reason=plan.stop_reason)
    for block in plan.blocks:
        if block["type"] == "text":
            reply.text(block["text"].replace(target, wrong))
        else:
            arguments = block["input"]
            reply.call(block["name"], **(dict(arguments, path=wrong) if arguments.get("path") == target else arguments))
    return reply


# ---------------------------------------------------------------- offline-borrowing

EXAMPLE = re.compile(r"e\.g\.,?\s*['\"`]([^'\"`]+)['\"`]")


def example_path(tool: dict) -> str | None:
    """The example file name in the description of a tool's ``path`` parameter ("e.g. 'memo.md'")."""
    schema = tool.get("input_schema") or {}
    described = ((schema.get("properties") or {}).get("path") or {}).get("description") or ""
    found = EXAMPLE.search(described)
    return found.group(1) if found and FILE_NAME.fullmatch(found.group(1)) else None


def borrowing(c: Conversation) -> Reply:
    """Takes a file name from an example in the prompt, and repeats a tool result back as its answer.

    Measured: Gemma 3 270M (base) wrote a file name or an answer it had read in an example of the
    prompt instead of the one the task gave, and, handed a tool result, wrote the result back as
    text instead of answering. The stages' tool descriptions hold such examples ("File relative
    to the workspace, e.g. 'memo.md'"), as good tool descriptions do.

    Here: the tutor's first calls, with every file the task names replaced by the example file
    name of the tool's ``path`` parameter, where it has one (it meant the task's file: its
    sentence still says so). Once a result is in, it writes that result back, word for word, and
    ends its turn. Nothing fails and no error is raised: the run ends normally, with the wrong
    answer.
    """
    last_turn = c.turns[-1] if c.turns else []
    answered = [call for call in last_turn if call.result is not None]
    if answered:
        return Reply().text("\n".join(call.result for call in answered))
    named = set(FILE_NAME.findall(c.task))
    examples = {tool.get("name"): example_path(tool) for tool in c.tool_table}
    plan = tutor(c)
    reply = Reply(stop_reason=plan.stop_reason)
    for block in plan.blocks:
        if block["type"] == "tool_use" and block["input"].get("path") in named and examples.get(block["name"]):
            reply.call(block["name"], **dict(block["input"], path=examples[block["name"]]))
        else:
            reply.blocks.append(dict(block))
    return reply
