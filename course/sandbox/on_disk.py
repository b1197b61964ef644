"""What runs later by what is on disk, whatever its name: a folder git takes for a repository, a module Python
would import instead of its own, a virtual environment, the harness's own files; and the links and pointers
of a workspace, found in one walk."""

from __future__ import annotations

import importlib.machinery
import functools
import os
import re
import stat
import sys
from pathlib import Path
from typing import Callable, Sequence

from course.runtime.trees import entries_under

CONFIG_READ_BYTES = 1 << 20  # the most of a git config read to see whether it holds a credential


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
            held = opened.read(CONFIG_READ_BYTES + 1)
    except OSError:
        return False
    return len(held) <= CONFIG_READ_BYTES and not GIT_CONFIG_CREDENTIAL.search(held)


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
