# ---
# jupyter:
#   kernelspec:
#     display_name: Python (agent loop course)
#     language: python
#     name: agent-loop-course
# ---

# %% [markdown]
# # s01 · The closed loop
#
# s00 stopped after one round trip, with the model's second request left unanswered. s01 wraps the
# round trip in a `while` loop: ask, record the reply, run every tool it asks for, write every
# result back, and ask again, until a reply asks for no tool.
#
# This notebook runs the loop, opens up the history it builds, and then looks at its two costs:
# every call resends the whole history, and the loop ends only when the model says so.
# Everything runs offline unless you set an API key (see the s00 notebook).

# %%
from pathlib import Path

import course
from s01 import agent

REPORT_TASK = "List the files and write their count and names to report.txt"
print("model in use:", course.resolve_model())

# %% [markdown]
# ## The code
#
# What this notebook runs is the loop, `run()`: s00's five steps inside `while True`. Here it is, read from `s01/agent.py` when this cell runs (not a
# copy: edit the file, restart the kernel, and this shows your version). The lines between
# `# >>> exercise` and `# <<< exercise` are the exercises of "Your turn", at the end.

# %%
import inspect

from IPython.display import Code

Code(inspect.getsource(agent.run), language="python")

# %% [markdown]
# ## 1. The five steps, one at a time
#
# Before running the loop whole, take one run through it by hand: the same calls `run()` makes, a
# cell for each step, on the report task. The cell after the five goes round the same steps again
# until step 3 finds no call: that is the `while` loop of `run()`, above.

# %%
model = course.resolve_model()
client = course.make_client(model)
workspace = course.prepare_workspace()  # a fresh copy of the sample project
messages = [{"role": "user", "content": REPORT_TASK}]
turn = 0

# %%
reply = agent.ask(client, model, messages)                  # 1. ask: the whole history goes out
turn += 1
print(f"turn {turn}: stop_reason={reply.stop_reason}, {reply.usage.input_tokens} input tokens")

# %%
messages.append(agent.assistant_message(reply))            # 2. record the reply, all its blocks
print([block["type"] for block in messages[-1]["content"]])

# %%
calls = agent.tool_calls(reply)                             # 3. does it ask for tools?
print([(call.name, call.input) for call in calls] or "no tool call: the loop would break here")

# %%
results = [agent.tool_result(workspace, call) for call in calls]  # 4. act, on every call
for result_block in results:
    print(course.shorten(result_block["content"], 100), "| is_error:", result_block["is_error"])

# %%
messages.append({"role": "user", "content": results})       # 5. write every result back
print(len(messages), "messages in the history; the next call sends them all")

# %% [markdown]
# That was one turn. The loop repeats the same five steps until step 3 finds no call. Here they are
# again, for the turns that are left of this very run:

# %%
while calls:
    reply = agent.ask(client, model, messages)                                   # 1.
    turn += 1
    messages.append(agent.assistant_message(reply))                             # 2.
    calls = agent.tool_calls(reply)                                              # 3.
    print(f"turn {turn}: {[call.name for call in calls] or 'no tool call: done'}")
    if calls:
        messages.append({"role": "user", "content": [agent.tool_result(workspace, call) for call in calls]})  # 4. and 5.
print("answer:", agent.text_of(reply))
print("--- report.txt ---")
print((workspace / "report.txt").read_text())

# %% [markdown]
# ## 2. Run the loop
#
# The same task, now by `run()`, the loop above in one call: the task that s00 could not finish.
# `course.TracePrinter()` prints each turn: the model's text, each tool call (→) and each result (←).

# %%
result = agent.run(REPORT_TASK, trace=course.TracePrinter())

# %%
print("stop_reason:", result["stop_reason"], "| model calls:", result["turns"])
print("answer:", result["answer"])
print("--- report.txt ---")
print((Path(result["workspace"]) / "report.txt").read_text())


# %% [markdown]
# Three calls: `list_files`, then `write_file`, then a reply with no tool, which ends the loop with
# `stop_reason` `"end_turn"`. The loop decided nothing; it ran what was asked until nothing was.

# %% [markdown]
# ## 3. Inside the history
#
# The result keeps the whole history, `result["messages"]`. One line a block: every `tool_use`
# carries an id, and the next user message answers it with a `tool_result` naming that id.

# %%
def show_history(messages):
    """Each message's role and blocks; tool_use and tool_result show the id that pairs them."""
    for index, message in enumerate(messages):
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for position, block in enumerate(blocks):
            head = f"{index}  {message['role']:9}" if position == 0 else " " * 12
            if block["type"] == "text":
                print(head, "text       ", course.shorten(block["text"], 60))
            elif block["type"] == "tool_use":
                print(head, "tool_use   ", block["id"], block["name"])
            elif block["type"] == "tool_result":
                print(head, "tool_result", block["tool_use_id"], "← answers it")


show_history(result["messages"])


# %%
def tool_use_ids(messages):
    return [block["id"] for message in messages if message["role"] == "assistant"
            for block in message["content"] if block["type"] == "tool_use"]


def tool_result_ids(messages):
    return [block["tool_use_id"] for message in messages
            if message["role"] == "user" and isinstance(message["content"], list)
            for block in message["content"] if block["type"] == "tool_result"]


print("every tool_use answered, in order:", tool_use_ids(result["messages"]) == tool_result_ids(result["messages"]))

