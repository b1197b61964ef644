"""Stage s03: stop conditions. The loop stops for a named reason: the model's end, a turn limit, a token budget,
no progress (a call again and again, failure after failure), a cut, refused or unknown stop reason; a paused turn
goes on; metrics go to the runs log. It fixes a loop that runs, and bills, forever ("An AI agent is a while loop inside").
    take_turn:  limits? ─► stop   ask ─► record ─► paused? ─► go on   cut, refused, unknown? ─► stop
                tool_use? ─no─► stop (end_turn)   act ─► write back ─► no progress? ─► stop
Run it:  .venv/bin/python s03/agent.py "List the files" --max-turns 5 --token-budget 20000
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import anthropic

import course

STAGE = "s03"
MAX_TOKENS = 1024

# --8<-- [start:tool-table]
SYSTEM_PROMPT = (
    "You are an agent working in a small project folder, the workspace. "
    "Use the tools to look before you answer: never guess what a file contains. "
    "Before each tool call, say in one sentence why you make it."
)

# The descriptions are written for the model, not for a colleague: when to use the tool,
# the form of its arguments, and what comes back.
TOOLS = [
    {"name": "list_files",
     "description": "List the entries of a folder in the workspace, one name a line; folders end with '/'. "
                    "Use it to find out which files exist before reading them.",
     "input_schema": {"type": "object", "required": [], "properties": {
         "path": {"type": "string", "description": "Folder relative to the workspace, e.g. '.'"}}}},
    {"name": "read_file",
     "description": "Read one UTF-8 text file of the workspace and return its whole content.",
     "input_schema": {"type": "object", "required": ["path"], "properties": {
         "path": {"type": "string", "description": "File relative to the workspace, e.g. 'memo.md'"}}}},
    {"name": "write_file",
     "description": "Create or overwrite one text file in the workspace with the given content.",
     "input_schema": {"type": "object", "required": ["path", "content"], "properties": {
         "path": {"type": "string", "description": "File relative to the workspace, e.g. 'report.txt'"},
         "content": {"type": "string", "description": "The complete new content of the file"}}}},
    {"name": "search_files",
     "description": "Find the files of the workspace whose text contains a word (case-insensitive). "
                    "Returns the matching paths, one a line, or '(no matches)'.",
     "input_schema": {"type": "object", "required": ["text"], "properties": {
         "text": {"type": "string", "description": "The word or phrase to look for"}}}},
    {"name": "calculate",
     "description": "Evaluate an arithmetic expression with + - * / // % ** and parentheses, e.g. '1250 * "
                    "16'. Use it instead of doing arithmetic in your head.",
     "input_schema": {"type": "object", "required": ["expression"], "properties": {
         "expression": {"type": "string", "description": "The expression, e.g. '(3 + 4) * 2'"}}}},
]
# --8<-- [end:tool-table]


# --8<-- [start:tools]
# Every tool takes the workspace first, then the arguments the model sent, and returns text.
def list_files(workspace: Path, path: str = ".") -> str:
    folder = workspace / path
    return "\n".join(course.shown(entry.name) + ("/" if entry.is_dir() else "") for entry in sorted(folder.iterdir()))


def read_file(workspace: Path, path: str) -> str:
    return (workspace / path).read_text(encoding="utf-8")


def write_file(workspace: Path, path: str, content: str) -> str:
    target = workspace / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    return f"wrote {len(content)} characters to {path}"


def search_files(workspace: Path, text: str) -> str:
    matches = [course.shown(str(file.relative_to(workspace))) for file in sorted(workspace.rglob("*"))
               if file.is_file() and text.lower() in file.read_text(encoding="utf-8", errors="ignore").lower()]
    return "\n".join(matches) or "(no matches)"


def calculate(workspace: Path, expression: str) -> str:
    # Read as a syntax tree, never eval(): numbers and + - * / // % ** only, and no result too big to print.
    return course.calculator(expression)
# --8<-- [end:tools]


# --8<-- [start:dispatcher]
TOOL_FUNCTIONS = {
    "list_files": list_files,
    "read_file": read_file,
    "write_file": write_file,
    "search_files": search_files,
    "calculate": calculate,
}


def run_tool(workspace: Path, name: str, arguments) -> tuple[str, bool]:
    """Run one tool call. Returns (text for the model, is_error); a failure never escapes."""
    function = TOOL_FUNCTIONS.get(name)
    if function is None:
        return f"Error: unknown tool {name!r}", True
    try:
        return function(workspace, **arguments), False
    except Exception as error:  # the model gets to read what went wrong; the loop goes on
        return f"Error: {type(error).__name__}: {error}", True


def tool_result(workspace: Path, call) -> dict:
    """The tool_result block that answers one tool_use block, matched by its id."""
    text, is_error = run_tool(workspace, call.name, call.input)
    return {"type": "tool_result", "tool_use_id": call.id, "content": text, "is_error": is_error}
# --8<-- [end:dispatcher]


# --8<-- [start:ask]
def ask(client: anthropic.Anthropic, model: str, messages: list, max_tokens: int | None = None) -> anthropic.types.Message:
    """One model call: the whole history and the tool table go out, one reply comes back."""
    return client.messages.create(model=model, max_tokens=max_tokens or MAX_TOKENS, system=SYSTEM_PROMPT,
                                  tools=TOOLS, messages=messages)


def assistant_message(reply: anthropic.types.Message) -> dict:
    """The reply as it goes into the history: all of its blocks, text and tool_use alike, as sent."""
    return {"role": "assistant", "content": [block.to_dict() for block in reply.content]}


def tool_calls(reply: anthropic.types.Message) -> list:
    return [block for block in reply.content if block.type == "tool_use"]


def text_of(reply: anthropic.types.Message) -> str:
    return "".join(block.text for block in reply.content if block.type == "text")
# --8<-- [end:ask]


# --8<-- [start:state]
# Why the loop goes on, and why it ended: named values, not strings to parse.
Transition = Literal["tool_results_written", "turn_paused"]
StopReason = Literal["end_turn", "max_turns", "token_budget", "no_progress", "max_tokens", "refusal", "stop_sequence",
                     "api_error", "model_context_window_exceeded", "kept_pausing", "unknown_stop_reason"]


@dataclass(frozen=True)
class Limits:
    """When to stop a run that does not stop itself. The chapter explains each default."""

    max_turns: int = 40                # model calls; the tutor's tasks take 2 to 4
    token_budget: int = 300_000        # input + output tokens, as the API reports them
    max_repeats: int = 3               # the same call (name and arguments) this many times in a row
    max_consecutive_errors: int = 3    # this many failed tool calls in a row

    def __post_init__(self):
        course.require_whole_numbers(self)  # a nonsense limit is refused before any call is made


@dataclass
class LoopState:
    """Everything the loop knows, in one place. The model remembers nothing: this is the memory."""

    messages: list
    turn_count: int = 0
    transition_reason: Transition | None = None
    transitions: list[Transition] = field(default_factory=list)
    usage: dict = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0})
    stop_reason: StopReason | None = None
    answer: str = ""
    transcript: Path | None = None   # where the state is saved, step by step (None: not saved)
    saved_messages: int = 0          # how much of the history and of the transitions the transcript holds
    saved_transitions: int = 0
    explanation: str = ""   # why the run ended, in one line


@dataclass
class RunResult:
    stage: str
    model: str
    answer: str
    stop_reason: StopReason
    explanation: str
    turns: int
    usage: dict
    workspace: str
    messages: list
    transitions: list[Transition]
    transcript: str        # the saved run: resume it with --resume RUN (its id, the file's stem)
    tool_calls: dict       # {tool: calls}
    tool_errors: dict      # {tool: failed calls}
    duration_s: float
# --8<-- [end:state]


# --8<-- [start:turn]
def take_turn(state: LoopState, client: anthropic.Anthropic, model: str, workspace: Path, limits: Limits, trace) -> bool:
    """One turn: check the limits, ask, record, act, write back. Returns whether the loop goes on."""
    if limit := limit_reached(state, limits):
        return stop(state, limit[0], "", trace, limit[1])
    try:
        reply = ask(client, model, state.messages)                    # 1. ask
    except anthropic.APIError as error:  # retries are spent: end the run, keep the history
        return stop(state, "api_error", "", trace, course.explain_api_error(error))
    state.turn_count += 1
    add_usage(state.usage, reply.usage)
    state.messages.append(assistant_message(reply))                   # 2. record the reply
    trace("assistant", state.messages[-1])
    save(state)  # the calls are on disk before they run: a killed run will not run them twice
    calls = tool_calls(reply)                                         # 3. does it ask for tools?
    if reply.stop_reason in ("pause_turn", "compaction") and not calls:  # the reply goes back as it is, to go on
        paused = course.kept_pausing(state.transitions, reply.stop_reason)  # "" unless it pauses again and again
        return stop(state, "kept_pausing", text_of(reply), trace, paused) if paused else carry_on(state, "turn_paused", trace)
    if reply.stop_reason not in ("end_turn", "tool_use", "stop_sequence", None):  # cut (its calls not run), refused, unknown
        why = why_it_ended(reply, state.messages[:-1])
        answer_without_running(state, tool_calls(reply), f"not run: the reply ended with {reply.stop_reason}")
        ended = reply.stop_reason if reply.stop_reason in CUT_OR_REFUSED else "unknown_stop_reason"
        return stop(state, ended, text_of(reply), trace, why)
    if not calls:
        return stop(state, reply.stop_reason, text_of(reply), trace)  # the model's own end
    results = [tool_result(workspace, call) for call in calls]       # 4. act, on every call
    state.messages.append({"role": "user", "content": results})      # 5. write every result back
    trace("tool_results", state.messages[-1])
    return checked_carry_on(state, limits, reply, "tool_results_written", trace)


def checked_carry_on(state: LoopState, limits: Limits, reply: anthropic.types.Message, reason: Transition, trace) -> bool:
    if stuck := no_progress(state.messages, limits):
        return stop(state, "no_progress", text_of(reply), trace, stuck)
    return carry_on(state, reason, trace)


def carry_on(state: LoopState, reason: Transition, trace) -> bool:
    state.transition_reason = reason
    state.transitions.append(reason)
    trace("transition", reason)
    return True


CUT_OR_REFUSED = {
    "max_tokens": "the reply was cut at max_tokens; raise MAX_TOKENS or ask for a shorter answer",
    "model_context_window_exceeded": "the reply was cut: the context window is full; start again with less",
    "refusal": "",  # the API says why in stop_details (course.why_refused)
}


def why_it_ended(reply: anthropic.types.Message, messages: list) -> str:
    explained = CUT_OR_REFUSED.get(reply.stop_reason) or course.unknown_stop_reason(reply.stop_reason)
    return course.why_refused(reply) if reply.stop_reason == "refusal" else explained


def limit_reached(state: LoopState, limits: Limits) -> tuple[StopReason, str] | None:
    """The turn limit and the token budget, checked before each call: the next call is the cost."""
    # >>> exercise 1: Stop before a limit is passed
    if state.turn_count >= limits.max_turns:
        return "max_turns", (f"turn limit: {state.turn_count} of {limits.max_turns} turns taken; "
                             "raise max_turns if the task needs more")
    used = state.usage["input_tokens"] + state.usage["output_tokens"]
    if used >= limits.token_budget:
        return "token_budget", (f"token budget: {used} tokens used, the budget is {limits.token_budget}; "
                                "raise token_budget if the task is worth more")
    return None
    # <<< exercise 1


def no_progress(messages: list, limits: Limits) -> str | None:
    """The same call again and again, or failure after failure: read off the history itself."""
    # >>> exercise 2: Detect no progress
    calls = [(name, json.dumps(arguments, sort_keys=True, ensure_ascii=False))  # the explanation shows the text as written
             for message in messages if message["role"] == "assistant"
             for name, arguments in calls_made(message)]
    repeated = calls[-limits.max_repeats:]
    if len(repeated) == limits.max_repeats and len(set(repeated)) == 1:
        name, arguments = repeated[0]
        return f"no progress: {name}({course.escape_terminal_controls(arguments)}) called {limits.max_repeats} times in a row"
    failed = [block.get("is_error", False) for block in tool_results_in(messages)]
    recent = failed[-limits.max_consecutive_errors:]
    if len(recent) == limits.max_consecutive_errors and all(recent):
        return f"no progress: the last {limits.max_consecutive_errors} tool calls failed"
    return None
    # <<< exercise 2


def calls_made(message: dict) -> list[tuple[str, dict]]:
    """The calls of one assistant message, as (name, arguments): its tool_use blocks."""
    return [(block["name"], block["input"]) for block in message["content"] if block["type"] == "tool_use"]


def answer_without_running(state: LoopState, calls: list, why: str) -> None:
    """Every tool_use gets a tool_result, even one we will not run, so the history stays valid."""
    if calls:
        state.messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call.id, "content": why, "is_error": True} for call in calls]})


def tool_results_in(messages: list) -> list:
    return [block for message in messages if message["role"] == "user" and isinstance(message["content"], list)
            for block in message["content"] if block.get("type") == "tool_result"]


def stop(state: LoopState, reason: StopReason, answer: str, trace, explanation: str | None = None) -> bool:
    state.stop_reason, state.answer, state.explanation = reason, answer, explanation or reason
    trace("stop", state.explanation)
    return False


def add_usage(total: dict, usage) -> None:
    total["input_tokens"] += usage.input_tokens
    total["output_tokens"] += usage.output_tokens
# --8<-- [end:turn]


# --8<-- [start:save]
# State you can save is a run you can resume. The file format is course.runtime.transcript's; the idea is here.
INTERRUPTED = ("interrupted: the run was stopped after this call was made and before its result was saved, "
               "so it may or may not have happened; check before repeating it")


def save(state: LoopState, **facts) -> None:
    """Append what changed since the last save to the transcript, durably. A run killed after this
    line is resumed from it; ``facts`` (the stage, model and workspace) go on the first line."""
    if state.transcript is None:
        return
    # "from": where in the history this line's messages go (0 after a stage rewrote the history).
    course.runtime.transcript.append(state.transcript, dict(
        facts, turn=state.turn_count, usage=state.usage, stop_reason=state.stop_reason,
        transitions=state.transitions[state.saved_transitions:],
        messages=state.messages[state.saved_messages:], **{"from": state.saved_messages}))
    state.saved_messages, state.saved_transitions = len(state.messages), len(state.transitions)


def start(task: str | None, resume, transcript, trace) -> tuple[LoopState, dict]:
    """A new run's state, or an earlier run's (``resume``) with the line that names its model and workspace."""
    if resume:
        state, first = resumed(resume)
        trace("resumed", state)  # the trace goes on counting turns and tokens from where the run stopped
        return state, first
    if not task:
        raise course.CourseError("give a task, or resume an earlier run")
    state = LoopState(messages=[{"role": "user", "content": task}])
    state.transcript = None if transcript is False else Path(transcript or course.runtime.transcript.new_path(STAGE))
    return state, {}


def resumed(which) -> tuple[LoopState, dict]:
    """An earlier run's state, loaded from its transcript and ready to go on; and the line that last named it."""
    saved = course.runtime.transcript.load(course.runtime.transcript.find(which, STAGE))  # this stage's runs only
    messages = saved.history()
    transitions = [reason for record in saved.records for reason in record["transitions"]]
    state = LoopState(messages=messages, turn_count=saved.last["turn"], transitions=transitions,
                      usage=dict(saved.last["usage"]), transcript=saved.path,
                      saved_messages=len(messages), saved_transitions=len(transitions))
    answer_interrupted_calls(state, saved.last["stop_reason"])
    return state, saved.named


