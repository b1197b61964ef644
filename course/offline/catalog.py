"""The catalog of offline models: every model id, the behaviour it selects, and what it does.

A behaviour is a pure function ``Conversation -> Reply`` (``behaviours.py``), documented in its own
module with the observation it reproduces. A family such as ``offline-long-N`` takes a whole
number N > 0 after its prefix, and its entry is a factory: ``N -> behaviour``.

This is the one table that names them. It imports the behaviour modules; none of them imports it
back (``tests/test_offline_api.py`` checks that ``course/offline`` has no import cycle).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from course.offline import faulty_callers, flood, long_tasks, misbehaving, reckless, tutor
from course.offline import small_local, thoughtful
from course.offline.behaviours import Behaviour

FAMILY_PARAMETER = "N"


@dataclass(frozen=True)
class Model:
    id: str               # "offline-typo", or a family's pattern, "offline-long-N"
    behaviour: Callable   # a Behaviour; for a family, a factory N -> Behaviour
    description: str      # one line, plain text: what the model does

    @property
    def prefix(self) -> str | None:
        """A family's prefix ("offline-long-"), None for a single model."""
        return self.id[:-len(FAMILY_PARAMETER)] if self.id.endswith("-" + FAMILY_PARAMETER) else None


TASK_FAMILIES = [family for family in tutor.FAMILIES if family != "work_summary"]  # that one a harness asks for

MODELS: tuple[Model, ...] = (
    Model("offline", tutor.tutor, "a competent tutor for {} task families: {}, …".format(  # counted from the tutor's own table
        len(TASK_FAMILIES), ", ".join(TASK_FAMILIES[:4]))),
    Model("offline-looping", misbehaving.looping,
          "repeats the same write_file call forever once the report is written"),
    Model("offline-refusing", misbehaving.refusing,
          "declines the task: every reply ends with stop_reason refusal"),
    Model("offline-typo", faulty_callers.typo,
          "misspells the file it reads; fixes it only when an error names the nearest"),
    Model("offline-unknown-tool", faulty_callers.unknown_tool,
          "calls read_text_file, a tool the harness lacks, until an error lists the tools"),
    Model("offline-bad-args", faulty_callers.bad_args,
          "sends read_file bad arguments until an error names the field and its type"),
    Model("offline-text-calls", faulty_callers.text_calls,
          "writes its tool calls as JSON text, in four shapes, never as tool_use blocks"),
    Model("offline-verbose", long_tasks.verbose,
          "the tutor, thinking aloud for over a thousand tokens before every reply"),
    Model("offline-reckless", reckless.reckless,
          "deletes, overwrites and runs rm on the way; changes course when told why not"),
    Model("offline-long-N", long_tasks.long_task,
          "adds up the amounts of a folder, one file a turn: a task of about N turns"),
    Model("offline-flood-N", flood.flood,
          "counts the ERROR lines of a log folder, one large file a turn, at most N files"),
    Model("offline-thinking", thoughtful.thoughtful,
          "thinking on: signed thinking, redacted_thinking, parallel read_file calls"),
    # Measured on a small local model (Gemma 3 270M base, llama.cpp): see small_local.py.
    Model("offline-echo", small_local.echo,
          "copies its prompt back until the reply is cut at max_tokens"),
    Model("offline-ramble", small_local.rambling,
          "sends one complete tool_use, then rambles until cut at max_tokens"),
    Model("offline-ramble-text", small_local.rambling_text,
          "writes one complete call as JSON text, then rambles until cut at max_tokens"),
    Model("offline-stubborn", small_local.stubborn,
          "misspells the file it reads and repeats the call, whatever the error says"),
    Model("offline-borrowing", small_local.borrowing,
          "reads the example file of the tool description, repeats the result back"),
)


class UnknownBehaviour(LookupError):
    pass


def known_models() -> list[str]:
    return [model.id for model in MODELS]


def entry(model_id: str) -> Model:
    """The catalog entry for a model id: its own, or its family's (``offline-long-60``)."""
    for model in MODELS:
        if model.id == model_id and not model.prefix:
            return model
        suffix = model_id[len(model.prefix):] if model.prefix and model_id.startswith(model.prefix) else ""
        if suffix.isdigit() and int(suffix) > 0:
            return model
    raise UnknownBehaviour(f"no offline model is called {model_id!r}; known: {', '.join(known_models())}")


def behaviour_for(model_id: str) -> Behaviour:
    model = entry(model_id)
    return model.behaviour(int(model_id[len(model.prefix):])) if model.prefix else model.behaviour


def describe(model_id: str) -> str:
    return entry(model_id).description
