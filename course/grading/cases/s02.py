"""s02's exercises: the cases drawn for each, what the child runs for one, and how its answer is judged."""

from __future__ import annotations

import random

from course.grading.cases.common import *  # noqa: F403


@probe("s02", 1)
class S02CarryOn:
    def cases(rng):
        return [Case(f"carry on {times} time(s)", "records", {"times": times}) for times in (1, rng.randint(2, 6))]

    def drive(module, params, work):
        traced = []
        state = module.LoopState(messages=[{"role": "user", "content": "task"}])
        try:
            returned = [module.carry_on(state, "tool_results_written", lambda kind, payload: traced.append([kind, payload]))
                        for _ in range(params["times"])]
        except BaseException as error:
            return raised(error)
        return {"returned": returned, "reason": state.transition_reason, "transitions": list(state.transitions),
                "traced": traced}

    def judge(case, got, want):
        return observed_error(got) or same(got, want)


@probe("s02", 2)
class S02Loop:
    def cases(rng):
        cases = []
        for _ in range(2):
            files = {filename(rng): text(rng) for _ in range(3)}
            turns = plan_turns(rng, files)
            cases.append(Case(f"a run of {len(turns)} replies", "loops", {"files": files, "turns": turns,
                                                                          "task": f"Count the {word(rng)}"}))
        return cases

    def drive(module, params, work):
        workspace = make_workspace(work, params["files"])
        transcript = work / f"transcript-{workspace.name}.jsonl"
        try:
            result = module.run(params["task"], client=scripted_client(params["turns"]), workspace=workspace,
                                transcript=transcript)
            records = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines() if line.strip()]
        except BaseException as error:
            return raised(error)
        return {"turns": result.turns, "answer": result.answer, "stop_reason": result.stop_reason,
                "transitions": list(result.transitions),
                "saved": [[record["turn"], record["stop_reason"]] for record in records]}  # a line per turn

    def judge(case, got, want):
        return observed_error(got) or same(got, want)


@probe("s02", 3)
class S02Interrupted:
    def cases(rng):
        cases = []
        for count in (rng.randint(1, 4), 0):
            content = [{"type": "text", "text": "why"}] + [
                {"type": "tool_use", "id": tool_id(rng), "name": "write_file",
                 "input": {"path": filename(rng), "content": text(rng)}} for _ in range(count)]
            cases.append(Case(f"a killed run with {count} call(s) unanswered", "answers",
                              {"messages": [{"role": "user", "content": "task"}, {"role": "assistant", "content": content}],
                               "stop_reason": None if count else "end_turn"}))
        return cases

    def drive(module, params, work):
        # the history is counted before the call: the function appends to the very list it was given
        before = len(params["messages"])
        state = module.LoopState(messages=params["messages"])
        try:
            module.answer_interrupted_calls(state, params["stop_reason"])
        except BaseException as error:
            return ["raised", type(error).__name__, state.messages[before:]]  # and the history left as it was
        return state.messages[before:]

    def judge(case, got, want):
        return same(got, want)


@probe("s02", 4, uses_reference=False, module="extension")
class S02History:
    def cases(rng):
        cases = []
        for _ in range(4):
            history, records = [], []
            for _ in range(rng.randint(1, 6)):
                added = [{"role": rng.choice(["user", "assistant"]), "content": text(rng, 2)} for _ in range(rng.randint(0, 3))]
                start = len(history) if rng.random() < 0.7 or not history else rng.randint(0, len(history))
                records.append({"turn": len(records), "from": start, "messages": added})
                history = history[:start] + added
            cases.append(Case(f"a transcript of {len(records)} lines", "rebuilds", {"records": records}, history))
        return cases

    def drive(module, params, work):
        try:
            return module.history(params["records"])
        except BaseException as error:
            return raised(error)

    def judge(case, got, want):
        return observed_error(got) or same(got, case.expected)
