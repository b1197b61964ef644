"""s05's exercises: the cases drawn for each, what the child runs for one, and how its answer is judged."""

from __future__ import annotations

import random

from course.grading.cases.common import *  # noqa: F403


def tool_history(rng: random.Random, turns: int, masked: set = frozenset()) -> list[dict]:
    messages = [{"role": "user", "content": f"Study {word(rng)}"}]
    for index in range(turns):
        ident = tool_id(rng)
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "why"}, {
            "type": "tool_use", "id": ident, "name": rng.choice(["read_file", "search_files"]), "input": {"path": filename(rng)}}]})
        content = ("[masked to save context: earlier]" if index in masked else text(rng, rng.randint(20, 200)))
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": ident, "content": content}]})
    return messages


# The threshold's group holds a case under it and one over it (a drawn threshold, far above what the
# history frees), so that neither a fixed threshold nor "never mask" passes it.
@probe("s05", 1, groups=("masks the old ones", "masks only when enough is freed"))
class S05Mask:
    def cases(rng):
        cases = []
        # Every draw also holds the bounds: more to keep than there are results (nothing is old), and an
        # at_least exactly what masking would free (the driver adds it up: enough, so it masks).
        for index in range(7):
            turns, keep = rng.randint(3, 8), rng.randint(1, 3)
            if index == 5:
                keep = turns + rng.randint(2, 3)
            masked = {rng.randrange(0, max(turns - keep, 1))} if index == 2 else set()
            at_least = {3: rng.randint(20_000, 10**6), 4: rng.randint(1, 20), 6: "exactly what is freed"}.get(index, 0)
            group = "masks only when enough is freed" if index in (3, 4, 6) else "masks the old ones"
            cases.append(Case(f"{turns} results, keep {keep}, at_least {at_least}", group,
                              {"messages": tool_history(rng, turns, masked), "keep": keep, "at_least": at_least}))
        return cases

    def drive(module, params, work):
        messages = json.loads(json.dumps(params["messages"]))
        try:
            at_least = params["at_least"]
            if isinstance(at_least, str):  # the tokens of the results older than the kept ones, none masked yet
                results = [block for message in messages if message["role"] == "user" and isinstance(message["content"], list)
                           for block in message["content"] if block.get("type") == "tool_result"]
                at_least = sum(module.estimate_tokens(block["content"]) for block in results[:max(len(results) - params["keep"], 0)])
            count = module.mask_old_results(messages, params["keep"], at_least)
        except BaseException as error:
            return raised(error)
        return {"count": count, "messages": messages}

    def judge(case, got, want):
        if problem := observed_error(got):
            return problem
        if got.get("count") != want["count"]:
            return f"expected {want['count']} masked, got {shown(got.get('count'))}"
        original = case.params["messages"]
        if [m["role"] for m in got["messages"]] != [m["role"] for m in original]:
            return "the history must keep every message"
        for before, after, right in zip(original, got["messages"], want["messages"]):
            if before["role"] == "assistant" and after != before:
                return "the assistant messages (the tool_use blocks) must not change"
            if before["role"] != "user" or isinstance(before["content"], str):
                continue
            if not isinstance(after["content"], list) or len(after["content"]) != len(before["content"]):
                return "each tool_result block must stay, with its tool_use_id"
            for b, a, r in zip(before["content"], after["content"], right["content"]):
                if a.get("tool_use_id") != b["tool_use_id"] or a.get("type") != "tool_result":
                    return "each tool_result block must stay, with its tool_use_id"
                if (r["content"] == b["content"]) != (a.get("content") == b["content"]):
                    return (f"the result of {b['tool_use_id']} should be "
                            + ("left whole" if r["content"] == b["content"] else "masked"))
                if r["content"] != b["content"] and not (isinstance(a.get("content"), str) and len(a["content"]) < len(b["content"])):
                    return "a masked result must be a shorter text"
        return None


