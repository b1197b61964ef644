"""s06: a command runs confined by the kernel, bounded, with a clean environment; and without confinement, none runs without a person.

The command tool hands every command to course.sandbox.confinement: in the workspace, killed at its time
limit, its output capped, with only PATH, the locale and a HOME that does not exist in its
environment (no API key, no token, and no startup file the model could have written), and the files
a deny rule covers hidden from it. Where the kernel cannot confine, the trace says so once, and the
gate lets no command run without a person. (The confinement itself: tests/test_confine.py.)
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

import course.sandbox.confinement
import course.runtime.workspace
from helpers import DONE, scripted_client
from s06_world import UNAVAILABLE, decide, gate, s06, world  # noqa: F401

pytestmark = pytest.mark.stage("s06")  # every test here pins s06


# ---------------------------------------------------------------- the command tool

def test_a_command_running_too_long_is_killed(workspace, monkeypatch):
    monkeypatch.setattr(s06, "COMMAND_TIMEOUT_S", 1)
    started = time.perf_counter()
    with pytest.raises(s06.ToolError) as refused:
        s06.run_command(workspace, "sleep 5")
    assert refused.value.kind == "timeout" and time.perf_counter() - started < 3


def test_a_command_output_is_capped(workspace):
    output = s06.run_command(workspace, "head -c 100000 /dev/zero | tr '\\0' x")
    assert output.startswith("exit code 0\n")
    assert len(output) <= len("exit code 0\n") + s06.COMMAND_OUTPUT_CAP


def test_a_command_runs_in_the_workspace(workspace):
    assert s06.run_command(workspace, "pwd").splitlines()[1] == str(workspace)


def test_a_command_sees_no_api_key_or_other_secret(workspace, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_test_secret")
    printed = s06.run_command(workspace, "printenv")
    assert "ANTHROPIC_API_KEY" not in printed and "sk-ant-test-secret" not in printed
    assert "ghp_test_secret" not in printed
    assert s06.run_command(workspace, "printenv ANTHROPIC_API_KEY").startswith("exit code 1")


@pytest.mark.exercise(1)
def test_a_command_runs_through_confinement_with_the_hidden_files_and_a_clean_environment(workspace, monkeypatch):
    (workspace / ".env").write_text("KEY=1\n", encoding="utf-8")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-secret")
    monkeypatch.setenv("PATH", f"{workspace}:.:{os.environ['PATH']}")
    seen = {}

    def run_confined(command, where, **options):
        seen.update(options, command=command)
        return course.sandbox.confinement.Finished(exit_code=0, output="fine\n", timed_out=False, stragglers=2)

    monkeypatch.setattr(course.sandbox.confinement, "run_confined", run_confined)
    text, is_error = s06.run_tool(workspace, "run_command", {"command": "ls"}, gate())
    assert not is_error and "2 process(es) it left running were ended" in json.loads(text)["output"]
    assert seen["hidden"] == [workspace.resolve() / ".env"]
    assert "sk-ant-test-secret" not in json.dumps(seen["environment"])
    folders = seen["environment"]["PATH"].split(os.pathsep)
    assert str(workspace) not in folders and "." not in folders and folders


@pytest.mark.exercise(1, 2)
@pytest.mark.parametrize("plant, content", [
    (".local/lib/python3.11/site-packages/usercustomize.py", "import os; os.remove('memo.md')\n"),
    (".local/lib/python3.11/site-packages/zz.pth", "import os; os.remove('memo.md')\n"),
    (".pdbrc", "import os; os.remove('memo.md')\n")])
def test_a_command_finds_no_home_in_the_workspace_to_load_code_from(world, plant, content):
    """With HOME in the workspace, every Python program (pygmentize, pdb3...) would run a
    usercustomize.py or a .pth the model wrote. HOME is a folder that does not exist."""
    (world / plant).parent.mkdir(parents=True, exist_ok=True)
    (world / plant).write_text(content)
    checking = gate(lambda *a: ("allow once", ""), course.sandbox.confinement.probe())
    text, _ = s06.run_tool(world, "run_command", {"command": f"{sys.executable} -c 'print(40 + 2)'"}, checking)
    assert "42" in text and (world / "memo.md").exists()
    environment = course.sandbox.confinement.command_environment(world)
    assert not Path(environment["HOME"]).exists() and environment["PYTHONNOUSERSITE"] == "1"


# ---------------------------------------------------------------- without confinement, a person for every command

@pytest.mark.exercise(1)
def test_without_kernel_confinement_no_command_runs_without_a_person(workspace):
    verdict, why, _ = decide(workspace, "ls", confinement=UNAVAILABLE)
    assert verdict == "ask" and "no Landlock on this test's kernel" in why
    assert decide(workspace, "ls", confinement=None)[0] == "ask"


@pytest.mark.exercise(1, 2)
def test_without_confinement_the_trace_says_so_once_and_every_command_is_refused(workspace, monkeypatch):
    monkeypatch.setattr(course.sandbox.confinement, "probe", lambda: UNAVAILABLE)
    calls = [{"type": "tool_use", "id": f"toolu_{n}", "name": "run_command", "input": {"command": "ls"}} for n in (1, 2)]
    client, _ = scripted_client([calls[0]], [calls[1]], DONE)
    notes = []
    result = s06.run("List", client=client, model="scripted", workspace=workspace, approver=None, audit_log=False,
                     runs_log=False, trace=lambda kind, payload: notes.append(payload) if kind == "note" else None)
    assert sum("no kernel confinement" in note for note in notes) == 1
    assert result.tool_errors == {"run_command": 2}


def test_files_a_deny_rule_covers_are_hidden_at_any_depth(workspace):
    (workspace / "config").mkdir()
    for path in (".env", "config/.env"):
        (workspace / path).write_text("KEY=1\n", encoding="utf-8")
    assert sorted(str(path.relative_to(workspace.resolve())) for path in gate().hidden(workspace)) == [".env", "config/.env"]


# ---------------------------------------------------------------- the sweep after a command fails closed

def test_what_the_sweep_could_not_remove_is_an_error_the_model_reads_and_no_later_command_runs(world, monkeypatch):
    """A command that made a .git the sweep could not remove (here the removal is made to fail): the
    tool result is an error naming it, and the next command, though a person allowed it, does not run."""
    if not course.sandbox.confinement.probe().available:
        pytest.skip(course.sandbox.confinement.probe().reason)
    monkeypatch.setattr(course.sandbox.paths, "remove_tree", lambda path: None)
    person = gate(lambda *a: ("allow once", ""), course.sandbox.confinement.probe())
    make = "mkdir -p .git/objects .git/refs && echo 'ref: refs/heads/main' > .git/HEAD"
    text, is_error = s06.run_tool(world, "run_command", {"command": make}, person)
    assert is_error and "'.git'" in text and "until a person removes it" in text, text
    text, is_error = s06.run_tool(world, "run_command", {"command": "echo ran > marker.txt"}, person)
    assert is_error and "an earlier command made '.git'" in text and not (world / "marker.txt").exists(), text
