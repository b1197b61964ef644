"""Offline models that call tools wrongly, the ways the course's sources saw models do it.

Four behaviours, each the tutor (``tutor.py``) with one thing changed, so that the difference
between a run that recovers and one that does not is the misbehaviour and nothing else:

* ``offline-typo``: asks for a misspelled path;
* ``offline-unknown-tool``: calls a tool by a name the harness does not have;
* ``offline-bad-args``: sends read_file arguments of the wrong shape;
* ``offline-text-calls``: writes its tool calls as JSON text, never as tool_use blocks.

The first three recover only from an *actionable* error, and they decide that from the error's
words alone, never from which stage wrote it: a model reads text, not our code. What counts as
actionable is written next to each behaviour. After a bare error (s03's ``Error: ...``) each of
them sends the very same call again, which is what "Building an agent loop yourself" says a
bare "Error" gets you.

The model's state is read off the request every time (these are pure functions, like every
behaviour): a call is "one of its wrong calls" by its shape, and the model has "learned" once the
history holds an actionable error for one of them.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import replace
from typing import Callable

from course.offline.behaviours import Reply
from course.offline.conversation import Call, Conversation, read_result
from course.offline.tutor import FILE_NAME, classify, tutor

JSON_TYPES = r"(?:string|integer|number|boolean|array|object|list|int|str|bool|float|dict)"
# A hint offering another name: "nearest existing names: memo.md", "did you mean 'memo.md'?".
OFFERED_NAME = re.compile(r"(?:nearest|did you mean|closest|similar)[^\n]{0,40}?['\"`]?((?:[\w-]+/)*[\w-]+\.\w+)", re.I)

Fix = list[tuple[str, dict]]  # the calls an error's words lead to; empty: the error says nothing usable


# ---------------------------------------------------------------- what the three have in common

def _as_if_never_failed(c: Conversation, mine, meant: Callable[[Call], Call]) -> Conversation:
    """The conversation the tutor plans from: the model's failed wrong calls taken out (a turn of
    nothing else goes with them), and a wrong call that worked anyway counted as the one it meant."""
    turns = []
    for turn in c.turns:
        kept = [meant(call) if mine(call) else call for call in turn
                if not (mine(call) and (call.result is None or call.failed))]
        if kept or not any(mine(call) for call in turn):
            turns.append(kept)
    return replace(c, turns=turns)


def _misbehave(c: Conversation, *, mine, meant, fix: Callable[[Conversation, Call], Fix],
               garble: Callable[[Conversation, Reply], Reply], fixed_text: Callable[[Conversation, Call], str]) -> Reply:
    """Retry after a failure (fixed if the error says how, identical if not); otherwise the tutor's
    plan, written this model's wrong way until an actionable error has taught it the right one."""
    failed = [call for call in c.failed_last_turn if mine(call)]
    if failed:
        fixes = [(call, fix(c, call)) for call in failed]
        usable = [(call, calls) for call, calls in fixes if calls]
        if usable:
            reply = Reply().text(" ".join(fixed_text(c, call) for call, _ in usable))
            for _, calls in usable:
                for name, arguments in calls:
                    reply.call(name, **arguments)
        else:
            reply = Reply().text(c.say(f"{failed[0].name} did not work; I'll try it again.",
                                       f"{failed[0].name} がうまくいかなかったので、もう一度試します。"))
        for call, calls in fixes:
            if not calls:  # a bare error: the same call, to the letter
                reply.call(call.name, **call.input)
        return reply
    learned = any(mine(call) and call.result is not None and call.failed and fix(c, call) for call in c.calls)
    plan = tutor(_as_if_never_failed(c, mine, meant))
    return plan if learned else garble(c, plan)


def _tool_uses(reply: Reply) -> list[dict]:
    return [block for block in reply.blocks if block["type"] == "tool_use"]


# ---------------------------------------------------------------- offline-typo

def misspell(path: str) -> str:
    """A typing slip, the same one every time: the last two different letters of the name swapped
    (memo.md -> meom.md, sample.txt -> sampel.txt)."""
    folder, _, name = path.rpartition("/")
    stem, dot, extension = name.partition(".")
    letters = list(stem)
    for i in range(len(letters) - 1, 0, -1):
        if letters[i] != letters[i - 1]:
            letters[i - 1], letters[i] = letters[i], letters[i - 1]
            break
    else:
        letters.append(letters[-1] if letters else "x")
    return (folder + "/" if folder else "") + "".join(letters) + dot + extension


def file_to_misspell(task: str) -> str | None:
    """The first file the task names, other than a report it asks to write."""
    return next((name for name in FILE_NAME.findall(task) if name != "report.txt"), None)


