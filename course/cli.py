"""The command line every stage shares: ``python sNN/agent.py "TASK" [--model ID] [--workspace DIR] [--json]``,
with ``--resume RUN`` from s02 on, and ``--faults RATE [--seed N]`` and ``--retries N`` everywhere.

Argument parsing, the trace, the final answer, the JSON summary and the one-line error messages
live here, so that a stage's ``main()`` is two lines and its file is about the loop.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import inspect
import json
import sys
from pathlib import Path

import anthropic

from .client import make_client
from .commands import python_command
from .limits import add_options as add_limit_options, from_options as limits_from_options
from .models import CourseError, is_offline, resolve_model
from .offline import Faults
from .trace import TracePrinter, shorten
from .wire import sendable

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


def explain_api_error(error: anthropic.APIError) -> str:
    """One actionable line for an error the API (or the offline model) answered."""
    if isinstance(error, anthropic.APIStatusError):
        body = error.body if isinstance(error.body, dict) else {}
        detail = body.get("error")  # {"type", "message"} from the API; a bare string from some local servers
        message = detail.get("message") if isinstance(detail, dict) else detail if isinstance(detail, str) else None
        # One line, of a readable length, whatever the server put in it.
        message = shorten(" ".join(str(message or error).split()), 300)
        hints = {401: "check ANTHROPIC_API_KEY", 404: "check the model id (--model or MODEL_ID)",
                 429: "wait and retry, or lower the request rate", 529: "the API is overloaded; retry later"}
        hint = hints.get(error.status_code, "")
        return f"the API answered {error.status_code}: {message}" + (f" ({hint})" if hint else "")
    if isinstance(error, anthropic.APIConnectionError):
        if "injected" in str(error.__cause__):  # --faults: the offline model dropped it on purpose
            return "the connection was dropped: a fault injected into the offline model (--faults), not your network"
        return "could not reach the API: check your network, or ANTHROPIC_BASE_URL for a local server"
    return str(error)


def stage_main(stage: str, run, argv=None, *, limits=None) -> int:
    """Parse the command line, run the stage with a live trace, print the answer. Returns the exit code.

    ``limits``: the stage's Limits dataclass (s03 on); each of its fields becomes an option
    (max_turns: --max-turns N), and the limits given go to ``run(limits=...)``. A stage whose ``run`` takes
    ``resume`` (s02 on) also gets ``--resume RUN|PATH|last``; every stage gets ``--faults``,
    ``--seed`` and ``--retries``, which shape the client built here.
    """
    resumable = "resume" in inspect.signature(run).parameters
    parser = argparse.ArgumentParser(prog=f"{python_command()} {stage}/agent.py", description=f"Run the {stage} agent on a task.")
    parser.add_argument("task", nargs="?" if resumable else None,
                        help="what the agent should do, in English or Japanese" + (" (not with --resume)" if resumable else ""))
    parser.add_argument("--model", help="model id (default: $MODEL_ID, else offline without an API key)")
    parser.add_argument("--workspace", help="folder to work in (default: a fresh copy of the sample workspace)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line summarising the run")
    if resumable:
        parser.add_argument("--resume", metavar="RUN", help="go on with an earlier run: its id, its transcript's path, "
                                                            "or 'last' (limits given now apply)")
    parser.add_argument("--faults", metavar="RATE", type=float,
                        help="offline model only: answer this share of API requests with a transient error (e.g. 0.3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the injected faults (default 0)")
    parser.add_argument("--retries", type=int, help="how often the SDK retries a failed request (default 2; 0: never)")
    limit_names = add_limit_options(parser, limits) if limits else []
    args = parser.parse_args(argv)
    if resumable and (args.task is None) == (args.resume is None):
        parser.error("give a task, or --resume RUN to go on with an earlier run (not both)")
    given = {"resume": args.resume} if resumable and args.resume else {}
    try:
        if limits:
            given["limits"] = limits_from_options(limits, args, limit_names)
        client = client_for(args)
        # A byte of the command line that is not UTF-8 (kept by Python as a lone surrogate) is shown as "?".
        result = run(sendable(args.task), model=args.model, workspace=args.workspace, trace=TracePrinter(),
                     **({"client": client} if client else {}), **given)
    except CourseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except anthropic.APIError as error:
        print(f"error: {explain_api_error(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted" + ("; the run is saved: go on with --resume last" if resumable else ""), file=sys.stderr)
        return 130
    data = summary(result)
    print(answer_text(result), end="")
    everything = as_dict(result)
    if everything.get("transcript"):
        data["transcript"] = everything["transcript"]
    if args.json:
        print(json.dumps(data, ensure_ascii=False))
    return 0 if data["stop_reason"] == "end_turn" else 1


def answer_text(result) -> str:
    """What the command line prints after the trace: the answer with its stop reason, turns and
    tokens, why the run stopped (if not on its own), its workspace, and its transcript."""
    data, everything = summary(result), as_dict(result)
    turns = f"{data['turns']} turn" + ("" if data["turns"] == 1 else "s")
    usage = data["usage"]
    cached = (f", and {usage['cache_read_input_tokens']} read from the cache + {usage['cache_creation_input_tokens']} "
              "written to it" if usage.get("cache_read_input_tokens") or usage.get("cache_creation_input_tokens") else "")
    lines = [f"\nanswer ({data['stop_reason']}, {turns}, "
             f"{usage['input_tokens']} input + {usage['output_tokens']} output tokens{cached}):",
             data["answer"] or "(no text)"]
    explanation = everything.get("explanation")
    if data["stop_reason"] != "end_turn" and explanation and explanation != data["stop_reason"]:
        lines.append(f"stopped: {explanation}")
    lines.append(f"workspace: {data['workspace']}")
    if everything.get("transcript"):
        ended = "" if data["stop_reason"] == "end_turn" else f" (go on with --resume {Path(everything['transcript']).stem})"
        lines.append(f"transcript: {everything['transcript']}{ended}")
    return "\n".join(lines) + "\n"


def client_for(args) -> "anthropic.Anthropic | None":
    """The client --faults and --retries ask for, or None to let the stage build its own."""
    if args.faults is None and args.retries is None:
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
    return make_client(model, max_retries=2 if args.retries is None else args.retries, **options)


def model_of_run(which: str) -> str | None:
    """The model an earlier run used, as its transcript's first line names it."""
    from . import transcript
    return transcript.load(transcript.find(which)).named.get("model")
