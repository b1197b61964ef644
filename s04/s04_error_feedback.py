# ---
# jupyter:
#   kernelspec:
#     display_name: Python (agent loop course)
#     language: python
#     name: agent-loop-course
# ---

# %% [markdown]
# # s04 · Error feedback
#
# A model reads the tool results, and nothing else, to decide its next move. Up to s03 a failure
# comes back as `Error: FileNotFoundError: ...`: the model learns that something went wrong, not
# what to do about it, and often sends the same call again. s04 makes every result structured
# and actionable: `{"ok": true, "output": ...}` on success; on failure an error type, a one-line
# message and a **hint** that names the next move, with `is_error` set.
#
# This notebook puts the bare error and the actionable one side by side, then looks at each kind
# of error s04 writes, at long outputs, and at tool calls that a model wrote as text. Everything
# runs offline unless you set an API key (see the s00 notebook).

# %%
import json
import os
import re
import tempfile
from pathlib import Path

import course
from s03 import agent as s03
from s04 import agent

# This notebook's runs go to a scratch runs log, so your own runs/runs.jsonl stays yours.
os.environ["AGENT_COURSE_RUNS_LOG"] = str(Path(tempfile.mkdtemp(prefix="s04-notebook-")) / "runs.jsonl")

SUMMARY_TASK = "Read memo.md and summarise it"
print("model in use:", course.resolve_model())

# %% [markdown]
# ## The code
#
# What this notebook runs is the dispatcher, `run_tool()`, which turns every failure into an error the model can act on. Here it is, read from `s04/agent.py` when this cell runs (not a
# copy: edit the file, restart the kernel, and this shows your version). The lines between
# `# >>> exercise` and `# <<< exercise` are the exercises of "Your turn", at the end.

# %%
import inspect

from IPython.display import Code

Code(inspect.getsource(agent.run_tool), language="python")

# %% [markdown]
# ## 1. The same typo, two kinds of error
#
# `offline-typo` asks for `memo.md` misspelled. It behaves like the models *Building an agent loop yourself: the minimal form of tool calling* describes: told
# only "Error", it tries the very same call again; told which names exist, it fixes the spelling.
# It decides from the words of the error alone. First s03, with its bare error:

# %%
bare = s03.run(SUMMARY_TASK, model="offline-typo", trace=course.TracePrinter())

# %% [markdown]
# Three identical calls, and s03's no-progress stop ends the run: the stop saved the bill, not the
# task. Now s04, same model, same task:

# %%
actionable = agent.run(SUMMARY_TASK, model="offline-typo", trace=course.TracePrinter())


# %% [markdown]
# The error said `nearest existing names: memo.md, todo.md`, and the next call was right. Side by
# side, for the typo and for the two other faulty callers (`offline-unknown-tool` calls a tool
# that does not exist, `offline-bad-args` sends arguments of the wrong shape):

# %%
def cost(result):
    return f"{result.stop_reason:<12} {result.turns:>5} {result.usage['input_tokens']:>12} {result.usage['output_tokens']:>13}"


print(f"{'model':<21} {'stage':<5} {'stop_reason':<12} {'turns':>5} {'input tokens':>12} {'output tokens':>13}")
for model in ("offline-typo", "offline-unknown-tool", "offline-bad-args"):
    for stage in (s03, agent):
        print(f"{model:<21} {stage.STAGE:<5} {cost(stage.run(SUMMARY_TASK, model=model))}")

# %% [markdown]
# With the bare error each run spends its turns and tokens and ends with nothing; with the
# actionable one, about the same spend buys the answer. An error message is part of the prompt:
# what the tools return decides how well the model does as much as the model itself.

# %% [markdown]
# ## 2. Every kind of error, by hand
#
# `agent.run_tool(workspace, name, arguments)` is the dispatcher: it returns the text for the model
# and `is_error`. Before a tool runs, s04 checks its name, then its arguments against the tool's
# `input_schema`. Each failure is one JSON object: `error` (a type a program can test), `message`
# (what happened) and `hint` (what to do next).

# %%
workspace = course.prepare_workspace()


def show_result(name, arguments):
    text, is_error = agent.run_tool(workspace, name, arguments)
    print(f"{name}({json.dumps(arguments)})  is_error={is_error}")
    for key, value in json.loads(text).items():
        print(f"    {key:8} {course.shorten(str(value), 110)}")


show_result("read_file", {"path": "memo.md"})   # success: ok and the output
show_result("read_text_file", {"path": "memo.md"})   # a tool that does not exist

