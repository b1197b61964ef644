"""What every stage's cases share: the ``Case`` and ``Probe`` records, the registry the grader reads
(``PROBES``, filled by ``@probe`` as each stage's module is imported), and the helpers that draw values
and judge answers."""

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
    ("s06", 3): (("course.sandbox.on_disk", "inside"),),  # what lies beneath a folder
}


def probe(stage: str, number: int, *, uses_reference: bool = True, module: str = "agent", groups=()):
    """Register a class's ``cases``, ``drive`` and ``judge`` as (one more) probe of an exercise. An
    instructor's hidden tests (``--extra-tests DIR``) are files that use it the same way; they add
    cases to an exercise, judged like the course's own."""
    def register(cls):
        source = cls.cases.__code__.co_filename  # the file that defines it, however it was loaded
        origin = "" if Path(source).resolve().parent == Path(__file__).resolve().parent else str(Path(source).resolve())
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
