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

from course.runtime import runlog, transcript
from course.runtime.models import DEFAULT_CLAUDE_MODEL, OFFLINE, CourseError, is_offline, resolve_model
from course.runtime.trace import TracePrinter, escape_terminal_controls, shorten
from course.helpers.arithmetic import evaluate as calculator
from course.helpers.echo import repeats_the_prompt
from course.helpers.history import turns_as_text
from course.helpers.json_text import calls_in_text
from course.helpers.limits import require_whole_numbers
from course.runtime.wire import sendable
from course.runtime.workspace import SAMPLE, prepare_workspace, shown, snapshot

# These need the SDK (or jsonschema): a second or more to import. They are imported on first use
# (PEP 562), so that `import course` alone stays light for a small process that needs only the rest,
# such as course.sandbox.isolated's server holding s06's command reader.
_ON_FIRST_USE = {
    "as_dict": "course.running.cli", "explain_api_error": "course.running.cli", "stage_main": "course.running.cli", "summary": "course.running.cli",
    "make_client": "course.running.client", "make_async_client": "course.running.client", "Runaway": "course.runtime.guard", "capped": "course.runtime.guard", "Faults": "course.offline",
    "argument_errors": "course.runtime.schema", "describe_parameters": "course.runtime.schema", "private_keys_hidden": "course.sandbox.redaction", "secrets_hidden": "course.sandbox.redaction",
    "why_refused": "course.helpers.replies", "unknown_stop_reason": "course.helpers.replies", "kept_pausing": "course.helpers.replies",
}

__all__ = [
    "CourseError", "DEFAULT_CLAUDE_MODEL", "Faults", "OFFLINE", "Runaway", "SAMPLE", "TracePrinter",
    "argument_errors", "as_dict", "calculator", "calls_in_text", "capped", "repeats_the_prompt",
    "require_whole_numbers", "turns_as_text", "describe_parameters", "escape_terminal_controls", "explain_api_error",
    "is_offline", "make_async_client", "make_client", "prepare_workspace", "private_keys_hidden", "resolve_model", "secrets_hidden", "sendable", "shorten",
    "shown", "snapshot",
    "stage_main", "summary", "unknown_stop_reason", "why_refused", "kept_pausing",
]


def __getattr__(name: str):
    if name not in _ON_FIRST_USE:  # a submodule not imported yet is found by the import system, not here
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(_ON_FIRST_USE[name]), name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_ON_FIRST_USE})


if TYPE_CHECKING:  # what editors and type checkers read
    from course.running.cli import as_dict, explain_api_error, stage_main, summary
    from course.running.client import make_async_client, make_client
    from course.runtime.guard import Runaway, capped
    from course.offline import Faults
    from course.helpers.replies import kept_pausing, unknown_stop_reason, why_refused
    from course.sandbox.redaction import private_keys_hidden, secrets_hidden
    from course.runtime.schema import argument_errors, describe_parameters
