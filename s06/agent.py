"""Stage s06: permission gates. The harness, not the model, decides what may run.

Every tool has a risk class (read, write, destructive, execute); one decide() checks the rules, deny first, then
ask, then allow, else the class's default (permissions.py). "Ask" puts exactly one thing to a person, shown
exactly; with no terminal, ask means deny. A denial goes back to the model as an is_error result that says why
and what to do instead; each decision is audited. The gate decides on what the support package reads: a command
by the shell's own grammar, a path by the one resolver the file tools (tools.py) open it with. Every command
runs confined by the kernel; where it cannot be, none runs without a person. The failure it fixes: irreversible
actions decided by the model; a prompt that says "do not delete" is no defence ("Building an agent loop yourself").
    act:  call ─► valid? ─► gate.check: read the call ─► decide: deny, ask, allow, default ─► a person? ─► audit
                                 └─ a path that leads out, a deny, or an ask with no one to ask ─► is_error: why, instead
Run it:  .venv/bin/python s06/agent.py "Tidy up the workspace, then write the list of files to report.txt" --model offline-reckless
"""

from __future__ import annotations

import difflib
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Sequence

import anthropic

import course
import course.sandbox.confinement
import course.sandbox.paths
import course.sandbox.review
import course.sandbox.shell_reading

if __package__:  # imported: s06.agent, or a student's copy of the stage
    from .permissions import RULES, Gate, ask_on_terminal
    from .tools import ToolError, calculate, delete_file, list_files, move_file, read_file, search_files, write_file
else:            # run as a script, python s06/agent.py: its folder is first on sys.path
    from permissions import RULES, Gate, ask_on_terminal
    from tools import ToolError, calculate, delete_file, list_files, move_file, read_file, search_files, write_file
# --8<-- [start:constants]
STAGE = "s06"
MAX_TOKENS = 1024
# A reply cut before any whole call is asked again with twice the room, up to this (three more calls at
# most, each billed): every current Claude model can write 8192 tokens.
MAX_TOKENS_CEILING = 8192
MAX_RESULT_CHARS = 4000  # longer tool output is cut: it would ride along in every later request
KEEP_RESULTS = 2          # the latest tool results stay whole; older ones are masked
CLEAR_TRIGGER = 8_000     # estimated prompt tokens above which old tool results are masked...
CLEAR_AT_LEAST = 3_000    # ...in one batch, and only if it frees at least this many estimated tokens
SUMMARY_THRESHOLD = 30_000  # estimated prompt tokens above which older turns are summarised
KEEP_TURNS = 4            # the latest turns that a summary leaves whole
SUMMARY_HEADING = "[Summary of the earlier turns, written to save context]"
CACHE_BREAKPOINT = {"type": "ephemeral"}  # the prompt up to a block marked so is cached (5 minutes)
COMMAND_TIMEOUT_S = 5         # a command still running after this is killed
COMMAND_OUTPUT_CAP = 20_000   # bytes of a command's output kept; a file it writes may be 50 times that
# --8<-- [end:constants]
# --8<-- [start:tool-table]
SYSTEM_PROMPT = (
    "You are an agent working in a small project folder, the workspace. "
    "Use the tools to look before you answer: never guess what a file contains. "
    "Before each tool call, say in one sentence why you make it."
)

