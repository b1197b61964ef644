"""s01's closed loop on OpenAI's Chat Completions, with the openai SDK.

The same idea as agent.py, in another wire format: ask, record the reply, run every call, write
every result back, ask again until a reply asks for nothing. What the format changes:
* the system prompt is the first message, not a field of the request;
* a call's ``arguments`` is a JSON *string*, to be parsed here, and a model can send one that does
  not parse: that becomes a result that says so, never a crash;
* each result is a message of its own, role ``tool``, naming its call's ``tool_call_id``; there is
  no ``is_error``, so an error is only what the text says;
* ``finish_reason`` says why the reply ended (``tool_calls``, ``stop``, ``length``).

Offline by default: the course's offline model answers over HTTP (``course serve``, started here
on a free port). With ``OPENAI_API_KEY`` (and ``OPENAI_BASE_URL`` for another server) it talks to
the real service; ``--model`` or ``$OPENAI_MODEL`` names the model.

Run it:  .venv/bin/python s01/openai_loop.py "List the files and write their count and names to report.txt"
"""

from __future__ import annotations

import argparse
import ast
import json
import operator
import os
import sys
from pathlib import Path

from openai import OpenAI

import course

MAX_TURNS = 20            # this file has no stop condition but the model's own end and this guard
MAX_TOKENS = 4096
DEFAULT_REAL_MODEL = "gpt-5-mini"

SYSTEM_PROMPT = ("You are an agent working in a small project folder, the workspace. Use the tools to look "
                 "before you answer: never guess what a file contains. Before each tool call, say why.")


def function(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


TEXT = {"type": "string"}
TOOLS = [
    function("list_files", "List the entries of a folder of the workspace, one name a line; folders end with '/'.",
             {"path": dict(TEXT, description="Folder relative to the workspace, e.g. '.'")}, []),
    function("read_file", "Read one UTF-8 text file of the workspace.",
             {"path": dict(TEXT, description="File relative to the workspace, e.g. 'memo.md'")}, ["path"]),
    function("write_file", "Create or overwrite one text file of the workspace with the given content.",
             {"path": TEXT, "content": dict(TEXT, description="The complete new content")}, ["path", "content"]),
    function("calculate", "Evaluate arithmetic with + - * / and parentheses, e.g. '1250 * 16'.",
             {"expression": TEXT}, ["expression"]),
]


def list_files(workspace: Path, path: str = ".") -> str:
    return "\n".join(entry.name + ("/" if entry.is_dir() else "") for entry in sorted((workspace / path).iterdir()))


def read_file(workspace: Path, path: str) -> str:
    return (workspace / path).read_text(encoding="utf-8")


def write_file(workspace: Path, path: str, content: str) -> str:
    (workspace / path).write_text(content, encoding="utf-8")
    return f"wrote {len(content)} characters to {path}"


OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
             ast.USub: operator.neg, ast.UAdd: operator.pos}


def calculate(workspace: Path, expression: str) -> str:
    # A syntax tree with numbers and four operators only, never eval(): the text comes from a model.
    def value(node):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
            return OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in OPERATORS:
            return OPERATORS[type(node.op)](value(node.operand))
        raise ValueError(f"only numbers and + - * / are allowed, not {ast.unparse(node)!r}")
    return str(value(ast.parse(expression, mode="eval").body))


TOOL_FUNCTIONS = {"list_files": list_files, "read_file": read_file, "write_file": write_file, "calculate": calculate}


def run_tool(workspace: Path, name: str, arguments_text: str) -> str:
    """One call's result, as text: the format has no is_error, so an error says so in words."""
    try:
        arguments = json.loads(arguments_text or "{}")
    except ValueError as error:
        return f"Error: the arguments of {name} are not valid JSON ({error}); send one JSON object, e.g. {{\"path\": \".\"}}"
    if not isinstance(arguments, dict):
        return f"Error: the arguments of {name} must be a JSON object, not {type(arguments).__name__}"
    if name not in TOOL_FUNCTIONS:
        return f"Error: unknown tool {name!r}; the tools are {', '.join(TOOL_FUNCTIONS)}"
    try:
        return TOOL_FUNCTIONS[name](workspace, **arguments)
    except Exception as error:  # the model reads what went wrong; the loop goes on
        return f"Error: {type(error).__name__}: {error}"


# --8<-- [start:run]
def run(task: str, *, client: OpenAI, model: str, workspace=None, max_turns: int = MAX_TURNS,
        max_tokens: int = MAX_TOKENS, trace=None) -> dict:
    """Loop until a reply asks for no tool; every tool_call gets its tool message."""
    workspace = course.prepare_workspace(workspace)
    trace = trace or (lambda kind, payload: None)
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": task}]
    turns, finish_reason = 0, None
    while turns < max_turns:
        response = client.chat.completions.create(model=model, messages=messages, tools=TOOLS,   # 1. ask
                                                  max_completion_tokens=max_tokens)
        turns += 1
        choice = response.choices[0]
        finish_reason, calls = choice.finish_reason, choice.message.tool_calls or []
        messages.append({"role": "assistant", "content": choice.message.content,                  # 2. record
                         **({"tool_calls": [call.model_dump() for call in calls]} if calls else {})})
        trace("assistant", messages[-1])
        if not calls:                                                                             # 3. calls?
            break
        for call in calls:                                                              # 4. act, 5. write back
            result = run_tool(workspace, call.function.name, call.function.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
            trace("tool", messages[-1])
    answer = messages[-1]["content"] if messages[-1]["role"] == "assistant" else None
    return {"answer": answer or "", "finish_reason": finish_reason, "turns": turns, "workspace": str(workspace),
            "messages": messages}
# --8<-- [end:run]


def connect(model: str | None):
    """(client, model, server): the real service when its variables are set, else the offline model
    over HTTP on a free port (server is then the one to stop)."""
    real = bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"))
    model = model or os.environ.get("OPENAI_MODEL") or (DEFAULT_REAL_MODEL if real else "offline")
    if real and not model.startswith("offline"):
        return OpenAI(api_key=os.environ.get("OPENAI_API_KEY") or "local"), model, None
    from course.serve import start
    server = start()
    return OpenAI(api_key="offline", base_url=server.url + "/v1"), model, server


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="s01's closed loop on OpenAI's Chat Completions.")
    parser.add_argument("task")
    parser.add_argument("--model", help="model id (default: $OPENAI_MODEL, else offline without OPENAI_API_KEY)")
    parser.add_argument("--workspace", help="work in this folder (default: a fresh copy of the sample)")
    args = parser.parse_args(argv)
    client, model, server = connect(args.model)
    try:
        result = run(args.task, client=client, model=model, workspace=args.workspace,
                     trace=lambda kind, message: print(f"--- {kind}: {json.dumps(message, ensure_ascii=False)[:300]}"))
    finally:
        if server:
            server.shutdown()
            server.server_close()
    print(f"\n{result['answer']}\n\n({result['turns']} turns, finish_reason {result['finish_reason']}, "
          f"workspace {result['workspace']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
