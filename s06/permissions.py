"""s06's permissions, the chapter's own code: risk classes, rules, one decision, a person, an audit line.

Every tool has a risk class (read, write, destructive, execute). Rules (deny, ask, allow) are checked
in one function, ``decide()``: deny first, then ask, then allow, else the risk class's default; the
order of the kinds decides, never the order of the list. "Ask" puts exactly one thing to a person,
shown exactly; with no one to ask, ask means deny. Every decision is one line of the audit log.

What the decision is made on is read and resolved by the support package, never taken from the
call's text: a command with the shell's own grammar (course.sandbox.shell_reading), a path with the one
resolver the file tools use too (course.sandbox.paths). ``Gate.read_call()`` is where the two meet.

    check:  read_call ─► decide: deny? ─► ask? ─► allow? ─► the risk's default
                                          │ ask
                                          ▼
                       a person (exactly this, once or always), or no one: deny ─► audit ─► verdict
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Literal

import course
import course.sandbox.approval
import course.sandbox.paths
import course.sandbox.shell_reading

Decision = Literal["allow", "ask", "deny"]

# --8<-- [start:risk]
RISK = {"list_files": "read", "read_file": "read", "search_files": "read", "calculate": "read",
        "write_file": "write", "move_file": "destructive", "delete_file": "destructive", "run_command": "execute"}
DEFAULT_DECISION = {"read": "allow", "write": "allow", "destructive": "ask", "execute": "ask"}
INSTEAD = {  # what a denied model may do instead, by risk class
    "read": "leave that file alone: the rules keep it private",
    "write": "write a new file inside the workspace instead",
    "destructive": "leave the file as it is (or tell the user it should go) and carry on with the rest of the task",
    "execute": "use the file tools (list_files, read_file, search_files) or a plain command of the safe list "
               f"({course.sandbox.shell_reading.SAFE_LIST}) on files of the workspace, with no $, *, > or quotes tricks",
}
RUNS_LATER = "<what runs later>"  # a rule's pattern for what course.sandbox.paths finds is not plain data, whatever its name
SECRET = "<a secret>"  # a rule's pattern for every secret's name course.sandbox.paths knows (course.sandbox.paths.SECRETS), matched at once
GIT_STORE = "<git's own store>"  # a rule's pattern for what course.sandbox.paths finds in git's store, whatever its name
ACTS_ON_LINKS = {"delete_file", "move_file"}  # they remove or rename a link itself, never its target
CHANGES = ("write_file", "move_file", "delete_file")  # the file tools that write, create, move or delete
# --8<-- [end:risk]


# --8<-- [start:rules]
# --8<-- [start:rule-fields]
@dataclass(frozen=True)
class Rule:
    decision: Decision
    tool: str            # a tool name, or a glob such as "*"; several joined by "|": write_file|move_file
    pattern: str = "*"   # a path glob; for run_command, a program and the words after it (an allow rule: the exact command)
    why: str = ""        # what the rule protects, said to the model with the decision
    # --8<-- [end:rule-fields]

    def covers(self, tool: str, path: str, *, folders: bool = True) -> bool:
        """A path rule: the tool fits and the path (resolved, relative to the workspace) or one of its
        folders fits the glob: a rule on .env covers .env/production and config/.env/keys too.
        ``folders=False``: the path alone, for a walk that has already judged the folders above it.
        A deny or ask rule fits without regard to case (on a case-insensitive disk .ENV is .env);
        an allow rule, exactly."""
        exact = self.decision == "allow"
        if self.pattern == SECRET:  # hundreds of names compiled into one matcher: a decision costs the same whatever the input
            return self.fits(tool) and (course.sandbox.paths.secret_covers if folders else course.sandbox.paths.secret_name)(path)
        return self.fits(tool) and any(
            fnmatch.fnmatchcase(part if exact else part.lower(), self.pattern if exact else self.pattern.lower())
            for part in (path_and_folders(path) if folders else [path]))

    def fits(self, tool: str) -> bool:
        return tool_fits(self.tool, tool)

    def found_in(self, call: "Call") -> str:
        """What of the call this rule matches, in words ("" if nothing). A command rule finds its program
        anywhere in the tree; a path rule, a word of a command that is or leads to a path it covers, or
        an entry a file tool acts on (a deny rule, where a link it acts on leads too)."""
        if call.command is not None and self.tool == "run_command":
            for words, start in call.command.programs:
                if course.sandbox.shell_reading.runs(self.pattern, words, start):
                    return f"matches {course.shorten(' '.join(words[start:start + 8]), 80)!r}"
        elif call.command is not None:
            for word, paths in call.command.paths:
                covered = next((path for path in paths if self.covers(call.tool, path)), None)
                if covered is not None:
                    return f"covers the path {word!r}" + self.named_by(covered)
        elif self.pattern in (RUNS_LATER, GIT_STORE):
            found = call.runs_later if self.pattern == RUNS_LATER else call.git_store
            return f"finds that {found}" if self.fits(call.tool) and found else ""
        else:
            for path in call.acts_on:
                if self.covers(call.tool, path):
                    return f"matches {path!r}" + self.named_by(path)
            for path in call.leads_to:  # a link's name is judged as the file it leads to, and the reverse
                if self.covers(call.tool, path):
                    return f"matches {path!r}, another name for it (as written, or by a link)" + self.named_by(path)
        return ""

    def named_by(self, path: str) -> str:
        """For the secrets' rule, which of their names a path has, so that the model and a person read why."""
        return f" (a secret's name: {course.sandbox.paths.secret_glob(path)})" if self.pattern == SECRET else ""

    def allows(self, tool: str, subject: str) -> bool:
        """Whether this rule, as an allow rule, names the subject: a path it covers; for a command, the
        exact command, never a prefix (`ls` allowed would allow `ls && rm -rf .`)."""
        if tool == "run_command":
            return self.tool == "run_command" and self.pattern == subject
        return self.covers(tool, subject)

    def __str__(self) -> str:
        return f"{self.decision} {self.tool} {self.pattern}"


