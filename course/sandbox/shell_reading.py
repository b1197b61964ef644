"""Reading a command with the shell's own grammar, for s06's gate: what a stage uses, not what it builds.

A gate that reads command text with shlex and regular expressions loses to the shell, which reads it
with its grammar, its startup files and the file system. So a command is read in three steps, each a
function of its own, the shape of Codex CLI's safe-command check (codex-rs/core/src/bash.rs:
tree-sitter-bash, then only plain words joined by && || ; |):

    parse(command)    -> a syntax tree, from tree-sitter-bash (the grammar, not a guess)
    classify(tree)    -> Reading: is it plain? its commands (words), every program anywhere in the tree
    read(...)         -> Command: the reading, its words as paths, and whether it is safe without a person

Only a *plain* command can be safe without a person: words (and quoted strings) joined by &&, ||,
; and |, with no expansion (a glob is one), substitution, redirection, assignment, here-document,
subshell, function, control structure, background & or parse error; every program on the safe list
with the options it may take; every path argument resolving, links followed, inside the workspace and
outside every deny rule. The stage's rules and its person decide the rest (s06/permissions.py).

Run ``python -m course.sandbox.shell_reading --bench`` to time the parser, ``python -m course.sandbox.shell_reading
'ls -l' 'echo $HOME'`` to see what it reads.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import os
import re
import shlex
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal, Sequence

import tree_sitter
import tree_sitter_bash

import course
import course.sandbox.isolated
import course.sandbox.paths


# ---------------------------------------------------------------- the safe list, with the options each may take

# --8<-- [start:safe-list]
@dataclass(frozen=True)
class Program:
    """A program the gate may allow alone, and exactly the options it may take. An option not listed
    is not safe: a safe grep has no -r (it would read .env), a safe tail no -f (it would never end),
    a safe wc no --files0-from (it would read the names of other files from a file)."""

    flags: str = ""                          # short options without a value, e.g. "la" for ls -l -a
    numbers: str = ""                        # short options whose value is a number: head -n 5, -n5
    texts: str = ""                          # short options whose value is any text: grep -e WORD
    long: frozenset = frozenset()            # long options without a value
    operands: Literal["paths", "pattern then paths", "text", "none"] = "paths"
    plus_is_option: bool = False             # an operand starting with + is an option: GNU tail's obsolete `+1f`


SAFE_PROGRAMS = {
    "ls": Program(flags="1aAlhtrSdFpi", long=frozenset({"--all", "--almost-all", "--human-readable"})),
    "cat": Program(flags="nbsAETv"),
    "wc": Program(flags="lwcmL", long=frozenset({"--lines", "--words", "--bytes", "--chars"})),
    "grep": Program(flags="ivwxcnlLhHoqsFE", numbers="mABC", texts="e", operands="pattern then paths",
                    long=frozenset({"--ignore-case", "--count", "--line-number", "--fixed-strings"})),
    "head": Program(flags="qv", numbers="nc", plus_is_option=True),  # `tail +1f FILE`, `tail +f FILE` follow:
    "tail": Program(flags="qv", numbers="nc", plus_is_option=True),  # GNU reads a leading + operand as options
    "echo": Program(flags="n", operands="text"),
    "pwd": Program(flags="LP", operands="none"),
}
NUMBER = re.compile(r"\+?\d{1,9}")

# The safe list in words, for the command tool's description and a refusal's hint: written once, here.
SAFE_LIST = ", ".join(SAFE_PROGRAMS)

# Programs that run another program, named in their arguments, from stdin, or from a string they parse.
# They are never allowed without a person, and deny rules look inside them.
WRAPPERS = {"env", "xargs", "nice", "ionice", "timeout", "nohup", "stdbuf", "setsid", "command", "builtin",
            "exec", "eval", "busybox", "time", "sudo", "doas", "su", "chroot", "unshare", "flock", "watch",
            "script", "strace", "ltrace", "find", "parallel", "sh", "bash", "dash", "zsh", "ksh", "mksh",
            "fish", "csh", "tcsh", "source", ".", "trap", "perl", "python", "python3", "ruby", "node", "awk",
            "sed", "ssh"}
# --8<-- [end:safe-list]


# ---------------------------------------------------------------- step 1: parse

# --8<-- [start:parse]
BASH = tree_sitter.Language(tree_sitter_bash.language())
PARSER = tree_sitter.Parser(BASH)


def parse(command: str) -> tree_sitter.Tree:
    """The command's syntax tree, read with the bash grammar. Never fails: what the grammar cannot
    read becomes ERROR or MISSING nodes, and a tree with those is never plain."""
    return PARSER.parse(command.encode("utf-8"))


def read_command(command: str) -> "Reading":
    """parse, then classify, in a child process (course.sandbox.isolated). tree-sitter-bash is C, and it
    crashed (a segmentation fault) on a few generated strings in this course's property tests: a
    crash must end a child, not the agent's run. A command the child could not read is not plain,
    and every word in it may be a program or a path, so that deny rules still apply."""
    try:
        return course.sandbox.isolated.call(read_here, command)
    except course.sandbox.isolated.ChildCrashed:
        return Reading(plain=False, why_not="the shell grammar's parser crashed on it", commands=[],
                       programs=guessed_programs(command), words=guessed_words(command))


def read_here(command: str) -> "Reading":
    """parse, then classify, in this process: what the child runs."""
    return classify(parse(command))
# --8<-- [end:parse]


# ---------------------------------------------------------------- step 2: classify

# --8<-- [start:classify]
@dataclass
class Reading:
    """What the tree holds. ``plain`` with ``commands`` (each a list of words) if it is plain, else
    ``why_not``; ``programs``: every command found anywhere (its words, best effort), wrapped ones too,
    each as (words, where it starts in them): behind a wrapper, every word may start a program."""

    plain: bool
    why_not: str
    commands: list[list[str]]
    programs: list[tuple[list[str], int]]
    words: list[str]
    too_complex: str = ""  # why it was not read to the end: more candidates than MAX_CANDIDATES ("" if it was)


# Behind a wrapper every word may start a program, and a substitution's words are read again inside each
# command it nests in: `env $(a $(a ... a a a)))` of 4 KB gave 1.5 million candidate programs, which the
# deny rules then took about 80 s to match. A real command, even one of 4,096 characters of words behind a
# wrapper, has at most about 2,000 words and a few thousand candidates, and 20 rules match 10,000 in a few
# milliseconds: past that the command is built to cost, not to be run, so it is refused unread, not judged.
MAX_CANDIDATES = 10_000


class TooComplex(Exception):
    """Reading found more candidate programs or words than MAX_CANDIDATES: it stops there."""


def counted(programs: list, words: list) -> None:
    if len(programs) > MAX_CANDIDATES or len(words) > MAX_CANDIDATES:
        raise TooComplex(f"reading it found more than {MAX_CANDIDATES:,} candidate programs or words "
                         f"({len(programs):,} programs and {len(words):,} words when it stopped)")


PLAIN_JOINS = {"list", "pipeline", "&&", "||", ";", "|"}
# tree-sitter-bash splits `ls -\<newline>R` into the words `-` and `R`, where sh joins them into `-R`;
# carriage returns and other control characters are blanks to one and word characters to the other.
TWO_READINGS = re.compile(r"\\\n|[\x00-\x08\x0b-\x1f\x7f]")
PLAIN_WORD = re.compile(r"[A-Za-z0-9_./:@%+=,-]+")  # no $ ` \ * ? [ ] { } ~ ! # ' " : nothing the shell rewrites


def classify(tree: tree_sitter.Tree) -> Reading:
    """Is the tree plain (and its commands), and every program in it, plain or not. Reading stops
    once it has found more than MAX_CANDIDATES candidates: such a command is too complex to judge."""
    text = tree.root_node.text.decode(errors="replace")
    try:
        programs, words = programs_in(tree.root_node, depth=0)
        if tree.root_node.has_error:  # what the grammar could not read, sh may still run: any word may be a program
            programs += guessed_programs(text)  # or a path
            words += guessed_words(text)
        if "\\\n" in text:  # sh removes line continuations first: r\<newline>m is rm, where the grammar sees r and m
            programs += programs_in(parse(text.replace("\\\n", "")).root_node, depth=0)[0]
        counted(programs, words)
    except TooComplex as stopped:
        return Reading(plain=False, why_not=str(stopped), commands=[], programs=[], words=[], too_complex=str(stopped))
    commands, why_not = plain_commands(tree.root_node)
    return Reading(plain=commands is not None, why_not=why_not, commands=commands or [],
                   programs=programs, words=words)


MOST_REASONS = 12  # a person reads every reason a command is not plain, up to this many (and how many more)


def plain_commands(root) -> tuple[list[list[str]] | None, str]:
    """The commands of a plain tree, each as its words; or None and every way it is not plain (a person
    approving it should see the redirection in its middle, not only the subshell at its start)."""
    problems = []
    if root.has_error:
        problems.append("the shell grammar cannot read it completely (a parse error)")
    if TWO_READINGS.search(root.text.decode(errors="replace")):
        problems.append("it holds a line continuation or a control character, which sh and the grammar read differently")
    commands = []
    stack = list(root.children)
    while stack:
        node = stack.pop(0)
        if node.type == "command":
            words = plain_words(node)
            if words is None:
                problems.append(f"{course.shorten(node.text.decode(errors='replace'), 60)!r} is not plain words")
            else:
                commands.append(words)
        elif node.type in PLAIN_JOINS:
            stack[:0] = node.children
        elif node.type != "ERROR":
            problems.append(f"it holds {describe(node)}")
    if problems:
        return None, joined(problems) + "; only plain words joined by && || ; | run without a person"
    if not commands:
        return None, "it runs no command"
    return commands, ""


def joined(reasons: list[str]) -> str:
    """Every reason, each once, in order; past MOST_REASONS, how many more there are."""
    reasons = list(dict.fromkeys(reasons))
    more = f"; and {len(reasons) - MOST_REASONS} more" if len(reasons) > MOST_REASONS else ""
    return "; ".join(reasons[:MOST_REASONS]) + more


def plain_words(command) -> list[str] | None:
    """The words of one command node if every part of it is a plain word or a quoted literal: what
    the shell will pass to the program, exactly. None if any part is something the shell rewrites."""
    # >>> exercise 2: Read a command's words only when they are plain
    words = []
    for child in command.children:
        if child.type == "command_name":
            child = child.children[0] if child.child_count == 1 else child
        if child.type in ("word", "number") and PLAIN_WORD.fullmatch(child.text.decode()):
            words.append(child.text.decode())
        elif child.type == "raw_string":          # '...': the shell takes it literally
            words.append(child.text.decode()[1:-1])
        elif child.type == "string" and all(part.type in ('"', "string_content") for part in child.children) \
                and not re.search(r"[$`\\!]", child.text.decode()):   # "..." with nothing expanded in it
            words.append(child.text.decode()[1:-1])
        else:
            return None
    return words
    # <<< exercise 2


NODE_NAMES = {
    "variable_assignment": "an assignment", "file_redirect": "a redirection", "heredoc_redirect": "a here-document",
    "herestring_redirect": "a here-string", "redirected_statement": "a redirection", "subshell": "a subshell",
    "function_definition": "a function", "command_substitution": "a command substitution",
    "process_substitution": "a process substitution", "simple_expansion": "a $ expansion",
    "expansion": "a ${} expansion", "comment": "a comment", "&": "a background &",
}


def describe(node) -> str:
    name = NODE_NAMES.get(node.type) or (f"a control structure ({node.type})" if node.type.endswith("_statement")
                                         else f"{node.type!r}")
    return f"{name} ({course.shorten(node.text.decode(errors='replace'), 40)})"


def programs_in(node, depth: int) -> tuple[list[tuple[list[str], int]], list[str]]:
    """Every command anywhere under ``node``, as words (quotes taken off, best effort), and every word.
    Behind a wrapper, each of its words may be the program it runs, and each may be a script it parses."""
    programs, words = [], []
    for command in nodes_of_type(node, "command"):
        for found in lines_of(command):
            words += found
            programs += wrapped_programs(found, depth) if found else []
            programs += expanded_programs(found)
            counted(programs, words)  # each step adds at most a command's words: the work stays bounded
    words += [literal(part) for part in nodes_of_type(node, "word")]
    words = list(dict.fromkeys(words))  # each word once, in order (a set: linear, not quadratic)
    counted(programs, words)
    return programs, words  # each word once, in order (a set: linear, not quadratic)


NOT_WORDS = {"file_redirect", "heredoc_redirect", "herestring_redirect", "variable_assignment"}
WORD_PARTS_TAKEN_OFF = re.compile(r"[\"'\\]")


def lines_of(command) -> list[list[str]]:
    """A command's words, split where a word holds a line break: tree-sitter-bash glues "ls\n\\rm x"
    into one command, where sh runs two."""
    lines = [[]]
    for part in command.named_children:
        if part.type in NOT_WORDS:
            continue
        text = literal(part)
        if "\n" in text:
            lines.append([])
            text = text.rpartition("\n")[2]
        lines[-1].append(text)
    return [line for line in lines if line]


def literal(node) -> str:
    """A word as the shell would roughly pass it: quotes and backslashes taken off ('r'm is rm)."""
    if node.type == "command_name" and node.named_child_count == 1:
        node = node.named_children[0]
    text = node.text.decode(errors="replace").replace("\\\n", "")  # a line continuation joins: r\<newline>m is rm
    return WORD_PARTS_TAKEN_OFF.sub("", text)


def wrapped_programs(words: list[str], depth: int) -> list[tuple[list[str], int]]:
    """The command itself, and, behind a wrapper, every word that may start the program it runs and
    every word that may be a script it parses (sh -c '...', env -S'...', find -exec ..., xargs ...)."""
    found = [(words, 0)]
    if os.path.basename(words[0]) not in WRAPPERS or depth > 3:
        return found
    for index, word in enumerate(words[1:], 1):
        found.append((words, index))  # the tail from here, not a copy of it
        scripts = (word, word[2:], word.partition("=")[2])  # the word, and -S'rm x' or --split-string=rm x
        for script in dict.fromkeys(script for script in scripts if script):  # in order: the same reading every run
            found += programs_in(parse(script).root_node, depth + 1)[0]
    return found


def expanded_programs(words: list[str]) -> list[tuple[list[str], int]]:
    """A word the shell expands first ($X, ${X:-rm}, `...`) may become any program; its literal pieces
    are the names a deny rule can still find ("eval ${X:-rm}" runs rm)."""
    pieces = [piece for word in words if "$" in word or "`" in word
              for piece in re.split(r"[^\w./]+", word) if piece]
    return [(pieces, index) for index in range(len(pieces))]


def guessed_programs(text: str) -> list[tuple[list[str], int]]:
    """For a tree with parse errors only (never allowed anyway): every token, split at blanks and
    operators, may start a program, so that a deny rule still finds `rm` in "echo 'x; rm memo.md"."""
    tokens = guessed_words(text)
    return [(tokens, index) for index in range(len(tokens))]


def guessed_words(text: str) -> list[str]:
    """The text's tokens, split at blanks and operators, quotes taken off: its words, at a guess."""
    tokens = [WORD_PARTS_TAKEN_OFF.sub("", token) for token in re.split(r"[\s;&|()<>`$]+", text.replace("\\\n", ""))]
    return [token for token in tokens if token]


