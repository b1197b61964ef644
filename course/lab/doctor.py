"""``python -m course doctor [--model ID]``: what a model does with the course's kind of request, checked first.

A learner who points the course at a local server (``ANTHROPIC_BASE_URL``) cannot tell from one
failed run whether the stage, the server or the model is at fault. The doctor sends five small
requests, the kind the stages send (a tool table, a task, a tool result, an error), and reports
in a table what came back. Nothing runs: the tool results are written by the doctor.

The five requests (``PROBES``):

1. ``hello``: a short question, no tools: does the model answer at all?
2. ``list``: "List the files in the workspace" with two tools: a ``tool_use`` block?
3. ``read two``: "Read memo.md and todo.md ...": both calls in one reply, and with the names the
   task gives? (The read_file description holds an example name, 'notes.txt', as the stages'
   descriptions do; a model that copies examples reads that instead.)
4. ``answer``: a listing already in the history and "How many files ...?": an answer that ends
   the turn, or the listing repeated back?
5. ``recover``: the model's own call for 'meom.md' (a transposed pair of letters, the kind
   of slip "Building an agent loop yourself" shows) answered with an error whose hint names memo.md: does the next call use the hint?

Across all five: was a reply cut at ``max_tokens``, did one write a call as JSON text, did one copy
its prompt back? Where these failures were measured: ``course/offline/small_local.py``.
"""

from __future__ import annotations

import json
import os
import statistics
import textwrap
import time
from dataclasses import dataclass, field

import anthropic

from course.running.cli import explain_api_error
from course.running.client import make_client
from course.helpers.echo import copied_share, repeats_the_prompt
from course.helpers.json_text import objects_in
from course.runtime.models import CourseError, is_offline, resolve_model

# The stages' own MAX_TOKENS: a reply the doctor sees cut is one a stage would see cut.
MAX_TOKENS = 1024
SYSTEM = ("You are an agent working in a small project folder, the workspace. "
          "Use the tools to look before you answer: never guess what a file contains.")
EXAMPLE_FILE = "notes.txt"  # not in the sample workspace: reading it means copying the example
TOOLS = [
    {"name": "list_files", "description": "List the files of a folder in the workspace, one name a line.",
     "input_schema": {"type": "object", "properties": {
         "path": {"type": "string", "description": "Folder relative to the workspace, e.g. '.'"}}, "required": []}},
    {"name": "read_file", "description": "Read one UTF-8 text file of the workspace.",
     "input_schema": {"type": "object", "properties": {
         "path": {"type": "string", "description": f"File relative to the workspace, e.g. '{EXAMPLE_FILE}'"}},
         "required": ["path"]}},
]
LISTING = "config.json\nhello.txt\nmemo.md\nsample.txt\ntodo.md"
MISSPELLED, MEANT = "meom.md", "memo.md"
NOT_FOUND = json.dumps({"ok": False, "error": "not_found", "message": f"path '{MISSPELLED}' does not exist",
                        "hint": f"nearest existing names: {MEANT}"})


def _exchange(task: str, said: str, call: dict, result: str, is_error: bool = False) -> list:
    """A history in which the model already made ``call`` and got ``result`` back."""
    use = {"type": "tool_use", "id": "toolu_doctor_01", **call}
    return [{"role": "user", "content": task},
            {"role": "assistant", "content": [{"type": "text", "text": said}, use]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": result,
                                          "is_error": is_error}]}]


# name: (messages, whether the tool table goes along)
PROBES = {
    "hello": ([{"role": "user", "content": "Say hello in one short sentence."}], False),
    "list": ([{"role": "user", "content": "List the files in the workspace"}], True),
    "read two": ([{"role": "user", "content": "Read memo.md and todo.md and summarise them"}], True),
    "answer": (_exchange("How many files are in the workspace?", "I'll list the workspace first.",
                         {"name": "list_files", "input": {"path": "."}}, LISTING), True),
    "recover": (_exchange("Summarise memo.md", f"I'll read {MISSPELLED}.",
                          {"name": "read_file", "input": {"path": MISSPELLED}}, NOT_FOUND, is_error=True), True),
}


# ---------------------------------------------------------------- asking

@dataclass
class Probe:
    name: str
    request: dict
    reply: anthropic.types.Message | None = None
    error: str = ""
    seconds: float = 0.0

    @property
    def text(self) -> str:
        return "".join(block.text for block in self.reply.content if block.type == "text") if self.reply else ""

    @property
    def cut(self) -> bool:
        return bool(self.reply) and self.reply.stop_reason == "max_tokens"

    def calls(self) -> list[tuple[str, dict, str]]:
        """(name, input, how): its complete tool_use blocks ("tool_use"), then the calls in its text ("text")."""
        if not self.reply:
            return []
        blocks = list(self.reply.content)
        # A tool_use that is the last block of a cut reply was cut itself: its input is unfinished.
        complete = [block for index, block in enumerate(blocks) if block.type == "tool_use"
                    and not (self.cut and index == len(blocks) - 1)]
        # A server may send an input that is not an object: judged as a call with no arguments.
        return ([(block.name, block.input if isinstance(block.input, dict) else {}, "tool_use") for block in complete]
                + [(name, arguments, "text") for name, arguments in calls_in_text(self.text)])


