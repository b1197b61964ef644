# ---
# jupyter:
#   kernelspec:
#     display_name: Python (agent loop course)
#     language: python
#     name: agent-loop-course
# ---

# %% [markdown]
# # s00 · One call
#
# A model cannot act. It reads a request and writes a reply; at most, the reply *asks* for an
# action. In this notebook you make that request yourself, run the action it asks for with
# your own code, send the result back, and watch what breaks when one round trip is all there is.
#
# Run the cells from top to bottom (Shift+Enter). Everything runs on the course's offline model,
# a stand-in that speaks the real Messages API inside this process: no key, no network, and the
# same reply every time. Its default, the model id `offline`, is what the course calls **the
# tutor**: a competent model for a fixed set of tasks (list the files, read and summarise a file,
# write a report of the listing, compute a total from a file, find text), which says why before
# each tool call. Other offline ids misbehave on purpose, one way each, for the later stages.
# The last section shows how to switch to Claude.

# %%
import anthropic
import course
from s00 import agent

model = course.resolve_model()      # "offline" unless ANTHROPIC_API_KEY or MODEL_ID says otherwise
client = course.make_client(model)  # a real anthropic.Anthropic client
workspace = course.prepare_workspace()  # a fresh copy of the sample project to work on

print("model in use:", model)
print("client:", type(client))
print("workspace:", workspace)
print("its files:", agent.list_files(workspace).split())  # a tool is a plain function

# %% [markdown]
# ## The code
#
# What this notebook builds is the dispatcher, `run_tool()` and `tool_result()`, and the one round
# trip, `run()`, with its five numbered steps. Here they are, read from `s00/agent.py` when this cell runs (not a
# copy: edit the file, restart the kernel, and this shows your version). The lines between
# `# >>> exercise` and `# <<< exercise` are the exercises of "Your turn", at the end.

# %%
import inspect

from IPython.display import Code

Code(inspect.getsource(agent.run_tool) + "\n\n" + inspect.getsource(agent.tool_result) + "\n\n"
     + inspect.getsource(agent.run), language="python")

# %% [markdown]
# ## 1. One call, with a tool table
#
# Next to the task, the request carries a system prompt and the **tool table**: for each tool, a
# name, a description written for the model, and a JSON schema of its input. The model never
# sees our Python functions, only this table.

# %%
for tool in agent.TOOLS:
    print(f"{tool['name']}({', '.join(tool['input_schema']['properties'])})")
    print("   ", tool["description"])


# %%
def show(reply):
    """Print a reply block by block, then why the model stopped."""
    for block in reply.content:
        if block.type == "text":
            print("text     ", block.text)
        elif block.type == "tool_use":
            print("tool_use ", f"id={block.id}", f"name={block.name}", f"input={block.input}")
    print("stop_reason:", reply.stop_reason)


TASK = 'Which files mention "agent"?'
reply = client.messages.create(
    model=model,
    max_tokens=agent.MAX_TOKENS,
    system=agent.SYSTEM_PROMPT,
    tools=agent.TOOLS,
    messages=[{"role": "user", "content": TASK}],
)
show(reply)

# %% [markdown]
# The reply is two blocks: a sentence saying why, then a `tool_use` block with the tool's name,
# its input, and an **id**. `stop_reason` is `"tool_use"`: the model has stopped to wait for a
# result. Nothing has been searched yet: the model only asked.

# %% [markdown]
# ## 2. Run the tool yourself
#
# The dispatcher, `agent.run_tool`, looks the name up in `TOOL_FUNCTIONS` and calls our function
# with the model's input. It returns the text for the model and whether it is an error; a
# failure is reported, never raised.

# %%
call = next(block for block in reply.content if block.type == "tool_use")
text, is_error = agent.run_tool(workspace, call.name, call.input)
print("is_error:", is_error)
print(text)

# %%
# A tool the model invents is an error to report back, not a crash.
agent.run_tool(workspace, "delete_everything", {})

# %% [markdown]
# `agent.tool_result` wraps the output in the block that answers the call. Its `tool_use_id` is
# the thread between request and answer: it names the `tool_use` this result belongs to.

# %%
result_block = agent.tool_result(workspace, call)
result_block

# %% [markdown]
# ## 3. Send the result back
#
# The API keeps no memory between calls: the history *is* the conversation, and every call sends
# all of it. Here that is three messages: the task, the model's reply with all of its blocks, and
# a user message that starts with the `tool_result`.

