"""PLACEHOLDER: kernel confinement for s06's command tool (the real module replaces this file).

This stand-in has the real module's API and runs commands UNCONFINED, as s06 did before: bounded
in time, output and file size, in the workspace, with the environment it is given. ``probe()``
reports confinement available unless AGENT_COURSE_NO_CONFINEMENT=1, so that the gate can be tested.
"""

from __future__ import annotations

import functools
import os
import resource
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence


@dataclass(frozen=True)
class Confinement:
    available: bool
    reason: str  # one line for the trace


@functools.lru_cache(maxsize=None)
def _probe() -> Confinement:
    return Confinement(True, "placeholder: commands are not really confined")


def probe() -> Confinement:
    if os.environ.get("AGENT_COURSE_NO_CONFINEMENT") == "1":
        return Confinement(False, "AGENT_COURSE_NO_CONFINEMENT=1 turns confinement off")
    return _probe()


@dataclass(frozen=True)
class Finished:
    exit_code: int | None
    output: str
    timed_out: bool
    stragglers: int


def run_confined(command: str, workspace: Path, *, hidden: Sequence[Path] = (), timeout_s: float = 5,
                 output_cap: int = 20_000, environment: Mapping[str, str] | None = None) -> Finished:
    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (output_cap * 50, output_cap * 50))

    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(["/bin/sh", "-c", command], cwd=workspace, env=dict(environment or {}),
                                   stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                                   start_new_session=True, preexec_fn=limit_file_size)
        timed_out = False
        try:
            code = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out, code = True, None
        try:
            os.killpg(process.pid, signal.SIGKILL)  # the whole group, every time: no survivors
        except ProcessLookupError:
            pass
        process.wait()
        output.seek(0)
        text = output.read(output_cap).decode("utf-8", errors="replace")
    return Finished(exit_code=code, output=text, timed_out=timed_out, stragglers=0)
