"""Paths for s06's file tools and its gate: one resolver, so that the gate judges the very entry a tool opens.

A path comes from the model, and resolving it is where an escape happens. Compared as text,
'/work/ws-evil' starts with '/work/ws' (the prefix bug behind CVE-2025-54794 and CVE-2025-53110);
normalised as text, 'L/../x' is 'x', where the file system, with L a link to a folder, goes
elsewhere; followed to its end, a link that a tool deletes is its target. So the file tools and the
gate resolve every path with ``resolve()``, the same way:

* refused before anything is resolved: a NUL byte, an absolute path, more than MAX_PATH_CHARS
  characters or MAX_PATH_DEPTH names;
* resolved by the file system, links and '..' in order, and compared with the workspace by its
  path components, never as a string;
* its last name followed, or not (``follow_link=False``: deleting or moving a link acts on the link).

Around it: ``entry()`` (what delete_file and move_file act on), ``refuse_odd_file()`` (a file tool
acts on regular files with a single name), ``subjects()`` (what a file tool's call acts on, as the
gate judges it), ``covered_files()`` (the files a deny rule covers, and every other name for them),
and, for a command's words, ``paths_named_by()`` and ``operand_problem()``.
"""

from __future__ import annotations

import difflib
import fnmatch
import importlib.machinery
import functools
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from course.runtime.trees import PATH_MAX, entries_under, remove_tree

MAX_PATH_CHARS = 1024  # a longer path is refused: resolving it costs time that grows with its square
MAX_PATH_DEPTH = 32    # a deeper path is refused: a folder chain 1,000 deep breaks every walk of the workspace
MAX_READ_BYTES = 1 << 20   # the most a file tool reads of one file into memory (1 MiB; the history keeps 4,000 characters)
MAX_WRITE_BYTES = 1 << 20  # the most one write_file call may write: 50 MB in one call is no edit
PATH_ARGUMENTS = ("path", "source", "destination")  # the arguments of the file tools that name a path
OUTSIDE = "use a path relative to the workspace, without '..', a leading '/' or links that lead out"


class Refused(Exception):
    """A path a file tool will not act on, said as a tool error is: what kind, what happened, what to do."""

    def __init__(self, kind: str, message: str, hint: str):
        super().__init__(message)
        self.kind, self.message, self.hint = kind, message, hint


# ---------------------------------------------------------------- the resolver

def resolve(workspace: Path, path: str, *, follow_link: bool = True) -> Path:
    """The entry ``path`` names, if it stays inside the workspace: links and '..' resolved by the file
    system. With ``follow_link=False``, the last name is the entry itself, a link not followed (its
    folder resolved); a path whose last name is no entry of its own ('.', 'x/..') is that folder."""
    if len(path) > MAX_PATH_CHARS or path.count("/") >= MAX_PATH_DEPTH:
        raise Refused("path_too_long", f"the path is {len(path)} characters and {path.count('/') + 1} names deep "
                                       f"(at most {MAX_PATH_CHARS} and {MAX_PATH_DEPTH})", "use a shorter path")
    if "\x00" in path:
        raise Refused("outside_workspace", "the path contains a NUL byte", OUTSIDE)
    if Path(path).is_absolute():
        raise Refused("outside_workspace", f"{path!r} is an absolute path", OUTSIDE)
    resolved = (workspace / path).resolve()
    if not resolved.is_relative_to(workspace.resolve()):
        raise Refused("outside_workspace", f"{path!r} leads outside the workspace", OUTSIDE)
    name = Path(path).name
    if follow_link or name in ("", ".."):
        return resolved
    return resolve(workspace, str(Path(path).parent)) / name  # its folder must stay inside too


def entry(workspace: Path, path: str) -> Path:
    """What delete_file and move_file act on: the entry itself, never where a link leads; a path
    that names a folder ('.', 'x/..') is refused. A link that leads out is refused like any escape."""
    found = resolve(workspace, path, follow_link=False)
    if Path(path).name in ("", ".."):
        raise Refused("not_a_file", f"{path!r} names a folder, not a file", "name one file")
    return found


def refuse_odd_file(file: Path, path: str, most_bytes: int | None = None) -> None:
    """An existing file a tool reads or overwrites must be a regular file with one name. A named pipe
    would block the loop, a device never end; a file with another name (a hard link) may be a file
    outside the workspace, or a secret, under a name the rules do not cover. ``most_bytes``: a file
    read whole must be no larger (a 50 MB file would sit in memory, then in the history)."""
    if not file.exists():
        return
    if not file.is_file():
        raise Refused("not_a_file", f"{path!r} is not a regular file (a folder, a pipe, a socket or a device)",
                      "act on regular files only")
    found = file.stat()
    if found.st_nlink > 1:
        raise Refused("hard_link", f"{path!r} is a hard link: the same file has another name, perhaps outside "
                                   "the workspace", "work on another file, or ask the user about this one")
    if most_bytes is not None and found.st_size > most_bytes:
        raise Refused("too_big", f"{path!r} is {found.st_size:,} bytes, more than the {most_bytes:,} a file tool "
                                 "reads whole", f"read a part of it with run_command: head -c 4000 {path}, "
                                                f"tail -n 50 {path}, or grep -n WORD {path}")


def too_much_to_write(content) -> str:
    """Why one write may not write ``content`` ("" if it may): more than MAX_WRITE_BYTES in one call."""
    size = len(content.encode("utf-8", "surrogatepass")) if isinstance(content, str) else 0
    if size <= MAX_WRITE_BYTES:
        return ""
    return (f"the content is {size:,} bytes, more than the {MAX_WRITE_BYTES:,} one write_file call may write: "
            "write less (a summary, not a copy), or split it into several files of at most that size")


def contains(file: Path, text: str, chunk: int = 1 << 20) -> bool:
    """Whether a file's text holds ``text``, without regard to case, read a chunk at a time, so that
    memory stays bounded whatever the file's size; a match across two chunks is found too."""
    needle, tail = text.lower(), ""
    if not needle:
        return True
    with open(file, encoding="utf-8", errors="ignore") as opened:
        while block := opened.read(chunk):
            window = tail + block.lower()
            if needle in window:
                return True
            tail = window[-(len(needle) - 1):] if len(needle) > 1 else ""
    return False


# ---------------------------------------------------------------- what a call acts on, for the gate

@dataclass(frozen=True)
class Subjects:
    """What one file tool's call acts on, resolved exactly as the tool resolves it."""

    acted_on: list[str]   # each entry it acts on, relative to the workspace ("" when the call names no path)
    leads_to: list[str]   # its other names: as written, by each link passed on the way, by a link that leads to it
    same_file: str        # why one of them is a hidden file under another name (a hard link, moved, a private key), or ""
    overwrites: bool      # its "path" names an existing regular file, links followed
    runs_later: str = ""  # why what it changes may run later: on disk (runs_later_by_content), or not plain data
    git_store: str = ""   # why reading it goes to a person: it is in git's own store (git_store_problem)


def subjects(workspace: Path, arguments: dict, *, follow_link: bool, hidden: Sequence[Path] = (),
             covered: Callable[[str], bool] | None = None) -> Subjects:
    """The entries a call acts on (each path argument through ``resolve()``: an escape is refused here,
    before any rule or person sees it); every other name for them, for the rules (``other_names()``);
    and whether one of them is the same file as one of ``hidden`` (same device and inode: `ln .env notes.txt`),
    or is one of them though ``covered`` (the deny rules, a path alone) covers none of its names: moved."""
    root, acted, leads = workspace.resolve(), [], []
    links, pointers = _links_and_pointers(root) if any(key in arguments for key in PATH_ARGUMENTS) else ({}, {})
    for key in PATH_ARGUMENTS:
        if key in arguments:
            found = resolve(workspace, str(arguments[key]), follow_link=follow_link)
            acted += [] if str(found.relative_to(root)) in acted else [str(found.relative_to(root))]
            leads += [name for name in other_names(root, str(arguments[key]), found, links)
                      if name not in acted and name not in leads]
    # A hard link is a second name for one file: a file with one name is none (the hidden file itself,
    # which its rule names), and neither is a symbolic link (its target is in ``leads``, for the rules).
    secrets = {inode_of(path) for path in hidden} - {None}
    same = next((f"{name!r} is the same file as one a deny rule covers (a hard link)" for name in acted + leads
                 if secrets and links_of(root / name) > 1 and inode_of(root / name) in secrets), "")
    if not same:
        same = next((f"{name!r} {KEY_HELD}" for name in acted + leads if holds_private_key(root / name)), "")
    # A file with one name that is hidden though no rule covers any name of the call: a secret of this
    # run moved here (covered_files' ``seen``). A rule that covers one of its names says why itself.
    if not same and covered is not None and hidden and not any(covered(part) for name in acted + leads
                                                                 for part in _with_folders(name)):
        kept = {Path(os.path.realpath(path)) for path in hidden}
        same = next((f"{name!r} is a file the rules hid earlier in this run under another name (it was moved "
                     "or renamed since): it is a secret still" for name in acted
                     if links_of(root / name) == 1 and Path(os.path.realpath(root / name)) in kept), "")
    overwrites = "path" in arguments and (root / acted[0]).is_file()
    later = (next((why for name in acted + leads if (why := runs_later_by_content(root, name, pointers))), "")
             or next((why for name in acted if (why := not_plain_data(root, name, leads))), ""))
    return Subjects(acted or [""], leads, same, overwrites, later, git_store_problem(root, acted + leads))


def other_names(root: Path, written: str, found: Path, links: dict[str, list[str]]) -> list[str]:
    """The names by which a path reaches ``found`` besides its resolved one, relative to the workspace:
    the path as written; at each link passed on the way, the link's own name with the rest of the path
    after it (`.aws/credentials`, where .aws leads to dotfiles/aws); where ``found`` leads, if it is a
    link not followed; and each link elsewhere in the workspace that leads to it or to a folder it lies
    in (``links``: dotfiles/env.production is .env when .env leads there). A rule judges every one of
    them: a link named .env is a secret whatever it leads to, and so is the file it leads to."""
    names: list[str] = []
    parts, folder = Path(written).parts, root
    for index, part in enumerate(parts):
        rest = parts[index + 1:]
        if part == "..":
            folder = folder.parent
            continue
        here = folder / part
        if here.is_relative_to(root) and here != root:
            names.append(str(Path(here.relative_to(root), *rest)))
        folder = Path(os.path.realpath(here)) if os.path.islink(here) and index < len(parts) - 1 else here
    target = Path(os.path.realpath(found))
    for reached in (found, target):
        if reached.is_relative_to(root) and reached != root:
            names.append(str(reached.relative_to(root)))
            for above in (reached, *reached.parents):
                if above == root or not above.is_relative_to(root):
                    break
                for link in links.get(str(above.relative_to(root)), ()):
                    names.append(str(Path(link, reached.relative_to(above))).removesuffix("/."))
    return list(dict.fromkeys(name for name in names if name not in (".", str(found.relative_to(root)))))


def _with_folders(name: str) -> list[str]:
    """A relative path and each folder it lies in: "a/b/c", "a/b", "a"."""
    parts = Path(name).parts
    return ["/".join(parts[:end]) for end in range(len(parts), 0, -1)]


def links_inside(root: Path) -> dict[str, list[str]]:
    """Every symbolic link in the workspace that leads inside it, as {where it leads: [its names]},
    relative to the workspace: one walk, growing with the number of entries."""
    return _links_and_pointers(root)[0]


def _links_and_pointers(root: Path) -> tuple[dict[str, list[str]], dict[Path, Path]]:
    """links_inside(), and git_pointers(), in the same walk."""
    found: dict[str, list[str]] = {}
    pointers: dict[Path, Path] = {}
    for path, is_file in entries_under(root):
        if path.is_symlink():
            target = Path(os.path.realpath(path))
            if target.is_relative_to(root) and target != root:
                found.setdefault(str(target.relative_to(root)), []).append(str(path.relative_to(root)))
        elif is_file and path.name in GIT_POINTERS:
            named = git_pointer(path)
            if named is not None:
                pointers.setdefault(named, path)
    return found, pointers


def covered_files(workspace: Path, covered: Callable[[str], bool], seen: set | None = None) -> list[Path]:
    """The files inside the workspace that ``covered`` (a deny rule, given a path relative to the
    workspace) says no tool may read, such as .env at any depth; and every other name for them
    (`ln .env notes.txt`: the same device and inode); and any file with a second name, which may be
    a file outside the workspace; and any file whose first bytes hold a private key (holds_private_key(),
    whatever its name); and every folder named HARNESS_FOLDER. A command is confined so that it cannot read them, and the search
    tool skips them. ``seen``: what the caller's run has found so far (fingerprint() of each file
    found by name, or held by a folder found by name), added to here: a file that was a secret stays
    one wherever it lies later in the run (`mv .streamlit x` leaves x/secrets.toml as secret as it was)."""
    root = Path(os.path.realpath(workspace))
    found, others = [], []
    # A covered folder is hidden whole, so the walk does not go into it; ``covered`` is then asked of
    # each entry alone (its folders were judged on the way down): the work grows with the number of
    # entries, not with their depth squared (a chain of folders 1,000 deep).
    # And every folder named HARNESS_FOLDER, whole: the harness's transcripts and logs of any run started in
    # the workspace (tests/runs/ as much as runs/), which read_file refuses (in_a_harness_folder).
    def hidden_whole(path: Path) -> bool:
        return covered(str(path.relative_to(root))) or path.name.lower() == HARNESS_FOLDER and path.is_dir()

    for path, is_file in entries_under(root, skip=hidden_whole):
        if hidden_whole(path):
            found.append(path)
        elif is_file:
            others.append(path)
    secrets = {inode_of(path) for path in found} - {None}
    known = {fingerprint(path) for path in [*found, *(file for path in found for file in files_held(root, path))]}
    if seen is not None:
        seen |= known - {None}
        known = seen
    top = len(str(root)) + 1
    covered = found + [path for path in others if _another_name_of_a_secret(path, secrets, known, str(path)[top:])]
    # A link a rule covers (.aws, leading to dotfiles/aws) makes what it leads to a secret too.
    covered += [Path(os.path.realpath(path)) for path in found if path.is_symlink()
                and Path(os.path.realpath(path)).is_relative_to(root) and Path(os.path.realpath(path)) != root]
    _last_covered[str(root)] = covered
    return covered