def nodes_of_type(node, kind: str) -> list:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if current.type == kind:
            found.append(current)
        stack.extend(current.children)
    return found
# --8<-- [end:classify]


# ---------------------------------------------------------------- what a program rule finds

def runs(pattern: str, words: list[str], start: int = 0) -> bool:
    """Whether the command ``words[start:]`` runs the program a rule's pattern names (by its base name:
    /bin/rm is rm; for git, after its global options: `git -C . push` is git push), with the words the
    pattern names after it. A tail is never copied, so that reading a command of n words behind a
    wrapper (each word may be the program) costs n, not n squared."""
    if start >= len(words):
        return False
    if pattern == "*":
        return True
    program, *rest = pattern_words(pattern)
    if not fnmatch.fnmatchcase(os.path.basename(words[start]), program):
        return False
    first = without_git_options(words, start + 1) if os.path.basename(words[start]) == "git" else start + 1
    return words[first:first + len(rest)] == rest


@functools.lru_cache(maxsize=256)
def pattern_words(pattern: str) -> list[str]:
    """A rule's pattern as words, split once (the gate matches it against every program it finds)."""
    return shlex.split(pattern)


# git's global options that take a value in the next word: `git -C . push` is `git push`.
GIT_OPTIONS_WITH_VALUE = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix",
                          "--exec-path", "--list-cmds", "--attr-source"}


