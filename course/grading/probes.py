"""What the grader asks of each exercise: cases drawn per run, run on a copy in a confined child, judged here.

Each exercise is a ``Probe``: ``cases(rng)`` draws its cases in the grading process (numbers, names,
folder names and texts come from the run's seed, so nothing a student could hard-code stays the same
from run to run); ``drive(module, params, work)`` runs one case in the confined child, on the copy,
and returns what it observed as JSON; ``judge(case, got, want)`` decides, back in the grading process,
whether that observation is right. ``want`` is the reference stage's own observation of the same
case (run in a child of its own that holds no student code), or None for an exercise judged only by
what its cases were built to expect (the extension exercises: their answers are known by
construction, so the course ships no solution of them).

The split is the guarantee: the child only reports what the copy did, never whether that was right,
so the code a student writes can change its own answers and nothing else. An observation the child
forges is just an answer; to forge a right one, the copy has to compute it.
"""

from __future__ import annotations

import json
import random
import re
import string
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable


@dataclass(frozen=True)
class Case:
    name: str           # shown in the scorecard: what the case tries, with its drawn values
    group: str          # partial credit is given per group of cases
    params: dict        # sent to the child
    expected: Any = None  # kept in the grading process; the judge's own knowledge of the answer


@dataclass(frozen=True)
class Probe:
    stage: str
    number: int
    cases: Callable[[random.Random], list]
    drive: Callable[[Any, dict, Path], Any]
    judge: Callable[[Case, Any, Any], str | None]
    uses_reference: bool = True
    module: str = "agent"  # the copy's module the driver is given
    groups: tuple = field(default=())
    origin: str = ""  # the file of an instructor's probe; "" for the course's own


PROBES: dict[tuple[str, int], list[Probe]] = {}

# Where an exercise's answer, or the heart of it, also exists in what a copy can import (the support
# package; the other stages are out of the child's reach): (module, name). A region of that exercise
# may not name the module or the object (course.grading.grade.region_problems: a clear message, early), and
# while the exercise is graded the child holds neither the object nor a way to make it again
# (keep_answers_out_of_reach, below): the case cannot be handed to the support package instead of answered.
ANSWERS_ELSEWHERE: dict[tuple[str, int], tuple[tuple[str, str], ...]] = {
    ("s01", 3): (("course.offline.validation", "validate_request"),),  # names the calls left unanswered
    ("s02", 4): (("course.runtime.transcript", "Loaded"),),  # Loaded(...).history() rebuilds the history from the lines
    ("s05", 1): (("course.offline.context_management", "clear_tool_uses"),),  # masks old results, keep and at least
    ("s05", 3): (("course.offline.validation", "validate_request"),),  # names a broken pair
    ("s06", 3): (("course.sandbox.paths", "inside"),),  # what lies beneath a folder
}


def probe(stage: str, number: int, *, uses_reference: bool = True, module: str = "agent", groups=()):
    """Register a class's ``cases``, ``drive`` and ``judge`` as (one more) probe of an exercise. An
    instructor's hidden tests (``--extra-tests DIR``) are files that use it the same way; they add
    cases to an exercise, judged like the course's own."""
    def register(cls):
        source = cls.cases.__code__.co_filename  # the file that defines it, however it was loaded
        origin = "" if Path(source).resolve() == Path(__file__).resolve() else str(Path(source).resolve())
        PROBES.setdefault((stage, number), []).append(
            Probe(stage, number, cls.cases, cls.drive, cls.judge, uses_reference, module, groups, origin))
        return cls
    return register


def probes_for(stage: str, number: int, extra_files=()) -> list[Probe]:
    """The course's probes of an exercise, then those of the instructor's files given for this run."""
    wanted = {""} | {str(Path(path).resolve()) for path in extra_files}
    return [found for found in PROBES.get((stage, number), []) if found.origin in wanted]


# ---------------------------------------------------------------------------------------------
# Drawing values

WORDS = ("amber", "birch", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kestrel",
         "lumen", "maple", "nectar", "onyx", "pepper", "quartz", "raven", "sable", "tundra", "umber", "velvet",
         "willow", "xenon", "yarrow", "zephyr")


def word(rng: random.Random) -> str:
    return rng.choice(WORDS) + str(rng.randint(2, 999))


def text(rng: random.Random, words: int = 6) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)) + f" {rng.randint(10, 99_999)}"


def tool_id(rng: random.Random) -> str:
    return "toolu_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(16))


def filename(rng: random.Random) -> str:
    return f"{word(rng)}.{rng.choice(['md', 'txt', 'csv'])}"


def make_workspace(work: Path, files: dict[str, str]) -> Path:
    folder = work / f"ws-{len(list(work.glob('ws-*')))}"
    folder.mkdir(parents=True)
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content, encoding="utf-8")
    return folder


def listing(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): path.read_text(encoding="utf-8", errors="replace")
            for path in sorted(folder.rglob("*")) if path.is_file()}


def sdk_message(blocks: list[dict], stop_reason: str = "tool_use"):
    """A real SDK Message, as a stage's ask() returns it."""
    import anthropic
    return anthropic.types.Message.model_validate({
        "id": "msg_graded", "type": "message", "role": "assistant", "model": "offline", "content": blocks,
        "stop_reason": stop_reason, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})


def raised(error: BaseException) -> list:
    return ["raised", type(error).__name__, str(error)[:500]]


def scripted_client(turns: list[list[dict]]):
    """An offline client whose model answers with ``turns`` in order (by the number of replies already in
    the request), validated like the real API: a history that breaks a pair is a 400."""
    import course

    def reply(body: dict):
        done = sum(message["role"] == "assistant" for message in body["messages"])
        return turns[min(done, len(turns) - 1)]
    return course.make_client(behaviour=reply, max_retries=0)


def plan_turns(rng: random.Random, files: dict[str, str]) -> list[list[dict]]:
    """A run of 1 to 4 turns with calls (1 to 3 each, reads and an unknown tool), then a final answer."""
    turns = []
    for _ in range(rng.randint(1, 4)):
        calls = []
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.2:
                calls.append({"type": "tool_use", "id": tool_id(rng), "name": f"fetch_{word(rng)}", "input": {}})
            else:
                calls.append({"type": "tool_use", "id": tool_id(rng), "name": "read_file",
                              "input": {"path": rng.choice(list(files))}})
        turns.append([{"type": "text", "text": f"I look at {word(rng)}."}] + calls)
    turns.append([{"type": "text", "text": text(rng)}])
    return turns


