# ---
# jupyter:
#   kernelspec:
#     display_name: Python (agent loop course)
#     language: python
#     name: agent-loop-course
# ---

# %% [markdown]
# # s05 · Pruning
#
# Every call resends the whole history. s03 measured what that costs: the input billed over *N*
# turns grows with *N*², and a long enough run no longer fits the model's context window at all.
# s05 prunes the history before each call, in two ways:
#
# - **masking**: tool results older than the last `KEEP_RESULTS` are replaced by a short placeholder
#   that says what was there and how to get it again;
# - **summarising**: if the prompt is still over `SUMMARY_THRESHOLD` tokens, the model writes a
#   summary of all but the last `KEEP_TURNS` turns, and the summary replaces them.
#
# Neither may break the rule of s00: every `tool_use` keeps its `tool_result`. This notebook masks a
# history by hand, watches both prunings in a run, measures them with the course's token benchmark,
# and runs a task that overflows the context window without them. Everything runs offline unless
# you set an API key (see the s00 notebook).

# %%
import copy
import os
import tempfile
from pathlib import Path

from IPython.display import SVG, display

import course
import course.lab.bench
import course.offline
from course.offline import flood
from s04 import agent as s04
from s05 import agent

# This notebook's runs go to a scratch runs log, so your own runs/runs.jsonl stays yours.
os.environ["AGENT_COURSE_RUNS_LOG"] = str(Path(tempfile.mkdtemp(prefix="s05-notebook-")) / "runs.jsonl")

print("model in use:", course.resolve_model())
print("KEEP_RESULTS:", agent.KEEP_RESULTS, "| SUMMARY_THRESHOLD:", agent.SUMMARY_THRESHOLD, "| KEEP_TURNS:", agent.KEEP_TURNS)


# %% [markdown]
# ## The code
#
# What this notebook runs is `prune()`, called before each call, and the masking it does first, `mask_old_results()`. Here it is, read from `s05/agent.py` when this cell runs (not a
# copy: edit the file, restart the kernel, and this shows your version). The lines between
# `# >>> exercise` and `# <<< exercise` are the exercises of "Your turn", at the end.

# %%
import inspect

from IPython.display import Code

Code(inspect.getsource(agent.prune) + "\n\n" + inspect.getsource(agent.mask_old_results), language="python")

# %% [markdown]
# ## 1. A task that floods the history
#
# `offline-flood-N` counts the ERROR lines of N log files, reading one file per turn; each file is
# about 3,500 characters, so each turn adds about a thousand tokens to the history.
# `flood.logs(workspace, N)` writes the files. The model keeps notes as it goes ("running total 24;
# 2 of 5 files read"), the way a careful person on a long job would. Here is the task on s04, which
# keeps everything:

# %%
def flood_workspace(files):
    workspace = course.prepare_workspace()
    flood.logs(workspace, files)
    return workspace


unpruned = s04.run(flood.COUNT_TASK, model="offline-flood-5", workspace=flood_workspace(5))
print("stop_reason:", unpruned.stop_reason, "| turns:", unpruned.turns, "| answer:", unpruned.answer)

# %% [markdown]
# ## 2. Masking, by hand
#
# `agent.mask_old_results(messages, keep)` rewrites a history in place and returns how many results
# it masked. Try it on a copy of that history, keeping the last `agent.KEEP_RESULTS` results:

# %%
history = copy.deepcopy(unpruned.messages)
before = agent.estimate_prompt_tokens(history)
print("masked:", agent.mask_old_results(history, agent.KEEP_RESULTS))
print(f"estimated prompt: {before} tokens before, {agent.estimate_prompt_tokens(history)} after\n")

for block in agent.tool_results_in(history):
    print(block["tool_use_id"][-6:], course.shorten(block["content"], 150))


# %% [markdown]
# The `tool_result` blocks all stay, with their ids: only the *content* of the old ones is
# replaced, so every `tool_use` is still answered. The placeholder names the call that produced
# the result and its size, and says how to get it back: call it again. The model's own notes
# (in its text, which is never masked) keep what it learned from those results. Both histories are
# valid for the API:

# %%
def check(messages):
    try:
        course.offline.validate_request({"model": "offline", "max_tokens": 10, "messages": messages})
        return "valid"
    except course.offline.ApiError as error:
        return f"{error.status}: {error.body()['error']['message']}"


print("original:", check(unpruned.messages))
print("masked:  ", check(history))
print("masking twice masks nothing more:", agent.mask_old_results(history, agent.KEEP_RESULTS))

# %% [markdown]
# ## 3. s05 on the task: the tokens of every turn
#
# s05 prunes before every call, and its trace adds a line per turn: the tokens that call sent
# (uncached, read from the prompt cache, written to it) and received, and the input tokens sent so
# far. Same task, eight files this time:

# %%
pruned = agent.run(flood.COUNT_TASK, model="offline-flood-8", workspace=flood_workspace(8), trace=course.TracePrinter())


# %% [markdown]
# Once the prompt passes `CLEAR_TRIGGER`, one batch masks every result but the last
# `KEEP_RESULTS`, and the prompt drops; in between, each call reads from the cache what the call
# before it sent. Compare the input tokens of each call, cached or not, with s04 on the same task
# (`course.capped` records every call's usage):

# %%
def input_per_call(stage, files):
    client = course.capped(course.make_client(f"offline-flood-{files}"), 10 * files)
    result = stage.run(flood.COUNT_TASK, client=client, model=f"offline-flood-{files}", workspace=flood_workspace(files),
                       runs_log=False)
    return result, [agent.prompt_size(usage) for usage in client.usages]


