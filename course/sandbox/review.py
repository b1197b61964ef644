"""What a command changed beyond plain data: shown to the person who approved it, or undone.

A person who approves `make` or `npm install` approves a command, not every file it goes on to write: a build
may leave a new hook, a config or a script the next program runs. The file tools write without a person only
plain data (``course.sandbox.paths.not_plain_data``); a command is held to the same rule afterwards:

* before it runs, every file of the workspace is noted (size, modification time, mode; a link, its target), and
  the bytes of those that are not plain data, within a budget;
* after it ran, each entry that is not plain data and was created, changed or deleted is listed;
* a person who approved the command is shown the list and keeps it or has it undone; a command that ran with
  no person (the safe list) has every such change undone, since nobody agreed to it.

Cheap on purpose: one walk before and one after, bounded by MOST_ENTRIES entries and MOST_BYTES bytes kept. A
workspace larger than that is checked as far as the budget goes, and the note says so.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from course.runtime.trees import entries_under
from course.sandbox.paths import protected_entries
from course.sandbox.plain_data import not_plain_data

MOST_ENTRIES = 20_000       # entries noted per walk: a workspace with more is checked as far as this goes
MOST_BYTES = 64 << 20       # bytes of files that are not plain data kept to undo a change to them
MOST_SHOWN = 12             # changes named to a person or the model; the rest are counted
KEEP_OR_UNDO = "once only: what this command changed, kept or undone"  # what the person's answer covers


@dataclass
class Snapshot:
    entries: dict[str, tuple] = field(default_factory=dict)  # relative path -> (kind, size, mtime_ns, mode, target)
    kept: dict[str, bytes] = field(default_factory=dict)     # the bytes of the files that are not plain data
    complete: bool = True                                     # every entry was noted, and every byte kept


def snapshot(workspace: Path, *, keep_bytes: bool = True) -> Snapshot:
    """The workspace's entries as they are now (links not followed), with the bytes of its files that are not
    plain data while the budget lasts."""
    root = Path(os.path.realpath(workspace))
    taken, budget = Snapshot(), MOST_BYTES
    read_only = set(protected_entries(root))  # mounted read-only for the command, and swept after it by the confinement
    for count, (path, _) in enumerate(entries_under(root, skip=lambda folder: str(folder) in read_only)):
        if str(path) in read_only:
            continue
        if count >= MOST_ENTRIES:
            taken.complete = False
            break
        relative = str(path.relative_to(root))
        try:
            found = os.lstat(path)
        except OSError:
            continue
        kind = "link" if stat.S_ISLNK(found.st_mode) else "file" if stat.S_ISREG(found.st_mode) else \
            "folder" if stat.S_ISDIR(found.st_mode) else "other"
        target = os.readlink(path) if kind == "link" else ""
        taken.entries[relative] = (kind, found.st_size, found.st_mtime_ns, stat.S_IMODE(found.st_mode), target)
        if keep_bytes and kind == "file" and not_plain_data(root, relative):
            if found.st_size > budget:
                taken.complete = False
                continue
            try:
                taken.kept[relative] = path.read_bytes()
                budget -= found.st_size
            except OSError:
                taken.complete = False
    return taken


@dataclass(frozen=True)
class Change:
    path: str
    how: str  # "created", "changed" or "deleted"

    def __str__(self) -> str:
        return f"{self.path} ({self.how})"


def beyond_plain_data(workspace: Path, before: Snapshot) -> list[Change]:
    """Each entry that is not plain data (a link, anything in a hidden folder, a script, a config, an executable
    file) and that the command created, changed or deleted."""
    root = Path(os.path.realpath(workspace))
    after = snapshot(workspace, keep_bytes=False)
    found = []
    for relative, now in after.entries.items():
        was = before.entries.get(relative)
        if now[0] != "folder" and (was != now or _bytes_differ(root, relative, before)) and not_plain(root, relative, now):
            found.append(Change(relative, "created" if was is None else "changed"))
    for relative, was in before.entries.items():
        if relative not in after.entries and was[0] != "folder" and not_plain(root, relative, was):
            found.append(Change(relative, "deleted"))
    return sorted(found, key=lambda change: change.path)


def _bytes_differ(root: Path, relative: str, before: Snapshot) -> bool:
    """Whether a file whose bytes were kept holds others now: a write of the same size within one tick of the
    clock leaves its size and time as they were."""
    if relative not in before.kept:
        return False
    try:
        return (root / relative).read_bytes() != before.kept[relative]
    except OSError:
        return True


def not_plain(root: Path, relative: str, entry: tuple) -> bool:
    """Whether an entry, as a snapshot noted it, is not plain data: anything but a regular file never is; a file
    by the rule (course.sandbox.paths.not_plain_data), and by the mode noted (an executable .txt is not plain)."""
    return entry[0] != "file" or bool(not_plain_data(root, relative)) or bool(entry[3] & 0o111)


def undo(workspace: Path, before: Snapshot, changes: list[Change]) -> list[str]:
    """Put each change back as ``before`` had it: what the command made removed, a file it changed or deleted
    written back with its mode, a plain file it made executable given its mode back. What cannot be put back
    (its earlier bytes were not kept) is returned, each with why."""
    root = Path(os.path.realpath(workspace))
    left = []
    for change in changes:
        path, was = root / change.path, before.entries.get(change.path)
        try:
            if was is not None and was[0] == "file" and change.path not in before.kept and os.path.isfile(path) \
                    and not os.path.islink(path):
                os.chmod(path, was[3])  # plain data made executable: its bytes are plain data still, its mode goes back
                continue
            if os.path.lexists(path) and (os.path.islink(path) or not os.path.isdir(path)):
                os.unlink(path)
            elif os.path.isdir(path):
                left.append(f"{change.path}: a folder now, left in place")
                continue
            if was is None:
                continue
            if was[0] == "file" and change.path in before.kept:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(before.kept[change.path])
                os.chmod(path, was[3])
            elif was[0] == "link":
                os.symlink(was[4], path)
            else:
                left.append(f"{change.path}: its earlier bytes were not kept")
        except OSError as error:
            left.append(f"{change.path}: {error.strerror or error}")
    _remove_new_empty_folders(root, before)
    return left


def _remove_new_empty_folders(root: Path, before: Snapshot) -> None:
    made = [relative for relative, entry in snapshot(root, keep_bytes=False).entries.items()
            if entry[0] == "folder" and relative not in before.entries]
    for relative in sorted(made, key=lambda name: name.count("/"), reverse=True):
        try:
            os.rmdir(root / relative)
        except OSError:
            pass  # it holds plain data the command wrote: that stays


Person = Callable[[str, dict, str, str], tuple[str, str]]


def run_reviewed(workspace: Path, command: str, person: Person | None, run: Callable[[], str]) -> str:
    """Run a command (``run``), then hold what it changed beyond plain data to the rule: shown to ``person``, who
    approved it, to keep or undo; undone when there is no person. The output says what happened to them."""
    before = snapshot(workspace)
    output = run()
    changes = beyond_plain_data(workspace, before)
    unchecked = "" if before.complete else "\n[the workspace is larger than the check's budget: only part was checked]"
    if not changes:
        return output + unchecked  # nothing found is not nothing changed when the walk stopped early
    listed = ", ".join(map(str, changes[:MOST_SHOWN])) + (f" and {len(changes) - MOST_SHOWN} more"
                                                          if len(changes) > MOST_SHOWN else "")
    kept = False
    if person is not None:
        answer, _ = person("run_command", {"command": command},
                           f"the command ran and changed what is not plain data: {listed}. Keep these changes? "
                           "(yes keeps them; no undoes them)", KEEP_OR_UNDO)
        kept = answer in ("allow once", "allow always")
    if kept:
        return f"{output}\n[a person kept what the command changed beyond plain data: {listed}]"
    left = undo(workspace, before, changes)
    said = (f"{output}\n[undone, {'as the person asked' if person is not None else 'since no person approved it'}: "
            f"{listed}; a command changes without a person only plain data]")
    return said + (f"\n[not undone: {'; '.join(left)}]" if left else "") + unchecked