def without_git_options(arguments: list[str], index: int = 0) -> int:
    """Where git's subcommand stands in ``arguments`` (from ``index`` on): its global options
    (`-C dir`, `--no-pager`...) skipped."""
    while index < len(arguments) and arguments[index].startswith("-"):
        index += 2 if arguments[index] in GIT_OPTIONS_WITH_VALUE else 1
    return index


# ---------------------------------------------------------------- step 3: the command as a gate judges it

# Reading a command costs time in its length (each word behind a wrapper may be a program or a
# script); a longer command is refused before it is read. A real command line is far shorter.
MAX_COMMAND_CHARS = 4096


@dataclass(frozen=True)
class Command:
    """A command as a gate judges it, read once: what the rules match and what a person is shown."""

    text: str                     # as sh reads it (``normalised``): what an approval names, exactly
    refused: str = ""             # why it is not read at all: empty, or too long to read
    reading: Reading | None = None
    paths: list = ()              # (word, the paths it is or leads to inside the workspace), for path rules
    unsafe: str = ""              # why it may not run without a person (confinement aside); "" if it may
    once_only: str = ""           # why "always" may not cover it; "" if it may

    @property
    def programs(self) -> list[tuple[list[str], int]]:
        """Every program anywhere in the tree, as (words, where it starts), wrapped ones too."""
        return self.reading.programs if self.reading else []