def typo(c: Conversation) -> Reply:
    """Asks for the file the task names misspelled, and fixes the name only when an error offers one.

    "Building an agent loop yourself": a model asks for 'src/mian.py'. Told only "Error", it
    repeats the call or gives up with an invented conclusion; told "path 'src/mian.py' not found;
    nearest: src/main.py", it fixes the spelling on the next turn.

    Here: the first file the task names is asked for misspelled (``misspell``), in the sentence
    before the call too. Tasks that name no file (list, report, find) are done as the tutor does.

    Actionable: the error offers a name, in a phrase such as "nearest ...: NAME", "closest ...",
    "similar ..." or "did you mean NAME" (NAME with an extension, other than the name asked for).
    The model retries with that name. Anything else (s03's "Error: FileNotFoundError: ...") gets
    the same misspelled call again.
    """
    target = file_to_misspell(c.task)
    if target is None:
        return tutor(c)
    wrong = misspell(target)

    def mine(call: Call) -> bool:
        return call.input.get("path") == wrong

    def offered(call: Call) -> str | None:
        names = [match.group(1) for match in OFFERED_NAME.finditer(call.result or "")]
        return next((name for name in names if name != wrong), None)

    def fix(c: Conversation, call: Call) -> Fix:
        name = offered(call)
        return [(call.name, dict(call.input, path=name))] if name else []

    def garble(c: Conversation, plan: Reply) -> Reply:
        reply = Reply(stop_reason=plan.stop_reason)
        for block in plan.blocks:
            if block["type"] == "text":
                reply.text(re.sub(rf"(?<![\w./-]){re.escape(target)}(?![\w/-])", wrong, block["text"]))
            else:
                arguments = block["input"]
                reply.call(block["name"], **(dict(arguments, path=wrong) if arguments.get("path") == target else arguments))
        return reply

    return _misbehave(
        c, mine=mine, meant=lambda call: replace(call, input=dict(call.input, path=target)), fix=fix, garble=garble,
        fixed_text=lambda c, call: c.say(f"The error suggests {offered(call)} instead of {wrong}; I'll use that.",
                                         f"エラーが {wrong} の代わりに {offered(call)} を示しているので、そちらを使います。"),
    )


# ---------------------------------------------------------------- offline-unknown-tool

INVENTED_TOOL, INVENTED_ARGUMENT = "read_text_file", "filepath"


def tools_named_in(text: str, tools: list[str], besides: str) -> list[str]:
    return [tool for tool in tools if tool != besides and re.search(rf"(?<!\w){re.escape(tool)}(?!\w)", text or "")]


def unknown_tool(c: Conversation) -> Reply:
    """Reads files with read_text_file, a tool the harness lacks, until an error names the real tools.

    "Building an AI agent without a framework": the model reads files with
    ``read_text_file({'filepath': ...})``, the tool of the harness it was shown there. Put in front of a harness without that tool, such a model keeps
    the name it believes in until something tells it otherwise.

    Here: every read_file call of the tutor's plan is written as read_text_file with a
    ``filepath`` argument. Other tools are called by their right names.

    Actionable: the error names at least one tool that the request offers (a list of the tools,
    or "did you mean read_file"). The model then calls, of the offered tools the error names, the
    one closest to the name it tried, with the arguments the request's tool table gives it (path,
    not filepath: once it knows which tool it means, it reads that tool's schema). s03's "Error:
    unknown tool 'read_text_file'" names no tool it can use, so it tries read_text_file again.
    """
    def mine(call: Call) -> bool:
        return call.name == INVENTED_TOOL

    def meant(call: Call) -> Call:
        arguments = {"path": call.input.get(INVENTED_ARGUMENT)} if isinstance(call.input, dict) else {}
        return replace(call, name="read_file", input=arguments)

    def closest(call: Call) -> str | None:
        named = tools_named_in(call.result, c.tools, besides=INVENTED_TOOL)
        best = difflib.get_close_matches(INVENTED_TOOL, named, n=1, cutoff=0)
        return best[0] if best else None

    def fix(c: Conversation, call: Call) -> Fix:
        tool = closest(call)
        return [(tool, meant(call).input)] if tool else []

    def garble(c: Conversation, plan: Reply) -> Reply:
        reply = Reply(stop_reason=plan.stop_reason)
        for block in plan.blocks:
            if block["type"] == "tool_use" and block["name"] == "read_file":
                reply.call(INVENTED_TOOL, **{INVENTED_ARGUMENT: block["input"].get("path")})
            else:
                reply.blocks.append(dict(block))
        return reply

    return _misbehave(
        c, mine=mine, meant=meant, fix=fix, garble=garble,
        fixed_text=lambda c, call: c.say(
            f"There is no {INVENTED_TOOL}; the error names the tools, and the closest is {closest(call)}, so I'll call that.",
            f"{INVENTED_TOOL} という道具はなく、エラーに道具の一覧があります。一番近い {closest(call)} を使います。"),
    )