# %%
show_result("read_file", {"file": "memo.md"})        # a wrong field name, the required one missing
show_result("read_file", {"path": 42})               # a number where a string is expected
show_result("read_file", "memo.md")                  # arguments that are not an object at all

# %%
show_result("read_file", {"path": "mmeo.md"})        # a missing path: the nearest names
show_result("read_file", {"path": "budget.xlsx"})    # nothing close: what to do instead
show_result("list_files", {"path": "memo.md"})       # a file where a folder is expected

# %% [markdown]
# The unknown tool gets the list of tools and the closest name; bad arguments get the field and
# what it should be; a missing path gets the nearest existing names, or, when nothing is close,
# the tool that shows what exists. No stack trace ever reaches the model.

# %% [markdown]
# ## 3. A long output: cut, with a marker, and read on
#
# Everything a tool returns stays in the history and is resent with every later call. s04 keeps
# at most `MAX_RESULT_CHARS` characters of a result and ends the cut one with a marker: how much
# is missing, and how to get it. Here is a file more than twice that long.

# %%
lines, size = [], 0
while size <= 2.5 * agent.MAX_RESULT_CHARS:
    lines.append(f"line {len(lines) + 1:04d}: the agent loop keeps going until the model stops asking for tools")
    size += len(lines[-1]) + 1
long_text = "\n".join(lines) + "\n"
(workspace / "long.txt").write_text(long_text, encoding="utf-8")
print("long.txt:", len(long_text), "characters; the limit is", agent.MAX_RESULT_CHARS)

first, _ = agent.run_tool(workspace, "read_file", {"path": "long.txt"})
output = json.loads(first)["output"]
print("returned:", len(output), "characters, ending with:")
print(output[-160:])

# %% [markdown]
# `read_file` takes an `offset` (s04 added it to the schema for this), and the marker says which
# one to pass. Following the markers, as a model would, gets the whole file back, piece by piece:

# %%
MARKER = re.compile(r"\n\[cut: \d+ of \d+ characters not shown; call read_file with offset=(\d+) to read on\]$")

pieces, offset = [], 0
while offset is not None:
    text, _ = agent.run_tool(workspace, "read_file", {"path": "long.txt", "offset": offset})
    output = json.loads(text)["output"]
    marker = MARKER.search(output)
    pieces.append(output[:marker.start()] if marker else output)
    print(f"offset {offset:>5}: {len(pieces[-1])} characters" + (f", marker says offset={marker[1]}" if marker else ", no marker: the end"))
    offset = int(marker[1]) if marker else None

print("the pieces make the whole file:", "".join(pieces) == long_text)

# %% [markdown]
# ## 4. Tool calls written as text
#
# *An AI agent is a while loop inside: built from scratch and measured how it breaks* ran small local models through Ollama: not one structured tool call in any run. The
# calls came back as JSON *text*, in four shapes: alone on a line, after a sentence, in a ```json
# fence, and in `<tool_call>` tags. A loop that ends on "no `tool_use`" takes such a reply for a final
# answer. `offline-text-calls` reproduces it; on s03:

# %%
REPORT_TASK = "List the files and write their count and names to report.txt"
as_text = s03.run(REPORT_TASK, model="offline-text-calls", trace=course.TracePrinter())
print("report.txt written:", (Path(as_text.workspace) / "report.txt").exists())

# %% [markdown]
# One turn, `end_turn`, nothing done. (Its second line is not even JSON: the model wrote Python that
# uses the listing before it has it.) s04 looks for calls in the text of a reply that has no
# `tool_use`, runs the ones that name a real tool with valid arguments, and tells the model in the
# next user message what it ran, and that the tool interface is the way to call:

# %%
recovered = agent.run(REPORT_TASK, model="offline-text-calls", trace=course.TracePrinter())
print("stop_reason:", recovered.stop_reason, "| transitions:", recovered.transitions)
print("report.txt written:", (Path(recovered.workspace) / "report.txt").exists())

# %% [markdown]
# The results go back as plain text blocks, not `tool_result`s: there is no `tool_use` id to answer,
# so the history stays valid for the real API. The transition is recorded as `text_calls_recovered`.
#
# Which text counts as a call is decided by `agent.calls_written_as_text`: a JSON object naming a tool
# that exists, with arguments that pass its schema. Here it is on the four shapes, and on texts
# that must not run anything:

