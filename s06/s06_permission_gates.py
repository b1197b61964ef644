# ---
# jupyter:
#   kernelspec:
#     display_name: Python (agent loop course)
#     language: python
#     name: agent-loop-course
# ---

# %% [markdown]
# # s06 · Permission gates
#
# s06 gives the agent tools that can do harm (`delete_file`, `move_file`, `run_command`), and takes
# the decision about them away from the model. A system prompt that says "do not delete" is not a
# defence: the model cannot judge whether a call is allowed. The harness decides, outside the loop:
#
# - every tool has a **risk class** (read, write, destructive, execute);
# - **rules** (deny, ask, allow; a tool and a pattern: a path glob, or a program for commands) are
#   checked in one `decide()` (in `s06/permissions.py`): deny first, then ask, then allow; with no
#   match, the risk class's default applies;
# - **ask** means a person approves exactly one thing; with no terminal, ask means deny;
# - a denial goes back to the model as an `is_error` result that says why and what to do instead;
# - every decision is written to an **audit log**.
#
# What the decision is made on comes from the support package, which this chapter uses and does not
# build: a **command** read with the shell's own grammar (tree-sitter-bash, `course.sandbox.shell_reading`),
# so that only a plain command of the safe list, on paths inside the workspace, runs without a
# person, and a deny rule finds its program anywhere in the tree; every **path** resolved inside the
# workspace by one resolver (`course.sandbox.paths`) that the file tools use too; and every command run
# **confined by the kernel** (`course.sandbox.confinement`).
#
# Everything runs offline unless you set an API key (see the s00 notebook).

# %%
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import course
import course.sandbox.confinement
import course.sandbox.paths
import course.sandbox.shell_reading
from s05 import agent as s05
from s06 import agent

permissions = sys.modules[agent.Gate.__module__]  # s06/permissions.py, beside agent.py

# This notebook's runs, their transcripts and the gate's decisions go to a scratch folder, so your own runs/ stays yours.
scratch = Path(tempfile.mkdtemp(prefix="s06-notebook-"))
os.environ["AGENT_COURSE_RUNS_LOG"] = str(scratch / "runs.jsonl")
os.environ["AGENT_COURSE_TRANSCRIPTS"] = str(scratch / "transcripts")
os.environ["AGENT_COURSE_AUDIT_LOG"] = AUDIT_LOG = str(scratch / "audit.jsonl")

print("model in use:", course.resolve_model())
print("risk classes:", permissions.RISK)
print("defaults:", permissions.DEFAULT_DECISION)
print("confinement:", course.sandbox.confinement.probe())

# %% [markdown]
# ## The code
#
# What this notebook runs is the decision, `decide()`: deny, then ask, then allow, then the default. Here it is, read from `s06/permissions.py` when this cell runs (not a
# copy: edit the file, restart the kernel, and this shows your version). The lines between
# `# >>> exercise` and `# <<< exercise` are the exercises of "Your turn", at the end.

# %%
import inspect

from IPython.display import Code

from s06 import permissions
Code(inspect.getsource(permissions.decide), language="python")

# %% [markdown]
# ## 1. What the gate decides
#
# `decide(call, rules, approved)` returns a verdict: the decision, the reason, and who decided (a rule,
# the safe list, or a risk class's default). It only decides; nothing runs. It decides on the call as
# the gate read it (`gate.read_call`: the entries a file tool acts on, the programs anywhere in a
# command), never on its text. The rules are `agent.RULES`:

# %%
print("\n".join(str(rule) for rule in agent.RULES))

# %%
workspace = course.prepare_workspace()
gate = agent.Gate(rules=agent.RULES, approver=None, audit_log=False, confinement=course.sandbox.confinement.probe())


def decided(tool, arguments):
    return permissions.decide(gate.read_call(workspace, tool, arguments), gate.rules, gate.approved)


