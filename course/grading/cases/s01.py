"""s01's exercises: the cases drawn for each, what the child runs for one, and how its answer is judged."""

from __future__ import annotations

import random

from course.grading.cases.common import *  # noqa: F403


@probe("s01", 1)
class S01ToolCalls:
    def cases(rng):
        cases = []
        for _ in range(4):
            blocks = []
            for _ in range(rng.randint(1, 5)):
                if rng.random() < 0.4:
                    blocks.append({"type": "text", "text": text(rng, 3)})
                else:
                    blocks.append({"type": "tool_use", "id": tool_id(rng), "name": "read_file",
                                   "input": {"path": filename(rng)}})
            calls = sum(block["type"] == "tool_use" for block in blocks)
            cases.append(Case(f"a reply of {len(blocks)} blocks, {calls} of them tool_use", "finds calls", {"blocks": blocks}))
        return cases

    def drive(module, params, work):
        try:
            found = module.tool_calls(sdk_message(params["blocks"]))
            return [getattr(block, "id", repr(block)) for block in found]
        except BaseException as error:
            return raised(error)

    def judge(case, got, want):
        return observed_error(got) or same(got, want)


def run_observation(result: dict) -> dict:
    messages = result["messages"]
    return {"turns": result["turns"], "answer": result["answer"], "stop_reason": result["stop_reason"],
            "roles": [message["role"] for message in messages],
            "answered": [[block.get("tool_use_id") for block in message["content"]] for message in messages
                         if message["role"] == "user" and isinstance(message["content"], list)]}


@probe("s01", 2)
class S01Loop:
    def cases(rng):
        cases = []
        for _ in range(3):
            files = {filename(rng): text(rng) for _ in range(3)}
            turns = plan_turns(rng, files)
            cases.append(Case(f"a run of {len(turns)} replies", "loops", {"files": files, "turns": turns,
                                                                          "task": f"Tell me about {word(rng)}"}))
        return cases

    def drive(module, params, work):
        workspace = make_workspace(work, params["files"])
        try:
            result = module.run(params["task"], client=scripted_client(params["turns"]), workspace=workspace)
            return run_observation(result)
        except BaseException as error:
            return raised(error)

    def judge(case, got, want):
        return observed_error(got) or same(got, want)


# Every draw holds a reply whose content is a string, a history that ends on calls, and a call answered only in a later message (one user message too late, beside the results
# of the calls made since): it is still unanswered, as the contract says "in the message right after".
@probe("s01", 3, uses_reference=False, module="extension")
class S01Unanswered:
    def cases(rng):
        cases = []
        for index in range(5):
            messages, missing, late = [{"role": "user", "content": f"Task {word(rng)}"}], [], []
            if index == 2:  # a reply of plain text, as a string: it has no blocks, so no calls
                messages += [{"role": "assistant", "content": text(rng)}, {"role": "user", "content": text(rng)}]
            turns = rng.randint(2, 4) if index in (1, 3, 4) else rng.randint(1, 4)
            for turn in range(turns):
                ids = [tool_id(rng) for _ in range(rng.randint(1, 3))]
                messages.append({"role": "assistant", "content": [{"type": "text", "text": "why"}] + [
                    {"type": "tool_use", "id": ident, "name": "read_file", "input": {"path": filename(rng)}} for ident in ids]})
                answered = [ident for ident in ids if rng.random() < 0.7 or index == 0]
                if turn in (0, turns - 1) and index == 4:
                    answered = []  # no result message: the next assistant message follows, or the history ends
                if turn == 0 and index in (1, 3):
                    answered = ids[1:]  # the first call's result comes only in a later message
                missing += [ident for ident in ids if ident not in answered]
                results = list(reversed(answered)) + late
                rng.shuffle(results)
                late = [ident for ident in ids if ident not in answered] if index in (1, 3) else []
                if results:
                    messages.append({"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": ident, "content": "ok"} for ident in results]})
            cases.append(Case(f"a history of {len(messages)} messages, {len(missing)} calls unanswered", "finds",
                              {"messages": messages}, missing))
        return cases

    def drive(module, params, work):
        try:
            return list(module.unanswered(params["messages"]))
        except BaseException as error:
            return raised(error)

    def judge(case, got, want):
        return observed_error(got) or same(got, case.expected)