# ---------------------------------------------------------------- offline-bad-args

def says_what_field_expects(error: str, field: str, *, missing: bool) -> bool:
    """Whether ``error`` names ``field`` together with what the tool expects of it.

    * its type, right after its name: "field 'path': expected string", "path (string, required)",
      "'path' must be a string";
    * or, for a field the call left out, that it is required: "missing required field 'path'",
      "'path' is a required property" (jsonschema's own wording).

    Naming only the field the call got wrong does not count: Python's "read_file() got an
    unexpected keyword argument 'file'" (s03) says what was wrong, not what was expected, and
    neither does a bare "did you mean 'path'?". Nor does a type said without its field, like
    jsonschema's "['memo.md'] is not of type 'string'".
    """
    name = rf"['\"`]?{re.escape(field)}['\"`]?"
    typed = re.search(rf"(?<![\w-]){name}\s*(?:\(\s*|:\s*(?:expected|must be|should be)\s+(?:an?\s+)?|"
                      rf"\s+(?:must|should) be\s+(?:an?\s+)?|\s+expects?\s+(?:an?\s+)?){JSON_TYPES}\b", error, re.I)
    if typed:
        return True
    required = re.search(rf"(?:missing|required)\s+(?:\w+\s+){{0,2}}{name}(?![\w-])|(?<![\w-]){name}\s+is\s+(?:a\s+)?required",
                         error, re.I)
    return missing and required is not None


def bad_args(c: Conversation) -> Reply:
    """Sends read_file bad arguments until an error names the field it expects and of what type.

    "Building an agent loop yourself": constrained decoding can guarantee JSON that parses, not
    arguments that fit; a model sends a value of the wrong kind, or the right value under the
    wrong name. The model of "Building an AI agent without a framework" called its file argument
    ``filepath``; tools elsewhere call it ``file``.

    Here: the tutor's read_file calls, sent with one misunderstanding of read_file's parameters.
    Reading one file: ``{"file": "memo.md"}`` (the required ``path`` missing, an unknown field
    instead). Reading several: one call with ``{"path": ["memo.md", "todo.md"]}`` (an array where
    a string is expected), as if read_file took a list.

    Actionable: the error names the field the call needs and what is expected of it (see
    ``says_what_field_expects``). Then the model sends the tutor's own read_file calls. Otherwise it
    sends the same bad call again.
    """
    def mine(call: Call) -> bool:
        return call.name == "read_file" and not isinstance(call.input.get("path"), str)

    def meant_calls(call: Call) -> list[dict]:
        paths = call.input.get("path", call.input.get("file"))
        return [{"path": str(path)} for path in (paths if isinstance(paths, list) else [paths])]

    def fix(c: Conversation, call: Call) -> Fix:
        wrong_type = "path" in call.input
        if says_what_field_expects(call.result or "", "path", missing=not wrong_type):
            return [("read_file", arguments) for arguments in meant_calls(call)]
        return []

    def garble(c: Conversation, plan: Reply) -> Reply:
        reads = [block for block in _tool_uses(plan) if block["name"] == "read_file"]
        reply = Reply(stop_reason=plan.stop_reason)
        for block in plan.blocks:
            if block["type"] == "text" or block["name"] != "read_file":
                reply.blocks.append(dict(block))
            elif block is reads[0] and len(reads) > 1:
                reply.call("read_file", path=[read["input"]["path"] for read in reads])
            elif len(reads) == 1:
                reply.call("read_file", file=block["input"]["path"])
        return reply

    def meant(call: Call) -> Call:  # a bad call that worked anyway: count it as the first read it meant
        return replace(call, input=meant_calls(call)[0])

    return _misbehave(
        c, mine=mine, meant=meant, fix=fix, garble=garble,
        fixed_text=lambda c, call: c.say("The error says which field read_file expects and of what type; I'll call it that way.",
                                         "エラーに read_file が期待する引数とその型が書かれているので、その通りに呼びます。"),
    )


# ---------------------------------------------------------------- offline-text-calls

SHAPES = ("raw", "prose", "fence", "tags")
NOTED = ("Noted: ", "メモ: ")
RESULT_HEADER = re.compile(r"^Result of ([\w-]+) (.*)$", re.M)
_decoder = json.JSONDecoder()


def results_written_back(text: str) -> list[Call]:
    """The calls a harness ran from our text, read from its "Result of NAME ARGS ...:" blocks.

    A block's result is what follows its first line: the JSON value there if there is one (s04
    writes each result as one JSON object), else the rest of the block.
    """
    headers = list(RESULT_HEADER.finditer(text or ""))
    calls = []
    for index, header in enumerate(headers):
        try:
            arguments, _ = _decoder.raw_decode(header.group(2))
        except ValueError:
            arguments = {}
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        body = text[header.end() + 1:end].strip()
        try:
            _, length = _decoder.raw_decode(body)
            body = body[:length]
        except ValueError:
            pass
        result, failed = read_result(body)
        calls.append(Call(header.group(1), arguments if isinstance(arguments, dict) else {}, result, failed))
    return calls


