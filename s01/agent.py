"""Stage s01: the closed loop.

What this stage adds: a `while` loop around s00's round trip. It asks, records the reply, runs
every tool the reply asks for, writes every result back, and asks again, until a reply asks
for no tool.
The failure it fixes: one round trip cannot finish work that needs several steps (list the
files, then write the report).

    ┌──────────────────────────────────────────────────────────────┐
    ▼                                                              │
  ask ─► record the reply ─► tool_use? ──yes──► run every tool ─► write back every result
                                 │
                                 no
                                 ▼
                              answer

Its only exit is the model's own end: s01 has no stop condition of its own (s03 adds them).

Run it:  .venv/bin/python s01/agent.py "List the files and write their count and names to report.txt"
"""

from __future__ import annotations

import sys
from pathlib import Path

import anthropic

import course

STAGE = "s01"
MAX_TOKENS = 1024

# --8<-- [start:tool-table]
SYSTEM_PROMPT = (
    "You are an agent working in a small project folder, the workspace. "
    "Use the tools to look before you answer: never guess what a file contains. "
    "Before each tool call, say in one sentence why you make it."
)

# The descriptions are written for the model, not for a colleague: when to use the tool,
# the form of its arguments, and what comes back.
TOOLS = [
    {"name": "list_files",
     "description": "List the entries of a folder in the workspace, one name a line; folders end with '/'. "
                    "Use it to find out which files exist before reading them.",
     "input_schema": {"type": "object", "required": [], "properties": {
         "path": {"type": "string", "description": "Folder relative to the workspace, e.g. '.'"}}}},
    {"name": "read_file",
     "description": "Read one UTF-8 text file of the workspace and return its whole content.",
     "input_schema": {"type": "object", "required": ["path"], "properties": {
         "path": {"type": "string", "description": "File relative to the workspace, e.g. 'memo.md'"}}}},
    {"name": "write_file",
     "description": "Create or overwrite one text file in the workspace with the given content.",
     "input_schema": {"type": "object", "required": ["path", "content"], "properties": {
         "path": {"type": "string", "description": "File relative to the workspace, e.g. 'report.txt'"},
         "content": {"type": "string", "description": "The complete new content of the file"}}}},
    {"name": "search_files",
     "description": "Find the files of the workspace whose text contains a word (case-insensitive). "
                    "Returns the matching paths, one a line, or '(no matches)'.",
     "input_schema": {"type": "object", "required": ["text"], "properties": {
         "text": {"type": "string", "description": "The word or phrase to look for"}}}},
    {"name": "calculate",
     "description": "Evaluate an arithmetic expression with + - * / // % ** and parentheses, e.g. '1250 * "
                    "16'. Use it instead of doing arithmetic in your head.",
     "input_schema": {"type": "object", "required": ["expression"], "properties": {
         "expression": {"type": "string", "description": "The expression, e.g. '(3 + 4) * 2'"}}}},
]
# --8<-- [end:tool-table]


# --8<-- [start:tools]
# Every tool takes the workspace first, then the arguments the model sent, and returns text.
def list_files(workspace: Path, path: str = ".") -> str:
    folder = workspace / path
    return "\n".join(course.shown(entry.name) + ("/" if entry.is_dir() else "") for entry in sorted(folder.iterdir()))


def read_file(workspace: Path, path: str) -> str:
    return (workspace / path).read_text(encoding="utf-8")


def write_file(workspace: Path, path: str, content: str) -> str:
    target = workspace / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    return f"wrote {len(content)} characters to {path}"


def search_files(workspace: Path, text: str) -> str:
    matches = [course.shown(str(file.relative_to(workspace))) for file in sorted(workspace.rglob("*"))
               if file.is_file() and text.lower() in file.read_text(encoding="utf-8", errors="ignore").lower()]
    return "\n".join(matches) or "(no matches)"


def calculate(workspace: Path, expression: str) -> str:
    # Read as a syntax tree, never eval(): numbers and + - * / // % ** only, and no result too big to print.
    return course.calculator(expression)
# --8<-- [end:tools]


# --8<-- [start:dispatcher]
TOOL_FUNCTIONS = {
    "list_files": list_files,
    "read_file": read_file,
    "write_file": write_file,
    "search_files": search_files,
    "calculate": calculate,
}


def run_tool(workspace: Path, name: str, arguments) -> tuple[str, bool]:
    """Run one tool call. Returns (text for the model, is_error); a failure never escapes."""
    function = TOOL_FUNCTIONS.get(name)
    if function is None:
        return f"Error: unknown tool {name!r}", True
    try:
        return function(workspace, **arguments), False
    except Exception as error:  # the model gets to read what went wrong; the loop goes on
        return f"Error: {type(error).__name__}: {error}", True


def tool_result(workspace: Path, call) -> dict:
    """The tool_result block that answers one tool_use block, matched by its id."""
    text, is_error = run_tool(workspace, call.name, call.input)
    return {"type": "tool_result", "tool_use_id": call.id, "content": text, "is_error": is_error}
# --8<-- [end:dispatcher]


# --8<-- [start:ask]
def ask(client: anthropic.Anthropic, model: str, messages: list, max_tokens: int | None = None) -> anthropic.types.Message:
    """One model call: the whole history and the tool table go out, one reply comes back."""
    return client.messages.create(model=model, max_tokens=max_tokens or MAX_TOKENS, system=SYSTEM_PROMPT,
                                  tools=TOOLS, messages=messages)


def assistant_message(reply: anthropic.types.Message) -> dict:
    """The reply as it goes into the history: all of its blocks, text and tool_use alike, as sent."""
    return {"role": "assistant", "content": [block.to_dict() for block in reply.content]}


def tool_calls(reply: anthropic.types.Message) -> list:
    # >>> exercise 1: Find the tool calls in a reply
    return [block for block in reply.content if block.type == "tool_use"]
    # <<< exercise 1


def text_of(reply: anthropic.types.Message) -> str:
    return "".join(block.text for block in reply.content if block.type == "text")
# --8<-- [end:ask]


# --8<-- [start:run]
def run(task: str, *, client=None, model: str | None = None, workspace=None, trace=None) -> dict:
    """Loop until a reply asks for no tool; every tool_use gets its tool_result."""
    model = course.resolve_model(model)
    client = client or course.make_client(model)
    workspace = course.prepare_workspace(workspace)
    trace = trace or (lambda kind, payload: None)
    messages = [{"role": "user", "content": task}]
    usage = {"input_tokens": 0, "output_tokens": 0}
    turns = 0

    # >>> exercise 2: Close the loop
    while True:
        reply = ask(client, model, messages)                      # 1. ask
        turns += 1
        add_usage(usage, reply.usage)
        messages.append(assistant_message(reply))                 # 2. record the reply
        trace("assistant", messages[-1])
        calls = tool_calls(reply)                                 # 3. does it ask for tools?
        if not calls:
            break                                                 # no: the model is done
        results = [tool_result(workspace, call) for call in calls]  # 4. act, on every call
        messages.append({"role": "user", "content": results})      # 5. write every result back
        trace("tool_results", messages[-1])
    # <<< exercise 2

    return {"stage": STAGE, "model": model, "answer": text_of(reply), "stop_reason": reply.stop_reason,
            "turns": turns, "usage": usage, "workspace": str(workspace), "messages": messages}


def add_usage(total: dict, usage) -> None:
    total["input_tokens"] += usage.input_tokens
    total["output_tokens"] += usage.output_tokens
# --8<-- [end:run]


def main(argv=None) -> int:
    return course.stage_main(STAGE, run, argv)


if __name__ == "__main__":
    sys.exit(main())
