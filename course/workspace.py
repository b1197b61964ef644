"""The workspace: the small sample project the agents work on, copied fresh for each run."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from .models import CourseError

SAMPLE = Path(__file__).parent / "sample_workspace"


def prepare_workspace(workspace: str | Path | None = None) -> Path:
    """The folder to work in: ``workspace`` if given (it must exist), else a fresh copy of the sample."""
    if workspace is not None:
        path = Path(workspace).expanduser()
        if not path.is_dir():
            raise CourseError(f"workspace {str(workspace)!r} is not an existing folder; create it or leave --workspace out")
        return path.resolve()
    target = Path(tempfile.mkdtemp(prefix="agent-course-")) / "workspace"
    shutil.copytree(SAMPLE, target)
    return target.resolve()


def shown(name: str) -> str:
    """A file name as text that can be sent to the model. A name that is not UTF-8 reaches Python as
    surrogate escapes, which no JSON encoder (nor the API) accepts: those bytes are shown as \\xNN."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def snapshot(workspace: Path) -> dict[str, bytes]:
    """Every file under ``workspace`` with its bytes: to compare before and after a run."""
    return {str(p.relative_to(workspace)): p.read_bytes() for p in sorted(workspace.rglob("*")) if p.is_file()}
