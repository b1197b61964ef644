"""s06: the harness's own files are out of the model's reach, and a transcript it forged is not resumed.

With the workspace being the folder the harness writes in (``--workspace .``), its transcripts, runs
log, audit log and the transcripts' key lie inside it. No tool may list, read, write or delete them;
search skips them; a command finds them hidden. A transcript of s06 carries a mac per line (course.
transcript): one that the model wrote, edited or put together is refused in one line, and ``--resume
last`` passes a planted one over. The loader checks every field it later uses: no damaged transcript
makes ``--resume`` fail with anything but one line (fuzzed).
"""

from __future__ import annotations

import json
import os
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import course
import course.sandbox.confinement
import course.runtime.transcript
from helpers import DONE, scripted_client
from s06_world import ENV_SECRET, gate, no_secret, play, s06, world  # noqa: F401

pytestmark = pytest.mark.stage("s06")

LIST = [{"type": "tool_use", "id": "toolu_1", "name": "list_files", "input": {"path": "."}}]


@pytest.fixture
def harness_here(world, monkeypatch):
    """The harness writes in the workspace: runs/ beside the model's files, as `--workspace .` does."""
    runs = world / "runs"
    monkeypatch.setenv("AGENT_COURSE_TRANSCRIPTS", str(runs / "transcripts"))
    monkeypatch.setenv("AGENT_COURSE_RUNS_LOG", str(runs / "runs.jsonl"))
    monkeypatch.setenv("AGENT_COURSE_AUDIT_LOG", str(runs / "audit.jsonl"))
    monkeypatch.setenv("AGENT_COURSE_KEY", str(world / "key" / "transcript.key"))
    stopped = stopped_run(world)
    course.runtime.runlog.append({"stage": "s06", "stop_reason": "end_turn"})
    return world, stopped


def stopped_run(workspace):
    """A run of s06 stopped after one turn, which --resume can go on with."""
    client, _ = scripted_client(LIST, DONE)
    return s06.run("List the files", client=client, model="scripted", workspace=workspace, approver=None,
                   audit_log=None, limits=s06.Limits(max_turns=1))


@pytest.mark.parametrize("tool, arguments", [
    ("list_files", {"path": "runs/transcripts"}), ("read_file", {"path": "runs/runs.jsonl"}),
    ("read_file", {"path": "runs/audit.jsonl"}), ("read_file", {"path": "key/transcript.key"}),
    ("write_file", {"path": "runs/transcripts/s06-20991231-000000-abcdef.jsonl", "content": "{}"}),
    ("delete_file", {"path": "runs/runs.jsonl"}), ("move_file", {"source": "memo.md", "destination": "runs/audit.jsonl"}),
])
def test_no_tool_touches_the_harness_files(harness_here, tool, arguments):
    workspace, _ = harness_here
    found = gate().check(workspace, tool, arguments)
    assert found.decision == "deny" and "the harness's own files" in found.why


def test_search_skips_them_and_a_command_finds_them_hidden(harness_here):
    workspace, stopped = harness_here
    results, _ = play(workspace, [("search_files", {"text": "List the files"})])
    assert "runs/" not in results[0]["content"]
    if not course.sandbox.confinement.probe().available:
        pytest.skip(course.sandbox.confinement.probe().reason)
    finished = s06.run_command(workspace, "cat runs/transcripts/* runs/runs.jsonl key/transcript.key; "
                                          "echo forged-line >> runs/runs.jsonl; echo end", hidden=gate().hidden(workspace))
    assert "List the files" not in finished and "end_turn" not in finished and "end" in finished
    assert "forged-line" not in (workspace / "runs" / "runs.jsonl").read_text()


@pytest.fixture
def other_runs(world):
    """What runs started elsewhere in the workspace left there: `python agent.py` from tests/ writes tests/runs/."""
    transcripts = world / "tests" / "runs" / "transcripts"
    transcripts.mkdir(parents=True)
    (transcripts / "s05-20261201-101010-abcdef.jsonl").write_text(
        f'{{"messages": [{{"role": "user", "content": "API_KEY={ENV_SECRET}"}}]}}\n')
    (world / "s05" / "runs").mkdir(parents=True)
    (world / "s05" / "runs" / "audit.jsonl").write_text(f'{{"tool": "write_file", "content": "TOKEN={ENV_SECRET}"}}\n')
    return world