def fingerprint(path: Path) -> tuple[int, int, int, int] | None:
    """A regular file's (device, inode, size, last change in ns), links followed; None for anything else.
    A rename keeps all four, so a moved secret is known by them; a file system gives a deleted file's
    inode to the next new file (ext4 does at once), which has another size or change time: not the secret."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns) if stat.S_ISREG(found.st_mode) else None


# A private key is a secret whatever its name: PEM's armour (RFC 7468's PRIVATE KEY and ENCRYPTED PRIVATE KEY,
# OpenSSL's RSA, EC and DSA ones, https://www.rfc-editor.org/rfc/rfc7468#section-10), OpenSSH's own format
# (https://github.com/openssh/openssh-portable/blob/master/PROTOCOL.key), GnuPG's PGP PRIVATE KEY BLOCK
# (https://www.rfc-editor.org/rfc/rfc4880#section-6.2) and PuTTY's .ppk (its first line, PuTTY-User-Key-File-N:,
# https://the.earth.li/~sgtatham/putty/0.81/htmldoc/AppendixC.html). Looked for in a file's first
# KEY_SNIFF_BYTES, the whole of any file a file tool reads whole (MAX_READ_BYTES): a key need not come first, as
# in a .crt that holds the certificate chain and then its key, an Ansible vars file with a key among its values,
# or openssl's pkcs12 output, which puts its "Bag Attributes" before the armour. And age's secret key,
# whatever file holds it (keys.txt, key.txt): Bech32 with the prefix AGE-SECRET-KEY-1
# (https://github.com/C2SP/C2SP/blob/main/age.md#the-x25519-recipient-type).
# The same keys in the other forms a file holds them in: OpenSSH's body without its armour, which always begins
# with the base64 of its magic "openssh-key-v1\0" (https://github.com/openssh/openssh-portable/blob/master/PROTOCOL.key);
# RFC 4716's armour, four dashes and a space on each side of its BEGIN line
# (https://www.rfc-editor.org/rfc/rfc4716#section-3.2); WireGuard's PrivateKey line, 32 bytes in base64 (man wg).
PRIVATE_KEY = re.compile(rb"-{4,5} ?BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5}|PuTTY-User-Key-File-\d+:|AGE-SECRET-KEY-1[0-9A-Z]{20}"
                         rb"|b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/]{20}|PrivateKey[ \t]*=[ \t]*[A-Za-z0-9+/]{43}=", re.IGNORECASE)
# A JSON Web Key is private when it has the member "d" (RFC 7518 sections 6.2.2.1 and 6.3.2.1,
# https://www.rfc-editor.org/rfc/rfc7518#section-6.2.2.1): a value of 20 base64url characters or more, in an object
# with a "kty".
JWK_PRIVATE = re.compile(rb'"d"\s*:\s*"[A-Za-z0-9_-]{20,}"')
KEY_SNIFF_BYTES = MAX_READ_BYTES  # what one read of the sniff takes: a file tool reads no more of a file than this
# A command reads a file whole, so the sniff reads on past the first MiB, a MiB at a time (a millisecond each, once
# until the file changes), up to KEY_SNIFF_MOST: a GiB costs a second, once; a larger file (a sparse one that only
# says it is large, a disk image) is judged by its first GiB.
KEY_SNIFF_MOST = 1 << 30
KEY_SNIFF_OVERLAP = 512  # a BEGIN line split between two reads is whole in the second (the longest is ~40 bytes)
# What every match of PRIVATE_KEY holds, in lower case: looked for first, since bytes.lower() and a few finds over
# a MiB take a millisecond, and the case-blind expression over the same MiB forty.
KEY_MARKERS = (b"private key", b"putty-user-key-file-", b"age-secret-key-1", b"b3blbnnzac1rzxktdje", b"privatekey")
# A key's armour written another way, which no file holds by chance: URL-encoded (a query string, a form), in hex
# (of "PRIVATE KEY", of "openssh-key-v1"), and in UTF-16, which Windows PowerShell 5's `>` writes
# (https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_character_encoding):
# there each letter has a NUL beside it; decoded, the text is judged as any other.
# Each made here rather than written out, so that this file holds none of them.
ENCODED_KEY_MARKERS = tuple(marker.lower().encode() for marker in (
    "PRIVATE KEY-----".replace(" ", "%20"), "PRIVATE KEY-----".replace(" ", "+"),
    "PRIVATE KEY-----".encode().hex(), "openssh-key-v1".encode().hex() + "00"))
UTF16_MARKER = "private key".encode("utf-16-le")


def armoured_private_key(data: bytes) -> bool:
    """Whether ``data`` holds a private key in one of PRIVATE_KEY's text forms, a JSON Web Key's private member,
    or either written URL-encoded, in hex or in UTF-16."""
    lowered = data.lower()
    found = [at for at in (lowered.find(marker) for marker in KEY_MARKERS) if at >= 0]
    # From a little before the first marker: the expression need not walk the MiB before it (a BEGIN line's words
    # before PRIVATE KEY, RSA, ENCRYPTED, OPENSSH, are a few characters, far fewer than the margin).
    if found and PRIVATE_KEY.search(data, max(0, min(found) - 256)):
        return True
    if b'"kty"' in lowered and JWK_PRIVATE.search(data):
        return True
    if any(marker in lowered for marker in ENCODED_KEY_MARKERS):
        return True
    return UTF16_MARKER in lowered and any(PRIVATE_KEY.search(data[start:].decode(encoding, "ignore").encode("utf-8"))
                                           for encoding in ("utf-16-le", "utf-16-be") for start in (0, 1))


# A private key in DER, binary and unarmoured (server.der, key.p8), is one ASN.1 SEQUENCE that fills the file and
# whose first element is its version, an INTEGER: 0 for PKCS#1's RSAPrivateKey (https://www.rfc-editor.org/rfc/rfc8017#appendix-A.1.2,
# 1 when it has more than two primes), PKCS#8's PrivateKeyInfo (https://www.rfc-editor.org/rfc/rfc5208#section-5)
# and OpenSSL's DSA key; 1 for SEC1's ECPrivateKey (https://www.rfc-editor.org/rfc/rfc5915#section-3) and RFC 5958's
# OneAsymmetricKey; 3 for a PKCS#12 store (https://www.rfc-editor.org/rfc/rfc7292#section-4). An encrypted PKCS#8
# key (https://www.rfc-editor.org/rfc/rfc5208#section-6) is a SEQUENCE of an algorithm's SEQUENCE, which starts
# with its OBJECT IDENTIFIER, and an OCTET STRING. A certificate (https://www.rfc-editor.org/rfc/rfc5280#section-4.1)
# is a SEQUENCE whose first element is a SEQUENCE that starts with a [0] version or an INTEGER serial: readable.
DER_KEY_VERSIONS = (0, 1, 3)


def _der_header(data: bytes, at: int) -> tuple[int, int, int] | None:
    """(tag, where its content starts, its length) of the DER element at ``at``; None if it is not one."""
    if at + 2 > len(data):
        return None
    tag, first = data[at], data[at + 1]
    if first < 0x80:
        return tag, at + 2, first
    count = first & 0x7F
    if not 1 <= count <= 4 or at + 2 + count > len(data):
        return None
    return tag, at + 2 + count, int.from_bytes(data[at + 2:at + 2 + count], "big")


def der_private_key(data: bytes, size: int) -> bool:
    """Whether a file of ``size`` bytes that starts with ``data`` is a private key in DER: one SEQUENCE that is
    the whole file, whose first element is INTEGER 0, 1 or 3 followed by more, or an algorithm's SEQUENCE
    (starting with an OBJECT IDENTIFIER) followed by an OCTET STRING (an encrypted PKCS#8 key)."""
    outer = _der_header(data, 0)
    if outer is None or outer[0] != 0x30 or outer[1] + outer[2] != size:
        return False
    first = _der_header(data, outer[1])
    if first is None:
        return False
    tag, start, length = first
    if tag == 0x02:  # INTEGER: the version, then the key's fields
        return length == 1 and start < len(data) and data[start] in DER_KEY_VERSIONS and start + 1 < outer[1] + outer[2]
    if tag == 0x30 and start < len(data) and data[start] == 0x06:  # an AlgorithmIdentifier, then the encrypted key
        following = _der_header(data, start + length)
        return following is not None and following[0] == 0x04
    return False
# Where a walk does not look into files: trees of many files that tools write, where no one keeps a key
# (a package manager's, Python's bytecode, git's objects, which are compressed).
KEY_SNIFF_SKIPPED = frozenset({"node_modules", "site-packages", "dist-packages", "__pycache__", "objects"})
_key_sniffed: dict[tuple[int, int, int, int, int], bool] = {}


def key_sniffed(relative: str) -> bool:
    """Whether a walk looks into a file (its path relative to the workspace) for a private key: not in a
    KEY_SNIFF_SKIPPED tree (a folder named objects only inside .git). Text, not Path.parts: asked of every file."""
    folders = relative.split("/")[:-1]
    return not (KEY_SNIFF_SKIPPED.intersection(folders)
                and any(part != "objects" or ".git" in folders[:index] for index, part in enumerate(folders)
                        if part in KEY_SNIFF_SKIPPED))


def holds_private_key(path: Path, found: os.stat_result | None = None) -> bool:
    """Whether ``path`` is a regular file (links followed) that holds a private key (in its first KEY_SNIFF_MOST).
    Remembered by (device, inode, size, last change of content and of the inode): a gate asks it of every
    file of the workspace before each call, and reads each file once until it changes. ``found``: its
    stat, when the caller has it."""
    try:
        found = found or os.stat(path)
    except (OSError, ValueError):
        return False
    if not stat.S_ISREG(found.st_mode):
        return False
    key = (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)
    held = _key_sniffed.get(key)
    if held is None:
        try:
            with open(path, "rb") as opened:
                first = opened.read(KEY_SNIFF_BYTES)
                held = der_private_key(first, found.st_size) or _armoured_key_read(opened, first)
        except OSError:
            return False  # unreadable to the harness: a command, run as the same user, cannot read it either
        if len(_key_sniffed) > 200_000:  # bounded: a workspace rewritten many times over in one process
            _key_sniffed.clear()
        _key_sniffed[key] = held
    return held


def _armoured_key_read(opened, first: bytes) -> bool:
    """Whether ``first``, or what follows it in ``opened`` (up to KEY_SNIFF_MOST), holds an armoured private key."""
    piece, read = first, len(first)
    while True:
        if armoured_private_key(piece):
            return True
        if len(piece) < KEY_SNIFF_BYTES or read >= KEY_SNIFF_MOST:
            return False
        more = opened.read(KEY_SNIFF_BYTES)
        if not more:
            return False
        piece, read = piece[-KEY_SNIFF_OVERLAP:] + more, read + len(more)


KEY_HELD = "holds a private key: it is a secret whatever its name"


def files_held(root: Path, path: Path) -> Iterator[Path]:
    """The regular files beneath ``path`` when it is a folder (or a link to a folder inside ``root``):
    what a folder the rules hide whole holds, remembered before a command moves the folder elsewhere."""
    folder = Path(os.path.realpath(path))
    if not os.path.isdir(folder) or not (folder == path or folder.is_relative_to(root) and folder != root):
        return
    yield from (file for file, is_file in entries_under(folder) if is_file)


def _another_name_of_a_secret(path: Path, secrets: set, known: set, relative: str) -> bool:
    """A file of the walk (a regular file, not a link) that is a secret under another name: a second name
    of a file (a hard link, perhaps of one outside the workspace), a secret this run saw, moved here, or a
    private key (``relative``: its path in the workspace, for key_sniffed()). One lstat for all three."""
    try:
        found = os.lstat(path)
    except OSError:
        return False
    return (found.st_nlink > 1 or (found.st_dev, found.st_ino) in secrets
            or (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns) in known
            or key_sniffed(relative) and holds_private_key(path, found))


# What covered_files() last found in each workspace (the gate asks it before every call): names that a
# tool's hint must not list, such as the nearest names to a path that does not exist.
_last_covered: dict[str, list[Path]] = {}


def nearest_names(workspace: Path, path: str, count: int = 3) -> list[str]:
    """The names in the workspace closest to ``path`` (for a not-found hint), none of them a file the
    rules hide nor one of the harness's own files: a hint naming `.env.production` tells what exists."""
    root = Path(os.path.realpath(workspace))
    kept = [*_last_covered.get(str(root), []), *inside(root, harness_files())]
    names = [shown(str(entry.relative_to(root))) for entry, _ in entries_under(root)
             if not any(entry == other or entry.is_relative_to(other) for other in kept)]
    return difflib.get_close_matches(path, names, n=count, cutoff=0.5)


def shown(name: str) -> str:
    """A file name as text the model can be sent (bytes that are not UTF-8 as \\xNN)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


GLOB_CHARACTERS = re.compile(r"[*?\[]")


@functools.lru_cache(maxsize=64)
def _one_expression(patterns: tuple[str, ...]):
    """(names fitted whole, endings, one expression for the rest). Most deny globs are a name, or "*/" and
    a name: for those, fnmatch's match is the path itself, or the path's ending "/NAME", which a set and
    str.endswith find at once; one expression with hundreds of ".*" alternatives takes time that grows
    with the path's length times their number, asked of every entry of a walk."""
    lowered = [pattern.lower() for pattern in patterns]
    whole = frozenset(pattern for pattern in lowered if not GLOB_CHARACTERS.search(pattern))
    endings = tuple(pattern[1:] for pattern in lowered
                    if pattern.startswith("*/") and not GLOB_CHARACTERS.search(pattern[2:]))
    rest = [pattern for pattern in lowered if pattern not in whole and pattern[1:] not in endings]
    expression = re.compile("|".join(f"(?:{fnmatch.translate(pattern)})" for pattern in rest) or "(?!)")
    return whole, endings, expression


def any_glob(patterns: Sequence[str]) -> Callable[[str], bool]:
    """Whether a path fits any of the globs, without regard to case, as a deny rule fits it
    (Rule.covers with folders=False), as fnmatch would: a walk of the workspace asks it of every entry."""
    whole, endings, expression = _one_expression(tuple(patterns))

    def fits(path: str) -> bool:
        path = path.lower()
        return path in whole or path.endswith(endings) or expression.match(path) is not None
    return fits


def links_of(path: Path) -> int:
    try:
        return os.lstat(path).st_nlink
    except OSError:
        return 1


def inode_of(path: Path) -> tuple[int, int] | None:
    """(device, inode) of a regular file, links followed; None for anything else or nothing."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return (found.st_dev, found.st_ino) if stat.S_ISREG(found.st_mode) else None


# ---------------------------------------------------------------- a command's words as paths

def paths_named_by(workspace: Path, word: str) -> list[str]:
    """A word of a command as a path: as written (normalised; an option's value after '='), and where
    it leads inside the workspace, links followed. For deny rules: `cat env-link` reads .env."""
    if not word or "\x00" in word:
        return []
    written = os.path.normpath(word.partition("=")[2] or word) if word.startswith("-") else os.path.normpath(word)
    paths = [written]
    try:
        resolved = Path(os.path.realpath(workspace / written))
        root = Path(os.path.realpath(workspace))
        if resolved.is_relative_to(root) and resolved != root:
            paths += [str(resolved.relative_to(root))] if str(resolved.relative_to(root)) != written else []
    except (OSError, ValueError):
        pass
    return paths


def operand_problem(workspace: Path, path: str, covered: Callable[[str], bool], secrets: frozenset = frozenset()) -> str:
    """Why a command's path operand may not be read without a person: it leads out (links followed),
    ``covered`` says a deny rule covers it, it is the same file as one of ``secrets`` (inodes), or it
    is there and is neither a regular file nor a folder (a fifo, a socket, a device: `head -c 40 disk`)."""
    if path == "-":
        return ""
    if len(path) > MAX_PATH_CHARS or path.count("/") >= MAX_PATH_DEPTH:
        # As the file tools refuse it: each folder of a path is tried against the rules, so a chain of
        # thousands of names would cost seconds to decide, and no workspace task needs one.
        return (f"{path!r} is {path.count('/') + 1} names deep (a command's paths are read without a person "
                f"up to {MAX_PATH_DEPTH} names and {MAX_PATH_CHARS} characters)")
    resolved = Path(os.path.realpath(workspace / path))
    root = Path(os.path.realpath(workspace))
    if not resolved.is_relative_to(root):
        return f"{path!r} leads outside the workspace"
    relative = str(resolved.relative_to(root))
    if covered(relative):
        return f"{path!r} is {relative!r}, which a deny rule covers"
    if in_a_harness_folder(relative):  # read_file refuses them too (harness_problem)
        return (f"{path!r} is one of the harness's own files (its transcripts and logs, in any {HARNESS_FOLDER}/ "
                "folder): they are hidden from every tool")
    store = git_store_problem(workspace, [relative])
    if store:
        return store
    if holds_private_key(resolved):
        return f"{path!r} {KEY_HELD}"
    if secrets and inode_of(resolved) in secrets:
        how = "a hard link" if links_of(resolved) > 1 else "a secret this run saw, moved or renamed since"
        return f"{path!r} is a file the rules hide under another name ({how})"
    try:
        mode = os.stat(resolved).st_mode
    except (OSError, ValueError):
        return ""  # nothing there (yet): the program says so
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # a fifo blocks the loop, a device may never end or be a disk
        return f"{path!r} is not a regular file or a folder (a named pipe, a socket or a device): a person decides"
    return ""


def folders_holding_secrets(workspace: Path, words: Sequence[str], hidden: Sequence[Path],
                            named: dict[str, list[str]] | None = None) -> list[str]:
    """For a person asked about a command: each of its words that names a folder holding files the rules hide
    (``hidden``), such as `.config` holding `.config/gh/hosts.yml`. Moved, copied or archived, they lie out
    from under the names the rules know; this run keeps hiding a file it saw, but a later run reads it.
    ``named``: each word's paths, as paths_named_by() read them already (a 4 KB command's words, read twice,
    cost twice)."""
    if not hidden:
        return []
    root = Path(os.path.realpath(workspace))
    secrets = [Path(os.path.realpath(path)) for path in hidden]
    said = []
    for word in dict.fromkeys(words):
        for path in (named[word] if named and word in named else paths_named_by(workspace, word))[-1:]:  # links followed
            folder = Path(os.path.realpath(workspace / path))
            beneath = [secret for secret in secrets if secret.is_relative_to(folder) and secret != folder]
            if folder.is_relative_to(root) and beneath and os.path.isdir(folder):
                names = ", ".join(shown(str(secret.relative_to(root))) for secret in beneath[:2])
                more = f" and {len(beneath) - 2} more" if len(beneath) > 2 else ""
                said.append(f"{shown(word)!r} holds files the rules hide ({names}{more}): moved or copied, they "
                            "are out from under the names the rules know, and a later run reads them")
    return said


# ---------------------------------------------------------------- secret files

# The usual names of secret files: s06's default rules deny them to every tool, at any depth (a folder of
# that name with everything beneath it). Claude Code's settings page denies Read(./.env), Read(./.env.*) and
# Read(./secrets/**) in its example (https://code.claude.com/docs/en/settings); the rest are where tools keep
# credentials, as each documents.
SECRETS = (
    ".env", ".env.*",                                       # dotenv, and .env.local, .env.production...
    "*.pem", "*.key", "*.p12", "*.pfx", "secrets",          # private keys, certificate stores
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".ssh",   # OpenSSH's keys (man ssh-keygen)
    ".aws",              # https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html
    ".azure", ".config/gcloud", ".kube",  # the Azure, Google Cloud and Kubernetes command lines' logins
    ".docker",           # config.json: registry logins (https://docs.docker.com/reference/cli/docker/login/)
    ".npmrc",            # registry tokens (https://docs.npmjs.com/cli/v10/configuring-npm/npmrc)
    ".pypirc",           # PyPI tokens (https://packaging.python.org/en/latest/specifications/pypirc/)
    ".netrc",            # logins for curl, git and ftp (man 5 netrc)
    ".git-credentials",  # git's credential store (https://git-scm.com/docs/git-credential-store)
    ".gnupg",            # GnuPG's private keys
    ".env~", "#.env#", ".envrc",  # an editor's backup of .env; direnv's file, which holds exported tokens
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "deploy_key", "deploy_key.*",  # a key under a suffix: id_rsa.old
    ".config/gh",        # hosts.yml: GitHub CLI's token (https://cli.github.com/manual/gh_auth_login)
    ".pgpass",           # PostgreSQL passwords (https://www.postgresql.org/docs/current/libpq-pgpass.html)
    ".cargo/credentials.toml", ".cargo/credentials",  # https://doc.rust-lang.org/cargo/reference/config.html#credentials
    ".streamlit/secrets.toml",  # https://docs.streamlit.io/develop/concepts/connections/secrets-management
    "credentials.json",  # Google's OAuth client secrets and service account keys, as their guides name them
    ".terraform.d",      # credentials.tfrc.json: Terraform's API tokens (https://developer.hashicorp.com/terraform/cli/config/config-file)
    ".yarnrc.yml",       # npmAuthToken (https://yarnpkg.com/configuration/yarnrc)
    ".env-*", ".env_*",  # dotenv spelled with a dash or an underscore: .env-local, .env_prod
    # A repository's own config: actions/checkout keeps the job's token in it as an extraheader, and a remote
    # URL may hold one (https://github.com/actions/checkout#usage, persist-credentials). git itself reads it.
    ".git/config", ".git/modules/*/config",
    ".terraformrc", "terraform.rc",  # credentials blocks (https://developer.hashicorp.com/terraform/cli/config/config-file)
    "*.tfstate", "*.tfstate.backup",  # plain-text secrets (https://developer.hashicorp.com/terraform/language/state/sensitive-data)
    ".vault-token",      # Vault's token helper (https://developer.hashicorp.com/vault/docs/commands/token-helper)
    ".s3cfg",            # s3cmd's keys (https://s3tools.org/usage)
    ".boto",             # boto's and gsutil's keys (https://cloud.google.com/storage/docs/boto-gsutil)
    ".gem/credentials",  # RubyGems' API key (https://guides.rubygems.org/command-reference/#gem-signin)
    ".databrickscfg",    # Databricks' tokens (https://docs.databricks.com/aws/en/dev-tools/auth/config-profiles)
    ".config/rclone",    # rclone.conf: every remote's keys (https://rclone.org/docs/#config-config-file)
    ".m2/settings.xml", ".m2/settings-security.xml",  # Maven's server passwords (https://maven.apache.org/settings.html#servers)
    ".config/hub",       # hub's oauth_token (https://hub.github.com/hub.1.html, CONFIGURATION)
    ".kaggle",           # kaggle.json: the API key (https://github.com/Kaggle/kaggle-api#api-credentials)
    # Hugging Face's token (https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables#hftokenpath)
    ".cache/huggingface/token", ".huggingface/token",
    "auth.json",         # Composer's tokens (https://getcomposer.org/doc/articles/authentication-for-private-packages.md)
    # Secrets files by their common names: Home Assistant's and ESPHome's secrets.yaml
    # (https://www.home-assistant.io/docs/configuration/secrets/), and the same in YAML's other ending and JSON.
    "secrets.yaml", "secrets.yml", "secrets.json",
    ".my.cnf",           # MySQL's client password (https://dev.mysql.com/doc/refman/8.0/en/option-files.html)
    ".dockercfg",        # Docker's older registry logins (https://docs.docker.com/reference/cli/docker/login/)
    "client_secret*.json",  # Google's OAuth client as it is downloaded (https://developers.google.com/identity/protocols/oauth2)
    "*.tfvars",          # Terraform's variables, often passwords (https://developer.hashicorp.com/terraform/language/values/variables)
    ".gradle/gradle.properties",  # repository passwords (https://docs.gradle.org/current/userguide/build_environment.html)
    ".git/config.worktree",  # a worktree's config holds what .git/config may (https://git-scm.com/docs/git-worktree)
    ".config/doctl",     # DigitalOcean's token in config.yaml (https://docs.digitalocean.com/reference/doctl/)
    ".config/ngrok", ".ngrok2",  # ngrok's authtoken (https://ngrok.com/docs/agent/config/)
    ".oci",              # Oracle Cloud's API key and config (https://docs.oracle.com/en-us/iaas/Content/API/Concepts/sdkconfig.htm)
    ".sentryclirc",      # sentry-cli's auth token (https://docs.sentry.io/cli/configuration/)
    # Shells' and REPLs' histories: a token typed on a command line (export TOKEN=..., mysql -pSECRET) stays in them.
    ".bash_history", ".zsh_history", ".python_history", ".psql_history", ".mysql_history",
    ".node_repl_history", ".sqlite_history", ".irb_history", ".rediscli_history",  # node, sqlite3, irb, redis-cli
    "*.ppk",             # PuTTY's private keys (https://the.earth.li/~sgtatham/putty/0.81/htmldoc/Chapter8.html)
    "AuthKey_*.p8",      # Apple's API keys as downloaded (https://developer.apple.com/documentation/appstoreconnectapi/creating-api-keys-for-app-store-connect-api)
    "token.json",        # the OAuth token Google's quickstarts save (https://developers.google.com/workspace/drive/api/quickstart/python)
    # Firebase's and Google Cloud's service account keys as their guides name them
    # (https://firebase.google.com/docs/admin/setup#initialize_the_sdk_in_non-google_environments)
    "serviceAccountKey.json", "*-service-account*.json", "service-account*.json",
    "wg*.conf",          # WireGuard's private keys (man wg-quick: /etc/wireguard/wg0.conf)
    "*.ovpn",            # OpenVPN's profiles, keys inline (https://openvpn.net/community-resources/reference-manual-for-openvpn-2-6/)
    ".htpasswd",         # Apache's password hashes (https://httpd.apache.org/docs/current/programs/htpasswd.html)
    "*.keystore", "*.jks",  # Java's and Android's signing keys (https://developer.android.com/studio/publish/app-signing)
    ".password-store",   # pass, the password manager (https://www.passwordstore.org/)
    ".local/share/keyrings",  # GNOME Keyring's stores (https://wiki.gnome.org/Projects/GnomeKeyring)
    # Docker Compose's env_file, dotenv by another ending: deploy/prod.env
    # (https://docs.docker.com/compose/how-tos/environment-variables/set-environment-variables/#use-the-env_file-attribute)
    "*.env",
    "_netrc",            # .netrc as curl and git name it on Windows (https://everything.curl.dev/usingcurl/netrc.html)
    ".dev.vars", ".dev.vars.*",  # Wrangler's local secrets (https://developers.cloudflare.com/workers/configuration/secrets/#local-development-with-secrets)
    "local.settings.json",  # Azure Functions' connection strings (https://learn.microsoft.com/en-us/azure/azure-functions/functions-develop-local#local-settings-file)
    # A kubeconfig outside .kube, as KUBECONFIG names one (https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/)
    "kubeconfig", "*.kubeconfig",
    # A site's or a project's own secrets by the names their frameworks give them: WordPress's database password and
    # salts (https://developer.wordpress.org/advanced-administration/wordpress/wp-config/), cookiecutter-django's
    # per-environment dotenv files under .envs/ (https://cookiecutter-django.readthedocs.io/en/latest/2-local-development/developing-locally-docker.html),
    # Google Cloud's application default credentials wherever GOOGLE_APPLICATION_CREDENTIALS points
    # (https://cloud.google.com/docs/authentication/application-default-credentials).
    "wp-config.php", ".envs", "application_default_credentials.json",
    # Older tools' and mail clients' saved passwords, as each documents: Subversion's credential cache
    # (https://svnbook.red-bean.com/en/1.7/svn.serverconfig.netmodel.html#svn.serverconfig.netmodel.credcache), CVS's
    # (https://www.gnu.org/software/trans-coord/manual/cvs/html_node/Password-authentication-client.html), a CIFS
    # mount's credentials file (man mount.cifs), fetchmail's and msmtp's (man fetchmail, https://marlam.de/msmtp/msmtp.html),
    # Pidgin's accounts (https://developer.pidgin.im/wiki/PlainTextPasswords); a browser's cookies exported for curl
    # or yt-dlp (https://curl.se/docs/http-cookies.html); the token Google's older quickstarts pickle.
    ".subversion/auth", ".cvspass", ".smbcredentials", ".fetchmailrc", ".msmtprc", ".config/msmtp",
    ".purple/accounts.xml", "cookies.txt", "token.pickle",
    # Configs that hold a password where a project puts one: pip's index URL with a user and a token
    # (https://pip.pypa.io/en/stable/topics/authentication/), Mercurial's [auth] section
    # (https://www.mercurial-scm.org/doc/hgrc.5.html#auth), git's own config, whose URLs and credential sections
    # may (hidden from a command only when it holds one: plain_git_config()).
    "pip.conf", "pip.ini", ".hgrc", ".config/hg/hgrc", ".gitconfig", ".config/git/config",
    # More command lines' and desktop tools' logins, each where its tool documents it: CircleCI's CLI token
    # (https://circleci-public.github.io/circleci-cli/), FileZilla's saved sites (https://wiki.filezilla-project.org/Config_Files),
    # cloudflared's tunnel credentials (https://developers.cloudflare.com/cloudflare-one/connections/connect-networks/),
    # acme.sh's DNS API keys (https://github.com/acmesh-official/acme.sh/wiki/dnsapi), Twilio's CLI profiles
    # (https://www.twilio.com/docs/twilio-cli/general-usage/profiles), DVC's local remote credentials
    # (https://dvc.org/doc/command-reference/config), a VNC password (man vncpasswd), Helm's registry logins
    # (https://helm.sh/docs/helm/helm_registry_login/), Rails' master key (https://guides.rubyonrails.org/security.html#custom-credentials).
    ".circleci/cli.yml", ".config/filezilla", ".cloudflared", ".acme.sh", ".config/twilio-cli", ".dvc/config.local",
    ".vnc/passwd", ".config/helm/registry", "config/master.key", "config/credentials/*.key",
    # The same secrets by the other names their tools take: .authinfo, netrc's format for Emacs and git's netrc
    # helper (https://www.gnu.org/software/emacs/manual/html_mono/auth.html), git's http.cookieFile
    # (https://git-scm.com/docs/git-config#Documentation/git-config.txt-httpcookieFile), Terraform's variables as JSON
    # (https://developer.hashicorp.com/terraform/language/values/variables#variable-definitions-tfvars-files),
    # rclone's and ngrok's configs wherever --config puts them, unixODBC's and mbsync's passwords (man odbc.ini,
    # man mbsync), cqlsh's (https://cassandra.apache.org/doc/latest/cassandra/managing/tools/cqlsh.html).
    ".authinfo", ".gitcookies", "*.tfvars.json", "rclone.conf", "ngrok.yml", ".odbc.ini", ".mbsyncrc", ".cassandra/cqlshrc",
    # AWS's shared credentials file wherever AWS_SHARED_CREDENTIALS_FILE puts it, and the same format other
    # tools keep under that name (https://docs.aws.amazon.com/sdkref/latest/guide/file-location.html)
    "credentials",
    ".config/sops/age",  # age's keys for SOPS, keys.txt (https://github.com/getsops/sops#encrypting-using-age)
    ".config/solana/id.json",  # Solana's default keypair (https://docs.solanalabs.com/cli/wallets/file-system)
    # Agents' own logins: Claude Code's OAuth token on Linux (~/.claude/.credentials.json, mode 600:
    # https://github.com/rsnodgrass/claude-code-auth),
    # Gemini CLI's cached OAuth token (https://github.com/google-gemini/gemini-cli/pull/1122), Copilot's
    # oauth_token in apps.json and hosts.json (https://github.com/CopilotC-Nvim/CopilotChat.nvim/issues/326).
    ".claude/.credentials.json", ".gemini/oauth_creds.json", ".config/github-copilot",
    # Claude Code's ~/.claude.json: the account, and the servers `claude mcp add --env KEY=...` wrote with their keys
    # (https://code.claude.com/docs/en/mcp, local and user scopes).
    ".claude.json",
    ".config/hcloud/cli.toml",  # Hetzner Cloud's tokens (https://github.com/hetznercloud/cli/blob/main/docs/reference/manual/hcloud_config.md)
    ".config/glab-cli/config.yml",  # GitLab CLI's token (https://manpages.debian.org/unstable/glab/glab-config-set.1.en.html)
    ".mc/config.json",   # MinIO client's access and secret keys (https://min.io/docs/minio/linux/reference/minio-mc/mc-alias-set.html)
    ".dbt/profiles.yml",  # dbt's warehouse passwords (https://docs.getdbt.com/docs/configure-your-profile)
    # sbt's and Ivy's repository passwords (https://www.scala-sbt.org/1.x/docs/Publishing.html#Credentials)
    ".sbt/.credentials", ".ivy2/.credentials",
    ".bundle/config",    # Bundler's gem source logins, BUNDLE_<HOST> (https://bundler.io/man/bundle-config.1.html)
    ".passwd-s3fs",      # s3fs's keys (https://manpages.ubuntu.com/manpages/jammy/man1/s3fs.1.html, AUTHENTICATION)
    ".snowflake/connections.toml",  # Snowflake's passwords (https://docs.snowflake.com/en/developer-guide/snowflake-cli/connecting/configure-connections)
    ".local/share/atuin/key",  # atuin's sync encryption key (https://docs.atuin.sh/configuration/config/#key_path)
    ".aliyun/config.json",  # Alibaba Cloud's AccessKey secrets (https://www.alibabacloud.com/help/en/cli/configure-credentials)
    ".config/scw/config.yaml",  # Scaleway's secret_key (https://www.scaleway.com/en/developers/cli/config)
    # NuGet's user config, with a feed's ClearTextPassword (https://learn.microsoft.com/en-us/nuget/reference/cli-reference/cli-ref-sources)
    ".nuget/NuGet/NuGet.Config", ".config/NuGet/NuGet.Config",
    # Netlify CLI's token, and the older netlifyctl's (https://github.com/netlify/netlify-credential-helper/pull/32)
    ".netlify/config.json", ".config/netlify",
    # Wrangler's OAuth token, at its legacy and XDG places (https://github.com/cloudflare/workers-sdk/issues/526)
    ".wrangler/config/default.toml", ".config/.wrangler/config",
    # firebase-tools' login (https://github.com/firebase/firebase-tools/issues/181)
    ".config/configstore/firebase-tools.json",
    # Firefox's saved logins, the key that decrypts them, and its cookies, in each profile under ~/.mozilla/firefox
    # (https://support.mozilla.org/en-US/kb/profiles-where-firefox-stores-user-data)
    ".mozilla/firefox/*/logins.json", ".mozilla/firefox/*/key4.db", ".mozilla/firefox/*/cookies.sqlite",
    # Chrome's and Chromium's saved logins and cookies, in each profile (Default, Profile 1...) of their user data
    # folder (https://chromium.googlesource.com/chromium/src/+/main/docs/user_data_dir.md; the files' names and Cookies'
    # move to Network/: https://github.com/moonD4rk/HackBrowserData/blob/main/rfcs/002-chromium-data-storage.md).
    *(f".config/{browser}/*/{name}" for browser in ("google-chrome", "chromium")
      for name in ("Login Data", "Cookies", "Network/Cookies")),
    # Brave's, the same files under its own user data folder, .config/BraveSoftware/Brave-Browser (and -Beta, -Dev,
    # -Nightly: https://github.com/brave/brave-browser/issues/80).
    *(f".config/BraveSoftware/Brave-Browser*/*/{name}" for name in ("Login Data", "Cookies", "Network/Cookies")),
    # Thunderbird's profiles hold the same logins.json, key4.db and cookies.sqlite as Firefox's
    # (https://support.gen.uk/kb/faq.php?id=383: ~/.thunderbird/PROFILE, saved passwords;
    # http://kb.mozillazine.org/Files_and_folders_in_the_profile_-_Thunderbird: key4.db).
    ".thunderbird/*/logins.json", ".thunderbird/*/key4.db", ".thunderbird/*/cookies.sqlite",
    # Slack's desktop app keeps the session cookie its token needs in its Cookies database
    # (https://github.com/rneatherway/gh-slack/issues/15: ~/.config/Slack/Cookies; Network/Cookies in newer Electron:
    # https://github.com/trustedsec/CS-Remote-OPs-BOF/pull/30).
    ".config/Slack/Cookies", ".config/Slack/Network/Cookies",
    # Signal Desktop's database, and config.json, which holds its key in clear
    # (https://github.com/signalapp/Signal-Desktop/issues/5097).
    ".config/Signal/config.json", ".config/Signal/sql",
    "*.kdbx",            # KeePass's password databases (https://keepass.info/help/kb/kdbx.html)
    "*.p8",              # a PKCS#8 private key (https://iana.org/assignments/media-types/application/pkcs8: File extension .p8)
    # Command lines' tokens: the Supabase CLI's, in the home folder when no keyring is there
    # (https://github.com/supabase/cli/pull/702); Helm's repositories' passwords, at Helm 3's place and Helm 2's
    # (https://www.devopsschool.com/blog/helm-lab-2-helm-installation-configuration/: HELM_REPOSITORY_CONFIG;
    # https://github.com/helm/helm/issues/3092: the password in repositories.yaml).
    ".supabase/access-token", ".config/helm/repositories.yaml", ".helm/repository/repositories.yaml",
    # Terraform's timestamped state backups, terraform.tfstate.1700000000.backup, plain-text secrets as the state is
    # (https://developer.hashicorp.com/terraform/language/state/sensitive-data).
    "*.tfstate.*.backup",
    # More shells' histories: ksh's and the POSIX shell's default HISTFILE
    # (https://www.ibm.com/docs/en/aix/7.3.0?topic=commands-korn-shell-posix-shell-command-history), BusyBox ash's
    # (https://github.com/b3nj5m1n/xdg-ninja/issues/283), the ~/.histfile zsh's new-user wizard sets
    # (https://unix.stackexchange.com/questions/111718/command-history-in-zsh), fish's in its data folder
    # (https://github.com/fish-shell/fish-shell/issues/1669).
    ".sh_history", ".ash_history", ".histfile", ".local/share/fish/fish_history",
    # flyctl's config.yml, in ~/.fly, holds its access_token (https://github.com/superfly/flyctl/blob/master/internal/config/config.go)
    ".fly/config.yml",
    # act's secrets for a workflow run locally, read from .secrets unless --secret-file names another
    # (https://github.com/nektos/act/blob/master/cmd/root.go); dynaconf's `init` writes the secrets beside settings
    # as .secrets.toml, or .secrets.yaml and the rest by the format asked, and ignores .secrets.* in git
    # (https://github.com/dynaconf/dynaconf#readme).
    ".secrets", ".secrets.*",
    # Ansible's vault password, in the file its guide names (https://github.com/ansible/ansible-documentation/blob/devel/docs/docsite/rst/vault_guide/vault_using_encrypted_content.rst)
    ".vault_pass.txt",
    # A Kerberos keytab holds a principal's keys: whoever reads it is that principal
    # (https://docs.oracle.com/cd/E19082-01/819-3321/aadmin-10/index.html; http://web.mit.edu/kerberos/krb5-latest/doc/basic/keytab_def.html).
    "*.keytab",
    # GnuPG before 2.1 kept the private keys in secring.gpg, which 2.1 migrates from
    # (GnuPG's g10/migrate.c, https://gitverse.ru/githubmirror/gnupg2/content/master/g10/migrate.c); a copy of it
    # outside .gnupg is the same secret.
    "secring.gpg",
    ".wakatime.cfg",     # WakaTime's api_key (https://github.com/wakatime/wakatime-cli/blob/develop/USAGE.md)
    # OpenStack's clouds.yaml, read from the current folder, ~/.config/openstack and /etc/openstack, holds each
    # cloud's password (https://docs.openstack.org/openstacksdk/zed/user/guides/connect_from_config.html).
    "clouds.yaml",
    # Stripe's CLI keeps its login, the API keys, in ~/.config/stripe/config.toml (https://docs.stripe.com/cli/login.md).
    ".config/stripe",
    # Poetry keeps http-basic credentials and PyPI tokens in auth.toml of its config folder when no keyring is there
    # (github.com/python-poetry/poetry, src/poetry/config/config.py: Config.create's auth config source).
    ".config/pypoetry/auth.toml",
    # MySQL's login path file: user, password and host, obfuscated, not encrypted
    # (https://dev.mysql.com/doc/refman/8.0/en/mysql-config-editor.html).
    ".mylogin.cnf",
    # Cachix's `cachix authtoken` stores the token in ~/.config/cachix/cachix.dhall (https://docs.cachix.org/cli).
    ".config/cachix",
)

# An editor's or a tool's copy of a secret keeps what it holds under another name: Emacs's NAME~ and #NAME#
# (https://www.gnu.org/software/emacs/manual/html_node/emacs/Backup-Names.html), Vim's .NAME.swp
# (https://vimhelp.org/recover.txt.html), nano's NAME.save (man nano), and the .bak, .old and .orig that
# people, patch and merge tools leave. Made from every name of SECRETS with no glob and one part.
BACKUP_COPIES = ("{}~", "{}.bak", "{}.old", "{}.orig", "{}.swp", ".{}.swp", "#{}#", "{}.save")
SECRETS += tuple(dict.fromkeys(copy.format(name) for name in SECRETS if not GLOB_CHARACTERS.search(name)
                               and "/" not in name for copy in BACKUP_COPIES  # one a glob already covers is left out
                               if not any(fnmatch.fnmatchcase(copy.format(name), glob) for glob in SECRETS)))
SECRET_GLOBS = tuple(glob for name in SECRETS for glob in (name, f"*/{name}"))  # each name at the top and at any depth


def secret_name(path: str) -> bool:
    """Whether a path (relative to the workspace; a path alone, not its folders) has a secret's name, without
    regard to case: its last part is one of SECRETS, or a name of several parts ends there."""
    return _secret_parts(path.lower().strip("/"), last_only=True)


def secret_covers(path: str) -> bool:
    """Whether a path or a folder it lies in has a secret's name (a rule on .env covers .env/production and
    config/.env/keys). Each part is compared once, and a name of several parts only where its first part is:
    the cost grows with the path's length, never with its square (a 2,000-deep path, each folder tried whole
    against every glob, took over a second)."""
    return _secret_parts(path.lower().strip("/"), last_only=False)


def _secret_parts(lowered: str, *, last_only: bool) -> bool:
    parts = lowered.split("/")
    one_part, firsts, anywhere, at_end = _secret_matcher()
    if one_part(parts[-1]) if last_only else any(map(one_part, set(parts))):
        return True
    if firsts.isdisjoint(parts):  # no name of several parts starts anywhere here: the usual answer, at once
        return False
    return (at_end if last_only else anywhere).search(lowered) is not None


@functools.lru_cache(maxsize=1)
def _secret_matcher() -> tuple[Callable[[str], bool], frozenset[str], re.Pattern, re.Pattern]:
    """(one part's test, the first parts of the names of several parts, one expression for those anywhere
    and one for those at the path's end). A piece
    "*" of a name stands for one folder or more (.git/modules/a/modules/b/config is a nested submodule's);
    any other glob character stays within one part."""
    lowered = [name.lower() for name in SECRETS]
    one = any_glob(tuple(name for name in lowered if "/" not in name))
    several = [name.split("/") for name in lowered if "/" in name]

    def piece(glob: str) -> str:
        if glob == "*":
            return "[^/]+(?:/[^/]+)*"
        return "".join("[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char) for char in glob)
    names = "(?:^|(?<=/))(?:" + "|".join("/".join(map(piece, pieces)) for pieces in several) + ")"
    return (functools.lru_cache(maxsize=4096)(one), frozenset(pieces[0] for pieces in several),
            re.compile(names + "(?=/|$)"), re.compile(names + r"\Z"))


def secret_glob(path: str) -> str:
    """The secret's name a path has (for the reason shown), or ""."""
    lowered = path.lower()
    return next((name for name in SECRETS if any(fnmatch.fnmatchcase(lowered, glob.lower()) for glob in (name, f"*/{name}"))), "")


# ---------------------------------------------------------------- paths other programs run: written, they are code

# Workspace paths whose content another program runs, or obeys, without being asked: written by the model,
# they are code that runs later, as the user, outside every confinement (the user's next `git status`,
# which shell prompts and editors run on their own, runs a core.fsmonitor that .git/config names). A
# file the user runs on purpose (a test, a Makefile) is not one of them: running it is the user's
# own command; so is a conftest.py, which pytest loads only where it collects tests the user asked it to run
# (https://docs.pytest.org/en/stable/reference/fixtures.html#conftest-py-sharing-fixtures-across-multiple-files),
# and so are pytest.ini, a justfile, a noxfile.py and the build files (setup.py, a Makefile), which run only
# when the user runs pytest, just, nox or the build.
# A GNUmakefile or a makefile is not: GNU make reads it before the Makefile the user knows
# (https://www.gnu.org/software/make/manual/html_node/Makefile-Names.html), so a new one silently replaces
# what `make` does. A build.rs is the user's own command too: cargo runs it as part of the build asked for,
# as make runs a Makefile. rust-analyzer runs it as well when an editor opens the project (its
# cargo.buildScripts.enable is on by default, https://rust-analyzer.github.io/book/configuration), with the
# crate's procedural macros, as an editor's test explorer imports a conftest.py; no name would cover that,
# since Cargo.toml's `build` names any file as the build script and a procedural macro is any file of its
# crate: a project's own code is the user's to read, whatever runs it. Each name counts at any depth, and
# for everything beneath it when it is a folder; a name of several parts (.config/git), for those parts in a row.
# Codex CLI keeps .git, .agents and .codex read-only inside its writable roots, creating them included
# (github.com/openai/codex, codex-rs/protocol/src/permissions.rs: PROTECTED_METADATA_PATH_NAMES);
# Claude Code's sandbox refuses writes to .git, .vscode, .idea and the shell and git startup files
# (github.com/anthropic-experimental/sandbox-runtime, src/sandbox/sandbox-utils.ts: DANGEROUS_FILES,
# DANGEROUS_DIRECTORIES). The rest are named in each program's own documentation.
RUN_LATER = {
    ".git": "git runs what its metadata names (hooks, core.fsmonitor, a commondir's config) at the next git "
            "status, which shell prompts and editors run on their own",
    "HEAD": "git takes a folder holding HEAD, objects/ and refs/ for a repository of its own (a bare one), whose "
            "config (core.worktree, core.fsmonitor) the next git status there obeys",
    ".gitconfig": "git reads it as the user's own config when the workspace is a home folder",
    ".gitmodules": "git clones what it names on a recursive clone or a submodule update",
    ".hg": "Mercurial runs the hooks its .hg/hgrc names",
    ".jj": "Jujutsu reads its repository config from it",
    ".vscode": "VS Code runs its tasks (runOn: folderOpen) and the programs its settings name",
    ".idea": "JetBrains IDEs run the run configurations and startup tasks it holds",
    ".devcontainer": "editors build and start the container it describes when the folder is opened",
    ".envrc": "direnv runs it on entering the folder",
    ".tool-versions": "asdf and mise pick the program a command name runs from it (a path: version runs any folder)",
    ".mise.toml": "mise runs the hooks and sets the environment it names on entering the folder",
    "mise.toml": "mise runs the hooks and sets the environment it names on entering the folder",
    ".pre-commit-config.yaml": "pre-commit's git hook runs the commands it lists at the next commit",
    ".husky": "husky's git hooks run the scripts in it at the next commit",
    ".claude": "Claude Code runs the hooks and servers its settings name",
    ".mcp.json": "agents start the servers it names",
    ".codex": "Codex CLI reads its config and rules from it",
    ".agents": "agents load skills and rules from it",
    ".bashrc": "bash runs it at every start", ".bash_profile": "bash runs it at every login",
    ".bash_login": "bash runs it at every login", ".profile": "sh runs it at every login",
    ".zshrc": "zsh runs it at every start", ".zshenv": "zsh runs it at every start",
    ".zprofile": "zsh runs it at every login", ".zlogin": "zsh runs it at every login",
    ".ripgreprc": "ripgrep reads options from it, and --pre runs a program",
    ".dir-locals.el": "Emacs evaluates what it sets on opening a file beneath it",
    ".exrc": "vi runs it on start in the folder (exrc)", ".nvim.lua": "Neovim runs it on start in the folder (exrc)",
    "*.pth": "Python's site module runs its import lines at every start of Python, in a site-packages",
    "sitecustomize.py": "Python imports it at every start, from a site-packages",
    "usercustomize.py": "Python imports it at every start, from the user's site-packages",
    "pyvenv.cfg": "its 'home' names the interpreter every start of that virtual environment runs",
    # git's per-user config under $XDG_CONFIG_HOME (https://git-scm.com/docs/git-config#FILES)
    ".config/git": "git reads its config and attributes as the user's own when the workspace is a home folder",
    ".lfsconfig": "git-lfs takes the server it sends files to from it (https://github.com/git-lfs/git-lfs/blob/main/docs/man/git-lfs-config.adoc)",
    ".hgrc": "Mercurial runs the hooks it names when the workspace is a home folder",
    ".pdbrc": "pdb runs its lines as Python on every start in the folder (https://docs.python.org/3/library/pdb.html)",
    "GNUmakefile": "GNU make reads it before the Makefile, so `make` runs it instead",
    "makefile": "GNU make reads it before the Makefile, so `make` runs it instead",
    ".vimrc": "Vim runs it on start in the folder (exrc)", ".nvimrc": "Neovim runs it on start in the folder (exrc)",
    ".dir-locals-2.el": "Emacs evaluates what it sets on opening a file beneath it",
    ".devcontainer.json": "editors build and start the container it describes when the folder is opened "
                          "(https://containers.dev/implementors/spec/)",
    ".mise": "mise reads its config from it on entering the folder",
    "mise.*.toml": "mise runs the hooks and sets the environment it names on entering the folder "
                   "(https://mise.jdx.dev/configuration.html)",
    ".mise.*.toml": "mise runs the hooks and sets the environment it names on entering the folder",
    "mise/config.toml": "mise runs the hooks and sets the environment it names on entering the folder",
    ".config/mise": "mise runs the hooks and sets the environment it names on entering the folder",
    ".config/mise.toml": "mise runs the hooks and sets the environment it names on entering the folder",
    ".cursor": "Cursor runs the hooks and servers its settings name", ".gemini": "Gemini CLI runs the hooks and servers its settings name",
    ".config/fish": "fish runs config.fish and conf.d at every start",
    ".bash_logout": "bash runs it when a login shell ends",
    ".config/systemd": "systemd starts the user units in it (https://www.freedesktop.org/software/systemd/man/latest/systemd.unit.html)",
    ".config/autostart": "the desktop starts what it names at every login (XDG autostart)",
    ".Rprofile": "R runs it at every start in the folder (https://stat.ethz.ch/R-manual/R-devel/library/base/html/Startup.html)",
    ".cargo/config.toml": "cargo runs the programs it names (build.rustc-wrapper) at every build "
                          "(https://doc.rust-lang.org/cargo/reference/config.html)",
    ".cargo/config": "cargo reads it as .cargo/config.toml",
    # Python's installed packages: a project's virtual environment in the workspace. pytest loads every
    # [pytest11] entry point of an installed distribution's entry_points.txt at its start
    # (https://docs.pytest.org/en/stable/how-to/writing_plugins.html#setuptools-entry-points), and site
    # runs the .pth files there; an egg-link or egg-info puts a folder on sys.path.
    "site-packages": "Python imports what is in it, runs its .pth files, and pytest loads the plugins it names",
    "dist-packages": "Python imports what is in it, runs its .pth files, and pytest loads the plugins it names",
    "*.dist-info": "pytest loads the plugins its entry_points.txt names, and pip runs what it installs",
    "*.egg-info": "pytest loads the plugins its entry_points.txt names once it is on sys.path",
    "*.egg-link": "Python puts the folder it names on sys.path (an editable install)",
    # Shells, editors, debuggers and REPLs that run a file of the home folder or the current one at start.
    ".bash_aliases": "bash runs it at every start (Debian's and Ubuntu's .bashrc source it)",
    ".zlogout": "zsh runs it when a login shell ends",
    ".xprofile": "the display manager runs it at every graphical login",
    ".config/environment.d": "systemd sets the environment it names for every user service "
                             "(https://www.freedesktop.org/software/systemd/man/latest/environment.d.html)",
    ".vim": "Vim runs the plugins in it at every start", ".gvimrc": "gVim runs it on start (exrc)",
    ".config/nvim": "Neovim runs its init.lua and plugins at every start",
    ".emacs": "Emacs evaluates it at every start", ".emacs.d": "Emacs evaluates its init.el at every start",
    ".tmux.conf": "tmux runs the commands it holds (run-shell) at every start",
    ".gdbinit": "gdb runs its commands at every start (https://sourceware.org/gdb/current/onlinedocs/gdb.html/Startup.html)",
    ".irbrc": "irb runs it as Ruby at every start", ".pryrc": "pry runs it as Ruby at every start",
    ".octaverc": "Octave runs it at every start in the folder",
    ".ipython": "IPython runs the files in profile_default/startup at every start",
    ".jupyter": "Jupyter runs its jupyter_*_config.py files as Python at every start",
    # Package managers: the config names a program or a hook that the next install runs, or the index it
    # installs from (pip's, conda's), which is code the user then runs.
    ".yarnrc": "yarn runs the program its yarn-path names, instead of itself (https://classic.yarnpkg.com/en/docs/yarnrc)",
    ".yarnrc.yml": "yarn runs the program its yarnPath names, instead of itself (https://yarnpkg.com/configuration/yarnrc)",
    "bunfig.toml": "bun runs the preload scripts it names before every run and test (https://bun.sh/docs/runtime/bunfig)",
    ".pnpmfile.cjs": "pnpm runs its hooks at every install (https://pnpm.io/pnpmfile)",
    "pip.conf": "pip installs from the index it names (https://pip.pypa.io/en/stable/topics/configuration/)",
    ".config/pip": "pip installs from the index its pip.conf names", ".pip": "pip installs from the index its pip.conf names",
    ".condarc": "conda installs from the channels it names (https://docs.conda.io/projects/conda/en/latest/user-guide/configuration/)",
    ".config/hg": "Mercurial runs the hooks its hgrc names",
    # Gradle's own cache lives in a project's .gradle/, which a build writes: only the files it runs are kept.
    ".gradle/init.d": "Gradle runs the scripts in it before every build (https://docs.gradle.org/current/userguide/init_scripts.html)",
    ".gradle/init.gradle": "Gradle runs it before every build", ".gradle/init.gradle.kts": "Gradle runs it before every build",
    ".gradle/gradle.properties": "Gradle starts its JVM with the options it names (org.gradle.jvmargs: a -javaagent)",
    # Other agents and editors, which run the hooks, commands and servers their project config names.
    ".zed": "Zed runs the tasks and language servers its settings name",
    ".roo": "Roo Code loads its rules and starts the servers its mcp.json names",
    ".kiro": "Kiro runs its agent hooks and starts the servers its settings name",
    "opencode.json": "opencode starts the servers and runs the commands it names (https://opencode.ai/docs/config/)",
    ".aider.conf.yml": "aider runs the lint-cmd and test-cmd it names after its edits (https://aider.chat/docs/config/aider_conf.html)",
    ".github/workflows": "GitHub Actions runs them with the repository's secrets at the next push",
    # pyenv's shims run the interpreter it names; a name with '..' in it ran one outside pyenv's versions
    # (CVE-2022-35861, https://nvd.nist.gov/vuln/detail/CVE-2022-35861).
    ".python-version": "pyenv and uv pick the interpreter `python` runs from it",
    ".vault": "Vault runs the program its token_helper names at every login "
              "(https://developer.hashicorp.com/vault/docs/commands/token-helper)",
    # node resolves require() and import by looking in node_modules of the folder and of every folder above
    # (https://nodejs.org/api/modules.html#loading-from-node_modules-folders); npm runs its packages' scripts.
    "node_modules": "node loads a package from it for every require() and import beneath its folder, and npm "
                    "runs its packages' install scripts and bin links",
    # Linters' and type checkers' configs, which editors run on every open and save: settings that are code.
    # pylint reads pylintrc, pylintrc.toml, .pylintrc, .pylintrc.toml in the folder it runs in
    # (https://pylint.readthedocs.io/en/stable/user_guide/usage/run.html#command-line-options), and runs
    # the Python of their init-hook (https://pylint.readthedocs.io/en/stable/user_guide/configuration/all-options.html#init-hook).
    **dict.fromkeys(("pylintrc", ".pylintrc", "pylintrc.toml", ".pylintrc.toml"),
                    "pylint runs the Python its init-hook holds at every run, which editors start on every save"),
    # ESLint runs its config as JavaScript: eslint.config.* since v9, .eslintrc.js and .eslintrc.cjs before
    # (https://eslint.org/docs/latest/use/configure/configuration-files).
    **dict.fromkeys(("eslint.config.js", "eslint.config.mjs", "eslint.config.cjs", "eslint.config.ts",
                     "eslint.config.mts", "eslint.config.cts", ".eslintrc.js", ".eslintrc.cjs"),
                    "ESLint runs it as JavaScript at every run, which editors start on every open and save"),
    # mypy imports the plugins its config names, by module or by path
    # (https://mypy.readthedocs.io/en/stable/extending_mypy.html#configuring-mypy-to-use-plugins).
    **dict.fromkeys(("mypy.ini", ".mypy.ini"),
                    "mypy imports the plugins it names (plugins = x.py) at every run, which editors start on every save"),
    # lefthook's git hooks run the commands of lefthook.yml, merged with lefthook-local.yml, and the scripts
    # of .lefthook/ and .lefthook-local/, in any of its formats (https://lefthook.dev/configuration/).
    **dict.fromkeys((*(f"{dot}lefthook{local}.{ending}" for dot in ("", ".") for local in ("", "-local")
                       for ending in ("[jy]*", "toml")), ".lefthook", ".lefthook-local"),
                    "lefthook's git hooks run the commands it names at the next commit, merge or checkout"),
    "uv.toml": "uv installs from the index it names, and runs the build backends of what it installs "
               "(https://docs.astral.sh/uv/concepts/configuration-files/)",
    ".pdm-python": "pdm runs the interpreter whose path it holds for every command "
                   "(https://pdm-project.org/en/latest/usage/project/)",
    ".rvmrc": "RVM runs it as shell on entering the folder once trusted, and the home folder's at every start "
              "(https://rvm.io/workflow/projects)",
    # readline (bash, Python's REPL, psql...) reads it at every start; a key it binds to a macro types the
    # macro's text, a command and its Enter included, when the key is pressed
    # (https://tiswww.case.edu/php/chet/readline/readline.html#Readline-Init-File-Syntax).
    ".inputrc": "readline binds keys to what it names at every start: a key bound to a macro types a command "
                "and runs it",
    # The other shells' and X's startup files, read when the workspace is a home folder (man tcsh,
    # Startup and shutdown; man ksh and man mksh, ENV; man xinit; man Xsession).
    ".cshrc": "csh and tcsh run it at every start", ".tcshrc": "tcsh runs it at every start",
    ".login": "csh and tcsh run it at every login", ".logout": "csh and tcsh run it when a login shell ends",
    ".kshrc": "ksh runs it at every interactive start", ".mkshrc": "mksh runs it at every interactive start",
    ".xinitrc": "startx runs it to start the session", ".xsession": "the display manager runs it as the session",
    ".xsessionrc": "the X session runs it at every graphical login",
    # The same settings in the project's shared configs: pylint takes [tool.pylint.*] of pyproject.toml and
    # [pylint.*] of setup.cfg and tox.ini (https://pylint.readthedocs.io/en/stable/user_guide/usage/run.html#command-line-options),
    # mypy [tool.mypy] and [mypy] (https://mypy.readthedocs.io/en/stable/config_file.html), flake8 the paths
    # of its [flake8:local-plugins] (https://flake8.pycqa.org/en/latest/user/configuration.html#using-local-plugins).
    # Asked about whole rather than judged by what they hold: each tool reads them its own way (TOML tables, INI
    # sections, keys in any case, continuation lines), another key of another tool loads code, and a command's
    # write would need the same judgement after it; an edit of them is rare enough to put to a person.
    **dict.fromkeys(("pyproject.toml", "setup.cfg", "tox.ini"),
                    "pylint runs its init-hook and load-plugins, mypy its plugins, flake8 its local plugins, "
                    "from it at every run, which editors start on every open and save"),
    # Agents' project folders, whole: each loads code or starts servers from them.
    ".opencode": "opencode loads the plugins in it at every start (https://opencode.ai/docs/plugins/)",
    "opencode.jsonc": "opencode starts the servers and runs the commands it names (https://opencode.ai/docs/config/)",
    ".qwen": "Qwen Code starts the servers its settings.json names "
             "(https://qwenlm.github.io/qwen-code-docs/en/users/features/mcp/)",
    ".amazonq": "Amazon Q starts the servers its mcp.json and default.json name "
                "(https://docs.aws.amazon.com/amazonq/latest/qdeveloper-ug/mcp-ide.html)",
    ".continue": "Continue starts the servers and loads the config it holds (https://docs.continue.dev/customize/deep-dives/mcp)",
    ".windsurf": "Windsurf runs the shell commands its hooks.json names at each step of its agent "
                 "(https://docs.windsurf.com/windsurf/cascade/hooks)",
    # rustup runs the toolchain a path in it names for every cargo and rustc beneath its folder
    # (https://rust-lang.github.io/rustup/overrides.html#the-toolchain-file), which rust-analyzer runs on opening.
    **dict.fromkeys(("rust-toolchain.toml", "rust-toolchain"),
                    "rustup runs the programs of the toolchain it names (path) for every cargo and rustc"),
    # Configs that are JavaScript, or name JavaScript plugins, which editor extensions load on opening and saving:
    # Tailwind's (https://v3.tailwindcss.com/docs/configuration), Prettier's (https://prettier.io/docs/configuration,
    # plugins: https://prettier.io/docs/plugins).
    "tailwind.config.*": "the Tailwind editor extension runs it as JavaScript on opening the folder",
    **dict.fromkeys(("prettier.config.*", ".prettierrc*"),
                    "Prettier runs it as JavaScript, or loads the plugins it names, at every format, which editors run on save"),
    ".perldb": "perl -d runs it as Perl from the folder it starts in (https://perldoc.perl.org/perldebug#Debugger-Customization)",
    ".psqlrc": "psql runs its commands (\\! runs a shell command) at every start "
               "(https://www.postgresql.org/docs/current/app-psql.html#APP-PSQL-FILES)",
    ".screenrc": "screen runs its commands (exec) at every start (man screen)",
    ".bashrc.d": "bash runs the files in it at every start (Fedora's .bashrc sources them)",
    # A home folder's ~/.local/bin comes first on PATH (Debian's and Fedora's .profile put it there,
    # https://www.freedesktop.org/software/systemd/man/latest/file-hierarchy.html): a `git` written there runs for `git`.
    ".local/bin": "the shell runs a program in it for its name, before the system's (it comes first on PATH)",
    # Other CI services' configs, which run as .github/workflows do, with the project's secrets, at the next push.
    ".gitlab-ci.yml": "GitLab CI runs its jobs with the project's CI/CD variables at the next push (https://docs.gitlab.com/ci/yaml/)",
    ".circleci": "CircleCI runs the jobs of its config.yml with the project's secrets at the next push "
                 "(https://circleci.com/docs/configuration-reference/)",
    **dict.fromkeys(("azure-pipelines.yml", "azure-pipelines.yaml"),
                    "Azure Pipelines runs its steps with the pipeline's secrets at the next push "
                    "(https://learn.microsoft.com/en-us/azure/devops/pipelines/yaml-schema/)"),
    "bitbucket-pipelines.yml": "Bitbucket Pipelines runs its scripts with the repository's variables at the next push "
                               "(https://support.atlassian.com/bitbucket-cloud/docs/bitbucket-pipelines-configuration-reference/)",
    "Jenkinsfile": "Jenkins runs its pipeline with the job's credentials at the next push "
                   "(https://www.jenkins.io/doc/book/pipeline/jenkinsfile/)",
    ".travis.yml": "Travis CI runs its scripts with the repository's secrets at the next push "
                   "(https://docs.travis-ci.com/user/customizing-the-build/)",
    ".buildkite": "Buildkite runs the steps of its pipeline.yml with the pipeline's secrets at the next push "
                  "(https://buildkite.com/docs/pipelines/configure/defining-steps)",
    ".drone.yml": "Drone runs its steps with the repository's secrets at the next push (https://docs.drone.io/pipeline/overview/)",
    **dict.fromkeys((".woodpecker.yml", ".woodpecker.yaml", ".woodpecker"),
                    "Woodpecker runs its steps with the repository's secrets at the next push "
                    "(https://woodpecker-ci.org/docs/usage/workflow-syntax)"),
    ".forgejo/workflows": "Forgejo Actions runs them with the repository's secrets at the next push "
                          "(https://forgejo.org/docs/latest/user/actions/)",
    ".gitea/workflows": "Gitea Actions runs them with the repository's secrets at the next push "
                        "(https://docs.gitea.com/usage/actions/overview)",
    # And the other hosted CI services' configs, run the same way: Google Cloud Build's
    # (https://cloud.google.com/build/docs/build-config-file-schema), Cirrus CI's (https://cirrus-ci.org/guide/writing-tasks/),
    # AppVeyor's (https://www.appveyor.com/docs/appveyor-yml/), AWS CodeBuild's buildspec
    # (https://docs.aws.amazon.com/codebuild/latest/userguide/build-spec-ref.html), Semaphore's (https://docs.semaphoreci.com/).
    **dict.fromkeys(("cloudbuild.yaml", "cloudbuild.yml", ".cirrus.yml", ".cirrus.star", "appveyor.yml", ".appveyor.yml",
                     "buildspec.yml", ".semaphore"),
                    "a CI service runs its steps with the project's secrets at the next push"),
    # Where the programs above read the same files under XDG's folders (or their own), when the workspace is a home folder.
    ".config/tmux": "tmux runs the commands of its tmux.conf (run-shell) at every start (man tmux, CONFIGURATION FILES)",
    ".config/gdb": "gdb runs the commands of its gdbinit at every start "
                   "(https://sourceware.org/gdb/current/onlinedocs/gdb.html/Initialization-Files.html)",
    ".config/vim": "Vim runs its vimrc and the plugins in it at every start (https://vimhelp.org/starting.txt.html#xdg-vimrc)",
    ".config/emacs": "Emacs evaluates its init.el and early-init.el at every start "
                     "(https://www.gnu.org/software/emacs/manual/html_node/emacs/Find-Init.html)",
    # Neovim's data folder is on its runtimepath (site/) and holds the plugins managers install (lazy/)
    # (https://neovim.io/doc/user/starting.html#standard-path).
    ".local/share/nvim": "Neovim runs the plugins in it at every start",
    # bash-completion sources ~/.bash_completion, $XDG_CONFIG_HOME/bash_completion and the completions of its user
    # folder (https://github.com/scop/bash-completion#faq); .bash_completion.d is the folder such a file sources.
    **dict.fromkeys((".bash_completion", ".bash_completion.d", ".config/bash_completion", ".local/share/bash-completion"),
                    "bash-completion runs it in every interactive bash"),
    ".julia/config": "Julia runs its startup.jl at every start (https://docs.julialang.org/en/v1/manual/command-line-interface/#Startup-file)",
    ".config/nushell": "Nushell runs its config.nu and env.nu at every start (https://www.nushell.sh/book/configuration.html)",
    # PowerShell on Linux: profiles in ~/.config/powershell, modules (loaded on a command's first use) in
    # ~/.local/share/powershell/Modules (https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_profiles)
    **dict.fromkeys((".config/powershell", ".local/share/powershell"),
                    "PowerShell runs the profiles and loads the modules in it at every start"),
    **dict.fromkeys((".xonshrc", ".config/xonsh"),
                    "xonsh runs it at every start (https://xon.sh/xonshrc.html)"),
    # sqlite3 runs its dot-commands (.shell, .system run a program) at every start; $XDG_CONFIG_HOME/sqlite3/sqliterc
    # since 3.41 (https://sqlite.org/cli.html).
    **dict.fromkeys((".sqliterc", ".config/sqlite3"), "sqlite3 runs its dot-commands (.shell runs a program) at every start"),
    # irb reads $XDG_CONFIG_HOME/irb/irbrc, and irb.rc and _irbrc in the current folder (https://ruby.github.io/irb/Configurations_md.html)
    **dict.fromkeys((".config/irb", "_irbrc", "irb.rc"), "irb runs it as Ruby at every start"),
    ".config/pry": "pry runs its pryrc as Ruby at every start (https://github.com/pry/pry/wiki/Pry-rc)",
    ".config/mypy": "mypy imports the plugins its config names at every run (https://mypy.readthedocs.io/en/stable/config_file.html)",
    # conda's user configs besides ~/.condarc (https://docs.conda.io/projects/conda/en/latest/user-guide/configuration/use-condarc.html#searching-for-condarc)
    **dict.fromkeys((".config/conda", ".conda/condarc"), "conda installs from the channels it names"),
    # direnv runs its direnvrc before every .envrc (https://direnv.net/man/direnv.1.html#files)
    **dict.fromkeys((".config/direnv", ".direnvrc"), "direnv runs it before every .envrc, on entering any folder that has one"),
    ".bunfig.toml": "bun runs the preload scripts it names before every run and test (https://bun.sh/docs/runtime/bunfig)",
    ".config/opencode": "opencode loads the plugins and starts the servers it names at every start (https://opencode.ai/docs/plugins/)",
    ".config/zed": "Zed runs the tasks and language servers its settings name (https://zed.dev/docs/configuring-zed)",
    # Claude Code starts the MCP servers of ~/.claude.json's local and user scopes (https://code.claude.com/docs/en/mcp).
    ".claude.json": "Claude Code starts the servers it names, in every project or in the one it lists them under",
    # R reads .Renviron (whose R_PROFILE_USER names the R file it runs) and .Rprofile in the folder it starts in
    # (https://stat.ethz.ch/R-manual/R-devel/library/base/html/Startup.html).
    ".Renviron": "R sets the environment it names at every start in the folder (R_PROFILE_USER: the code R runs)",
    # What a git hook runs at the next commit: lint-staged's and commitlint's configs, as JavaScript in their
    # .js, .cjs, .mjs forms (https://github.com/lint-staged/lint-staged#configuration,
    # https://commitlint.js.org/reference/configuration.html).
    **dict.fromkeys((".lintstagedrc*", "lint-staged.config.*"),
                    "lint-staged runs the commands it names, and runs it as JavaScript, at the next commit"),
    **dict.fromkeys(("commitlint.config.*", ".commitlintrc*"),
                    "commitlint runs it as JavaScript at the next commit, from its git hook"),
    # What editor extensions load on opening and saving, as ESLint's and Prettier's are: Stylelint's
    # (https://stylelint.io/user-guide/configure/, run by its VS Code extension), the Svelte language server's, which
    # loads svelte.config.js for its preprocessors (https://github.com/sveltejs/language-tools/issues/1683).
    **dict.fromkeys(("stylelint.config.*", ".stylelintrc.js", ".stylelintrc.cjs", ".stylelintrc.mjs"),
                    "Stylelint runs it as JavaScript at every run, which editors start on every open and save"),
    "svelte.config.*": "the Svelte editor extension runs it as JavaScript on opening the folder",
    # Helix starts the language servers a workspace's .helix/languages.toml names (https://docs.helix-editor.com/languages.html).
    ".helix": "Helix starts the language servers its languages.toml names on opening a file beneath it",
    # A VS Code workspace file holds settings and tasks, run on opening it as .vscode's are
    # (https://code.visualstudio.com/docs/editing/workspaces/multi-root-workspaces).
    "*.code-workspace": "VS Code runs its tasks (runOn: folderOpen) and the programs its settings name on opening it",
    ".config/starship.toml": "starship runs its custom modules' commands at every prompt (https://starship.rs/config/#custom-commands)",
    ".config/kitty": "kitty runs the session its kitty.conf names (startup_session: launch a program) at every start "
                     "(https://sw.kovidgoyal.net/kitty/launch/)",
    # Options every curl and wget reads first: where to write what they fetch, what to send (curl's --config and -q,
    # https://curl.se/docs/manpage.html#-K; https://www.gnu.org/software/wget/manual/html_node/Wgetrc-Commands.html).
    ".curlrc": "curl takes options from it at every run: a file it writes or sends, a header it adds",
    ".wgetrc": "wget takes commands from it at every run: where it writes what it fetches",
    # Python's bytecode: `import x` loads __pycache__/x.cpython-3XX.pyc in place of x.py, and a hash-based pyc
    # written UNCHECKED_HASH is never compared with its source (https://docs.python.org/3/library/py_compile.html,
    # PycInvalidationMode; https://peps.python.org/pep-0552/); a NAME.pyc with no NAME.py beside it is imported too.
    "__pycache__": "Python imports the bytecode in it in place of the source beside it (an unchecked hash-based .pyc "
                   "whatever the source says)",
    "*.pyc": "Python imports a .pyc in place of its source, or as the module itself when no source is beside it",
    # When the workspace is a home folder: VS Code's user settings and tasks (~/.config/Code/User,
    # https://www.mintlify.com/Microsoft/vscode/customization/settings), where git.path names the program it runs as
    # git (https://github.com/microsoft/vscode/issues/477); KDE Plasma's pre-startup and logout scripts
    # (https://docs.kde.org/stable5/en/plasma-workspace/kcontrol/autostart/index.html).
    ".config/Code/User": "VS Code runs the programs its user settings name (git.path) and the user tasks in it",
    # VSCodium, VS Code built without Microsoft's branding, keeps the same user data under its own name
    # (https://github.com/VSCodium/vscodium/pull/691).
    ".config/VSCodium/User": "VSCodium runs the programs its user settings name (git.path) and the user tasks in it",
    # Tiling window managers run the exec lines of their config at every start (man 5 sway: the config is a list
    # of commands sway runs on startup; i3's, https://github.com/i3/i3/discussions/4635).
    **dict.fromkeys((".config/i3", ".i3", ".config/sway"),
                    "the window manager runs the programs its config names (exec) at every start"),
    # Which program opens a file of a type when it is double-clicked: mimeapps.list names a desktop entry, whose
    # Exec line is what runs (https://specifications.freedesktop.org/mime-apps/latest-single,
    # https://specifications.freedesktop.org/mime-apps/latest/default).
    **dict.fromkeys((".config/mimeapps.list", ".config/*-mimeapps.list", ".local/share/applications"),
                    "the desktop runs the Exec of the entry it names when a file of that type is opened"),
    ".config/plasma-workspace": "KDE Plasma runs the scripts of its env/ at every login and of its shutdown/ at logout",
    # Matplotlib reads matplotlibrc in the current folder first, then ~/.config/matplotlib/matplotlibrc
    # (https://packtpub.com/en-gr/product/mastering-matplotlib-2x-9781789617696/chapter/heavy-customization-1/section/the-matplotlib-configuration-files-ch01lvl1sec05),
    # and a backend of the form module://name is a module it imports (https://matplotlib.org/3.3.4/api/matplotlib_configuration_api.html).
    **dict.fromkeys(("matplotlibrc", ".config/matplotlib"),
                    "Matplotlib imports the module its backend names (module://NAME) in every script that plots"),
    # flake8's own config file, read like setup.cfg's and tox.ini's sections above: [flake8:local-plugins] imports the
    # modules it names, from the paths it puts on sys.path, at every run
    # (https://flake8.pycqa.org/en/stable/user/configuration.html#using-local-plugins).
    ".flake8": "flake8 imports the local plugins it names at every run, which editors start on every save",
    # Other version-control systems' stores, each holding what runs at the user's next command there. darcs takes
    # default options from _darcs/prefs/defaults (~/.darcs/defaults for the user), posthook and prehook among them,
    # which it runs as shell commands (http://darcs.net/Using/Configuration;
    # https://hackage.haskell.org/package/darcs-2.18.5/docs/src/Darcs.UI.RunHook.html). Pijul runs the programs of
    # .pijul/hooks (https://docs.rs/crate/pijul/0.12.1/source/src/commands/hooks.rs) and keeps there the approval that
    # lets pijul.toml's shared hooks run (https://docs.rs/crate/pijul/1.0.0-beta.22/source/src/commands/hooks.rs).
    # Sapling reads .sl/config as the repository's config, whose [hooks] run as Mercurial's do
    # (github.com/facebook/sapling, eden/scm/tests/test-histedit-fold.t). Bazaar loads every plugin of
    # ~/.bazaar/plugins at start, and hooks are installed by plugins
    # (https://docs.huihoo.com/bazaar/2.5/bzr-ja-html/user-guide/hooks.html).
    **dict.fromkeys(("_darcs", ".darcs"), "darcs runs the posthook and prehook its defaults name at the next darcs command"),
    ".pijul": "Pijul runs its hooks at the next record, and keeps the approval that lets the shared hooks run",
    ".sl": "Sapling runs the hooks its .sl/config names at the next sl command they are set for",
    ".bazaar/plugins": "Bazaar loads the plugins in it, and the hooks they install, at every bzr command",
    # wakatime-cli, which every WakaTime editor plugin runs on every save, runs the command its api_key_vault_cmd names
    # (https://github.com/wakatime/wakatime-cli/blob/develop/USAGE.md); it is a secret too (its api_key).
    ".wakatime.cfg": "wakatime-cli runs the command its api_key_vault_cmd names, at every save an editor's plugin reports",
    # Other agents' project configs, which they run on their own when they open the project, as Claude Code runs
    # .claude's hooks. OpenHands runs .openhands/setup.sh every time it begins working with the repository and the
    # commands of .openhands/hooks.json at its events (https://docs.openhands.dev/openhands/usage/customization/repository.md).
    # Kilo Code loads the servers of .kilocode/mcp.json by itself, and its newer releases those of kilo.json,
    # kilo.jsonc and .kilo/ (https://kilo.ai/docs/automate/mcp/using-in-kilo-code, and its source,
    # github.com/Kilo-Org/kilocode, packages/kilo-docs/pages/automate/mcp/using-in-kilo-code.md). Crush reads
    # .crush.json, then crush.json, then ~/.config/crush/crush.json, whose lsp and mcp entries are programs it starts
    # (github.com/charmbracelet/crush, README.md, Configuration). Copilot's agents load every .github/hooks/*.json
    # and run its commands at session start, before each tool and after
    # (https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference).
    # AGENTS.md and CLAUDE.md are left out: they are instructions a later agent reads, words rather than code that
    # runs, and a project's own documentation the user writes with the agent.
    ".openhands": "OpenHands runs its setup.sh at the start of every session and the commands its hooks.json names",
    **dict.fromkeys((".kilocode", ".kilo", "kilo.json", "kilo.jsonc"), "Kilo Code starts the servers its config names"),
    **dict.fromkeys((".crush.json", "crush.json", ".config/crush"),
                    "Crush starts the language servers and MCP servers it names"),
    ".github/hooks": "Copilot's agents run the commands of its hooks at every session start and around each tool",
    # REPLs that evaluate a file of the folder they start in: GHCi's .ghci
    # (https://downloads.haskell.org/ghc/latest/docs/users_guide/ghci.html#the-ghci-and-haskeline-files), IEx's .iex.exs
    # (https://hexdocs.pm/iex/IEx.html#module-the-iex-exs-file), OCaml's .ocamlinit (https://ocaml.org/manual/toplevel.html),
    # LLDB's .lldbinit (https://lldb.llvm.org/man/lldb.html#configuration-files); Cline's hooks, run around each of its
    # tools (https://docs.cline.bot/customization/hooks).
    ".ghci": "GHCi runs it at every start in the folder", ".iex.exs": "IEx evaluates it at every start in the folder",
    ".ocamlinit": "the OCaml toplevel runs it at every start in the folder", ".lldbinit": "LLDB runs its commands at every start",
    ".clinerules/hooks": "Cline runs the hooks in it around each of its tools",
    # When the workspace is a home folder: what a shell's startup file sources (oh-my-zsh's custom/*.zsh, bash-it's
    # custom/, rustup's .cargo/env, nvm's nvm.sh, fzf's and powerlevel10k's files), terminals' and window managers'
    # configs that name the programs they start (wezterm, alacritty, ghostty; openbox, Hyprland, bspwm, awesome),
    # mail delivery's (a .forward or .procmailrc line that pipes mail to a program: man 5 forward, man procmailrc),
    # mailcap's viewers (RFC 1524), and VS Code's remote server's machine settings.
    **dict.fromkeys((".oh-my-zsh", ".bash_it", ".cargo/env", ".nvm", ".fzf.bash", ".fzf.zsh", ".p10k.zsh"),
                    "the shell's startup file sources it at every start"),
    **dict.fromkeys((".wezterm.lua", ".config/wezterm", ".config/alacritty", ".config/ghostty"),
                    "the terminal runs the program its config names at every start"),
    **dict.fromkeys((".config/openbox", ".config/hypr", ".config/bspwm", ".config/awesome"),
                    "the window manager runs the programs its config names at every start"),
    **dict.fromkeys((".forward", ".procmailrc"), "mail delivery runs the program it pipes mail to"),
    ".mailcap": "mail and file viewers run the program it names for a type of file",
    ".vscode-server": "VS Code's remote server runs the programs its machine settings name",
    # More of what a home folder's shell startup sources, each as its installer writes the line that sources it:
    # SDKMAN (https://sdkman.io/install), zsh's completion dump (man zshcompsys, compinit), powerlevel10k's instant
    # prompt (https://github.com/romkatv/powerlevel10k#instant-prompt), prezto and zim (https://github.com/sorin-ionescu/prezto,
    # https://zimfw.sh/docs/), asdf (https://asdf-vm.com/guide/getting-started.html), ghcup, opam, elan, deno and nix's
    # profile scripts; and programs that come first on PATH from a home folder: pyenv's shims
    # (https://github.com/pyenv/pyenv#understanding-shims), cargo's, bun's, volta's and go's bin folders.
    **dict.fromkeys((".sdkman", ".zcompdump*", ".cache/p10k-instant-prompt-*", ".zprezto", ".zpreztorc", ".zimrc",
                     ".zshrc.local", ".asdf", ".ghcup/env", ".opam/opam-init", ".elan/env", ".deno/env", ".nix-profile",
                     ".pythonrc", ".pythonrc.py", ".python-startup.py", ".envrc.local", ".vimrc.local", ".tmux"),
                    "the shell's or an editor's startup file sources it at every start"),
    **dict.fromkeys((".pyenv", ".cargo/bin", ".bun/bin", ".volta/bin", "go/bin"),
                    "the shell runs a program in it for its name (it comes first on PATH)"),
    # More window managers', launchers' and file managers' configs that run programs at start or on a key
    # (their man pages), a browser's and a REPL's config that is Python (https://qutebrowser.org/doc/help/configuring.html,
    # https://github.com/prompt-toolkit/ptpython#configuration), sshd's per-user rc, run at every login (man sshd,
    # SSHRC), pam_env's environment (man pam_env.conf), Jupyter's kernel specs, whose argv is the program it starts
    # (https://jupyter-client.readthedocs.io/en/latest/kernels.html#kernel-specs), nix's post-build-hook
    # (https://nix.dev/manual/nix/latest/command-ref/conf-file.html), podman's hooks and runtime (man containers.conf),
    # a hooks folder a project points core.hooksPath at (https://git-scm.com/docs/githooks), Theia's folder-open
    # tasks, and VS Code's saved workspaces.
    **dict.fromkeys((".config/autostart-scripts", ".config/niri", ".config/river", ".config/labwc", ".config/qtile",
                     ".config/herbstluftwm", ".xmonad", ".fluxbox", ".config/sxhkd", ".xbindkeysrc", ".config/yazi",
                     ".config/ranger", ".config/lf", ".config/kak", ".config/lazygit", ".config/zellij", ".config/jj",
                     ".config/helix", ".config/qutebrowser", ".config/ptpython"),
                    "it runs the programs its config names at start or on a key"),
    ".ssh/rc": "sshd runs it at every login", ".pam_environment": "PAM sets the environment it names at every login",
    ".local/share/jupyter/kernels": "Jupyter starts the program a kernel spec's argv names",
    ".config/nix": "nix runs the post-build-hook its nix.conf names after every build",
    ".config/containers": "podman runs the hooks and the runtime its containers.conf names",
    ".githooks": "git runs the hooks in it at the next commit, where core.hooksPath names it",
    ".theia": "Theia runs its tasks (runOn: folderOpen) on opening the folder",
    ".config/Code/Workspaces": "VS Code runs the tasks of a saved workspace on opening it",
    # Cloud editors run a project's setup on opening it: Gitpod the init, before and command of .gitpod.yml's tasks,
    # in an image its .gitpod.Dockerfile may build (https://www.gitpod.io/docs/introduction/learn-gitpod/gitpod-yaml);
    # Firebase Studio (once Project IDX) the onCreate and onStart commands of .idx/dev.nix
    # (https://firebase.google.com/docs/studio/customize-workspace); Replit the run, onBoot and packages of .replit
    # and replit.nix (https://docs.replit.com/core-concepts/project-editor/app-setup/configuration); CodeSandbox the setup tasks of
    # .codesandbox/tasks.json (https://codesandbox.io/docs/learn/devboxes/task).
    **dict.fromkeys((".gitpod.yml", ".gitpod.Dockerfile"), "Gitpod runs the commands of its tasks when a workspace opens"),
    ".idx": "Firebase Studio runs the onCreate and onStart commands of its dev.nix when the workspace opens",
    **dict.fromkeys((".replit", "replit.nix"), "Replit runs the commands it names (onBoot, run) when the project opens"),
    ".codesandbox": "CodeSandbox runs the setup tasks of its tasks.json when the project opens",
    # RuboCop loads the Ruby files its require: and plugins: name, and follows inherit_from to other .rubocop files,
    # at every run, which editors start on every save (https://docs.rubocop.org/rubocop/plugins.html).
    **dict.fromkeys((".rubocop.yml", ".rubocop_*.yml", ".rubocop-*.yml"),
                    "RuboCop loads the Ruby its require: and plugins: name at every run, which editors start on every save"),
}
_RUN_LATER_DEPTH = max(name.count("/") + 1 for name in RUN_LATER)  # the most parts one name has


def run_later(relative: str, *, last_only: bool = False) -> str:
    """The name of RUN_LATER that covers a path relative to the workspace (the path itself or a folder
    it lies in, compared without case: on a case-insensitive disk .GIT is .git), or "". A name of
    several parts (.config/git) fits consecutive parts. ``last_only``: only a name that ends at the
    path's last part, for a walk that judged the folders above it on the way down."""
    parts = relative.lower().split("/")
    if last_only and not _run_later_one_part()(parts[-1]) and not any(
            len(pieces) > 1 and fnmatch.fnmatchcase(parts[-1], pieces[-1]) for _, pieces in _run_later_parts()):
        return ""  # one expression for every name, asked of each entry of a walk: the usual answer, fast
    for name, pieces in _run_later_parts():
        ends = [len(parts)] if last_only else range(len(pieces), len(parts) + 1)
        for end in ends:
            window = parts[end - len(pieces):end] if end >= len(pieces) else []
            if window and all(fnmatch.fnmatchcase(part, piece) for part, piece in zip(window, pieces)):
                return name
    return ""


@functools.lru_cache(maxsize=1)
def _run_later_one_part() -> Callable[[str], bool]:
    return any_glob(tuple(pieces[0] for _, pieces in _run_later_parts() if len(pieces) == 1))


@functools.lru_cache(maxsize=1)
def _run_later_parts() -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple((name, tuple(name.lower().split("/"))) for name in RUN_LATER)


# ---------------------------------------------------------------- plain data: the one rule for what is written unasked

# --8<-- [start:plain-data]
# A file tool writes without a person only what this rule calls plain data; anything else asks. A list
# of what runs later never ends (a name nobody listed, `jest.config.js`, `Procfile`, `nodemon.json`, a file
# named `ls`, is still run or obeyed by something); a rule of what is known to be inert does. Plain data is a
# NEW file (overwriting an existing one is destructive: it asks whatever its name):
#   - whose last suffix is one of PLAIN_DATA_SUFFIXES: prose and tables, formats no program takes for its
#     settings by their suffix. JSON is not one of them: most programs that look a file up by name read JSON
#     (package.json, tsconfig.json, nodemon.json, lefthook.json, CMakeUserPresets.json, *.tf.json, a
#     kernel.json), so a suffix says nothing about whether a program reads it as instructions;
#   - whose name has no capital letter: names looked up by convention are capitalised (README, CMakeLists.txt,
#     AGENTS.md, CLAUDE.md, GEMINI.md, Procfile, Brewfile), and a model told so can write report.md instead;
#   - with no part of its path hidden (no leading dot: .git/, .vscode/, .direnv/, .env.txt);
#   - named directly, never through a link or under another name (a hard link's other names too);
#   - not executable, when it exists already;
#   - whose name is not one of LOOKED_UP_DATA_NAMES, nor in a folder of LOOKED_UP_DATA_FOLDERS: what the
#     rule above misses, each with what reads it.
# What the rule misses, and why that is accepted: a program the user runs may be told to read any data
# file (`pip install -r deps.txt`, `xargs sh < list.txt`): that command is the user's, and a command of
# the agent's asks a person; a text an agent later reads as instructions under a lowercase name nobody
# looks up (notes.md) is data to this rule until a person or a program is told to read it.
PLAIN_DATA_SUFFIXES = frozenset({".txt", ".text", ".md", ".markdown", ".rst", ".csv", ".tsv", ".jsonl",
                                 ".ndjson", ".log"})

# Lowercase names with a plain suffix that programs look up on their own and act on: each is asked about.
# Compared without case, as the last part of the path, at any depth (a case-insensitive disk finds CLAUDE.md
# as claude.md). Each entry: what the rule misses, what runs, and its source.
LOOKED_UP_DATA_NAMES = {
    "requirements.txt": "pip installs what it names, from any index or URL it names, running their builds, and "
                        "hosting platforms' builders install it on their own "
                        "(https://pip.pypa.io/en/stable/reference/requirements-file-format/)",
    "constraints.txt": "pip takes it as requirements' pins, an index URL included (https://pip.pypa.io/en/stable/user_guide/#constraints-files)",
    "cmakelists.txt": "CMake runs it as a script at every configure (https://cmake.org/cmake/help/latest/manual/cmake-language.7.html)",
    "agents.md": "coding agents read it as their instructions at the start of every session (https://agents.md/)",
    "claude.md": "Claude Code reads it as its instructions at the start of every session "
                 "(https://docs.anthropic.com/en/docs/claude-code/memory)",
    "gemini.md": "Gemini CLI reads it as its instructions at the start of every session "
                 "(https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/gemini-md.md)",
}

# Folders, by their suffix, whose plain-looking files a program reads to decide what code to run.
LOOKED_UP_DATA_FOLDERS = {
    "dist-info": "an installed package's metadata: its entry_points.txt names the plugins and scripts Python loads "
                 "(https://packaging.python.org/en/latest/specifications/entry-points/)",
    "egg-info": "a package's metadata in the old form: its entry_points.txt names the plugins Python loads "
                "(https://setuptools.pypa.io/en/latest/deprecated/python_eggs.html)",
}
# --8<-- [end:plain-data]
PLAIN_DATA = (f"only plain data ({', '.join(sorted(PLAIN_DATA_SUFFIXES))}; a new file with a lowercase name, outside "
              "hidden folders, not executable, never through a link) is written without a person")


def not_plain_data(root: Path, relative: str, other_names: Sequence[str] = ()) -> str:
    """Why writing ``relative`` (relative to the workspace) is not plain data by the rule above, in words
    the model can act on; "" when it is. ``other_names``: the path's other names (as written through a
    link, a hard link's), each of which makes it no longer plain."""
    if relative in ("", "."):
        return ""
    parts = relative.split("/")
    name = parts[-1]
    suffix = os.path.splitext(name)[1].lower()
    hidden = next((part for part in parts if part.startswith(".")), "")
    looked_up_folder = next((part for part in parts[:-1] if part.rpartition(".")[2].lower() in LOOKED_UP_DATA_FOLDERS
                             and "." in part), "")
    if hidden:
        why = f"{hidden!r} is hidden: hidden files and folders are where programs keep what they run"
    elif suffix not in PLAIN_DATA_SUFFIXES:
        why = f"{name!r} is not plain data ({'no suffix' if not suffix else repr(suffix)})"
    elif name != name.lower():
        why = (f"{name!r} has capital letters, as the names programs and agents look up do (CMakeLists.txt, "
               f"AGENTS.md): name it {name.lower()!r} or another lowercase name")
    elif name.lower() in LOOKED_UP_DATA_NAMES:
        why = f"{name!r} is a name a program looks up: {LOOKED_UP_DATA_NAMES[name.lower()]}"
    elif looked_up_folder:
        why = f"{looked_up_folder!r} is a folder a program looks up: {LOOKED_UP_DATA_FOLDERS[looked_up_folder.rpartition('.')[2].lower()]}"
    elif other_names:
        why = f"the call reaches a file under another name ({other_names[0]!r}: a link or a hard link)"
    elif _executable(root / relative):
        why = f"{relative!r} is executable"
    else:
        return ""
    return f"{why}; {PLAIN_DATA}"


def _executable(path: Path) -> bool:
    try:
        return bool(os.lstat(path).st_mode & 0o111)
    except (OSError, ValueError):
        return False


# ---------------------------------------------------------------- what runs later by what is on disk, whatever its name

# git takes any folder for a repository of its own (a bare one) when it holds a HEAD and, in its common
# folder (the folder itself, or the one its ``commondir`` file names), objects/ and refs/: setup.c's
# is_git_directory (https://github.com/git/git/blob/master/setup.c). git also checks what HEAD holds;
# here any HEAD counts, the stricter reading. Its config and hooks then run at the next git command in
# it, so a bare repository (`git init --bare repo.git`) is protected like .git, whatever its name; so
# is a folder a pointer names: a .git file's ``gitdir:`` or a ``commondir``.
GIT_POINTERS = (".git", "commondir")
GIT_PIECES = ("head", "objects", "refs", "commondir", "config")  # what makes a folder one, and what git obeys in it


def git_directory(folder: Path) -> bool:
    """Whether git would take ``folder`` for a git directory (setup.c's is_git_directory)."""
    if not os.path.lexists(folder / "HEAD"):
        return False
    common = git_pointer(folder / "commondir") if os.path.isfile(folder / "commondir") else None
    return os.path.isdir((common or folder) / "objects") and os.path.isdir((common or folder) / "refs")


# git's store keeps a copy of every file ever committed, compressed with zlib, as an object, a pack or in the
# index's names (https://git-scm.com/book/en/v2/Git-Internals-Git-Objects): a .env.local committed once is
# there, byte for byte, after it was deleted, and `cat -v` shows the compressed bytes reversibly. What the
# rules hide by its name is never hidden there, so nothing reads the store unasked: git's own commands do
# (git show, git log), which are not on the safe list and go to a person, who sees the path they name.
GIT_STORE_INSTEAD = "use git's own commands (git log, git show), which a person approves"


def in_git_store(workspace: Path, relative: str) -> str:
    """The folder of git's own store that a path (resolved, relative to the workspace) is or lies in, relative
    to the workspace: a folder named .git, or one git takes for a repository whatever its name (git_directory():
    repo.git, a separate git dir); "" if none. A .git file (a worktree's pointer) holds a path, not the store."""
    root = Path(os.path.realpath(workspace))
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    for depth in range(1, len(parts) + 1):
        folder = root.joinpath(*parts[:depth])
        if (parts[depth - 1].lower() == ".git" and os.path.isdir(folder)) or git_directory(folder):
            return "/".join(parts[:depth])
    return ""


def git_store_test() -> Callable[[Path], bool]:
    """Whether an absolute path lies in git's own store (a folder above it is named .git or is one git takes
    for a repository), for one walk with no workspace to start from (search_files): each folder's answer
    is kept for the walk, which asks it of every file (an lstat for every folder above each: a search of
    48,000 files took twice as long without)."""
    known: dict[str, bool] = {}

    def lies_in_git_store(path: Path) -> bool:
        folder, passed, found = os.path.dirname(os.fspath(path)), [], False
        while True:
            if folder in known:
                found = known[folder]
                break
            passed.append(folder)
            if os.path.basename(folder).lower() == ".git" or (os.path.lexists(os.path.join(folder, "HEAD"))
                                                               and git_directory(Path(folder))):
                found = True
                break
            above = os.path.dirname(folder)
            if above == folder:
                break
            folder = above
        known.update(dict.fromkeys(passed, found))  # each folder passed lies where the one that answered does
        return found
    return lies_in_git_store


def git_store_problem(workspace: Path, names: Sequence[str]) -> str:
    """Why reading one of ``names`` (relative to the workspace, resolved) goes to a person: it is in git's own
    store (in_git_store()); "" if none is."""
    for name in names:
        store = in_git_store(workspace, name)
        if store:
            return (f"{name!r} is in {store!r}, git's own store, which keeps a copy of every file ever committed "
                    f"(a secret committed once, too): {GIT_STORE_INSTEAD}")
    return ""


# A repository's config may hold a credential: actions/checkout keeps the job's token there as an
# http.<url>.extraheader (https://github.com/actions/checkout#usage, persist-credentials), and a remote
# URL may carry one (https://TOKEN@host/...). The file tools never read a .git/config (a deny rule), but
# git must read it to run at all: one it cannot read is fatal ("unable to access '.git/config'"), so a
# command is kept from it only when it holds something of the kind, and git works in every other repository.
# Something of the kind: an extraheader; a URL with user info (https://TOKEN@host, user:pass@); the words
# password, token, secret, credential, authorization anywhere, values too (a credential helper's script may
# echo one, https://git-scm.com/docs/gitcredentials#_custom_helpers); and a key or a section whose name holds
# "pass" (git send-email's sendemail.smtpPass, https://git-scm.com/docs/git-send-email#_sendemail_configuration),
# where git reads a name: at a line's start or after a section's "]" (`[sendemail] smtpPass = x` is one line),
# in any case (git's names are case-insensitive, https://git-scm.com/docs/git-config#_syntax). A stricter
# reading only hides a config git then cannot read; a looser one gives a command the password.
GIT_CONFIG_CREDENTIAL = re.compile(
    rb"extraheader|://[^/\s@]+@|password|token|secret|credential|authorization"
    rb"|(?:^|\])[ \t]*[a-z0-9-]*pass[a-z0-9-]*[ \t]*(?:=|$)|\[[ \t]*[a-z0-9.-]*pass", re.IGNORECASE | re.MULTILINE)


def plain_git_config(path: Path) -> bool:
    """Whether ``path`` is a repository's config (.git/config, .git/modules/NAME/config) or the user's
    (.gitconfig, .config/git/config) that holds no
    credential (GIT_CONFIG_CREDENTIAL): no extraheader, no URL with user info, no password, token, secret,
    credential or authorization, no key or section whose name holds "pass"."""
    if not (path.name == ".gitconfig" or path.name == "config" and (".git" in path.parts[:-1]
                                                                    or path.parts[-3:-1] == (".config", "git"))):
        return False
    try:
        with open(path, "rb") as opened:
            held = opened.read(MAX_READ_BYTES + 1)
    except OSError:
        return False
    return len(held) <= MAX_READ_BYTES and not GIT_CONFIG_CREDENTIAL.search(held)


# Python puts the folder of the script it runs, or the current folder for `python -m` and `python -c`,
# first on sys.path, before the standard library and site-packages
# (https://docs.python.org/3/library/sys_path_init.html): a json.py there is what `import json` imports.
# Any folder of the workspace may be a script's folder (`python tools/report.py` imports tools/json.py;
# in a copy of the course, s05/json.py runs in the learner's next `python s05/agent.py`, with their API
# key), so a module anywhere in the workspace named like one of the standard library or of the environment
# runs in the user's next Python there. Not only the harness's Python: the user runs the machine's own too
# (`/usr/bin/python3 tools/report.py` imports a tools/distro.py before Debian's distro package), so the
# packages of every system interpreter count as well.
# And a module Python looked for and did not find: httpx tries `import brotli` and goes on without it, so no
# listing shows the name, and a brotli.py beside a script of the workspace is what the user's next
# `python s06/agent.py` imports, with their API key. Every top-level name an import of this process missed
# counts, by construction: a finder placed last on sys.meta_path is asked only when every other finder has
# failed, and it records the name and returns None, so the import fails as before
# (https://docs.python.org/3/reference/import.html#the-meta-path); a finder appended after it (six's) may then find
# a name it recorded, which only makes that name ask too. Importing course.sandbox.paths
# registers nothing (`import course` stays free of side effects): the finder goes in when a rule first asks
# (record_missed_imports()), and a stage imports the SDK before that, so the misses of the SDK's own import
# are named here, each with the line in the dependency that tries it.
SDK_OPTIONAL_IMPORTS = {
    "brotli": "httpx2/_decoders.py and httpx/_decoders.py: `try: import brotli` (Brotli decoding, optional)",
    "brotlicffi": "the same files: `import brotlicffi as brotli`, when brotli is missing",
    "backports": "httpx2/_decoders.py: `from backports.zstd import ZstdDecompressor` (before Python 3.14); "
                 "urllib3/response.py: `from backports import zstd`",
    "zstandard": "httpx/_decoders.py: `import zstandard` (zstd decoding, optional)",
    "aiohttp": "anthropic/_vendor/httpx_aiohttp/transport.py: `import aiohttp` (the SDK's aiohttp extra)",
    "h2": "httpx/_client.py: `import h2` for a client made with http2=True",
    "socksio": "httpx/_transports/default.py: `import socksio` for a SOCKS proxy",
    "trio": "httpcore/_synchronization.py and httpx/_transports/asgi.py: `import trio`",
    "rfc3987": "jsonschema/_format.py: `import rfc3987` for the iri and uri formats",
    "org": "Python 3.11's Lib/copy.py (line 60) and Lib/pickle.py (line 103): `from org.python.core import "
           "PyStringMap`, Jython's",
}


class MissedImports:
    """A finder for the end of sys.meta_path that finds nothing: it records the top-level name of each import
    that every finder before it failed to find (``names``), and returns None."""

    marker = "course.sandbox.paths.MissedImports"  # how a second import of this module (a reload) knows the finder is there

    def __init__(self) -> None:
        self.names: set[str] = set()

    def find_spec(self, name, path=None, target=None):
        if path is None and "." not in name and name.isidentifier():  # a submodule's miss is its package's business
            self.names.add(name)
        return None

    def invalidate_caches(self) -> None:
        pass


def _missed_imports() -> MissedImports:
    for finder in sys.meta_path:
        if getattr(finder, "marker", None) == MissedImports.marker and hasattr(finder, "names"):
            return finder
    finder = MissedImports()
    sys.meta_path.append(finder)
    return finder


MISSED_IMPORTS: MissedImports | None = None  # on sys.meta_path once record_missed_imports() has run


def record_missed_imports() -> MissedImports:
    """Put the recorder last on sys.meta_path, once per process (a reloaded module finds the one there), and
    return it: from then on every top-level import that nothing found is named."""
    global MISSED_IMPORTS
    MISSED_IMPORTS = _missed_imports()
    return MISSED_IMPORTS


def missed_import(name: str) -> bool:
    """Whether ``name`` is a top-level module an import of this process (or of the SDK as it was imported)
    looked for and did not find: a NAME.py of the workspace would be what it imports next time."""
    return name in SDK_OPTIONAL_IMPORTS or name in record_missed_imports().names


@functools.lru_cache(maxsize=1)
def python_module_names() -> frozenset[str]:
    """The top-level modules Python would import from elsewhere: the standard library's
    (sys.stdlib_module_names), those in the environment's site-packages (each NAME.py, NAME.so or
    NAME/ there: what pkgutil.iter_modules lists, and namespace packages too), and those in the
    machine's other Pythons' (SYSTEM_SITE_PACKAGES). Worked out once, from one listing of each folder
    (a few milliseconds; importlib.metadata's packages_distributions() reads every installed
    distribution's metadata, half a second)."""
    import site

    folders = (*site.getsitepackages(), site.getusersitepackages(), *system_site_packages())
    return frozenset(set(sys.stdlib_module_names) | set(sys.builtin_module_names) | _modules_in(folders))


# Where the machine's own interpreters keep their packages, whichever Python runs the harness: Debian's and
# Ubuntu's python3 take /usr/lib/python3/dist-packages and /usr/local/lib/python3.X/dist-packages
# (https://wiki.debian.org/Python#Deviations_from_upstream), other systems and a Python built from source
# lib/python3.X/site-packages under their prefix (https://docs.python.org/3/library/site.html).
SYSTEM_SITE_PACKAGES = ("/usr/lib/python3/dist-packages", "/usr/lib/python3*/site-packages",
                        "/usr/lib/python3*/dist-packages", "/usr/lib64/python3*/site-packages",
                        "/usr/local/lib/python3*/site-packages", "/usr/local/lib/python3*/dist-packages")


def system_site_packages() -> list[str]:
    """The folders of SYSTEM_SITE_PACKAGES that exist on this machine."""
    import glob

    return sorted({folder for pattern in SYSTEM_SITE_PACKAGES for folder in glob.glob(pattern) if os.path.isdir(folder)})


def _modules_in(folders) -> set[str]:
    """The top-level module names a listing of each folder shows: NAME/, NAME.py, NAME.so, ..."""
    names = set()
    for folder in folders:
        try:
            listed = list(os.scandir(folder))
        except OSError:
            continue
        for found in listed:
            name = found.name
            names.add(name if found.is_dir() else next(
                (name[:-len(suffix)] for suffix in _module_suffixes() if name.endswith(suffix)), ""))
    return {name for name in names if name.isidentifier() and name != "__pycache__"}


@functools.lru_cache(maxsize=1)
def _module_suffixes() -> tuple[str, ...]:
    import importlib.machinery

    return tuple(importlib.machinery.all_suffixes())  # .py, .pyc, and the extension modules' .so names


def python_path_folders(root: Path) -> frozenset[Path]:
    """The folders of the workspace a Python started in it imports from first: the workspace itself,
    and those of the harness's sys.path that lie inside it (worked out again when sys.path changes)."""
    return _python_path_folders(root, tuple(sys.path))


@functools.lru_cache(maxsize=16)
def _python_path_folders(root: Path, path: tuple[str, ...]) -> frozenset[Path]:
    resolved = [Path(os.path.realpath(folder)) for folder in path if folder]
    return frozenset({root, *(folder for folder in resolved if folder.is_relative_to(root))})


def shadowed_module(path: Path, folders: frozenset[Path]) -> str:
    """The module a Python would import from ``path`` instead of its own ("" if none): NAME.py (or .pyc,
    .so) or NAME/__init__.py in one of ``folders`` or any folder beneath one (the folder of the script
    Python runs comes first), with NAME a module of python_module_names() or harness_module_names(), or one
    an import of this process missed (missed_import()); or a module anywhere beneath
    NAME/ there when NAME is a namespace package of the environment (a folder with no __init__.py, such
    as opentelemetry/): Python joins the portions of every folder on sys.path in order, so the
    workspace's opentelemetry/trace.py is what `import opentelemetry.trace` imports."""
    name, parent = path.name, path.parent
    stem = next((name[:-len(suffix)] for suffix in _module_suffixes() if name.endswith(suffix)), "")
    if not stem:
        return ""
    top = min((folder for folder in folders if path.is_relative_to(folder)), key=lambda folder: len(folder.parts),
              default=None)
    if top is None:
        return ""
    if stem == "__init__" and parent != top:
        stem, parent = parent.name, parent.parent
        # A package beside a module of the same name is what `import NAME` imports: importlib's FileFinder looks
        # for a folder's package before its NAME.py (https://docs.python.org/3/reference/import.html#regular-packages),
        # so a tools/__init__.py beside tools.py runs in the user's next script that imports tools.
        if (parent / f"{stem}.py").exists():
            return stem
    elif name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)) and (parent / f"{stem}.py").exists():
        return stem  # an extension module comes before source too (importlib.machinery._get_supported_file_loaders)
    # A namespace package's portion: the parts from a folder a script may run from down to the module.
    inner = (*parent.relative_to(top).parts, stem)
    namespaces = namespace_package_names()
    for start, part in enumerate(inner[:-1]):
        if part in namespaces:
            return ".".join(inner[start:])
    if stem in python_module_names() or stem in harness_module_names() or missed_import(stem):
        return stem
    return stem if stem in workspace_environment_module_names(top) else ""