@functools.lru_cache(maxsize=4096)  # every rule asks it of every call: a thousand rules, a handful of tools
def tool_fits(globs: str, tool: str) -> bool:
    """Whether a rule's tool globs ("write_file|move_file", "*") name the tool."""
    return any(fnmatch.fnmatchcase(tool, glob) for glob in globs.split("|"))


def path_and_folders(path: str) -> list[str]:
    """The path and each folder it lies in, nearest first: "config/.env/keys", "config/.env", "config"."""
    found = [path]
    while "/" in found[-1].strip("/"):
        found.append(found[-1].rstrip("/").rpartition("/")[0])
    return found


def anywhere(name: str) -> tuple[str, str]:
    """The globs for a name at any depth: at the workspace's top, and below any folder."""
    return name, f"*/{name}"


# --8<-- [start:default-rules]
# Secrets: no tool reads or writes them, at any depth; a folder of that name, with everything beneath it
# (course.sandbox.paths.SECRETS: the usual names of secret files, each with the page that documents it).
RULES = [
    *(Rule("deny", "run_command", program) for program in
      ("rm", "rmdir", "shred", "unlink", "sudo", "su", "doas", "curl", "wget", "nc", "dd", "mkfs*", "chmod",
       "chown", "kill", "pkill", "killall", "git push", "shutdown", "reboot")),
    Rule("deny", "*", SECRET),  # read or written, by any tool
    # Writes by rule, not by list: a file tool changes without a person only plain data (text, Markdown,
    # CSV, a lowercase name, outside hidden folders, never through a link, not executable: course.sandbox.paths.not_plain_data).
    # Anything else may run later, outside every confinement (.git/hooks, a Procfile, a json.py a script
    # imports, a file named ls): a write, a move or a delete of it goes to a person.
    Rule("ask", "|".join(CHANGES), RUNS_LATER, "what is written there may run later, outside every confinement"),
    # git's store holds every file ever committed, a secret committed once too: read by git's own commands.
    Rule("ask", "read_file", GIT_STORE, "what git keeps is read with git's own commands, which a person approves"),
]
# --8<-- [end:default-rules]
# --8<-- [end:rules]