def test_a_command_of_the_safe_list_is_denied_every_runs_folder_and_search_skips_them(other_runs):
    results, requests = play(other_runs, [
        ("run_command", {"command": "cat tests/runs/transcripts/s05-20261201-101010-abcdef.jsonl"}),
        ("run_command", {"command": "grep -h TOKEN s05/runs/audit.jsonl"}),
        ("search_files", {"text": ENV_SECRET[:-1]})])  # the secret less a letter: the request holds no secret
    for result in results[:2]:
        message = json.loads(result["content"])["message"]
        assert result["is_error"] and "the harness's own files" in message, message
    assert json.loads(results[2]["content"])["output"] == "(no matches)"
    no_secret(requests)


def test_a_command_a_person_approves_finds_every_runs_folder_hidden(confined, other_runs):
    hidden = gate().hidden(other_runs)
    assert (other_runs / "tests" / "runs").resolve() in hidden and (other_runs / "s05" / "runs").resolve() in hidden
    finished = s06.run_command(other_runs, "cat tests/runs/transcripts/*.jsonl s05/runs/audit.jsonl; ls tests/runs; "
                                           "echo end", hidden=hidden)
    assert ENV_SECRET not in finished and "s05-20261201" not in finished and "end" in finished, finished  # nothing listed


def forged(path, stopped, **changes):
    """The stopped run's transcript with its first line changed, as the model would write it."""
    lines = [json.loads(line) for line in open(stopped.transcript, encoding="utf-8")]
    lines[0].update(changes)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_transcript_whose_workspace_was_changed_is_refused_in_one_line(harness_here, tmp_path):
    workspace, stopped = harness_here
    forged(course.runtime.transcript.find(stopped.transcript), stopped, workspace=str(tmp_path))
    with pytest.raises(course.CourseError, match=r"is damaged at line 1 \(its mac is not the one the harness wrote\)") as raised:
        s06.run(resume=stopped.transcript, approver=None, audit_log=False)
    assert "\n" not in str(raised.value)


def test_a_planted_newer_transcript_is_passed_over_by_resume_last(harness_here, tmp_path):
    workspace, stopped = harness_here
    planted = forged(course.runtime.transcript.folder() / "s06-20991231-235959-abcdef.jsonl", stopped,
                     workspace=str(tmp_path))
    os.utime(planted, (time.time() + 60, time.time() + 60))
    assert course.runtime.transcript.find("last", "s06") == course.runtime.transcript.find(stopped.transcript)
    with pytest.raises(course.CourseError, match="its mac is not the one the harness wrote"):
        s06.run(resume=str(planted), approver=None, audit_log=False)
    client, _ = scripted_client(DONE)
    assert s06.run(resume="last", client=client, approver=None, audit_log=False).workspace == str(workspace)


def test_lines_taken_from_another_run_do_not_verify(harness_here):
    workspace, stopped = harness_here
    other = stopped_run(workspace)
    path = course.runtime.transcript.find(stopped.transcript)
    spliced = open(path, encoding="utf-8").readlines()[:1] + open(other.transcript, encoding="utf-8").readlines()[1:]
    path.write_text("".join(spliced), encoding="utf-8")
    with pytest.raises(course.CourseError, match=r"is damaged at line 2 \(its mac"):
        course.runtime.transcript.load(path)


def test_a_line_of_another_stage_named_like_an_s06_run_is_not_resumed(harness_here, tmp_path):
    workspace, stopped = harness_here
    planted = forged(course.runtime.transcript.folder() / "s06-20991231-235959-aaaaaa.jsonl", stopped, stage="s05")
    os.utime(planted, (time.time() + 60, time.time() + 60))
    assert course.runtime.transcript.find("last", "s06") != planted
    with pytest.raises(course.CourseError):
        s06.run(resume=str(planted), approver=None, audit_log=False)


# ---------------------------------------------------------------- the loader, fuzzed

JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 10**12) | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=8)
PATHS_INTO = st.lists(st.sampled_from(["messages", "usage", "turn", "transitions", "from", "stop_reason",
                                       "content", "input_tokens", "cache_read_input_tokens", 0, 1, -1, "role",
                                       "type", "id", "tool_use_id", "input", "name", "text", "workspace", "model"]),
                      min_size=1, max_size=4)


