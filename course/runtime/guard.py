"""A cap on model calls, for tests and the ladder: a runaway loop is stopped from outside.

s01 has no stop condition by design, so a test that drives it with a looping model needs a way
to end the run that is not the stage's own. ``capped(client, 50)`` behaves like the client until
its 51st ``messages.create`` call, which raises ``Runaway``. It also keeps every reply's
``usage`` in ``.usages``, so a benchmark or a notebook can see the tokens of each call.
"""

from __future__ import annotations


class Runaway(RuntimeError):
    """Raised by a capped client when the loop asks for one model call too many."""

    def __init__(self, cap: int):
        super().__init__(f"still going after {cap} model calls: stopped by the guard, not by the agent")
        self.cap = cap


class _CappedMessages:
    def __init__(self, messages, cap: int):
        self._messages = messages
        self.cap = cap
        self.calls = 0
        self.usages = []

    def create(self, **request):
        if self.calls >= self.cap:
            raise Runaway(self.cap)
        self.calls += 1
        reply = self._messages.create(**request)
        self.usages.append(reply.usage)
        return reply

    def __getattr__(self, name):  # count_tokens and the rest pass through
        return getattr(self._messages, name)


class CappedClient:
    def __init__(self, client, cap: int):
        self._client = client
        self.messages = _CappedMessages(client.messages, cap)

    @property
    def calls(self) -> int:
        return self.messages.calls

    @property
    def usages(self) -> list:
        """The usage of every reply so far, in order."""
        return self.messages.usages

    def __getattr__(self, name):
        return getattr(self._client, name)


def capped(client, cap: int) -> CappedClient:
    return CappedClient(client, cap)
