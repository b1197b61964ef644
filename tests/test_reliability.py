"""Runs that survive: faults, kills and torn transcripts, measured on the stages that save their state.

(a) offline runs under 30% injected API faults with the SDK's retries off, each resumed until it
    ends by itself: every run completes, none crashes, every history is valid, and no tool call is
    executed twice (counted in the tools themselves, not read off the transcript);
(b) real subprocess runs killed with SIGKILL at seeded random instants, then resumed: the
    transcript always loads, every run completes, and no write happens twice;
(c) a transcript cut at every byte offset of its last line still loads, as the lines before it.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

import course
from course.offline import Faults
from course.lab.scenarios import (FIND_TASK, LIST_TASK, REPORT_TASK, SUMMARY_TASK, TOTAL_TASK, lists_every_file,
                              names_files_mentioning, reports_every_file, states_total_of, summarises)
from helpers import assert_valid_history, load_stage

SAVING_STAGES = ["s02", "s03", "s04", "s05", "s06"]
TASKS = [(LIST_TASK, lists_every_file), (SUMMARY_TASK, summarises("memo.md")), (REPORT_TASK, reports_every_file),
         (TOTAL_TASK, states_total_of("sample.txt")), (FIND_TASK, names_files_mentioning("agent"))]
RUNS = 200
FAULT_RATE = 0.3
MOST_RESUMES = 40  # at 30% faults a call fails 3 times in a row 2.7% of the time: 40 attempts is plenty


def counting(agent, executed: Counter, monkeypatch) -> None:
    """Every tool of the stage counts its executions, by name and arguments."""
    for name, function in list(agent.TOOL_FUNCTIONS.items()):
        def counted(workspace, *args, _name=name, _function=function, **kwargs):
            executed[_name, json.dumps([args, kwargs], sort_keys=True)] += 1
            return _function(workspace, *args, **kwargs)
        monkeypatch.setitem(agent.TOOL_FUNCTIONS, name, counted)


@pytest.mark.stage()  # a soak of every saving stage, too long for a grade: tests/test_s02_resume.py pins resuming
def test_a_runs_under_30_percent_faults_all_complete_when_resumed(monkeypatch, tmp_path):
    # No process dies here, so fsync (against power cuts) would only add seconds; (b) keeps it.
    monkeypatch.setattr(course.runtime.transcript, "DURABLE", False)
    outcomes, attempts_needed, repeated = Counter(), [], []
    for number in range(RUNS):
        stage = SAVING_STAGES[number % len(SAVING_STAGES)]
        task, check = TASKS[(number // len(SAVING_STAGES)) % len(TASKS)]
        agent = load_stage(stage)
        executed = Counter()
        with monkeypatch.context() as patch:
            counting(agent, executed, patch)
            workspace = course.prepare_workspace()
            before = course.snapshot(workspace)
            options = {"runs_log": False} if stage != "s02" else {}
            options.update({"approver": None, "audit_log": False} if stage == "s06" else {})
            transcript = tmp_path / f"run-{number}.jsonl"
            result, attempts = None, 0
            while attempts < MOST_RESUMES and (result is None or result.stop_reason == "api_error"):
                client = course.make_client("offline", max_retries=0,
                                            faults=Faults(rate=FAULT_RATE, seed=number * 1000 + attempts))
                again = {"resume": transcript} if attempts else {"transcript": transcript}
                try:
                    result = agent.run(None if attempts else task, client=client, model="offline",
                                       workspace=workspace, **again, **options)
                except Exception as error:  # a crash is counted, not raised: the measurement is the point
                    outcomes["crashed"] += 1
                    pytest.fail(f"run {number} ({stage}) crashed: {type(error).__name__}: {error}")
                attempts += 1
        assert_valid_history(result.messages)
        assert_valid_history(course.runtime.transcript.load(transcript).history())
        completed = result.stop_reason == "end_turn" and check(course.as_dict(result), workspace, before)
        outcomes["completed" if completed else f"stopped: {result.stop_reason}"] += 1
        attempts_needed.append(attempts)
        repeated += [call for call, count in executed.items() if count > 1]
    interrupted = sum(1 for attempts in attempts_needed if attempts > 1)
    print(f"\n(a) {RUNS} runs at {FAULT_RATE:.0%} faults, retries off: {dict(outcomes)}; "
          f"{interrupted} stopped on an API error at least once; most resumes {max(attempts_needed) - 1}; "
          f"{sum(attempts_needed) - RUNS} resumes in all; repeated executions {len(repeated)}")
    assert outcomes == {"completed": RUNS}
    assert repeated == []
    assert interrupted > RUNS // 4  # the faults did bite: most of these runs needed a resume


# ---------------------------------------------------------------- (b) SIGKILL

KILLS = [("s02", 0), ("s03", 1), ("s04", 2), ("s05", 3), ("s06", 4), ("s02", 5)]
TOOL_PAUSE_S = 0.03  # each tool is slowed a little, so that a kill lands inside a tool call too
KILL_AFTER_STEPS = 4  # a run of the report task traces more steps than this before it ends


def logging_writes(agent, log: Path, patch, pause: float = 0.0) -> None:
    """write_file logs each execution to ``log``, after it happened (durably); every tool pauses ``pause``."""
    for name, function in list(agent.TOOL_FUNCTIONS.items()):
        def tool(*args, _name=name, _function=function, **kwargs):
            time.sleep(pause)
            output = _function(*args, **kwargs)
            if _name == "write_file":
                with log.open("a", encoding="utf-8") as file:
                    file.write(json.dumps(kwargs, sort_keys=True) + "\n")
                    file.flush()
                    os.fsync(file.fileno())
            time.sleep(pause)
            return output
        patch.setitem(agent.TOOL_FUNCTIONS, name, tool)


def run_in_child(agent, workspace: Path, transcript: Path, log: Path, ready: int) -> None:
    """The child process: the stage's run, as a learner's process would make it (never returns)."""
    try:
        with pytest.MonkeyPatch.context() as patch:
            logging_writes(agent, log, patch, TOOL_PAUSE_S)
            def trace(kind, payload):  # one byte a trace event: the parent counts the run's steps
                os.write(ready, b"s")
            agent.run(REPORT_TASK, workspace=workspace, trace=trace, transcript=transcript,
                      **({"runs_log": False} if hasattr(agent, "Limits") else {}),
                      **({"approver": None, "audit_log": False} if hasattr(agent, "Gate") else {}))
    finally:
        os._exit(0)


@pytest.mark.stage()  # a soak of every saving stage, too long for a grade: tests/test_s02_resume.py pins resuming
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and SIGKILL")
def test_b_runs_killed_at_random_instants_resume_and_never_write_twice(tmp_path, monkeypatch):
    """Each run is a real process (forked from this one, so that it starts in milliseconds instead of
    importing the SDK again), killed with SIGKILL at a seeded random instant, then resumed here."""
    killed_at = []
    for stage, seed in KILLS:
        agent = load_stage(stage)
        workspace = course.prepare_workspace()
        before = course.snapshot(workspace)
        transcript, log = tmp_path / f"{stage}-{seed}.jsonl", tmp_path / f"{stage}-{seed}-writes.log"
        ready, told = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(ready)
            run_in_child(agent, workspace, transcript, log, told)
        os.close(told)
        # The kill lands after a seeded number of the run's first steps (every run has more than
        # that), at a seeded instant within a tool's pause: mid-run by construction, not by luck.
        chance = random.Random(seed)
        steps, delay = chance.randint(1, KILL_AFTER_STEPS), chance.uniform(0.0, TOOL_PAUSE_S)
        for _ in range(steps):
            assert os.read(ready, 1) == b"s"
        time.sleep(delay)
        os.kill(child, signal.SIGKILL)
        os.close(ready)
        _, status = os.waitpid(child, 0)
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        loaded = course.runtime.transcript.load(transcript)  # always loads, torn last line or not
        killed_at.append((stage, round(delay, 3), loaded.last["turn"], loaded.last["stop_reason"], loaded.torn_bytes))
        if loaded.last["stop_reason"] is None:  # killed mid-run: resume it, here, with the same write log
            with monkeypatch.context() as patch:
                logging_writes(agent, log, patch)
                result = agent.run(resume=transcript, **({"runs_log": False} if hasattr(agent, "Limits") else {}),
                                   **({"approver": None, "audit_log": False} if hasattr(agent, "Gate") else {}))
            assert result.stop_reason == "end_turn", (stage, result.stop_reason)
        assert_valid_history(course.runtime.transcript.load(transcript).history())
        assert reports_every_file({"answer": ""}, workspace, before)
        writes = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
        assert len(writes) == 1, f"{stage}: report.txt written {len(writes)} times"
        assert killed, (stage, status, loaded.last)
    print(f"\n(b) killed runs (stage, delay s, turn saved, stop saved, torn bytes): {killed_at}")
    assert sum(stop is None for _, _, _, stop, _ in killed_at) >= len(KILLS) - 1  # the kills landed mid-run


# ---------------------------------------------------------------- (c) torn at every byte

@pytest.mark.stage("s02")  # s02 saves; course.runtime.transcript reads
def test_c_a_transcript_cut_at_every_byte_of_its_last_line_still_loads(tmp_path):
    result = load_stage("s02").run(REPORT_TASK, transcript=tmp_path / "whole.jsonl")
    data = (tmp_path / "whole.jsonl").read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    whole = course.runtime.transcript.load(tmp_path / "whole.jsonl")
    cut = tmp_path / "cut" / "whole.jsonl"  # the same name: a line's mac names its run, the file's name
    cut.parent.mkdir()
    for offset in range(last_start, len(data)):
        cut.write_bytes(data[:offset])
        loaded = course.runtime.transcript.load(cut)
        assert loaded.records == whole.records[:-1], offset
        assert loaded.torn_bytes == offset - last_start
    assert course.runtime.transcript.load(tmp_path / "whole.jsonl").history() == result.messages
    print(f"\n(c) {len(data) - last_start} cuts of a {len(data)}-byte transcript's last line: all loaded")


@pytest.mark.stage("s05")  # s05 rewrites its history
def test_a_history_rewritten_by_s05s_summary_is_saved_whole_and_resumes(monkeypatch, tmp_path):
    from course.offline import FLOOD_TASK, write_flood_logs
    s05 = load_stage("s05")
    monkeypatch.setattr(s05, "SUMMARY_THRESHOLD", 3_000)
    workspace = course.prepare_workspace()
    write_flood_logs(workspace, 15)
    transcript = tmp_path / "flood.jsonl"
    notes = []
    trace = lambda kind, payload: notes.append(payload) if kind == "note" else None  # noqa: E731
    first = s05.run(FLOOD_TASK, model="offline-flood-15", workspace=workspace, transcript=transcript,
                    limits=s05.Limits(max_turns=12), runs_log=False, trace=trace)
    assert first.stop_reason == "max_turns" and any(str(note).startswith("summarised") for note in notes)
    saved = course.runtime.transcript.load(transcript)
    assert any(record["from"] == 0 and record["turn"] > 0 for record in saved.records)  # a rewrite, saved whole
    # The same history, message for message; results masked in memory after they were saved stay
    # whole in the transcript (s05 masks again before the next call).
    def shape(messages):
        return [(message["role"], [block.get("id") or block.get("tool_use_id") for block in message["content"]]
                 if isinstance(message["content"], list) else message["content"]) for message in messages]
    assert shape(saved.history()) == shape(first.messages)
    assert s05.SUMMARY_HEADING in saved.history()[0]["content"]
    assert_valid_history(saved.history())
    finished = s05.run(resume=transcript, limits=s05.Limits(max_turns=40), runs_log=False)
    assert finished.stop_reason == "end_turn"
    assert_valid_history(course.runtime.transcript.load(transcript).history())
