# ---
# jupyter:
#   kernelspec:
#     display_name: Python (agent loop course)
#     language: python
#     name: agent-loop-course
# ---

# %% [markdown]
# # s03 · Stop conditions
#
# Up to s02 a run ends only when the model says so. A model that repeats itself runs, and bills,
# forever. s03 gives the loop stops of its own, each with a named `stop_reason`:
#
# | stop_reason | when |
# |---|---|
# | `end_turn` | the reply has no tool call: the model's natural end |
# | `max_turns` | the turn limit is reached |
# | `token_budget` | the tokens used, as the API reports them, reach the budget |
# | `no_progress` | the same call again and again, or failure after failure |
# | `max_tokens`, `refusal` | the reply was cut, or the model declined to go on |
#
# and every run appends its metrics to a runs log. This notebook makes each stop happen, checks
# that the history stays valid after a cut reply, reads the runs log, and measures how the bill
# of a long run grows. Everything runs offline unless you set an API key (see the s00 notebook).

# %%
import json
import os
import tempfile
from pathlib import Path

import course
import course.offline
import course.lab.stats
from course.lab import scenarios
from s03 import agent

# This notebook's runs go to a scratch runs log, so your own runs/runs.jsonl stays yours.
RUNS_LOG = Path(tempfile.mkdtemp(prefix="s03-notebook-")) / "runs.jsonl"
os.environ["AGENT_COURSE_RUNS_LOG"] = str(RUNS_LOG)

REPORT_TASK = "List the files and write their count and names to report.txt"
print("model in use:", course.resolve_model())
print("default limits:", agent.Limits())

# %% [markdown]
# ## The code
#
# What this notebook runs is the two checks that stop a run: `limit_reached()`, before each call, and `no_progress()`, after the results are written back. Here it is, read from `s03/agent.py` when this cell runs (not a
# copy: edit the file, restart the kernel, and this shows your version). The lines between
# `# >>> exercise` and `# <<< exercise` are the exercises of "Your turn", at the end.

# %%
import inspect

from IPython.display import Code

Code(inspect.getsource(agent.limit_reached) + "\n\n" + inspect.getsource(agent.no_progress), language="python")

# %% [markdown]
# ## 1. The natural end
#
# A task the model finishes: nothing changes from s02, except that the result now carries a
# one-line `explanation` of why the run ended, and the run's metrics (tool calls and failures per
# tool, and how long it took).

# %%
natural = agent.run(REPORT_TASK, trace=course.TracePrinter())
print("stop_reason:", natural.stop_reason, "| explanation:", natural.explanation)
print("turns:", natural.turns, "| usage:", natural.usage)
print("tool_calls:", natural.tool_calls, "| tool_errors:", natural.tool_errors, "| duration_s:", natural.duration_s)

# %% [markdown]
# ## 2. The turn limit
#
# A long, legitimate task: add up the amounts of every file in a `ledger/` folder. The offline
# model `offline-long-N` lists the folder, reads one file per turn, and answers: about N turns.
# `scenarios.ledger(workspace, count)` writes the folder into a fresh workspace. With 30 files the
# task takes 32 turns; a limit of 8 stops it well before.

# %%
LEDGER_FILES = 30
LONG_MODEL = f"offline-long-{LEDGER_FILES + 2}"   # lists, reads 30 files, answers


def ledger_workspace():
    workspace = course.prepare_workspace()
    scenarios.ledger(workspace, LEDGER_FILES)
    return workspace


limited = agent.run(scenarios.LEDGER_TASK, model=LONG_MODEL, workspace=ledger_workspace(),
                    limits=agent.Limits(max_turns=8), trace=course.TracePrinter())
print("stop_reason:", limited.stop_reason, "| turns:", limited.turns)
print("explanation:", limited.explanation)

# %% [markdown]
# The limit is checked *before* each call: the next call is what would cost. The result's
# `explanation` (also the trace's `■ stop` line) says which limit stopped the run, its value, and
# what to change if the task really needs more; `answer` holds only what the model wrote, and
# here it wrote none.

# %% [markdown]
# A limit stops a run; it does not lose it. The run was saved step by step (s02's transcript), so
# the person who set the limit can raise it and go on: `resume=` takes the limits given *now*,
# while the turns already taken and the tokens already used still count.

# %%
again = agent.run(resume=limited.transcript, limits=agent.Limits(max_turns=8))
print("resumed with the same limit:", again.stop_reason, "| turns:", again.turns)
raised = agent.run(resume=limited.transcript, limits=agent.Limits(max_turns=40))
print("resumed with max_turns=40: ", raised.stop_reason, "| turns:", raised.turns)
print("answer:", raised.answer)

# %% [markdown]
# ## 3. The token budget
#
# A turn limit counts calls; a budget counts what they cost. The budget is checked against the
# `usage` the API reports, added up over the run. To choose one, first let the task run to its
# end and see what it costs in all; then give the same task half of that.

