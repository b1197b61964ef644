"""The course's support package: everything around the agent that the learner does not build.

* ``make_client`` / ``resolve_model``: the client factory and the one place model ids are decided;
* ``offline``: the in-process offline model behind the real SDK;
* ``prepare_workspace``: the sample project, copied fresh per run;
* ``TracePrinter`` and ``stage_main``: the command line every stage shares;
* ``transcript``: the file a run's state is saved to every step, and finding it again to resume.
"""

from .cli import as_dict, explain_api_error, stage_main, summary
from .client import make_client
from . import runlog, transcript
from .guard import Runaway, capped
from .schema import argument_errors, describe_parameters
from .models import DEFAULT_CLAUDE_MODEL, OFFLINE, CourseError, is_offline, resolve_model
from .offline import Faults
from .trace import TracePrinter, shorten
from .workspace import SAMPLE, prepare_workspace, shown, snapshot
from .wire import sendable

__all__ = [
    "CourseError", "DEFAULT_CLAUDE_MODEL", "Faults", "OFFLINE", "Runaway", "SAMPLE", "TracePrinter",
    "argument_errors", "as_dict", "capped", "describe_parameters", "explain_api_error",
    "is_offline", "make_client", "prepare_workspace", "resolve_model", "sendable", "shorten", "shown", "snapshot",
    "stage_main", "summary",
]
