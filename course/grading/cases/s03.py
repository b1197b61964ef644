"""s03's exercises: the cases drawn for each, what the child runs for one, and how its answer is judged."""

from __future__ import annotations

import random

from course.grading.cases.common import *  # noqa: F403


@probe("s03", 1, groups=("turn limit", "token budget"))
class S03Limits:
    def cases(rng):
        cases = []
        turns = rng.randint(4, 60)
        budget = rng.randint(2_000, 90_000)
        for taken in (turns - 1, turns, turns + 1):
            cases.append(Case(f"{taken} turns taken, max_turns={turns}", "turn limit",
                              {"turns": taken, "max_turns": turns, "input": 10, "output": 5, "budget": budget}))
        for used in (budget - 1, budget, budget + rng.randint(1, 500)):
            output = rng.randint(max(1, used // 10), used // 3)
            cases.append(Case(f"{used - output} input + {output} output tokens, budget {budget}", "token budget",
                              {"turns": 1, "max_turns": turns + 5, "input": used - output, "output": output, "budget": budget}))
        cases.append(Case(f"both limits at once (max_turns={turns})", "turn limit",
                          {"turns": turns, "max_turns": turns, "input": budget, "output": 1, "budget": budget}))
        return cases

    def drive(module, params, work):
        state = module.LoopState(messages=[{"role": "user", "content": "task"}], turn_count=params["turns"],
                                 usage={"input_tokens": params["input"], "output_tokens": params["output"]})
        limits = module.Limits(max_turns=params["max_turns"], token_budget=params["budget"])
        try:
            found = module.limit_reached(state, limits)
        except BaseException as error:
            return raised(error)
        return None if found is None else list(found)

    def judge(case, got, want):
        if problem := observed_error(got):
            return problem
        if (got is None) != (want is None) or (got and got[0] != want[0]):
            return f"expected {shown(want[0] if want else None)}, got {shown(got[0] if got else None)}"
        if want:
            p = case.params
            numbers = ([p["turns"], p["max_turns"]] if want[0] == "max_turns" else [p["input"] + p["output"], p["budget"]])
            explanation = got[1] if len(got) > 1 and isinstance(got[1], str) else ""
            missing = [n for n in numbers if str(n) not in explanation]
            if missing:
                return f"the explanation should give {' and '.join(map(str, numbers))}: got {shown(explanation)}"
        return None


def call_history(turns: list[tuple[str, dict, bool]], rng: random.Random) -> list[dict]:
    messages = [{"role": "user", "content": "task"}]
    for name, arguments, failed in turns:
        ident = tool_id(rng)
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "why"},
                                                          {"type": "tool_use", "id": ident, "name": name, "input": arguments}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": ident, "is_error": failed,
                                                      "content": "failed" if failed else "ok"}]})
    return messages


@probe("s03", 2, groups=("repeated calls", "consecutive errors"))
class S03NoProgress:
    def cases(rng):
        repeats, errors = rng.randint(2, 6), rng.randint(2, 6)
        tool, path = word(rng), filename(rng)
        same_call = (tool, {"path": path}, False)
        other = lambda: (word(rng), {"path": filename(rng)}, False)  # noqa: E731
        failing = lambda: (word(rng), {"path": filename(rng)}, True)  # noqa: E731
        c = []
        c.append(Case(f"{tool}({path}) {repeats} times in a row, max_repeats={repeats}", "repeated calls",
                      [other(), *[same_call] * repeats]))
        c.append(Case(f"{tool}({path}) {repeats - 1} times, max_repeats={repeats}", "repeated calls",
                      [other(), *[same_call] * (repeats - 1)]))
        c.append(Case(f"{tool} {repeats} times with other arguments last, max_repeats={repeats}", "repeated calls",
                      [*[same_call] * (repeats - 1), (tool, {"path": filename(rng)}, False)]))
        c.append(Case(f"{errors} failures in a row, max_consecutive_errors={errors}", "consecutive errors",
                      [other(), *[failing() for _ in range(errors)]]))
        c.append(Case(f"{errors - 1} failures in a row after {errors} earlier ones", "consecutive errors",
                      [*[failing() for _ in range(errors)], other(), *[failing() for _ in range(errors - 1)]]))
        c.append(Case(f"{errors} failures with a success between", "consecutive errors",
                      [*[failing() for _ in range(errors - 1)], other(), failing()]))
        return [Case(case.name, case.group, {"messages": call_history(case.params, rng), "repeats": repeats,
                                              "errors": errors}, tool) for case in c]

    def drive(module, params, work):
        limits = module.Limits(max_repeats=params["repeats"], max_consecutive_errors=params["errors"])
        try:
            return module.no_progress(params["messages"], limits)
        except BaseException as error:
            return raised(error)

    def judge(case, got, want):
        if problem := observed_error(got):
            return problem
        if (got is None) != (want is None):
            return "expected no progress to be found" if want else f"expected progress, got {shown(got)}"
        if want and not (isinstance(got, str) and got.strip()):
            return f"expected a one-line explanation, got {shown(got)}"
        if want and "in a row" in want and "times" in want and case.expected not in got:
            return f"the explanation should name the call ({case.expected}): got {shown(got)}"
        return None


# The exercise asks for a cycle of any length of 2 or more: each group holds a short cycle (2 or 3 calls)
# and a longer one drawn from 4 to 7, each found and each missed, so neither a constant nor a check
# written for the short lengths only passes a group.
@probe("s03", 3, uses_reference=False, module="extension",
       groups=("a cycle of 2 and a longer one", "a cycle of 3 and a longer one"))
class S03Cycling:
    def cases(rng):
        cases = []
        rounds = rng.randint(2, 4)
        longer = rng.sample(range(4, 8), 2)

        def call():
            return [word(rng), json.dumps({"path": filename(rng)})]
        for short, long in zip((2, 3), longer):
            group = f"a cycle of {short} and a longer one"
            for period in (short, long):
                cycle = [call() for _ in range(period)]
                prefix = [call() for _ in range(rng.randint(0, 3))]
                cases.append(Case(f"a cycle of {period} calls, {rounds} rounds", group,
                                  {"calls": prefix + cycle * rounds, "rounds": rounds}, True))
                cases.append(Case(f"a cycle of {period} calls, {rounds - 1} rounds", group,
                                  {"calls": prefix + cycle * (rounds - 1), "rounds": rounds}, False))
                broken = cycle * rounds
                broken[-1] = call()
                cases.append(Case(f"a cycle of {period} broken on its last call", group,
                                  {"calls": broken, "rounds": rounds}, False))
        same_call = call()
        cases.append(Case(f"one call {rounds * 2} times (a repeat, not a cycle)", "a cycle of 2 and a longer one",
                          {"calls": [same_call] * (rounds * 2), "rounds": rounds}, False))
        cases.append(Case("no calls", "a cycle of 3 and a longer one", {"calls": [], "rounds": rounds}, False))
        return cases

    def drive(module, params, work):
        try:
            return module.cycling([tuple(pair) for pair in params["calls"]], params["rounds"])
        except BaseException as error:
            return raised(error)

    def judge(case, got, want):
        return observed_error(got) or (None if got is case.expected else f"expected {case.expected}, got {shown(got)}")