def damaged(record, path, value, drop):
    """``record`` with the value at ``path`` (as far as it goes) replaced by ``value``, or dropped."""
    record = json.loads(json.dumps(record))
    holder = record
    for step in path[:-1]:
        try:
            holder = holder[step]
        except (KeyError, IndexError, TypeError):
            break
    last = path[-1]
    if isinstance(holder, dict) and isinstance(last, str):
        if drop:
            holder.pop(last, None)
        else:
            holder[last] = value
    elif isinstance(holder, list) and isinstance(last, int) and -len(holder) <= last < len(holder):
        holder[last] = value
    return record


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.integers(0, 3), path=PATHS_INTO, value=JSON, drop=st.booleans())
def test_no_damaged_transcript_makes_resume_fail_with_more_than_one_line(harness_here, line, path, value, drop):
    """Each damage is signed again with the harness's key, so that the loader's own checks are what is
    tested (a damage the mac catches would prove nothing about them)."""
    workspace, stopped = harness_here
    source = course.runtime.transcript.find(stopped.transcript)
    records = [json.loads(text) for text in open(source, encoding="utf-8")]
    records[line % len(records)] = damaged(records[line % len(records)], path, value, drop)
    target = course.runtime.transcript.folder() / "s06-20991231-000000-fuzzed.jsonl"
    previous, lines = "", []
    for record in records:
        record = dict(record, mac=course.runtime.transcript.signature(target.stem, previous, record))
        previous = record["mac"]
        lines.append(json.dumps(record) + "\n")
    target.write_text("".join(lines), encoding="utf-8")
    client, _ = scripted_client(DONE, DONE)
    try:
        s06.run(resume=str(target), client=client, approver=None, audit_log=False, runs_log=False)
    except course.CourseError as error:
        assert "\n" not in str(error)


# ---------------------------------------------------------------- any runs/ folder, and another stage's transcripts

PLANTED_PATHS = ["s05/runs/transcripts/s05-20991231-000000-abcdef.jsonl", "runs/transcripts/s02-20991231-000000-abcdef.jsonl",
                 "deep/er/RUNS/audit.jsonl", "s04/runs"]


@pytest.mark.parametrize("path", PLANTED_PATHS)
def test_a_runs_folder_anywhere_in_the_workspace_is_out_of_every_tools_reach(world, path):
    """Another stage run from another folder (`cd s05 && python agent.py --resume last`) reads that
    folder's runs/: whatever workspace the model has, a runs/ in it is the harness's, for no rule or person."""
    for tool, arguments in [("write_file", {"path": path, "content": "{}"}), ("read_file", {"path": path}),
                            ("move_file", {"source": "memo.md", "destination": path})]:
        found = gate().check(world, tool, arguments)
        assert found.decision == "deny" and "harness's own files" in found.why, (tool, found.why)


def test_a_command_cannot_plant_a_transcript_in_a_runs_folder(world):
    (world / "s05" / "runs" / "transcripts").mkdir(parents=True)  # one there, and one the command makes
    course.sandbox.confinement.probe() or pytest.skip("no kernel confinement here")
    s06.run_command(world, "echo '{}' > s05/runs/transcripts/s05-20991231-000000-abcdef.jsonl; "
                           "mkdir -p s04/runs/transcripts && echo '{}' > s04/runs/transcripts/x.jsonl", hidden=gate().hidden(world))
    assert not (world / "s05" / "runs" / "transcripts" / "s05-20991231-000000-abcdef.jsonl").exists()
    assert not (world / "s04" / "runs").exists()


