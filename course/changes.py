"""What each stage changes in the one before it, definition by definition, and why.

Each stage's ``agent.py`` is its predecessor plus one idea. This table says which top-level
definitions (functions, classes, assignments, the import lines) a stage changes, adds or removes,
in one line each. ``tests/test_copy_forward.py`` compares consecutive stages by their syntax trees
and fails on any difference the table does not declare, and on any declaration that the code does
not bear out; the docs print the table as each chapter's "What changed" (``<!-- changes sNN -->``).

A definition of a module beside ``agent.py`` (say ``s06/permissions.py``) is named ``permissions.NAME``; the
import lines are named ``imports`` (``permissions.imports``). Comments do not count (the exercise markers
are comments), nor does the module docstring, which every stage rewrites as its chapter's summary.
"""

from __future__ import annotations

KINDS = ("changed", "added", "removed")

CHANGES: dict[str, dict[str, dict[str, str]]] = {
    "s01": {
        "changed": {
            "STAGE": "the stage's name",
            "run": "one hand-made round trip becomes a while loop that ends when a reply asks for no tool",
        },
    },
    "s02": {
        "changed": {
            "imports": "dataclasses and typing, for the state and the result types",
            "STAGE": "the stage's name",
            "run": "the loop's locals move into a LoopState; run() takes turns until one says stop, saving the state after each, and can resume an earlier run",
        },
        "added": {
            "Transition": "why the loop went on, as a named value",
            "StopReason": "why the run ended, as a named value",
            "LoopState": "everything the loop knows in one object, saved every turn",
            "RunResult": "what a run returns: the answer and why it ended",
            "take_turn": "one turn of the five steps, as one function",
            "stop": "the one place a run ends, recording the reason",
            "carry_on": "the one place a run goes on, recording why",
            "INTERRUPTED": "what a call killed before its result was saved is answered with",
            "save": "appends what changed to the run's transcript, durably",
            "start": "a new run's state, or an earlier run's, resumed",
            "resumed": "an earlier run's state, loaded from its transcript",
            "answer_interrupted_calls": "calls left without a result by a killed run are answered, never run again",
        },
    },
    "s03": {
        "changed": {
            "imports": "json, time and Counter, for the metrics and the runs log",
            "STAGE": "the stage's name",
            "Transition": "a turn the API paused (pause_turn, compaction) goes on",
            "StopReason": "the harness's own reasons (turn limit, token budget, no progress), a full context window, a turn that keeps pausing, a stop reason the stage does not know",
            "LoopState": "an explanation of the stop, for the person reading the result",
            "RunResult": "the explanation, the calls and failures per tool, and the duration",
            "take_turn": "checks the limits before each call and no progress after it; a paused turn goes on, sent back as it came; a cut, refused or unknown stop ends the run",
            "stop": "takes the explanation the trace and the result show",
            "run": "takes the limits and logs each run",
            "main": "passes the Limits on to the command line, which makes an option of each",
            "answer_interrupted_calls": "a run that ended with a refusal is not resumed: the refused turn would go back as it was",
        },
        "added": {
            "Limits": "when to stop a run that does not stop itself",
            "CUT_OR_REFUSED": "what a max_tokens, full-window or refusal stop means, in words",
            "why_it_ended": "the explanation of a cut, refused (stop_details' category and explanation) or unknown stop",
            "limit_reached": "the turn limit and the token budget, checked before each call",
            "no_progress": "the same call again and again, or failure after failure",
            "answer_without_running": "every tool_use still gets a tool_result when we will not run it",
            "tool_results_in": "the tool_result blocks of a history, for the metrics",
            "tool_metrics": "calls and failures per tool, read off the history",
            "log_run": "one line per run in the runs log",
            "checked_carry_on": "goes on unless the history shows no progress",
            "calls_made": "the calls of one assistant message, for the no-progress check",
        },
    },
    "s04": {
        "changed": {
            "imports": "difflib, for the nearest names of a missing path",
            "STAGE": "the stage's name",
            "TOOLS": "read_file takes an offset, so a long file can be read in parts",
            "list_files": "a missing or wrong path is an actionable error",
            "read_file": "actionable errors, and long files cut with the offset to read on from",
            "run_tool": "every failure becomes a structured error: kind, message, what to do next",
            "Transition": "a turn can go on because calls written as text were recovered",
            "CUT_OR_REFUSED": "a reply still cut at the ceiling, and one that copies its prompt, in words",
            "why_it_ended": "the explanation that fits a cut: an echo, or a reply too long",
            "take_turn": "a reply without tool_use is checked for calls written as text; a cut reply's whole calls are run (cut at max_tokens or by a full window), and only one with none stops the run",
            "calls_made": "counts calls written as text as well as tool_use blocks",
        },
        "added": {
            "MAX_RESULT_CHARS": "the largest tool result that goes into the history whole",
            "ToolError": "a failure the model can act on",
            "existing": "a missing path answered with the nearest existing names",
            "SCHEMAS": "each tool's input schema, to check arguments against",
            "call_tool": "checks the tool name, then the arguments, then runs the tool",
            "failure": "the one shape of an error result",
            "cut_to_fit": "a long result is cut, saying how to see the rest",
            "calls_written_as_text": "tool calls a model wrote as JSON in its text",
            "text_calls_message": "runs calls found in text and says how to call tools properly",
            "MAX_TOKENS_CEILING": "the most room a cut reply is asked for again with",
            "ask_for_whole_reply": "a reply cut before any whole call is asked for again with twice the room",
            "cut_call": "the tool_use a cut reply ended in, unfinished",
            "whole_calls": "a reply's tool_use blocks, less the one cut short",
            "has_whole_call": "whether a cut reply holds a whole call, as tool_use or as text",
            "cut_call_result": "the answer to a call cut short: not run, make it again",
            "CUT": "the stop reasons of a reply cut short: max_tokens, and a full context window",
            "repeats_the_prompt": "most of a reply copied from the request",
        },
    },
    "s05": {
        "changed": {
            "STAGE": "the stage's name",
            "LoopState": "remembers the largest prompt sent",
            "RunResult": "reports the largest prompt sent",
            "take_turn": "prunes before each call and traces the tokens billed; a reply cut by a full window prunes whatever the triggers and asks once more",
            "run": "returns the largest prompt sent",
            "ask": "marks where the cache may end: after the tools and system, and in the history",
            "add_usage": "adds up the tokens read from the cache and written to it too",
            "limit_reached": "the token budget counts the tokens read from the cache too",
        },
        "added": {
            "KEEP_RESULTS": "how many recent tool results stay whole",
            "CLEAR_TRIGGER": "the prompt size past which a batch of old results is masked",
            "CLEAR_AT_LEAST": "the least a batch must clear, so the cache is broken rarely and for a reason",
            "CACHE_BREAKPOINT": "the cache_control mark the API reads",
            "with_breakpoints": "the history as sent, with a breakpoint on the latest block and at the end of the masked part",
            "marked": "a copy of a message whose last block carries a breakpoint",
            "blocks_of": "a message's content as a list of blocks",
            "is_whole_result": "a tool result not masked yet",
            "prompt_size": "every token of a prompt, cached or not",
            "estimate_tokens": "the course's estimate of a text's tokens (about 4 bytes each)",
            "SUMMARY_THRESHOLD": "the prompt size above which old turns are summarised",
            "KEEP_TURNS": "how many recent turns a summary leaves alone",
            "SUMMARY_HEADING": "marks the summary in the history",
            "prune": "before each call: mask old results, then summarise if still too big (or both at once, when the window is full)",
            "mask_old_results": "old tool results replaced by a placeholder, pairs kept",
            "estimate_prompt_tokens": "a cheap estimate of the prompt before the call",
            "summarise_old_turns": "old turns folded into a summary the model writes",
            "first_text": "the text of a message, for the summary",
        },
    },
    "s06": {
        "changed": {
            "imports": "the support package's command reader, path resolver and confinement, which the gate and the tools use",
            "other statements": "permissions.py and tools.py imported both as a package and as a script",
            "STAGE": "the stage's name",
            "TOOLS": "tools that can do harm: delete_file, move_file, run_command",
            "TOOL_FUNCTIONS": "the new tools",
            "run_tool": "passes the gate on; a path the resolver refuses is an actionable error too",
            "call_tool": "the gate decides before a tool runs; a denial goes back to the model with why and what to do instead",
            "tool_result": "passes the gate on",
            "text_calls_message": "calls written as text go through the same gate",
            "take_turn": "passes the gate on to every call",
            "run": "builds the gate (rules, a person to ask, the audit log, the confinement) and says when commands are not confined",
        },
        "added": {
            "permissions.py": "risk classes, rules, one decide() (deny, then ask, then allow, then the default), a person for exactly one thing, the audit log",
            "tools.py": "the file tools and the calculator, not the chapter's code, and two harmful tools for the gate to stop: delete_file (a link itself, never its target) and move_file (one file, never a folder)",
            "COMMAND_TIMEOUT_S": "how long a command may run",
            "COMMAND_OUTPUT_CAP": "how much of a command's output is kept",
            "run_command": "a command, confined by the kernel, bounded in time and output",
        },
        "removed": {
            "ToolError": "to tools.py, unchanged: the tools raise it, and call_tool still turns a denial into one",
            "existing": "to tools.py, through the one resolver the gate uses too: the path must stay inside the workspace; the nearest names never include a file the rules hide",
            "list_files": "to tools.py, unchanged",
            "read_file": "to tools.py: regular files with one name only (a named pipe would block, a hard link may lead out), of at most a mebibyte",
            "write_file": "to tools.py: the path must stay inside the workspace, and name a regular file with one name",
            "search_files": "to tools.py: skips links that lead out, and the files the rules deny; reads each file a part at a time",
            "calculate": "to tools.py, unchanged",
        },
    },
}