# --8<-- [start:decide]
@dataclass(frozen=True)
class Call:
    """One tool call as the gate judges it: what the support package read and resolved, not its text."""

    tool: str
    risk: str                 # its risk class; a write over an existing file is destructive
    acts_on: list[str]        # the entries it acts on (relative to the workspace); for a command, its text as sh reads it
    leads_to: list[str] = ()  # its other names (as written, by a link passed or leading to it): rules see them too
    refused: str = ""         # why nothing may allow it: an empty or overlong command, a hard link of a denied file
    command: course.sandbox.shell_reading.Command | None = None  # read with the shell's grammar: programs, paths
    unsafe: str = ""          # a command: why it may not run without a person ("" when it is on the safe list)
    once_only: str = ""       # why a person's "always" may not cover it ("" when it may)
    runs_later: str = ""      # why what it changes may run later: not plain data, or found so on disk, whatever its name
    git_store: str = ""       # why reading it goes to a person: it is in git's own store, whatever its name


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    why: str
    decided_by: str    # "rule", "safe list", "default", "person" or "no terminal"
    instead: str = ""  # for a refusal: what the model may do instead


def decide(call: Call, rules: list[Rule], approved: set) -> Verdict:
    """Deny, then ask, then allow, then the risk class's default; nothing runs here. ``approved``:
    what a person allowed always, each an ``approval()``: a call's exact subject, or the exact
    combination of its entries (a move's source and destination, together). A call that acts on
    several entries is allowed only if each of them is."""
    # >>> exercise 1: Decide: deny, then ask, then allow, then the default
    if call.refused:
        return Verdict("deny", call.refused, "rule")
    for kind in ("deny", "ask"):  # whatever the order of the list: a deny rule anywhere outranks the rest
        for rule in rules:
            found = rule.found_in(call) if rule.decision == kind else ""
            if found:
                return Verdict(kind, f"the rule '{rule}' {found}" + (f" ({rule.why})" if rule.why else ""), "rule")
    allowed, approval_of_call = [], approval(call.tool, call.acts_on)
    for subject in call.acts_on:
        rule = next((rule for rule in rules if rule.decision == "allow" and rule.allows(call.tool, subject)), None)
        if approval_of_call in approved and not call.once_only:  # the whole call, never one of its entries alone
            allowed.append(Verdict("allow", f"a person allowed {call.tool} on exactly "
                                            f"{', '.join(map(repr, call.acts_on))} always", "person"))
        elif rule:
            allowed.append(Verdict("allow", f"the rule '{rule}' matches {subject!r}", "rule"))
        elif call.tool == "run_command" and not call.unsafe:  # a command's default: the safe list, confined
            allowed.append(Verdict("allow", "a plain command of the safe list, on paths inside the workspace", "safe list"))
        else:
            default = DEFAULT_DECISION[call.risk]
            why = call.unsafe or f"no rule matches {subject!r}; {call.risk} actions default to {default}"
            if default != "allow":
                return Verdict(default, why, "default")
            allowed.append(Verdict(default, why, "default"))
    return allowed[0]
    # <<< exercise 1


def approval(tool: str, subjects: list[str]) -> tuple:
    """What "allow always" stores for a call, compared with == later: (tool, its one subject), or, for
    a call with several, (tool, all of them in order), so that approving memo.md→old/memo.md and
    todo.md→old/todo.md never approves memo.md→old/todo.md."""
    return (tool, subjects[0]) if len(subjects) == 1 else (tool, tuple(subjects))
# --8<-- [end:decide]


# --8<-- [start:gate]
# --8<-- [start:check]
Approver = Callable[[str, dict, str, str], tuple[str, str]]


