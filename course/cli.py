"""The command line every stage shares: ``python sNN/agent.py "TASK" [--model ID] [--workspace DIR] [--json]``.

Argument parsing, the trace, the final answer, the JSON summary and the one-line error messages
live here, so that a stage's ``main()`` is two lines and its file is about the loop.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import sys

import anthropic

from .commands import python_command
from .models import CourseError
from .trace import TracePrinter

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
        message = (body.get("error") or {}).get("message") or str(error)
        hints = {401: "check ANTHROPIC_API_KEY", 404: "check the model id (--model or MODEL_ID)",
                 429: "wait and retry, or lower the request rate", 529: "the API is overloaded; retry later"}
        hint = hints.get(error.status_code, "")
        return f"the API answered {error.status_code}: {message}" + (f" ({hint})" if hint else "")
    if isinstance(error, anthropic.APIConnectionError):
        return "could not reach the API: check your network, or ANTHROPIC_BASE_URL for a local server"
    return str(error)


def stage_main(stage: str, run, argv=None, *, options: tuple = ()) -> int:
    """Parse the command line, run the stage with a live trace, print the answer. Returns the exit code.

    ``options`` are extra ``(flags, kwargs)`` pairs for ``argparse`` whose values go to ``run`` as
    keyword arguments (later stages add their limits this way).
    """
    parser = argparse.ArgumentParser(prog=f"{python_command()} {stage}/agent.py", description=f"Run the {stage} agent on a task.")
    parser.add_argument("task", help="what the agent should do, in English or Japanese")
    parser.add_argument("--model", help="model id (default: $MODEL_ID, else offline without an API key)")
    parser.add_argument("--workspace", help="folder to work in (default: a fresh copy of the sample workspace)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line summarising the run")
    extra = [parser.add_argument(*flags, **kwargs).dest for flags, kwargs in options]
    args = parser.parse_args(argv)
    try:
        result = run(args.task, model=args.model, workspace=args.workspace, trace=TracePrinter(),
                     **{name: getattr(args, name) for name in extra if getattr(args, name) is not None})
    except CourseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except anthropic.APIError as error:
        print(f"error: {explain_api_error(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    data = summary(result)
    turns = f"{data['turns']} turn" + ("" if data["turns"] == 1 else "s")
    usage = data["usage"]
    cached = (f", and {usage['cache_read_input_tokens']} read from the cache + {usage['cache_creation_input_tokens']} "
              "written to it" if usage.get("cache_read_input_tokens") or usage.get("cache_creation_input_tokens") else "")
    print(f"\nanswer ({data['stop_reason']}, {turns}, "
          f"{usage['input_tokens']} input + {usage['output_tokens']} output tokens{cached}):")
    print(data["answer"] or "(no text)")
    explanation = as_dict(result).get("explanation")
    if data["stop_reason"] != "end_turn" and explanation and explanation != data["stop_reason"]:
        print(f"stopped: {explanation}")
    print(f"workspace: {data['workspace']}")
    if args.json:
        print(json.dumps(data, ensure_ascii=False))
    return 0 if data["stop_reason"] == "end_turn" else 1
