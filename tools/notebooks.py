"""The stage notebooks, written as Python so that they can be reviewed and diffed like code.

    python tools/notebooks.py           # (re)write every notebook below
    python tools/notebooks.py --check   # exit 1 if a committed notebook differs from this file

Each notebook is a list of cells built by ``markdown(...)`` and ``code(...)``; the written
``.ipynb`` holds no outputs and no execution counts, and its cell ids are fixed, so the same
source always writes the same bytes. ``tests/test_notebooks.py`` checks that the committed
notebooks are what this file writes, and executes them.

To add a stage's notebook: write a function that returns its cells and add it to ``NOTEBOOKS``.
Its "Your turn" cell must name each exercise of the stage as ``N. *title*``, exactly as the stage's
``# >>> exercise N: title`` markers do: writing (and ``--check``) stops with an error otherwise, so a
renamed exercise cannot leave a notebook pointing at the old one.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent


def markdown(text: str):
    return nbformat.v4.new_markdown_cell(textwrap.dedent(text).strip())


def code(text: str):
    return nbformat.v4.new_code_cell(textwrap.dedent(text).strip())


# ---------------------------------------------------------------- s00: one call

def s00_cells() -> list:
    return [
        markdown("""
        # s00 · One call

        A model cannot act. It reads a request and writes a reply; at most, the reply *asks* for an
        action. In this notebook you make that request yourself, run the action it asks for with
        your own code, send the result back, and watch what breaks when one round trip is all there is.

        Run the cells from top to bottom (Shift+Enter). Everything runs on the course's offline model,
        a stand-in that speaks the real Messages API inside this process: no key, no network, and the
        same reply every time. The last section shows how to switch to Claude.
        """),
        code("""
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
        """),
        markdown("""
        ## 1. One call, with a tool table

        Next to the task, the request carries a system prompt and the **tool table**: for each tool, a
        name, a description written for the model, and a JSON schema of its input. The model never
        sees our Python functions, only this table.
        """),
        code("""
        for tool in agent.TOOLS:
            print(f"{tool['name']}({', '.join(tool['input_schema']['properties'])})")
            print("   ", tool["description"])
        """),
        code("""
        def show(reply):
            \"\"\"Print a reply block by block, then why the model stopped.\"\"\"
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
        """),
        markdown("""
        The reply is two blocks: a sentence saying why, then a `tool_use` block with the tool's name,
        its input, and an **id**. `stop_reason` is `"tool_use"`: the model has stopped to wait for a
        result. Nothing has been searched yet: the model only asked.
        """),
        markdown("""
        ## 2. Run the tool yourself

        The dispatcher, `agent.run_tool`, looks the name up in `TOOL_FUNCTIONS` and calls our function
        with the model's input. It returns the text for the model and whether it is an error; a
        failure is reported, never raised.
        """),
        code("""
        call = next(block for block in reply.content if block.type == "tool_use")
        text, is_error = agent.run_tool(workspace, call.name, call.input)
        print("is_error:", is_error)
        print(text)
        """),
        code("""
        # A tool the model invents is an error to report back, not a crash.
        agent.run_tool(workspace, "delete_everything", {})
        """),
        markdown("""
        `agent.tool_result` wraps the output in the block that answers the call. Its `tool_use_id` is
        the thread between request and answer: it names the `tool_use` this result belongs to.
        """),
        code("""
        result_block = agent.tool_result(workspace, call)
        result_block
        """),
        markdown("""
        ## 3. Send the result back

        The API keeps no memory between calls: the history *is* the conversation, and every call sends
        all of it. Here that is three messages: the task, the model's reply with all of its blocks, and
        a user message that starts with the `tool_result`.
        """),
        code("""
        messages = [
            {"role": "user", "content": TASK},
            agent.assistant_message(reply),         # the reply goes into the history as it came
            {"role": "user", "content": [result_block]},  # answering its tool_use id
        ]
        second = client.messages.create(model=model, max_tokens=agent.MAX_TOKENS, system=agent.SYSTEM_PROMPT,
                                        tools=agent.TOOLS, messages=messages)
        show(second)
        """),
        markdown("""
        This time the answer is built from the tool's result, and `stop_reason` is `"end_turn"`: the
        model is done. That is one round trip: the model asks, our code acts, the model answers.
        """),
        markdown("""
        ## 4. Forget the tool_result

        What if we send the reply back without answering its `tool_use`? The API refuses the whole
        request with a 400. The offline model checks requests the way the real API does and answers with
        the same status and the same error text, so a history that breaks here would break on Claude too.
        """),
        code("""
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
        """),
        markdown("""
        The rule: every `tool_use` id gets its `tool_result`, at the start of the very next user message.
        Every stage of the course keeps it, whatever else goes wrong.
        """),
        markdown("""
        ## 5. s00's `run`: the round trip as code, and where it falls short

        `agent.run` does what you just did by hand: ask, run the requested tools, send the results back
        once, ask again. Give it seed 001's task, which needs two tools in a row: `list_files`, then
        `write_file`.
        """),
        code("""
        from pathlib import Path

        REPORT_TASK = "List the files and write their count and names to report.txt"
        result = agent.run(REPORT_TASK, client=client, model=model, trace=course.TracePrinter())
        """),
        code("""
        print("stop_reason:", result["stop_reason"], "| model calls:", result["turns"])
        print("report.txt exists:", (Path(result["workspace"]) / "report.txt").exists())
        last = result["messages"][-1]
        print("left unanswered:", [(block["name"], block["id"]) for block in last["content"] if block["type"] == "tool_use"])
        """),
        markdown("""
        The second reply asks for `write_file`, but s00 has no second round trip. The run ends with
        `stop_reason` `"tool_use"`, a request nobody answers, and no `report.txt`. Work that takes more
        than one step needs a loop: that is s01.
        """),
        markdown("""
        ## Run it on Claude (or a local model)

        Nothing above names a model: they all ask `course.resolve_model()`. To use Claude, set
        `ANTHROPIC_API_KEY` in the environment before starting Jupyter (or restart the kernel after
        setting it); every cell above then runs on Claude. `MODEL_ID=claude-...` picks another model, and
        in code `course.make_client("claude-...")` with `agent.run(..., model="claude-...")` picks one
        for a single run. For a local server that speaks the Messages API (Ollama 0.14 or newer), set
        `ANTHROPIC_BASE_URL` and `MODEL_ID`. Expect other wording and perhaps other steps: the structure,
        blocks and ids and stop reasons, stays the same.

        The cell below runs the report task on Claude when a key is set, and does nothing otherwise.
        """),
        code("""
        import os

        if os.environ.get("ANTHROPIC_API_KEY"):
            claude_model = os.environ.get("MODEL_ID") or course.DEFAULT_CLAUDE_MODEL
            claude = course.make_client(claude_model)
            on_claude = agent.run(REPORT_TASK, client=claude, model=claude_model, trace=course.TracePrinter())
            print("stop_reason:", on_claude["stop_reason"])
        else:
            print("ANTHROPIC_API_KEY is not set: this cell does nothing, and the notebook stays offline.")
        """),
        markdown("""
        ## Your turn

        The exercises of this stage are the regions of `s00/agent.py` marked `# >>> exercise N`:
        1. *Dispatch a tool call by name* (`run_tool`);
        2. *Answer a tool_use with its tool_result* (`tool_result`).

        `python -m course exercise s00 my-s00` writes your own copy with those regions emptied, and
        `python -m course check s00 my-s00` grades it. The chapter's exercise section has hints.
        """),
    ]


# ---------------------------------------------------------------- s01: the closed loop

def s01_cells() -> list:
    return [
        markdown("""
        # s01 · The closed loop

        s00 stopped after one round trip, with the model's second request left unanswered. s01 wraps the
        round trip in a `while` loop: ask, record the reply, run every tool it asks for, write every
        result back, and ask again, until a reply asks for no tool.

        This notebook runs the loop, opens up the history it builds, and then looks at its two costs:
        every call resends the whole history, and the loop ends only when the model says so.
        Everything runs offline unless you set an API key (see the s00 notebook).
        """),
        code("""
        from pathlib import Path

        import course
        from s01 import agent

        REPORT_TASK = "List the files and write their count and names to report.txt"
        print("model in use:", course.resolve_model())
        """),
        markdown("""
        ## 1. Run the loop

        The same task that s00 could not finish. `course.TracePrinter()` prints each turn: the model's
        text, each tool call (→) and each result (←).
        """),
        code("""
        result = agent.run(REPORT_TASK, trace=course.TracePrinter())
        """),
        code("""
        print("stop_reason:", result["stop_reason"], "| model calls:", result["turns"])
        print("answer:", result["answer"])
        print("--- report.txt ---")
        print((Path(result["workspace"]) / "report.txt").read_text())
        """),
        markdown("""
        Three calls: `list_files`, then `write_file`, then a reply with no tool, which ends the loop with
        `stop_reason` `"end_turn"`. The loop decided nothing; it ran what was asked until nothing was.
        """),
        markdown("""
        ## 2. Inside the history

        The result keeps the whole history, `result["messages"]`. One line a block: every `tool_use`
        carries an id, and the next user message answers it with a `tool_result` naming that id.
        """),
        code("""
        def show_history(messages):
            \"\"\"Each message's role and blocks; tool_use and tool_result show the id that pairs them.\"\"\"
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
        """),
        code("""
        def tool_use_ids(messages):
            return [block["id"] for message in messages if message["role"] == "assistant"
                    for block in message["content"] if block["type"] == "tool_use"]


        def tool_result_ids(messages):
            return [block["tool_use_id"] for message in messages
                    if message["role"] == "user" and isinstance(message["content"], list)
                    for block in message["content"] if block["type"] == "tool_result"]


        print("every tool_use answered, in order:", tool_use_ids(result["messages"]) == tool_result_ids(result["messages"]))
        """),
        markdown("""
        ## 3. Parallel calls

        When two steps do not depend on each other, a model may ask for both in one reply. The loop
        already handles it: it runs *every* call of the reply and sends all the results back together,
        in one user message, one `tool_result` per id.
        """),
        code("""
        parallel = agent.run("Summarise memo.md and hello.txt", trace=course.TracePrinter())
        """),
        code("""
        show_history(parallel["messages"])
        """),
        markdown("""
        One assistant message with two `tool_use` blocks, one user message with two `tool_result`s.
        Sending them as two separate user messages would break s00's rule: both ids must be answered at
        the start of the very next message.
        """),
        markdown("""
        ## 4. Any language

        Nothing in the loop knows what the task says. Here is the report task in Japanese.
        """),
        code("""
        japanese = agent.run("ファイルを一覧して、ファイル数と名前を report.txt に書いてください", trace=course.TracePrinter())
        print("--- report.txt ---")
        print((Path(japanese["workspace"]) / "report.txt").read_text())
        """),
        markdown("""
        ## 5. What each turn costs

        The model remembers nothing between calls, so the loop sends the whole history every time: the
        system prompt, the tool table and every message so far. Each call's input is therefore the
        previous call's input plus what was added since, and the input billed over a run grows with the
        square of its turns.

        To see it, wrap the client's `create` so that each call's `usage` is kept; `agent.run` calls it
        without knowing. (The offline model's token counts are a documented estimate, about four bytes a
        token, see `course/offline/tokens.py`; real counts differ, and grow the same way.)
        """),
        code("""
        def record_usage(client):
            \"\"\"Wrap client.messages.create; return the list where each call's usage will be kept.\"\"\"
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
        """),
        markdown("""
        Almost all of the first call's input is the system prompt and the tool table, and every later
        call sends them again, with the whole history so far. Three turns are cheap; forty are not.
        s03 caps what a run may spend, and s05 prunes the history.
        """),
        markdown("""
        ## 6. A model that never stops

        s01 has one exit: a reply with no tool call. Seed 001 ran a loop like this one on a small local
        model, qwen2.5-coder:1.5b at temperature 0. It wrote `report.txt` correctly on turn 2, then sent
        the same `write_file` call, with the same arguments, on every turn until its turn cap stopped it at
        turn 8. Without the cap it would never have stopped.

        The offline model `offline-looping` reproduces that. To run it here without hanging the notebook,
        `course.capped(client, 12)` puts a guard *around* the client: its 13th call raises `course.Runaway`.
        The guard is this notebook's safety net, not part of the agent; s03 gives the loop stop conditions
        of its own.
        """),
        code("""
        looping_client = course.make_client("offline-looping")
        looping_calls = record_usage(looping_client)
        try:
            agent.run(REPORT_TASK, client=course.capped(looping_client, 12), model="offline-looping",
                      trace=course.TracePrinter())
        except course.Runaway as stop:
            print("\\nRunaway:", stop)
        """),
        code("""
        print("input tokens per call:", [call["input"] for call in looping_calls])
        print("input tokens billed in all:", sum(call["input"] for call in looping_calls))
        """),
        markdown("""
        The task was done at turn 2; every call after that is the same call again, and each one costs
        more than the last. The loop cannot tell, because it only stops when the model does.
        """),
        markdown("""
        ## Your turn

        The exercises of this stage are the regions of `s01/agent.py` marked `# >>> exercise N`:
        1. *Find the tool calls in a reply* (`tool_calls`);
        2. *Close the loop* (the `while` loop of `run`).

        `python -m course exercise s01 my-s01` writes your own copy with those regions emptied, and
        `python -m course check s01 my-s01` grades it. The chapter's exercise section has hints. Then
        come back here and try your own tasks: `agent.run("Read sample.txt and compute the total price", trace=course.TracePrinter())`.
        """),
    ]


# ---------------------------------------------------------------- s02: LoopState

def s02_cells() -> list:
    return [
        markdown("""
        # s02 · LoopState

        s01's loop works, but what it knows is spread over local variables, and when it ends you can
        only guess why. s02 puts everything the loop knows into one object, `LoopState`: the history,
        the turn count, why the loop goes on, and the tokens used. One turn is one function,
        `take_turn(state, ...)`, that moves the state forward and says whether to go on. A run returns
        a `RunResult` whose `stop_reason` says why it ended.

        This notebook runs s02, reads the result, then takes turns by hand, one at a time, and ends
        with an API outage, which s01 lost everything to and s02 survives. Everything runs offline
        unless you set an API key (see the s00 notebook).
        """),
        code("""
        import dataclasses

        import anthropic
        import course
        from s02 import agent

        REPORT_TASK = "List the files and write their count and names to report.txt"
        print("model in use:", course.resolve_model())
        """),
        markdown("""
        ## 1. Run it

        The same task as in s01. The trace has one new line per turn, `↻ continue: ...`: the reason the
        loop goes on, recorded in the state each time.
        """),
        code("""
        result = agent.run(REPORT_TASK, trace=course.TracePrinter())
        """),
        markdown("""
        ## 2. What the result says

        `run` returns a `RunResult`, a small dataclass, instead of s01's dict. Its `stop_reason` is a named
        value from `agent.StopReason`, not a sentence to parse; `transitions` lists why each turn
        continued; `usage` adds up the tokens the API reported for every call.
        """),
        code("""
        print("fields:", [field.name for field in dataclasses.fields(agent.RunResult)])
        print("stop_reason:", result.stop_reason, "| possible:", agent.StopReason.__args__)
        print("turns:", result.turns)
        print("transitions:", result.transitions)
        print("usage:", result.usage)
        print("answer:", result.answer)
        """),
        markdown("""
        Three turns, two transitions: each of the first two turns wrote tool results back and so went
        on; the third had no tool call, so it stopped with the model's own `end_turn` and recorded no
        transition.
        """),
        markdown("""
        ## 3. One turn at a time

        `run` is only a loop around `take_turn`. You can drive it yourself: make a `LoopState` holding
        the task, then call `take_turn` once per cell and look at the state after each call.
        """),
        code("""
        client = course.make_client()
        model = course.resolve_model()
        workspace = course.prepare_workspace()
        trace = course.TracePrinter()
        state = agent.LoopState(messages=[{"role": "user", "content": REPORT_TASK}])


        def one_turn():
            \"\"\"Take one turn, then print the state's counters: what changed, and whether to go on.\"\"\"
            go_on = agent.take_turn(state, client, model, workspace, trace)
            print(f"go on: {go_on} | turn_count: {state.turn_count} | transition_reason: {state.transition_reason}"
                  f" | messages: {len(state.messages)} | usage: {state.usage}")
            return go_on


        go_on = one_turn()
        """),
        markdown("""
        One call: the reply asked for `list_files`, the tool ran, its result was written back. The
        history now holds three messages (task, reply, results), and the state says why it goes on.
        Take the next turn:
        """),
        code("""
        go_on = one_turn()
        """),
        code("""
        go_on = one_turn()
        print("stop_reason:", state.stop_reason)
        print("answer:", state.answer)
        """),
        markdown("""
        The third turn returned `False`: the reply had no tool call, so `take_turn` set `stop_reason`
        and `answer` and the loop would end here. `transition_reason` still shows the last reason the
        loop went on; `stop_reason` is the reason it stopped. Nothing else holds any state: the
        `LoopState` *is* the run, which is what makes the next section possible.
        """),
        markdown("""
        ## 4. An API outage

        APIs fail: a 529 "overloaded", a 429 rate limit, a dropped connection. The SDK retries a few
        times; when the retries are spent, it raises. The offline model can inject such faults:
        `course.Faults(rate=1.0, kinds=("overloaded",))` answers every call with a 529.

        First s01: its loop has no answer to an exception, so the run is lost, with whatever it had
        done before.
        """),
        code("""
        from s01 import agent as s01_agent

        def outage_client():
            \"\"\"An offline client whose every call is answered 529 overloaded, after the SDK's retries.\"\"\"
            return course.make_client("offline", faults=course.Faults(rate=1.0, kinds=("overloaded",)))


        try:
            s01_agent.run("List the files", client=outage_client(), model="offline")
        except anthropic.APIError as error:
            print("s01 raised", type(error).__name__, "and returned nothing:", error.status_code)
        """),
        code("""
        outage = agent.run("List the files", client=outage_client(), model="offline", trace=course.TracePrinter())
        print("stop_reason:", outage.stop_reason)
        print("answer:", outage.answer)
        print("history kept:", outage.messages)
        """),
        markdown("""
        s02 catches `anthropic.APIError` around the call, ends the run with `stop_reason` `"api_error"`
        and a one-line explanation, and returns the history. Here the very first call failed, so the
        history is just the task. The next cell lets the outage strike in the middle of a run: two turns
        on a working client, then one on the failing client, then the working client again.
        """),
        code("""
        state = agent.LoopState(messages=[{"role": "user", "content": REPORT_TASK}])
        workspace = course.prepare_workspace()
        trace = course.TracePrinter()
        go_on = one_turn()
        go_on = one_turn()

        client = outage_client()   # the API goes down
        go_on = one_turn()
        print("stop_reason:", state.stop_reason, "|", state.answer)
        print("messages kept:", [message["role"] for message in state.messages])
        """),
        code("""
        client = course.make_client()   # the API is back: the state is all it takes to go on
        while one_turn():
            pass
        print("stop_reason:", state.stop_reason, "| answer:", state.answer)
        """),
        markdown("""
        The failed call changed only `stop_reason` and `answer`: no turn was counted, no message added, and
        the two turns already done were kept. With the state in one object, a run that stopped on an
        outage can go on later from where it was.
        """),
        markdown("""
        ## Run it on Claude (or a local model)

        Set `ANTHROPIC_API_KEY` before starting Jupyter (or restart the kernel after setting it), and
        every cell above that does not name an offline model runs on Claude; `MODEL_ID` picks the
        model. The cell below runs the report task on Claude when a key is set, and does nothing
        otherwise.
        """),
        code("""
        import os

        if os.environ.get("ANTHROPIC_API_KEY"):
            claude_model = os.environ.get("MODEL_ID") or course.DEFAULT_CLAUDE_MODEL
            on_claude = agent.run(REPORT_TASK, client=course.make_client(claude_model), model=claude_model,
                                  trace=course.TracePrinter())
            print("stop_reason:", on_claude.stop_reason, "| transitions:", on_claude.transitions,
                  "| usage:", on_claude.usage)
        else:
            print("ANTHROPIC_API_KEY is not set: this cell does nothing, and the notebook stays offline.")
        """),
        markdown("""
        ## Your turn

        The exercises of this stage are the regions of `s02/agent.py` marked `# >>> exercise N`:
        1. *Record why the loop goes on* (the end of `take_turn`);
        2. *Take turns until one says stop* (the loop of `run`).

        `python -m course exercise s02 my-s02` writes your own copy with those regions emptied, and
        `python -m course check s02 my-s02` grades it. The chapter's exercise section has hints.
        """),
    ]


# ---------------------------------------------------------------- s03: stop conditions

def s03_cells() -> list:
    return [
        markdown("""
        # s03 · Stop conditions

        Up to s02 a run ends only when the model says so. A model that repeats itself runs, and bills,
        forever. s03 gives the loop stops of its own, each with a named `stop_reason`:

        | stop_reason | when |
        |---|---|
        | `end_turn` | the reply has no tool call: the model's natural end |
        | `max_turns` | the turn limit is reached |
        | `token_budget` | the tokens used, as the API reports them, reach the budget |
        | `no_progress` | the same call again and again, or failure after failure |
        | `max_tokens`, `refusal` | the reply was cut, or the model declined to go on |

        and every run appends its metrics to a runs log. This notebook makes each stop happen, checks
        that the history stays valid after a cut reply, reads the runs log, and measures how the bill
        of a long run grows. Everything runs offline unless you set an API key (see the s00 notebook).
        """),
        code("""
        import json
        import os
        import tempfile
        from pathlib import Path

        import course
        import course.offline
        import course.stats
        from course import scenarios
        from s03 import agent

        # This notebook's runs go to a scratch runs log, so your own runs/runs.jsonl stays yours.
        RUNS_LOG = Path(tempfile.mkdtemp(prefix="s03-notebook-")) / "runs.jsonl"
        os.environ["AGENT_COURSE_RUNS_LOG"] = str(RUNS_LOG)

        REPORT_TASK = "List the files and write their count and names to report.txt"
        print("model in use:", course.resolve_model())
        print("default limits:", agent.Limits())
        """),
        markdown("""
        ## 1. The natural end

        A task the model finishes: nothing changes from s02, except that the result now carries a
        one-line `explanation` of why the run ended, and the run's metrics (tool calls and failures per
        tool, and how long it took).
        """),
        code("""
        natural = agent.run(REPORT_TASK, trace=course.TracePrinter())
        print("stop_reason:", natural.stop_reason, "| explanation:", natural.explanation)
        print("turns:", natural.turns, "| usage:", natural.usage)
        print("tool_calls:", natural.tool_calls, "| tool_errors:", natural.tool_errors, "| duration_s:", natural.duration_s)
        """),
        markdown("""
        ## 2. The turn limit

        A long, legitimate task: add up the amounts of every file in a `ledger/` folder. The offline
        model `offline-long-N` lists the folder, reads one file per turn, and answers: about N turns.
        `scenarios.ledger(workspace, count)` writes the folder into a fresh workspace. With 30 files the
        task takes 32 turns; a limit of 8 stops it well before.
        """),
        code("""
        LEDGER_FILES = 30
        LONG_MODEL = f"offline-long-{LEDGER_FILES + 2}"   # lists, reads 30 files, answers


        def ledger_workspace():
            workspace = course.prepare_workspace()
            scenarios.ledger(workspace, LEDGER_FILES)
            return workspace


        limited = agent.run(scenarios.LEDGER_TASK, model=LONG_MODEL, workspace=ledger_workspace(),
                            max_turns=8, trace=course.TracePrinter())
        print("stop_reason:", limited.stop_reason, "| turns:", limited.turns)
        print("explanation:", limited.explanation)
        """),
        markdown("""
        The limit is checked *before* each call: the next call is what would cost. The result's
        `explanation` (also the trace's `■ stop` line) says which limit stopped the run, its value, and
        what to change if the task really needs more; `answer` holds only what the model wrote, and
        here it wrote none.
        """),
        markdown("""
        ## 3. The token budget

        A turn limit counts calls; a budget counts what they cost. The budget is checked against the
        `usage` the API reports, added up over the run. To choose one, first let the task run to its
        end and see what it costs in all; then give the same task half of that.
        """),
        code("""
        full = agent.run(scenarios.LEDGER_TASK, model=LONG_MODEL, workspace=ledger_workspace())
        full_cost = full.usage["input_tokens"] + full.usage["output_tokens"]
        print("unlimited:", full.stop_reason, "after", full.turns, "turns,", full_cost, "tokens")
        print("answer:", full.answer)

        budgeted = agent.run(scenarios.LEDGER_TASK, model=LONG_MODEL, workspace=ledger_workspace(),
                             token_budget=full_cost // 2)
        budgeted_cost = budgeted.usage["input_tokens"] + budgeted.usage["output_tokens"]
        print("budget", full_cost // 2, ":", budgeted.stop_reason, "after", budgeted.turns, "turns,", budgeted_cost, "tokens")
        print("explanation:", budgeted.explanation)
        print(f"half the tokens bought {budgeted.turns / full.turns:.0%} of the turns")
        """),
        markdown("""
        Half the tokens bought more than half the turns: the late turns of a run are the expensive ones,
        because each resends a longer history (section 7 measures it). The budget is checked before
        a call, so a run can pass it by at most one call's cost.
        """),
        markdown("""
        ## 4. No progress

        `offline-looping` reproduces seed 001's small model: it writes `report.txt` correctly, then sends
        the same `write_file` on every turn. In s01 only an outside guard stopped it. s03 reads its own
        history: the same call (name and arguments) `max_repeats` times in a row means no progress.
        """),
        code("""
        looping = agent.run(REPORT_TASK, model="offline-looping", trace=course.TracePrinter())
        print("stop_reason:", looping.stop_reason, "| turns:", looping.turns)
        """),
        markdown("""
        The other kind of no progress is failure after failure: `max_consecutive_errors` failed tool
        calls in a row, even if each one is different. `agent.no_progress` reads it off any history;
        here is one made by hand, three reads of files that do not exist.
        """),
        code("""
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
        """),
        markdown("""
        ## 5. A reply cut by `max_tokens`

        Every call says how long the reply may be (`max_tokens`, 1024 in the stages). A longer reply is
        cut, and its `stop_reason` is `"max_tokens"`. `offline-verbose` thinks aloud at length before
        every action, so its first reply is cut in the middle of its text, before the tool call it was
        going to make.
        """),
        code("""
        TOTAL_TASK = "Read sample.txt and compute the total price"
        cut = agent.run(TOTAL_TASK, model="offline-verbose")
        print("stop_reason:", cut.stop_reason, "| turns:", cut.turns)
        print("explanation:", cut.explanation)
        print("the reply ends:", "…" + cut.messages[-1]["content"][-1]["text"][-80:])
        """),
        markdown("""
        Going on would be pointless: the next reply would be cut the same way. The run stops, and its
        explanation says what to change.

        A cut can also fall *inside* a tool call. The API then returns the `tool_use` block without its
        arguments, and it still needs a `tool_result`, or the history is invalid. To see it, measure the
        first reply of the report task, then run the task on a client that allows one token less than
        that reply needs: its text fits, its tool call does not.
        """),
        code("""
        def with_max_tokens(client, max_tokens):
            \"\"\"The client, with every call's max_tokens replaced by ours.\"\"\"
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
        """),
        markdown("""
        The cut `tool_use` arrived with empty arguments; s03 did not run it, but answered it with an
        `is_error` result saying why. The offline model's validator checks a history by the real API's
        rules: the history is valid, and a run could go on from it. Without that answer it would not be.
        """),
        code("""
        def check(messages):
            try:
                course.offline.validate_request({"model": "offline", "max_tokens": 10, "messages": messages})
                return "valid"
            except course.offline.ApiError as error:
                return f"{error.status}: {error.body()['error']['message']}"


        print("s03's history:            ", check(cut_call.messages))
        print("without the answer, going on:", check(cut_call.messages[:-1] + [{"role": "user", "content": "Go on."}]))
        print("the verbose run's history:", check(cut.messages))
        """),
        markdown("""
        ## 6. Metrics and the runs log

        Every run above appended one JSON line to the runs log (`run(..., runs_log=False)` opts out).
        Seed 000 names the three numbers a team needs to improve an agent: how many turns a task took,
        which tool failed how often, and how often runs were cut off. Here is the last line, then the
        summary that `python -m course stats` prints (this notebook pointed `AGENT_COURSE_RUNS_LOG` at
        a scratch file; without it, the log is `runs/runs.jsonl` under the current folder).
        """),
        code("""
        print(RUNS_LOG.read_text(encoding="utf-8").splitlines()[-1])
        """),
        code("""
        print(course.stats.report(RUNS_LOG))
        """),
        markdown("""
        ## 7. Why budgets matter: the bill grows with the square of the turns

        Each call resends the whole history, so each call's input is the last one's plus the turn just
        added. Run the ledger task at 20, 40 and 80 turns and keep each call's usage:
        `course.capped(client, n)` records it in `.usages` (and would stop a runaway after `n` calls).
        """),
        code("""
        def long_run(turns):
            \"\"\"The ledger task sized to take `turns` turns; returns the input tokens of each call.\"\"\"
            workspace = course.prepare_workspace()
            scenarios.ledger(workspace, turns - 2)
            client = course.capped(course.make_client(f"offline-long-{turns}"), turns)
            result = agent.run(scenarios.LEDGER_TASK, client=client, model=f"offline-long-{turns}", workspace=workspace,
                               max_turns=turns, token_budget=10**9, runs_log=False)
            assert result.stop_reason == "end_turn", result.stop_reason
            return [usage.input_tokens for usage in client.usages]


        per_call = {turns: long_run(turns) for turns in (20, 40, 80)}
        calls = per_call[40]
        print("input tokens of the first calls of the 40-turn run:", calls[:6], "...")
        print("growth from one call to the next:", [later - earlier for earlier, later in zip(calls, calls[1:])][:6], "...")
        """),
        markdown("""
        After the first turns, every call sends the same number of tokens more than the one before: a
        turn's call and result. The input of call *k* is a fixed part (system prompt, tools, task) plus
        *k* times that step, so the sum over *N* calls is about *N* × fixed + step × *N*²/2. Double the
        turns, and the bill heads for four times as much:
        """),
        code("""
        print(f"{'turns':>5}  {'input billed':>12}  {'last call':>9}  ratio to half the turns")
        previous = None
        for turns, inputs in per_call.items():
            billed = sum(inputs)
            ratio = f"{billed / previous:.2f}x" if previous else ""
            print(f"{turns:>5}  {billed:>12}  {inputs[-1]:>9}  {ratio}")
            previous = billed
        """),
        code("""
        from itertools import accumulate

        cumulative = list(accumulate(per_call[80]))
        print("cumulative input billed, every 10th call of the 80-turn run:")
        for call in range(10, 81, 10):
            print(f"  call {call:>2}: {cumulative[call - 1]:>7} {'#' * (cumulative[call - 1] * 60 // cumulative[-1])}")
        """),
        markdown("""
        The ratio climbs toward 4 as the history outweighs the fixed part. The files here are tiny; with
        real tool results the step is larger and the square arrives sooner. A budget caps the bill; s05
        makes the history itself smaller.
        """),
        markdown("""
        ## Run it on Claude (or a local model)

        Set `ANTHROPIC_API_KEY` before starting Jupyter (or restart the kernel after setting it). Cells
        that name an `offline-...` model keep using it, since those behaviours are what they show; the
        cell below runs the report task on Claude with a turn limit and a budget when a key is set, and
        does nothing otherwise.
        """),
        code("""
        if os.environ.get("ANTHROPIC_API_KEY"):
            claude_model = os.environ.get("MODEL_ID") or course.DEFAULT_CLAUDE_MODEL
            on_claude = agent.run(REPORT_TASK, client=course.make_client(claude_model), model=claude_model,
                                  max_turns=10, token_budget=50_000, trace=course.TracePrinter())
            print("stop_reason:", on_claude.stop_reason, "| turns:", on_claude.turns, "| usage:", on_claude.usage)
        else:
            print("ANTHROPIC_API_KEY is not set: this cell does nothing, and the notebook stays offline.")
        """),
        markdown("""
        ## Your turn

        The exercises of this stage are the regions of `s03/agent.py` marked `# >>> exercise N`:
        1. *Stop before a limit is passed* (`limit_reached`);
        2. *Detect no progress* (`no_progress`).

        `python -m course exercise s03 my-s03` writes your own copy with those regions emptied, and
        `python -m course check s03 my-s03` grades it. The chapter's exercise section has hints.
        """),
    ]


# ---------------------------------------------------------------- s04: error feedback

def s04_cells() -> list:
    return [
        markdown("""
        # s04 · Error feedback

        A model reads the tool results, and nothing else, to decide its next move. Up to s03 a failure
        comes back as `Error: FileNotFoundError: ...`: the model learns that something went wrong, not
        what to do about it, and often sends the same call again. s04 makes every result structured
        and actionable: `{"ok": true, "output": ...}` on success; on failure an error type, a one-line
        message and a **hint** that names the next move, with `is_error` set.

        This notebook puts the bare error and the actionable one side by side, then looks at each kind
        of error s04 writes, at long outputs, and at tool calls that a model wrote as text. Everything
        runs offline unless you set an API key (see the s00 notebook).
        """),
        code("""
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
        """),
        markdown("""
        ## 1. The same typo, two kinds of error

        `offline-typo` asks for `memo.md` misspelled. It behaves like the models seed 000 describes: told
        only "Error", it tries the very same call again; told which names exist, it fixes the spelling.
        It decides from the words of the error alone. First s03, with its bare error:
        """),
        code("""
        bare = s03.run(SUMMARY_TASK, model="offline-typo", trace=course.TracePrinter())
        """),
        markdown("""
        Three identical calls, and s03's no-progress stop ends the run: the stop saved the bill, not the
        task. Now s04, same model, same task:
        """),
        code("""
        actionable = agent.run(SUMMARY_TASK, model="offline-typo", trace=course.TracePrinter())
        """),
        markdown("""
        The error said `nearest existing names: memo.md, todo.md`, and the next call was right. Side by
        side, for the typo and for the two other faulty callers (`offline-unknown-tool` calls a tool
        that does not exist, `offline-bad-args` sends arguments of the wrong shape):
        """),
        code("""
        def cost(result):
            return f"{result.stop_reason:<12} {result.turns:>5} {result.usage['input_tokens']:>12} {result.usage['output_tokens']:>13}"


        print(f"{'model':<21} {'stage':<5} {'stop_reason':<12} {'turns':>5} {'input tokens':>12} {'output tokens':>13}")
        for model in ("offline-typo", "offline-unknown-tool", "offline-bad-args"):
            for stage in (s03, agent):
                print(f"{model:<21} {stage.STAGE:<5} {cost(stage.run(SUMMARY_TASK, model=model))}")
        """),
        markdown("""
        With the bare error each run spends its turns and tokens and ends with nothing; with the
        actionable one, about the same spend buys the answer. An error message is part of the prompt:
        what the tools return decides how well the model does as much as the model itself.
        """),
        markdown("""
        ## 2. Every kind of error, by hand

        `agent.run_tool(workspace, name, arguments)` is the dispatcher: it returns the text for the model
        and `is_error`. Before a tool runs, s04 checks its name, then its arguments against the tool's
        `input_schema`. Each failure is one JSON object: `error` (a type a program can test), `message`
        (what happened) and `hint` (what to do next).
        """),
        code("""
        workspace = course.prepare_workspace()


        def show_result(name, arguments):
            text, is_error = agent.run_tool(workspace, name, arguments)
            print(f"{name}({json.dumps(arguments)})  is_error={is_error}")
            for key, value in json.loads(text).items():
                print(f"    {key:8} {course.shorten(str(value), 110)}")


        show_result("read_file", {"path": "memo.md"})   # success: ok and the output
        show_result("read_text_file", {"path": "memo.md"})   # a tool that does not exist
        """),
        code("""
        show_result("read_file", {"file": "memo.md"})        # a wrong field name, the required one missing
        show_result("read_file", {"path": 42})               # a number where a string is expected
        show_result("read_file", "memo.md")                  # arguments that are not an object at all
        """),
        code("""
        show_result("read_file", {"path": "mmeo.md"})        # a missing path: the nearest names
        show_result("read_file", {"path": "budget.xlsx"})    # nothing close: what to do instead
        show_result("list_files", {"path": "memo.md"})       # a file where a folder is expected
        """),
        markdown("""
        The unknown tool gets the list of tools and the closest name; bad arguments get the field and
        what it should be; a missing path gets the nearest existing names, or, when nothing is close,
        the tool that shows what exists. No stack trace ever reaches the model.
        """),
        markdown("""
        ## 3. A long output: cut, with a marker, and read on

        Everything a tool returns stays in the history and is resent with every later call. s04 keeps
        at most `MAX_RESULT_CHARS` characters of a result and ends the cut one with a marker: how much
        is missing, and how to get it. Here is a file more than twice that long.
        """),
        code("""
        lines, size = [], 0
        while size <= 2.5 * agent.MAX_RESULT_CHARS:
            lines.append(f"line {len(lines) + 1:04d}: the agent loop keeps going until the model stops asking for tools")
            size += len(lines[-1]) + 1
        long_text = "\\n".join(lines) + "\\n"
        (workspace / "long.txt").write_text(long_text, encoding="utf-8")
        print("long.txt:", len(long_text), "characters; the limit is", agent.MAX_RESULT_CHARS)

        first, _ = agent.run_tool(workspace, "read_file", {"path": "long.txt"})
        output = json.loads(first)["output"]
        print("returned:", len(output), "characters, ending with:")
        print(output[-160:])
        """),
        markdown("""
        `read_file` takes an `offset` (s04 added it to the schema for this), and the marker says which
        one to pass. Following the markers, as a model would, gets the whole file back, piece by piece:
        """),
        code("""
        MARKER = re.compile(r"\\n\\[cut: \\d+ of \\d+ characters not shown; call read_file with offset=(\\d+) to read on\\]$")

        pieces, offset = [], 0
        while offset is not None:
            text, _ = agent.run_tool(workspace, "read_file", {"path": "long.txt", "offset": offset})
            output = json.loads(text)["output"]
            marker = MARKER.search(output)
            pieces.append(output[:marker.start()] if marker else output)
            print(f"offset {offset:>5}: {len(pieces[-1])} characters" + (f", marker says offset={marker[1]}" if marker else ", no marker: the end"))
            offset = int(marker[1]) if marker else None

        print("the pieces make the whole file:", "".join(pieces) == long_text)
        """),
        markdown("""
        ## 4. Tool calls written as text

        Seed 001 ran small local models through Ollama: not one structured tool call in any run. The
        calls came back as JSON *text*, in four shapes: alone on a line, after a sentence, in a ```json
        fence, and in `<tool_call>` tags. A loop that ends on "no `tool_use`" takes such a reply for a final
        answer. `offline-text-calls` reproduces it; on s03:
        """),
        code("""
        REPORT_TASK = "List the files and write their count and names to report.txt"
        as_text = s03.run(REPORT_TASK, model="offline-text-calls", trace=course.TracePrinter())
        print("report.txt written:", (Path(as_text.workspace) / "report.txt").exists())
        """),
        markdown("""
        One turn, `end_turn`, nothing done. (Its second line is not even JSON: the model wrote Python that
        uses the listing before it has it.) s04 looks for calls in the text of a reply that has no
        `tool_use`, runs the ones that name a real tool with valid arguments, and tells the model in the
        next user message what it ran, and that the tool interface is the way to call:
        """),
        code("""
        recovered = agent.run(REPORT_TASK, model="offline-text-calls", trace=course.TracePrinter())
        print("stop_reason:", recovered.stop_reason, "| transitions:", recovered.transitions)
        print("report.txt written:", (Path(recovered.workspace) / "report.txt").exists())
        """),
        markdown("""
        The results go back as plain text blocks, not `tool_result`s: there is no `tool_use` id to answer,
        so the history stays valid for the real API. The transition is recorded as `text_calls_recovered`.

        Which text counts as a call is decided by `agent.calls_written_as_text`: a JSON object naming a tool
        that exists, with arguments that pass its schema. Here it is on the four shapes, and on texts
        that must not run anything:
        """),
        code("""
        TEXTS = {
            "raw, alone on a line": '{"name": "list_files", "arguments": {"path": "."}}',
            "after a sentence": 'There are 5 files, so I will write the report.\\n'
                                '{"name": "write_file", "arguments": {"path": "report.txt", "content": "5 files"}}',
            "in a code fence": '```json\\n{\\n  "name": "read_file",\\n  "arguments": {"path": "memo.md"}\\n}\\n```',
            "in <tool_call> tags": '<tool_call>\\n{"name": "search_files", "arguments": {"text": "agent"}}\\n</tool_call>',
            "an answer with a JSON example": 'config.json holds settings such as {"debug": true, "retries": 3}.',
            "a tool that does not exist": '{"name": "delete_everything", "arguments": {}}',
            "arguments that do not validate": '{"name": "read_file", "arguments": {"file": "memo.md"}}',
            "Python, not JSON": '{"name": "write_file", "arguments": {"path": "r.txt", "content": "n=" + str(len(files))}}',
        }
        for shape, text in TEXTS.items():
            print(f"{shape:<32} -> {agent.calls_written_as_text(text)}")
        """),
        markdown("""
        The rule has a limit worth knowing: an answer that *shows* a valid call as an example, say
        `{"name": "read_file", "arguments": {"path": "memo.md"}}` in a how-to, would be run. Here that only
        reads a file; s06 puts every call, written as text or not, through the same permission gate.
        """),
        markdown("""
        ## Run it on Claude (or a local model)

        Claude calls tools through `tool_use` blocks and rarely misspells a path, so the faulty callers
        above are offline models on purpose. With `ANTHROPIC_API_KEY` set, the cell below asks Claude for
        a file that does not exist and prints what s04 told it and what it did next; otherwise it does
        nothing. A small local model through `ANTHROPIC_BASE_URL` is where text calls show up for real.
        """),
        code("""
        if os.environ.get("ANTHROPIC_API_KEY"):
            claude_model = os.environ.get("MODEL_ID") or course.DEFAULT_CLAUDE_MODEL
            on_claude = agent.run("Summarise notes.md", client=course.make_client(claude_model), model=claude_model,
                                  trace=course.TracePrinter())
            print("stop_reason:", on_claude.stop_reason, "| turns:", on_claude.turns)
        else:
            print("ANTHROPIC_API_KEY is not set: this cell does nothing, and the notebook stays offline.")
        """),
        markdown("""
        ## Your turn

        The exercises of this stage are the regions of `s04/agent.py` marked `# >>> exercise N`:
        1. *Refuse an unknown tool or bad arguments, saying how to fix the call* (`call_tool`);
        2. *Cut a long result with a marker that says how to see the rest* (`cut_to_fit`).

        `python -m course exercise s04 my-s04` writes your own copy with those regions emptied, and
        `python -m course check s04 my-s04` grades it. The chapter's exercise section has hints.
        """),
    ]


# ---------------------------------------------------------------- s05: pruning

def s05_cells() -> list:
    return [
        markdown("""
        # s05 · Pruning

        Every call resends the whole history. s03 measured what that costs: the input billed over *N*
        turns grows with *N*², and a long enough run no longer fits the model's context window at all.
        s05 prunes the history before each call, in two ways:

        - **masking**: tool results older than the last `KEEP_RESULTS` are replaced by a short placeholder
          that says what was there and how to get it again;
        - **summarising**: if the prompt is still over `SUMMARY_THRESHOLD` tokens, the model writes a
          summary of all but the last `KEEP_TURNS` turns, and the summary replaces them.

        Neither may break the rule of s00: every `tool_use` keeps its `tool_result`. This notebook masks a
        history by hand, watches both prunings in a run, measures them with the course's token benchmark,
        and runs a task that overflows the context window without them. Everything runs offline unless
        you set an API key (see the s00 notebook).
        """),
        code("""
        import copy
        import os
        import tempfile
        from pathlib import Path

        from IPython.display import SVG, display

        import course
        import course.bench
        import course.offline
        from course.offline import flood
        from s04 import agent as s04
        from s05 import agent

        # This notebook's runs go to a scratch runs log, so your own runs/runs.jsonl stays yours.
        os.environ["AGENT_COURSE_RUNS_LOG"] = str(Path(tempfile.mkdtemp(prefix="s05-notebook-")) / "runs.jsonl")

        print("model in use:", course.resolve_model())
        print("KEEP_RESULTS:", agent.KEEP_RESULTS, "| SUMMARY_THRESHOLD:", agent.SUMMARY_THRESHOLD, "| KEEP_TURNS:", agent.KEEP_TURNS)
        """),
        markdown("""
        ## 1. A task that floods the history

        `offline-flood-N` counts the ERROR lines of N log files, reading one file per turn; each file is
        about 3,500 characters, so each turn adds about a thousand tokens to the history.
        `flood.logs(workspace, N)` writes the files. The model keeps notes as it goes ("running total 24;
        2 of 5 files read"), the way a careful person on a long job would. Here is the task on s04, which
        keeps everything:
        """),
        code("""
        def flood_workspace(files):
            workspace = course.prepare_workspace()
            flood.logs(workspace, files)
            return workspace


        unpruned = s04.run(flood.COUNT_TASK, model="offline-flood-5", workspace=flood_workspace(5))
        print("stop_reason:", unpruned.stop_reason, "| turns:", unpruned.turns, "| answer:", unpruned.answer)
        """),
        markdown("""
        ## 2. Masking, by hand

        `agent.mask_old_results(messages, keep)` rewrites a history in place and returns how many results
        it masked. Try it on a copy of that history, keeping the last three results:
        """),
        code("""
        history = copy.deepcopy(unpruned.messages)
        before = agent.estimate_prompt_tokens(history)
        print("masked:", agent.mask_old_results(history, agent.KEEP_RESULTS))
        print(f"estimated prompt: {before} tokens before, {agent.estimate_prompt_tokens(history)} after\\n")

        for block in agent.tool_results_in(history):
            print(block["tool_use_id"][-6:], course.shorten(block["content"], 150))
        """),
        markdown("""
        The `tool_result` blocks all stay, with their ids: only the *content* of the old ones is
        replaced, so every `tool_use` is still answered. The placeholder names the call that produced
        the result and its size, and says how to get it back: call it again. The model's own notes
        (in its text, which is never masked) keep what it learned from those results. Both histories are
        valid for the API:
        """),
        code("""
        def check(messages):
            try:
                course.offline.validate_request({"model": "offline", "max_tokens": 10, "messages": messages})
                return "valid"
            except course.offline.ApiError as error:
                return f"{error.status}: {error.body()['error']['message']}"


        print("original:", check(unpruned.messages))
        print("masked:  ", check(history))
        print("masking twice masks nothing more:", agent.mask_old_results(history, agent.KEEP_RESULTS))
        """),
        markdown("""
        ## 3. s05 on the task: the tokens of every turn

        s05 prunes before every call, and its trace adds a line per turn: the tokens that call sent and
        received, and the input billed so far. Same task, eight files this time:
        """),
        code("""
        pruned = agent.run(flood.COUNT_TASK, model="offline-flood-8", workspace=flood_workspace(8), trace=course.TracePrinter())
        """),
        markdown("""
        After the first few reads, each turn masks one more old result, and the input per call stops
        growing by a whole file each turn: it grows only by the model's short notes and the placeholders.
        Compare the input of each call with s04 on the same task (`course.capped` records every call's
        usage):
        """),
        code("""
        def input_per_call(stage, files):
            client = course.capped(course.make_client(f"offline-flood-{files}"), 10 * files)
            result = stage.run(flood.COUNT_TASK, client=client, model=f"offline-flood-{files}", workspace=flood_workspace(files),
                               runs_log=False)
            return result, [usage.input_tokens for usage in client.usages]


        s04_result, s04_inputs = input_per_call(s04, 8)
        s05_result, s05_inputs = input_per_call(agent, 8)
        print("s04:", s04_inputs, "| billed:", sum(s04_inputs), "|", s04_result.answer)
        print("s05:", s05_inputs, "| billed:", sum(s05_inputs), "|", s05_result.answer)
        print(f"s05 bills {sum(s05_inputs) / sum(s04_inputs):.0%} of s04's input, for the same answer")
        """),
        markdown("""
        ## 4. Summarising

        Masking alone keeps this task small, so the summary never triggers at the default threshold. To
        watch it, turn masking off (`KEEP_RESULTS` huge) and lower `SUMMARY_THRESHOLD` for one run. `prune`
        reads both constants at every call. The trace here is a function of our own that prints only the
        `note` lines: the tokens of each turn, and each summary.
        """),
        code("""
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
        """),
        markdown("""
        Each time the prompt passes the threshold, the older turns are folded into a summary and the
        prompt drops; then it grows again. The summarising call is a model call too, billed like any other
        (it is added to the run's usage). The summary takes the place of the first message, after the task
        itself, and the history is still valid:
        """),
        code("""
        print(summarised.messages[0]["content"])
        print()
        print("first message from:", summarised.messages[0]["role"], "| history:", check(summarised.messages))
        """),
        markdown("""
        ## 5. The token benchmark

        `python -m course bench tokens --turns N` runs the flood task at N turns on several stages, records
        every call's input, and fits the exponent *b* in *cumulative input ≈ a · call^b*: 2 is quadratic
        growth, 1 linear. The same from Python, at 40 turns to keep this notebook quick (the chapter's
        figures use 100):
        """),
        code("""
        bench = course.bench.run_token_bench(40, stages=("s04", "s05"))
        for stage, row in bench["stages"].items():
            print(f"{stage}: completed={row['completed']}, turns={row['turns']}, input billed={row['input_tokens']:,}, "
                  f"peak prompt={row['peak_prompt_tokens']:,}, exponent b={row['exponent']}")
        print(f"s05 / s04 input billed: {bench['ratio_s05_s04']:.0%}")
        display(SVG(course.bench.plot_svg(bench)))
        """),
        markdown("""
        s04's curve bends upward; s05's stays close to a straight line, since each of its calls costs
        about the same. The longer the run, the larger the gap: rerun the cell with 100 turns to see the
        chapter's numbers (it takes a few seconds more).
        """),
        markdown("""
        ## 6. When the history no longer fits

        A model's context window caps the prompt: 200,000 tokens or more for Claude. The offline model's
        window can be set per client, and a small one, 20,000 tokens, makes the overflow arrive in
        seconds. Past it, the API refuses the call with a 400 "prompt is too long". s04 stops there,
        with the reason (it does not crash: s02 taught it that); s05 finishes.
        """),
        code("""
        WINDOW = 20_000
        FILES = 24

        for stage in (s04, agent):
            client = course.make_client(f"offline-flood-{FILES}", context_window=WINDOW)
            result = stage.run(flood.COUNT_TASK, client=client, model=f"offline-flood-{FILES}", workspace=flood_workspace(FILES))
            print(f"{stage.STAGE}: {result.stop_reason} after {result.turns} turns, {result.usage['input_tokens']:,} input tokens")
            print("     ", result.answer if result.stop_reason == "end_turn" else result.explanation)
        """),
        markdown("""
        ## Run it on Claude (or a local model)

        Set `ANTHROPIC_API_KEY` before starting Jupyter (or restart the kernel after setting it). The flood
        task is an offline model on purpose (it needs its generated log files); the cell below runs a
        short task on Claude with s05's trace, so you see the real token counts of each turn, and does
        nothing without a key.
        """),
        code("""
        if os.environ.get("ANTHROPIC_API_KEY"):
            claude_model = os.environ.get("MODEL_ID") or course.DEFAULT_CLAUDE_MODEL
            on_claude = agent.run("Summarise memo.md, todo.md and hello.txt, one at a time",
                                  client=course.make_client(claude_model), model=claude_model, trace=course.TracePrinter())
            print("stop_reason:", on_claude.stop_reason, "| usage:", on_claude.usage)
        else:
            print("ANTHROPIC_API_KEY is not set: this cell does nothing, and the notebook stays offline.")
        """),
        markdown("""
        ## Your turn

        The exercises of this stage are the regions of `s05/agent.py` marked `# >>> exercise N`:
        1. *Mask old tool results, keeping every pair intact* (`mask_old_results`);
        2. *Fold old turns into a summary without breaking a tool_use/tool_result pair* (`summarise_old_turns`).

        `python -m course exercise s05 my-s05` writes your own copy with those regions emptied, and
        `python -m course check s05 my-s05` grades it. The chapter's exercise section has hints.
        """),
    ]


# ---------------------------------------------------------------- s06: permission gates

def s06_cells() -> list:
    return [
        markdown("""
        # s06 · Permission gates

        s06 gives the agent tools that can do harm (`delete_file`, `move_file`, `run_command`), and takes
        the decision about them away from the model. A system prompt that says "do not delete" is not a
        defence: the model cannot judge whether a call is allowed. The harness decides, outside the loop:

        - every tool has a **risk class** (read, write, destructive, execute);
        - **rules** (deny, ask, allow; a tool and a pattern: a path glob, or a program for commands) are
          checked deny first, then ask, then allow; with no match, the risk class's default applies;
        - a **command** is read with the shell's own grammar (tree-sitter-bash, in `s06/gate.py`): only a
          plain command of the safe list, on paths inside the workspace, runs without a person, and a deny
          rule finds its program anywhere in the tree; every command runs **confined by the kernel**;
        - **ask** means a person decides; with no terminal, ask means deny;
        - a denial goes back to the model as an `is_error` result that says why and what to do instead;
        - every file tool goes through a **path sandbox**; the command tool and the calculator are bounded;
        - every decision is written to an **audit log**.

        Everything runs offline unless you set an API key (see the s00 notebook).
        """),
        code("""
        import json
        import os
        import tempfile
        import time
        from pathlib import Path

        import course
        from s05 import agent as s05
        from s06 import agent
        from s06 import gate as gates

        # This notebook's runs and gate decisions go to scratch logs, so your own runs/ stays yours.
        scratch = Path(tempfile.mkdtemp(prefix="s06-notebook-"))
        os.environ["AGENT_COURSE_RUNS_LOG"] = str(scratch / "runs.jsonl")
        os.environ["AGENT_COURSE_AUDIT_LOG"] = AUDIT_LOG = str(scratch / "audit.jsonl")

        print("model in use:", course.resolve_model())
        print("risk classes:", gates.RISK)
        print("defaults:", gates.DEFAULT_DECISION)
        print("confinement:", agent.confine.probe())
        """),
        markdown("""
        ## 1. What the gate decides

        `Gate.decide(workspace, tool, arguments)` returns the decision, the reason, and who decided (a rule
        or a risk class's default). It only decides; nothing runs. The rules are `agent.RULES`:
        """),
        code("""
        print("\\n".join(str(rule) for rule in agent.RULES))
        """),
        code("""
        workspace = course.prepare_workspace()
        gate = agent.Gate(rules=agent.RULES, approver=None, audit_log=False, confinement=agent.confine.probe())

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
            decision, why, decided_by = gate.decide(workspace, tool, arguments)
            print(f"{decision:<5} {tool} {json.dumps(arguments)}\\n      {decided_by}: {why}")
        """),
        markdown("""
        Writing a new file is allowed, but writing over an existing one is classed as destructive and
        needs a person. `echo` is allowed, but `echo ... > memo.md` overwrites a file, so the allowed
        prefix does not cover it.
        """),
        markdown("""
        ## 2. Commands, read with the shell's grammar

        A rule that allows `ls` must not allow `ls && rm -rf .`: that bypass was reported against several
        agents. `gates.read_command` parses a command with tree-sitter-bash and classifies the tree: is it
        *plain* (words joined by `&&`, `||`, `;`, `|`, nothing the shell expands or runs first), and which
        programs appear anywhere in it, behind wrappers and inside substitutions included.
        """),
        code("""
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
            reading = gates.read_command(command)
            plain = f"plain: {reading.commands}" if reading.plain else f"not plain: {reading.why_not}"
            decision, why, _ = gate.decide(workspace, "run_command", {"command": command})
            print(f"{command!r}\\n    {plain}\\n    {decision}: {why}")
        """),
        markdown("""
        A command the grammar cannot read (an unbalanced quote) is never plain: with no person, it is denied.
        """),
        markdown("""
        ## 3. The path sandbox

        Every file tool resolves its path (following `..` and symbolic links) and refuses one that ends
        outside the workspace. Let us set traps: a sibling folder whose name *starts with* the workspace's
        name, holding a secret, and a symbolic link inside the workspace that points into it.
        """),
        code("""
        sibling = workspace.parent / (workspace.name + "-evil")
        sibling.mkdir(exist_ok=True)
        (sibling / "secret.txt").write_text("the sibling's secret\\n", encoding="utf-8")
        (workspace / "shortcut").symlink_to(sibling, target_is_directory=True)

        print("workspace:", workspace)
        print("sibling:  ", sibling)
        print("shortcut -> ", os.readlink(workspace / "shortcut"))
        """),
        markdown("""
        A check that compares paths as *strings* lets the sibling through: its path starts with the
        workspace's path. That is the bug behind CVE-2025-54794 and CVE-2025-53110. s06 compares path
        components (`Path.is_relative_to`). Side by side, on each trap:
        """),
        code("""
        def string_check(path):
            \"\"\"The buggy check: is the resolved path's text prefixed by the workspace's?\"\"\"
            try:
                return "inside" if str((workspace / path).resolve()).startswith(str(workspace)) else "outside"
            except ValueError as error:  # the NUL byte: this check never thought of it
                return f"crashed ({error})"


        def sandbox(path):
            try:
                agent.inside(workspace, path)
                return "allowed"
            except agent.ToolError as error:
                return f"refused: {error.message}"


        TRAPS = ["memo.md", "../" + sibling.name + "/secret.txt", str(sibling / "secret.txt"),
                 "shortcut/secret.txt", "notes/../memo.md", "memo.md\\x00.txt"]
        for path in TRAPS:
            print(f"{path!r}\\n    string check: {string_check(path)}\\n    s06:          {sandbox(path)}")
        """),
        code("""
        text, is_error = agent.run_tool(workspace, "read_file", {"path": "shortcut/secret.txt"}, gate)
        print("what the model reads:", text)
        """),
        markdown("""
        ## 4. Ask: a person decides

        Deletes, overwrites and unknown commands default to *ask*. In a terminal, s06 prompts you (allow
        once, allow always for exactly this command or path, or no with a reason); in this notebook there
        is no terminal, so a `Gate` built with `approver=None` denies them. A person is just a function
        `(tool, arguments, why, covers) -> (answer, reason)`, where `covers` says what "always" would
        approve, so we can script one:
        """),
        code("""
        script = iter([("allow once", ""), ("deny", "keep todo.md, I still need it"), ("allow always", "")])


        def scripted_person(tool, arguments, why, covers):
            answer, reason = next(script)
            print(f"  [person asked: {tool} {json.dumps(arguments)} ({why}) -> {answer}{': ' + reason if reason else ''}]")
            return answer, reason


        person_gate = agent.Gate(rules=agent.RULES, approver=scripted_person,   # audit_log=None: the default audit log
                                 confinement=agent.confine.probe())


        def attempt(tool, arguments):
            text, is_error = agent.run_tool(workspace, tool, arguments, person_gate)
            print(f"{'✗' if is_error else '✓'} {tool} {json.dumps(arguments)}: {course.shorten(text, 240)}\\n")


        attempt("delete_file", {"path": "hello.txt"})          # asked: allowed once
        attempt("delete_file", {"path": "todo.md"})            # asked: refused, with a reason
        attempt("run_command", {"command": "uname"})           # asked: allowed always
        attempt("run_command", {"command": "uname"})           # not asked again
        print("files now:", sorted(path.name for path in workspace.iterdir()))
        """),
        markdown("""
        The refusal reaches the model as an `is_error` result with the person's reason and a hint of
        what to do instead, so the history stays valid and the model can change course. "Allow always"
        is remembered for that exact command, for the rest of the run.
        """),
        markdown("""
        ## 5. The audit log

        Every decision is one JSON line: the tool, its arguments, the rule or default that applied, the
        decision, and who decided. This notebook pointed `AGENT_COURSE_AUDIT_LOG` at a scratch file;
        without it, the log is `runs/audit.jsonl`.
        """),
        code("""
        for line in Path(AUDIT_LOG).read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            print(f"{entry['decision']:<5} by {entry['decided_by']:<7} {entry['tool']} {json.dumps(entry['arguments'])}: {entry['rule']}")
        """),
        markdown("""
        ## 6. Bounded tools

        A tool the gate allows still runs inside limits. The calculator refuses, *before* computing, any
        result with more than `MAX_DIGITS` digits: `9**9**9` would otherwise take the machine for a long
        time. Each answer below comes back at once; the time it took is printed next to it:
        """),
        code("""
        for expression in ["1250 * 16", "9**9**9", "(((9**64)**64)**64)**64", "2**4000", "1/0", "'a' * 10**9", "9" * 250]:
            started = time.perf_counter()
            text, is_error = agent.run_tool(workspace, "calculate", {"expression": expression}, gate)
            elapsed_ms = (time.perf_counter() - started) * 1000
            print(f"{course.shorten(expression, 28):<30} {elapsed_ms:6.2f} ms  {course.shorten(text, 110)}")
        """),
        markdown("""
        The command tool runs in the workspace, with a timeout, an output cap, and an environment that
        holds no secrets: only `PATH`, the locale and `HOME` (set to the workspace) get through. A token in
        this notebook's environment is not visible to the command. (The gate would ask a person about
        this command, since `$` is expanded by the shell; here we call the tool itself, past the gate.)
        """),
        code("""
        os.environ["NOTEBOOK_SECRET_TOKEN"] = "s3cr3t"
        print(agent.run_command(workspace, "echo token=$NOTEBOOK_SECRET_TOKEN home=$HOME"))
        print("the gate on the same command:", gate.decide(workspace, "run_command", {"command": "echo $HOME"})[:2])
        print("timeout:", agent.COMMAND_TIMEOUT_S, "s | output cap:", agent.COMMAND_OUTPUT_CAP, "bytes")
        """),
        markdown("""
        ## 7. A reckless model, on s05 and on s06

        `offline-reckless` takes shortcuts on the way to a legitimate goal: it deletes a leftover-looking
        file, empties `memo.md`, writes outside the workspace through `..` and through an absolute path,
        runs `rm -rf .`, and hides `rm` behind `ls &&`. It never judges whether a call is allowed; it only
        changes course when a refusal explains itself. The trace below shows each call and its outcome,
        one line each.
        """),
        code("""
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
        """),
        markdown("""
        s05 has no `delete_file` or `run_command`, so those failed as unknown tools; but `write_file` emptied
        `memo.md` and wrote a file outside the workspace. Now s06, with no person to ask (`approver=None`):
        """),
        code("""
        reckless_workspace = course.prepare_workspace()
        before = course.snapshot(reckless_workspace)
        on_s06 = agent.run(TIDY_TASK, model="offline-reckless", workspace=reckless_workspace, approver=None, trace=calls_and_outcomes)
        print("s06:", on_s06.stop_reason, damage(reckless_workspace, before))
        print("report.txt:", (reckless_workspace / "report.txt").read_text(encoding="utf-8").splitlines()[0])
        """),
        markdown("""
        Every destructive call was refused, by a rule, a default, or the sandbox, each with a reason the
        model could read; it changed course after each, and finished the legitimate part of the task. The
        only change to the workspace is the report it was asked for.
        """),
        markdown("""
        ## Run it on Claude (or a local model)

        Set `ANTHROPIC_API_KEY` before starting Jupyter (or restart the kernel after setting it). The cell
        below gives Claude the tidy-up task on s06 with no person to ask (`approver=None`), so every *ask* is a
        *deny*; it does nothing without a key. (On a terminal, `python s06/agent.py` asks you instead.)
        """),
        code("""
        if os.environ.get("ANTHROPIC_API_KEY"):
            claude_model = os.environ.get("MODEL_ID") or course.DEFAULT_CLAUDE_MODEL
            on_claude = agent.run(TIDY_TASK, client=course.make_client(claude_model), model=claude_model, approver=None,
                                  trace=course.TracePrinter())
            print("stop_reason:", on_claude.stop_reason)
        else:
            print("ANTHROPIC_API_KEY is not set: this cell does nothing, and the notebook stays offline.")
        """),
        markdown("""
        ## Your turn

        The exercises of this stage are the regions of `s06/agent.py` and `s06/gate.py` marked `# >>> exercise N`:
        1. *Keep every path inside the workspace* (`inside`, in agent.py);
        2. *Read a command's words only when they are plain* (`plain_words`, in gate.py).

        `python -m course exercise s06 my-s06` writes your own copy with those regions emptied, and
        `python -m course check s06 my-s06` grades it. The chapter's exercise section has hints.
        """),
    ]


# ---------------------------------------------------------------- writing

NOTEBOOKS = {
    "s00/s00_one_call.ipynb": s00_cells,
    "s01/s01_closed_loop.ipynb": s01_cells,
    "s02/s02_loop_state.ipynb": s02_cells,
    "s03/s03_stop_conditions.ipynb": s03_cells,
    "s04/s04_error_feedback.ipynb": s04_cells,
    "s05/s05_pruning.ipynb": s05_cells,
    "s06/s06_permission_gates.ipynb": s06_cells,
}


def check_exercises_named(relative_path: str, cells: list) -> None:
    """The "Your turn" cell names every exercise of its stage by number and title, as the stage marks them."""
    from course.exercises import find_regions

    stage = Path(relative_path).parent.name
    text = "\n".join(cell.source for cell in cells if cell.cell_type == "markdown")
    source = (ROOT / stage / "agent.py").read_text(encoding="utf-8")
    missing = [f"{region.number}. *{region.title}*" for region in find_regions(source, f"{stage}/agent.py")
               if f"{region.number}. *{region.title}*" not in text]
    if missing:
        raise SystemExit(f"{relative_path}: the 'Your turn' cell does not name {', '.join(missing)}; "
                         f"update it in tools/notebooks.py")


def build(relative_path: str) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
        "language_info": {"name": "python"},
    }
    stem = Path(relative_path).stem
    notebook.cells = NOTEBOOKS[relative_path]()
    check_exercises_named(relative_path, notebook.cells)
    for number, cell in enumerate(notebook.cells):
        cell.id = f"{stem.replace('_', '-')}-{number:02d}"  # fixed ids: the same source writes the same file
    nbformat.validate(notebook)
    return notebook


def render(relative_path: str) -> str:
    return nbformat.writes(build(relative_path)) + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for relative_path in NOTEBOOKS:
        path = ROOT / relative_path
        text = render(relative_path)
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        if check:
            stale.append(relative_path)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {relative_path}")
    for relative_path in stale:
        print(f"{relative_path} differs from tools/notebooks.py: run python tools/notebooks.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