# Descriptions written for the model, not for a colleague: when to use a tool, its arguments, what comes back.
TOOLS = [
    {"name": "list_files",
     "description": "List the entries of a folder in the workspace, one name a line; folders end with '/'. "
                    "Use it to find out which files exist before reading them.",
     "input_schema": {"type": "object", "required": [], "properties": {
         "path": {"type": "string", "description": "Folder relative to the workspace, e.g. '.'"}}}},
    {"name": "read_file",
     "description": "Read one UTF-8 text file of the workspace. Long files come back cut, with a note "
                    "saying which offset to pass to read on.",
     "input_schema": {"type": "object", "required": ["path"], "properties": {
         "path": {"type": "string", "description": "File relative to the workspace, e.g. 'memo.md'"},
         "offset": {"type": "integer", "minimum": 0, "description": "Character to start from (default 0)"}}}},
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
    {"name": "delete_file",
     "description": "Delete one file of the workspace. Irreversible: a person may have to approve it.",
     "input_schema": {"type": "object", "required": ["path"], "properties": {
         "path": {"type": "string", "description": "File relative to the workspace"}}}},
    {"name": "move_file",
     "description": "Move or rename one file inside the workspace. It replaces an existing destination.",
     "input_schema": {"type": "object", "required": ["source", "destination"], "properties": {
         "source": {"type": "string", "description": "File relative to the workspace"},
         "destination": {"type": "string", "description": "New path relative to the workspace"}}}},
    {"name": "run_command",
     "description": "Run a shell command in the workspace folder and return its exit code and output. "
                    f"Killed after {COMMAND_TIMEOUT_S} s; output cut at {COMMAND_OUTPUT_CAP} bytes. Plain commands "
                    f"({course.sandbox.shell_reading.SAFE_LIST} on files of the workspace, joined by && || ; |) run; "
                    "anything else needs a person's approval.",
     "input_schema": {"type": "object", "required": ["command"], "properties": {
         "command": {"type": "string", "description": "e.g. 'ls -l' or 'wc -l memo.md'"}}}},
    {"name": "calculate",
     "description": "Evaluate an arithmetic expression with + - * / // % ** and parentheses, e.g. '1250 * "
                    "16'. Use it instead of doing arithmetic in your head.",
     "input_schema": {"type": "object", "required": ["expression"], "properties": {
         "expression": {"type": "string", "description": "The expression, e.g. '(3 + 4) * 2'"}}}},
]
# --8<-- [end:tool-table]


# --8<-- [start:run-command]
def run_command(workspace: Path, command: str, hidden: Sequence[Path] = ()) -> str:
    """Run a command confined by the kernel (course.sandbox.confinement): the workspace the only folder it may
    write, ``hidden`` (the files a deny rule covers) unreadable, no network, bounded in time and output,
    no secrets and no startup files in its environment, and no process of it left running afterwards."""
    finished = course.sandbox.confinement.run_confined(command, workspace, hidden=hidden, timeout_s=COMMAND_TIMEOUT_S,
                                               output_cap=COMMAND_OUTPUT_CAP,
                                               environment=course.sandbox.confinement.command_environment(workspace))
    if finished.timed_out:
        raise ToolError("timeout", f"the command ran longer than {COMMAND_TIMEOUT_S} s and was killed",
                        "run something quicker, or on fewer files")
    ended = f"\n[{finished.stragglers} process(es) it left running were ended]" if finished.stragglers else ""
    return f"exit code {finished.exit_code}\n{finished.output}{ended}"
# --8<-- [end:run-command]


# --8<-- [start:dispatcher]
TOOL_FUNCTIONS = {
    "list_files": list_files,
    "read_file": read_file,
    "write_file": write_file,
    "search_files": search_files,
    "delete_file": delete_file,
    "move_file": move_file,
    "run_command": run_command,
    "calculate": calculate,
}
SCHEMAS = {tool["name"]: tool["input_schema"] for tool in TOOLS}

# --8<-- [start:call-tool]
def run_tool(workspace: Path, name: str, arguments, gate: Gate) -> tuple[str, bool]:
    """Run one tool call. Returns (text for the model, is_error); a failure never escapes."""
    try:
        output = call_tool(workspace, name, arguments, gate)
    except (ToolError, course.sandbox.paths.Refused) as error:  # the resolver's refusals are actionable too
        return failure(error.kind, error.message, error.hint), True
    except Exception as error:  # unforeseen: still one line for the model, never a stack trace
        return failure("tool_failed", f"{name} failed: {type(error).__name__}: {error}",
                       "check the arguments, or reach the goal another way"), True
    output = cut_to_fit(course.secrets_hidden(output), name, arguments)  # no key or token goes back to the model
    return json.dumps({"ok": True, "output": output}, ensure_ascii=False), False


