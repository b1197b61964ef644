"""s01's closed loop on Ollama's native chat API (``/api/chat``), with urllib and no SDK.

The same idea as agent.py, over nothing but HTTP and JSON: ask, record the reply, run every call,
write every result back, ask again until a reply asks for nothing. What the format changes:
* a call's ``arguments`` is already an object, and calls carry no ids: a result (role ``tool``)
  answers the calls in the order they came;
* a reply ends with ``done_reason: "stop"`` whether it called tools or not: the calls are the only sign;
* small local models often write their calls as JSON text in the content instead of ``tool_calls``
  (alone on a line, after a sentence, in a ```json fence, in <tool_call> tags), and a loop that looks
  only at ``tool_calls`` takes that for a final answer. ``calls_in_text`` recovers them, and their
  results go back as text that names each call, since the model made no structured call to answer.

Offline by default: the course's offline model answers over HTTP (``course serve``, started here on
a free port). With ``OLLAMA_HOST`` set it talks to that Ollama; ``--model`` or ``$OLLAMA_MODEL``
names the model.

Run it:  .venv/bin/python s01/ollama_loop.py "List the files and write their count and names to report.txt"
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.request
from pathlib import Path

import course

MAX_TURNS = 20            # this file has no stop condition but the model's own end and this guard
DEFAULT_REAL_MODEL = "qwen2.5-coder:7b"
TIMEOUT_S = 300           # a local model on a CPU can take minutes for one reply

SYSTEM_PROMPT = ("You are an agent working in a small project folder, the workspace. Use the tools to look "
                 "before you answer: never guess what a file contains. Call one tool at a time.")


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
]


def list_files(workspace: Path, path: str = ".") -> str:
    return "\n".join(entry.name + ("/" if entry.is_dir() else "") for entry in sorted((workspace / path).iterdir()))


def read_file(workspace: Path, path: str) -> str:
    return (workspace / path).read_text(encoding="utf-8")


def write_file(workspace: Path, path: str, content: str) -> str:
    (workspace / path).write_text(content, encoding="utf-8")
    return f"wrote {len(content)} characters to {path}"


TOOL_FUNCTIONS = {"list_files": list_files, "read_file": read_file, "write_file": write_file}


def run_tool(workspace: Path, name: str, arguments) -> str:
    if isinstance(arguments, str):   # some models send the object as a JSON string after all
        try:
            arguments = json.loads(arguments or "{}")
        except ValueError as error:
            return f"Error: the arguments of {name} are not valid JSON ({error}); send one JSON object"
    if not isinstance(arguments, dict):
        return f"Error: the arguments of {name} must be a JSON object"
    if name not in TOOL_FUNCTIONS:
        return f"Error: unknown tool {name!r}; the tools are {', '.join(TOOL_FUNCTIONS)}"
    try:
        return TOOL_FUNCTIONS[name](workspace, **arguments)
    except Exception as error:  # the model reads what went wrong; the loop goes on
        return f"Error: {type(error).__name__}: {error}"


# --8<-- [start:calls-in-text]
def calls_in_text(content: str) -> list[dict]:
    """Calls written as JSON text: each line that parses as {"name", "arguments"}, else the whole text.
    Fences and <tool_call> tags are taken away first; prose lines are skipped. A final answer that
    quotes such an object would be taken for a call: the price of reading text at all."""
    text = re.sub(r"</?tool_call>|```(?:json)?", "\n", content or "")
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith("{")]
    calls = [call for call in map(written_call, lines) if call]
    return calls or [call for call in [written_call(text.strip())] if call]   # one object over several lines


def written_call(candidate: str) -> dict | None:
    try:
        found = json.loads(candidate)
    except ValueError:
        return None
    if isinstance(found, dict) and isinstance(found.get("name"), str) and "arguments" in found:
        return {"function": {"name": found["name"], "arguments": found["arguments"]}}
    return None
# --8<-- [end:calls-in-text]


def chat(host: str, model: str, messages: list) -> dict:
    """One call of /api/chat, not streamed: the whole reply in one JSON object."""
    body = json.dumps({"model": model, "messages": messages, "tools": TOOLS, "stream": False}).encode()
    request = urllib.request.Request(f"{host}/api/chat", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
        return json.loads(response.read())


def run(task: str, *, host: str, model: str, workspace=None, max_turns: int = MAX_TURNS, trace=None) -> dict:
    """Loop until a reply asks for no tool, in tool_calls or in its text; every call gets its result."""
    workspace = course.prepare_workspace(workspace)
    trace = trace or (lambda kind, payload: None)
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": task}]
    turns, done_reason = 0, None
    while turns < max_turns:
        reply = chat(host, model, messages)                                   # 1. ask
        turns += 1
        message, done_reason = reply["message"], reply.get("done_reason")
        messages.append(message)                                              # 2. record the reply
        trace("assistant", message)
        calls = message.get("tool_calls") or []                               # 3. calls? structured first,
        written = [] if calls else calls_in_text(message.get("content", ""))  #    then written as text
        if not calls and not written:
            break
        for call in calls:                                                    # 4. act, 5. write back, in order
            result = run_tool(workspace, call["function"]["name"], call["function"].get("arguments"))
            messages.append({"role": "tool", "content": result, "tool_name": call["function"]["name"]})
            trace("tool", messages[-1])
        if written:   # no structured call to answer: the results go back as text that names each call
            messages.append({"role": "user", "content": "\n\n".join(
                f"Result of {call['function']['name']} {json.dumps(call['function']['arguments'], ensure_ascii=False)}"
                f" (written as text in your reply):\n{run_tool(workspace, call['function']['name'], call['function']['arguments'])}"
                for call in written)})
            trace("results as text", messages[-1])
    answer = messages[-1].get("content", "") if messages[-1]["role"] == "assistant" else ""
    return {"answer": answer, "done_reason": done_reason, "turns": turns, "workspace": str(workspace),
            "messages": messages}


def ollama_host() -> str | None:
    """$OLLAMA_HOST as a URL: Ollama accepts "0.0.0.0:11434" or "host" alone, with no scheme."""
    host = os.environ.get("OLLAMA_HOST")
    if not host:
        return None
    host = host if "://" in host else "http://" + host
    host = host.replace("://0.0.0.0", "://127.0.0.1")
    return host if re.search(r":\d+$", host) else host + ":11434"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="s01's closed loop on Ollama's /api/chat.")
    parser.add_argument("task")
    parser.add_argument("--model", help="model id (default: $OLLAMA_MODEL, else offline without OLLAMA_HOST)")
    parser.add_argument("--workspace", help="work in this folder (default: a fresh copy of the sample)")
    args = parser.parse_args(argv)
    host, server = ollama_host(), None
    model = args.model or os.environ.get("OLLAMA_MODEL") or (DEFAULT_REAL_MODEL if host else "offline")
    if host is None or model.startswith("offline"):
        from course.serve import start
        server = start()
        host = server.url
    try:
        result = run(args.task, host=host, model=model, workspace=args.workspace,
                     trace=lambda kind, message: print(f"--- {kind}: {json.dumps(message, ensure_ascii=False)[:300]}"))
    finally:
        if server:
            server.shutdown()
            server.server_close()
    print(f"\n{result['answer']}\n\n({result['turns']} turns, done_reason {result['done_reason']}, "
          f"workspace {result['workspace']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
