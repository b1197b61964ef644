"""Stage s05: pruning the context so a long run neither overflows nor bills the square of its turns,
without breaking the prompt cache.

Exercise 1 is ``mask_old_results``, exercise 2 ``summarise_old_turns``. Every call of s05 is
preceded by a pruning that calls the masking, so every test that runs the loop pins exercise 1;
the tests that lower the summary threshold pin exercise 2 as well.
"""

from __future__ import annotations

import copy
import io
import re
import shutil
from pathlib import Path

import pytest

import course
from helpers import assert_valid_history, load_stage, run_flood
from course.offline.flood import COUNT_TASK, error_total, logs
from course.lab.scenarios import scenario_named

pytestmark = pytest.mark.stage("s05")  # every test here pins s05, unless it says otherwise

TOKENS_LINE = re.compile(r"^   · tokens: ([\d,]+) uncached \+ ([\d,]+) read from the cache \+ ([\d,]+) written to it in, "
                         r"([\d,]+) out; ([\d,]+) input tokens sent so far$")


class Notes:
    """A trace that keeps the notes of a run, the lines a learner reads under each turn, and the usages shown."""

    def __init__(self):
        self.lines: list[str] = []
        self.usages: list = []

    def __call__(self, kind, payload):
        if kind == "note":
            self.lines.append(payload)
        elif kind == "usage":
            self.usages.append(payload)

    def batches(self) -> list[int]:
        """How many results each batch of masking covered, in order."""
        return [int(re.match(r"masked (\d+)", line)[1]) for line in self.lines if line.startswith("masked ")]


def history(reads: int, errors: tuple[int, ...] = ()) -> list[dict]:
    """A history of ``reads`` turns, each reading one file, as the loop holds it before its next call."""
    messages = [{"role": "user", "content": "Read every file"}]
    for number in range(1, reads + 1):
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": f"I'll read file {number}."},
            {"type": "tool_use", "id": f"toolu_{number:03d}", "name": "read_file", "input": {"path": f"f{number}.txt"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{number:03d}", "content": f"content of file {number}\n" * 50,
             "is_error": number in errors}]})
    return messages


# ---------------------------------------------------------------- exercise 1: masking

@pytest.mark.exercise(1)
def test_masking_replaces_old_results_with_a_placeholder_naming_the_call_and_how_to_get_it_back(s05):
    messages = history(5)
    assert s05.mask_old_results(messages, 2) == 3
    placeholder = messages[2]["content"][0]["content"]
    assert placeholder.startswith("[masked")
    assert "read_file" in placeholder and '"f1.txt"' in placeholder
    assert str(len("content of file 1\n" * 50)) in placeholder  # what was there: how big it was
    assert "call it again" in placeholder.lower()                # and how to get it back


@pytest.mark.exercise(1)
def test_masking_keeps_the_latest_results_whole_and_every_pair_intact(s05):
    original = history(5, errors=(1,))
    messages = copy.deepcopy(original)
    s05.mask_old_results(messages, 2)
    assert messages[-4:] == original[-4:]                         # the last two turns, untouched
    masked = [message["content"][0] for message in messages[2:7:2]]
    assert [block["tool_use_id"] for block in masked] == ["toolu_001", "toolu_002", "toolu_003"]
    assert masked[0]["is_error"] is True and masked[1]["is_error"] is False
    assert_valid_history(messages)
    assert s05.mask_old_results(messages, 2) == 0                  # a placeholder is not masked again


@pytest.mark.exercise(1)
def test_masking_waits_until_the_batch_frees_at_least_the_minimum(s05):
    messages = history(5)                      # each result: 900 bytes, 225 estimated tokens
    untouched = copy.deepcopy(messages)
    assert s05.mask_old_results(messages, 2, at_least=3 * 225 + 1) == 0  # three old results are not enough
    assert messages == untouched
    assert s05.mask_old_results(messages, 2, at_least=3 * 225) == 3        # ...until they hold the minimum
    assert_valid_history(messages)