# %%
full = agent.run(scenarios.LEDGER_TASK, model=LONG_MODEL, workspace=ledger_workspace())
full_cost = full.usage["input_tokens"] + full.usage["output_tokens"]
print("unlimited:", full.stop_reason, "after", full.turns, "turns,", full_cost, "tokens")
print("answer:", full.answer)

budgeted = agent.run(scenarios.LEDGER_TASK, model=LONG_MODEL, workspace=ledger_workspace(),
                     limits=agent.Limits(token_budget=full_cost // 2))
budgeted_cost = budgeted.usage["input_tokens"] + budgeted.usage["output_tokens"]
print("budget", full_cost // 2, ":", budgeted.stop_reason, "after", budgeted.turns, "turns,", budgeted_cost, "tokens")
print("explanation:", budgeted.explanation)
print(f"half the tokens bought {budgeted.turns / full.turns:.0%} of the turns")

# %% [markdown]
# Half the tokens bought more than half the turns: the late turns of a run are the expensive ones,
# because each resends a longer history (section 7 measures it). The budget is checked before
# a call, so a run can pass it by at most one call's cost.

# %% [markdown]
# ## 4. No progress
#
# `offline-looping` reproduces the small model of *An AI agent is a while loop inside: built from scratch and measured how it breaks*: it writes `report.txt` correctly, then sends
# the same `write_file` on every turn. In s01 only an outside guard stopped it. s03 reads its own
# history: the same call (name and arguments) `max_repeats` times in a row means no progress.

# %%
looping = agent.run(REPORT_TASK, model="offline-looping", trace=course.TracePrinter())
print("stop_reason:", looping.stop_reason, "| turns:", looping.turns)


# %% [markdown]
# The other kind of no progress is failure after failure: `max_consecutive_errors` failed tool
# calls in a row, even if each one is different. `agent.no_progress` reads it off any history;
# here is one made by hand, three reads of files that do not exist.

# %%
def failed_read(number, path):
    call_id = f"toolu_{number}"
    return [
        {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": "read_file", "input": {"path": path}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "is_error": True,
                                      "content": f"Error: FileNotFoundError: {path}"}]},
    ]


history = [{"role": "user", "content": "Summarise main.py"}]
for number, path in enumerate(["main.py", "src/main.py", "app/main.py"]):
    history += failed_read(number, path)
    print(f"after {number + 1} failed call(s):", agent.no_progress(history, agent.Limits()))

# %% [markdown]
# ## 5. A reply cut by `max_tokens`
#
# Every call says how long the reply may be (`max_tokens`, 1024 in the stages). A longer reply is
# cut, and its `stop_reason` is `"max_tokens"`. `offline-verbose` thinks aloud at length before
# every action, so its first reply is cut in the middle of its text, before the tool call it was
# going to make.

# %%
TOTAL_TASK = "Read sample.txt and compute the total price"
cut = agent.run(TOTAL_TASK, model="offline-verbose")
print("stop_reason:", cut.stop_reason, "| turns:", cut.turns)
print("explanation:", cut.explanation)
print("the reply ends:", "…" + cut.messages[-1]["content"][-1]["text"][-80:])


# %% [markdown]
# Going on would be pointless: the next reply would be cut the same way. The run stops, and its
# explanation says what to change.
#
# A cut can also fall *inside* a tool call. The API then returns the `tool_use` block without its
# arguments, and it still needs a `tool_result`, or the history is invalid. To see it, measure the
# first reply of the report task, then run the task on a client that allows one token less than
# that reply needs: its text fits, its tool call does not.

# %%
def with_max_tokens(client, max_tokens):
    """The client, with every call's max_tokens replaced by ours."""
    create = client.messages.create
    client.messages.create = lambda **request: create(**{**request, "max_tokens": max_tokens})
    return client


first_reply = agent.ask(course.make_client("offline"), "offline", [{"role": "user", "content": REPORT_TASK}])
too_few = first_reply.usage.output_tokens - 1
print("the first reply needs", first_reply.usage.output_tokens, "output tokens; we allow", too_few)

cut_call = agent.run(REPORT_TASK, client=with_max_tokens(course.make_client("offline"), too_few), model="offline")
print("stop_reason:", cut_call.stop_reason)
for message in cut_call.messages[1:]:
    for block in message["content"]:
        print(f"{message['role']:9}", {key: course.shorten(value, 60) if key == "text" else value for key, value in block.items()})


# %% [markdown]
# The cut `tool_use` arrived with empty arguments; s03 did not run it, but answered it with an
# `is_error` result saying why. The offline model's validator checks a history by the real API's
# rules: the history is valid, and a run could go on from it. Without that answer it would not be.

# %%
def check(messages):
    try:
        course.offline.validate_request({"model": "offline", "max_tokens": 10, "messages": messages})
        return "valid"
    except course.offline.ApiError as error:
        return f"{error.status}: {error.body()['error']['message']}"


print("s03's history:            ", check(cut_call.messages))
print("without the answer, going on:", check(cut_call.messages[:-1] + [{"role": "user", "content": "Go on."}]))
print("the verbose run's history:", check(cut.messages))

# %% [markdown]
# ## 6. Metrics and the runs log
#
# Every run above appended one JSON line to the runs log (`run(..., runs_log=False)` opts out).
# *Building an agent loop yourself: the minimal form of tool calling* names the three numbers a team needs to improve an agent: how many turns a task took,
# which tool failed how often, and how often runs were cut off. Here is the last line, then the
# summary that `.venv/bin/python -m course stats` prints (this notebook pointed `AGENT_COURSE_RUNS_LOG` at
# a scratch file; without it, the log is `runs/runs.jsonl` under the current folder).

# %%
print(RUNS_LOG.read_text(encoding="utf-8").splitlines()[-1])

# %%
print(course.lab.stats.report(RUNS_LOG))


# %% [markdown]
# ## 7. Why budgets matter: the bill grows with the square of the turns
#
# Each call resends the whole history, so each call's input is the last one's plus the turn just
# added. Run the ledger task at 20, 40 and 80 turns and keep each call's usage:
# `course.capped(client, n)` records it in `.usages` (and would stop a runaway after `n` calls).

# %%
def long_run(turns):
    """The ledger task sized to take `turns` turns; returns the input tokens of each call."""
    workspace = course.prepare_workspace()
    scenarios.ledger(workspace, turns - 2)
    client = course.capped(course.make_client(f"offline-long-{turns}"), turns)
    result = agent.run(scenarios.LEDGER_TASK, client=client, model=f"offline-long-{turns}", workspace=workspace,
                       limits=agent.Limits(max_turns=turns, token_budget=10**9), runs_log=False)
    assert result.stop_reason == "end_turn", result.stop_reason
    return [usage.input_tokens for usage in client.usages]


per_call = {turns: long_run(turns) for turns in (20, 40, 80)}
calls = per_call[40]
print("input tokens of the first calls of the 40-turn run:", calls[:6], "...")
print("growth from one call to the next:", [later - earlier for earlier, later in zip(calls, calls[1:])][:6], "...")

# %% [markdown]
# After the first turns, every call sends the same number of tokens more than the one before: a
# turn's call and result. The input of call *k* is a fixed part (system prompt, tools, task) plus
# *k* times that step, so the sum over *N* calls is about *N* × fixed + step × *N*²/2. Double the
# turns, and the bill heads for four times as much:

# %%
print(f"{'turns':>5}  {'input billed':>12}  {'last call':>9}  ratio to half the turns")
previous = None
for turns, inputs in per_call.items():
    billed = sum(inputs)
    ratio = f"{billed / previous:.2f}x" if previous else ""
    print(f"{turns:>5}  {billed:>12}  {inputs[-1]:>9}  {ratio}")
    previous = billed

# %%
from itertools import accumulate

cumulative = list(accumulate(per_call[80]))
print("cumulative input billed, every 10th call of the 80-turn run:")
for call in range(10, 81, 10):
    print(f"  call {call:>2}: {cumulative[call - 1]:>7} {'#' * (cumulative[call - 1] * 60 // cumulative[-1])}")

# %% [markdown]
# The ratio climbs toward 4 as the history outweighs the fixed part. The files here are tiny; with
# real tool results the step is larger and the square arrives sooner. A budget caps the bill; s05
# makes the history itself smaller.

# %% [markdown]
# ## Run it on Claude (or a local model)
#
# Set `ANTHROPIC_API_KEY` before starting Jupyter (or restart the kernel after setting it). Cells
# that name an `offline-...` model keep using it, since those behaviours are what they show; the
# cell below runs the report task on Claude with a turn limit and a budget when a key is set, and
# does nothing otherwise.

# %%
if os.environ.get("ANTHROPIC_API_KEY"):
    claude_model = os.environ.get("MODEL_ID") or course.DEFAULT_CLAUDE_MODEL
    on_claude = agent.run(REPORT_TASK, client=course.make_client(claude_model), model=claude_model,
                          limits=agent.Limits(max_turns=10, token_budget=50_000), trace=course.TracePrinter())
    print("stop_reason:", on_claude.stop_reason, "| turns:", on_claude.turns, "| usage:", on_claude.usage)
else:
    print("ANTHROPIC_API_KEY is not set: this cell does nothing, and the notebook stays offline.")

# %% [markdown]
# ## Your turn
#
# The exercises of this stage are the regions of `s03/agent.py` marked `# >>> exercise N`:
# 1. *Stop before a limit is passed* (`limit_reached`);
# 2. *Detect no progress* (`no_progress`).
#
# In a terminal, from the repository's root, these two commands write your own copy with those
# regions emptied (the first) and grade it (the second):
#
# ```bash
# .venv/bin/python -m course exercise s03 my-s03
# .venv/bin/python -m course check s03 my-s03
# ```
#
# The chapter's exercise section has hints.