# Each group holds a history to fold and one to keep: neither "always fold" nor "never fold" passes one.
@probe("s05", 2, groups=("by the summary's ending", "by the history's length"))
class S05Summary:
    def cases(rng):
        cases = []
        for index, turns in enumerate((rng.randint(9, 14), rng.randint(9, 14), rng.randint(1, 3), rng.randint(9, 14))):
            stop = "max_tokens" if index == 1 else "end_turn"
            group = "by the summary's ending" if index < 2 else "by the history's length"
            cases.append(Case(f"{turns} turns, the summary ends with {stop}", group,
                              {"messages": tool_history(rng, turns), "summary": text(rng, 8), "stop": stop}))
        return cases

    def drive(module, params, work):
        import course
        from course.offline import Reply
        client = course.make_client(behaviour=lambda body: Reply([{"type": "text", "text": params["summary"]}],
                                                                 stop_reason=params["stop"]), max_retries=0)
        state = module.LoopState(messages=json.loads(json.dumps(params["messages"])))
        try:
            folded = module.summarise_old_turns(state, client, "offline")
        except BaseException as error:
            return raised(error)
        return {"folded": folded, "messages": state.messages}

    def judge(case, got, want):
        if problem := observed_error(got):
            return problem
        if got.get("folded") != want["folded"]:
            return f"expected {want['folded']} (whether the turns were folded), got {shown(got.get('folded'))}"
        if not want["folded"]:
            return None if got["messages"] == case.params["messages"] else "a history that is not folded must not change"
        messages = got["messages"]
        if messages[1:] != want["messages"][1:]:
            return f"the last turns must stay whole, each tool_use with its tool_result ({len(want['messages']) - 1} messages)"
        first = messages[0]
        content = first.get("content") if isinstance(first, dict) else None
        task = case.params["messages"][0]["content"]
        if first.get("role") != "user" or not isinstance(content, str) or task not in content or case.params["summary"] not in content:
            return "the first message must be a user message holding the task and the summary"
        return None


def pair_turn(rng: random.Random, calls: int) -> list[dict]:
    """One turn: an assistant message of ``calls`` tool_use blocks with drawn text blocks before, between or
    after them, and the user message that answers every call, in a drawn order. Tool results come first in
    a user message and text may follow them (https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls)."""
    uses = [{"type": "tool_use", "id": tool_id(rng), "name": rng.choice(["read_file", "search_files"]),
             "input": {"path": filename(rng)}} for _ in range(calls)]
    blocks = list(uses)
    for _ in range(rng.randint(0, 2)):
        blocks.insert(rng.randint(0, len(blocks)), {"type": "text", "text": text(rng, rng.randint(1, 4))})
    results = [{"type": "tool_result", "tool_use_id": use["id"], "content": text(rng, rng.randint(3, 30))} for use in uses]
    rng.shuffle(results)
    if rng.random() < 0.3:
        results.append({"type": "text", "text": text(rng, 3)})
    return [{"role": "assistant", "content": blocks}, {"role": "user", "content": results}]


def block_ids(message: dict, kind: str) -> list[str]:
    key, blocks = "id" if kind == "tool_use" else "tool_use_id", message["content"]
    return [block[key] for block in blocks if block["type"] == kind] if isinstance(blocks, list) else []