# %%
messages = [
    {"role": "user", "content": TASK},
    agent.assistant_message(reply),         # the reply goes into the history as it came
    {"role": "user", "content": [result_block]},  # answering its tool_use id
]
second = client.messages.create(model=model, max_tokens=agent.MAX_TOKENS, system=agent.SYSTEM_PROMPT,
                                tools=agent.TOOLS, messages=messages)
show(second)

# %% [markdown]
# This time the answer is built from the tool's result, and `stop_reason` is `"end_turn"`: the
# model is done. That is one round trip: the model asks, our code acts, the model answers.

# %% [markdown]
# ## 4. Forget the tool_result
#
# What if we send the reply back without answering its `tool_use`? The API refuses the whole
# request with a 400. The offline model checks requests the way the real API does and answers with
# the same status and the same error text, so a history that breaks here would break on Claude too.

# %%
forgetful = [
    {"role": "user", "content": TASK},
    agent.assistant_message(reply),
    {"role": "user", "content": "Go on."},  # no tool_result for the tool_use id
]
try:
    client.messages.create(model=model, max_tokens=agent.MAX_TOKENS, system=agent.SYSTEM_PROMPT,
                           tools=agent.TOOLS, messages=forgetful)
except anthropic.BadRequestError as error:
    print(error.status_code, error.body["error"]["type"])
    print(error.body["error"]["message"])

# %% [markdown]
# The rule: every `tool_use` id gets its `tool_result`, at the start of the very next user message.
# Every stage of the course keeps it, whatever else goes wrong.

# %% [markdown]
# ## 5. s00's `run`: the round trip as code, and where it falls short
#
# `agent.run` does what you just did by hand: ask, run the requested tools, send the results back
# once, ask again. Give it the report task of *An AI agent is a while loop inside: built from scratch and measured how it breaks*, which needs two tools in a row: `list_files`, then
# `write_file`.

# %%
from pathlib import Path

REPORT_TASK = "List the files and write their count and names to report.txt"
result = agent.run(REPORT_TASK, client=client, model=model, trace=course.TracePrinter())

# %%
print("stop_reason:", result["stop_reason"], "| model calls:", result["turns"])
print("report.txt exists:", (Path(result["workspace"]) / "report.txt").exists())
last = result["messages"][-1]
print("left unanswered:", [(block["name"], block["id"]) for block in last["content"] if block["type"] == "tool_use"])

# %% [markdown]
# The second reply asks for `write_file`, but s00 has no second round trip. The run ends with
# `stop_reason` `"tool_use"`, a request nobody answers, and no `report.txt`. Work that takes more
# than one step needs a loop: that is s01.

# %% [markdown]
# ## Run it on Claude (or a local model)
#
# Nothing above names a model: they all ask `course.resolve_model()`. To use Claude, set
# `ANTHROPIC_API_KEY` in the environment before starting Jupyter (or restart the kernel after
# setting it); every cell above then runs on Claude. `MODEL_ID=claude-...` picks another model, and
# in code `course.make_client("claude-...")` with `agent.run(..., model="claude-...")` picks one
# for a single run. For a local server that speaks the Messages API (Ollama 0.14 or newer), set
# `ANTHROPIC_BASE_URL` and `MODEL_ID`. Expect other wording and perhaps other steps: the structure,
# blocks and ids and stop reasons, stays the same.
#
# The cell below runs the report task on Claude when a key is set, and does nothing otherwise.

# %%
import os

if os.environ.get("ANTHROPIC_API_KEY"):
    claude_model = os.environ.get("MODEL_ID") or course.DEFAULT_CLAUDE_MODEL
    claude = course.make_client(claude_model)
    on_claude = agent.run(REPORT_TASK, client=claude, model=claude_model, trace=course.TracePrinter())
    print("stop_reason:", on_claude["stop_reason"])
else:
    print("ANTHROPIC_API_KEY is not set: this cell does nothing, and the notebook stays offline.")

# %% [markdown]
# ## Your turn
#
# The exercises of this stage are the regions of `s00/agent.py` marked `# >>> exercise N`:
# 1. *Dispatch a tool call by name* (`run_tool`);
# 2. *Answer a tool_use with its tool_result* (`tool_result`).
#
# In a terminal, from the repository's root, these two commands write your own copy with those
# regions emptied (the first) and grade it (the second):
#
# ```bash
# .venv/bin/python -m course exercise s00 my-s00
# .venv/bin/python -m course check s00 my-s00
# ```
#
# The chapter's exercise section has hints.