def answer_interrupted_calls(state: LoopState, stop_reason) -> None:
    """The calls of a run killed while they ran are answered as interrupted, never run again: a
    write or a command happens twice only if the model, told so, decides to repeat it."""
    last = state.messages[-1]
    if last["role"] == "user" and stop_reason != "refusal":  # a refused turn is never sent again as it is
        return  # the results are saved (or it is the task): the model is simply asked again
    calls = [block for block in last["content"] if block["type"] == "tool_use"]
    if not calls:
        raise course.CourseError(f"this run ended with the model's own reply ({stop_reason or 'end_turn'}); "
                                 "there is nothing to go on from: start a new run")
    state.messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call["id"], "content": INTERRUPTED, "is_error": True} for call in calls]})
# --8<-- [end:save]


# --8<-- [start:metrics]
def tool_metrics(messages: list) -> tuple[dict, dict]:
    """Calls and failures per tool, from the history: which tool fails how often ("Building an agent loop yourself")."""
    names = {block["id"]: block["name"] for message in messages if message["role"] == "assistant"
             for block in message["content"] if block["type"] == "tool_use"}
    results = tool_results_in(messages)
    return (dict(Counter(names[block["tool_use_id"]] for block in results)),
            dict(Counter(names[block["tool_use_id"]] for block in results if block.get("is_error"))))