def notes_in(text: str) -> list[Call]:
    """The results this model noted in its own earlier reply (see ``text_calls``)."""
    calls = []
    for line in (text or "").splitlines():
        prefix = next((p for p in NOTED if line.startswith(p)), None)
        if prefix is None:
            continue
        try:
            name, rest = line[len(prefix):].split(" ", 1)
            arguments, end = _decoder.raw_decode(rest)
            rest = rest[end:].removeprefix(" -> ")
            failed = rest.startswith("failed: ")
            result, _ = _decoder.raw_decode(rest.removeprefix("failed: "))
        except ValueError:
            continue
        calls.append(Call(name, arguments, str(result), failed))
    return calls


def note(c: Conversation, call: Call) -> str:
    outcome = ("failed: " if call.failed else "") + json.dumps(call.result, ensure_ascii=False)
    return f"{c.say(*NOTED)}{call.name} {json.dumps(call.input, ensure_ascii=False)} -> {outcome}"


def written_call(name: str, arguments: dict, **dumps) -> str:
    return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False, **dumps)


def anticipated_write(c: Conversation) -> str:
    """The 7b of "An AI agent is a while loop inside", turn 1 of the report task: the write_file
    call it wrote right after the list_files call, using the listing before it existed. Python,
    not JSON: it must not parse."""
    header = c.say("Files:", "ファイル一覧:")
    return ('{"name": "write_file", "arguments": {"path": "report.txt", "content": "' + header + '\\n" + '
            '"\\n".join(list_files_result["files"]) + "\\n\\n' + c.say("Count: ", "ファイル数: ") + '" + '
            'str(len(list_files_result["files"]))}}')


def text_calls(c: Conversation) -> Reply:
    """Writes its tool calls as JSON text in four shapes, never as tool_use blocks.

    "An AI agent is a while loop inside", qwen2.5-coder 7b and 1.5b through Ollama: not one
    structured tool call in any run. The calls came back as text, in four shapes:
    1. raw JSON alone on a line (7b, turn 1, with a second line of Python string concatenation
       that used the listing before it had been read, so it is not JSON at all);
    2. JSON after a sentence of prose (7b, turn 2: "there are 3 files; I'll write report.txt");
    3. JSON over several lines in a ```json fence (1.5b);
    4. JSON in <tool_call></tool_call> tags (what the model's own chat template asks for).
    A loop that ends on "no tool_use" took the first reply for a final answer: "finished in 1
    turns", no file written.

    Here: the tutor's plan, never as tool_use blocks; its calls are written in shape 1, 2, 3, 4 by
    turn, round and round (turn 1 raw, on the report task with the anticipated write line). The
    results it reads are a harness's "Result of NAME ARGS ...:" text blocks in the last user
    message. Its final answer is plain text, with no JSON.

    A simplification, said plainly: a real model sees every earlier message, but an offline
    behaviour is handed only the last user message's text (``Conversation.last_user_text``). So
    this model notes what it has read at the top of each reply that calls a tool ("Noted: NAME
    ARGS -> RESULT", the way the 7b restated "3 files" before its call) and reads its notes back
    from its previous reply. The notes hold no tool call: they name no tool in a JSON object.
    """
    noted = notes_in(c.assistant_texts[-1] if c.assistant_texts else "")
    latest = results_written_back(c.last_user_text)
    known = noted + latest
    plan = tutor(replace(c, turns=[[call] for call in noted] + ([latest] if latest else [])))
    calls = [(block["name"], block["input"]) for block in _tool_uses(plan)]
    reasoning = " ".join(block["text"] for block in plan.blocks if block["type"] == "text").strip()
    if not calls:
        return Reply(stop_reason=plan.stop_reason).text(reasoning)
    shape = SHAPES[len(c.turns) % len(SHAPES)]
    lines = [note(c, call) for call in known]
    if shape == "raw":
        lines += [written_call(name, arguments) for name, arguments in calls]
        kind = classify(c.task)
        if not c.turns and kind and kind[0] == "report" and calls[0][0] == "list_files":
            lines.append(anticipated_write(c))
    elif shape == "prose":
        lines += [reasoning, ""] + [written_call(name, arguments) for name, arguments in calls]
    elif shape == "fence":
        lines += [f"```json\n{written_call(name, arguments, indent=2)}\n```" for name, arguments in calls]
    else:
        lines += [f"<tool_call>\n{written_call(name, arguments)}\n</tool_call>" for name, arguments in calls]
    return Reply().text("\n".join(lines))
