"""s06's gate against the real shell: what /bin/sh starts is what the gate saw.

Hypothesis writes commands from the pieces attacks are made of (operators glued or spaced, quotes,
comments, here-documents, substitutions, subshells, control structures, wrappers, assignments,
line continuations, carriage returns...). Each runs under /bin/sh with PATH set to a folder of
logging stand-ins, one per program name: a stand-in only appends its name and arguments to a log,
so nothing real runs. Then:

* every program the shell really started is one the gate saw in the tree and judged;
* a command the gate allows without a person started only programs of the safe list.

No absolute program path, ``command -p`` or ``kill`` is generated: those would reach real programs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import load_stage

s06 = load_stage("s06")
pytestmark = pytest.mark.exercise(2)  # every command is read through plain_words
gates = sys.modules[s06.Gate.__module__]

STAND_INS = ["ls", "cat", "wc", "grep", "head", "tail", "rm", "env", "xargs", "nice", "timeout", "nohup", "stdbuf",
             "sh", "bash", "find", "git", "touch", "sed", "busybox", "setsid", "curl", "python3", "sort", "r", "m"]
STAND_IN = """#!/bin/sh
printf '%s\\n' "${0##*/}" >> "$LOG"
"""  # one short write in append mode: lines of stand-ins running side by side (a & b) never mix
RUNS = 150


@pytest.fixture(scope="module")
def shell(tmp_path_factory):
    """(the folder of stand-ins, a scratch workspace) made once; each run gets a fresh log."""
    root = tmp_path_factory.mktemp("differential")
    stand_ins = root / "bin"
    stand_ins.mkdir()
    for name in STAND_INS:
        (stand_ins / name).write_text(STAND_IN, encoding="utf-8")
        (stand_ins / name).chmod(0o755)
    workspace = root / "workspace"
    workspace.mkdir()
    for name in ("memo.md", "notes.txt", "list.txt"):
        (workspace / name).write_text("rm memo.md\n", encoding="utf-8")
    return stand_ins, workspace


def started_by_the_shell(command: str, stand_ins: Path, workspace: Path) -> list[str]:
    """The programs /bin/sh started for ``command`` (by name, in order), read from the stand-ins' log."""
    log = workspace / "started.log"
    log.write_text("", encoding="utf-8")
    try:  # eval, then wait: what it started in the background (a &) has logged too when sh ends
        subprocess.run(["/bin/sh", "-c", 'eval "$1"; wait', "sh", command], cwd=workspace,
                       env={"PATH": str(stand_ins), "LOG": str(log)}, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=2)
    except subprocess.TimeoutExpired:
        pass
    return [line.split(" ", 1)[0] for line in log.read_text(encoding="utf-8").splitlines() if line]


PROGRAMS = st.sampled_from(STAND_INS + ["echo", "pwd", "eval", "exec", "command", "true"])
WORDS = st.sampled_from(["memo.md", "-l", "-n", "3", "-r", "x", "rm", "cat", "'rm memo.md'", '"ls; rm x"', "'r'm",
                         "\\rm", "r''m", "-c", "-i", "-S'rm x'", "-I", "R", "-exec", "{}", "';'", "+", "*.md", "$X",
                         "${X:-rm}", "~", "a#b", "#", "'#'", "\"$(rm x)\"", "`rm x`", "$(ls)", "<(rm x)", "list.txt"])
JOINERS = st.sampled_from([" ", " ", " ", ";", "; ", " && ", "&&", " || ", "|", " | ", "\n", " & ", "&", "\r\n",
                           "\\\n", " #'\n", ";<notes.txt ", ";>out.txt ", " $(", ") ", " `", "` ", " (", ") ", "{ ",
                           "; } ", " <<'EOF'\n'\nEOF\n", " <<EOF\n$(rm x)\nEOF\n", "\n\\", " if true; then ",
                           "; fi ", " for f in x; do ", "; done ", "X=1 ", " f() { ", "; }; f ", " ! "])


@st.composite
def commands(draw) -> str:
    """A command made of programs, words and joiners, such as an attacker would write."""
    pieces = []
    for _ in range(draw(st.integers(1, 4))):
        pieces.append(draw(PROGRAMS))
        pieces += [" " + draw(WORDS) for _ in range(draw(st.integers(0, 3)))]
        pieces.append(draw(JOINERS))
    return "".join(pieces).strip()


def seen_by_the_gate(command: str) -> set[str]:
    reading = gates.classify(gates.parse(command))
    return {os.path.basename(words[0]) for words in [w[s:] for w, s in reading.programs] + reading.commands}


@settings(max_examples=RUNS, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(commands())
def test_every_program_the_shell_starts_is_one_the_gate_saw_and_judged(shell, command):
    stand_ins, workspace = shell
    started = started_by_the_shell(command, stand_ins, workspace)
    unseen = set(started) - seen_by_the_gate(command)
    assert not unseen, f"sh started {sorted(unseen)} for {command!r}, and the gate never saw them"
    gate = s06.Gate(rules=s06.RULES, approver=None, audit_log=False,
                    confinement=gates_confinement_available())
    if gate.decide(workspace, "run_command", {"command": command})[0] == "allow":
        assert set(started) <= set(gates.SAFE_PROGRAMS), f"{command!r} was allowed and started {started}"


def gates_confinement_available():
    """A confinement that reports itself available: the gate's own decision is what is tested here."""
    return s06.confine.Confinement(available=True, reason="assumed for the differential test")


@pytest.mark.parametrize("command", ["ls\n\\rm memo.md", "ls;<notes.txt rm memo.md", "cat memo.md #'\nrm memo.md",
                                     "r\\\nm memo.md", "ls -\\\nR", "echo a#b; rm x", "env -S'rm x'",
                                     "cat <<EOF\n$(rm x)\nEOF\n", "xargs rm < list.txt"])
def test_known_disagreements_between_the_grammar_and_sh_are_caught(shell, command):
    stand_ins, workspace = shell
    started = started_by_the_shell(command, stand_ins, workspace)
    assert set(started) <= seen_by_the_gate(command)
    gate = s06.Gate(rules=s06.RULES, approver=None, audit_log=False, confinement=gates_confinement_available())
    assert gate.decide(workspace, "run_command", {"command": command})[0] != "allow"
