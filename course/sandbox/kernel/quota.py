"""What a folder holds, for the bounds on what a confined process may write: RLIMIT_FSIZE bounds one file,
not a folder of many, so the supervisor measures the folder (or its file system) while the process runs."""

from __future__ import annotations

import os
from pathlib import Path


def held(folder: Path | str, skip: frozenset[str] | set[str] = frozenset(), most: int | None = None,
         sizes: bool = True) -> tuple[int, int]:
    """(bytes of the blocks used, entries) beneath ``folder``, links not followed, the folders of ``skip`` not
    gone into (os.scandir: about 1-3 µs an entry, and a stat more with ``sizes``); the walk stops once more
    than ``most`` entries were counted."""
    used, count, folders = 0, 0, [str(folder)]
    while folders and (most is None or count <= most):
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    count += 1
                    try:
                        if sizes:
                            used += entry.stat(follow_symlinks=False).st_blocks * 512
                        if entry.is_dir(follow_symlinks=False) and entry.path not in skip:
                            folders.append(entry.path)
                    except OSError:
                        pass
        except OSError:
            continue
    return used, count
