"""Prompt caching in the offline model, against worked examples of what the API documents.

Every example is sized with the offline token rule (``course/offline/tokens.py``): a text of 4·n
ASCII bytes is n tokens, and a message adds 4 tokens of overhead to its first block. So a text
block of 400 bytes in a message of its own is 104 tokens of prompt, and the numbers below can be
checked by hand. The rules come from Anthropic's prompt caching guide (cited in
``course/offline/cache.py``): prefixes in the order tools → system → messages, at most four
breakpoints, a minimum of 1,024 tokens, a lookback of 20 blocks from each breakpoint, and
``input_tokens`` counting only what is neither read from the cache nor written to it.
"""

from __future__ import annotations

import anthropic
import pytest

import course
from course.runtime import prices
from course.offline import tokens
from course.offline.cache import LOOKBACK_BLOCKS, MINIMUM_CACHEABLE_TOKENS, PromptCache

MARK = {"type": "ephemeral"}


def text(tokens_wanted: int, letter: str = "a") -> str:
    return letter * (4 * tokens_wanted)


def message(role: str, size: int, letter: str = "a", marked: bool = False) -> dict:
    block = {"type": "text", "text": text(size, letter)}
    if marked:
        block["cache_control"] = MARK
    return {"role": role, "content": [block]}


def conversation(count: int, size: int = 100, mark_last: bool = True, letter: str = "a") -> list[dict]:
    """``count`` one-block messages of ``size`` tokens of text each (size + 4 tokens of prompt), alternating roles."""
    messages = [message("user" if i % 2 == 0 else "assistant", size, letter) for i in range(count)]
    if mark_last:
        messages[-1]["content"][0]["cache_control"] = MARK
    return messages


def request(messages: list, **fields) -> dict:
    return dict({"model": "offline", "max_tokens": 64, "messages": messages}, **fields)


def split(usage: dict) -> tuple[int, int, int]:
    return usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"], usage["input_tokens"]


# ---------------------------------------------------------------- hits and misses

def test_the_first_call_writes_the_prefix_and_the_same_call_again_reads_it():
    cache = PromptCache()
    body = request(conversation(12))                       # 12 × 104 = 1,248 tokens, all up to the mark
    assert split(cache.usage(body)) == (0, 1_248, 0)       # a miss: written, billed at 1.25×
    assert split(cache.usage(body)) == (1_248, 0, 0)       # a hit: read, billed at 0.1×


def test_only_the_tokens_after_the_last_breakpoint_are_plain_input():
    cache = PromptCache()
    messages = conversation(12) + [message("assistant", 50), message("user", 20)]
    assert split(cache.usage(request(messages))) == (0, 1_248, 54 + 24)


def test_a_growing_conversation_reads_what_the_call_before_it_wrote():
    cache = PromptCache()
    cache.usage(request(conversation(12)))
    longer = conversation(12, mark_last=False) + [message("assistant", 100), message("user", 100, marked=True)]
    assert split(cache.usage(request(longer))) == (1_248, 208, 0)


def test_a_changed_early_block_misses_and_everything_after_it_is_written_again():
    cache = PromptCache()
    cache.usage(request(conversation(12)))
    changed = conversation(12)
    changed[1] = message("assistant", 100, letter="b")     # one early block differs: every prefix holding it too
    assert split(cache.usage(request(changed))) == (0, 1_248, 0)


def test_the_system_breakpoint_still_hits_when_a_later_message_changes():
    cache = PromptCache()
    system = [{"type": "text", "text": text(1_100), "cache_control": MARK}]
    cache.usage(request(conversation(3), system=system))
    # tools → system → messages: the system prefix (1,100 tokens) is unchanged, the messages are not.
    usage = cache.usage(request(conversation(3, letter="z"), system=system))
    assert split(usage) == (1_100, 3 * 104, 0)