# A break is made in a drawn turn (the first, the last or one between) and leaves no mark of its own: the
# texts around it are drawn like every other, so only checking the pairs tells a broken history from an
# intact one. Each group holds an intact history and breaks of its kind in several shapes.
@probe("s05", 3, uses_reference=False, module="extension", groups=("calls with no result", "results with no call"))
class S05BrokenPairs:
    def cases(rng):
        def history(turns, calls=None):
            messages = [{"role": "user", "content": text(rng, 4)}]
            for _ in range(turns):
                messages += pair_turn(rng, calls or rng.randint(1, 3))
            if rng.random() < 0.5:  # the model's last answer, as a text or as a block
                answer = text(rng)
                messages.append({"role": "assistant", "content": rng.choice([answer, [{"type": "text", "text": answer}]])})
            return messages

        def turn(messages):  # the index of a drawn turn's assistant message
            return rng.choice([i for i, m in enumerate(messages) if m["role"] == "assistant" and block_ids(m, "tool_use")])

        def no_result(shape):
            messages = history(rng.randint(2, 5), calls=rng.randint(2, 3) if shape == "one result removed" else None)
            at = turn(messages)
            if shape == "one result removed":  # the others of its message stay
                results = messages[at + 1]["content"]
                gone = rng.choice([b for b in results if b["type"] == "tool_result"])
                results.remove(gone)
                return messages, [gone["tool_use_id"]]
            if shape == "the results replaced by a text":
                broken = block_ids(messages[at], "tool_use")
                messages[at + 1] = {"role": "user", "content": text(rng, rng.randint(2, 8))}
                return messages, broken
            if shape == "ends on its calls":
                while messages[-1]["role"] == "user" or not block_ids(messages[-1], "tool_use"):
                    messages.pop()
                return messages, block_ids(messages[-1], "tool_use")
            if shape == "two turns' results swapped":
                other = rng.choice([i for i, m in enumerate(messages) if m["role"] == "assistant" and block_ids(m, "tool_use") and i != at])
                messages[at + 1], messages[other + 1] = messages[other + 1], messages[at + 1]
                return messages, block_ids(messages[at], "tool_use") + block_ids(messages[other], "tool_use")
            return messages, []

        def no_call(shape):
            messages = history(rng.randint(2, 5))
            at = turn(messages)
            if shape == "one call removed":  # the message keeps its other blocks
                uses = messages[at]["content"]
                if len(uses) == 1:
                    uses.append({"type": "text", "text": text(rng, 3)})
                gone = rng.choice([b for b in uses if b["type"] == "tool_use"])
                uses.remove(gone)
                return messages, [gone["id"]]
            if shape == "begins with results":  # the history cut just after a turn's calls
                start = rng.choice([i for i, m in enumerate(messages) if m["role"] == "user" and block_ids(m, "tool_result")])
                messages = messages[start:]
                return messages, block_ids(messages[0], "tool_result")
            if shape == "the calls replaced by a text":
                broken = block_ids(messages[at + 1], "tool_result")
                messages[at] = {"role": "assistant", "content": rng.choice([text(rng), [{"type": "text", "text": text(rng)}]])}
                return messages, broken
            if shape == "two turns' calls swapped":
                other = rng.choice([i for i, m in enumerate(messages) if m["role"] == "assistant" and block_ids(m, "tool_use") and i != at])
                messages[at], messages[other] = messages[other], messages[at]
                return messages, block_ids(messages[at + 1], "tool_result") + block_ids(messages[other + 1], "tool_result")
            if shape == "a result for another id":
                result = rng.choice([b for b in messages[at + 1]["content"] if b["type"] == "tool_result"])
                lost, result["tool_use_id"] = result["tool_use_id"], tool_id(rng)
                return messages, [lost, result["tool_use_id"]]
            return messages, []

        cases = []
        for group, make, shapes in (
                ("calls with no result", no_result, ("intact", "one result removed", "the results replaced by a text",
                                                     "ends on its calls", "two turns' results swapped")),
                ("results with no call", no_call, ("intact", "one call removed", "begins with results",
                                                   "the calls replaced by a text", "two turns' calls swapped",
                                                   "a result for another id"))):
            for shape in shapes:
                messages, broken = make(shape)
                cases.append(Case(f"a history of {len(messages)} messages: {shape}", group, {"messages": messages},
                                  sorted(set(broken))))
        return cases

    def drive(module, params, work):
        try:
            return sorted(module.broken_pairs(params["messages"]))
        except BaseException as error:
            return raised(error)

    def judge(case, got, want):
        return observed_error(got) or same(got, case.expected)