def call_tool(workspace: Path, name: str, arguments, gate: Gate):
    """Check the name, then the arguments, then the gate, and only then run the tool."""
    if name not in TOOL_FUNCTIONS:
        closest = difflib.get_close_matches(str(name), TOOL_FUNCTIONS, n=1, cutoff=0.4)
        raise ToolError("unknown_tool", f"there is no tool named {name!r}",
                        f"the tools are {', '.join(TOOL_FUNCTIONS)}" + (f"; the closest is {closest[0]}" if closest else ""))
    problems = course.argument_errors(SCHEMAS[name], arguments)
    if problems:
        raise ToolError("invalid_arguments", f"{name}: {'; '.join(problems)}",
                        f"{name} takes {course.describe_parameters(SCHEMAS[name])}")
    verdict = gate.check(workspace, name, arguments)  # deny, ask, allow, the default; a person; the audit
    if verdict.decision != "allow":  # the model is told why, and what to do instead
        raise ToolError("denied", f"{name} was not run: {verdict.why}", verdict.instead)
    if name == "run_command":  # what it changes beyond plain data goes to the person who approved it, or is undone
        person = gate.approver if verdict.decided_by == "person" else None
        return course.sandbox.review.run_reviewed(workspace, arguments["command"], person, lambda: TOOL_FUNCTIONS[name](
            workspace, **arguments, hidden=gate.hidden(workspace)))
    if name == "search_files":  # the files a deny rule covers stay out of its reach (and a command's, above)
        return TOOL_FUNCTIONS[name](workspace, **arguments, hidden=gate.hidden(workspace))
    return TOOL_FUNCTIONS[name](workspace, **arguments)
# --8<-- [end:call-tool]

def failure(kind: str, message: str, hint: str) -> str:
    return json.dumps({"ok": False, "error": kind, "message": message, "hint": hint}, ensure_ascii=False)


def cut_to_fit(output: str, name: str, arguments: dict) -> str:
    """Keep a result small enough for the history, and say how to see the rest."""
    if len(output) <= MAX_RESULT_CHARS:
        return output
    if name == "read_file":
        how = f"call read_file with offset={arguments.get('offset', 0) + MAX_RESULT_CHARS} to read on"
    else:
        how = "ask for less: a narrower path or a more specific search"
    return (output[:MAX_RESULT_CHARS]
            + f"\n[cut: {len(output) - MAX_RESULT_CHARS} of {len(output)} characters not shown; {how}]")


def tool_result(workspace: Path, call, gate: Gate) -> dict:
    """The tool_result block that answers one tool_use block, matched by its id."""
    text, is_error = run_tool(workspace, call.name, call.input, gate)
    return {"type": "tool_result", "tool_use_id": call.id, "content": text, "is_error": is_error}


def calls_written_as_text(text: str) -> list[tuple[str, dict]]:
    """Tool calls a model wrote as JSON in its text, as local models do ("An AI agent is a while loop
    inside"). Only a call to a real tool, with valid arguments, counts: a JSON example must not run."""
    return course.calls_in_text(text, SCHEMAS)


def text_calls_message(workspace: Path, calls: list[tuple[str, dict]], gate: Gate) -> dict:
    """Run calls found in text (through the same gate); report each result, then how to call tools properly."""
    results = [f"Result of {name} {json.dumps(arguments, ensure_ascii=False)} (written as text in your reply):\n"
               + run_tool(workspace, name, arguments, gate)[0] for name, arguments in calls]
    results.append("You wrote tool calls as JSON text; I ran them this time. Call tools through the tool "
                   "interface (tool_use blocks), not in your text.")
    return {"role": "user", "content": [{"type": "text", "text": text} for text in results]}
# --8<-- [end:dispatcher]


# --8<-- [start:ask]
def ask(client: anthropic.Anthropic, model: str, messages: list, max_tokens: int | None = None) -> anthropic.types.Message:
    """One model call. Cache breakpoints end the prefixes a later call sends again unchanged: the
    system block (tools and system never change), and those ``with_breakpoints`` puts in the history."""
    system = [{"type": "text", "text": SYSTEM_PROMPT, "cache_control": CACHE_BREAKPOINT}]
    return client.messages.create(model=model, max_tokens=max_tokens or MAX_TOKENS, system=system,
                                  tools=TOOLS, messages=with_breakpoints(messages))


