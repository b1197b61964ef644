"""s06's tools, not the chapter's code: the chapter is the gate in front of them (agent.py, permissions.py).

What each tool does is s04's (a failure the model can act on; a missing path answered with the nearest
names), on the support package's one path resolver (course.sandbox.paths), the one the gate judges a path with:
a tool opens exactly the entry the gate judged. delete_file and move_file are the harmful tools this stage
adds for the gate to stop; their risk classes are the chapter's (permissions.RISK). The command tool stays
in agent.py, beside the limits the model is told of: what it runs is confined by the kernel, which is the
chapter's last word on what makes the decision trustworthy.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Sequence

import course
import course.sandbox.paths


# --8<-- [start:tools]
class ToolError(Exception):
    """A failure the model can act on: what kind, what happened, and what to do next."""

    def __init__(self, kind: str, message: str, hint: str):
        super().__init__(message)
        self.kind, self.message, self.hint = kind, message, hint


def existing(workspace: Path, path: str) -> Path:
    """The path inside the workspace, or a not_found error naming the nearest existing names."""
    target = course.sandbox.paths.resolve(workspace, path)  # the one resolver: the gate judges the same entry
    if target.exists():
        return target
    nearest = course.sandbox.paths.nearest_names(workspace, path)  # never a name the rules hide (.env.production)
    hint = f"nearest existing names: {', '.join(nearest)}" if nearest else "no similar name; call list_files to see what exists"
    raise ToolError("not_found", f"path {path!r} does not exist", hint)


# Every tool takes the workspace first, then the arguments the model sent, and returns text.
def list_files(workspace: Path, path: str = ".") -> str:
    folder = existing(workspace, path)
    if not folder.is_dir():
        raise ToolError("not_a_folder", f"{path!r} is a file, not a folder", f"call read_file with path {path!r}")
    return "\n".join(course.shown(entry.name) + ("/" if entry.is_dir() else "") for entry in sorted(folder.iterdir()))


def read_file(workspace: Path, path: str, offset: int = 0) -> str:
    file = existing(workspace, path)
    if file.is_dir():
        raise ToolError("not_a_file", f"{path!r} is a folder", f"call list_files with path {path!r}")
    course.sandbox.paths.refuse_odd_file(file, path, most_bytes=course.sandbox.paths.MAX_READ_BYTES)  # a pipe would block; a link may lead out
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ToolError("not_text", f"{path!r} is not UTF-8 text ({file.stat().st_size} bytes, binary?)",
                        "only text files can be read; pick another file") from None
    # Hidden before the cut: an offset that starts inside a token would leave no form to recognise.
    text = course.secrets_hidden(text)
    return text[offset:] if offset else text


def write_file(workspace: Path, path: str, content: str) -> str:
    target = course.sandbox.paths.resolve(workspace, path)
    course.sandbox.paths.refuse_odd_file(target, path)  # a named pipe blocks a writer; a hard link may lead out
    refuse_set_id(target, path)  # the harness may write as root, which keeps a set-user-id bit
    make_folders(target.parent)
    write_plain_file(target, path, content)
    return f"wrote {len(content)} characters to {path}"


def search_files(workspace: Path, text: str, hidden: Sequence[Path] = ()) -> str:
    """``hidden``: the files a deny rule covers (.env), skipped, links to them too: a yes/no answer
    about a secret's content, asked often enough, spells the secret out."""
    root, skipped = workspace.resolve(), frozenset(Path(path).resolve() for path in hidden)
    in_git_store = course.sandbox.paths.git_store_test()  # git's store keeps every file once committed, a secret too
    matches = [course.shown(str(file.relative_to(workspace))) for file in sorted(workspace.rglob("*"))
               if file.is_file() and file.resolve().is_relative_to(root)  # a link that leads out is skipped
               and not course.sandbox.paths.beneath_any(file.resolve(), skipped)
               and not in_git_store(file)
               and not course.sandbox.paths.holds_private_key(file)  # a key in a tree the gate's walk does not look into
               and course.sandbox.paths.contains(file, text)]  # read a part at a time: a 50 MB file is not loaded whole
    return "\n".join(matches) or "(no matches)"


