"""s06: what one call may write, and what a file tool reads into memory, is bounded, and the model is told how to go on.

write_file refuses content over course.sandbox.paths.MAX_WRITE_BYTES (one call wrote 50 MB before); read_file
refuses a file over MAX_READ_BYTES and says how to read a part of it; search_files reads each file a
chunk at a time, so a large file costs no more memory than a chunk, and finds a match that crosses
two chunks all the same (a property test against reading the whole file).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import course.sandbox.paths
from s06_world import gate, play, world  # noqa: F401

pytestmark = pytest.mark.stage("s06")


def test_a_write_over_the_cap_is_refused_and_says_what_to_do(world):
    """Through the gate, as run() calls it (a scripted reply of a megabyte would be cut at max_tokens)."""
    big = {"path": "big.txt", "content": "x" * (course.sandbox.paths.MAX_WRITE_BYTES + 1)}
    found = gate().check(world, "write_file", big)
    assert found.decision == "deny" and "more than the 1,048,576 one write_file call may write" in found.why
    assert "split it into several files" in found.why
    assert gate().check(world, "write_file", {"path": "ok.txt", "content": "é" * (course.sandbox.paths.MAX_WRITE_BYTES // 2)}
                        ).decision == "allow"  # bytes are counted, not characters: 2 bytes each, at the cap
    assert gate().check(world, "write_file", {"path": "no.txt", "content": "é" * (course.sandbox.paths.MAX_WRITE_BYTES // 2 + 1)}
                        ).decision == "deny"


def test_a_file_over_the_read_cap_is_refused_with_a_way_to_read_a_part(world):
    (world / "huge.log").write_text("line\n" * (course.sandbox.paths.MAX_READ_BYTES // 5 + 1))
    results, _ = play(world, [("read_file", {"path": "huge.log"}), ("run_command", {"command": "head -c 40 huge.log"})])
    refused = json.loads(results[0]["content"])
    assert refused["error"] == "too_big" and "head -c 4000 huge.log" in refused["hint"]
    assert not results[1]["is_error"] and "line" in results[1]["content"]  # the hint's way works


def test_search_finds_a_word_deep_in_a_large_file(world):
    (world / "huge.log").write_text("x" * (3 << 20) + "needle-7f\n")
    results, _ = play(world, [("search_files", {"text": "NEEDLE-7F"})])
    assert json.loads(results[0]["content"])["output"] == "huge.log"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet="abAB\u0130ß", max_size=40), needle=st.text(alphabet="abAB\u0130ß", min_size=1, max_size=5),
       chunk=st.integers(1, 7))
def test_reading_a_chunk_at_a_time_finds_what_reading_it_whole_finds(tmp_path, text, needle, chunk):
    file = tmp_path / "file.txt"
    file.write_text(text, encoding="utf-8")
    assert course.sandbox.paths.contains(file, needle, chunk=chunk) == (needle.lower() in text.lower())
