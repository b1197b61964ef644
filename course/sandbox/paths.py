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
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from course.runtime.trees import PATH_MAX, entries_under, remove_tree  # noqa: F401  (PATH_MAX: asked for here too)
# The rules' tables and what is found on disk live in modules of their own; the gate, the confinement and the
# tests ask for them here too (course.sandbox.paths.RUN_LATER, .not_plain_data, .secret_name).
from course.sandbox.globs import (  # noqa: F401
    any_glob,
)
from course.sandbox.secret_names import (  # noqa: F401
    SECRETS, SECRET_GLOBS, secret_covers, secret_glob, secret_name,
)
from course.sandbox.run_later_names import (  # noqa: F401
    RUN_LATER, _RUN_LATER_DEPTH, run_later,
)
from course.sandbox.plain_data import (  # noqa: F401
    LOOKED_UP_DATA_NAMES, PLAIN_DATA_SUFFIXES, not_plain_data,
)
from course.sandbox.on_disk import (  # noqa: F401
    GIT_PIECES, HARNESS_FOLDER, MissedImports, VENV_PIECES, _links_and_pointers, _modules_in,
    beneath_any, environment_inside, git_directory, git_pointer, git_store_problem, git_store_test,
    harness_environment, harness_files, harness_module_names, harness_problem, in_a_harness_folder, inside,
    links_inside, namespace_package_names, plain_git_config, python_module_names, python_path_folders,
    runs_later_by_content, shadowed_module, system_site_packages, virtual_environment,
)

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
    if not os.path.lexists(resolved):
        return ""  # nothing there (yet): the program says so; what is not there holds nothing to read
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
