# ---
# jupyter:
#   kernelspec:
#     display_name: Python (agent loop course)
#     language: python
#     name: agent-loop-course
# ---

# %% [markdown]
# # s02 · LoopState
#
# s01's loop works, but what it knows is spread over local variables, and when it ends you can
# only guess why. s02 puts everything the loop knows into one object, `LoopState`: the history,
# the turn count, why the loop goes on, and the tokens used. One turn is one function,
# `take_turn(state, ...)`, that moves the state forward and says whether to go on. A run returns
# a `RunResult` whose `stop_reason` says why it ended.
#
# This notebook runs s02, reads the result, then takes turns by hand, one at a time, and ends
# with an API outage, which s01 lost everything to and s02 survives. Everything runs offline
# unless you set an API key (see the s00 notebook).

# %%
import dataclasses

import anthropic
import course
from s02 import agent

REPORT_TASK = "List the files and write their count and names to report.txt"
print("model in use:", course.resolve_model())

# %% [markdown]
# ## The code
#
# What this notebook runs is one turn, `take_turn()`, and the loop that takes turns, `run()`. Here it is, read from `s02/agent.py` when this cell runs (not a
# copy: edit the file, restart the kernel, and this shows your version). The lines between
# `# >>> exercise` and `# <<< exercise` are the exercises of "Your turn", at the end.

# %%
import inspect

from IPython.display import Code

Code(inspect.getsource(agent.take_turn) + "\n\n" + inspect.getsource(agent.run), language="python")

# %% [markdown]
# ## 1. Run it
#
# The same task as in s01. The trace has one new line per turn, `↻ continue: ...`: the reason the
# loop goes on, recorded in the state each time.

# %%
result = agent.run(REPORT_TASK, trace=course.TracePrinter())

# %% [markdown]
# ## 2. What the result says
#
# `run` returns a `RunResult`, a small dataclass, instead of s01's dict. Its `stop_reason` is a named
# value from `agent.StopReason`, not a sentence to parse; `transitions` lists why each turn
# continued; `usage` adds up the tokens the API reported for every call.

# %%
print("fields:", [field.name for field in dataclasses.fields(agent.RunResult)])
print("stop_reason:", result.stop_reason, "| possible:", agent.StopReason.__args__)
print("turns:", result.turns)
print("transitions:", result.transitions)
print("usage:", result.usage)
print("answer:", result.answer)

# %% [markdown]
# Three turns, two transitions: each of the first two turns wrote tool results back and so went
# on; the third had no tool call, so it stopped with the model's own `end_turn` and recorded no
# transition.

# %% [markdown]
# ## 3. One turn at a time
#
# `run` is only a loop around `take_turn`. You can drive it yourself: make a `LoopState` holding
# the task, then call `take_turn` once per cell and look at the state after each call.

# %%
client = course.make_client()
model = course.resolve_model()
workspace = course.prepare_workspace()
trace = course.TracePrinter()
state = agent.LoopState(messages=[{"role": "user", "content": REPORT_TASK}])


def one_turn():
    """Take one turn, then print the state's counters: what changed, and whether to go on."""
    go_on = agent.take_turn(state, client, model, workspace, trace)
    print(f"go on: {go_on} | turn_count: {state.turn_count} | transition_reason: {state.transition_reason}"
          f" | messages: {len(state.messages)} | usage: {state.usage}")
    return go_on


go_on = one_turn()

# %% [markdown]
# One call: the reply asked for `list_files`, the tool ran, its result was written back. The
# history now holds three messages (task, reply, results), and the state says why it goes on.
# Take the next turn:

# %%
go_on = one_turn()

# %%
go_on = one_turn()
print("stop_reason:", state.stop_reason)
print("answer:", state.answer)

# %% [markdown]
# The third turn returned `False`: the reply had no tool call, so `take_turn` set `stop_reason`
# and `answer` and the loop would end here. `transition_reason` still shows the last reason the
# loop went on; `stop_reason` is the reason it stopped. Nothing else holds any state: the
# `LoopState` *is* the run, which is what makes the next section possible.

# %% [markdown]
# ## 4. An API outage
#
# APIs fail: a 529 "overloaded", a 429 rate limit, a dropped connection. The SDK retries a few
# times; when the retries are spent, it raises. The offline model can inject such faults:
# `course.Faults(rate=1.0, kinds=("overloaded",))` answers every call with a 529.
#
# First s01: its loop has no answer to an exception, so the run is lost, with whatever it had
# done before.

# %%
from s01 import agent as s01_agent

def outage_client():
    """An offline client whose every call is answered 529 overloaded, after the SDK's retries."""
    return course.make_client("offline", faults=course.Faults(rate=1.0, kinds=("overloaded",)))


try:
    s01_agent.run("List the files", client=outage_client(), model="offline")
except anthropic.APIError as error:
    print("s01 raised", type(error).__name__, "and returned nothing:", error.status_code)

