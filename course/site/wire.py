"""The site's runs on the other wire formats: ``<!-- wire ... -->`` placeholders, made at build time.

* ``<!-- wire reply FORMAT [model=ID] -->``: the offline model's first reply to the report task, as
  ``course serve`` sends it in FORMAT (``anthropic``, ``openai`` or ``ollama``), a ``json`` block;
* ``<!-- wire run LOOP "TASK" [model=ID] -->``: a ``text`` block with every message of a run of
  ``s01/LOOP.py`` (``openai_loop`` or ``ollama_loop``) against ``course serve`` on a free port, in a
  fresh sample workspace, and how long the run took is left out (it varies).
"""

from __future__ import annotations

import importlib.util
import json
import shlex
import urllib.request
from pathlib import Path

from course.viewer.markdown import PlaceholderError, fenced
from course.runtime.workspace import prepare_workspace, remove_fresh_copy

ROOT = Path(__file__).resolve().parents[2]
REPORT_TASK = "List the files and write their count and names to report.txt"
LOOPS = ("openai_loop", "ollama_loop")
FORMATS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions", "ollama": "/api/chat"}


def load_loop(name: str):
    spec = importlib.util.spec_from_file_location(f"s01_{name}", ROOT / "s01" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def render(arguments: str) -> str:
    words = shlex.split(arguments)
    options = dict(word.split("=", 1) for word in words if "=" in word and not word.startswith('"'))
    plain = [word for word in words if "=" not in word]
    if plain[:1] == ["reply"] and len(plain) == 2 and plain[1] in FORMATS:
        return fenced("json", first_reply(plain[1], options.get("model", "offline")))
    if plain[:1] == ["run"] and len(plain) == 3 and plain[1] in LOOPS:
        return fenced("text", run_text(plain[1], plain[2], options.get("model", "offline")))
    raise PlaceholderError(f'expected <!-- wire reply {"|".join(FORMATS)} [model=ID] --> or '
                           f'<!-- wire run {"|".join(LOOPS)} "TASK" [model=ID] -->, got {arguments!r}')


def first_reply(wire_format: str, model: str) -> str:
    from course.serve import start
    tools = load_loop("openai_loop").TOOLS[:3]
    if wire_format == "anthropic":
        body = {"model": model, "max_tokens": 1024, "messages": [{"role": "user", "content": REPORT_TASK}],
                "tools": [{"name": tool["function"]["name"], "description": tool["function"]["description"],
                           "input_schema": tool["function"]["parameters"]} for tool in tools]}
    else:
        body = {"model": model, "messages": [{"role": "user", "content": REPORT_TASK}], "tools": tools, "stream": False}
    server = start()
    try:
        request = urllib.request.Request(server.url + FORMATS[wire_format], data=json.dumps(body).encode(),
                                         headers={"content-type": "application/json", "anthropic-version": "2023-06-01"}
                                         if wire_format == "anthropic" else {"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            reply = json.loads(response.read())
    finally:
        server.shutdown()
        server.server_close()
    for varying in ("created", "created_at", "total_duration"):   # a clock's reading, different each build
        reply.pop(varying, None)
    return json.dumps(reply, ensure_ascii=False, indent=2)


def run_text(loop_name: str, task: str, model: str) -> str:
    from course.serve import start
    loop, server, workspace = load_loop(loop_name), start(), prepare_workspace(None)
    try:
        if loop_name == "openai_loop":
            from openai import OpenAI
            client = OpenAI(api_key="offline", base_url=server.url + "/v1", max_retries=0)
            result = loop.run(task, client=client, model=model, workspace=workspace)
            ending = f"finish_reason {result['finish_reason']}"
        else:
            result = loop.run(task, host=server.url, model=model, workspace=workspace)
            ending = f"done_reason {result['done_reason']}"
        report = (workspace / "report.txt").read_text(encoding="utf-8") if (workspace / "report.txt").exists() else None
    finally:
        server.shutdown()
        server.server_close()
        remove_fresh_copy(workspace)
    lines = [f"$ python s01/{loop_name}.py --model {model} {shlex.quote(task)}"]
    for message in result["messages"][1:]:
        shown = {key: value for key, value in message.items() if key != "role" and value not in (None, "")}
        lines.append(f"[{message['role']}] {json.dumps(shown, ensure_ascii=False)}")
    lines.append(f"-> {result['turns']} turns, {ending}")
    if report is not None:
        lines += ["", "report.txt:", report.rstrip()]
    return "\n".join(lines)
