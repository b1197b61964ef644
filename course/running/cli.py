"""The command line every stage shares: ``python sNN/agent.py "TASK" [--model ID] [--workspace DIR]
[--keep-workspace] [--json]``, with ``--resume RUN`` from s02 on, and ``--faults RATE [--seed N]`` and
``--retries N`` everywhere.

Argument parsing, the trace, the final answer, the JSON summary, the one-line error messages, what
becomes of a run's fresh workspace, and a quiet end when the output's reader goes away (``| head``)
live here, so that a stage's ``main()`` is two lines and its file is about the loop.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import inspect
import os
import sys
from pathlib import Path

import anthropic

from course.running.client import WithLiveText, make_client
from course.runtime.api_errors import explain_api_error
from course.runtime.commands import python_command
from course.helpers.limits import add_options as add_limit_options, from_options as limits_from_options
from course.runtime.models import CourseError, is_offline, resolve_model
from course.offline import Faults
from course.runtime.runlog import json_line
from course.runtime.trace import TracePrinter, escape_terminal_controls, shorten
from course.viewer.pages import NoteKeeper
from course.runtime.wire import sendable
from course.runtime.workspace import is_fresh_copy, keep as keep_workspace, prepare_workspace, remove_fresh_copy

# The keys of the --json summary line, in this order.
SUMMARY_KEYS = ("stage", "model", "answer", "stop_reason", "turns", "usage", "workspace")


def as_dict(result) -> dict:
    """A run's result as a plain dict, whether the stage returns a dict or a dataclass."""
    if dataclasses.is_dataclass(result):
        result = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
    return {key: _plain(value) for key, value in result.items()}


def _plain(value):
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if hasattr(value, "__fspath__"):
        return str(value)
    return value


def summary(result) -> dict:
    data = as_dict(result)
    return {key: data.get(key) for key in SUMMARY_KEYS}


def stage_main(stage: str, run, argv=None, *, limits=None) -> int:
    """Parse the command line, run the stage with a live trace, print the answer. Returns the exit code.

    ``limits``: the stage's Limits dataclass (s03 on); each of its fields becomes an option
    (max_turns: --max-turns N), and the limits given go to ``run(limits=...)``. A stage whose ``run`` takes
    ``resume`` (s02 on) also gets ``--resume RUN|PATH|last``; every stage gets ``--faults``,
    ``--seed``, ``--retries`` and ``--thinking BUDGET``, which shape the client built here.

    Without ``--workspace``, the run works in a fresh copy of the sample, made here; it is removed
    when the run is over for good (it ended on its own, or its stage cannot resume), unless
    ``--keep-workspace``; a run that can go on with ``--resume`` keeps it. A folder the learner
    named is never removed. Output cut short (``| head``) ends the run quietly.
    """
    resumable = "resume" in inspect.signature(run).parameters
    ending = Ending(stage, resumable)
    try:
        code = _stage_main(stage, run, argv, limits, ending)
        sys.stdout.flush()  # what is still buffered is written now, while a closed pipe can be caught
        return code
    except BrokenPipeError:  # the reader went away (`| head`): end as such a program does, in silence
        ending.settle(None)
        return closed_pipe()
    except SystemExit:  # --help, or a bad option: argparse has printed its text; write it out now
        flush_quietly()
        raise