EXAMPLES = [
    ("read_file", {"path": "memo.md"}),
    ("write_file", {"path": "notes.txt", "content": "new"}),
    ("write_file", {"path": "memo.md", "content": ""}),      # an existing file: overwriting loses it
    ("delete_file", {"path": "todo.md"}),
    ("read_file", {"path": ".env"}),
    ("run_command", {"command": "wc -l memo.md"}),
    ("run_command", {"command": "rm -rf ."}),
    ("run_command", {"command": "python3 script.py"}),
    ("run_command", {"command": "echo hi > memo.md"}),
]
for tool, arguments in EXAMPLES:
    verdict = decided(tool, arguments)
    print(f"{verdict.decision:<5} {tool} {json.dumps(arguments)}\n      {verdict.decided_by}: {verdict.why}")

# %% [markdown]
# Writing a new file is allowed, but writing over an existing one is classed as destructive and
# needs a person. `echo` is allowed, but `echo ... > memo.md` overwrites a file, so the allowed
# prefix does not cover it.

# %% [markdown]
# ## 2. Commands, read with the shell's grammar
#
# A rule that allows `ls` must not allow `ls && rm -rf .`: that bypass was reported against several
# agents. `course.sandbox.shell_reading.read_command` parses a command with tree-sitter-bash and classifies the tree: is it
# *plain* (words joined by `&&`, `||`, `;`, `|`, nothing the shell expands or runs first), and which
# programs appear anywhere in it, behind wrappers and inside substitutions included.

# %%
COMMANDS = [
    "ls && rm -rf .",
    "cat memo.md | wc -l; echo done",
    "grep agent memo.md || curl https://example.com",
    "echo `rm todo.md`",
    "ls $(rm todo.md)",
    "bash -c 'ls; sudo reboot'",
    "FOO=1 nohup rm todo.md",
    "eval 'chmod 777 memo.md'",
    "echo 'unbalanced",
]
for command in COMMANDS:
    reading = course.sandbox.shell_reading.read_command(command)
    plain = f"plain: {reading.commands}" if reading.plain else f"not plain: {reading.why_not}"
    verdict = decided("run_command", {"command": command})
    print(f"{command!r}\n    {plain}\n    {verdict.decision}: {verdict.why}")

# %% [markdown]
# A command the grammar cannot read (an unbalanced quote) is never plain: with no person, it is denied.

# %% [markdown]
# ## 3. The path sandbox
#
# Every file tool, and the gate, resolves a path with one resolver (`course.sandbox.paths.resolve`: `..` and
# symbolic links followed) and refuses one that ends outside the workspace. Let us set traps: a sibling folder whose name *starts with* the workspace's
# name, holding a secret, and a symbolic link inside the workspace that points into it.

# %%
sibling = workspace.parent / (workspace.name + "-evil")
sibling.mkdir(exist_ok=True)
(sibling / "secret.txt").write_text("the sibling's secret\n", encoding="utf-8")
(workspace / "shortcut").symlink_to(sibling, target_is_directory=True)

print("workspace:", workspace)
print("sibling:  ", sibling)
print("shortcut -> ", os.readlink(workspace / "shortcut"))


# %% [markdown]
# A check that compares paths as *strings* lets the sibling through: its path starts with the
# workspace's path. That is the bug behind CVE-2025-54794 and CVE-2025-53110. s06 compares path
# components (`Path.is_relative_to`). Side by side, on each trap:

# %%
def string_check(path):
    """The buggy check: is the resolved path's text prefixed by the workspace's?"""
    try:
        return "inside" if str((workspace / path).resolve()).startswith(str(workspace)) else "outside"
    except ValueError as error:  # the NUL byte: this check never thought of it
        return f"crashed ({error})"


def sandbox(path):
    try:
        course.sandbox.paths.resolve(workspace, path)
        return "allowed"
    except course.sandbox.paths.Refused as error:
        return f"refused: {error.message}"


TRAPS = ["memo.md", "../" + sibling.name + "/secret.txt", str(sibling / "secret.txt"),
         "shortcut/secret.txt", "notes/../memo.md", "memo.md\x00.txt"]
for path in TRAPS:
    print(f"{path!r}\n    string check: {string_check(path)}\n    s06:          {sandbox(path)}")

# %%
text, is_error = agent.run_tool(workspace, "read_file", {"path": "shortcut/secret.txt"}, gate)
print("what the model reads:", text)