def harness_module_names() -> frozenset[str]:
    """The top-level modules the harness's own Python imports that no listing of site-packages shows: what
    an editable install's finder maps (``__editable___*_finder.py``'s MAPPING: the course's own `course`
    and `s00`..`s06`, https://setuptools.pypa.io/en/latest/userguide/development_mode.html), and every
    top-level name of sys.modules that an import finds (a folder on sys.path, a finder). With the
    course's repository as the workspace, s05/course.py is what `python s05/agent.py` imports instead
    of the course. Worked out again when a module is imported (one len() a call otherwise)."""
    return _harness_module_names(len(sys.modules))


@functools.lru_cache(maxsize=4)
def _harness_module_names(modules: int) -> frozenset[str]:
    import importlib.util

    names: set[str] = set()
    for name, module in list(sys.modules.items()):
        mapping = getattr(module, "MAPPING", None) if name.startswith("__editable__") else None
        if isinstance(mapping, dict):
            names |= {key for key in mapping if isinstance(key, str)}
        if "." in name or name == "__main__" or not name.isidentifier():
            continue
        try:
            if importlib.util.find_spec(name) is not None:
                names.add(name)
        except (ImportError, ValueError, AttributeError):  # a module whose __spec__ is None or odd
            continue
    return frozenset(names)