def test_tools_come_first_so_changing_a_tool_misses_the_system_prefix_too():
    cache = PromptCache()
    tool = {"name": "look", "description": "Look.", "input_schema": {"type": "object", "properties": {}}}
    system = [{"type": "text", "text": text(1_100), "cache_control": MARK}]
    cache.usage(request(conversation(1, mark_last=False), tools=[tool], system=system))
    renamed = dict(tool, description="Look around.")
    usage = cache.usage(request(conversation(1, mark_last=False), tools=[renamed], system=system))
    assert usage["cache_read_input_tokens"] == 0
    assert usage["cache_creation_input_tokens"] == tokens.json_tokens(renamed) + 1_100


def test_moving_a_breakpoint_does_not_change_the_prompt():
    cache = PromptCache()
    cache.usage(request(conversation(12)))
    unmarked_then_marked = conversation(12, mark_last=False) + [message("assistant", 10, marked=True)]
    assert split(cache.usage(request(unmarked_then_marked))) == (1_248, 14, 0)


def test_each_client_has_its_own_cache():
    body = request(conversation(12))
    PromptCache().usage(body)
    assert split(PromptCache().usage(body)) == (0, 1_248, 0)


def test_a_cache_is_per_model():
    cache = PromptCache()
    cache.usage(request(conversation(12)))
    assert split(cache.usage(dict(request(conversation(12)), model="offline-flood-3"))) == (0, 1_248, 0)


# ---------------------------------------------------------------- the minimum and the lookback

def test_a_prefix_under_the_minimum_is_not_cached_even_when_marked():
    cache = PromptCache()
    short = request(conversation(9))                        # 9 × 104 = 936 tokens < 1,024
    assert 9 * 104 < MINIMUM_CACHEABLE_TOKENS
    assert split(cache.usage(short)) == (0, 0, 936)
    assert split(cache.usage(short)) == (0, 0, 936)         # and so never read either


@pytest.mark.parametrize("added, hit", [(LOOKBACK_BLOCKS - 1, True), (LOOKBACK_BLOCKS, False)])
def test_a_breakpoint_finds_an_earlier_entry_only_within_the_lookback(added, hit):
    cache = PromptCache()
    cache.usage(request(conversation(12)))                  # an entry at block 12
    later = conversation(12 + added)                        # the mark `added` blocks further on
    usage = cache.usage(request(later))
    total = (12 + added) * 104
    assert split(usage) == ((1_248, total - 1_248, 0) if hit else (0, total, 0))


def test_an_earlier_breakpoint_reaches_back_where_the_last_one_cannot():
    cache = PromptCache()
    cache.usage(request(conversation(12)))
    later = conversation(12 + 30)
    later[15]["content"][0]["cache_control"] = MARK        # 4 blocks after the entry: within its lookback
    assert split(cache.usage(request(later))) == (1_248, 42 * 104 - 1_248, 0)


# ---------------------------------------------------------------- through the SDK, and the API's errors

def test_the_sdk_reports_the_split_and_it_adds_up_to_the_prompt():
    client = course.make_client("offline")
    system = [{"type": "text", "text": "You are terse. " + text(1_100), "cache_control": MARK}]
    messages = [{"role": "user", "content": [{"type": "text", "text": "List the files", "cache_control": MARK}]}]
    first = client.messages.create(model="offline", max_tokens=64, system=system, messages=messages).usage
    again = client.messages.create(model="offline", max_tokens=64, system=system, messages=messages).usage
    counted = client.messages.count_tokens(model="offline", system=system, messages=messages).input_tokens
    assert first.cache_read_input_tokens == 0 and first.cache_creation_input_tokens == counted
    assert again.cache_read_input_tokens == counted and again.cache_creation_input_tokens == 0
    assert again.input_tokens == 0
    price = prices.price_of("offline")
    assert prices.cost("offline", again) == pytest.approx((counted * price.cache_read + again.output_tokens * price.output) / 1e6)
    assert prices.cost("offline", first) == pytest.approx((counted * price.cache_write + first.output_tokens * price.output) / 1e6)


