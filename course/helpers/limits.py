"""What a stage's limits need that its chapter does not teach: the check that each is a whole number
of at least 1, and the command-line options made from the fields of the stage's ``Limits`` dataclass
(s03 on), so that each limit is named once, in the stage."""

from __future__ import annotations

import argparse
import dataclasses

from course.runtime.models import CourseError

# How each limit reads in --help; a limit not listed here still gets an option, with a plain help.
HELP = {
    "max_turns": "stop after this many model calls",
    "token_budget": "stop once this many tokens are used",
    "max_repeats": "stop when one call repeats this often in a row",
    "max_consecutive_errors": "stop after this many failed calls in a row",
}


def require_whole_numbers(limits) -> None:
    """Refuse a nonsense limit (0, -1, 2.5, True, "ten") before any call is made."""
    for field in dataclasses.fields(limits):
        value = getattr(limits, field.name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise CourseError(f"{field.name} must be a whole number of at least 1, got {value!r}")


def whole_number(name: str, text: str) -> int:
    """An option's value: a whole number of at least 1, written as digits (1_000 and 1000 alike)."""
    cleaned = text.strip().replace("_", "")
    if not cleaned.isdigit() or int(cleaned) < 1:
        raise CourseError(f"{name} must be a whole number of at least 1, got {text!r}")
    return int(cleaned)


def add_options(parser: argparse.ArgumentParser, limits_type) -> list[str]:
    """One option per field of ``limits_type`` (max_turns: --max-turns N); returns the fields' names."""
    names = []
    for field in dataclasses.fields(limits_type):
        parser.add_argument("--" + field.name.replace("_", "-"), dest=field.name, metavar="N",
                            help=f"{HELP.get(field.name, field.name.replace('_', ' '))} (default {field.default})")
        names.append(field.name)
    return names


def from_options(limits_type, args: argparse.Namespace, names: list[str]):
    """The limits the command line gave, the rest at their defaults; a nonsense value is a CourseError."""
    return limits_type(**{name: whole_number(name, getattr(args, name)) for name in names
                          if getattr(args, name) is not None})


def run_options(run, options: dict) -> dict:
    """The options a stage's ``run`` takes, for tools that drive every stage alike (the ladder, the
    benchmarks, the docs): a limit's name (max_turns=5) goes into ``limits=`` for a stage that has
    limits (s03 on), and an option ``run`` has no parameter for is dropped (s01 has no limits)."""
    import inspect  # here: the command line of a stage never needs it

    parameters = inspect.signature(run).parameters
    if any(parameter.kind is parameter.VAR_KEYWORD for parameter in parameters.values()):
        return dict(options)
    taken = {name: value for name, value in options.items() if name in parameters}
    default = parameters["limits"].default if "limits" in parameters else None
    if dataclasses.is_dataclass(default):
        names = {field.name for field in dataclasses.fields(default)}
        given = {name: value for name, value in options.items() if name in names}
        if given:
            taken["limits"] = dataclasses.replace(taken.get("limits", default), **given)
    return taken
