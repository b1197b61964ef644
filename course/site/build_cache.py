"""The site's runs, remembered from one build to the next while nothing they depend on has changed.

Every run a page shows (a trace, a ladder cell, the token bench) is made by the stage files and the
support package on the offline model, which is deterministic: the same code, the same inputs and the
same machine give the same run. So a build may take a run from an earlier build instead of making
it again, as long as every file that could change it is byte for byte what it was. The fingerprint
that decides this covers every file of the support package (its offline model and sample workspace
included), of every stage and of the docs hook, the project's ``pyproject.toml``, the Python and SDK
versions, the kernel (s06's confinement depends on it) and the environment variables the course and
the SDK read. A changed byte anywhere in them is a new fingerprint, and every run is made anew.

The runs live in the course's own environment (``.venv/share/agent-course/site-runs/``), beside the
vendored mermaid script; only the newest fingerprint's are kept. ``AGENT_COURSE_SITE_RUNS=fresh``
makes every run anew and keeps none. Only the MkDocs hook uses this: code that renders a placeholder
directly (the tests of the renderers) always runs the code.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import platform
import shutil
import sys
from pathlib import Path
from typing import Callable, TypeVar

import anthropic

ROOT = Path(__file__).resolve().parents[2]
INPUT_FOLDERS = ("course", "s[0-9][0-9]", "docs/hooks")  # every stage's folder, whatever stages there are
INPUT_FILES = ("pyproject.toml",)
ENVIRONMENT_PREFIXES = ("AGENT_COURSE_", "ANTHROPIC_")
SWITCH = "AGENT_COURSE_SITE_RUNS"
# Where a run writes its logs changes nothing a page shows (a page's runs write none: tests/test_docs.py).
WHERE_LOGS_GO = {"AGENT_COURSE_RUNS_LOG", "AGENT_COURSE_AUDIT_LOG", "AGENT_COURSE_TRANSCRIPTS"}
SKIPPED = ("__pycache__", ".ipynb_checkpoints")

T = TypeVar("T")


def store() -> Path:
    return Path(sys.prefix) / "share" / "agent-course" / "site-runs"


def fingerprint(root: Path = ROOT) -> str:
    """One digest of everything a run of the site could depend on (see the module's docstring)."""
    digest = hashlib.sha256()
    for part in (sys.version, anthropic.__version__, platform.platform(), platform.release()):
        digest.update(part.encode() + b"\0")
    for name, value in sorted(os.environ.items()):
        if name.startswith(ENVIRONMENT_PREFIXES) and name != SWITCH and name not in WHERE_LOGS_GO:
            digest.update(f"{name}={value}".encode() + b"\0")
    for path in input_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:32]


def input_files(root: Path = ROOT) -> list[Path]:
    found = [root / name for name in INPUT_FILES if (root / name).is_file()]
    for folder in sorted(path for pattern in INPUT_FOLDERS for path in root.glob(pattern) if path.is_dir()):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not any(part in SKIPPED for part in path.parts) and path.suffix != ".ipynb":
                found.append(path)
    return found


class Remembered:
    """The runs of one build: ``get(key, make)`` is ``make()``, or what an earlier build with the
    same fingerprint made for ``key``."""

    def __init__(self, folder: Path | None):
        self.folder = folder  # None: remember nothing (fresh runs asked for, or no place to keep them)

    @classmethod
    def for_this_build(cls) -> "Remembered":
        if os.environ.get(SWITCH) == "fresh":
            return cls(None)
        here = store() / fingerprint()
        try:
            here.mkdir(parents=True, exist_ok=True)
            for older in store().iterdir():
                if older != here:
                    shutil.rmtree(older, ignore_errors=True)
        except OSError:
            return cls(None)
        return cls(here)

    def get(self, key: tuple, make: Callable[[], T]) -> T:
        if self.folder is None:
            return make()
        path = self.folder / (hashlib.sha256(repr(key).encode()).hexdigest()[:32] + ".pickle")
        try:
            return pickle.loads(path.read_bytes())
        except Exception:  # absent, or written by a build that was stopped half-way: make it anew
            pass
        value = make()
        try:
            scratch = path.with_suffix(f".{os.getpid()}.partial")
            scratch.write_bytes(pickle.dumps(value))
            os.replace(scratch, path)
        except Exception:  # a value that cannot be pickled is simply made again next time
            pass
        return value