def _stage_main(stage: str, run, argv, limits, ending: "Ending") -> int:
    resumable = ending.resumable
    parser = argparse.ArgumentParser(prog=f"{python_command()} {stage}/agent.py", description=f"Run the {stage} agent on a task.")
    parser.add_argument("task", nargs="?" if resumable else None,
                        help="what the agent should do, in English or Japanese" + (" (not with --resume)" if resumable else ""))
    parser.add_argument("--model", help="model id (default: $MODEL_ID, else offline without an API key)")
    parser.add_argument("--workspace", help="folder to work in (default: a fresh copy of the sample workspace)")
    parser.add_argument("--keep-workspace", action="store_true",
                        help="keep the fresh copy when the run is over (it is removed otherwise)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line summarising the run")
    if resumable:
        parser.add_argument("--resume", metavar="RUN", help="go on with an earlier run: its id, its transcript's path, "
                                                            "or 'last' (limits given now apply)")
    parser.add_argument("--faults", metavar="RATE", type=float,
                        help="offline model only: answer this share of API requests with a transient error (e.g. 0.3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the injected faults (default 0)")
    parser.add_argument("--retries", type=int, help="how often the SDK retries a failed request (default 2; 0: never)")
    parser.add_argument("--live", action="store_true",
                        help="show the model's text as it arrives (each reply streamed), before the turn's trace")
    parser.add_argument("--thinking", metavar="adaptive|BUDGET", type=thinking_option,
                        help="turn thinking on: 'adaptive' (the current Claude models), or a budget of tokens "
                             "(at least 1024; older models and local servers)")
    limit_names = add_limit_options(parser, limits) if limits else []
    args = parser.parse_args(argv)
    if resumable and (args.task is None) == (args.resume is None):
        parser.error("give a task, or --resume RUN to go on with an earlier run (not both)")
    try:
        given = {"limits": limits_from_options(limits, args, limit_names)} if limits else {}
    except CourseError as error:  # --max-turns zero: one line, like every problem the learner can fix
        print(f"error: {error}", file=sys.stderr)
        return 2
    if resumable and args.resume:
        given["resume"] = args.resume
    ending.keep = args.keep_workspace
    if args.workspace:
        keep_workspace(args.workspace)  # a fresh copy named again is the learner's now: never removed
        workspace = args.workspace
    elif resumable and args.resume:
        workspace = None  # the run goes on in its own workspace, as its transcript names it
    else:
        workspace = ending.fresh = str(prepare_workspace())  # made here, so that it is removed even if the run fails
    return _run_and_print(args, run, workspace, given, ending)