@dataclass
class Gate:
    """Decides, outside the model, whether a call may run: rules, then a person, then the audit log."""

    rules: list
    approver: Approver | None = None   # a person: (tool, arguments, why, covers) -> (answer, reason); None: no one
    audit_log: object = None            # a path, None for the default, or False for none
    confinement: object = None          # course.sandbox.confinement.Confinement; None or unavailable: nothing runs without a person
    approved: set = field(default_factory=set)  # (tool, exact subject) a person allowed always
    secrets_seen: set = field(default_factory=set)  # every secret file this run found: moved, it stays hidden

    @property
    def confined(self) -> bool:
        return bool(self.confinement is not None and self.confinement.available)

    def check(self, workspace: Path, name: str, arguments: dict) -> Verdict:
        """The verdict on one call, put to a person when the rules say ask, and audited. A path that
        leads out is refused before (course.sandbox.paths.Refused): an escape is no question for anyone."""
        call = self.read_call(workspace, name, arguments)
        verdict = decide(call, self.rules, self.approved)
        if verdict.decision == "ask":
            verdict = self.ask_person(call, arguments, verdict.why)
        self.audit(name, arguments, verdict)
        return verdict if verdict.decision == "allow" else replace(verdict, instead=INSTEAD[call.risk])
    # --8<-- [end:check]

    # --8<-- [start:read-call]
    def read_call(self, workspace: Path, name: str, arguments: dict) -> Call:
        """What the call acts on, read once by the support package: a command with the shell's grammar,
        a path with the resolver the file tools use (a link to .env is .env; so is a hard link of it)."""
        hidden = self.hidden(workspace)
        if name == "run_command":
            def denied(path: str) -> bool:  # a path operand a deny rule covers is not safe without a person
                return any(rule.decision == "deny" and rule.tool != "run_command" and rule.covers(name, path)
                           for rule in self.rules)  # a command rule names a program, never a path

            command = course.sandbox.shell_reading.read(workspace, arguments["command"], covered=denied, hidden=hidden)
            reason = self.confinement.reason if self.confinement is not None else "it was not probed"
            unconfined = "" if self.confined else f"kernel confinement is not available ({reason}), so no command runs without a person"
            unsafe = "; ".join(reason for reason in (command.unsafe, unconfined) if reason)  # every reason, for the person
            return Call(name, RISK[name], [command.text], refused=command.refused, command=command,
                        unsafe=unsafe, once_only=command.once_only)
        found = course.sandbox.paths.subjects(workspace, arguments, follow_link=name not in ACTS_ON_LINKS, hidden=hidden,
                                      covered=self.denied())
        risk = "destructive" if name == "write_file" and found.overwrites else RISK.get(name, "execute")
        # The harness's own files (transcripts, logs) and the Python that runs it: no rule, no person.
        harness = course.sandbox.paths.harness_problem(workspace, found.acted_on + found.leads_to, writes=name in CHANGES)
        refused = harness or found.same_file or course.sandbox.paths.too_much_to_write(arguments.get("content"))
        return Call(name, risk, found.acted_on, found.leads_to, refused=refused, runs_later=found.runs_later,
                    git_store=found.git_store)
    # --8<-- [end:read-call]

    # --8<-- [start:person]
    def ask_person(self, call: Call, arguments: dict, why: str) -> Verdict:
        """Put exactly this call to a person, saying what "always" would cover; with no one, deny."""
        # >>> exercise 2: Ask a person about exactly one thing
        if self.approver is None:
            return Verdict("deny", f"{why}, and there is no terminal to ask a person, so ask means deny", "no terminal")
        named = not call.once_only and not {"", "."} & set(call.acts_on)  # "." names no entry to approve
        subjects = list(call.acts_on) if named else []
        answer, reason = self.approver(call.tool, arguments, why, what_always_covers(call, subjects))
        if answer == "not asked":  # too long to show whole: no person saw it
            return Verdict("deny", f"{why}, and {reason}", "no terminal")
        if answer == "allow always" and subjects:  # exactly this command, or these entries together,
            self.approved.add(approval(call.tool, subjects))  # compared with == later: never a pattern
        if answer in ("allow once", "allow always"):
            return Verdict("allow", f"a person allowed it ({answer})", "person")
        return Verdict("deny", f"a person refused: {reason or 'no reason given'}", "person")
        # <<< exercise 2
    # --8<-- [end:person]

    def hidden(self, workspace: Path) -> list[Path]:
        """The files inside the workspace that a deny rule covers (.env at any depth), and their other
        names, each secret this run has seen wherever it now lies, and the harness's own files: a command
        is confined so that it cannot read them, and search_files skips them."""
        return ([path for path in course.sandbox.paths.covered_files(workspace, self.denied(), self.secrets_seen)
                 if not course.sandbox.paths.plain_git_config(path)]  # git cannot run without it: hidden if it holds a token
                + course.sandbox.paths.inside(workspace.resolve(), course.sandbox.paths.harness_files()))

    def denied(self) -> Callable[[str], bool]:
        """Whether a deny rule of the file tools covers a path (relative to the workspace), the globs in one expression."""
        return course.sandbox.paths.any_glob([pattern for rule in self.rules if rule.decision == "deny"
                                      and rule.tool != "run_command" and rule.fits("read_file")
                                      for pattern in (course.sandbox.paths.SECRET_GLOBS if rule.pattern == SECRET else [rule.pattern])])

    def audit(self, name: str, arguments: dict, verdict: Verdict) -> None:
        if self.audit_log is not False:
            course.runtime.runlog.append({"tool": name, "arguments": arguments, "rule": verdict.why, "decision": verdict.decision,
                                  "decided_by": verdict.decided_by}, self.audit_log or course.runtime.runlog.audit_path())


