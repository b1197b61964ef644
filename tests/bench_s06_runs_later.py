"""What judging "runs later" by what is on disk adds, as a median: `.venv/bin/python tests/bench_s06_runs_later.py`.

A folder git takes for a repository, a folder a pointer names, the pieces beside a HEAD, a module that
shadows Python's own (course.sandbox.paths.runs_later_by_content, and the same classes in protected_entries):
each measure runs the same call with those checks and with them switched off, alternately, on a copy
of the sample workspace holding a .git folder of 200 files, and reports the median of the differences
(a loaded machine moves both alike).
"""

from __future__ import annotations

import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

import course  # noqa: E402
import course.sandbox.confinement  # noqa: E402
import course.sandbox.on_disk  # noqa: E402
import course.sandbox.paths  # noqa: E402
from bench_s06_checks import sample_with_a_repository  # noqa: E402
from helpers import load_stage  # noqa: E402

s06 = load_stage("s06")
CHECKS = ("runs_later_by_content", "git_directory", "shadowed_module")
REAL = {name: getattr(course.sandbox.paths, name) for name in CHECKS}
OFF = {"runs_later_by_content": lambda *arguments: "", "git_directory": lambda *arguments: False,
       "shadowed_module": lambda *arguments: ""}


def switched(on: bool) -> None:
    for name in CHECKS:  # where the gate calls them, and where they call each other
        for module in (course.sandbox.paths, course.sandbox.on_disk):
            setattr(module, name, REAL[name] if on else OFF[name])


def added_us(action, repeats: int = 200) -> tuple[float, float]:
    """(median of with - without, median with), in microseconds, the two run alternately."""
    differences, totals = [], []
    for _ in range(repeats):
        switched(True)
        started = time.perf_counter()
        action()
        with_checks = time.perf_counter() - started
        switched(False)
        started = time.perf_counter()
        action()
        differences.append((with_checks - (time.perf_counter() - started)) * 1e6)
        totals.append(with_checks * 1e6)
    switched(True)
    return statistics.median(differences), statistics.median(totals)


def main() -> None:
    workspace = sample_with_a_repository()
    folder = workspace.parent
    started = time.perf_counter()
    course.sandbox.paths.python_module_names()
    rows = [("python_module_names(), once per process", (time.perf_counter() - started) * 1e6, None)]
    gate = s06.Gate(rules=s06.RULES, approver=None, audit_log=False,
                    confinement=course.sandbox.confinement.Confinement(True, "assumed"))
    for tool, arguments in (("write_file", {"path": "report.txt", "content": "x"}),
                            ("write_file", {"path": "a/b/c/report.txt", "content": "x"}),
                            ("read_file", {"path": "memo.md"})):
        rows.append((f"gate.check {tool} {arguments['path']}",
                     *added_us(lambda: gate.check(workspace, tool, arguments))))
    before = course.sandbox.paths.protected_entries(workspace)
    rows.append(("protected_entries (before a command)", *added_us(lambda: course.sandbox.paths.protected_entries(workspace))))
    rows.append(("remove_new_protected (the sweep after it)",
                 *added_us(lambda: course.sandbox.paths.remove_new_protected(workspace, before))))
    if course.sandbox.confinement.probe().available:
        rows.append(("run_confined('true')", *added_us(lambda: course.sandbox.confinement.run_confined("true", workspace), 60)))
    for name, added, total in rows:
        print(f"{added:9.1f} µs added{'' if total is None else f' (of {total:,.0f} µs)':>20}  {name}")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
