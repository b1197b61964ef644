"""Offline models that misbehave the way real models were measured to misbehave.

Each one wraps the tutor and changes one thing, so that the difference between a passing and a
failing run is the misbehaviour and nothing else.
"""

from __future__ import annotations

from course.offline.behaviours import Reply
from course.offline.conversation import Conversation
from course.offline.tutor import tutor


def looping(conversation: Conversation) -> Reply:
    """In "An AI agent is a while loop inside", qwen2.5-coder:1.5b at temperature 0 listed the files
    and wrote report.txt correctly on turn 2, then sent the same write_file call, with the same
    arguments, on every turn until the loop's MAX_TURNS guard fired at turn 8. A loop without a
    stop condition would have run forever.

    Here: the tutor's first two tool-calling turns (the task starts correctly), then the last
    call again, forever, each time with a sentence of (misplaced) reasoning.
    """
    reply = tutor(conversation)
    tool_turns = [turn for turn in conversation.turns if turn]
    wants_a_tool = any(block["type"] == "tool_use" for block in reply.blocks)
    if not tool_turns or (len(tool_turns) < 2 and wants_a_tool):
        return reply
    last = tool_turns[-1][-1]
    return Reply().text(conversation.say(
        f"Let me run {last.name} again to make sure it worked.",
        f"うまくいったか確かめるため、もう一度 {last.name} を実行します。",
    )).call(last.name, **last.input)


def refusing(conversation: Conversation) -> Reply:
    """The API's ``refusal`` stop reason ("Claude declined to respond", in the API's stop-reason
    guide): the reply ends with stop_reason "refusal" instead of doing the task. A harness must
    not treat it as an answer, and must not loop on it.
    """
    return Reply(stop_reason="refusal").text(conversation.say(
        "I can't help with that request.", "そのご依頼にはお応えできません。"))