def test_a_cache_mark_costs_no_tokens():
    messages = conversation(3, mark_last=False)
    marked = conversation(3)
    tool = {"name": "look", "description": "Look.", "input_schema": {"type": "object"}}
    assert (tokens.request_tokens(request(messages, tools=[tool]))
            == tokens.request_tokens(request(marked, tools=[dict(tool, cache_control=MARK)])))


def test_a_fifth_breakpoint_gets_the_api_400():
    client = course.make_client("offline")
    messages = [{"role": "user", "content": [{"type": "text", "text": f"part {i}", "cache_control": MARK}
                                             for i in range(5)]}]
    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.create(model="offline", max_tokens=64, messages=messages)
    assert raised.value.status_code == 400
    assert raised.value.body["error"] == {"type": "invalid_request_error",
                                          "message": "A maximum of 4 blocks with cache_control may be provided. Found 5."}
    with pytest.raises(anthropic.BadRequestError):  # count_tokens checks the request the same way
        client.messages.count_tokens(model="offline", messages=messages)


def test_four_breakpoints_are_allowed():
    client = course.make_client("offline")
    messages = [{"role": "user", "content": [{"type": "text", "text": f"part {i}", "cache_control": MARK}
                                             for i in range(4)]}]
    assert client.messages.create(model="offline", max_tokens=64, messages=messages).usage.input_tokens > 0


def test_a_cache_control_that_is_not_ephemeral_is_refused():
    client = course.make_client("offline")
    messages = [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "forever"}}]}]
    with pytest.raises(anthropic.BadRequestError, match="ephemeral"):
        client.messages.create(model="offline", max_tokens=64, messages=messages)


# ---------------------------------------------------------------- the price list

def test_a_call_is_priced_by_kind_of_token():
    price = prices.price_of(course.DEFAULT_CLAUDE_MODEL)
    usage = {"input_tokens": 1_000, "output_tokens": 100, "cache_creation_input_tokens": 2_000,
             "cache_read_input_tokens": 10_000}
    by_hand = (1_000 * price.input + 100 * price.output + 2_000 * price.cache_write + 10_000 * price.cache_read) / 1e6
    assert prices.cost("offline", usage) == pytest.approx(by_hand)
    assert price.cache_write == pytest.approx(1.25 * price.input) and price.cache_read < price.input


def test_every_model_the_sdk_lists_is_priced_and_the_default_is_of_the_current_line():
    import typing

    from course.runtime.models import DEFAULT_CLAUDE_MODEL
    listed = typing.get_args(typing.get_args(anthropic.types.Model)[0])
    unpriced = [model for model in listed if model != "claude-mythos-preview" and prices.price_of(model) is None]
    assert not unpriced, f"add these to course/runtime/prices.py, from the pricing page: {unpriced}"
    assert prices.price_of(DEFAULT_CLAUDE_MODEL) is not None
    assert DEFAULT_CLAUDE_MODEL in listed
    assert DEFAULT_CLAUDE_MODEL not in anthropic._data.DEPRECATED_MODELS


def test_a_long_prompt_on_a_banded_model_pays_the_second_band_on_every_token():
    short = {"input_tokens": 100_000, "output_tokens": 1_000}
    long = {"input_tokens": 100_001, "output_tokens": 1_000}
    per_token_short = prices.cost("claude-haiku-5-5", short) / (100_000 * 0.10 + 1_000 * 0.50) * 1e6
    per_token_long = prices.cost("claude-haiku-5-5", long) / (100_001 * 0.50 + 1_000 * 2.50) * 1e6
    assert per_token_short == pytest.approx(1) and per_token_long == pytest.approx(1)


def test_a_model_that_only_resembles_a_listed_one_is_not_priced_as_it():
    assert prices.price_of("claude-fable-5-9") is None  # a later model, not claude-fable-5 with a date
    assert prices.price_of("claude-sonnet-5-5-20261001") == prices.PRICES["claude-sonnet-5-5"]