def warm_up() -> None:
    """What the drivers use on the first call (the SDK's models, the offline client, the support package's
    reading of the Python that runs it), made once in the child before its cases are forked from it, so
    that each case's fork does not make it again. Nothing of the copy runs here."""
    import course
    import course.sandbox.paths

    message = sdk_message([{"type": "text", "text": "warm"}], stop_reason="end_turn")
    client = scripted_client([[{"type": "text", "text": "warm"}]])
    client.messages.create(model="offline", max_tokens=16, messages=[{"role": "user", "content": message.content[0].text}])
    course.sandbox.paths.harness_environment()


def same(got, want, where: str = "") -> str | None:
    """None when the answer is the expected one; else where it first differs and what the copy gave there.
    The expected value is shown only where it is the lesson (a verdict, a kind, a count, a role: a short
    word or a number); a text, a list or an object the reference computed is described, never given: a
    scorecard must not hand out the reference's answers, which a table copied from it could replay."""
    if got == want:
        return None
    place = f"the answer{where}"
    if isinstance(want, dict) and isinstance(got, dict):
        missing = [key for key in want if key not in got]
        if missing:
            return f"{place} lacks {missing[0]!r}"
        for key in want:
            if got[key] != want[key]:
                return same(got[key], want[key], f"{where}[{key!r}]")
        return f"{place} has {next(key for key in got if key not in want)!r}, which it should not"
    if isinstance(want, list) and isinstance(got, list):
        if len(got) != len(want):
            return f"{place}: expected {len(want)} items, got {len(got)}: {shown(got)}"
        index = next(index for index, (a, b) in enumerate(zip(got, want)) if a != b)
        return same(got[index], want[index], f"{where}[{index}]")
    if is_lesson(want):
        return f"{place}: got {shown(got)}, expected {shown(want)}"
    return f"{place}: got {shown(got)}, not the {described(want)} expected"


def is_lesson(value) -> bool:
    """A value whose showing teaches rather than answers: None, a truth value, a number, a short word."""
    return value is None or isinstance(value, (bool, int, float)) or (
        isinstance(value, str) and len(value) <= 24 and " " not in value.strip())


def described(value) -> str:
    if isinstance(value, str):
        return f"text of {len(value)} characters"
    if isinstance(value, list):
        return f"list of {len(value)} items"
    if isinstance(value, dict):
        return f"object with keys {', '.join(map(str, value))}"
    return type(value).__name__


def shown(value, limit: int = 120) -> str:
    text_ = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text_ if len(text_) <= limit else text_[:limit - 1] + "…"


def observed_error(got) -> str | None:
    """The copy raised where the case expected an answer: that is the reason a student reads."""
    if isinstance(got, list) and got[:1] == ["raised"]:
        return f"raised {got[1]}: {got[2]}"
    return None


# ---------------------------------------------------------------------------------------------
# s00

# Each group holds both answers (a call that works, one that fails): an answer that is always the same
# passes no group, so it earns no part of the points.
@probe("s00", 1, groups=("read_file", "other tools"))
class S00Dispatch:
    def cases(rng):
        files = {filename(rng): text(rng) for _ in range(3)}
        name, other = list(files)[:2]
        new = filename(rng)
        a, b = rng.randint(100, 9999), rng.randint(2, 99)
        ghost = f"{rng.choice(['fetch', 'delete', 'open'])}_{word(rng)}"
        return [
            Case(f"read_file {name!r}", "read_file", {"files": files, "name": "read_file", "arguments": {"path": name}}),
            Case(f"write_file {new!r}", "other tools", {"files": files, "name": "write_file",
                                                       "arguments": {"path": new, "content": text(rng)}}),
            Case(f"calculate '{a} * {b}'", "other tools", {"files": files, "name": "calculate",
                                                          "arguments": {"expression": f"{a} * {b}"}}),
            Case(f"unknown tool {ghost!r}", "other tools", {"files": files, "name": ghost, "arguments": {}}, ghost),
            Case(f"read_file of a missing {new!r}", "read_file",
                 {"files": files, "name": "read_file", "arguments": {"path": new}}, new),
            Case(f"read_file with a misspelt argument ({other!r})", "read_file",
                 {"files": files, "name": "read_file", "arguments": {"paht": other}}, "paht"),
        ]

    def drive(module, params, work):
        workspace = make_workspace(work, params["files"])
        try:
            answer, is_error = module.run_tool(workspace, params["name"], params["arguments"])
        except BaseException as error:
            return raised(error)
        return {"text": answer if isinstance(answer, str) else repr(answer), "is_error": is_error,
                "files": listing(workspace)}

    def judge(case, got, want):
        if problem := observed_error(got):
            return f"{problem} (a failed call must come back as (text, True), never raise)"
        if not isinstance(got, dict) or got.get("is_error") is not want["is_error"]:
            return f"is_error should be {want['is_error']}, got {shown(got.get('is_error') if isinstance(got, dict) else got)}"
        if not want["is_error"]:
            return same(got["text"], want["text"]) or (None if got["files"] == want["files"] else
                                                      "the tool did not do its work in the workspace")
        if case.expected not in got["text"]:
            return f"the error text should name {case.expected!r}: got {shown(got['text'])}"
        return None


@probe("s00", 2)
class S00ToolResult:
    def cases(rng):
        files = {filename(rng): text(rng) for _ in range(2)}
        return [Case(f"answer read_file {path!r} (id {ident[-6:]})", "answers", {"files": files, "id": ident,
                     "name": "read_file", "input": {"path": path}})
                for path, ident in ((name, tool_id(rng)) for name in files)] + [
            Case("answer an unknown tool", "answers", {"files": files, "id": tool_id(rng), "name": f"go_{word(rng)}",
                                                       "input": {}})]

    def drive(module, params, work):
        workspace = make_workspace(work, params["files"])
        call = types.SimpleNamespace(id=params["id"], name=params["name"], input=params["input"], type="tool_use")
        try:
            block = module.tool_result(workspace, call)
        except BaseException as error:
            return raised(error)
        return block if isinstance(block, dict) else repr(block)

    def judge(case, got, want):
        return observed_error(got) or same(got, want)


