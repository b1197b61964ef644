"""The one price list: what a model's tokens cost, in US dollars per million tokens.

Source: Anthropic's pricing page, https://platform.claude.com/docs/en/about-claude/pricing
("Model pricing"), read on the date below. Prompt caching multiplies the input price: writing to
the 5-minute cache costs 1.25 times the input price, to the 1-hour cache 2 times, reading from either
0.1 times
(https://platform.claude.com/docs/en/build-with-claude/prompt-caching, "Pricing"). The default
model's rates (Claude Sonnet 5: $2 in, $10 out, $0.20 a cache read, $2.50 a 5-minute cache write)
were checked against third-party trackers quoting that page (the release notes of
uttamdeb/agent-telemetry v1.6.4, and apidog's Claude Sonnet 5.5 pricing guide), as the stored copy
of the page did not reach that row. Check the page before relying on a number.

The offline model ids are priced like the default Claude model (``models.DEFAULT_CLAUDE_MODEL``):
an offline run is a rehearsal of a real one, so its bill says what the real one would cost if
the real model used as many tokens (the offline token counts are estimates: see
``offline/tokens.py``). A model not in the list has no price: its cost is ``None``, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

from course.runtime.models import DEFAULT_CLAUDE_MODEL, is_offline

PRICES_DATE = "2026-11-30"
SOURCE = "https://platform.claude.com/docs/en/about-claude/pricing"
MILLION = 1_000_000


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens of each kind that ``usage`` reports."""

    input: float
    output: float
    cache_write: float   # a 5-minute cache write: 1.25 × input
    cache_read: float    # a cache hit: 0.1 × input

    @property
    def cache_write_1h(self) -> float:
        """A 1-hour cache write: 2 × input."""
        return 2 * self.input


PRICES = {
    "claude-sonnet-5": Price(input=2.00, output=10.00, cache_write=2.50, cache_read=0.20),
    "claude-opus-4-5": Price(input=5.00, output=25.00, cache_write=6.25, cache_read=0.50),
    "claude-opus-4-6": Price(input=5.00, output=25.00, cache_write=6.25, cache_read=0.50),
    "claude-sonnet-4-5": Price(input=3.00, output=15.00, cache_write=3.75, cache_read=0.30),
    "claude-sonnet-4-6": Price(input=3.00, output=15.00, cache_write=3.75, cache_read=0.30),
    "claude-haiku-4-5": Price(input=1.00, output=5.00, cache_write=1.25, cache_read=0.10),
}


def price_of(model: str) -> Price | None:
    """The price of ``model``; an offline id costs what the default Claude model costs; None if unknown."""
    if is_offline(model):
        model = DEFAULT_CLAUDE_MODEL
    if model in PRICES:
        return PRICES[model]
    # A dated id (claude-sonnet-4-5-20250929) is priced like its alias.
    return next((price for alias, price in PRICES.items()
                 if model.startswith(alias + "-") and model[len(alias) + 1:].isdigit()), None)


def _field(usage, name: str) -> int:
    value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
    return value or 0


def cost(model: str, usage) -> float | None:
    """Dollars for one call's ``usage`` (an SDK object or a dict), or for a run's summed usage."""
    price = price_of(model)
    if price is None:
        return None
    # Writes are split by lifetime when usage says so (cache_creation); a sum without the split is 5 minutes.
    written_1h = _field(_field_object(usage, "cache_creation"), "ephemeral_1h_input_tokens")
    return (_field(usage, "input_tokens") * price.input
            + _field(usage, "output_tokens") * price.output
            + (_field(usage, "cache_creation_input_tokens") - written_1h) * price.cache_write
            + written_1h * price.cache_write_1h
            + _field(usage, "cache_read_input_tokens") * price.cache_read) / MILLION


def _field_object(usage, name: str):
    value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
    return value if value is not None else {}


def prompt_tokens(usage) -> int:
    """Every input token of a call, cached or not: what had to fit in the context window."""
    return (_field(usage, "input_tokens") + _field(usage, "cache_creation_input_tokens")
            + _field(usage, "cache_read_input_tokens"))