def read(workspace: Path, command: str, *, covered: Callable[[str], bool], hidden: Sequence[Path] = ()) -> Command:
    """The command read with the shell's grammar (once: in a child process, see read_command), each
    of its words as the paths it names, whether it is safe without a person, and whether "always" can
    cover it. ``covered``: whether a deny rule covers a path (relative to the workspace); ``hidden``:
    the files the rules hide, whose other names (hard links) are not safe either."""
    if not command.strip():
        return Command(normalised(command), "the command is empty")
    if len(command) > MAX_COMMAND_CHARS:
        return Command(normalised(command), f"the command is {len(command)} characters long, more than the "
                                            f"{MAX_COMMAND_CHARS} the gate reads: split it into shorter commands")
    reading = read_command(command)
    if reading.too_complex:  # nothing is judged on a reading cut short: refused, as an overlong command is
        return Command(normalised(command), f"the command is too complex to judge: {reading.too_complex}; "
                                            "split it into shorter commands without nested $( )", reading)
    named = {word: course.sandbox.paths.paths_named_by(workspace, word) for word in dict.fromkeys(reading.words)}
    paths = [(word, named[word]) for word in reading.words]
    unsafe = why_not_safe(workspace, reading, covered, hidden)
    if unsafe:  # the person asked is told what a move or a copy of a folder would take out from under its names
        unsafe = joined([unsafe, *course.sandbox.paths.folders_holding_secrets(workspace, reading.words, hidden, named)])
    return Command(normalised(command), "", reading, paths, unsafe, why_once_only(command, reading))