# %% [markdown]
# ## 4. Parallel calls
#
# When two steps do not depend on each other, a model may ask for both in one reply. The loop
# already handles it: it runs *every* call of the reply and sends all the results back together,
# in one user message, one `tool_result` per id.

# %%
parallel = agent.run("Summarise memo.md and hello.txt", trace=course.TracePrinter())

# %%
show_history(parallel["messages"])

# %% [markdown]
# One assistant message with two `tool_use` blocks, one user message with two `tool_result`s.
# Sending them as two separate user messages would break s00's rule: both ids must be answered at
# the start of the very next message.

# %% [markdown]
# ## 5. Any language
#
# Nothing in the loop knows what the task says. Here is the report task in Japanese.

# %%
japanese = agent.run("ファイルを一覧して、ファイル数と名前を report.txt に書いてください", trace=course.TracePrinter())
print("--- report.txt ---")
print((Path(japanese["workspace"]) / "report.txt").read_text())


# %% [markdown]
# ## 6. What each turn costs
#
# The model remembers nothing between calls, so the loop sends the whole history every time: the
# system prompt, the tool table and every message so far. Each call's input is therefore the
# previous call's input plus what was added since, and the input billed over a run grows with the
# square of its turns.
#
# To see it, wrap the client's `create` so that each call's `usage` is kept; `agent.run` calls it
# without knowing. (The offline model's token counts are a documented estimate, about four bytes a
# token, see `course/offline/tokens.py`; real counts differ, and grow the same way.)

# %%
def record_usage(client):
    """Wrap client.messages.create; return the list where each call's usage will be kept."""
    calls = []
    create = client.messages.create

    def create_and_record(**request):
        reply = create(**request)
        calls.append({"sent": len(request["messages"]), "input": reply.usage.input_tokens,
                      "output": reply.usage.output_tokens})
        return reply

    client.messages.create = create_and_record
    return calls


def print_usage(calls):
    print("call  messages sent  input tokens  output tokens")
    for number, call in enumerate(calls, 1):
        print(f"{number:>4}  {call['sent']:>13}  {call['input']:>12}  {call['output']:>13}")
    print("input tokens billed in all:", sum(call["input"] for call in calls))


client = course.make_client()
calls = record_usage(client)
agent.run(REPORT_TASK, client=client)
print_usage(calls)

# %% [markdown]
# Almost all of the first call's input is the system prompt and the tool table, and every later
# call sends them again, with the whole history so far. Three turns are cheap; forty are not.
# s03 caps what a run may spend, and s05 prunes the history.

# %% [markdown]
# ## 7. A model that never stops
#
# s01 has one exit: a reply with no tool call. The article *An AI agent is a while loop inside: built from scratch and measured how it breaks* ran a loop like this one on a small local
# model, qwen2.5-coder:1.5b at temperature 0. It wrote `report.txt` correctly on turn 2, then sent
# the same `write_file` call, with the same arguments, on every turn until its turn cap stopped it at
# turn 8. Without the cap it would never have stopped.
#
# The offline model `offline-looping` reproduces that. To run it here without hanging the notebook,
# `course.capped(client, 12)` puts a guard *around* the client: its 13th call raises `course.Runaway`.
# The guard is this notebook's safety net, not part of the agent; s03 gives the loop stop conditions
# of its own.

# %%
looping_client = course.make_client("offline-looping")
looping_calls = record_usage(looping_client)
try:
    agent.run(REPORT_TASK, client=course.capped(looping_client, 12), model="offline-looping",
              trace=course.TracePrinter())
except course.Runaway as stop:
    print("\nRunaway:", stop)

# %%
print("input tokens per call:", [call["input"] for call in looping_calls])
print("input tokens billed in all:", sum(call["input"] for call in looping_calls))

# %% [markdown]
# The task was done at turn 2; every call after that is the same call again, and each one costs
# more than the last. The loop cannot tell, because it only stops when the model does.

# %% [markdown]
# ## 8. A reply, streamed
#
# `ask` waits for the whole reply. `client.messages.stream(...)` takes the same request and hands over
# the reply as it is written: the text a few words at a time, then the tool call, and at the end the
# same message `create` returns. The stages keep calling `create`: one whole reply per turn is easier
# to record, test and resume, and a tool cannot run before its call is complete.

# %%
request = dict(model=model, max_tokens=agent.MAX_TOKENS, system=agent.SYSTEM_PROMPT, tools=agent.TOOLS,
               messages=[{"role": "user", "content": REPORT_TASK}])
with client.messages.stream(**request) as stream:
    for piece in stream.text_stream:
        print(repr(piece))                              # the text, as it arrives
    streamed = stream.get_final_message()
for block in streamed.content:
    if block.type == "tool_use":
        print("then the call:", block.name, block.input)
print("the same reply as create:", streamed.content == client.messages.create(**request).content)

# %% [markdown]
# ## Your turn
#
# The exercises of this stage are the regions of `s01/agent.py` marked `# >>> exercise N`:
# 1. *Find the tool calls in a reply* (`tool_calls`);
# 2. *Close the loop* (the `while` loop of `run`).
#
# In a terminal, from the repository's root, these two commands write your own copy with those
# regions emptied (the first) and grade it (the second):
#
# ```bash
# .venv/bin/python -m course exercise s01 my-s01
# .venv/bin/python -m course check s01 my-s01
# ```
#
# The chapter's exercise section has hints. Then
# come back here and try your own tasks: `agent.run("Read sample.txt and compute the total price", trace=course.TracePrinter())`.