def _run_and_print(args, run, workspace, given: dict, ending: "Ending") -> int:
    try:
        client = client_for(args)
        # A byte of the command line that is not UTF-8 (kept by Python as a lone surrogate) is shown as "?".
        trace = NoteKeeper(TracePrinter())  # the notes a transcript lacks, kept for `course view`
        result = run(sendable(args.task), model=args.model, workspace=workspace, trace=trace,
                     **({"client": client} if client else {}), **given)
    except CourseError as error:
        ending.settle(None)
        print(f"error: {error}", file=sys.stderr)
        return 2
    except anthropic.APIError as error:
        ending.settle(None)
        print(f"error: {explain_api_error(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        ending.settle(None)
        print("interrupted" + ("; the run is saved: go on with --resume last" if ending.resumable else ""), file=sys.stderr)
        return 130
    trace.save(as_dict(result))
    data = summary(result)
    shown = ending.settle(result)
    print(answer_text(result, workspace=shown), end="")
    everything = as_dict(result)
    if everything.get("transcript"):
        data["transcript"] = everything["transcript"]
    data["workspace_removed"] = ending.removed
    if args.json:
        print(json_line(data))  # a C1 CSI or a bidi override in the answer is written as an escape
    return 0 if data["stop_reason"] == "end_turn" else 1


class Ending:
    """What becomes of a command-line run's workspace when the run ends, and what the last lines say of it."""

    def __init__(self, stage: str, resumable: bool):
        self.stage, self.resumable = stage, resumable
        self.keep = False        # --keep-workspace
        self.fresh = None        # the copy made for a new run (None: a folder named, or a resumption's own)
        self.removed = False

    def settle(self, result) -> str | None:
        """Remove the run's fresh copy if the run is over for good, else keep it. ``result``: the run's
        result, or None if it raised. Returns the workspace line's text (None: the folder, as it is)."""
        workspace = summary(result)["workspace"] if result is not None else self.fresh
        if not workspace or not is_fresh_copy(workspace):
            return None  # a folder the learner named, or kept; or already removed
        if self.keep:
            keep_workspace(workspace)
            return f"{workspace} (kept)"
        if result is not None:
            if self.resumable and can_go_on(result):
                return fresh_copy_shown(result, resumable=True)
        elif self.resumable and self._saved_in_a_transcript(workspace):
            return None  # the run raised after saving its steps: --resume goes on with it there
        self.removed = remove_fresh_copy(workspace)
        return REMOVED if self.removed else None

    def _saved_in_a_transcript(self, workspace: str) -> bool:
        from course.runtime import transcript
        try:
            return transcript.first_line(transcript.find("last", self.stage)).get("workspace") == workspace
        except (CourseError, OSError):
            return False


REMOVED = "removed (a fresh copy; the run is over; --keep-workspace keeps it)"


def fresh_copy_shown(result, *, resumable: bool) -> str:
    """What the workspace line says of a run's fresh copy once the command line has seen the run end:
    removed (the run is over for good), or kept for --resume. For answer_text(result, workspace=...)."""
    if resumable and can_go_on(result):
        return f"{summary(result)['workspace']} (kept for --resume)"
    return REMOVED


def can_go_on(result) -> bool:
    """Whether ``--resume`` can go on with a run that ended: it did not end on its own, and its last
    message is not the model's reply without a call (nothing is left to do then)."""
    data = as_dict(result)
    if data.get("stop_reason") == "end_turn":
        return False
    last = (data.get("messages") or [{}])[-1]
    if last.get("role") != "assistant":
        return True
    content = last.get("content")
    return isinstance(content, list) and any(isinstance(block, dict) and block.get("type") == "tool_use"
                                             for block in content)


CLOSED_PIPE = 141  # what a shell reports for a program that a closed pipe ended (128 + SIGPIPE)


def closed_pipe() -> int:
    """After a BrokenPipeError on stdout: point stdout at the null device, so that the interpreter's last
    flush at exit does not fail again, and return the exit code a closed pipe gives."""
    try:
        descriptor = os.open(os.devnull, os.O_WRONLY)
        os.dup2(descriptor, sys.stdout.fileno())
        os.close(descriptor)
    except (OSError, ValueError, AttributeError):  # stdout is no file (a test's capture): nothing to flush
        pass
    return CLOSED_PIPE


def flush_quietly() -> None:
    """Write out what stdout still buffers; if its reader has gone, let the rest go to the null device."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        closed_pipe()


def answer_text(result, *, workspace: str | None = None) -> str:
    """What the command line prints after the trace: the answer with its stop reason, turns and
    tokens, why the run stopped (if not on its own), its workspace, and its transcript.
    ``workspace``: what the workspace line says (default: the run's folder), e.g. that it was removed."""
    data, everything = summary(result), as_dict(result)
    turns = f"{data['turns']} turn" + ("" if data["turns"] == 1 else "s")
    usage = data["usage"]
    cached = (f", and {usage.get('cache_read_input_tokens', 0)} read from the cache + {usage.get('cache_creation_input_tokens', 0)} "
              "written to it" if usage.get("cache_read_input_tokens") or usage.get("cache_creation_input_tokens") else "")
    lines = [f"\nanswer ({data['stop_reason']}, {turns}, "
             f"{usage['input_tokens']} input + {usage['output_tokens']} output tokens{cached}):",
             data["answer"] or "(no text)"]
    explanation = everything.get("explanation")
    if data["stop_reason"] != "end_turn" and explanation and explanation != data["stop_reason"]:
        lines.append(f"stopped: {explanation}")
    lines.append(f"workspace: {workspace or data['workspace']}")
    if everything.get("transcript"):
        ended = f" (go on with --resume {Path(everything['transcript']).stem})" if can_go_on(result) else ""
        lines.append(f"transcript: {everything['transcript']}{ended}")
    # The answer is the model's text and the explanation may quote a call: shown as data, as the trace shows them.
    return escape_terminal_controls("\n".join(lines)) + "\n"


def thinking_option(text: str) -> int | str:
    if text == "adaptive":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'adaptive' or a number of tokens, got {text!r}") from None


def client_for(args) -> "anthropic.Anthropic | None":
    """The client --faults and --retries ask for, or None to let the stage build its own."""
    if args.faults is None and args.retries is None and getattr(args, "thinking", None) is None \
            and not getattr(args, "live", False):
        return None
    if args.retries is not None and args.retries < 0:
        raise CourseError(f"--retries must be 0 or more, got {args.retries}")
    faults = None
    if args.faults is not None:
        if not 0 <= args.faults <= 1:
            raise CourseError(f"--faults is a share of requests between 0 and 1, got {args.faults}")
        faults = Faults(rate=args.faults, seed=args.seed)
    model = resolve_model(args.model or (model_of_run(args.resume) if getattr(args, "resume", None) else None))
    if faults and not is_offline(model):
        raise CourseError(f"--faults works with the offline model only, and {model!r} is not one: drop --faults, "
                          "or add --model offline")
    options = {"faults": faults} if faults else {}
    if getattr(args, "thinking", None) is not None:  # added to every request (course.running.client.WithThinking)
        options["thinking"] = args.thinking
    client = make_client(model, max_retries=2 if args.retries is None else args.retries, **options)
    return WithLiveText(client, sys.stderr) if getattr(args, "live", False) else client


def model_of_run(which: str) -> str | None:
    """The model an earlier run used, as its transcript's first line names it."""
    from course.runtime import transcript
    return transcript.load(transcript.find(which)).named.get("model")