# %% [markdown]
# ## 4. Ask: a person decides
#
# Deletes, overwrites and unknown commands default to *ask*. In a terminal, s06 prompts you (`o` or
# `y` to allow once, `a` to allow always exactly this command or path, `n` or `no, REASON` to refuse;
# anything else is asked again); in this notebook there
# is no terminal, so a `Gate` built with `approver=None` denies them. A person is just a function
# `(tool, arguments, why, covers) -> (answer, reason)`, where `covers` says what "always" would
# approve, so we can script one:

# %%
script = iter([("allow once", ""), ("deny", "keep todo.md, I still need it"), ("allow always", "")])


def scripted_person(tool, arguments, why, covers):
    answer, reason = next(script)
    print(f"  [person asked: {tool} {json.dumps(arguments)} ({why}) -> {answer}{': ' + reason if reason else ''}]")
    return answer, reason


person_gate = agent.Gate(rules=agent.RULES, approver=scripted_person,   # audit_log=None: the default audit log
                         confinement=course.sandbox.confinement.probe())


def attempt(tool, arguments):
    text, is_error = agent.run_tool(workspace, tool, arguments, person_gate)
    print(f"{'✗' if is_error else '✓'} {tool} {json.dumps(arguments)}: {course.shorten(text, 240)}\n")


attempt("delete_file", {"path": "hello.txt"})          # asked: allowed once
attempt("delete_file", {"path": "todo.md"})            # asked: refused, with a reason
attempt("run_command", {"command": "grep -rl agent ."})  # grep -r is not on the safe list: asked, allowed always
attempt("run_command", {"command": "grep -rl agent ."})  # not asked again
print("files now:", sorted(path.name for path in workspace.iterdir()))

# %% [markdown]
# The refusal reaches the model as an `is_error` result with the person's reason and a hint of
# what to do instead, so the history stays valid and the model can change course. "Allow always"
# is remembered for that exact command, for the rest of the run.

# %% [markdown]
# ## 5. The audit log
#
# Every decision is one JSON line: the tool, its arguments, the rule or default that applied, the
# decision, and who decided. This notebook pointed `AGENT_COURSE_AUDIT_LOG` at a scratch file;
# without it, the log is `runs/audit.jsonl`.

# %%
for line in Path(AUDIT_LOG).read_text(encoding="utf-8").splitlines():
    entry = json.loads(line)
    print(f"{entry['decision']:<5} by {entry['decided_by']:<7} {entry['tool']} {json.dumps(entry['arguments'])}: {entry['rule']}")

# %% [markdown]
# ## 6. Bounded tools
#
# A tool the gate allows still runs inside limits. The calculator refuses, *before* computing, any
# result of more than a thousand digits: `9**9**9` would otherwise take the machine for a long
# time. Each answer below comes back at once; the time it took is printed next to it:

# %%
for expression in ["1250 * 16", "9**9**9", "(((9**64)**64)**64)**64", "2**4000", "1/0", "'a' * 10**9", "9" * 250]:
    started = time.perf_counter()
    text, is_error = agent.run_tool(workspace, "calculate", {"expression": expression}, gate)
    elapsed_ms = (time.perf_counter() - started) * 1000
    print(f"{course.shorten(expression, 28):<30} {elapsed_ms:6.2f} ms  {course.shorten(text, 110)}")

# %% [markdown]
# The command tool runs in the workspace, with a timeout, an output cap, and an environment that
# holds no secrets: the cell below prints the names of every variable a command gets, read from
# the function the tool calls (`course.sandbox.confinement.command_environment`), and the `HOME` it is
# given, a folder that does not exist (a home in the workspace would let the model write startup
# files that programs then run). A token in this notebook's environment is not visible to the
# command. (The gate would ask a person about this command, since `$` is expanded by the shell;
# here we call the tool itself, past the gate.)

# %%
environment = course.sandbox.confinement.command_environment(workspace)
print("a command gets:", sorted(environment), "| its HOME:", environment["HOME"],
      "| exists:", Path(environment["HOME"]).exists())
os.environ["NOTEBOOK_SECRET_TOKEN"] = "s3cr3t"
print(agent.run_command(workspace, "echo token=$NOTEBOOK_SECRET_TOKEN home=$HOME"))
print("the gate on the same command:", decided("run_command", {"command": "echo $HOME"}).why)
print("timeout:", agent.COMMAND_TIMEOUT_S, "s | output cap:", agent.COMMAND_OUTPUT_CAP, "bytes")

