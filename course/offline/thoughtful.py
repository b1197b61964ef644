"""``offline-thinking``: a model that thinks, when the request turns thinking on, and reads files in parallel.

What it reproduces: Claude with extended or adaptive thinking in a tool loop
(https://platform.claude.com/docs/en/build-with-claude/extended-thinking). Each reply opens with a
``thinking`` block (its reasoning, signed by the offline API on the way out, ``thinking.py``); a
task that names several files gets one reply that reads them all at once (parallel ``read_file``
calls), with a ``redacted_thinking`` block between the calls, as interleaved thinking may place
one; once every named file has a result, it answers with what each file begins with. A harness
must send all of these blocks back unchanged with the tool results, or the offline API refuses the
request as the real one does.

It reads only the request: the files named in the task, and the results already in the history.
Without ``thinking`` in the request it thinks no more than a model asked not to: it is the tutor.
A task that names no file goes to the tutor too, its reply opened by a thinking block.
"""

from __future__ import annotations

import re

from course.offline.behaviours import Reply
from course.offline.conversation import Conversation
from course.offline.tutor import tutor

FILE_NAME = re.compile(r"(?<![\w./-])([\w-]+(?:/[\w-]+)*\.(?:md|txt|json|log|csv|py))\b")


def thinking_is_on(conversation: Conversation) -> bool:
    return (conversation.thinking or {}).get("type") in ("enabled", "adaptive")


def thoughtful(conversation: Conversation) -> Reply:
    if not thinking_is_on(conversation):
        return tutor(conversation)
    named = list(dict.fromkeys(FILE_NAME.findall(conversation.task)))
    if not named or "read_file" not in conversation.tools:
        plain = tutor(conversation)
        return Reply(blocks=[{"type": "thinking", "thinking": "The task names no file to read: I follow the usual steps."}]
                     + plain.blocks, stop_reason=plain.stop_reason)
    results = {call.input.get("path"): call for call in conversation.results_of("read_file")}
    unread = [name for name in named if name not in results]
    if unread:
        reply = Reply().think(f"The task names {len(named)} file(s): {', '.join(named)}. {len(unread)} still unread; "
                              "reading them in one reply saves a turn for each.")
        reply.text(conversation.say(f"I'll read {', '.join(unread)} at once.", f"{'、'.join(unread)} をまとめて読みます。"))
        for number, name in enumerate(unread):
            if number == 1:
                reply.redacted()  # interleaved thinking, encrypted: the harness sees only its data
            reply.call("read_file", path=name)
        return reply
    lines = []
    for name in named:
        call = results[name]
        first = (call.result or "").strip().splitlines()[0] if (call.result or "").strip() else "(empty)"
        lines.append(f"{name}: could not be read ({first})" if call.failed else
                     f"{name}: {len(call.result or '')} characters, beginning \"{first[:60]}\"")
    return (Reply().think(f"Every named file has a result ({len(named)}); I can answer from them.")
            .text(conversation.say("I read them all.\n", "すべて読みました。\n") + "\n".join(lines)))