def log_run(result: "RunResult", task: str, runs_log) -> None:
    # A resumed run is logged again when it ends, its numbers covering the whole run ("run" names it).
    record = {"run": course.runtime.transcript.run_id(result.transcript) if result.transcript else None,
              "stage": result.stage, "model": result.model, "task": task, "stop_reason": result.stop_reason,
              "turns": result.turns, "tool_calls": result.tool_calls, "tool_errors": result.tool_errors,
              "usage": result.usage, "duration_s": result.duration_s}
    if runs_log is not False:
        course.runtime.runlog.append(record, runs_log)
# --8<-- [end:metrics]


# --8<-- [start:run]
def run(task: str | None = None, *, client=None, model: str | None = None, workspace=None, trace=None,
        limits: Limits = Limits(), runs_log=None, resume=None, transcript=None) -> RunResult:
    """Take turns until one says stop, saving the state after each step; the result says why, and the
    runs log remembers it. ``resume`` goes on with an earlier run (a run id, a transcript, or "last")."""
    trace = trace or (lambda kind, payload: None)
    state, first = start(task, resume, transcript, trace)
    model = course.resolve_model(model or first.get("model"))
    client = client or course.make_client(model)
    workspace = course.prepare_workspace(workspace or first.get("workspace"))
    save(state, stage=STAGE, model=model, workspace=str(workspace))  # a line that names the run, or its resumption
    started = time.perf_counter()

    while take_turn(state, client, model, workspace, limits, trace):
        save(state)
    save(state)  # the stop too: the transcript says how the run ended

    calls, errors = tool_metrics(state.messages)
    result = RunResult(stage=STAGE, model=model, answer=state.answer, stop_reason=state.stop_reason,
                       explanation=state.explanation, turns=state.turn_count, usage=state.usage, workspace=str(workspace),
                       messages=state.messages, transitions=state.transitions, transcript=str(state.transcript or ""), tool_calls=calls,
                       tool_errors=errors, duration_s=round(time.perf_counter() - started, 4))
    log_run(result, task, runs_log)
    return result
# --8<-- [end:run]


def main(argv=None) -> int:
    return course.stage_main(STAGE, run, argv, limits=Limits)


if __name__ == "__main__":
    sys.exit(main())
