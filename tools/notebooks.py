"""The stage notebooks, written as Python so that they can be reviewed and diffed like code.

    python tools/notebooks.py           # (re)write every notebook below
    python tools/notebooks.py --check   # exit 1 if a committed notebook differs from this file

Each notebook is a list of cells built by ``markdown(...)`` and ``code(...)``; the written
``.ipynb`` holds no outputs and no execution counts, and its cell ids are fixed, so the same
source always writes the same bytes. ``tests/test_notebooks.py`` checks that the committed
notebooks are what this file writes, and executes them.

To add a stage's notebook: write a function that returns its cells and add it to ``NOTEBOOKS``.
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


# ---------------------------------------------------------------- writing

NOTEBOOKS = {
    "s00/s00_one_call.ipynb": s00_cells,
    "s01/s01_closed_loop.ipynb": s01_cells,
}


def build(relative_path: str) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
        "language_info": {"name": "python"},
    }
    stem = Path(relative_path).stem
    notebook.cells = NOTEBOOKS[relative_path]()
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