# A Python environment kept inside the workspace (a project's .venv, venv or env): its site-packages'
# modules are what a script there imports, and a NAME.py of the workspace comes before them.
WORKSPACE_ENVIRONMENTS = (".venv", "venv", "env")


def workspace_environment_module_names(root: Path) -> frozenset[str]:
    """The top-level modules of the Python environments inside the workspace (``.venv``, ``venv``, ``env``:
    each lib/python3*/site-packages), listed again when one of those folders changes (its mtime)."""
    top = str(root)  # joined as text, not as Paths: asked of every module-named entry of a walk
    libs = tuple((lib, _mtime(lib)) for lib in (f"{top}/{name}/lib" for name in WORKSPACE_ENVIRONMENTS))
    stamps = tuple((folder, _mtime(folder)) for folder in _environment_site_packages(libs))
    return _site_packages_names(stamps) if stamps else frozenset()


@functools.lru_cache(maxsize=16)
def _environment_site_packages(libs: tuple[tuple[str, int], ...]) -> tuple[str, ...]:
    folders = []
    for lib, stamp in libs:
        if not stamp:  # none there: the usual case
            continue
        try:
            versions = sorted(found.path for found in os.scandir(lib) if found.name.startswith("python3"))
        except OSError:
            continue
        folders += [os.path.join(version, "site-packages") for version in versions
                    if os.path.isdir(os.path.join(version, "site-packages"))]
    return tuple(folders)