def why_not_safe(workspace: Path, reading: Reading, covered: Callable[[str], bool], hidden: Sequence[Path] = ()) -> str:
    """Why a command may not run without a person; empty if it is plain, every program of it is on the
    safe list with options it may take, and every path operand stays inside and outside the deny rules."""
    if not reading.plain:
        return f"it is not a plain command: {reading.why_not}"
    secrets = frozenset(course.sandbox.paths.inode_of(path) for path in hidden) - {None}
    problems = []
    for words in reading.commands:  # every reason, for the person who is asked
        safe, why, paths = safe_use(words)
        problems += [] if safe else [why]
        problems += [problem for path in paths if (problem := course.sandbox.paths.operand_problem(workspace, path, covered, secrets))]
    return joined(problems) if problems else ""


def safe_use(words: list[str]) -> tuple[bool, str, list[str]]:
    """Whether a plain command is a safe program used only with the options it may take; and its
    path operands. Options are read wherever they stand, as GNU programs do (`ls x -R` recurses)."""
    spec = SAFE_PROGRAMS.get(words[0])
    if spec is None:
        return False, f"{words[0]!r} is not on the safe list", []
    operands, pattern_given, rest = [], False, list(words[1:])
    while rest:
        word = rest.pop(0)
        if word == "--":
            operands += rest
            break
        if not word.startswith("-") or word == "-" or (spec.operands == "text" and operands):
            operands.append(word)
        elif word.startswith("--"):
            if word not in spec.long:
                return False, f"{words[0]} {word} is not an option the safe list allows", []
        else:
            problem, takes_value = short_options(words[0], word, spec, rest)
            if problem:
                return False, problem, []
            pattern_given |= takes_value == "text"
    if spec.operands == "none" and operands:
        return False, f"{words[0]} takes no operands", []
    plus = next((operand for operand in operands if spec.plus_is_option and operand.startswith("+")), None)
    if plus is not None:  # after -- too: which + operands GNU reads as options depends on their number and order
        return False, (f"{words[0]} {plus!r} is not a path: GNU tail reads a + operand as its obsolete options "
                       f"(`tail +1f FILE` follows the file for ever); use -n or -c, or name such a file ./{plus}"), []
    if spec.operands == "pattern then paths":
        return True, "", operands if pattern_given else operands[1:]
    return True, "", operands if spec.operands == "paths" else []