def delete_file(workspace: Path, path: str) -> str:
    existing(workspace, path)
    file = course.sandbox.paths.entry(workspace, path)  # a link itself, never the file it leads to
    if not (file.is_symlink() or file.is_file()):
        raise ToolError("not_a_file", f"{path!r} is not a file", "delete_file removes single files only")
    file.unlink()
    return f"deleted {path}"


def move_file(workspace: Path, source: str, destination: str) -> str:
    existing(workspace, source)
    origin, target = course.sandbox.paths.entry(workspace, source), course.sandbox.paths.entry(workspace, destination)
    if origin.is_dir() and not origin.is_symlink():  # a folder carries files no rule was asked about (.env)
        raise ToolError("not_a_file", f"{source!r} is a folder", "move_file moves one file at a time")
    refuse_set_id(origin, source, follow_link=False)  # a set-id program under a name a user would run
    refuse_set_id(target, destination, follow_link=False)
    make_folders(target.parent)
    origin.replace(target)
    return f"moved {source} to {destination}"


def calculate(workspace: Path, expression: str) -> str:
    # Read as a syntax tree, never eval(): numbers and + - * / // % ** only, and no result too big to print.
    return course.calculator(expression)
# --8<-- [end:tools]


# A file's set-user-id and set-group-id bits make whoever runs it run as its owner (man 7 inode). The
# kernel takes them off when a file is written, but not when the writer holds CAP_FSETID, as the harness
# does when it runs as root: a set-user-id file a command made, filled by write_file, was a root shell
# that any user of the machine could run. So the file tools never write to, move or replace such a file
# (after a command the confinement takes the bits off every file of the workspace: course.sandbox.confinement),
# and what write_file makes gets 0o644 (less the umask), which has neither bit nor others' write; a
# folder it makes, 0o755 (Path.mkdir(parents=True) gives the folders above the last 0o777 less the
# umask, which may be 0: https://docs.python.org/3/library/pathlib.html#pathlib.Path.mkdir).
SET_ID_BITS = stat.S_ISUID | stat.S_ISGID
NEW_FILE_MODE, NEW_FOLDER_MODE = 0o644, 0o755


def make_folders(folder: Path) -> None:
    """``folder`` and each missing folder above it, each made with NEW_FOLDER_MODE (less the umask)."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for each in reversed(missing):
        try:
            each.mkdir(mode=NEW_FOLDER_MODE)
        except FileExistsError:
            pass


def refuse_set_id(file: Path, path: str, *, follow_link: bool = True) -> None:
    try:
        found = file.stat() if follow_link else file.lstat()
    except OSError:
        return  # nothing there (yet)
    if stat.S_ISREG(found.st_mode) and found.st_mode & SET_ID_BITS:
        raise ToolError("set_id_file", f"{path!r} is set-user-id or set-group-id (mode {stat.S_IMODE(found.st_mode):o}): "
                                       "whoever runs it runs as its owner", "ask the user to look at this file; "
                                       "the file tools leave it alone")


def write_plain_file(file: Path, path: str, content: str) -> None:
    """Write ``content`` to ``file``, made with NEW_FILE_MODE if new. The file opened is checked, not
    only its path: it is refused if it is set-id, and it is truncated only then."""
    handle = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, NEW_FILE_MODE)
    with open(handle, "w", encoding="utf-8", closefd=True) as opened:
        if os.fstat(handle).st_mode & SET_ID_BITS:
            raise ToolError("set_id_file", f"{path!r} is set-user-id or set-group-id: whoever runs it runs as its owner",
                            "ask the user to look at this file; the file tools leave it alone")
        os.ftruncate(handle, 0)
        opened.write(content)