def _mtime(folder: str) -> int:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return 0


@functools.lru_cache(maxsize=16)
def _site_packages_names(stamps: tuple[tuple[str, int], ...]) -> frozenset[str]:
    return frozenset(_modules_in(folder for folder, _ in stamps))  # the stamps: re-listed when a folder changes


@functools.lru_cache(maxsize=1)
def namespace_package_names() -> frozenset[str]:
    """The environment's namespace packages: folders of its site-packages with no __init__ module."""
    import site

    names = set()
    for folder in (*site.getsitepackages(), site.getusersitepackages()):
        try:
            listed = [found for found in os.scandir(folder) if found.is_dir() and found.name.isidentifier()]
        except OSError:
            continue
        names |= {found.name for found in listed if found.name != "__pycache__" and not any(
            os.path.exists(os.path.join(found.path, "__init__" + suffix)) for suffix in _module_suffixes())}
    return frozenset(names)


# A virtual environment is any folder that holds a pyvenv.cfg (https://docs.python.org/3/library/venv.html: "a
# pyvenv.cfg file ... is what makes a directory a virtual environment"), whatever its name. Its bin/ (Scripts\ on
# Windows) holds the activate scripts, which the user's shell sources, and the python every script of the project
# runs with; its lib/ the packages, .pth files and all, that Python imports: the whole folder runs later.
VENV_MARKER = "pyvenv.cfg"
VENV_PIECES = ("pyvenv.cfg", "bin", "Scripts", "lib", "lib64", "include")  # what `python -m venv` makes in it


