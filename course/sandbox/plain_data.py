"""What a file tool writes without a person: plain data, by one rule (allow what is known to be inert, ask about
the rest), with the few names the rule misses in a table of their own."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence


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
