"""The command line a stage shares: python sNN/agent.py "TASK" [--model ID] [--workspace DIR] [--json].

Most checks call ``main([...])`` in process (fast); a few start the real script in a subprocess
to pin what a learner sees in a terminal (exit code, no traceback).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import course
from helpers import REPORT_TASK, load_stage

ROOT = Path(__file__).resolve().parent.parent
SUMMARY_KEYS = {"stage", "model", "answer", "stop_reason", "turns", "usage", "workspace", "workspace_removed"}


@pytest.fixture
def folder(tmp_path):
    """A copy of the sample workspace at a known place (so no temporary folder is left behind)."""
    target = tmp_path / "ws"
    shutil.copytree(course.SAMPLE, target)
    return target


def main(argv, capsys):
    code = load_stage("s01").main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def script(*arguments, **environment):
    """Run s01/agent.py as a learner would, with no key, no model override, no base URL."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "MODEL_ID")}
    env.update(environment)
    return subprocess.run([sys.executable, "s01/agent.py", *arguments], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


def assert_one_line_error(err: str, *mentions: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error:")
    assert "Traceback" not in err
    for text in mentions:
        assert text in lines[0]


# ---------------------------------------------------------------- a run that ends naturally

def test_json_flag_ends_the_output_with_the_run_summary(folder, capsys):
    code, out, _ = main(["List the files", "--workspace", str(folder), "--json"], capsys)
    assert code == 0
    summary = json.loads(out.strip().splitlines()[-1])
    assert set(summary) == SUMMARY_KEYS
    assert summary["stage"] == "s01" and summary["model"] == "offline"
    assert summary["stop_reason"] == "end_turn"
    assert summary["turns"] == 2
    assert set(summary["usage"]) == {"input_tokens", "output_tokens"}
    assert Path(summary["workspace"]) == folder.resolve()
    assert all(name in summary["answer"] for name in os.listdir(folder))


def test_prints_a_trace_and_the_answer(folder, capsys):
    code, out, _ = main(["List the files", "--workspace", str(folder)], capsys)
    assert code == 0
    assert "list_files" in out  # the tool call shown in the trace
    assert all(name in out for name in os.listdir(folder))
    assert "{" not in out.strip().splitlines()[-1]  # no JSON line without --json


@pytest.mark.stage()  # drives the stages' shared command line; pins no stage's code
@pytest.mark.parametrize("stage_name", ["s01", "s06"])
def test_live_shows_each_reply_as_it_streams_and_the_run_ends_as_without_it(stage_name, folder, capsys):
    task = ["List the files and write their count and names to report.txt", "--workspace", str(folder), "--json"]
    code, out, err = load_stage(stage_name).main(task + ["--live"]), *capsys.readouterr()
    live = json.loads(out.strip().splitlines()[-1])
    report = (folder / "report.txt").read_text()
    (folder / "report.txt").unlink()
    code_plain, out_plain, _ = load_stage(stage_name).main(task), *capsys.readouterr()
    plain = json.loads(out_plain.strip().splitlines()[-1])
    assert code == code_plain == 0 and live["stop_reason"] == plain["stop_reason"] == "end_turn"
    assert live["answer"] == plain["answer"] and live["turns"] == plain["turns"]
    assert (folder / "report.txt").read_text() == report
    assert live["answer"].strip()[:40] in err  # the last reply's text was shown as it streamed


def test_the_script_runs_end_to_end_with_json(folder):
    completed = script(REPORT_TASK, "--workspace", str(folder), "--json")
    assert completed.returncode == 0, completed.stderr
    summary = json.loads(completed.stdout.strip().splitlines()[-1])
    assert set(summary) == SUMMARY_KEYS and summary["stop_reason"] == "end_turn"
    assert (folder / "report.txt").is_file()


def test_workspace_option_runs_in_that_folder(folder, capsys):
    code, out, _ = main([REPORT_TASK, "--workspace", str(folder), "--json"], capsys)
    assert code == 0
    assert (folder / "report.txt").is_file()
    listed = [name for name in os.listdir(folder) if name != "report.txt"]
    assert all(name in (folder / "report.txt").read_text(encoding="utf-8") for name in listed)
    assert Path(json.loads(out.strip().splitlines()[-1])["workspace"]) == folder.resolve()


def test_a_task_the_tutor_does_not_know_exits_0_with_its_explanation(folder, capsys):
    code, out, err = main(["Write me a poem about the sea", "--workspace", str(folder), "--json"], capsys)
    assert code == 0
    answer = json.loads(out.strip().splitlines()[-1])["answer"]
    assert "offline tutor" in answer and "ANTHROPIC_API_KEY" in answer
    assert err == ""


# ---------------------------------------------------------------- bad input: one line, no traceback

def test_an_unknown_offline_model_is_a_one_line_error(folder, capsys):
    code, out, err = main(["List the files", "--model", "offline-nope", "--workspace", str(folder)], capsys)
    assert code == 2
    assert_one_line_error(err, "offline-nope")
    assert not (folder / "report.txt").exists()


def test_the_script_reports_an_unknown_model_without_a_traceback():
    completed = script("List the files", "--model", "offline-nope")
    assert completed.returncode == 2
    assert_one_line_error(completed.stderr, "offline-nope")


def test_a_model_name_that_is_no_model_lists_the_offline_models_on_one_line(folder, capsys):
    from course.offline import known_models
    code, _, err = main(["List the files", "--model", "nonsense", "--workspace", str(folder)], capsys)
    assert code == 2
    assert_one_line_error(err, "nonsense")
    assert all(model in err for model in known_models())
    assert not (folder / "report.txt").exists()


def test_runs_made_in_a_stage_folder_are_kept_in_the_root_runs_folder(monkeypatch):
    # A notebook's kernel starts in its stage's folder; --resume last and `course view last` look
    # from the repository's root: both must mean the same folder.
    import course.runtime.runlog
    import course.runtime.transcript
    for name in (course.runtime.runlog.ENVIRONMENT_VARIABLE, course.runtime.runlog.AUDIT_VARIABLE, course.runtime.transcript.ENVIRONMENT_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    root = Path(course.__file__).resolve().parent.parent
    monkeypatch.chdir(root)
    from_root = (course.runtime.runlog.log_path().resolve(), course.runtime.transcript.folder().resolve())
    monkeypatch.chdir(root / "s03")
    assert (course.runtime.runlog.log_path().resolve(), course.runtime.transcript.folder().resolve()) == from_root
    assert from_root[1] == root / "runs" / "transcripts"


def test_a_workspace_that_does_not_exist_is_a_one_line_error(tmp_path, capsys):
    missing = tmp_path / "no-such-folder"
    code, _, err = main(["List the files", "--workspace", str(missing)], capsys)
    assert code == 2
    assert_one_line_error(err, "no-such-folder")
    assert not missing.exists()


def test_a_real_model_without_a_key_is_a_one_line_error_naming_the_key(folder, capsys):
    code, _, err = main(["List the files", "--model", course.DEFAULT_CLAUDE_MODEL, "--workspace", str(folder)], capsys)
    assert code == 2
    assert_one_line_error(err, "ANTHROPIC_API_KEY")



def test_the_trace_shows_a_structured_result_as_a_person_reads_it():
    from course.runtime.trace import readable
    assert readable('{"ok": true, "output": "a\\nb"}') == "a\nb"
    assert readable('{"ok": false, "error": "not_found", "message": "no x", "hint": "try y"}') == \
        "not_found: no x (hint: try y)"
    assert readable("Error: plain text") == "Error: plain text"
    assert readable('["a", "b"]') == '["a", "b"]'
