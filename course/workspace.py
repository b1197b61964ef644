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


def snapshot(workspace: Path) -> dict[str, bytes]:
    """Every file under ``workspace`` with its bytes: to compare before and after a run."""
    return {str(p.relative_to(workspace)): p.read_bytes() for p in sorted(workspace.rglob("*")) if p.is_file()}