def with_breakpoints(messages: list) -> list:
    """The history as sent (a copy: marks kept in the history would pile up past the API's four): a breakpoint
    on the latest block (the next call starts with all of it), and one before the first tool result still
    whole (the end of the masked part: the next batch masks only after it, so the cache is read up to there)."""
    sent = list(messages)
    first_whole = next((index for index, message in enumerate(sent) if message["role"] == "user"
                        and any(is_whole_result(block) for block in blocks_of(message))), None)
    if first_whole is not None:
        sent[first_whole - 1] = marked(sent[first_whole - 1])
    sent[-1] = marked(sent[-1])
    return sent


def marked(message: dict) -> dict:
    """A copy of the message whose last block carries a cache breakpoint."""
    blocks = blocks_of(message)  # an empty message has no block to mark
    return dict(message, content=blocks[:-1] + [dict(blocks[-1], cache_control=CACHE_BREAKPOINT)]) if blocks else message


def blocks_of(message: dict) -> list:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def is_whole_result(block: dict) -> bool:
    return block.get("type") == "tool_result" and not str(block.get("content", "")).startswith("[masked")


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
Transition = Literal["tool_results_written", "text_calls_recovered", "turn_paused"]
StopReason = Literal["end_turn", "max_turns", "token_budget", "no_progress", "max_tokens", "refusal", "stop_sequence",
                     "api_error", "model_context_window_exceeded", "kept_pausing", "unknown_stop_reason"]


@dataclass(frozen=True)
class Limits:
    """When to stop a run that does not stop itself. The chapter explains each default."""

    max_turns: int = 40                # model calls; the tutor's tasks take 2 to 4
    token_budget: int = 300_000        # input (cached or not) + output tokens, as the API reports them
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
    usage: dict = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
                                                 "cache_read_input_tokens": 0})
    stop_reason: StopReason | None = None
    answer: str = ""
    transcript: Path | None = None   # where the state is saved, step by step (None: not saved)
    saved_messages: int = 0          # how much of the history and of the transitions the transcript holds
    saved_transitions: int = 0
    explanation: str = ""   # why the run ended, in one line
    peak_prompt_tokens: int = 0   # the largest prompt sent: what must fit in the context window


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
    peak_prompt_tokens: int
# --8<-- [end:state]


# --8<-- [start:turn]
def take_turn(state: LoopState, client: anthropic.Anthropic, model: str, workspace: Path, limits: Limits, gate: Gate,
              trace) -> bool:
    """One turn: check the limits, ask, record, act, write back. Returns whether the loop goes on."""
    if limit := limit_reached(state, limits):
        return stop(state, limit[0], "", trace, limit[1])
    try:
        prune(state, client, model, trace)                            # keep the prompt small
        reply = ask_for_whole_reply(state, client, model, trace)      # 1. ask (again, with room, if cut)
        if reply.stop_reason == "model_context_window_exceeded" and not has_whole_call(reply):  # the window is full:
            add_usage(state.usage, reply.usage)                       # the cut reply is dropped, but it was billed
            prune(state, client, model, trace, full=True)             # prune whatever the triggers, and ask once more
            reply = ask_for_whole_reply(state, client, model, trace)
    except anthropic.APIError as error:  # retries are spent: end the run, keep the history
        return stop(state, "api_error", "", trace, course.explain_api_error(error))
    state.turn_count += 1
    add_usage(state.usage, reply.usage)
    state.peak_prompt_tokens = max(state.peak_prompt_tokens, prompt_size(reply.usage))
    state.messages.append(assistant_message(reply))                   # 2. record the reply
    trace("assistant", state.messages[-1])
    save(state)  # the calls are on disk before they run: a killed run will not run them twice
    trace("usage", reply.usage)                                       # the trace shows what the call cost
    calls = whole_calls(reply)                                        # 3. does it ask for tools? (whole ones)
    if reply.stop_reason in ("pause_turn", "compaction") and not calls:  # the reply goes back as it is, to go on
        paused = course.kept_pausing(state.transitions, reply.stop_reason)  # "" unless it pauses again and again
        return stop(state, "kept_pausing", text_of(reply), trace, paused) if paused else carry_on(state, "turn_paused", trace)
    recovered = reply.stop_reason in CUT and has_whole_call(reply)  # a cut reply's whole calls are used
    if reply.stop_reason not in ("end_turn", "tool_use", "stop_sequence", None) and not recovered:  # cut, refused, unknown
        why = why_it_ended(reply, state.messages[:-1])
        answer_without_running(state, tool_calls(reply), f"not run: the reply ended with {reply.stop_reason}")
        ended = reply.stop_reason if reply.stop_reason in CUT_OR_REFUSED else "unknown_stop_reason"
        return stop(state, ended, text_of(reply), trace, why)
    if not calls:
        written = calls_written_as_text(text_of(reply))
        if not written:
            return stop(state, reply.stop_reason, text_of(reply), trace)  # the model's own end
        state.messages.append(text_calls_message(workspace, written, gate))  # run them, and say so
        trace("tool_results", state.messages[-1])
        return checked_carry_on(state, limits, reply, "text_calls_recovered", trace)
    results = [tool_result(workspace, call, gate) for call in calls]  # 4. act, on every call the gate allows
    results += [cut_call_result(call) for call in cut_call(reply)]   #    a call cut short is answered, not run
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
    "max_tokens": (f"the reply was cut at max_tokens even with {MAX_TOKENS_CEILING} tokens of room, before any "
                   "whole tool call; ask for a shorter answer, or split the task"),
    "model_context_window_exceeded": "the reply was cut: the context window is full; start again with less",
    "refusal": "",  # the API says why in stop_details (course.why_refused)
    "echo": ("the model is repeating its prompt: it may not support chat or tools; check the model and its "
             "chat template (a base model, or a server without the model's template, does this)"),
}