@probe("s00", 3, uses_reference=False, module="extension", groups=("answers every call", "survives a tool that raises"))
class S00AnswerAll:
    def cases(rng):
        cases = []
        for index in range(4):
            blocks, expected = [], []
            for _ in range(rng.randint(0, 4)):
                if rng.random() < 0.3:
                    blocks.append({"type": "text", "text": text(rng, 3)})
                    continue
                ident, name = tool_id(rng), word(rng)
                fails = index == 3 and not expected
                output = text(rng, 2)
                blocks.append({"type": "tool_use", "id": ident, "name": name, "input": {"n": rng.randint(1, 99)}})
                expected.append((ident, output, fails))
            if not expected:  # every reply makes a call: an answer of no results must fail every case
                ident = tool_id(rng)
                blocks.insert(rng.randint(0, len(blocks)), {"type": "tool_use", "id": ident, "name": word(rng),
                                                             "input": {"n": rng.randint(1, 99)}})
                expected.append((ident, text(rng, 2), index == 3))
            group = "survives a tool that raises" if index == 3 else "answers every call"
            cases.append(Case(f"a reply of {len(blocks)} blocks, {len(expected)} calls", group,
                              {"blocks": blocks, "outputs": {ident: [out, fails] for ident, out, fails in expected}},
                              expected))
        return cases

    def drive(module, params, work):
        outputs = {block["id"]: params["outputs"][block["id"]] for block in params["blocks"] if block["type"] == "tool_use"}
        by_input = {json.dumps([b["name"], b["input"]], sort_keys=True): b["id"] for b in params["blocks"] if b["type"] == "tool_use"}

        def run(name, arguments):
            ident = by_input[json.dumps([name, arguments], sort_keys=True)]
            output, fails = outputs[ident]
            if fails:
                raise RuntimeError(output)
            return output, False
        try:
            return module.answer_all(params["blocks"], run)
        except BaseException as error:
            return raised(error)

    def judge(case, got, want):
        if problem := observed_error(got):
            return f"{problem} (answer_all must never raise)"
        if not isinstance(got, list) or len(got) != len(case.expected):
            return f"expected {len(case.expected)} tool_result blocks, got {shown(got)}"
        for block, (ident, output, fails) in zip(got, case.expected):
            if not isinstance(block, dict) or block.get("type") != "tool_result" or block.get("tool_use_id") != ident:
                return f"expected the tool_result of {ident} here, got {shown(block)}"
            if bool(block.get("is_error")) is not fails:
                return f"the result of {ident} should have is_error {fails}"
            if output not in str(block.get("content")):
                return f"the result of {ident} should hold {output!r}, got {shown(block.get('content'))}"
        return None


# ---------------------------------------------------------------------------------------------
# s01

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


@probe("s01", 3, uses_reference=False, module="extension")
class S01Unanswered:
    def cases(rng):
        cases = []
        for index in range(5):
            messages, missing = [{"role": "user", "content": f"Task {word(rng)}"}], []
            for turn in range(rng.randint(1, 4)):
                ids = [tool_id(rng) for _ in range(rng.randint(1, 3))]
                messages.append({"role": "assistant", "content": [{"type": "text", "text": "why"}] + [
                    {"type": "tool_use", "id": ident, "name": "read_file", "input": {"path": filename(rng)}} for ident in ids]})
                answered = [ident for ident in ids if rng.random() < 0.7 or index == 0]
                if turn == 0 and index == 4:
                    answered = []  # a result message with none of them: the next assistant message follows
                missing += [ident for ident in ids if ident not in answered]
                if answered:
                    messages.append({"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": ident, "content": "ok"} for ident in reversed(answered)]})
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


# ---------------------------------------------------------------------------------------------
# s02

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
                "saved": [[record["turn"], record["stop_reason"]] for record in records][-2:]}

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
        state = module.LoopState(messages=params["messages"])
        try:
            module.answer_interrupted_calls(state, params["stop_reason"])
        except BaseException as error:
            return ["raised", type(error).__name__]
        return state.messages[len(params["messages"]):]

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


# ---------------------------------------------------------------------------------------------
# s03

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


# ---------------------------------------------------------------------------------------------
# s04

def misspell(rng: random.Random, name: str) -> str:
    index = rng.randrange(1, len(name) - 1)
    return rng.choice([name[:index] + name[index + 1:], name[:index] + name[index + 1] + name[index] + name[index + 2:]])


# The good call is judged with the bad ones: a region that checks nothing must not earn its share.
@probe("s04", 1, groups=("unknown tool", "arguments"))
class S04Refuse:
    def cases(rng):
        files = {filename(rng): text(rng) for _ in range(2)}
        name = list(files)[0]
        tools = ["read_file", "write_file", "list_files", "search_files"]
        rng.shuffle(tools)
        return [
            Case(f"unknown tool {(ghost := 'zz' + word(rng))!r}", "unknown tool", {"files": files, "name": ghost, "arguments": {}}),
            *[Case(f"misspelt {(typo := misspell(rng, tool))!r}", "unknown tool", {"files": files, "name": typo, "arguments": {}})
              for tool in tools[:3]],
            Case(f"read_file without its path ({word(rng)})", "arguments", {"files": files, "name": "read_file",
                                                                                "arguments": {"file": name}}),
            Case("write_file with content a number", "arguments", {"files": files, "name": "write_file",
                                                                      "arguments": {"path": filename(rng), "content": rng.randint(1, 999)}}),
            Case(f"read_file {name!r}", "arguments", {"files": files, "name": "read_file", "arguments": {"path": name}}),
        ]

    def drive(module, params, work):
        workspace = make_workspace(work, params["files"])
        try:
            output = module.call_tool(workspace, params["name"], params["arguments"])
        except module.ToolError as error:
            return {"kind": error.kind, "message": str(error.message), "hint": str(error.hint),
                    "tools": list(module.TOOL_FUNCTIONS),
                    "parameters": sorted(module.SCHEMAS.get(params["name"], {}).get("properties", {}))}
        except BaseException as error:
            return raised(error)
        return {"output": output}

    def judge(case, got, want):
        if problem := observed_error(got):
            return f"{problem} (a refused call raises ToolError)"
        if "output" in want:
            return same(got.get("output"), want["output"]) if isinstance(got, dict) else same(got, want)
        if not isinstance(got, dict) or got.get("kind") != want["kind"]:
            return f"expected a ToolError of kind {want['kind']!r}, got {shown(got)}"
        hint = got["hint"] + " " + got["message"]
        if want["kind"] == "unknown_tool":
            missing = [tool for tool in want["tools"] if tool not in hint]
            if missing:
                return f"the hint should list the tools ({', '.join(missing)} missing): got {shown(got['hint'])}"
            closest = want["hint"].rpartition("the closest is ")[2] if "the closest is " in want["hint"] else ""
            # Named as the closest: once more than the listing names every tool, so that a listing alone
            # (however it is joined) or a fixed name does not pass.
            if closest and hint.count(closest) <= max(hint.count(tool) for tool in want["tools"] if tool != closest):
                return f"the hint should say the closest tool is {closest}: got {shown(got['hint'])}"
        else:
            missing = [parameter for parameter in want["parameters"] if parameter not in hint]
            if missing:
                return f"the hint should describe the parameters ({', '.join(missing)} missing): got {shown(got['hint'])}"
        return None