s04_result, s04_inputs = input_per_call(s04, 8)
s05_result, s05_inputs = input_per_call(agent, 8)
print("s04:", s04_inputs, "| sent:", sum(s04_inputs), "|", s04_result.answer)
print("s05:", s05_inputs, "| sent:", sum(s05_inputs), "|", s05_result.answer)
print(f"s05 sends {sum(s05_inputs) / sum(s04_inputs):.0%} of s04's input tokens, for the same answer")


# %% [markdown]
# ## 4. Summarising
#
# Masking alone keeps this task small, so the summary never triggers at the default threshold. To
# watch it, turn masking off (`KEEP_RESULTS` huge) and lower `SUMMARY_THRESHOLD` for one run. `prune`
# reads both constants at every call. The trace here is a function of our own that prints only the
# `note` lines: the tokens of each turn, and each summary.

# %%
def notes_only(kind, payload):
    if kind == "note":
        print("  ", payload)


saved = agent.KEEP_RESULTS, agent.SUMMARY_THRESHOLD
agent.KEEP_RESULTS, agent.SUMMARY_THRESHOLD = 10**6, 8_000
try:
    summarised = agent.run(flood.COUNT_TASK, model="offline-flood-12", workspace=flood_workspace(12), trace=notes_only)
finally:
    agent.KEEP_RESULTS, agent.SUMMARY_THRESHOLD = saved
print("stop_reason:", summarised.stop_reason, "| answer:", summarised.answer)
print("largest prompt sent:", summarised.peak_prompt_tokens, "tokens")

# %% [markdown]
# Each time the prompt passes the threshold, the older turns are folded into a summary and the
# prompt drops; then it grows again. The summarising call is a model call too, billed like any other
# (it is added to the run's usage). The summary takes the place of the first message, after the task
# itself, and the history is still valid:

# %%
print(summarised.messages[0]["content"])
print()
print("first message from:", summarised.messages[0]["role"], "| history:", check(summarised.messages))

# %% [markdown]
# ## 5. The token benchmark
#
# `.venv/bin/python -m course bench tokens --turns N` runs the flood task at N turns on several stages, records
# every call's usage, prices it, and fits the exponent *b* in *cumulative input ≈ a · call^b*: 2 is
# quadratic growth, 1 linear. Its plot shows the dollars spent after each call. The same from Python,
# for two of its five runs, at 40 turns to keep this notebook quick (the chapter's figures use all
# five, at 100):

# %%
bench = course.lab.bench.run_token_bench(40, stages=("s04", "s05"))
for stage, row in bench["stages"].items():
    print(f"{stage}: completed={row['completed']}, turns={row['turns']}, input tokens sent={row['input_tokens']:,}, "
          f"dollars={row['dollars']:.4f}, peak prompt={row['peak_prompt_tokens']:,}, exponent b={row['exponent']}")
print(f"s05 / s04 input tokens sent: {bench['ratio_s05_s04']:.0%}")
display(SVG(course.lab.bench.plot_svg(bench)))

# %% [markdown]
# s04's curve bends upward; s05's stays close to a straight line, since each of its calls costs
# about the same. The longer the run, the larger the gap: rerun the cell with 100 turns to see the
# chapter's numbers (it takes a few seconds more).

# %% [markdown]
# ## 6. When the history no longer fits
#
# A model's context window caps the prompt: 200,000 tokens or more for Claude. The offline model's
# window can be set per client, and a small one, 20,000 tokens, makes the overflow arrive in
# seconds. Past it, the API refuses the call with a 400 "prompt is too long". s04 stops there,
# with the reason (it does not crash: s02 taught it that); s05 finishes.

# %%
WINDOW = 20_000
FILES = 24

for stage in (s04, agent):
    client = course.make_client(f"offline-flood-{FILES}", context_window=WINDOW)
    result = stage.run(flood.COUNT_TASK, client=client, model=f"offline-flood-{FILES}", workspace=flood_workspace(FILES))
    print(f"{stage.STAGE}: {result.stop_reason} after {result.turns} turns, {result.usage['input_tokens']:,} input tokens")
    print("     ", result.answer if result.stop_reason == "end_turn" else result.explanation)

# %% [markdown]
# ## Run it on Claude (or a local model)
#
# Set `ANTHROPIC_API_KEY` before starting Jupyter (or restart the kernel after setting it). The flood
# task is an offline model on purpose (it needs its generated log files); the cell below runs a
# short task on Claude with s05's trace, so you see the real token counts of each turn, and does
# nothing without a key.

# %%
if os.environ.get("ANTHROPIC_API_KEY"):
    claude_model = os.environ.get("MODEL_ID") or course.DEFAULT_CLAUDE_MODEL
    on_claude = agent.run("Summarise memo.md, todo.md and hello.txt, one at a time",
                          client=course.make_client(claude_model), model=claude_model, trace=course.TracePrinter())
    print("stop_reason:", on_claude.stop_reason, "| usage:", on_claude.usage)
else:
    print("ANTHROPIC_API_KEY is not set: this cell does nothing, and the notebook stays offline.")

# %% [markdown]
# ## Your turn
#
# The exercises of this stage are the regions of `s05/agent.py` marked `# >>> exercise N`:
# 1. *Mask old tool results in a batch, keeping every pair intact* (`mask_old_results`);
# 2. *Fold old turns into a summary without breaking a tool_use/tool_result pair* (`summarise_old_turns`).
#
# In a terminal, from the repository's root, these two commands write your own copy with those
# regions emptied (the first) and grade it (the second):
#
# ```bash
# .venv/bin/python -m course exercise s05 my-s05
# .venv/bin/python -m course check s05 my-s05
# ```
#
# The chapter's exercise section has hints.