def s05_line(workspace):
    return {"stage": "s05", "model": "scripted", "workspace": str(workspace), "turn": 0, "stop_reason": None,
            "usage": {"input_tokens": 1, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
            "transitions": [], "messages": [{"role": "user", "content": "List the files"}]}


def test_a_transcript_of_a_stage_before_s06_planted_in_the_workspace_is_not_resumed(world, tmp_path, monkeypatch):
    """A model that wrote s05/runs/transcripts/ (with `--workspace .` in the course's repository) would have
    `cd s05 && python agent.py --resume last` go on in any folder it named: every stage signs its lines, and one
    inside the folder the harness runs from, or inside a workspace it names, must verify."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = world / "s05" / "runs" / "transcripts"
    folder.mkdir(parents=True)
    monkeypatch.chdir(world / "s05")
    monkeypatch.setenv("AGENT_COURSE_TRANSCRIPTS", str(folder))
    planted = folder / "s05-20991231-000000-abcdef.jsonl"
    planted.write_text(json.dumps(s05_line(elsewhere)) + "\n", encoding="utf-8")
    with pytest.raises(course.CourseError, match="its mac is not the one the harness wrote"):
        course.runtime.transcript.load(planted)
    with pytest.raises(course.CourseError, match="no run to resume"):
        course.runtime.transcript.find("last", "s05")
    real = course.runtime.transcript.new_path("s05")  # the harness's own, signed as it is written: resumed
    course.runtime.transcript.append(real, s05_line(elsewhere))
    assert course.runtime.transcript.find("last", "s05") == real and course.runtime.transcript.load(real).records[0] == s05_line(elsewhere)


def test_an_unsigned_transcript_inside_the_workspace_it_names_is_not_resumed(world, tmp_path, monkeypatch):
    """Kept outside the folder the harness runs from, but inside the workspace it names, where its model wrote."""
    monkeypatch.chdir(tmp_path)
    planted = world / "notes" / "s02-20991231-000000-abcdef.jsonl"
    planted.parent.mkdir()
    line = {key: value for key, value in s05_line(world).items() if key != "usage"}
    planted.write_text(json.dumps(dict(line, stage="s02", usage={"input_tokens": 1, "output_tokens": 1})) + "\n")
    with pytest.raises(course.CourseError, match="its mac is not the one the harness wrote"):
        course.runtime.transcript.load(planted)


def test_an_unsigned_transcript_kept_outside_every_workspace_and_run_folder_is_not_resumed(world, tmp_path, monkeypatch):
    """Where a transcript lies says nothing of who wrote it: a folder that was an earlier run's workspace
    is a folder like any other now. One of s02-s05 the harness did not sign is refused wherever it is,
    with the command a person types to sign it again; signed again, it resumes as it was."""
    earlier = tmp_path / "last-weeks-workspace" / "notes"
    earlier.mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    planted = earlier / "s05-20991231-000000-abcdef.jsonl"
    planted.write_text(json.dumps(s05_line(world)) + "\n", encoding="utf-8")
    assert not course.runtime.transcript.where_a_model_may_write(planted, [s05_line(world)])  # the case the old rule trusted
    with pytest.raises(course.CourseError, match=r"its mac is not the one the harness wrote.*sign it again: .*sign_again") as raised:
        course.runtime.transcript.load(course.runtime.transcript.find(str(planted), "s05"))
    assert "\n" not in str(raised.value)
    signed = course.runtime.transcript.sign_again(planted)
    assert signed.records == [s05_line(world)] and course.runtime.transcript.load(planted).history()[0]["content"] == "List the files"
    planted.write_text(planted.read_text(encoding="utf-8").replace("List the files", "Delete the files"), encoding="utf-8")
    with pytest.raises(course.CourseError, match="its mac is not the one the harness wrote"):
        course.runtime.transcript.load(planted)  # signed once is not signed for whatever it says later


def test_resume_last_says_it_passed_over_transcripts_that_do_not_verify(tmp_path):
    folder = course.runtime.transcript.folder()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "s03-20991231-000000-abcdef.jsonl").write_text(json.dumps(dict(s05_line(tmp_path), stage="s03")) + "\n")
    with pytest.raises(course.CourseError, match=r"none of the 1 transcript\(s\) of s03 in .* verifies"):
        course.runtime.transcript.find("last", "s03")
    real = course.runtime.transcript.new_path("s03")
    course.runtime.transcript.append(real, dict(s05_line(tmp_path), stage="s03"))
    assert course.runtime.transcript.find("last", "s03") == real


def test_a_transcript_signed_again_keeps_its_torn_end_out_and_its_shape_checked(tmp_path):
    path = tmp_path / "s02-20991231-000000-abcdef.jsonl"
    line = {key: value for key, value in s05_line(tmp_path).items() if key != "usage"}
    line = dict(line, stage="s02", usage={"input_tokens": 1, "output_tokens": 1})
    path.write_text(json.dumps(line) + "\n" + '{"turn": 1, "us', encoding="utf-8")  # a kill tore the last line
    assert course.runtime.transcript.sign_again(path).records == [line]
    path.write_text(json.dumps(dict(line, turn="one")) + "\n", encoding="utf-8")
    with pytest.raises(course.CourseError, match="is damaged at line 1"):
        course.runtime.transcript.sign_again(path)  # a line no run could write is not signed
