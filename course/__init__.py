"""The course's support package: everything around the agent that the learner does not build.

* ``make_client`` (``make_async_client``) / ``resolve_model``: the client factory and the one place model ids are decided;
* ``offline``: the in-process offline model behind the real SDK;
* ``prepare_workspace``: the sample project, copied fresh per run;
* ``TracePrinter`` and ``stage_main``: the command line every stage shares;
* ``transcript``: the file a run's state is saved to every step, and finding it again to resume.
* what a stage needs that its chapter does not teach, each behind one call: ``calculator`` (the
  ``calculate`` tool's arithmetic), ``calls_in_text`` (tool calls a model wrote as JSON in its text, for
  s04), ``repeats_the_prompt`` (a reply that echoes its request), ``require_whole_numbers`` (s03's
  limits checked), ``turns_as_text`` (old turns for s05's summariser), ``why_refused``,
  ``unknown_stop_reason`` and ``kept_pausing`` (a refusal's stop_details, a stop reason a stage does not
  know, and a turn the API keeps pausing, each in one line, for s03 on);
* ``isolated`` (imported by name): calling a function in a child process, where a crash in C code cannot
  end the run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from . import runlog, transcript
from .models import DEFAULT_CLAUDE_MODEL, OFFLINE, CourseError, is_offline, resolve_model
from .trace import TracePrinter, escape_terminal_controls, shorten
from .arithmetic import evaluate as calculator
from .echo import repeats_the_prompt
from .history import turns_as_text
from .json_text import calls_in_text
from .limits import require_whole_numbers
from .wire import sendable
from .workspace import SAMPLE, prepare_workspace, shown, snapshot

# These need the SDK (or jsonschema): a second or more to import. They are imported on first use
# (PEP 562), so that `import course` alone stays light for a small process that needs only the rest,
# such as course.isolated's server holding s06's command reader.
_ON_FIRST_USE = {
    "as_dict": "cli", "explain_api_error": "cli", "stage_main": "cli", "summary": "cli",
    "make_client": "client", "make_async_client": "client", "Runaway": "guard", "capped": "guard", "Faults": "offline",
    "argument_errors": "schema", "describe_parameters": "schema", "private_keys_hidden": "redaction",
    "why_refused": "replies", "unknown_stop_reason": "replies", "kept_pausing": "replies",
}

__all__ = [
    "CourseError", "DEFAULT_CLAUDE_MODEL", "Faults", "OFFLINE", "Runaway", "SAMPLE", "TracePrinter",
    "argument_errors", "as_dict", "calculator", "calls_in_text", "capped", "repeats_the_prompt",
    "require_whole_numbers", "turns_as_text", "describe_parameters", "escape_terminal_controls", "explain_api_error",
    "is_offline", "make_async_client", "make_client", "prepare_workspace", "private_keys_hidden", "resolve_model", "sendable", "shorten",
    "shown", "snapshot",
    "stage_main", "summary", "unknown_stop_reason", "why_refused", "kept_pausing",
]


def __getattr__(name: str):
    if name not in _ON_FIRST_USE:  # a submodule not imported yet is found by the import system, not here
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(f".{_ON_FIRST_USE[name]}", __name__), name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_ON_FIRST_USE})


if TYPE_CHECKING:  # what editors and type checkers read
    from .cli import as_dict, explain_api_error, stage_main, summary
    from .client import make_async_client, make_client
    from .guard import Runaway, capped
    from .offline import Faults
    from .replies import kept_pausing, unknown_stop_reason, why_refused
    from .redaction import private_keys_hidden
    from .schema import argument_errors, describe_parameters