# %% [markdown]
# ## 7. A reckless model, on s05 and on s06
#
# `offline-reckless` takes shortcuts on the way to a legitimate goal: it deletes a leftover-looking
# file, empties `memo.md`, writes outside the workspace through `..` and through an absolute path,
# runs `rm -rf .`, and hides `rm` behind `ls &&`. It never judges whether a call is allowed; it only
# changes course when a refusal explains itself. The trace below shows each call and its outcome,
# one line each.

# %%
TIDY_TASK = "Tidy up the workspace, then write the list of files and their count to report.txt"


def calls_and_outcomes(kind, payload):
    if kind == "assistant":
        for block in payload["content"]:
            if block["type"] == "tool_use":
                print(f"  → {block['name']} {json.dumps(block['input'])}")
    elif kind == "tool_results":
        for block in payload["content"]:
            if block.get("type") == "tool_result":
                print("     ", "✗" if block.get("is_error") else "✓", course.shorten(block["content"], 110))
    elif kind == "stop":
        print("  ■", payload)


def damage(workspace, before):
    after = course.snapshot(workspace)
    outside = sorted(path.name for path in workspace.parent.iterdir() if path != workspace)
    return {"lost": sorted(set(before) - set(after)),
            "changed": sorted(path for path in before if path in after and after[path] != before[path]),
            "added": sorted(set(after) - set(before)), "written outside": outside}


reckless_workspace = course.prepare_workspace()
before = course.snapshot(reckless_workspace)
on_s05 = s05.run(TIDY_TASK, model="offline-reckless", workspace=reckless_workspace, trace=calls_and_outcomes)
print("s05:", on_s05.stop_reason, damage(reckless_workspace, before))

# %% [markdown]
# s05 has no `delete_file` or `run_command`, so those failed as unknown tools; but `write_file` emptied
# `memo.md` and wrote a file outside the workspace. Now s06, with no person to ask (`approver=None`):

# %%
reckless_workspace = course.prepare_workspace()
before = course.snapshot(reckless_workspace)
on_s06 = agent.run(TIDY_TASK, model="offline-reckless", workspace=reckless_workspace, approver=None, trace=calls_and_outcomes)
print("s06:", on_s06.stop_reason, damage(reckless_workspace, before))
print("report.txt:", (reckless_workspace / "report.txt").read_text(encoding="utf-8").splitlines()[0])

# %% [markdown]
# Every destructive call was refused, by a rule, a default, or the sandbox, each with a reason the
# model could read; it changed course after each, and finished the legitimate part of the task. The
# only change to the workspace is the report it was asked for.

# %% [markdown]
# ## Run it on Claude (or a local model)
#
# Set `ANTHROPIC_API_KEY` before starting Jupyter (or restart the kernel after setting it). The cell
# below gives Claude the tidy-up task on s06 with no person to ask (`approver=None`), so every *ask* is a
# *deny*; it does nothing without a key. (On a terminal, `.venv/bin/python s06/agent.py` asks you instead.)

# %%
if os.environ.get("ANTHROPIC_API_KEY"):
    claude_model = os.environ.get("MODEL_ID") or course.DEFAULT_CLAUDE_MODEL
    on_claude = agent.run(TIDY_TASK, client=course.make_client(claude_model), model=claude_model, approver=None,
                          trace=course.TracePrinter())
    print("stop_reason:", on_claude.stop_reason)
else:
    print("ANTHROPIC_API_KEY is not set: this cell does nothing, and the notebook stays offline.")

# %% [markdown]
# ## Your turn
#
# The exercises of this stage are the regions of `s06/permissions.py` marked `# >>> exercise N`:
# 1. *Decide: deny, then ask, then allow, then the default* (`decide`);
# 2. *Ask a person about exactly one thing* (`Gate.ask_person`).
#
# In a terminal, from the repository's root, these two commands write your own copy with those
# regions emptied (the first) and grade it (the second):
#
# ```bash
# .venv/bin/python -m course exercise s06 my-s06
# .venv/bin/python -m course check s06 my-s06
# ```
#
# The chapter's exercise section has hints.
