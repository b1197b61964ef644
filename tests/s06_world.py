"""What the s06 tests share, imported as ``from s06_world import ...`` (pytest puts tests/ on the path).

The workspace with what an attacker would have prepared in and around it (the ``world`` fixture, its
two secrets, and what tells whether anything in or around it changed), a scripted person, the gate
as the tests make it, ``decide`` and ``play`` (calls sent through the real ``run()``). A test module
that takes the fixture imports it (``from s06_world import world  # noqa: F401``): pytest finds a
fixture among a test module's names. s06 is loaded with helpers.load_stage, as every test loads it,
so that a student's copy is the one used while ``course check`` grades one. pytest rewrites the
asserts of test modules only, so an assert here says what failed itself.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

import course
import course.sandbox.confinement
from helpers import DONE, load_stage, results_in, scripted_client

s06 = load_stage("s06")
permissions = sys.modules[s06.Gate.__module__]  # the permissions module the stage imported (a copy's, if graded)

OUTSIDE_SECRET = "OUTSIDE-SECRET-7f3a"
ENV_SECRET = "ENV-SECRET-91c2"
AVAILABLE = course.sandbox.confinement.Confinement(available=True, reason="assumed available by the test")
UNAVAILABLE = course.sandbox.confinement.Confinement(available=False, reason="no Landlock on this test's kernel")


# ---------------------------------------------------------------- the world around the workspace

@pytest.fixture
def world(tmp_path) -> Path:
    """The workspace, with what an attacker would have prepared in and around it."""
    return built_world(tmp_path)


@pytest.fixture(scope="module")
def world_to_decide_on(tmp_path_factory) -> Path:
    """One world for a module's decision tables: deciding reads the workspace and changes nothing in it,
    so a table of hundreds of rows needs no world of its own per row."""
    return built_world(tmp_path_factory.mktemp("decisions"))


def built_world(tmp_path: Path) -> Path:
    around = tmp_path / "around"
    workspace = around / "workspace"
    shutil.copytree(course.SAMPLE, workspace)
    (around / "secret.txt").write_text(f"{OUTSIDE_SECRET} beside the workspace\n", encoding="utf-8")
    (workspace / ".env").write_text(f"API_KEY={ENV_SECRET}\n", encoding="utf-8")
    (workspace / "sub").mkdir()
    (workspace / "sub" / ".env").write_text(f"TOKEN={ENV_SECRET}\n", encoding="utf-8")
    (workspace / "link-out").symlink_to(around, target_is_directory=True)
    (workspace / "env-link").symlink_to(".env")
    (workspace / "rc.sh").write_text("rm -f memo.md; cat ../secret.txt\n", encoding="utf-8")
    (workspace / ".bashrc").write_text("rm -f memo.md\n", encoding="utf-8")
    (workspace / ".bash_profile").write_text("rm -f memo.md\n", encoding="utf-8")
    (workspace / "list.txt").write_text("../secret.txt\n", encoding="utf-8")
    (workspace / "names.txt").write_text(".env\n", encoding="utf-8")
    (workspace / "files0.txt").write_bytes(b"../secret.txt\x00.env\x00")
    os.mkfifo(workspace / "pipe")
    return workspace


def outside_state(workspace: Path) -> dict:
    """Every entry around the workspace (not in it): files with their bytes, links with their targets."""
    state = {}
    for folder, folders, files in os.walk(workspace.parent):
        if folder == str(workspace.parent):
            folders.remove(workspace.name)
        for name in folders + files:
            path = os.path.join(folder, name)
            state[path] = (os.readlink(path) if os.path.islink(path) else
                           "folder" if os.path.isdir(path) else Path(path).read_bytes())
    return state


def workspace_files(workspace: Path) -> dict:
    return {str(path.relative_to(workspace)): (os.readlink(path) if path.is_symlink() else path.read_bytes())
            for path in workspace.rglob("*") if path.is_symlink() or path.is_file()}


def no_secret(requests):
    sent = json.dumps(requests)
    assert ENV_SECRET not in sent, "the .env secret reached a request sent to the model"
    assert OUTSIDE_SECRET not in sent, "the secret beside the workspace reached a request sent to the model"


# ---------------------------------------------------------------- a person, the gate, a run

class Person:
    """A scripted person in 'ask': answers in turn, and remembers what they were asked."""

    def __init__(self, *answers: tuple[str, str]):
        self.answers, self.asked = list(answers), []

    def __call__(self, tool, arguments, why, covers):
        self.asked.append((tool, arguments, why, covers))
        return self.answers.pop(0)


def gate(approver=None, confinement=AVAILABLE, *, rules=None, audit_log=False):
    """s06's Gate with the default rules (or ``rules``) and no audit log (or ``audit_log``). Confinement is
    assumed available unless told (``course.sandbox.confinement.probe()`` for the kernel's answer, as run() asks
    it; None for a gate that was never told, which lets no command run without a person)."""
    return s06.Gate(rules=s06.RULES if rules is None else rules, approver=approver, audit_log=audit_log,
                    confinement=confinement)


def decide(workspace, command: str, **options) -> tuple[str, str, str]:
    """decide()'s verdict on a command, as (decision, why, decided_by), by ``gate(**options)``: nothing runs."""
    checking = gate(**options)
    verdict = permissions.decide(checking.read_call(workspace, "run_command", {"command": command}),
                                 checking.rules, checking.approved)
    return verdict.decision, verdict.why, verdict.decided_by


def play(world, calls, person=None):
    """Run the calls, one per model turn, through run(); return (the tool results, every request sent)."""
    replies = [[{"type": "tool_use", "id": f"toolu_{index}", "name": tool, "input": arguments}]
               for index, (tool, arguments) in enumerate(calls)]
    client, requests = scripted_client(*replies, DONE)
    result = s06.run("Do the task", client=client, model="scripted", workspace=world, approver=person,
                     audit_log=False, runs_log=False)
    results = results_in(result.messages)
    assert len(results) == len(calls), f"{len(calls)} calls sent, {len(results)} tool results in the history"
    return results, requests
