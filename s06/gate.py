"""s06's permission gate: a command is read with the shell's own grammar, never guessed at.

A gate that reads command text with shlex and regular expressions loses to the shell, which reads it
with its grammar, its startup files and the file system. So the gate works in three steps, each a
function of its own, the shape of Codex CLI's safe-command check (codex-rs/core/src/bash.rs:
tree-sitter-bash, then only plain words joined by && || ; |):

    parse(command)    -> a syntax tree, from tree-sitter-bash (the grammar, not a guess)
    classify(tree)    -> Reading: is it plain? its commands (words), every program anywhere in the tree
    decide(...)       -> allow / ask / deny: deny rules anywhere, then the safe list, then a person

Only a *plain* command can be allowed without a person: words (and quoted strings) joined by &&, ||,
; and |, with no expansion (a glob is one), substitution, redirection, assignment, here-document,
subshell, function, control structure, background & or parse error; every program on the safe list
with the options it may take; every path argument resolving, links followed, inside the workspace and
outside every deny rule. Anything else goes to a person; with no terminal, that means deny.

Run ``python -m s06.gate --bench`` to time the parser on a few commands.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import os
import re
import shlex
import stat
import statistics
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Literal

import tree_sitter
import tree_sitter_bash

import course
import course.isolated

Decision = Literal["allow", "ask", "deny"]
SEVERITY = {"allow": 0, "ask": 1, "deny": 2}

RISK = {"list_files": "read", "read_file": "read", "search_files": "read", "calculate": "read",
        "write_file": "write", "move_file": "destructive", "delete_file": "destructive", "run_command": "execute"}
DEFAULT_DECISION = {"read": "allow", "write": "allow", "destructive": "ask", "execute": "ask"}
INSTEAD = {  # what a denied model may do instead, by risk class
    "read": "leave that file alone: the rules keep it private",
    "write": "write a new file inside the workspace instead",
    "destructive": "leave the file as it is (or tell the user it should go) and carry on with the rest of the task",
    "execute": "use the file tools (list_files, read_file, search_files) or a plain command of the safe list "
               "(ls, cat, wc, grep, head, tail, echo, pwd) on files of the workspace, with no $, *, > or quotes tricks",
}


# ---------------------------------------------------------------- the rules

# --8<-- [start:rules]
@dataclass(frozen=True)
class Rule:
    decision: Decision
    tool: str            # a tool name, or a glob such as "*"
    pattern: str = "*"   # a path glob for file tools; a program (and words after it) for run_command

    def matches_path(self, tool: str, path: str) -> bool:
        """A path rule: the tool fits and the path (normalised, relative to the workspace) fits the glob."""
        return fnmatch.fnmatchcase(tool, self.tool) and fnmatch.fnmatchcase(path, self.pattern)

    def matches_program(self, words: list[str], start: int = 0) -> bool:
        """A command rule: the program (by its base name) and the words the pattern names after it.
        The command is ``words`` from ``start`` on: a tail is never copied, so that reading a command
        of n words behind a wrapper (each word may be the program) costs n, not n squared."""
        if self.tool != "run_command" or start >= len(words):
            return False
        if self.pattern == "*":
            return True
        program, *rest = pattern_words(self.pattern)
        if not fnmatch.fnmatchcase(os.path.basename(words[start]), program):
            return False
        first = without_git_options(words, start + 1) if os.path.basename(words[start]) == "git" else start + 1
        return words[first:first + len(rest)] == rest

    def __str__(self) -> str:
        return f"{self.decision} {self.tool} {self.pattern}"


RULES = [
    *(Rule("deny", "run_command", program) for program in
      ("rm", "rmdir", "shred", "unlink", "sudo", "su", "doas", "curl", "wget", "nc", "dd", "mkfs*", "chmod",
       "chown", "kill", "pkill", "killall", "git push", "shutdown", "reboot")),
    Rule("deny", "*", ".env"), Rule("deny", "*", "*/.env"),  # secrets: at any depth, read or written, by any tool
]

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
# --8<-- [end:rules]


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


SAFE_PROGRAMS = {
    "ls": Program(flags="1aAlhtrSdFpi", long=frozenset({"--all", "--almost-all", "--human-readable"})),
    "cat": Program(flags="nbsAETv"),
    "wc": Program(flags="lwcmL", long=frozenset({"--lines", "--words", "--bytes", "--chars"})),
    "grep": Program(flags="ivwxcnlLhHoqsFE", numbers="mABC", texts="e", operands="pattern then paths",
                    long=frozenset({"--ignore-case", "--count", "--line-number", "--fixed-strings"})),
    "head": Program(flags="qv", numbers="nc"),
    "tail": Program(flags="qv", numbers="nc"),
    "echo": Program(flags="n", operands="text"),
    "pwd": Program(flags="LP", operands="none"),
}
NUMBER = re.compile(r"\+?\d{1,9}")

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
    """parse, then classify, in a child process (course.isolated). tree-sitter-bash is C, and it
    crashed (a segmentation fault) on a few generated strings in this course's property tests: a
    crash must end a child, not the agent's run. A command the child could not read is not plain,
    and every word in it may be a program or a path, so that deny rules still apply."""
    try:
        return course.isolated.call(read_here, command)
    except course.isolated.ChildCrashed:
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


PLAIN_JOINS = {"list", "pipeline", "&&", "||", ";", "|"}
# tree-sitter-bash splits `ls -\<newline>R` into the words `-` and `R`, where sh joins them into `-R`;
# carriage returns and other control characters are blanks to one and word characters to the other.
TWO_READINGS = re.compile(r"\\\n|[\x00-\x08\x0b-\x1f\x7f]")
PLAIN_WORD = re.compile(r"[A-Za-z0-9_./:@%+=,-]+")  # no $ ` \ * ? [ ] { } ~ ! # ' " : nothing the shell rewrites


def classify(tree: tree_sitter.Tree) -> Reading:
    """Is the tree plain (and its commands), and every program in it, plain or not."""
    programs, words = programs_in(tree.root_node, depth=0)
    text = tree.root_node.text.decode(errors="replace")
    if tree.root_node.has_error:  # what the grammar could not read, sh may still run: any word may be a program
        programs += guessed_programs(text)  # or a path
        words += guessed_words(text)
    if "\\\n" in text:  # sh removes line continuations first: r\<newline>m is rm, where the grammar sees r and m
        programs += programs_in(parse(text.replace("\\\n", "")).root_node, depth=0)[0]
    commands, why_not = plain_commands(tree.root_node)
    return Reading(plain=commands is not None, why_not=why_not, commands=commands or [],
                   programs=programs, words=words)


def plain_commands(root) -> tuple[list[list[str]] | None, str]:
    """The commands of a plain tree, each as its words; or None and what is not plain."""
    if root.has_error:
        return None, "the shell grammar cannot read it completely (a parse error)"
    if TWO_READINGS.search(root.text.decode(errors="replace")):
        return None, "it holds a line continuation or a control character, which sh and the grammar read differently"
    commands = []
    stack = list(root.children)
    while stack:
        node = stack.pop(0)
        if node.type == "command":
            words = plain_words(node)
            if words is None:
                return None, f"{node.text.decode(errors='replace')!r} is not plain words"
            commands.append(words)
        elif node.type in PLAIN_JOINS:
            stack[:0] = node.children
        else:
            return None, f"it holds {describe(node)}; only plain words joined by && || ; | run without a person"
    if not commands:
        return None, "it runs no command"
    return commands, ""


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
    words += [literal(part) for part in nodes_of_type(node, "word")]
    return programs, list(dict.fromkeys(words))  # each word once, in order (a set: linear, not quadratic)


NOT_WORDS = {"file_redirect", "heredoc_redirect", "herestring_redirect", "variable_assignment"}
WORD_PARTS_TAKEN_OFF = re.compile(r"[\"'\\]")


def lines_of(command) -> list[list[str]]:
    """A command's words, split where a word holds a line break: tree-sitter-bash glues "ls\n\\rm x"
    into one command, where sh runs two (found by the differential test against /bin/sh)."""
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
        for script in {word, word[2:], word.partition("=")[2]} - {""}:  # -S'rm x', --split-string=rm x
            found += programs_in(parse(script).root_node, depth + 1)[0]
    return found


def expanded_programs(words: list[str]) -> list[tuple[list[str], int]]:
    """A word the shell expands first ($X, ${X:-rm}, `...`) may become any program; its literal pieces
    are the names a deny rule can still find ("eval ${X:-rm}" runs rm: found by the differential test)."""
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


# ---------------------------------------------------------------- step 3: decide

# Reading a command costs time in its length (each word behind a wrapper may be a program or a
# script); a longer command is refused before it is read. A real command line is far shorter.
MAX_COMMAND_CHARS = 4096

# --8<-- [start:decide]
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


def path_problem(workspace: Path, path: str, rules: list, secret_inodes: frozenset = frozenset()) -> str:
    """Why a path argument may not be read without a person: it leads out (links followed), a deny
    rule covers it, or it is a hard link of a file one covers."""
    if path == "-":
        return ""
    resolved = Path(os.path.realpath(workspace / path))
    root = Path(os.path.realpath(workspace))
    if not resolved.is_relative_to(root):
        return f"{path!r} leads outside the workspace"
    relative = str(resolved.relative_to(root))
    if any(rule.decision == "deny" and rule.matches_path("run_command", relative) for rule in rules):
        return f"{path!r} is {relative!r}, which a deny rule covers"
    if secret_inodes and inode_of(resolved) in secret_inodes:
        return f"{path!r} is the same file as one a deny rule covers (a hard link)"
    return ""


def denied_by_rules(rules: list, reading: Reading, workspace: Path, decision: Decision = "deny") -> str:
    """The first rule of this kind that matches a program anywhere in the tree, or a word that is (or
    leads to) a path the rule covers. Empty when none does."""
    for rule in rules:
        if rule.decision != decision:
            continue
        for words, start in reading.programs:
            if rule.matches_program(words, start):
                return f"the rule '{rule}' matches {course.shorten(' '.join(words[start:start + 8]), 80)!r}"
        if rule.tool == "run_command":
            continue
        for word in reading.words:
            for path in paths_named_by(workspace, word):
                if rule.matches_path("run_command", path):
                    return f"the rule '{rule}' covers the path {word!r}"
    return ""


def paths_named_by(workspace: Path, word: str) -> list[str]:
    """A word as a path: as written (normalised), and where it leads inside the workspace, links followed."""
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


def why_once_only(workspace: Path, command: str, reading: "Reading") -> str:
    """Why "allow always" may not be given to this command; empty if it may. Always is kept for a
    command whose text says all it does: plain (no expansion of any kind, so no glob), printable
    ASCII only, and every program one of the safe list's, whatever its options and paths. Any other
    program may run code it reads from a file the model can write: a script's interpreter, a
    build tool, version control, pydoc (found by the red team: a name list of such programs
    always misses one, so the rule names the programs that are known not to)."""
    if not PRINTABLE_ASCII.fullmatch(command):
        return "it holds control or non-ASCII characters, which sh and a person read differently"
    if not reading.plain:
        return "it is not plain, so what it runs can change with the files and the environment"
    for words in reading.commands:
        if words[0] not in SAFE_PROGRAMS:  # the name as written: /bin/ls or ./ls is not the safe list's ls
            return (f"{words[0]} is not on the safe list, so it may run code it reads from files "
                    "(a script, an interpreter, a build tool), which the model can change between calls")
    return ""


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    why: str
    decided_by: str   # "rule", "safe list", "default", "person" or "no terminal"
    instead: str = ""  # for a refusal: what the model may do instead


Approver = Callable[[str, dict, str, str], tuple[str, str]]


@dataclass
class Gate:
    """Decides, outside the model, whether a call may run: rules, then a person, then the audit log."""

    rules: list
    approver: Approver | None = None   # a person: (tool, arguments, why, covers) -> (answer, reason); None: no one
    audit_log: object = None            # a path, None for the default, or False for none
    confinement: object = None          # confine.Confinement; None or unavailable: nothing runs without a person
    approved: set = field(default_factory=set)  # (tool, exact subject) a person allowed always

    @property
    def confined(self) -> bool:
        return bool(self.confinement is not None and self.confinement.available)

    def check(self, workspace: Path, name: str, arguments: dict) -> Verdict:
        """The verdict on one call, put to a person when the rules say ask, and audited."""
        verdict = Verdict(*self.decide(workspace, name, arguments))
        if verdict.decision == "ask":
            verdict = self.ask_person(workspace, name, arguments, verdict.why)
        self.audit(name, arguments, verdict)
        if verdict.decision != "allow":
            return replace(verdict, instead=INSTEAD[risk_of(workspace, name, arguments)])
        return verdict

    def decide(self, workspace: Path, name: str, arguments: dict) -> tuple[Decision, str, str]:
        if name == "run_command":
            return self.decide_command(workspace, arguments["command"])
        return self.decide_paths(workspace, name, arguments)

    def decide_command(self, workspace: Path, command: str) -> tuple[Decision, str, str]:
        """Deny rules anywhere in the tree; then ask rules; then an approval or an exact allow rule;
        then the safe list, for a plain command under confinement; else ask."""
        if not command.strip():
            return "deny", "the command is empty", "rule"
        if len(command) > MAX_COMMAND_CHARS:
            return "deny", (f"the command is {len(command)} characters long, more than the {MAX_COMMAND_CHARS} the gate "
                            "reads: split it into shorter commands"), "rule"
        reading = read_command(command)
        for decision in ("deny", "ask"):
            why = denied_by_rules(self.rules, reading, workspace, decision)
            if why:
                return decision, why, "rule"
        if ("run_command", normalised(command)) in self.approved and not why_once_only(workspace, command, reading):
            return "allow", "a person allowed this exact command always", "person"
        if any(rule.decision == "allow" and rule.tool == "run_command" and rule.pattern == normalised(command)
               for rule in self.rules):
            return "allow", "an allow rule names this exact command", "rule"
        problem = self.not_safe(workspace, reading)
        if problem:
            return "ask", problem, "default"
        return "allow", "a plain command of the safe list, on paths inside the workspace", "safe list"

    def not_safe(self, workspace: Path, reading: Reading) -> str:
        """Why a command may not run without a person; empty if it may."""
        if not reading.plain:
            return f"it is not a plain command: {reading.why_not}"
        secret_inodes = frozenset(inode_of(path) for path in self.hidden(workspace)) - {None}
        for words in reading.commands:
            safe, why, paths = safe_use(words)
            if not safe:
                return why
            for path in paths:
                problem = path_problem(workspace, path, self.rules, secret_inodes)
                if problem:
                    return problem
        if not self.confined:
            reason = self.confinement.reason if self.confinement is not None else "it was not probed"
            return f"kernel confinement is not available ({reason}), so no command runs without a person"
        return ""

    def decide_paths(self, workspace: Path, name: str, arguments: dict) -> tuple[Decision, str, str]:
        """File tools: the most severe decision over each entry the tool acts on (exactly what it will
        open: a link to .env is .env), and the deny rules on where a link it deletes or moves leads.
        A file that is a hard link of a denied file (the same inode) is denied like it."""
        secret_inodes = {inode_of(path) for path in self.hidden(workspace)} - {None}
        verdicts = []
        for subject, acted_on in subjects_of(workspace, name, arguments):
            if secret_inodes and inode_of(workspace / subject) in secret_inodes:
                verdicts.append(("deny", f"{subject!r} is the same file as one a deny rule covers (a hard link)", "rule"))
            elif acted_on:
                verdicts.append(self.decide_path(workspace, name, arguments, subject))
            else:
                verdicts += [(rule.decision, f"the rule '{rule}' matches {subject!r}, where the link leads", "rule")
                             for rule in self.rules if rule.decision == "deny" and rule.matches_path(name, subject)]
        return max(verdicts, key=lambda verdict: SEVERITY[verdict[0]])

    def decide_path(self, workspace, name, arguments, subject) -> tuple[Decision, str, str]:
        for decision in ("deny", "ask", "allow"):  # deny first, then ask, then allow
            if decision == "ask" and (name, subject) in self.approved:
                return "allow", f"a person allowed {name} on exactly {subject!r} always", "person"
            for rule in self.rules:
                if rule.decision == decision and rule.matches_path(name, subject):
                    return decision, f"the rule '{rule}' matches {subject!r}", "rule"
        risk = risk_of(workspace, name, arguments)
        return DEFAULT_DECISION[risk], f"no rule matches {subject!r}; {risk} actions default to {DEFAULT_DECISION[risk]}", "default"

    def ask_person(self, workspace: Path, name: str, arguments: dict, why: str) -> Verdict:
        if self.approver is None:
            return Verdict("deny", f"{why}, and there is no terminal to ask a person, so ask means deny", "no terminal")
        covers = approval_scope(workspace, name, arguments)
        answer, reason = self.approver(name, arguments, why, covers)
        if answer == "allow always":  # keys are empty where always is not offered: then it is allowed once
            self.approved |= set(approval_keys(workspace, name, arguments))
        if answer in ("allow once", "allow always"):
            return Verdict("allow", f"a person allowed it ({answer})", "person")
        return Verdict("deny", f"a person refused: {reason or 'no reason given'}", "person")

    def hidden(self, workspace: Path) -> list[Path]:
        """The files inside the workspace that a deny rule covers (.env at any depth): a command is
        confined so that it cannot read them, and search_files skips them."""
        root = Path(os.path.realpath(workspace))
        found, others = [], []
        for path, is_file in entries_under(root):
            relative = str(path.relative_to(root))
            if any(rule.decision == "deny" and rule.tool != "run_command" and rule.matches_path("read_file", relative)
                   for rule in self.rules):
                found.append(path)
            elif is_file:
                others.append(path)
        # `ln .env notes.txt`: another name for the same file holds the same secret (same device and
        # inode); and any file with two names may be a file outside the workspace: hidden too.
        secret_inodes = {inode_of(path) for path in found} - {None}
        return found + [path for path in others if inode_of(path) in secret_inodes or links_of(path) > 1]

    def audit(self, name: str, arguments: dict, verdict: Verdict) -> None:
        if self.audit_log is not False:
            course.runlog.append({"tool": name, "arguments": arguments, "rule": verdict.why, "decision": verdict.decision,
                                  "decided_by": verdict.decided_by}, self.audit_log or course.runlog.audit_path())


ACTS_ON_LINKS = {"delete_file", "move_file"}  # they remove or rename a link itself, never its target


def acted_on(workspace: Path, name: str, path: str) -> Path:
    """The entry a file tool acts on, resolved exactly as the tools resolve it (agent.inside and
    agent.entry): links and '..' followed by the file system, in order, never by text (normpath would
    take `L/../x` to `x` when L is a link to a folder), and nothing split off (`-a=b` is a name). For
    delete_file and move_file, the last part is not followed: they act on a link itself."""
    root = workspace.resolve()
    written = Path(path)
    if name in ACTS_ON_LINKS and written.name not in ("", ".", ".."):
        return (root / written.parent).resolve() / written.name
    return (root / written).resolve()


def subjects_of(workspace: Path, name: str, arguments: dict) -> list[tuple[str, bool]]:
    """(path relative to the workspace, whether the tool acts on it) for each path a file tool names:
    the entry it acts on, and for a link it deletes or moves, where the link leads (for deny rules)."""
    root, subjects = workspace.resolve(), []
    for key in ("path", "source", "destination"):
        if key not in arguments or "\x00" in str(arguments[key]):
            continue
        entry = acted_on(workspace, name, str(arguments[key]))
        for path, acts in ((entry, True), (entry.resolve(), False)):
            if path.is_relative_to(root) and (str(path.relative_to(root)), acts) not in subjects:
                if acts or path != entry:
                    subjects.append((str(path.relative_to(root)), acts))
    return subjects or [("", True)]


def entries_under(root: Path):
    """Every entry under ``root`` as (path, is a regular file), links not followed. A loop, not
    recursion: os.walk recurses on Python 3.11, and a chain of folders 1,000 deep broke it."""
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            children = list(os.scandir(folder))
        except OSError:
            continue
        for child in children:
            yield Path(child.path), child.is_file(follow_symlinks=False)
            if child.is_dir(follow_symlinks=False):
                stack.append(Path(child.path))


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


def approval_keys(workspace: Path, name: str, arguments: dict) -> list[tuple[str, str]]:
    """What "allow always" approves: this exact command, or the exact entries the tool acts on; never
    a program, a pattern, where a link leads, or a command whose text does not say all it does."""
    if name == "run_command":
        command = arguments["command"]
        return [] if why_once_only(workspace, command, read_command(command)) else [(name, normalised(command))]
    return [(name, subject) for subject, acts in subjects_of(workspace, name, arguments)
            if acts and subject not in ("", ".")]


def approval_scope(workspace: Path, name: str, arguments: dict) -> str:
    """The question's words for what "always" covers, so a person knows exactly what they approve."""
    keys = approval_keys(workspace, name, arguments)
    if name == "run_command":
        why = why_once_only(workspace, arguments["command"], read_command(arguments["command"]))
        return f"once only: {why}" if why else f"exactly the command {keys[0][1]!r} and nothing else"
    return f"{name} on exactly {', '.join(repr(subject) for _, subject in keys)}" if keys else "once only"


def risk_of(workspace: Path, name: str, arguments: dict) -> str:
    if name == "write_file" and (workspace / str(arguments.get("path", ""))).resolve().is_file():
        return "destructive"  # overwriting loses what was there
    return RISK.get(name, "execute")


def ask_on_terminal(tool: str, arguments: dict, why: str, covers: str) -> tuple[str, str]:
    """The person in 'ask', at a terminal (run() uses it only when there is one)."""
    print(f"\n  ? {tool} {json.dumps(arguments, ensure_ascii=False)}\n    ({why})")
    choices = f"[o]nce ({covers})" if covers.startswith("once only") else f"[o]nce, [a]lways ({covers})"
    answer = input(f"    allow {choices}, or [n]o with a reason: ").strip()
    if answer.lower() in ("o", "once", "y", "yes"):
        return "allow once", ""
    if answer.lower() in ("a", "always"):
        return "allow always", ""
    return "deny", answer.partition(" ")[2].strip()
# --8<-- [end:decide]


# ---------------------------------------------------------------- python -m s06.gate --bench

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