# A group per tool, each with results under the limit and over it: "leave it whole" passes no group.
@probe("s04", 2, groups=("read_file", "search_files"))
class S04Cut:
    def cases(rng):
        cases = []
        for extra in (0, -rng.randint(1, 50), rng.randint(1, 9), rng.randint(500, 20_000)):
            for tool in (("read_file", "search_files") if extra else ("read_file",)):
                # Just over the limit, a read always starts at an offset: the marker must count from there.
                offset = rng.randint(1, 30) * 100 if 0 < extra < 10 else rng.choice([0, rng.randint(1, 30) * 100])
                arguments = {"path": filename(rng)} | ({"offset": offset} if offset and tool == "read_file" else {})
                if tool == "search_files":
                    arguments = {"text": word(rng)}
                cases.append(Case(f"{tool}: {extra:+d} characters around the limit", tool,
                                  {"extra": extra, "tool": tool, "arguments": arguments, "seed": rng.randint(0, 10**9)}))
        return cases

    def drive(module, params, work):
        limit = module.MAX_RESULT_CHARS
        filler = random.Random(params["seed"])
        output = "".join(filler.choice(string.ascii_lowercase + " \n") for _ in range(limit + params["extra"]))
        try:
            cut = module.cut_to_fit(output, params["tool"], params["arguments"])
        except BaseException as error:
            return raised(error)
        return {"cut": cut, "limit": limit, "length": len(output)}

    def judge(case, got, want):
        if problem := observed_error(got):
            return problem
        cut, limit, length = got.get("cut"), want["limit"], want["length"]
        if not isinstance(cut, str):
            return f"expected a text, got {shown(cut)}"
        if length <= limit:
            return None if cut == want["cut"] else f"a result of {length} characters (the limit is {limit}) must be left whole"
        if cut[:limit] != want["cut"][:limit]:
            return f"the first {limit} characters must be kept as they are"
        marker = cut[limit:]
        numbers = [length - limit, length]
        if case.params["tool"] == "read_file":
            numbers.append(case.params["arguments"].get("offset", 0) + limit)
        missing = [n for n in numbers if str(n) not in marker]
        if missing:
            return f"the marker after the kept text should give {', '.join(map(str, numbers))}: got {shown(marker)}"
        if len(marker) > 400:
            return f"the marker is {len(marker)} characters: keep it to a line"
        return None


# Each group holds values to accept and values to refuse: an answer that always refuses (or always
# accepts) passes no group. The values refused are of each type the exercise names (list, str, int) and
# of others drawn from the seed (float, bool, None, as JSON text or as they are), and a refusal must name
# the type received and no other: a message that names every type names none of them.
REFUSED_TYPES = ("list", "int", "float", "bool", "NoneType")  # str may be named anywhere: what came was text
# How a message may name a type, each as a word of its own (its __name__, or as people write it): a type's
# name inside a longer word names nothing ("listing", "integers"), or one message could hold every type.
NAMED = {"NoneType": ("NoneType", "None", "null"), "int": ("int", "integer"), "bool": ("bool", "boolean"),
         "str": ("str", "string")}


def names_type(message: str, name: str) -> bool:
    return any(re.search(rf"\b{spelling}\b", message) for spelling in NAMED.get(name, (name,)))


def json_scalar(rng: random.Random) -> tuple[str, str]:
    """(JSON text of a value that is no object, its type's name)."""
    return rng.choice([(str(rng.randint(1, 99)), "int"), (f"{rng.randint(1, 99)}.{rng.randint(1, 9)}", "float"),
                       ("true", "bool"), ("false", "bool"), ("null", "NoneType")])


def python_value(rng: random.Random):
    """A value that is neither an object nor text, and its type's name."""
    return rng.choice([(rng.randint(1, 99) / 4, "float"), (rng.choice([True, False]), "bool"), (None, "NoneType"),
                       ([word(rng), word(rng)], "list")])


@probe("s04", 3, uses_reference=False, module="extension", groups=("JSON text", "other values"))
class S04Arguments:
    def cases(rng):
        values = {word(rng): rng.choice([text(rng, 2), rng.randint(0, 999), True]) for _ in range(rng.randint(1, 3))}
        encoded = json.dumps(values)
        scalar, scalar_type = json_scalar(rng)
        value, value_type = python_value(rng)
        return [
            Case("an object", "other values", {"arguments": values}, values),
            Case("the object as JSON text", "JSON text", {"arguments": encoded}, values),
            Case("the JSON text with spaces around", "JSON text", {"arguments": f"  \n{encoded} "}, values),
            Case("the JSON text in a ```json fence", "other values", {"arguments": f"```json\n{encoded}\n```"}, values),
            Case("a JSON list", "JSON text", {"arguments": json.dumps(list(values))}, "list"),
            Case("text that is not JSON", "JSON text", {"arguments": f"path={word(rng)}"}, "str"),
            Case(f"the JSON text {scalar}", "JSON text", {"arguments": scalar}, scalar_type),
            Case("a number", "other values", {"arguments": rng.randint(1, 99)}, "int"),
            Case(f"a {value_type} value", "other values", {"arguments": value}, value_type),
        ]

    def drive(module, params, work):
        try:
            return {"value": module.arguments_object(params["arguments"])}
        except ValueError as error:
            return {"refused": str(error)}
        except BaseException as error:
            return raised(error)

    def judge(case, got, want):
        if problem := observed_error(got):
            return problem
        if isinstance(case.expected, dict):  # a value to accept
            return same(got.get("value", got), case.expected)
        if "refused" not in got:
            return f"expected a ValueError, got {shown(got)}"
        message = got["refused"]
        others = [name for name in REFUSED_TYPES if name != case.expected and names_type(message, name)]
        if not names_type(message, case.expected) or "object" not in message or others:
            return (f"the ValueError should say an object was expected and name the type received ({case.expected}), "
                    f"and no other: got {shown(message)}")
        return None


