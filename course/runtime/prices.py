"""The one price list: what a model's tokens cost, in US dollars per million tokens.

Source: Anthropic's pricing page, https://platform.claude.com/docs/en/about-claude/pricing
("Model pricing"), and each model's overview page (https://platform.claude.com/docs/en/models/overview),
read on the date below; the rows the stored copy of the pricing page did not reach were checked against
public price trackers that quote it (phuryn/claude-usage v1.5.7, kurofune/claudit v1.9.2, both checked
against the page on 2026-12-01 and 2026-10-24). The list covers every model the SDK lists as current
(``anthropic.types.Model``) and the legacy models still served. A cache write costs 1.25 times the input
price for 5 minutes and 2 times for an hour (https://platform.claude.com/docs/en/build-with-claude/prompt-caching,
"Pricing"); a cache read is 0.1 times the input price on older models and less on the newest, so each row
states its own. Claude Haiku 5.5 is priced in two bands: a request whose prompt (input, cache writes and
cache reads) is over 100,000 tokens pays the higher band on every token, output included. Check the page
before relying on a number.

The offline model ids are priced like the default Claude model (``models.DEFAULT_CLAUDE_MODEL``):
an offline run is a rehearsal of a real one, so its bill says what the real one would cost if
the real model used as many tokens (the offline token counts are estimates: see
``offline/tokens.py``). A model not in the list has no price: its cost is ``None``, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

from course.runtime.models import DEFAULT_CLAUDE_MODEL, is_offline

PRICES_DATE = "2026-12-01"
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
    # The current line (anthropic.types.Model, SDK 2.17).
    "claude-sonnet-5-5": Price(input=2.00, output=10.00, cache_write=2.50, cache_read=0.10),
    "claude-opus-5-5": Price(input=4.00, output=20.00, cache_write=5.00, cache_read=0.20),
    "claude-haiku-5-5": Price(input=0.10, output=0.50, cache_write=0.125, cache_read=0.01),
    "claude-fable-5-2": Price(input=8.00, output=40.00, cache_write=10.00, cache_read=0.20),
    "claude-mythos-5-2": Price(input=8.00, output=40.00, cache_write=10.00, cache_read=0.20),
    "claude-fable-5-1": Price(input=10.00, output=50.00, cache_write=12.50, cache_read=0.25),
    "claude-mythos-5-1": Price(input=10.00, output=50.00, cache_write=12.50, cache_read=0.25),
    # Legacy, still served.
    "claude-sonnet-5": Price(input=2.00, output=10.00, cache_write=2.50, cache_read=0.20),
    "claude-opus-5": Price(input=5.00, output=25.00, cache_write=6.25, cache_read=0.50),
    "claude-fable-5": Price(input=10.00, output=50.00, cache_write=12.50, cache_read=1.00),
    "claude-mythos-5": Price(input=10.00, output=50.00, cache_write=12.50, cache_read=1.00),
    "claude-opus-4-8": Price(input=5.00, output=25.00, cache_write=6.25, cache_read=0.50),
    "claude-opus-4-7": Price(input=5.00, output=25.00, cache_write=6.25, cache_read=0.50),
    "claude-opus-4-6": Price(input=5.00, output=25.00, cache_write=6.25, cache_read=0.50),
    "claude-opus-4-5": Price(input=5.00, output=25.00, cache_write=6.25, cache_read=0.50),
    "claude-sonnet-4-6": Price(input=3.00, output=15.00, cache_write=3.75, cache_read=0.30),
    "claude-haiku-4-5": Price(input=1.00, output=5.00, cache_write=1.25, cache_read=0.10),
}

# A prompt over this many tokens is billed, on every token of that request, at the second price.
LONG_PROMPT = {"claude-haiku-5-5": (100_000, Price(input=0.50, output=2.50, cache_write=0.625, cache_read=0.05))}


def price_of(model: str) -> Price | None:
    """The price of ``model``; an offline id costs what the default Claude model costs; None if unknown."""
    return PRICES.get(alias_of(model))


def alias_of(model: str) -> str:
    """The price list's name for ``model``: an offline id is the default Claude model, and a dated id
    (claude-haiku-4-5-20251001) is its alias, the date being eight digits (so that claude-fable-5-3,
    a model not on the list, is never priced as claude-fable-5)."""
    if is_offline(model):
        return DEFAULT_CLAUDE_MODEL
    alias, dash, date = model.rpartition("-")
    return alias if dash and len(date) == 8 and date.isdigit() and alias in PRICES else model


def _field(usage, name: str) -> int:
    value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
    return value or 0


def cost(model: str, usage) -> float | None:
    """Dollars for one call's ``usage`` (an SDK object or a dict), or for a run's summed usage."""
    price = price_of(model)
    if price is None:
        return None
    threshold, long_price = LONG_PROMPT.get(alias_of(model), (None, None))
    if threshold is not None and prompt_tokens(usage) > threshold:
        price = long_price  # (a run's summed usage is priced as one request: an upper bound)
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