def short_options(program: str, word: str, spec: Program, rest: list[str]) -> tuple[str, str]:
    """Check one cluster of short options (`-ln`, `-n5`, `-n 5`); a value taken from the next word is
    removed from ``rest``. Returns (what is not allowed, or "", and the kind of value it took)."""
    for position, letter in enumerate(word[1:], 1):
        if letter in spec.numbers or letter in spec.texts:
            value = word[position + 1:] or (rest.pop(0) if rest else "")
            if letter in spec.numbers and not NUMBER.fullmatch(value):
                return f"{program} -{letter} takes a number, not {value!r}", ""
            return "", "text" if letter in spec.texts else "number"
        if letter not in spec.flags:
            return f"{program} -{letter} is not an option the safe list allows", ""
    return "", ""


def normalised(command: str) -> str:
    """The form an approval is stored and compared in: the command with only the outer blanks that sh
    itself skips (space, tab, newline) taken off. Not str.strip(): it also removes \v, \r, \x1c-\x1f,
    U+0085, U+00A0 and U+2028, which sh reads as letters of a word (`sh build.sh\v` runs another file)."""
    return command.strip(" \t\n")


# Programs whose behaviour is code they read from a file, an argument or the workspace: a shell runs
# a script, python3 imports json.py from the script's folder, make reads the Makefile, git its hooks
# and config, awk -f and sed -f their programs, find -exec and xargs what they are told. The same
# command text runs something else once the model has written a file, so "always" is never offered.
PRINTABLE_ASCII = re.compile(r"[ -~\t\n]*")


def why_once_only(command: str, reading: Reading) -> str:
    """Why "allow always" may not be given to this command; empty if it may. Always is kept for a
    command whose text says all it does: plain (no expansion of any kind, so no glob), printable
    ASCII only, and every program one of the safe list's, whatever its options and paths. Any other
    program may run code it reads from a file the model can write: a script's interpreter, a
    build tool, version control, pydoc (a list of such programs always misses one, so the rule
    names the programs that are known not to)."""
    if not PRINTABLE_ASCII.fullmatch(command):
        return "it holds control or non-ASCII characters, which sh and a person read differently"
    if not reading.plain:
        return "it is not plain, so what it runs can change with the files and the environment"
    for words in reading.commands:
        if words[0] not in SAFE_PROGRAMS:  # the name as written: /bin/ls or ./ls is not the safe list's ls
            return (f"{words[0]} is not on the safe list, so it may run code it reads from files "
                    "(a script, an interpreter, a build tool), which the model can change between calls")
    return ""


# ---------------------------------------------------------------- python -m course.sandbox.shell_reading --bench

BENCH_COMMANDS = ["ls -l", "cat memo.md | grep agent | head -n 3", "ls && rm memo.md",
                  "bash -c 'echo $(cat .env)' > out.txt", "if true; then env -u X rm x; fi"]


def bench(repeats: int = 2000) -> dict:
    """Median microseconds to read each command, in this process and in a forked child (as the gate
    does): what the grammar adds to a call."""
    timings = {}
    for command in BENCH_COMMANDS:
        for how, read in (("in process", read_here), ("in a child", read_command)):
            samples = []
            for _ in range(repeats if how == "in process" else max(repeats // 20, 20)):
                started = time.perf_counter()
                read(command)
                samples.append((time.perf_counter() - started) * 1e6)
            timings[command, how] = round(statistics.median(samples), 1)
    return timings


if __name__ == "__main__":
    if sys.argv[1:] == ["--bench"]:
        for (command, how), microseconds in bench().items():
            print(f"{microseconds:10.1f} µs  {how:10}  {command!r}")
    else:
        for command in sys.argv[1:]:
            reading = read_here(command)
            print(json.dumps({"command": command, "plain": reading.plain, "why_not": reading.why_not,
                              "commands": reading.commands,
                              "programs": [words[start:] for words, start in reading.programs]}, ensure_ascii=False))