# ---------------------------------------------------------------------------------------------
# s05

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
        for index in range(5):
            turns, keep = rng.randint(3, 8), rng.randint(1, 3)
            masked = {rng.randrange(0, max(turns - keep, 1))} if index == 2 else set()
            at_least = {3: rng.randint(20_000, 10**6), 4: rng.randint(1, 20)}.get(index, 0)
            group = "masks only when enough is freed" if index >= 3 else "masks the old ones"
            cases.append(Case(f"{turns} results, keep {keep}, at_least {at_least}", group,
                              {"messages": tool_history(rng, turns, masked), "keep": keep, "at_least": at_least}))
        return cases

    def drive(module, params, work):
        messages = json.loads(json.dumps(params["messages"]))
        try:
            count = module.mask_old_results(messages, params["keep"], params["at_least"])
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


# ---------------------------------------------------------------------------------------------
# s06

# Each group holds calls with different right verdicts: one verdict for every call passes no group.
# Each group holds calls with different right verdicts: one verdict for every call passes no group. Every draw
# holds each clause of the contract: an allow-all listed before a deny or an ask rule, a call both a deny and an
# ask rule match, a person's "always" facing a deny rule, an ask rule, and a command "always" may not cover,
# defaults that are not allow, and a call on two entries of which only one is allowed.
@probe("s06", 1, module="permissions", groups=("deny first", "ask and allow", "defaults"))
class S06Decide:
    def cases(rng):
        secret, note, folder, moved = word(rng), filename(rng), word(rng), filename(rng)
        script = f"{word(rng)}.py"
        files = {note: text(rng), f"{folder}/{filename(rng)}": text(rng), f"{secret}.key": "k", script: "print(1)\n"}
        other = filename(rng)
        deny, ask = ["deny", "*", f"{secret}.key"], ["ask", "write_file", f"{folder}/*"]
        rules = [deny, ask, ["allow", "write_file", note]]
        rng.shuffle(rules)
        allow_all = ["allow", "*", "*"]

        def first(*extra):  # the given rules before the others, so that the first match in list order is wrong
            return [*extra, *rules]

        both = [["ask", "*", f"{secret}.key"], deny]
        rng.shuffle(both)
        c = [
            ("deny first", "read_file", {"path": f"{secret}.key"}, rules, []),
            ("deny first", "write_file", {"path": f"{secret}.key", "content": "x"}, first(allow_all), []),
            ("deny first", "read_file", {"path": f"{secret}.key"}, [allow_all, *both], []),
            ("deny first", "read_file", {"path": f"{secret}.key"}, rules, [["read_file", [f"{secret}.key"]]]),
            ("deny first", "write_file", {"path": other, "content": "x"}, first(allow_all), []),
            ("ask and allow", "write_file", {"path": f"{folder}/{other}", "content": "x"}, rules, []),
            ("ask and allow", "write_file", {"path": f"{folder}/{other}", "content": "x"}, first(allow_all), []),
            ("ask and allow", "write_file", {"path": f"{folder}/{other}", "content": "x"}, rules,
             [["write_file", [f"{folder}/{other}"]]]),
            ("ask and allow", "write_file", {"path": note, "content": "x"}, rules, []),
            ("ask and allow", "write_file", {"path": note, "content": "x"}, [r for r in rules if r[0] != "allow"],
             [["write_file", [note]]]),
            ("ask and allow", "run_command", {"command": f"python3 {script}"}, rules, [["run_command", [f"python3 {script}"]]]),
            ("ask and allow", "move_file", {"source": note, "destination": moved},
             rules + [["allow", "move_file", note], ["allow", "move_file", moved]], []),
            ("defaults", "read_file", {"path": note}, rules, []),
            ("defaults", "write_file", {"path": other, "content": "x"}, rules, []),
            ("defaults", "write_file", {"path": note, "content": "x"}, [r for r in rules if r[0] != "allow"], []),
            ("defaults", "delete_file", {"path": note}, rules, []),
            ("defaults", "move_file", {"source": note, "destination": moved}, rules + [["allow", "move_file", note]], []),
            ("defaults", "run_command", {"command": f"ls {folder}"}, rules, []),
            ("defaults", "run_command", {"command": f"cat {secret}.key"}, rules, []),
        ]
        return [Case(f"{tool} {json.dumps(arguments)[:60]} with {len(rules_)} rules"
                     + (f", {len(approved)} approved always" if approved else ""), group,
                    {"files": files, "tool": tool, "arguments": arguments, "rules": rules_, "approved": approved})
                for group, tool, arguments, rules_, approved in c]

    def drive(module, params, work):
        workspace = make_workspace(work, params["files"])
        rules = [module.Rule(*rule) for rule in params["rules"]]
        gate = module.Gate(rules=rules, audit_log=False)
        try:
            call = gate.read_call(workspace, params["tool"], params["arguments"])
            approved = {module.approval(tool, subjects if isinstance(subjects, list) else [subjects])
                        for tool, subjects in params["approved"]}
            verdict = module.decide(call, rules, approved)
        except BaseException as error:
            return raised(error)
        return [verdict.decision, verdict.decided_by]

    def judge(case, got, want):
        return observed_error(got) or same(got, want)


# No one to ask (deny) is grouped with an allow: "always deny" passes no group.
@probe("s06", 2, module="permissions", groups=("allowed once, or no one to ask", "allowed always, or refused"))
class S06Ask:
    def cases(rng):
        files = {filename(rng): text(rng)}
        name = list(files)[0]
        cases = []
        for answer in ("allow once", "allow always", "deny", None):
            group = "allowed once, or no one to ask" if answer in ("allow once", None) else "allowed always, or refused"
            cases.append(Case(f"a person answers {answer!r} about {name!r}", group,
                              {"files": files, "path": name, "answer": answer, "reason": text(rng, 3)}))
        return cases

    def drive(module, params, work):
        workspace = make_workspace(work, params["files"])
        asked = []

        def approver(tool, arguments, why, covers):
            asked.append([tool, arguments])
            return params["answer"], params["reason"]
        gate = module.Gate(rules=[module.Rule("ask", "write_file", "*")], audit_log=False,
                           approver=approver if params["answer"] else None)
        arguments = {"path": params["path"], "content": "new"}
        try:
            call = gate.read_call(workspace, "write_file", arguments)
            verdict = gate.ask_person(call, arguments, "the rule says ask")
            again = module.decide(call, gate.rules, gate.approved)
        except BaseException as error:
            return raised(error)
        return {"decision": verdict.decision, "by": verdict.decided_by, "asked": asked,
                "approved": sorted(map(repr, gate.approved)), "again": again.decision,
                "reason_given": params["reason"] in verdict.why}

    def judge(case, got, want):
        if problem := observed_error(got):
            return problem
        for key in ("decision", "by", "asked", "approved", "again"):
            if got.get(key) != want[key]:
                return same(got.get(key), want[key], f"[{key!r}]")
        if case.params["answer"] == "deny" and not got.get("reason_given"):
            return "a refusal should pass on the person's reason"
        return None