def test_an_unknown_model_has_no_price_rather_than_a_guess():
    assert prices.price_of("qwen3-coder") is None
    assert prices.cost("qwen3-coder", {"input_tokens": 10, "output_tokens": 1}) is None
    assert prices.price_of("claude-haiku-4-5-20251001") == prices.PRICES["claude-haiku-4-5"]


# ---------------------------------------------------------------- the bill of a run: runs log and stats

@pytest.mark.stage("s05")  # s05 runs, the runs log records
def test_the_runs_log_and_stats_give_the_cost_of_each_run(tmp_path, workspace):
    from conftest import load_stage
    from course.runtime import runlog
    from course.lab import stats
    from course.offline.flood import COUNT_TASK, logs

    log = tmp_path / "runs.jsonl"
    logs(workspace, 20)
    client = course.capped(course.make_client("offline-flood-20"), 100)
    result = load_stage("s05").run(COUNT_TASK, client=client, model="offline-flood-20", workspace=workspace, runs_log=log)
    runlog.append({"stage": "s05", "model": "qwen3-coder", "usage": {"input_tokens": 10, "output_tokens": 1}}, log)
    records = runlog.read(log)
    by_hand = sum(prices.cost("offline", usage) for usage in client.usages)
    assert records[0]["cost_usd"] == pytest.approx(by_hand)
    assert records[0]["usage"]["cache_read_input_tokens"] == result.usage["cache_read_input_tokens"] > 0
    assert records[1]["cost_usd"] is None                      # a model with no price is not guessed
    cost = stats.summarise(records)["cost"]
    assert (cost["priced_runs"], cost["unpriced_runs"]) == (1, 1)
    assert cost["mean_usd"] == pytest.approx(by_hand) == pytest.approx(cost["total_usd"])
    assert f"cost per run: mean ${by_hand:.4f}" in stats.report(log)


# ---------------------------------------------------------------- the 1-hour lifetime

def test_the_tokens_up_to_a_one_hour_breakpoint_are_written_for_an_hour_the_rest_for_five_minutes():
    messages = conversation(12, mark_last=True)
    messages[5]["content"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}  # 6 × 104 = 624 tokens
    usage = PromptCache().usage(request(messages))
    assert usage["cache_creation_input_tokens"] == 1_248
    assert usage["cache_creation"] == {"ephemeral_1h_input_tokens": 624, "ephemeral_5m_input_tokens": 624}


def test_a_hit_on_the_one_hour_part_writes_only_the_rest():
    cache, messages = PromptCache(), conversation(12, mark_last=True)
    messages[9]["content"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}  # 1,040 tokens: cacheable
    cache.usage(request(messages))
    messages[-1]["content"][0]["text"] = text(100, "b")  # the last block changes: the 1-hour prefix still hits
    usage = cache.usage(request(messages))
    assert usage["cache_read_input_tokens"] == 1_040
    assert usage["cache_creation"] == {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 208}


@pytest.mark.parametrize("marks, refused", [
    ([{"type": "ephemeral"}, {"type": "ephemeral", "ttl": "1h"}], "must come before"),
    ([{"type": "ephemeral", "ttl": "2h"}], "'5m' or '1h'"),
])
def test_a_lifetime_the_api_refuses_is_its_400(marks, refused):
    messages = conversation(4, mark_last=False)
    for position, mark in enumerate(marks):
        messages[position]["content"][0]["cache_control"] = mark
    client = course.make_client("offline", max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match=refused):
        client.messages.create(**request(messages))


def test_a_one_hour_write_costs_twice_the_input_price():
    price = prices.price_of("offline")
    five_minutes = {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 1_000_000}
    one_hour = dict(five_minutes, cache_creation={"ephemeral_1h_input_tokens": 1_000_000, "ephemeral_5m_input_tokens": 0})
    assert prices.cost("offline", five_minutes) == pytest.approx(1.25 * price.input)
    assert prices.cost("offline", one_hour) == pytest.approx(2 * price.input)
