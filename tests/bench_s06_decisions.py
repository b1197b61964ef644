"""How long s06's gate takes to decide, median and worst: `.venv/bin/python tests/bench_s06_decisions.py`.

Two sets of calls, each decided with the default rules on a copy of the sample workspace (no person,
confinement assumed, so nothing runs): hostile commands of up to 4 KB (many path words, deep nesting,
globs, long paths) and the calls the ladder's tutor makes. A report, not an assertion: a machine's
speed is no property of the code.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

import course  # noqa: E402
import course.sandbox.confinement  # noqa: E402
from helpers import load_stage  # noqa: E402

s06 = load_stage("s06")
LIMIT = 4096


def fit(text: str) -> str:
    return text[:LIMIT]


HOSTILE = {
    "4 KB of path words": fit("cat " + " ".join(f"d{n}/sub/f{n}.txt" for n in range(400))),
    "4 KB of dotted path words": fit("cat " + " ".join(f".cfg{n}/x/.env{n}" for n in range(400))),
    "nested substitutions": fit("echo " + "$(echo " * 300 + "x" + ")" * 300),
    "nested subshells and pipes": fit("(" * 200 + "cat memo.md | grep a" + ")" * 200),
    "globs in every word": fit("ls " + " ".join(f"*/[a-z]*/?{n}*" for n in range(400))),
    "one very deep path": fit("cat " + "a/" * 2000),
    "many commands chained": fit(" && ".join(f"cat f{n}.txt" for n in range(400))),
    "here-documents and quotes": fit("cat <<'E'\n" + "x" * 3000 + "\nE\n" + " '" + "y " * 200 + "'"),
}
LADDER = [("list_files", {"path": "."}), ("read_file", {"path": "memo.md"}),
          ("search_files", {"text": "agent"}), ("write_file", {"path": "report.txt", "content": "total: 3\n"}),
          ("run_command", {"command": "ls"}), ("run_command", {"command": "cat memo.md | grep agent"}),
          ("calculate", {"expression": "1 + 2"})]


def timed_ms(action, repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def main() -> None:
    workspace = Path(tempfile.mkdtemp()) / "workspace"
    shutil.copytree(course.SAMPLE, workspace)
    (workspace / ".env").write_text("KEY=1\n")
    gate = s06.Gate(rules=s06.RULES, approver=None, audit_log=False,
                    confinement=course.sandbox.confinement.Confinement(True, "assumed"))
    print(f"default rules: {len(s06.RULES)}")
    rows = []
    for name, command in HOSTILE.items():
        samples = timed_ms(lambda command=command: gate.check(workspace, "run_command", {"command": command}), 5)
        rows.append((f"hostile: {name} ({len(command)} chars)", samples))
        # The same length, never decided before: the command's reading is cached, so repeats alone flatter it.
        fresh = iter(command[:-2] + f"{repeat:02d}" for repeat in range(5))
        samples = timed_ms(lambda: gate.check(workspace, "run_command", {"command": next(fresh)}), 5)
        rows.append((f"hostile, each new: {name}", samples))
    hostile = [sample for _, samples in rows for sample in samples]
    for tool, arguments in LADDER:
        rows.append((f"ladder: {tool} {arguments}"[:70], timed_ms(lambda: gate.check(workspace, tool, arguments), 50)))
    ladder = [sample for name, samples in rows if name.startswith("ladder") for sample in samples]
    for name, samples in rows:
        print(f"{name:<72} median {statistics.median(samples):8.2f} ms   worst {max(samples):8.2f} ms")
    print(f"{'all hostile commands':<72} median {statistics.median(hostile):8.2f} ms   worst {max(hostile):8.2f} ms")
    print(f"{'all ladder calls':<72} median {statistics.median(ladder):8.2f} ms   worst {max(ladder):8.2f} ms")
    shutil.rmtree(workspace.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