def ask(client, model: str, name: str) -> Probe:
    messages, with_tools = PROBES[name]
    request = {"model": model, "max_tokens": MAX_TOKENS, "system": SYSTEM, "messages": messages,
               **({"tools": TOOLS} if with_tools else {})}
    probe = Probe(name, request)
    started = time.perf_counter()
    try:
        probe.reply = client.messages.create(**request)
    except anthropic.APIError as error:
        probe.error = explain_api_error(error)
    probe.seconds = time.perf_counter() - started
    return probe


def calls_in_text(text: str) -> list[tuple[str, dict]]:
    """Tool calls written as JSON in a reply's text: an object naming one of the doctor's tools,
    with its arguments (under "arguments", "input" or "parameters"), anywhere in the text."""
    names, found = {tool["name"] for tool in TOOLS}, []
    for value in objects_in(text):
        if value.get("name") in names:
            arguments = next((value[key] for key in ("arguments", "input", "parameters") if key in value), {})
            found.append((value["name"], arguments if isinstance(arguments, dict) else {}))
    return found


# ---------------------------------------------------------------- judging

@dataclass
class Check:
    name: str          # what is checked, as the table says it
    value: str         # "yes", "no", or "-" when the replies gave nothing to judge
    good: bool | None  # whether that is what the course needs (None: not judged)
    saw: str           # what the model did, in a few words (at most SAW characters)
    seconds: float | None = None  # the time of the one call it was judged on, if one
    meaning: str = ""  # what a failure means for the course, one sentence


@dataclass
class Diagnosis:
    model: str
    where: str
    probes: list[Probe] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return all(check.good is not False for check in self.checks)


def yes(flag: bool) -> str:
    return "yes" if flag else "no"


def not_judged(name: str, p: Probe) -> Check:
    return Check(name, "-", None, p.error or "no call to judge", p.seconds)


def check_answers(p: Probe) -> Check:
    if p.error:
        return Check("answers at all", "no", False, p.error, p.seconds)
    answered = bool(p.text.strip())
    return Check("answers at all", yes(answered), answered, f"{len(p.text.split())} words, {p.reply.stop_reason}",
                 p.seconds, "it sent no text: check the model's name and the server's log")


def check_tool_use(p: Probe) -> Check:
    uses = [name for name, _, how in p.calls() if how == "tool_use"]
    saw = (f"called {uses[0]}" if uses else "wrote the call as text" if p.calls()
           else p.error or f"no call ({p.reply.stop_reason})")
    return Check("returns tool_use blocks", yes(bool(uses)), bool(uses), saw, p.seconds,
                 "no tool_use block: check that the model and its chat template support tools "
                 "(llama.cpp: start llama-server with --jinja)")


def check_parallel(p: Probe) -> Check:
    calls = p.calls()
    if not calls:
        return not_judged("calls two tools in one reply", p)
    return Check("calls two tools in one reply", yes(len(calls) >= 2), len(calls) >= 2,
                 f"{len(calls)} call{'s' if len(calls) != 1 else ''} in one reply", p.seconds,
                 "one call a reply: tasks take more turns, nothing else breaks")


def check_names(p: Probe) -> Check:
    paths = [arguments.get("path") for _, arguments, _ in p.calls()]
    if not paths:
        return not_judged("uses the names the task gives", p)
    other = [path for path in paths if path not in ("memo.md", "todo.md")]
    saw = ("read " + ", ".join(dict.fromkeys(paths)) if not other else
           "a call with no path" if other[0] is None else
           f"read {other[0]}: an example" if other[0] == EXAMPLE_FILE else f"read {other[0]}: not in the task")
    return Check("uses the names the task gives", yes(not other), not other, saw, p.seconds,
                 "it reads or writes names the task did not give: check what each run touched")


def check_ends(probes: list[Probe], answer: Probe) -> Check:
    cut = [p for p in probes if p.cut]
    after_a_call = [p for p in cut if p.calls()]
    ends = answer.reply is not None and answer.reply.stop_reason == "end_turn" and not cut
    meaning = ("its replies run on until max_tokens cuts them: a stage sees a cut reply "
               "(the ladder's echo and rambling rows show what each stage does with one)")
    if ends:
        saw = "end_turn"
    elif cut and len(after_a_call) == len(cut):
        saw = f"cut after a full call: {len(cut)} of {len(probes)}"
    elif cut:
        saw = f"cut at max_tokens: {len(cut)} of {len(probes)}"
    else:
        saw = answer.error or f"stop_reason {answer.reply.stop_reason}"
        meaning = f"it ended with {answer.reply.stop_reason if answer.reply else 'an error'}, not end_turn: " \
                  "a stage stops there"
    return Check("ends its turn", yes(ends), ends, saw, answer.seconds, meaning)


