"""The registry of offline behaviours, chosen by model id.

A behaviour is a pure function ``Conversation -> Reply``. Each one is documented, in its own
module, with the observation (from the course's source articles) that it reproduces.

Fixed ids are registered with ``@behaviour("offline-name")``; parametric ids such as
``offline-long-60`` with ``@behaviour_family("offline-long-", "N")``, whose function receives
the integer that follows the prefix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .conversation import Conversation


@dataclass
class Reply:
    blocks: list[dict] = field(default_factory=list)
    stop_reason: str | None = None  # None: "tool_use" or "end_turn", decided from the blocks

    def text(self, text: str) -> "Reply":
        self.blocks.append({"type": "text", "text": text})
        return self

    def call(self, name: str, **arguments) -> "Reply":
        self.blocks.append({"type": "tool_use", "name": name, "input": arguments})
        return self


Behaviour = Callable[[Conversation], Reply]


class UnknownBehaviour(LookupError):
    pass


_FIXED: dict[str, Behaviour] = {}
_FAMILIES: dict[str, tuple[str, Callable[[int], Behaviour]]] = {}


def behaviour(model_id: str):
    def register(function: Behaviour) -> Behaviour:
        _FIXED[model_id] = function
        return function

    return register


def behaviour_family(prefix: str, parameter: str):
    def register(factory: Callable[[int], Behaviour]):
        _FAMILIES[prefix] = (parameter, factory)
        return factory

    return register


def known_models() -> list[str]:
    _load()
    return sorted(_FIXED) + [f"{prefix}{parameter}" for prefix, (parameter, _) in sorted(_FAMILIES.items())]


def describe(model_id: str) -> str:
    """The first sentence of the behaviour's docstring: what it does or reproduces."""
    _load()
    function = _FIXED.get(model_id) or next(factory for prefix, (_, factory) in _FAMILIES.items()
                                            if model_id.startswith(prefix))
    doc = " ".join((function.__doc__ or "").split())
    return doc.split(". ")[0].rstrip(".") + "." if doc else ""


def behaviour_for(model_id: str) -> Behaviour:
    _load()
    if model_id in _FIXED:
        return _FIXED[model_id]
    for prefix, (_, factory) in _FAMILIES.items():
        suffix = model_id[len(prefix):]
        if model_id.startswith(prefix) and suffix.isdigit() and int(suffix) > 0:
            return factory(int(suffix))
    raise UnknownBehaviour(f"no offline model is called {model_id!r}; known: {', '.join(known_models())}")


def _load() -> None:
    # Importing the behaviour modules registers them; done lazily to avoid import cycles.
    from . import tutor, misbehaving  # noqa: F401
    from . import long_tasks  # noqa: F401
    from . import faulty_callers  # noqa: F401
    from . import flood  # noqa: F401
    from . import reckless  # noqa: F401