# %%
outage = agent.run("List the files", client=outage_client(), model="offline", trace=course.TracePrinter())
print("stop_reason:", outage.stop_reason)
print("answer:", outage.answer)
print("history kept:", outage.messages)

# %% [markdown]
# s02 catches `anthropic.APIError` around the call, ends the run with `stop_reason` `"api_error"`
# and a one-line explanation, and returns the history. Here the very first call failed, so the
# history is just the task. The next cell lets the outage strike in the middle of a run: two turns
# on a working client, then one on the failing client, then the working client again.

# %%
state = agent.LoopState(messages=[{"role": "user", "content": REPORT_TASK}])
workspace = course.prepare_workspace()
trace = course.TracePrinter()
go_on = one_turn()
go_on = one_turn()

client = outage_client()   # the API goes down
go_on = one_turn()
print("stop_reason:", state.stop_reason, "|", state.answer)
print("messages kept:", [message["role"] for message in state.messages])

# %%
client = course.make_client()   # the API is back: the state is all it takes to go on
while one_turn():
    pass
print("stop_reason:", state.stop_reason, "| answer:", state.answer)

# %% [markdown]
# The failed call changed only `stop_reason` and `answer`: no turn was counted, no message added, and
# the two turns already done were kept. With the state in one object, a run that stopped on an
# outage can go on later from where it was.

# %% [markdown]
# ## 5. Saved every step, resumed from the file
#
# Keeping the state in memory only helps while the process lives. s02 also writes it down: after
# every step, `save()` appends what changed to the run's transcript, one JSON line per step, and
# `run(resume=...)` loads it back and goes on. Here a run stops on an outage partway (half the
# calls fail, with the SDK's retries off); each line of its transcript holds the turn, the stop
# reason and the messages it added.

# %%
import json
from pathlib import Path

flaky = course.make_client("offline", faults=course.Faults(rate=0.5, seed=2), max_retries=0)
stopped = agent.run(REPORT_TASK, client=flaky, model="offline")
print("stop_reason:", stopped.stop_reason, "| turns:", stopped.turns, "| saved in:", Path(stopped.transcript).name)
for line in Path(stopped.transcript).read_text(encoding="utf-8").splitlines():
    record = json.loads(line)
    print(f"turn {record['turn']}  stop_reason={record['stop_reason']}  added:",
          [block.get("type", "text") for message in record["messages"]
           for block in (message["content"] if isinstance(message["content"], list) else [{"type": "task"}])])

# %% [markdown]
# The API is back. `resume=` takes the transcript's path, its run id (the file's stem) or `"last"`,
# and goes on in the run's own workspace: the calls already answered are not made again.

# %%
finished = agent.run(resume=stopped.transcript, trace=course.TracePrinter())
print("stop_reason:", finished.stop_reason, "| turns in all:", finished.turns)
print("report.txt:", (Path(finished.workspace) / "report.txt").read_text(encoding="utf-8"))

# %% [markdown]
# A process killed while it writes a line leaves that last line torn. Loading ignores it (and
# the next save cuts it off); every line before it is whole. Tear one on purpose:

# %%
path = Path(finished.transcript)
whole = path.read_bytes()
path.write_bytes(whole[:-20])      # killed 20 bytes before the end of the last line
loaded = course.runtime.transcript.load(path)
print(len(loaded.records), "lines loaded;", loaded.torn_bytes, "bytes of a torn last line ignored")
path.write_bytes(whole)

# %% [markdown]
# ## Run it on Claude (or a local model)
#
# Set `ANTHROPIC_API_KEY` before starting Jupyter (or restart the kernel after setting it), and
# every cell above that does not name an offline model runs on Claude; `MODEL_ID` picks the
# model. The cell below runs the report task on Claude when a key is set, and does nothing
# otherwise.

# %%
import os

if os.environ.get("ANTHROPIC_API_KEY"):
    claude_model = os.environ.get("MODEL_ID") or course.DEFAULT_CLAUDE_MODEL
    on_claude = agent.run(REPORT_TASK, client=course.make_client(claude_model), model=claude_model,
                          trace=course.TracePrinter())
    print("stop_reason:", on_claude.stop_reason, "| transitions:", on_claude.transitions,
          "| usage:", on_claude.usage)
else:
    print("ANTHROPIC_API_KEY is not set: this cell does nothing, and the notebook stays offline.")

# %% [markdown]
# ## Your turn
#
# The exercises of this stage are the regions of `s02/agent.py` marked `# >>> exercise N`:
# 1. *Record why the loop goes on* (the end of `take_turn`);
# 2. *Take turns until one says stop* (the loop of `run`);
# 3. *Answer the calls a killed run left without a result* (the end of `answer_interrupted_calls`).
#
# In a terminal, from the repository's root, these two commands write your own copy with those
# regions emptied (the first) and grade it (the second):
#
# ```bash
# .venv/bin/python -m course exercise s02 my-s02
# .venv/bin/python -m course check s02 my-s02
# ```
#
# The chapter's exercise section has hints.