def loosen(rng: random.Random, path: str, within: int) -> str:
    """``path`` with a repeated slash or a '.' part put after one of its first ``within`` names, and maybe a
    trailing slash: the same path, read as text. Never at its start: POSIX keeps a leading '//' as it is
    (https://docs.python.org/3/library/os.path.html#os.path.normpath)."""
    names = path.split("/")[1:]
    at = rng.randint(1, min(within, len(names) - 1))
    names.insert(at, rng.choice(["", "."]))
    return "/" + "/".join(names) + rng.choice(["", "/"])


# Each group holds paths inside and paths outside, in shapes drawn with the folder's own names: a
# constant answer passes no group, and neither does a check of the text's shape (a prefix, a '..'
# followed by the folder's name, the way a path ends) in place of resolving it.
@probe("s06", 3, uses_reference=False, module="extension", groups=("names, '.' and slashes", "'..' parts"))
class S06Inside:
    def cases(rng):
        names = [word(rng) for _ in range(rng.randint(2, 3))]
        root, name = "/" + "/".join(names), names[-1]
        parent, depth = root.rsplit("/", 1)[0], len(names)

        def beside():  # a name that starts like the folder's
            return f"{name}{rng.choice(['-', '_', '', '.'])}{word(rng)}"

        def below(most=3):
            return "/".join(word(rng) for _ in range(rng.randint(1, most)))

        def other():  # a name none of the folder's: where the case is built to lead elsewhere
            drawn = word(rng)
            return drawn if drawn not in names else other()

        down = rng.randint(1, 3)
        deep = "/".join(word(rng) for _ in range(down))
        plain = [
            ("a path beneath", root, f"{root}/{below()}/{filename(rng)}", True),
            ("a sibling whose name starts the same", root, f"{parent}/{beside()}/{filename(rng)}", False),
            ("the folder itself", root, root, True),
            ("that sibling itself", root, f"{parent}/{beside()}", False),
            ("the folder with a trailing slash", root + "/", f"{root}/{filename(rng)}", True),
            ("the parent", root, parent, False),
            ("the folder, written loosely", loosen(rng, root, depth), f"{root}/{below()}", True),
            ("a sibling, beside a folder written loosely", loosen(rng, root, depth), f"{parent}/{beside()}", False),
            ("a path beneath, written loosely", root, loosen(rng, f"{root}/{below()}", depth), True),
            ("a sibling, written loosely", root, loosen(rng, f"{parent}/{beside()}/{filename(rng)}", depth), False),
            ("a '.' part", root, f"{root}/." + rng.choice(["", "/", f"/{filename(rng)}"]), True),
        ]
        dots = [
            ("out, to another name", root, f"{root}/../{rng.choice([beside(), other()])}/{filename(rng)}", False),
            ("out and back in", root, f"{root}/../{name}/{below()}", True),
            ("down, then out past it", root, f"{root}/{deep}" + "/.." * (down + 1) + f"/{word(rng)}", False),
            ("down and up, still in", root, f"{root}/{deep}" + "/.." * rng.randint(1, down) + f"/{filename(rng)}", True),
            ("a '..' then the folder's name, still in", root, f"{root}/{deep}/../{name}", True),
            ("'..' to the top", root, root + "/.." * depth + f"/{other()}/{below()}", False),
            ("'..' to the top and back down", root, root + "/.." * depth + f"{root}/{filename(rng)}", True),
            ("from beside, in", root, f"{parent}/{word(rng)}/../{name}/{filename(rng)}", True),
            ("from beside, to a sibling", root, f"{parent}/{word(rng)}/../{beside()}", False),
            ("a folder with a '..' of its own", f"{parent}/{word(rng)}/../{name}", f"{root}/{filename(rng)}", True),
            ("up from the folder", root, f"{root}/..", False),
            ("down and up to the folder", root, f"{root}/{word(rng)}/..", True),
        ]
        return [Case(f"{shape}: {path!r} in {folder!r}", group, {"folder": folder, "path": path}, expected)
                for group, drawn in (("names, '.' and slashes", plain), ("'..' parts", dots))
                for shape, folder, path, expected in drawn]

    def drive(module, params, work):
        try:
            return module.inside(params["folder"], params["path"])
        except BaseException as error:
            return raised(error)

    def judge(case, got, want):
        return observed_error(got) or (None if got is case.expected else f"expected {case.expected}, got {shown(got)}")


# ---------------------------------------------------------------------------------------------
# Keeping those answers out of reach while their exercise is graded

# The region check above is a screen, not a wall: a chain of names it lets through (the enum module's
# alias of builtins, say) reaches getattr, and so anything. What holds is done in the child before the
# copy is imported (course.grading.jail._work calls keep_answers_out_of_reach), for each exercise of the
# job that ANSWERS_ELSEWHERE names, so that whatever the copy's code does in its process, the answer is
# not there to find and cannot be made again:
#
# - the object, and every function of its module its code reaches by name (validate_request's checks live
#   in helpers), is replaced wherever anything holds it (gc.get_referrers over the whole heap, once) by a
#   stand-in that says what to do instead; a class is emptied of its functions. Then each replaced function
#   and each of its code objects must be gone from memory (a weak reference to it is dead), else the child
#   stops: nothing of the copy runs with an answer still alive somewhere;
# - its source and cached bytecode cannot be read: one more Landlock layer, which handles reading files
#   only, grants it on everything the child could read except those files (Landlock layers stack, and
#   each can only take rights away: https://docs.kernel.org/userspace-api/landlock.html). So exec(open(...)),
#   importlib.reload and a fresh interpreter started by the copy all meet a PermissionError; linecache's
#   copies of those lines are dropped.
#
# Nothing the child runs legitimately calls these while such an exercise is graded (the drivers of these
# five exercises call only the copy's function; the offline model's checks are not needed by them), so
# the stand-in refuses every caller: there is no caller check to forge. What the wall does not claim: the
# heap of a process is not wiped, and ctypes (which the child has loaded) reads raw memory, so bytes of a
# freed function could in principle be dug out of it; no object, file or module to call is left.