def why_it_ended(reply: anthropic.types.Message, messages: list) -> str:
    """The explanation that fits: an echo is not a long answer, and more room would not help it."""
    echo = reply.stop_reason == "max_tokens" and repeats_the_prompt(text_of(reply), messages)
    explained = CUT_OR_REFUSED.get("echo" if echo else reply.stop_reason) or course.unknown_stop_reason(reply.stop_reason)
    return course.why_refused(reply) if reply.stop_reason == "refusal" else explained


def limit_reached(state: LoopState, limits: Limits) -> tuple[StopReason, str] | None:
    """The turn limit and the token budget, checked before each call: the next call is the cost."""
    if state.turn_count >= limits.max_turns:
        return "max_turns", (f"turn limit: {state.turn_count} of {limits.max_turns} turns taken; "
                             "raise max_turns if the task needs more")
    used = prompt_size(state.usage) + state.usage["output_tokens"]  # a token read from the cache is still used
    if used >= limits.token_budget:
        return "token_budget", (f"token budget: {used} tokens used, the budget is {limits.token_budget}; "
                                "raise token_budget if the task is worth more")
    return None


def no_progress(messages: list, limits: Limits) -> str | None:
    """The same call again and again, or failure after failure: read off the history itself."""
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


def calls_made(message: dict) -> list[tuple[str, dict]]:
    """The calls of one assistant message: its tool_use blocks, or the calls it wrote as text."""
    uses = [(block["name"], block["input"]) for block in message["content"] if block["type"] == "tool_use"]
    text = "".join(block.get("text", "") for block in message["content"] if block["type"] == "text")
    return uses or calls_written_as_text(text)


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
    for cached in ("cache_creation_input_tokens", "cache_read_input_tokens"):  # None from a server without a cache
        total[cached] = total.get(cached, 0) + (getattr(usage, cached, None) or 0)