@pytest.mark.exercise(1)
def test_a_long_run_masks_in_batches_and_completes(s05, workspace):
    notes = Notes()
    result, _ = run_flood(s05, workspace, 30, trace=notes)
    assert result.stop_reason == "end_turn"
    assert str(error_total(course.snapshot(workspace))) in result.answer
    batches = notes.batches()
    assert len(batches) >= 2 and all(size >= 2 for size in batches)   # a few batches, never one result a turn
    assert len(batches) < result.turns / 3
    contents = [block["content"] for block in s05.tool_results_in(result.messages)]
    assert not any(content.startswith("[masked") for content in contents[-s05.KEEP_RESULTS:])
    assert sum(content.startswith("[masked") for content in contents) == sum(batches)


@pytest.mark.exercise(1)
def test_between_two_batches_each_call_reads_from_the_cache_all_that_the_call_before_it_sent(s05, workspace):
    notes = Notes()
    result, client = run_flood(s05, workspace, 30, trace=notes)
    sizes = [s05.prompt_size(usage) for usage in client.usages]
    reads = [usage.cache_read_input_tokens for usage in client.usages]
    cached = [call for call in range(1, len(sizes)) if sizes[call - 1] >= 1024]  # the minimum cacheable prefix
    rewritten = [call for call in cached if reads[call] != sizes[call - 1]]
    assert result.stop_reason == "end_turn"
    assert len(rewritten) == len(notes.batches()) >= 2              # the prefix changes only when a batch is masked...
    # ...and the part masked by earlier batches is still read, once it is past the 1,024-token minimum
    # (the first batch has no such part, and after the first one the part is just under the minimum).
    assert all(0 < reads[call] < sizes[call - 1] for call in rewritten[2:])
    assert [reads[call] for call in rewritten] == sorted(reads[call] for call in rewritten)  # a part that only grows


# ---------------------------------------------------------------- token accounting

@pytest.mark.exercise(1)
def test_the_trace_shows_the_cached_and_uncached_tokens_of_every_turn(s05, workspace):
    printed = io.StringIO()
    result, client = run_flood(s05, workspace, 12, trace=course.TracePrinter(printed))
    lines = [TOKENS_LINE.match(line) for line in printed.getvalue().splitlines() if "· tokens:" in line]
    assert len(lines) == result.turns == len(client.usages) == 14
    sent = 0
    for match, usage in zip(lines, client.usages):
        sent += s05.prompt_size(usage)
        shown = tuple(int(group.replace(",", "")) for group in match.groups())
        assert shown == (usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens,
                         usage.output_tokens, sent)
    assert any(usage.cache_read_input_tokens for usage in client.usages)   # a long run reads from the cache
    for name in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        assert result.usage[name] == sum(getattr(usage, name) for usage in client.usages)