class AnswerOutOfReach(RuntimeError):
    """Raised by what stands where the support package's answer to the exercise being graded was."""


class OutOfReach:
    """Stands where the support package's answer to the graded exercise was: any call or attribute says so."""

    __slots__ = ("_message",)

    def __init__(self, message: str):
        object.__setattr__(self, "_message", message)

    def __call__(self, *args, **kwargs):
        raise AnswerOutOfReach(self._message)

    def __getattr__(self, name):
        raise AnswerOutOfReach(self._message)

    def __repr__(self) -> str:
        return f"<out of reach: {self._message}>"


def answers_of_job(order: dict) -> list[tuple[str, str]]:
    """The (module, name) answers of the exercises a child's job runs, each once."""
    exercises = {case["exercise"] for case in order.get("cases", [])}
    return list(dict.fromkeys(answer for number in sorted(exercises)
                              for answer in ANSWERS_ELSEWHERE.get((order["stage"], number), ())))


def keep_answers_out_of_reach(order: dict, copy: Path) -> None:
    """In the graded child, before the copy is imported: the answers of this job's exercises replaced in
    memory and gone, their files unreadable (when the child is confined). ``copy``: the job's copy folder.
    Raises when either cannot be made so: the exercise then fails, it never runs with the answer in reach."""
    answers = answers_of_job(order)
    if not answers:
        return
    import gc
    import importlib
    import linecache

    modules, gone = [], []
    for module_name, name in answers:
        modules.append(importlib.import_module(module_name))
        gone += _replace_everywhere(modules[-1], name)
    if any(ref() is not None for ref, _ in gone):
        gc.collect()  # what only a cycle still held (none is known: this costs a fifth of a second)
    alive = [shown for ref, shown in gone if ref() is not None]
    if alive:
        raise AnswerOutOfReach(f"the grader could not take {alive[0]} out of the child's memory")
    files = sorted({path for module in modules for path in _files_of(module)})
    for path in files:
        linecache.cache.pop(path, None)
    if _confined():
        _unreadable(files, Path(copy).parent, order.get("readable", []))


# An instructor's hidden cases (--extra-tests) are a file the child imports for its drivers; the same file
# draws the cases and judges them, in the grading process, and may hold the solver that computes what each
# case expects. In the child, once the file is imported and before the copy is, only what its drivers reach
# is left of it (keep_only_the_drivers): its probes' cases and judge are stand-ins, every global of the file
# no driver names is deleted (so a solver only the cases or the judge use is gone from memory), the probe
# classes lose their cases and judge, and the file cannot be read again (a Landlock layer, as above).


def keep_only_the_drivers(modules: list, files: list[str], order: dict, copy: Path, work: Path) -> None:
    """In the graded child, after the instructor's ``files`` were imported as ``modules``, before the copy is
    (``copy``: the job's copy folder; ``work``: the child's scratch folder)."""
    import dataclasses
    import linecache

    origins = {str(Path(path).resolve()) for path in files}
    standin = OutOfReach("an instructor's cases are drawn and judged by the grader, outside the child")
    drivers = []
    for found in PROBES.values():
        for position, one in enumerate(found):
            if one.origin in origins:
                drivers.append(one.drive)
                found[position] = dataclasses.replace(one, cases=standin, judge=standin)
    for module in modules:
        namespace = module.__dict__
        for value in list(namespace.values()):
            if isinstance(value, type) and any(value.__dict__.get("drive") is driver for driver in drivers):
                for name in ("cases", "judge"):
                    if name in value.__dict__:
                        delattr(value, name)
        kept = _named_by([driver for driver in drivers if getattr(driver, "__globals__", None) is namespace], namespace)
        for name in [name for name in namespace if name not in kept and not name.startswith("__")]:
            del namespace[name]
    for path in files:
        linecache.cache.pop(str(path), None)
        linecache.cache.pop(str(Path(path).resolve()), None)
    if _confined():
        # The job's folder holds the hidden files (in its probes folder) and cannot be listed by the child, so
        # what may be read in it is named: the copy, the scratch folder, the probes folder but those files.
        _unreadable([str(Path(path).resolve()) for path in files], Path(copy).parent,
                    [str(copy), str(work), *order.get("readable", [])])


def _named_by(functions: list, namespace: dict) -> set:
    """The globals of ``namespace`` the functions name, and those named by what they name, and so on (a name
    an attribute shares with a global counts: more is kept, never less)."""
    kept, codes, seen = set(), [function.__code__ for function in functions], set()

    def codes_of(value) -> list:
        value = getattr(value, "__func__", value)  # a staticmethod's or classmethod's function
        if isinstance(value, types.FunctionType):
            cells = [cell.cell_contents for cell in value.__closure__ or () if _filled(cell)]
            return [value.__code__] + [code for inner in [*cells, *(value.__defaults__ or ())] for code in codes_of(inner)]
        if isinstance(value, type):
            return [code for name, inner in vars(value).items() if name not in ("cases", "judge")
                    for code in codes_of(inner)]
        if isinstance(value, property):
            return [code for inner in (value.fget, value.fset, value.fdel) if inner for code in codes_of(inner)]
        return []
    for function in functions:
        codes += [code for inner in function.__closure__ or () if _filled(inner) for code in codes_of(inner.cell_contents)]
    while codes:
        code = codes.pop()
        if id(code) in seen:
            continue
        seen.add(id(code))
        codes += [const for const in code.co_consts if isinstance(const, types.CodeType)]
        for name in code.co_names:
            if name in namespace and name not in kept:
                kept.add(name)
                codes += codes_of(namespace[name])
    return kept


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _replace_everywhere(module, name: str) -> list:
    """Put a stand-in wherever the heap holds the answer or a function of its module it reaches; returns a
    (weak reference, name) for each of those functions and code objects, which must now be gone."""
    import gc
    import sys
    import weakref

    answer = getattr(module, name)
    where = f"{module.__name__}.{name}"
    functions = _reached(answer, module)
    standins = {}
    for function in functions:
        shown = f"{function.__module__}.{function.__qualname__}"
        standins[id(function)] = OutOfReach(f"this exercise asks you to write what {where} does"
                                            + ("" if shown in (where, f"{where}.{function.__name__}") else f" ({shown} is part of it)"))
    gone = [(weakref.ref(function), f"{function.__module__}.{function.__qualname__}") for function in functions]
    # The code objects written in the module (a dataclass's generated __repr__ runs the dataclasses module's
    # code, which every dataclass shares).
    gone += [(weakref.ref(code), f"the code of {function.__qualname__}") for function in functions
             for code in _codes(function.__code__) if code.co_filename == module.__file__]
    if isinstance(answer, type):  # a class is emptied of its functions: a class lives on in its own cycles
        standins[id(answer)] = OutOfReach(f"this exercise asks you to write what {where} does")
        for key, value in list(vars(answer).items()):
            if _functions_in(value):
                type.__setattr__(answer, key, standins[id(answer)])
    gc.unfreeze()  # what was imported before the fork is frozen (grading_jail), and get_referrers does not look there
    try:
        _swap_all(gc.get_referrers(answer, *functions), standins, answer, {id(functions)})
    finally:
        gc.freeze()  # and frozen again: a collection would copy every page of it into this fork
    sys._clear_type_cache()  # a class's own dict changed in place: no lookup may still find what it held
    return gone