def virtual_environment(folder: Path | str) -> bool:
    """Whether ``folder`` is a virtual environment: it holds a pyvenv.cfg (a regular file, links not followed).
    One lstat."""
    try:
        return stat.S_ISREG(os.lstat(os.path.join(folder, VENV_MARKER)).st_mode)
    except (OSError, ValueError):
        return False


def runs_later_by_content(workspace: Path, relative: str, pointers: dict[Path, Path] | None = None) -> str:
    """Why what a file tool writes at ``relative`` runs later, judged by what is on disk, not by its name
    ("" if it does not): it lies in a folder git takes for a repository, or that a pointer names; it is
    the piece that would make a folder holding a HEAD one; it is a module Python imports before its own.
    Judged at each write: the HEAD of a repository made one piece at a time is a RUN_LATER name, and
    every other piece beside a HEAD asks, in whatever order they come. ``pointers``: git_pointers()."""
    root = Path(os.path.realpath(workspace))
    path = root / relative
    if relative in ("", "."):
        return ""
    module = shadowed_module(path, python_path_folders(root))
    if module:
        return (f"{relative!r} would be what Python imports as {module!r} in the workspace, before its own "
                "(the folder a script runs from comes first on sys.path)")
    pointers = git_pointers(root) if pointers is None else pointers
    parts = Path(relative).parts
    for depth in range(len(parts)):
        folder = root.joinpath(*parts[:depth])
        shown_folder = "/".join(parts[:depth]) or "the workspace"
        if depth and virtual_environment(folder):  # the workspace itself is the user's project, not one
            return (f"{shown_folder!r} is a virtual environment (it holds a pyvenv.cfg): the user's shell sources its "
                    "bin/activate and every script of the project runs its python and imports its lib/")
        if folder in pointers:
            return (f"{shown_folder!r} is a git directory: {str(pointers[folder].relative_to(root))!r} names it, "
                    "and git takes its config and runs its hooks")
        if git_directory(folder):
            return (f"{shown_folder!r} is a folder git takes for a repository (it holds HEAD, objects/ and refs/): "
                    "git takes its config and runs its hooks at the next git command in it")
        if parts[depth].lower() in GIT_PIECES and os.path.lexists(folder / "HEAD"):
            return (f"{shown_folder!r} holds a HEAD: with {parts[depth]!r} beside it, git takes it for a repository "
                    "and runs what its config names")
    return ""