@pytest.mark.exercise(1)
def test_each_call_marks_the_system_block_and_the_latest_block_and_the_history_keeps_no_mark(s05, workspace):
    requests = []

    class Recording:
        def __init__(self, client):
            self.messages = self
            self._client = client

        def create(self, **request):
            requests.append(copy.deepcopy(request))
            return self._client.messages.create(**request)

    logs(workspace, 12)
    result = s05.run(COUNT_TASK, client=Recording(course.make_client("offline-flood-12")), model="offline-flood-12",
                     workspace=workspace, runs_log=False)
    assert result.stop_reason == "end_turn"
    for request in requests:
        assert request["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert request["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
        marks = [block for message in request["messages"] for block in message["content"] if "cache_control" in block]
        assert len(marks) + 1 <= 4
    assert "cache_control" not in repr(result.messages)


@pytest.mark.exercise(1)
def test_the_peak_prompt_is_the_largest_prompt_sent_cached_or_not(s05, workspace):
    result, client = run_flood(s05, workspace, 8)
    assert result.peak_prompt_tokens == max(usage.input_tokens + usage.cache_read_input_tokens
                                            + usage.cache_creation_input_tokens for usage in client.usages)


# ---------------------------------------------------------------- exercise 2: summarising

@pytest.mark.exercise(2)
def test_summarising_folds_all_but_the_last_turns_into_a_summary_after_the_task(s05):
    reads = 2 * s05.KEEP_TURNS + 1
    original = history(reads)
    state = s05.LoopState(messages=copy.deepcopy(original))
    assert s05.summarise_old_turns(state, course.make_client("offline"), "offline") is True
    kept = original[-2 * s05.KEEP_TURNS:]
    assert state.messages[1:] == kept
    first = state.messages[0]["content"]
    assert first.startswith("Read every file\n\n" + s05.SUMMARY_HEADING)
    folded = reads - s05.KEEP_TURNS
    assert f"read_file ×{folded}" in first and f"I'll read file {folded}." in first  # the folded calls and notes
    assert state.usage["input_tokens"] > 0                           # summarising is billed
    assert_valid_history(state.messages)


@pytest.mark.exercise(2)
def test_a_history_of_few_turns_is_not_summarised(s05):
    original = history(2 * s05.KEEP_TURNS - 1)  # fewer turns to fold than to keep: not worth a billed call
    state = s05.LoopState(messages=copy.deepcopy(original))
    assert s05.summarise_old_turns(state, course.make_client("offline"), "offline") is False
    assert state.messages == original and state.usage["input_tokens"] == 0


@pytest.mark.exercise(1, 2)
def test_past_the_threshold_older_turns_are_summarised_and_the_run_completes(s05, workspace, monkeypatch):
    monkeypatch.setattr(s05, "SUMMARY_THRESHOLD", 3_000)
    notes = Notes()
    result, client = run_flood(s05, workspace, 15, trace=notes)
    assert any(line.startswith("summarised older turns") for line in notes.lines)
    assert result.stop_reason == "end_turn"
    assert str(error_total(course.snapshot(workspace))) in result.answer
    first = result.messages[0]["content"]
    assert first.startswith(COUNT_TASK) and s05.SUMMARY_HEADING in first
    assert len(client.usages) > result.turns                            # the summaries were model calls...
    assert result.usage["input_tokens"] == sum(usage.input_tokens for usage in client.usages)  # ...and billed


@pytest.mark.exercise(1)
def test_below_the_threshold_nothing_is_summarised(s05, workspace):
    notes = Notes()
    result, client = run_flood(s05, workspace, 6, trace=notes)
    assert result.messages[0] == {"role": "user", "content": COUNT_TASK}
    assert not any(line.startswith("summarised") for line in notes.lines)
    assert len(client.usages) == result.turns


# ---------------------------------------------------------------- the failure s05 fixes

def run_scenario(stage: str, name: str, workspace):
    """A ladder scenario on one stage, as the ladder runs it; the result and whether its check passed."""
    scenario = scenario_named(name)
    scenario.setup(workspace)
    before = course.snapshot(workspace)
    client = course.capped(course.make_client(scenario.model, **scenario.client_options), scenario.cap)
    result = course.as_dict(load_stage(stage).run(scenario.task, client=client, model=scenario.model,
                                                  workspace=workspace, runs_log=False))
    return result, scenario.passes(result, workspace, before)


@pytest.mark.exercise(1)
def test_s05_completes_the_flood_where_s04_stops_on_prompt_too_long(tmp_path):
    runs = {stage: run_scenario(stage, "flood", Path(shutil.copytree(course.SAMPLE, tmp_path / stage)))
            for stage in ("s04", "s05")}
    s04, s04_passed = runs["s04"]
    assert s04["stop_reason"] == "api_error" and not s04_passed
    assert "prompt is too long" in s04["explanation"]  # a clear reason, not a crash
    s05, s05_passed = runs["s05"]
    assert s05["stop_reason"] == "end_turn" and s05_passed
    assert s05["peak_prompt_tokens"] < scenario_named("flood").client_options["context_window"] / 2


@pytest.mark.exercise(1)
def test_the_token_budget_counts_the_tokens_read_from_the_cache_too(s05, workspace):
    logs(workspace, 30)
    client = course.capped(course.make_client("offline-flood-30"), 200)
    result = s05.run(COUNT_TASK, client=client, model="offline-flood-30", workspace=workspace,
                     limits=s05.Limits(token_budget=40_000), runs_log=False)
    assert result.stop_reason == "token_budget"
    everything = sum(s05.prompt_size(usage) + usage.output_tokens for usage in client.usages)
    uncached = sum(usage.input_tokens + usage.output_tokens for usage in client.usages)
    assert uncached < 40_000 <= everything  # cached tokens are used tokens: a budget that skipped them would not stop