# %%
TEXTS = {
    "raw, alone on a line": '{"name": "list_files", "arguments": {"path": "."}}',
    "after a sentence": 'There are 5 files, so I will write the report.\n'
                        '{"name": "write_file", "arguments": {"path": "report.txt", "content": "5 files"}}',
    "in a code fence": '```json\n{\n  "name": "read_file",\n  "arguments": {"path": "memo.md"}\n}\n```',
    "in <tool_call> tags": '<tool_call>\n{"name": "search_files", "arguments": {"text": "agent"}}\n</tool_call>',
    "an answer with a JSON example": 'config.json holds settings such as {"debug": true, "retries": 3}.',
    "a tool that does not exist": '{"name": "delete_everything", "arguments": {}}',
    "arguments that do not validate": '{"name": "read_file", "arguments": {"file": "memo.md"}}',
    "Python, not JSON": '{"name": "write_file", "arguments": {"path": "r.txt", "content": "n=" + str(len(files))}}',
}
for shape, text in TEXTS.items():
    print(f"{shape:<32} -> {agent.calls_written_as_text(text)}")

# %% [markdown]
# The rule has a limit worth knowing: an answer that *shows* a valid call as an example, say
# `{"name": "read_file", "arguments": {"path": "memo.md"}}` in a how-to, would be run. Here that only
# reads a file; s06 puts every call, written as text or not, through the same permission gate.

# %% [markdown]
# ## 5. A reply cut at `max_tokens`, recovered
#
# s03 ends the run on any cut reply. `offline-verbose` thinks aloud for over a thousand tokens
# before each call, so at `max_tokens=1024` its call never arrives. s04 asks again with twice the
# room (up to `MAX_TOKENS_CEILING`), as Anthropic's documentation on stop reasons advises. The
# notes of the trace say when:

# %%
TOTAL_TASK = "Read sample.txt and compute the total price"
print("s03:", s03.run(TOTAL_TASK, model="offline-verbose").explanation)
notes = []
verbose = agent.run(TOTAL_TASK, model="offline-verbose",
                    trace=lambda kind, payload: notes.append(payload) if kind == "note" else None)
print("s04:", verbose.stop_reason, "| turns:", verbose.turns, "| answer ends:", verbose.answer[-40:])
print(*notes, sep="\n")

# %% [markdown]
# A reply can also be cut *after* a whole call: a small local model wrote one valid call, then
# kept writing until the cut. The call before the cut is whole, so s04 runs it without asking
# again. A scripted model shows it (the offline model cuts its reply at the request's
# `max_tokens`); and a reply that copies its prompt back is explained as what it is:

# %%
from course.offline import Reply

def rambling(body):
    if len(body["messages"]) > 1:
        return Reply().text("There are five files.")
    return Reply().text("I'll list the files.").call("list_files", path=".").text("and then some more, " * 500)

ran = agent.run("List the files", client=course.make_client(behaviour=rambling), model="offline")
print("whole call then rambling:", ran.stop_reason, "| first result:", ran.messages[2]["content"][0]["content"][:60])

def echo(body):
    return Reply().text((body["system"] + " " + body["messages"][0]["content"] + " ") * 100)

echoed = agent.run("List the files", client=course.make_client(behaviour=echo), model="offline")
print("an echo of the prompt:   ", echoed.stop_reason, "|", echoed.explanation)

# %% [markdown]
# ## Run it on Claude (or a local model)
#
# Claude calls tools through `tool_use` blocks and rarely misspells a path, so the faulty callers
# above are offline models on purpose. With `ANTHROPIC_API_KEY` set, the cell below asks Claude for
# a file that does not exist and prints what s04 told it and what it did next; otherwise it does
# nothing. A small local model through `ANTHROPIC_BASE_URL` is where text calls show up for real.

# %%
if os.environ.get("ANTHROPIC_API_KEY"):
    claude_model = os.environ.get("MODEL_ID") or course.DEFAULT_CLAUDE_MODEL
    on_claude = agent.run("Summarise notes.md", client=course.make_client(claude_model), model=claude_model,
                          trace=course.TracePrinter())
    print("stop_reason:", on_claude.stop_reason, "| turns:", on_claude.turns)
else:
    print("ANTHROPIC_API_KEY is not set: this cell does nothing, and the notebook stays offline.")

# %% [markdown]
# ## Your turn
#
# The exercises of this stage are the regions of `s04/agent.py` marked `# >>> exercise N`:
# 1. *Refuse an unknown tool or bad arguments, saying how to fix the call* (`call_tool`);
# 2. *Cut a long result with a marker that says how to see the rest* (`cut_to_fit`).
#
# In a terminal, from the repository's root, these two commands write your own copy with those
# regions emptied (the first) and grade it (the second):
#
# ```bash
# .venv/bin/python -m course exercise s04 my-s04
# .venv/bin/python -m course check s04 my-s04
# ```
#
# The chapter's exercise section has hints.