def git_pointers(root: Path) -> dict[Path, Path]:
    """Every folder a pointer in the workspace names, as {folder: the pointer}: a .git file's gitdir: and a
    commondir's path, resolved. One walk."""
    return _links_and_pointers(root)[1]


def harness_environment() -> list[Path]:
    """The Python that runs the harness, which the model may never change, wherever it is: its prefixes
    (the virtual environment and the interpreter it was made from, with their site-packages, where a
    .pth file runs at every start), the user's site-packages, and the folders its own code was imported
    from (the course, the stage). With ``--workspace .`` in the course's repository they are all inside
    the workspace, and a file written there runs in the harness's own next child process."""
    return list(_harness_environment(len(sys.modules)))  # worked out again when a module is imported


@functools.lru_cache(maxsize=4)
def _harness_environment(modules: int) -> tuple[Path, ...]:
    import site

    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, site.getusersitepackages()}
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str):
            folders.add(os.path.dirname(os.path.abspath(file)))
    return tuple(Path(os.path.realpath(folder)) for folder in folders if folder and folder != "/")


def harness_files() -> list[Path]:
    """The harness's own files, out of every tool's and every command's reach whatever the workspace is:
    the transcripts (a forged one would be resumed), the runs log, the audit log, the transcripts' key."""
    from course.runtime import runlog, transcript

    return [Path(os.path.realpath(path)) for path in
            (transcript.folder(), transcript.key_path(), runlog.log_path(), runlog.audit_path())]