def prompt_size(usage) -> int:
    """Every token of a prompt (of a reply's usage, or a run's dict), cached or not: what must fit the window."""
    part = usage.get if isinstance(usage, dict) else lambda name: getattr(usage, name, None)
    return sum(part(name) or 0 for name in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
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


# --8<-- [start:cut]
# A tool_use cut short must be asked for again with a larger max_tokens (Anthropic's docs on stop reasons,
# https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons); whole calls before the cut are used.
def ask_for_whole_reply(state: LoopState, client: anthropic.Anthropic, model: str, trace) -> anthropic.types.Message:
    """Ask; while the reply is cut before any whole call, ask again with twice the room, up to the
    ceiling. A model repeating its prompt is not asked again: more room only buys more copying."""
    max_tokens = MAX_TOKENS
    reply = ask(client, model, state.messages, max_tokens)
    while (reply.stop_reason == "max_tokens" and not has_whole_call(reply) and max_tokens < MAX_TOKENS_CEILING
           and not repeats_the_prompt(text_of(reply), state.messages)):
        add_usage(state.usage, reply.usage)  # the cut reply is dropped, but it was billed
        max_tokens = min(2 * max_tokens, MAX_TOKENS_CEILING)
        trace("note", f"the reply was cut at max_tokens before any whole call: asking again with max_tokens={max_tokens}")
        reply = ask(client, model, state.messages, max_tokens)
    return reply


CUT = ("max_tokens", "model_context_window_exceeded")  # the reply was cut short: for want of room, or of window


def cut_call(reply: anthropic.types.Message) -> list:
    """The tool_use the reply was cut in: its last block, when it was cut short. Its input is unfinished."""
    last = reply.content[-1] if reply.content else None
    return [last] if reply.stop_reason in CUT and last is not None and last.type == "tool_use" else []


def whole_calls(reply: anthropic.types.Message) -> list:
    """The tool_use blocks of a reply, less the one it was cut in."""
    return [call for call in tool_calls(reply) if call not in cut_call(reply)]


def has_whole_call(reply: anthropic.types.Message) -> bool:
    """Something whole to act on: a tool_use before the cut, or (with no tool_use) a complete call written as text."""
    return bool(whole_calls(reply)) or (not tool_calls(reply) and bool(calls_written_as_text(text_of(reply))))


def cut_call_result(call) -> dict:
    return {"type": "tool_result", "tool_use_id": call.id, "is_error": True,
            "content": failure("cut_off", f"your reply was cut short inside this {call.name} call, so it was not run",
                               "make the call again, in a shorter reply")}


def repeats_the_prompt(text: str, messages: list) -> bool:
    """Most of a reply copied from the request: what a small local base model does until max_tokens."""
    return course.repeats_the_prompt(text, system=SYSTEM_PROMPT, tools=TOOLS, messages=messages)
# --8<-- [end:cut]


# --8<-- [start:prune]
def prune(state: LoopState, client: anthropic.Anthropic, model: str, trace, full: bool = False) -> None:
    """Before each call: past the trigger, mask old tool results in one batch; if still too big, summarise old
    turns (``full``: whatever the triggers). Each rewrites the prompt early on: the cache is written again."""
    estimate = estimate_prompt_tokens(state.messages)
    if (full or estimate > CLEAR_TRIGGER) and (masked := mask_old_results(state.messages, KEEP_RESULTS, 0 if full else CLEAR_AT_LEAST)):
        trace("note", f"masked {masked} old tool result(s) in one batch; the cache is written again from the first of them")
        estimate = estimate_prompt_tokens(state.messages)
    if (full or estimate > SUMMARY_THRESHOLD) and summarise_old_turns(state, client, model):
        trace("note", f"summarised older turns: about {estimate} → {estimate_prompt_tokens(state.messages)} tokens; "
                      "the cache is written again from the first message")
        state.saved_messages = 0  # the history was rewritten: the next save writes it whole


def mask_old_results(messages: list, keep: int, at_least: int = 0) -> int:
    """Replace the content of all but the last ``keep`` tool results by a placeholder, in one batch, if they hold at
    least ``at_least`` estimated tokens (else change nothing); return how many. Every tool_use stays answered."""
    calls = {block["id"]: block for message in messages if message["role"] == "assistant"
             for block in message["content"] if block["type"] == "tool_use"}
    results = tool_results_in(messages)
    old = [block for block in results[:max(len(results) - keep, 0)]
           if isinstance(block["content"], str) and not block["content"].startswith("[masked")]
    if sum(estimate_tokens(block["content"]) for block in old) < at_least:
        return 0  # too little to free: keep the prompt, and its cache, as they are
    for block in old:
        call = calls[block["tool_use_id"]]
        arguments = json.dumps(call["input"], ensure_ascii=False)
        block["content"] = (f"[masked to save context: the result of {call['name']} {arguments}, "
                            f"{len(block['content'])} characters. Call it again if you need it.]")
    return len(old)


def estimate_prompt_tokens(messages: list) -> int:
    """A cheap estimate before the call (about 4 bytes a token); the API's usage is the true count after it."""
    return estimate_tokens(json.dumps([SYSTEM_PROMPT, TOOLS, messages], ensure_ascii=False))


def estimate_tokens(text: str) -> int:
    return (len(text.encode("utf-8")) + 3) // 4  # rounded up


def summarise_old_turns(state: LoopState, client: anthropic.Anthropic, model: str) -> bool:
    """Fold every turn but the last KEEP_TURNS into a summary the model writes; True if it did."""
    messages = state.messages
    turn_starts = [i for i, message in enumerate(messages) if message["role"] == "assistant"]
    if len(turn_starts) < 2 * KEEP_TURNS:
        return False  # too little to fold: a summary on every turn would cost more than it saves
    cut = turn_starts[-KEEP_TURNS]  # an assistant message, kept whole with its results: thinking included
    task, _, earlier_summary = first_text(messages[0]).partition(SUMMARY_HEADING)
    request = ("Summarise the work so far for your own later use: what was done, what was found "
               "(keep every number and name), and what remains. Transcript:\n\n"
               + earlier_summary.strip() + "\n" + course.turns_as_text(messages[1:cut]))
    reply = client.messages.create(model=model, max_tokens=MAX_TOKENS,
                                   messages=[{"role": "user", "content": request}])
    add_usage(state.usage, reply.usage)  # summarising is billed too
    if reply.stop_reason != "end_turn":
        return False  # a cut summary would drop facts silently: keep the turns as they are
    summary = f"{task.rstrip()}\n\n{SUMMARY_HEADING}\n{text_of(reply)}"
    messages[:] = [{"role": "user", "content": summary}] + messages[cut:]
    return True


def first_text(message: dict) -> str:
    return "".join(block.get("text", "") for block in blocks_of(message) if block.get("type") == "text")
# --8<-- [end:prune]


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
        limits: Limits = Limits(), runs_log=None, rules=None, approver=ask_on_terminal, audit_log=None,
        resume=None, transcript=None) -> RunResult:
    """Take turns until one says stop, saving the state after each step; the result says why, and the
    runs log remembers it. ``resume`` goes on with an earlier run (a run id, a transcript, or "last")."""
    trace = trace or (lambda kind, payload: None)
    state, first = start(task, resume, transcript, trace)
    model = course.resolve_model(model or first.get("model"))
    client = client or course.make_client(model)
    workspace = course.prepare_workspace(workspace or first.get("workspace"))
    if approver is ask_on_terminal and not sys.stdin.isatty():
        approver = None  # no one to ask: ask means deny
    gate = Gate(rules=RULES if rules is None else rules, approver=approver, audit_log=audit_log,
                confinement=course.sandbox.confinement.probe())
    if not gate.confined:  # said once a run: from here on, every command waits for a person
        trace("note", f"no kernel confinement ({gate.confinement.reason}): no command runs without a person")
    save(state, stage=STAGE, model=model, workspace=str(workspace))  # a line that names the run, or its resumption
    started = time.perf_counter()

    while take_turn(state, client, model, workspace, limits, gate, trace):
        save(state)
    save(state)  # the stop too: the transcript says how the run ended

    calls, errors = tool_metrics(state.messages)
    result = RunResult(stage=STAGE, model=model, answer=state.answer, stop_reason=state.stop_reason,
                       explanation=state.explanation, turns=state.turn_count, usage=state.usage, workspace=str(workspace),
                       messages=state.messages, transitions=state.transitions, transcript=str(state.transcript or ""), tool_calls=calls,
                       tool_errors=errors, duration_s=round(time.perf_counter() - started, 4),
                       peak_prompt_tokens=state.peak_prompt_tokens)
    log_run(result, task, runs_log)
    return result
# --8<-- [end:run]


def main(argv=None) -> int:
    return course.stage_main(STAGE, run, argv, limits=Limits)


if __name__ == "__main__":
    sys.exit(main())
