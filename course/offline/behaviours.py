"""What an offline behaviour is: a pure function ``Conversation -> Reply``.

Each behaviour is documented, in its own module, with the observation (from the course's source
articles) that it reproduces; ``catalog.py`` names them by model id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from course.offline.conversation import Conversation


@dataclass
class Reply:
    blocks: list[dict] = field(default_factory=list)
    stop_reason: str | None = None  # None: "tool_use" or "end_turn", decided from the blocks
    stop_details: dict | None = None  # a refusal's {"type": "refusal", "category", "explanation"}

    def text(self, text: str) -> "Reply":
        self.blocks.append({"type": "text", "text": text})
        return self

    def think(self, thinking: str) -> "Reply":
        """A thinking block; the offline API signs it on the way out (``thinking.py``)."""
        self.blocks.append({"type": "thinking", "thinking": thinking})
        return self

    def redacted(self) -> "Reply":
        """A redacted_thinking block; the offline API fills in its encrypted data."""
        self.blocks.append({"type": "redacted_thinking"})
        return self

    def call(self, name: str, **arguments) -> "Reply":
        self.blocks.append({"type": "tool_use", "name": name, "input": arguments})
        return self

    def reads(self, paths) -> "Reply":
        """A read_file call for each path, in one reply: independent reads go together."""
        for path in paths:
            self.call("read_file", path=path)
        return self


Behaviour = Callable[[Conversation], Reply]
