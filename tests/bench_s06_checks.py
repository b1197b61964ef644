"""What s06's newer checks add to a call, as a median: `.venv/bin/python tests/bench_s06_checks.py`.

Each check is timed with and without it, on a copy of the sample workspace holding a .git folder of
200 files: the gate's decision with the full default rules (secret patterns and the paths other
programs run) against the rules it had before them; the harness's own paths; the not-found hint; the
protected entries a command gets read-only and the sweep after it; a signed transcript line.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

import course  # noqa: E402
import course.sandbox.confinement  # noqa: E402
import course.sandbox.paths  # noqa: E402
import course.runtime.transcript  # noqa: E402
from helpers import load_stage  # noqa: E402

s06 = load_stage("s06")
permissions = sys.modules[s06.Gate.__module__]
BEFORE = [rule for rule in s06.RULES if rule.decision == "deny" and rule.tool == "run_command"] + [
    permissions.Rule("deny", "*", ".env"), permissions.Rule("deny", "*", "*/.env")]


def median_us(action, repeats: int = 300) -> float:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1e6)
    return statistics.median(samples)


def sample_with_a_repository() -> Path:
    """A fresh copy of the sample workspace holding a .git folder of 200 files (a walk has work to do)."""
    workspace = Path(tempfile.mkdtemp()) / "workspace"
    shutil.copytree(course.SAMPLE, workspace)
    (workspace / ".git" / "objects").mkdir(parents=True)
    for number in range(200):
        (workspace / ".git" / "objects" / f"{number:03}").write_text("x")
    return workspace


def main() -> None:
    workspace = sample_with_a_repository()
    folder = workspace.parent
    (workspace / ".env").write_text("KEY=1\n")
    confinement = course.sandbox.confinement.Confinement(True, "assumed")
    new, old = (s06.Gate(rules=rules, approver=None, audit_log=False, confinement=confinement) for rules in (s06.RULES, BEFORE))
    rows = []
    for tool, arguments in (("read_file", {"path": "memo.md"}), ("write_file", {"path": "report.txt", "content": "x"}),
                            ("run_command", {"command": "cat memo.md | grep agent"})):
        with_new, with_old = (median_us(lambda gate=gate: gate.check(workspace, tool, arguments), 200) for gate in (new, old))
        rows.append((f"gate.check {tool} (default rules, {len(s06.RULES)} vs {len(BEFORE)})", with_new - with_old, with_new))
    rows.append(("harness_problem (the harness's files and Python)",
                 median_us(lambda: course.sandbox.paths.harness_problem(workspace, ["memo.md"], writes=True)), None))
    rows.append(("nearest_names (the not-found hint, hidden names left out)",
                 median_us(lambda: course.sandbox.paths.nearest_names(workspace, "memo.mx"), 100), None))
    before = course.sandbox.paths.protected_entries(workspace)
    rows.append(("protected_entries + read_only_mounts (before a command)",
                 median_us(lambda: course.sandbox.paths.read_only_mounts(workspace, course.sandbox.paths.protected_entries(workspace)), 100), None))
    rows.append(("remove_new_protected (the sweep after a command)",
                 median_us(lambda: course.sandbox.paths.remove_new_protected(workspace, before), 100), None))
    if course.sandbox.confinement.probe().available:
        real = course.sandbox.paths.protected_entries
        confined = median_us(lambda: course.sandbox.confinement.run_confined("true", workspace), 40)
        course.sandbox.paths.protected_entries = lambda workspace: {}
        bare = median_us(lambda: course.sandbox.confinement.run_confined("true", workspace), 40)
        course.sandbox.paths.protected_entries = real
        rows.append(("run_confined('true'): read-only mounts, sweep, IPC namespace, keyring", confined - bare, confined))
    course.runtime.transcript.DURABLE = False
    os.environ["AGENT_COURSE_TRANSCRIPTS"] = str(folder / "transcripts")
    os.environ["AGENT_COURSE_KEY"] = str(folder / "key")
    line = {"turn": 1, "usage": {"input_tokens": 1, "output_tokens": 1}, "stop_reason": None, "transitions": [],
            "messages": [{"role": "user", "content": "x" * 2000}]}
    signed, unsigned = folder / "transcripts" / "s06-1.jsonl", folder / "transcripts" / "s05-1.jsonl"
    course.runtime.transcript.append(signed, dict(line, stage="s06"))
    course.runtime.transcript.append(unsigned, dict(line, stage="s05"))
    with_mac = median_us(lambda: course.runtime.transcript.append(signed, line), 300)
    without = median_us(lambda: course.runtime.transcript.append(unsigned, line), 300)
    rows.append(("transcript.append, a signed line (HMAC) vs an unsigned one", with_mac - without, with_mac))
    for name, added, total in rows:
        print(f"{added:9.1f} µs added{'' if total is None else f' (of {total:,.0f} µs)':>20}  {name}")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