def what_always_covers(call: Call, subjects: list[str]) -> str:
    """The question's words for what "always" covers, so a person knows exactly what they approve."""
    if call.once_only:
        return f"once only: {call.once_only}"
    if call.tool == "run_command":
        return f"exactly the command {call.acts_on[0]!r} and nothing else"
    return f"{call.tool} on exactly {', '.join(repr(subject) for subject in subjects)}" if subjects else "once only"


def ask_on_terminal(tool: str, arguments: dict, why: str, covers: str) -> tuple[str, str]:
    """The person in 'ask', at a terminal (run() uses it only when there is one): the whole call, as
    data, wrapped by this program, with its length and every reason (course.sandbox.approval). A call too long
    to show on one screen is not asked about. An answer it cannot read is asked again; the end of
    input (Ctrl-D) is a no."""
    try:
        *question, prompt = course.sandbox.approval.screen(tool, arguments, why, covers)
    except course.sandbox.approval.TooLong as too_long:
        return "not asked", str(too_long)
    print("\n" + "\n".join(question))
    while True:
        try:
            typed = input(prompt)
        except EOFError:
            return "deny", "no answer"
        answer = read_answer(typed)
        if answer:
            return answer
        print("    answer o or y (once)" + ("" if covers.startswith("once only") else ", a (always)")
              + ", or n, no, or no followed by your reason")


ANSWER = re.compile(r"\s*(?P<word>[A-Za-z]+)(?:[\s,:;.!-]+(?P<reason>.*?))?\s*", re.S)


def read_answer(typed: str) -> tuple[str, str] | None:
    """A person's answer as people type it: "o", "once", "y", "yes"; "a", "always"; "n", "no",
    "no, REASON", "no REASON" (any case). None for anything else, which is asked again: "keep it"
    is not a no, and a typo of "yes" is not a yes."""
    match = ANSWER.fullmatch(typed)
    word, reason = (match["word"].lower(), match["reason"] or "") if match else ("", "")
    if word in ("o", "once", "y", "yes") and not reason:
        return "allow once", ""
    if word in ("a", "always") and not reason:
        return "allow always", ""
    if word in ("n", "no"):
        return "deny", reason
    return None
# --8<-- [end:gate]