# The folder the harness keeps its transcripts, runs log, audit log in, under the folder it runs from:
# any folder of this name in the workspace is the harness's, whatever folder a later run starts in
# (`python agent.py --resume last` run from s05/ reads s05/runs/transcripts/). A model that writes one
# there forges the run a later resume goes on with.
HARNESS_FOLDER = "runs"


def in_a_harness_folder(relative: str) -> bool:
    """Whether a path relative to the workspace is a folder named HARNESS_FOLDER or lies beneath one."""
    return HARNESS_FOLDER in relative.lower().split("/")


def beneath_any(path: Path, entries: frozenset) -> bool:
    """Whether ``path`` is one of ``entries`` or lies beneath one: a look-up per folder above it, so that a
    workspace of thousands of hidden files (hard links, each a second name) costs no more per file than a few."""
    return path in entries or not entries.isdisjoint(path.parents)


def inside(root: Path, paths: Sequence[Path]) -> list[Path]:
    """Those of ``paths`` that are ``root`` or lie beneath it (the workspace itself never counts)."""
    return [path for path in paths if path != root and path.is_relative_to(root)]


def environment_inside(root: Path) -> list[Path]:
    """The folders of harness_environment() inside ``root``, worked out again when a module is imported."""
    return list(_environment_inside(root, len(sys.modules), harness_environment))


@functools.lru_cache(maxsize=16)
def _environment_inside(root: Path, modules: int, environment) -> tuple[Path, ...]:
    return tuple(inside(root, environment()))


def harness_problem(workspace: Path, names: Sequence[str], writes: bool) -> str:
    """Why one of ``names`` (relative to the workspace, resolved) is out of reach: one of the harness's
    own files (for every tool), or, for a tool that writes, the Python environment that runs it."""
    root = Path(os.path.realpath(workspace))
    files, environment = inside(root, harness_files()), environment_inside(root) if writes else []
    for name in names:
        path = root / name
        if any(path == file or path.is_relative_to(file) for file in files) or in_a_harness_folder(name):
            return (f"{name!r} is one of the harness's own files (its transcripts and logs, in any {HARNESS_FOLDER}/ "
                    "folder): no tool may touch them")
        if any(path == folder or path.is_relative_to(folder) for folder in environment):
            return (f"{name!r} is in the Python environment that runs the harness: it is never written, "
                    "since what is written there runs in the harness itself")
    return ""


def protected_entries(workspace: Path) -> dict[str, tuple[int, int]]:
    """Every entry inside the workspace that must stay as it is while a command runs, as {path: (device,
    inode)} (links not followed): each one RUN_LATER names, at any depth (not looked into: it is kept
    whole), the harness's environment and its own files where they lie inside the workspace, each
    folder git takes for a repository and each folder a pointer names (a .git file's gitdir, a
    commondir), the pieces beside a HEAD that make its folder one (objects, refs, commondir, config),
    each folder named HARNESS_FOLDER (a transcript a command writes there would be resumed), and each module at the top of the workspace that Python would import instead of its own."""
    return _protected(workspace)[0]


def _protected(workspace: Path) -> tuple[dict[str, tuple[int, int]], set[str]]:
    """protected_entries(), and which of them are kept for what they hold rather than for their name
    (a folder git takes for a repository, a folder a pointer names): such a folder may hold the user's
    own files, so the sweep after a command removes only the pieces it made in it, never the folder,
    unless a pointer named it before it was there (``before`` has it, as (0, 0)): then the command made it."""
    root = Path(os.path.realpath(workspace))
    environment = set(environment_inside(root)) | set(inside(root, harness_files()))
    python_folders = python_path_folders(root)
    found: dict[str, tuple[int, int]] = {}
    by_content: set[str] = set()

    def point(pointer: Path) -> None:  # a folder not there yet too, (0, 0): one a command then makes is new
        named = git_pointer(pointer)
        if named is not None and named != root and named.is_relative_to(root):
            found[str(named)] = identity(named)
            by_content.add(str(named))

    # The walk does not go into a kept folder (it is kept whole); git_directory() costs one lstat a folder.
    for path, is_file in entries_under(root, skip=lambda path: str(path) in found):
        tail = "/".join(path.parts[len(root.parts):][-_RUN_LATER_DEPTH:])
        if path in environment or run_later(tail, last_only=True) or path.name.lower() == HARNESS_FOLDER:
            found[str(path)] = identity(path)
            if path.name == ".git" and is_file:
                point(path)
        elif not is_file and virtual_environment(path):
            # Kept whole, read-only; known by what it holds, as a repository is: a pyvenv.cfg a command writes into a
            # folder of the user's files does not make the sweep remove the folder, only the pieces the command made.
            found[str(path)] = identity(path)
            by_content.add(str(path))
            for piece in VENV_PIECES:
                if os.path.lexists(path / piece):
                    found[str(path / piece)] = identity(path / piece)
        elif not is_file and git_directory(path):
            found[str(path)] = identity(path)
            by_content.add(str(path))
            for piece in ("HEAD", "objects", "refs", "commondir", "config"):
                if os.path.lexists(path / piece):
                    found[str(path / piece)] = identity(path / piece)
            if os.path.isfile(path / "commondir"):
                point(path / "commondir")
        elif path.name.lower() in GIT_PIECES and os.path.lexists(path.parent / "HEAD"):
            found[str(path)] = identity(path)  # beside a HEAD: the piece that would make its folder a repository
        elif shadowed_module(path, python_folders):
            found[str(path)] = identity(path)
        if is_file and path.name == "commondir":
            point(path)
    for folder in environment:
        if os.path.lexists(folder):
            found[str(folder)] = identity(folder)
    return found, by_content


def git_pointer(path: Path) -> Path | None:
    """Where a .git file (``gitdir: PATH``, a worktree's or a submodule's) or a git directory's
    ``commondir`` (a plain path, whose config and hooks git uses) points, resolved; None if it does not."""
    try:
        with open(path, encoding="utf-8", errors="replace") as opened:
            line = opened.read(4096).partition("\n")[0]
    except OSError:
        return None
    if path.name == "commondir":
        return Path(os.path.realpath(path.parent / line.strip())) if line.strip() else None
    if not line.startswith("gitdir:"):
        return None
    return Path(os.path.realpath(path.parent / line.partition(":")[2].strip()))


def identity(path: Path) -> tuple[int, int]:
    try:
        found = os.lstat(path)
    except OSError:
        return (0, 0)
    return (found.st_dev, found.st_ino)


def read_only_mounts(workspace: Path, entries: dict[str, tuple[int, int]]) -> list[str]:
    """What a confined command gets read-only: each protected entry that exists, links resolved, if it
    lies inside the workspace (outside it, nothing is writable anyway); outermost first, each once."""
    root = Path(os.path.realpath(workspace))
    targets = sorted({os.path.realpath(path) for path in entries if os.path.exists(path)}, key=len)
    return [target for target in targets if Path(target) != root and Path(target).is_relative_to(root)]


def remove_new_protected(workspace: Path, before: dict[str, tuple[int, int]]) -> list[str]:
    """After a command (every process of it ended): remove each protected entry it created or replaced,
    which the kernel could not stop since it did not exist yet (a read-only mount needs an entry to
    cover); return their paths, relative to the workspace. An entry is known by its device and inode,
    never by its path: `mv sub sub2` moves sub/.git with it, and the user's repository is not new.
    What it names was tried, not surely removed: a second call with the same ``before`` names what
    is still there (course.sandbox.confinement.run_confined makes it, and fails closed)."""
    root = Path(os.path.realpath(workspace))
    removed, known = [], set(before.values())
    entries, by_content = _protected(workspace)
    for path, found in entries.items():
        # There before, perhaps under another name (a folder above it was renamed); or a folder that what
        # it holds made one, which may hold the user's files too: only the pieces the command made go.
        if found in known or (path in by_content and path not in before):
            continue
        entry = Path(path)
        # No recursion (shutil.rmtree recurses per level: a chain 1,200 deep in a new .git raised
        # RecursionError, which stopped this loop and left every later entry in place), no link
        # followed, and nothing raises: the caller walks again to see what is still there.
        remove_tree(entry)
        removed.append(str(entry.relative_to(root)) if entry.is_relative_to(root) else str(entry))
    return removed