def check_answers_from_result(p: Probe) -> Check:
    if not p.reply:
        return not_judged("answers from a tool result", p)
    copied = copied_share(p.text, LISTING) >= 0.5
    counted = any(word in p.text.lower() for word in ("5", "five"))
    saw = ("repeated the tool result back" if copied else "said how many" if counted
           else "made another call instead" if p.calls() else "did not say how many")
    return Check("answers from a tool result", yes(counted and not copied), counted and not copied, saw, p.seconds,
                 "it does not answer from what a tool returned: expect wrong answers, and check them")


def check_text_calls(probes: list[Probe]) -> Check:
    written = [p for p in probes if any(how == "text" for _, _, how in p.calls())]
    return Check("writes calls as text", yes(bool(written)), not written,
                 f"in {len(written)} of {len(probes)} replies" if written else "none", None,
                 "calls written as text: s01 to s03 take such a reply for an answer; s04 runs the calls")


def check_echo(probes: list[Probe]) -> Check:
    echoing = [p for p in probes if p.text.strip() and repeats_the_prompt(
        p.text, system=p.request["system"], tools=p.request.get("tools", []), messages=p.request["messages"])]
    return Check("echoes the prompt", yes(bool(echoing)), not echoing,
                 f"copied the prompt: {len(echoing)} of {len(probes)}" if echoing else "none", None,
                 "the model is repeating its prompt: it may not support chat or tools; check the model "
                 "and its chat template")


def check_recovers(p: Probe) -> Check:
    calls = [(name, arguments.get("path")) for name, arguments, _ in p.calls()]
    recovered = ("read_file", MEANT) in calls
    saw = (f"read {MEANT}, as the hint says" if recovered else
           f"sent read_file {MISSPELLED} again" if ("read_file", MISSPELLED) in calls else
           f"called {calls[0][0]} {calls[0][1]}" if calls else p.error or "no call")
    return Check("recovers from an actionable error", yes(recovered), recovered, saw, p.seconds,
                 "it does not use an error's hint: a run gets no further than its first failed call")


def where_it_runs(model: str) -> str:
    if is_offline(model):
        return "the offline model, in process"
    base = os.environ.get("ANTHROPIC_BASE_URL")
    return f"the server at {base}" if base else "the Anthropic API"


def diagnose(model: str | None = None, client=None, where: str | None = None) -> Diagnosis:
    """Send the five probes to ``model`` and judge the replies. A model that cannot be reached at all
    is a CourseError (one line saying why); any later failure is a row of the table."""
    model = resolve_model(model)
    client = client or make_client(model, max_retries=1)
    diagnosis = Diagnosis(model, where or where_it_runs(model))
    first = ask(client, model, "hello")
    if first.error:
        raise CourseError(f"{model} on {diagnosis.where} did not answer: {first.error}")
    probes = {"hello": first, **{name: ask(client, model, name) for name in PROBES if name != "hello"}}
    diagnosis.probes = list(probes.values())
    diagnosis.checks = [
        check_answers(probes["hello"]), check_tool_use(probes["list"]), check_parallel(probes["read two"]),
        check_names(probes["read two"]), check_ends(diagnosis.probes, probes["answer"]),
        check_answers_from_result(probes["answer"]), check_text_calls(diagnosis.probes),
        check_echo(diagnosis.probes), check_recovers(probes["recover"]),
    ]
    return diagnosis


# ---------------------------------------------------------------- the table

WIDTH = 80
SAW = 30  # the widest "what the model did" the table shows


def table(diagnosis: Diagnosis) -> str:
    """The diagnosis as a learner reads it: one check a line, within 80 columns, then what each failure means."""
    lines = [f"course doctor: {diagnosis.model} ({diagnosis.where})", "",
             f"  {'check':<34}{'result':<7}{'what the model did':<{SAW + 1}}{'time':>6}"]
    for check in diagnosis.checks:
        mark = {True: "ok", False: "!!", None: "  "}[check.good]
        seconds = f"{check.seconds:.2f}s" if check.seconds is not None else ""
        saw = check.saw if len(check.saw) <= SAW else check.saw[:SAW - 1] + "…"
        lines.append(f"  {check.name:<34}{mark + ' ' + check.value:<7}{saw:<{SAW + 1}}{seconds:>6}".rstrip())
    times = [probe.seconds for probe in diagnosis.probes]
    lines += ["", f"{len(times)} calls: median {statistics.median(times):.2f} s, longest {max(times):.2f} s.", ""]
    failed = [check for check in diagnosis.checks if check.good is False]
    if not failed:
        lines.append("Every check passed: the stages can rely on this model's replies.")
    for check in failed:
        lines += wrapped(f"!! {check.name}: {check.meaning}")
    return "\n".join(lines)


def wrapped(text: str) -> list[str]:
    # Split at spaces only, as a person reads a sentence: a long path or a hyphenated word stays whole.
    return textwrap.wrap(text, WIDTH, subsequent_indent="   ", break_long_words=False, break_on_hyphens=False)


def as_json(diagnosis: Diagnosis) -> dict:
    return {"model": diagnosis.model, "where": diagnosis.where, "healthy": diagnosis.healthy,
            "checks": [{"check": c.name, "value": c.value, "good": c.good, "saw": c.saw, "seconds": c.seconds}
                       for c in diagnosis.checks],
            "seconds": [round(probe.seconds, 4) for probe in diagnosis.probes]}