def _swap_all(holders: list, standins: dict, answer, mine: set) -> None:
    """Each reference a holder keeps to a target, pointed at its stand-in. A holder of a kind this cannot
    change stops the child (fail closed): nothing of the copy runs beside an answer still held."""
    import types
    for holder in holders:
        if id(holder) in mine or isinstance(holder, types.FrameType):
            continue
        if isinstance(holder, dict):
            for key, value in list(holder.items()):
                if id(value) in standins:
                    holder[key] = standins[id(value)]
        elif isinstance(holder, list):
            holder[:] = [standins.get(id(value), value) for value in holder]
        elif isinstance(holder, types.CellType):
            holder.cell_contents = standins[id(holder.cell_contents)]
        elif isinstance(answer, type) and (isinstance(holder, (answer, type)) or getattr(holder, "__objclass__", None) is answer
                                           or (isinstance(holder, tuple) and answer in holder and all(isinstance(item, type) for item in holder))):
            continue  # the emptied class's instances, subclasses, descriptors and own __mro__: no function of it
        else:
            raise AnswerOutOfReach(f"the grader cannot take an answer out of a {type(holder).__name__}")


def _reached(answer, module) -> list:
    """The answer's functions (a class's own, or the function itself) and, through the names their code
    uses, every function of its own module they reach."""
    import types
    waiting = [part for value in vars(answer).values() for part in _functions_in(value)] \
        if isinstance(answer, type) else [answer]
    found = []
    while waiting:
        function = waiting.pop()
        if any(function is known for known in found):
            continue
        found.append(function)
        for code in _codes(function.__code__):
            for name in code.co_names:
                value = vars(module).get(name)
                if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
                    waiting.append(value)
    return found


def _functions_in(value) -> list:
    import types
    if isinstance(value, types.FunctionType):
        return [value]
    if isinstance(value, property):
        return [part for part in (value.fget, value.fset, value.fdel) if isinstance(part, types.FunctionType)]
    if isinstance(value, (staticmethod, classmethod)) and isinstance(value.__func__, types.FunctionType):
        return [value.__func__]
    return []


def _codes(code) -> list:
    """A code object and those nested in it (its inner functions, comprehensions, lambdas)."""
    import types
    found = [code]
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            found += _codes(constant)
    return found


def _files_of(module) -> list[str]:
    """The module's source and every cached bytecode of it: in its __pycache__ folder, and where
    PYTHONPYCACHEPREFIX puts it instead (sys.pycache_prefix, a tree that mirrors the source's path:
    https://docs.python.org/3/library/sys.html#sys.pycache_prefix)."""
    import importlib.util
    source = Path(module.__file__).resolve()
    folders = {source.parent / "__pycache__", Path(importlib.util.cache_from_source(str(source))).parent}
    cached = sorted(str(path) for folder in folders if folder.is_dir() for path in folder.glob(f"{source.stem}.*.pyc"))
    return [str(source), *cached]


def _confined() -> bool:
    """Whether the child runs under no_new_privs (course.grading.jail sets it before Landlock): only then
    can it add a Landlock layer, and only then is there a confinement for the layer to narrow."""
    from course.sandbox.kernel.calls import libc
    return libc().prctl(39, 0, 0, 0, 0) == 1  # PR_GET_NO_NEW_PRIVS


# The folders a child may be granted beside the ones named (course.grading.jail._landlock grants the system
# folders, the Python that runs it, the support package, the job): this layer grants reading in all of them,
# so that it narrows the child's confinement by the answers' files and nothing else.
TOP_FOLDERS = ("/bin", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc", "/run", "/sbin", "/srv",
               "/sys", "/tmp", "/usr", "/var")


def _unreadable(files: list[str], job: Path, readable: list) -> None:
    """One more Landlock layer: a file may be read wherever the child could read one, except ``files``.
    The layer handles only LANDLOCK_ACCESS_FS_READ_FILE, so what the child may write, list or run is as it was."""
    import os
    from course.sandbox import kernel
    from course.sandbox.kernel import landlock

    hidden = {Path(path) for path in files}
    grants: list[Path] = []

    def holds_hidden(path: Path) -> bool:
        return any(path in file.parents for file in hidden)

    def split(folder: Path) -> None:  # every entry of a folder that holds a hidden file, but that file
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:  # a folder the child cannot list is granted through the deeper folders it may read
            return
        for entry in entries:
            path = Path(entry.path)
            if path in hidden or entry.is_symlink():  # a rule on a link would grant where it points
                continue
            if entry.is_dir(follow_symlinks=False) and holds_hidden(path):
                split(path)
            else:
                grants.append(path)

    roots = [*landlock.SYSTEM_FOLDERS, *kernel._python_prefixes(), str(kernel.SUPPORT_PACKAGE), str(job),
             *readable, *TOP_FOLDERS]
    for root in dict.fromkeys(Path(os.path.realpath(path)) for path in roots):
        if root in hidden or not os.path.exists(root):
            continue
        if holds_hidden(root):
            split(root)
        else:
            grants.append(root)

    landlock.add_layer(landlock.READ_FILE, [(str(path), landlock.READ_FILE) for path in grants])
