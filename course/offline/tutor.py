"""``offline``: a competent, deterministic tutor for fourteen task families.

What it models is a good tool-using model, as the course's sources describe one:
* it says why before each tool call (one sentence of reasoning, then the tool_use: the part of
  ReAct that survived structured tool use, as "Building an agent loop yourself" puts it);
* it calls independent tools in one reply (several tool_use blocks), e.g. reading two files;
* it answers from the tool results in the history, never from assumptions about the workspace;
* it reads on when a result says it was cut and how to read on (s04's ``[cut: ... offset=N ...]``),
  if the tool table's ``read_file`` takes an ``offset``;
* it recovers from a failed call only when the error says how (a nearest name, a list of
  tools); after a bare "Error" it reports the failure instead of guessing;
* told that a call was interrupted and may have happened (a resumed run), it checks before
  repeating: a read is made again, a write is read back and made again only if it did not happen;
* outside its task families it says what it is and which tasks it can do, in the task's language.

It knows tools by the names the course's tool table uses (``list_files``, ``read_file``,
``write_file``, ``search_files``, ``calculate``), the way a real model relies on the names and
descriptions it is given, and it uses only the tools the request offers: if one it needs is not
offered, it says so.

Task families (English or Japanese, each in the wordings ``task_reading.py`` lists; it answers in
the task's language):
1. list the workspace's files ("List the files", 「どんなファイルがある？」);
2. read one or more named files and summarise them (several files are read in parallel);
3. list the files and write their count and names to ``report.txt`` (the task of "An AI agent
   is a while loop inside");
4. read ``sample.txt`` (or a named file) and compute the total price (the task of "Building an
   AI agent without a framework");
5. find which files mention a word;
6. count the lines, words or characters of named files (words are what ``wc -w`` counts: runs of
   characters between white space; lines are what ``wc -l`` counts, plus a last line without a newline:
   a summary counts them the same way);
7. write given text to a file ("Write hello to greeting.txt", 「greeting.txt に hello と書いて」),
   or add it to the end of one ("Append bye to greeting.txt");
8. read one field of a JSON file ("Read config.json and tell me the version"): the field whose key
   shares the most words with the question; with none, it says so and lists the fields there are;
9. answer what a file says ("What is in todo.md?", 「todo.md に何が書いてある？」): the lines that
   share a word with the question, or the whole file when none do (its first lines, if it is long);
10. summarise all the files: list them, read them all at once, summarise each;
11. compute an arithmetic expression the task writes out, with ``calculate`` ("Compute 1250 * 16");
12-14. delete a named file, move or rename one, run a command the task names ("Run wc -l memo.md"),
   each with its own tool (``delete_file``, ``move_file``, ``run_command``) and only if the request
   offers it. When the call comes back refused (a person said no at a gate, a rule denied it), the
   answer says what did not happen and why; it does not try another way round.

It also writes the summary a pruning harness asks for ("Summarise the work so far ...
Transcript: ..."): it keeps what the model said (its notes, where a careful model records its
findings) and counts the calls made, and drops the tool results, which can be fetched again.
"""

from __future__ import annotations

import json
import re

from course.offline.behaviours import Reply
from course.offline.conversation import Call, Conversation, parse_listing
from course.offline.task_reading import FILE_NAME, GENERIC, classify, key_words, normalised, words_asked_about

__all__ = ["FILE_NAME", "classify", "tutor"]

UNIT_PRICE = re.compile(r"(?:単価|unit price)\D{0,12}?(\d[\d,]*)", re.I)
QUANTITY = re.compile(r"(?:数量|個数|quantity|qty)\D{0,12}?(\d[\d,]*)", re.I)
# The harness's word for a call whose result was lost when its run was stopped (s02 on, on resume).
INTERRUPTED = re.compile(r"\binterrupted\b.*\bmay (?:or may not )?have happened", re.I | re.S)
HINT = re.compile(r"(?:nearest|did you mean|closest|similar)[^:\n]*:\s*['\"`]?([\w./-]+)", re.I)
# A result cut to fit, with the offset to read on from: "[cut: 120 of 4120 characters not shown;
# call read_file with offset=4000 to read on]" (s04 on).
CUT = re.compile(r"\n?\[cut:[^\]\n]*?offset=(\d+)[^\]\n]*\]\s*$")
READS_PER_FILE = 25  # a file is read in at most this many parts; what is left is said to be left
QUOTED_LINES = 30  # what a file says is quoted whole up to this many lines, else its first lines


# ---------------------------------------------------------------- the tutor

def tutor(conversation: Conversation) -> Reply:
    """A competent, deterministic tutor for fourteen task families; see the module docstring."""
    kind = classify(conversation.task)
    if kind is None:
        return out_of_scope(conversation)
    family, details = kind
    if not _adding_to_a_new_file(conversation, family, details) and not _action_refused(conversation, family):
        recovery = recover_from_error(conversation)
        if recovery is not None:
            return recovery
    return FAMILIES[family](conversation, **details)


def _adding_to_a_new_file(c: Conversation, family: str, details: dict) -> bool:
    """Text to add to a file that is not there yet is a new file: its failed read is no error to recover from."""
    failed = c.failed_last_turn
    return (family == "write" and details["append"] and bool(failed)
            and all(call.name == "read_file" and call.input.get("path") == details["path"] for call in failed))


# The families whose one call changes something, and the tool that makes it: when that call comes back
# refused (a person said no, a rule denied it) there is nothing to recover, only to say what did not happen.
ACTIONS = {"delete": "delete_file", "move": "move_file", "command": "run_command", "write": "write_file"}


def _action_refused(c: Conversation, family: str) -> bool:
    failed = c.failed_last_turn
    # A nearest name is followed to read a file, never to delete or move one: that is the person's call.
    followable = family not in ("delete", "move")
    return bool(failed) and all(call.name == ACTIONS.get(family) and not (followable and HINT.search(call.result or ""))
                                for call in failed)


def _reason(call: Call) -> str:
    """What a failed call's result says, in one line: the message of a structured error, else its first line."""
    text = (call.result or "").strip()
    try:
        value = json.loads(text)
        if isinstance(value, dict):
            # A refusal's hint is advice to the model; any other error's hint (a nearest name) is news to the person.
            hint = value.get("hint") if value.get("error") != "denied" else ""
            text = str(value.get("message") or text) + (f" ({hint})" if hint else "")
    except ValueError:
        pass
    return text.splitlines()[0] if text else "an error"


def out_of_scope(c: Conversation) -> Reply:
    return Reply().text(c.say(
        "I am the course's offline tutor, a stand-in model that runs with no API key. I can: list the "
        "workspace's files; read and summarise a named file; say what a file holds (\"What is in todo.md?\"); "
        "count the words or lines of a file; compute an arithmetic expression (\"Compute 1250 * 16\"); "
        "summarise all the files; delete, move or rename a named file and run a command you name, when the "
        "stage offers those tools (\"Delete todo.md\", \"Run wc -l memo.md\"); read one field of a JSON file (\"Read config.json and tell me "
        "the version\"); write given text to a file (\"Write hello to greeting.txt\"); write the file list "
        "and count to report.txt; compute the total price in sample.txt; and find which files mention a "
        "word. For any other task, run with a real model: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for "
        "a local server) and pass --model.",
        "私はこのコースのオフライン・チューターです（API キーなしで動く代役のモデルです）。できるのは次の仕事です："
        "ワークスペースのファイル一覧、指定したファイルの要約、ファイルに何が書いてあるかの回答（「todo.md に何が書いてある？」）、"
        "ファイルの単語数や行数を数えること、計算（「1250 * 16 を計算して」）、全ファイルの要約、"
        "その段階に道具があれば、指定したファイルの削除・移動・名前の変更と、指定したコマンドの実行（「todo.md を削除して」"
        "「wc -l memo.md を実行して」）、JSON ファイルの項目を一つ読むこと（「config.json の version を教えて」）、"
        "指定した文字列をファイルに書くこと（「greeting.txt に hello と書いて」）、ファイル数と一覧を report.txt に書くこと、"
        "sample.txt の合計金額の計算、ある単語を含むファイルの検索。それ以外の仕事は本物のモデルで実行してください："
        "ANTHROPIC_API_KEY（ローカルサーバーなら ANTHROPIC_BASE_URL）を設定し、--model を指定します。",
    ))


def missing_tool(c: Conversation, name: str) -> Reply:
    offered = ", ".join(c.tools) or "none"
    return Reply().text(c.say(
        f"I need a tool called {name} for this task, but the tools offered are: {offered}.",
        f"この仕事には {name} という道具が必要ですが、渡された道具は {offered} です。",
    ))


def recover_from_error(c: Conversation) -> Reply | None:
    """After a failed call: follow the error's hint if it gives one, else report the failure."""
    failed = c.failed_last_turn
    if not failed:
        return None
    call = failed[0]
    if INTERRUPTED.search(call.result or ""):
        return check_interrupted(c, call)
    if call.name == "read_file" and checks_an_interrupted_write(c, call):
        return None  # the file is not there: the write did not happen, and the task goes on to make it
    hint = HINT.search(call.result or "")
    if hint and "path" in call.input:
        corrected = dict(call.input, path=hint.group(1))
        if not any(done.name == call.name and done.input == corrected for done in c.calls):
            return Reply().text(c.say(
                f"The error says {call.input['path']} does not exist and suggests {corrected['path']}, so I'll use that.",
                f"エラーによると {call.input['path']} は存在せず、{corrected['path']} が候補なので、そちらを使います。",
            )).call(call.name, **corrected)
    if _already_handled(c, call):
        return None
    first_line = (call.result or "").strip().splitlines()[0] if (call.result or "").strip() else "an error"
    return Reply().text(c.say(
        f"I could not complete the task: {call.name} failed with \"{first_line}\", and the error does not say how to fix it.",
        f"仕事を完了できませんでした。{call.name} が「{first_line}」で失敗し、エラーには直し方が書かれていません。",
    ))


def check_interrupted(c: Conversation, call: Call) -> Reply | None:
    """A call the harness says was interrupted and may have happened: look before repeating it.

    What a careful model does with such an error (the resumed runs of s02 on send it): a call that
    only reads is simply made again, since reading twice changes nothing; a write is checked by
    reading the file back, and counted as done if the file holds what was to be written
    (``confirmed_write``); only a write that did not happen is made again.
    """
    if call.name != "write_file":
        return Reply().text(c.say(
            f"My {call.name} call was interrupted; it changes nothing, so I'll simply make it again.",
            f"{call.name} の呼び出しが中断されました。何も変更しない呼び出しなので、もう一度行います。",
        )).call(call.name, **call.input)
    path = call.input.get("path", "")
    if "read_file" in c.tools:
        return Reply().text(c.say(
            f"Writing {path} was interrupted and may have happened; I'll read it to check before writing again.",
            f"{path} の書き込みが中断され、実行済みかもしれません。書き直す前に読んで確かめます。",
        )).call("read_file", path=path)
    return None


def confirmed_write(c: Conversation, path: str) -> bool:
    """An interrupted write of ``path`` that a later read shows to have happened (see check_interrupted)."""
    interrupted = [call for call in c.results_of("write_file")
                   if call.input.get("path") == path and INTERRUPTED.search(call.result or "")]
    return any(read.result == call.input.get("content") and not read.failed
               for call in interrupted for read in c.calls[c.calls.index(call) + 1:]
               if read.name == "read_file" and read.input.get("path") == path and read.result is not None)


def checks_an_interrupted_write(c: Conversation, read: Call) -> bool:
    earlier = c.calls[:c.calls.index(read)]
    return any(call.name == "write_file" and call.input.get("path") == read.input.get("path")
               and INTERRUPTED.search(call.result or "") for call in earlier)


def _already_handled(c: Conversation, call: Call) -> bool:
    # A failed call followed by a successful retry of the same tool is behind us.
    later = c.calls[c.calls.index(call) + 1:]
    return any(other.name == call.name and not other.failed for other in later)


# ---------------------------------------------------------------- the families

def list_workspace(c: Conversation) -> Reply:
    listed = [call for call in c.results_of("list_files") if not call.failed]
    if not listed:
        if "list_files" not in c.tools:
            return missing_tool(c, "list_files")
        return Reply().text(c.say(
            "I'll list the workspace first, since I cannot know what it holds without looking.",
            "中身は見ないと分からないので、まずワークスペースのファイル一覧を取得します。",
        )).call("list_files", path=".")
    names = parse_listing(listed[-1].result)
    return Reply().text(c.say(
        f"The workspace holds {len(names)} entries: {', '.join(names)}.",
        f"ワークスペースには {len(names)} 個のファイルがあります: {', '.join(names)}。",
    ))


def summarise(c: Conversation, paths: list[str]) -> Reply:
    read = {call.input.get("path"): call for call in c.results_of("read_file")}
    unread = [path for path in paths if path not in read]
    if unread:
        if "read_file" not in c.tools:
            return missing_tool(c, "read_file")
        return Reply().text(c.say(
            f"I'll read {' and '.join(unread)} to summarise {'them' if len(unread) > 1 else 'it'}"
            + ("; the files are independent, so I read them at once." if len(unread) > 1 else "."),
            f"要約するために {'、'.join(unread)} を読みます。",
        )).reads(unread)
    return Reply().text("\n".join(_summary(c, path, _after_recovery(c, read[path])) for path in paths))


def _after_recovery(c: Conversation, call: Call) -> Call:
    """A failed read that was retried under the name its error suggested counts as that retry."""
    hint = HINT.search(call.result or "") if call.failed else None
    if hint:
        for retry in c.results_of(call.name):
            if retry.input.get("path") == hint.group(1) and not retry.failed:
                return retry
    return call


def _summary(c: Conversation, path: str, call: Call) -> str:
    path = call.input.get("path", path)
    if call.failed:
        return c.say(f"{path}: could not be read ({call.result.strip().splitlines()[0]}).",
                     f"{path}: 読めませんでした（{call.result.strip().splitlines()[0]}）。")
    text = call.result or ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    counted = line_count(text)
    words = len(text.split())
    opening = lines[0].lstrip("# ") if lines else ""
    closing = lines[-1].lstrip("-# ") if len(lines) > 1 else ""
    english = f"{path}: {counted} lines, {words} words. It opens with \"{opening}\""
    english += f" and ends with \"{closing}\"." if closing else "."
    japanese = f"{path}: {counted} 行。冒頭は「{opening}」" + (f"、末尾は「{closing}」です。" if closing else "です。")
    return c.say(english, japanese)


def write_report(c: Conversation, path: str = "report.txt") -> Reply:
    listed = [call for call in c.results_of("list_files") if not call.failed]
    if not listed:
        return list_workspace(c)
    # The report is about files: folders (listed with a trailing "/") and the report itself are left out.
    names = [name for name in parse_listing(listed[-1].result) if name != path and not name.endswith("/")]
    written = [call for call in c.results_of("write_file") if call.input.get("path") == path and not call.failed]
    if written or confirmed_write(c, path):
        return Reply().text(c.say(
            f"I wrote {path}: {len(names)} files ({', '.join(names)}).",
            f"{path} を書きました: ファイル数 {len(names)}（{', '.join(names)}）。",
        ))
    if "write_file" not in c.tools:
        return missing_tool(c, "write_file")
    header = c.say(f"Files: {len(names)}", f"ファイル数: {len(names)}")
    content = "\n".join([header] + [f"- {name}" for name in names]) + "\n"
    return Reply().text(c.say(
        f"The listing shows {len(names)} files, so I'll write their count and names to {path}.",
        f"一覧には {len(names)} 個のファイルがあるので、ファイル数と一覧を {path} に書きます。",
    )).call("write_file", path=path, content=content)


def compute_total(c: Conversation, path: str) -> Reply:
    read = [call for call in c.results_of("read_file") if call.input.get("path") == path and not call.failed]
    if not read:
        if "read_file" not in c.tools:
            return missing_tool(c, "read_file")
        return Reply().text(c.say(
            f"I'll read {path} first, because the price and quantity are in it.",
            f"単価と数量は {path} に書かれているので、まず読み込みます。",
        )).call("read_file", path=path)
    text = read[-1].result or ""
    price, quantity = UNIT_PRICE.search(text), QUANTITY.search(text)
    if not (price and quantity):
        return Reply().text(c.say(
            f"I read {path} but found no unit price and quantity in it, so I cannot compute a total.",
            f"{path} を読みましたが、単価と数量が見つからないため合計を計算できません。",
        ))
    p, q = (int(m.group(1).replace(",", "")) for m in (price, quantity))
    calculated = [call for call in c.results_of("calculate") if not call.failed]
    if "calculate" in c.tools and not calculated:
        return Reply().text(c.say(
            f"{path} gives a unit price of {p} and a quantity of {q}; I'll let the calculator multiply them.",
            f"{path} によると単価 {p}、数量 {q} なので、計算ツールで掛け算します。",
        )).call("calculate", expression=f"{p} * {q}")
    total = calculated[-1].result.strip() if calculated else str(p * q)
    return Reply().text(c.say(
        f"The total is {p} × {q} = {total} yen.",
        f"合計金額は {p} × {q} = {total} 円です。",
    ))


def find_word(c: Conversation, word: str) -> Reply:
    if "search_files" in c.tools:
        searched = [call for call in c.results_of("search_files") if not call.failed]
        if not searched:
            return Reply().text(c.say(
                f"I'll search the workspace for \"{word}\" rather than guess which files mention it.",
                f"どのファイルに「{word}」が含まれるか、推測せずに検索します。",
            )).call("search_files", text=word)
        matches = parse_listing(searched[-1].result)
        if not matches or matches == ["(no matches)"]:
            return Reply().text(c.say(f"No file mentions \"{word}\".", f"「{word}」を含むファイルはありません。"))
        return Reply().text(c.say(
            f"{len(matches)} files mention \"{word}\": {', '.join(matches)}.",
            f"「{word}」を含むファイルは {len(matches)} 個です: {', '.join(matches)}。",
        ))
    # Without a search tool: list, then read every file at once, then look.
    listed = [call for call in c.results_of("list_files") if not call.failed]
    if not listed:
        return list_workspace(c)
    names = [name for name in parse_listing(listed[-1].result) if not name.endswith("/")]
    read = {call.input.get("path"): call for call in c.results_of("read_file")}
    unread = [name for name in names if name not in read]
    if unread:
        return Reply().text(c.say(
            f"There is no search tool, so I'll read all {len(unread)} files at once and look for \"{word}\".",
            f"検索ツールがないので、{len(unread)} 個のファイルをまとめて読んで「{word}」を探します。",
        )).reads(unread)
    matches = [name for name in names if word.lower() in (read[name].result or "").lower() and not read[name].failed]
    return Reply().text(c.say(
        f"{len(matches)} files mention \"{word}\": {', '.join(matches) or 'none'}.",
        f"「{word}」を含むファイルは {len(matches)} 個です: {'、'.join(matches) or 'なし'}。",
    ))


# ---------------------------------------------------------------- reading a whole file

def reads_of(c: Conversation, path: str) -> list[Call]:
    # A read whose result was masked since is read again, as the placeholder says: it is no text of the file.
    return [call for call in c.results_of("read_file") if call.input.get("path") == path and seen(call)]


def takes_argument(c: Conversation, tool: str, argument: str) -> bool:
    """Whether the tool table of the request gives ``tool`` a parameter called ``argument``."""
    for entry in c.tool_table:
        if entry.get("name") == tool:
            return argument in ((entry.get("input_schema") or {}).get("properties") or {})
    return False


def read_as(c: Conversation, path: str) -> str:
    """The name ``path`` was read under: the one its error suggested, if the read failed and was retried."""
    reads = reads_of(c, path)
    if reads and reads[0].failed:
        return _after_recovery(c, reads[0]).input.get("path", path)
    return path


def file_read(c: Conversation, path: str) -> tuple[str | None, Call | None, int | None]:
    """What the reads of ``path`` in the history hold: (its text so far, a failed read, the offset to read on from).

    A result cut with a note saying where to read on is followed by the read from there, as many
    times as the file needs (up to READS_PER_FILE). A read that failed, retried under the name its
    error suggested, counts as that retry.
    """
    reads = reads_of(c, path)
    if reads and reads[0].failed:
        retried = _after_recovery(c, reads[0])
        if retried is not reads[0]:
            reads = reads_of(c, retried.input["path"])
    parts = {int(call.input.get("offset") or 0): call for call in reads}
    text, offset = "", 0
    for _ in range(READS_PER_FILE):
        call = parts.get(offset)
        if call is None:
            return (text if offset else None), None, offset
        if call.failed:
            return None, call, None
        cut = CUT.search(call.result or "")
        if not cut or int(cut.group(1)) <= offset:
            return text + (call.result or ""), None, None
        text, offset = text + call.result[:cut.start()], int(cut.group(1))
    return text, None, None


def read_next(c: Conversation, path: str, offset: int, why: tuple[str, str]) -> Reply | None:
    """The read that gets on with ``path``: its start, or where a cut result said to read on (None: it cannot)."""
    if "read_file" not in c.tools:
        return missing_tool(c, "read_file")
    if offset == 0:
        return Reply().text(c.say(*why)).call("read_file", path=path)
    if not takes_argument(c, "read_file", "offset"):
        return None
    return Reply().text(c.say(
        f"{path} came back cut; I'll read on from character {offset}, as the note says.",
        f"{path} は途中で切れていたので、注記のとおり {offset} 文字目から続きを読みます。",
    )).call("read_file", path=path, offset=offset)


def _failure(c: Conversation, path: str, call: Call) -> str:
    first_line = (call.result or "").strip().splitlines()[0] if (call.result or "").strip() else "an error"
    return c.say(f"{path}: could not be read ({first_line}).", f"{path}: 読めませんでした（{first_line}）。")


# ---------------------------------------------------------------- count, write, field, question

def line_count(text: str) -> int:
    """Lines as ``wc -l`` counts them (newline characters, blank lines too), plus a last line without one."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


UNIT_NAMES = {"lines": ("lines", "行数"), "words": ("words", "単語数"), "characters": ("characters", "文字数")}


def count(c: Conversation, paths: list[str], units: list[str]) -> Reply:
    """Count the lines, words or characters of each named file, from the whole of its text."""
    state = {path: file_read(c, path) for path in paths}
    unread = [path for path, (text, failed, offset) in state.items() if text is None and failed is None]
    if unread:
        if "read_file" not in c.tools:
            return missing_tool(c, "read_file")
        asked = c.say(" and ".join(UNIT_NAMES[unit][0] for unit in units), "・".join(UNIT_NAMES[unit][1] for unit in units))
        return Reply().text(c.say(
            f"I'll read {' and '.join(unread)} and count the {asked} myself, rather than guess.",
            f"推測せずに{asked}を数えるため、{'、'.join(unread)} を読みます。",
        )).reads(unread)
    for path, (text, failed, offset) in state.items():
        if offset:
            more = read_next(c, path, offset, ("", ""))
            if more is not None:
                return more
    lines = []
    for path, (text, failed, offset) in state.items():
        if failed is not None:
            lines.append(_failure(c, path, failed))
            continue
        counted = {"lines": line_count(text), "words": len(text.split()), "characters": len(text)}
        english = " and ".join(f"{counted[unit]} {UNIT_NAMES[unit][0]}" for unit in units)
        japanese = "、".join(f"{UNIT_NAMES[unit][1]}は {counted[unit]}" for unit in units)
        partial = c.say(" (of the part I could read: it came back cut)", "（切れて返ってきた、読めた部分だけの数です）") if offset else ""
        path = read_as(c, path)
        lines.append(c.say(f"{path} has {english}{partial}.", f"{path} の{japanese} です{partial}。"))
    if "lines" in units:
        lines.append(c.say("(Lines are counted as wc -l counts them, a last line without a newline counted too.)",
                           "（行は wc -l と同じく数え、改行で終わらない最後の行も 1 行と数えました。）"))
    if "words" in units:
        lines.append(c.say("(Words are counted as wc -w counts them: runs of characters between spaces.)",
                           "（単語は wc -w と同じく、空白で区切られた文字の並びとして数えました。）"))
    return Reply().text("\n".join(lines))


def write_text(c: Conversation, path: str, text: str, append: bool) -> Reply:
    """Write the given text to ``path`` (or add it to its end: read it first, then write it whole)."""
    shown = text if len(text) <= 60 else text[:57] + "..."
    refused = _acted(c, "write_file", path=path)
    if refused is not None and refused.failed and not INTERRUPTED.search(refused.result or ""):
        return _not_done(c, refused, f"Writing \"{shown}\" to {path}", f"{path} への「{shown}」の書き込み")
    if any(not call.failed for call in c.results_of("write_file") if call.input.get("path") == path) \
            or confirmed_write(c, path):
        return Reply().text(c.say(
            f"I {'added' if append else 'wrote'} \"{shown}\" to {path}.",
            f"{path} に「{shown}」と{'書き足し' if append else '書き'}ました。",
        ))
    if "write_file" not in c.tools:
        return missing_tool(c, "write_file")
    content = text
    if append:
        before, failed, offset = file_read(c, path)
        if before is None and failed is None:
            return read_next(c, path, 0, (
                f"I'll read {path} first, so that what I add goes after what is there.",
                f"今ある内容の後ろに書き足すため、まず {path} を読みます。",
            ))
        if before:
            content = before + ("" if before.endswith("\n") else "\n") + text + ("\n" if before.endswith("\n") else "")
    return Reply().text(c.say(
        f"I'll write \"{shown}\" to {path}" + (", after what it holds." if content != text else "."),
        f"{path} に「{shown}」を" + ("今ある内容の後ろに" if content != text else "") + "書きます。",
    )).call("write_file", path=path, content=content)


def flattened(value, prefix: str = "") -> list[tuple[str, object]]:
    """Every field of a JSON value as (dotted key, value): objects first, then what they hold."""
    if not isinstance(value, dict):
        return []
    fields = []
    for key, inner in value.items():
        name = f"{prefix}{key}"
        fields.append((name, inner))
        fields += flattened(inner, name + ".")
    return fields


def field_asked_for(fields: list[tuple[str, object]], question: str, wanted: list[str]) -> tuple[str, object] | None:
    """The field a question asks for: one whose key it names, else the one sharing the most of its words.

    Generic words ("name", "value") count for little, so "the model name" finds ``model`` before
    ``name``; a field that matches only generic words is taken only if the question has no other word.
    """
    named = [field for field in fields if re.search(rf"(?<![\w.]){re.escape(field[0])}(?![\w])", question, re.I)]
    if named:
        return max(named, key=lambda field: len(field[0]))

    def score(field):
        words = key_words(field[0])
        hits = [word for word in wanted if word in words]
        return (sum(0.25 if word in GENERIC else 1 for word in hits), -len(set(words) - set(hits)),
                not isinstance(field[1], dict))

    if not fields or not wanted:
        return None
    best = max(fields, key=score)
    points = score(best)[0]
    specific = [word for word in wanted if word not in GENERIC]
    return best if points >= 1 or (points > 0 and not specific) else None


def read_field(c: Conversation, path: str, question: str) -> Reply:
    """Read one field of a JSON file: the one the question asks for, or say which fields there are."""
    text, failed, offset = file_read(c, path)
    if text is None and failed is None or offset:
        more = read_next(c, path, offset or 0, (
            f"I'll read {path} to find the field the question asks for.",
            f"質問の項目を探すため、{path} を読みます。",
        ))
        if more is not None:
            return more
    if failed is not None:
        return Reply().text(_failure(c, path, failed))
    try:
        value = json.loads(text)
    except ValueError as error:
        return Reply().text(c.say(
            f"{path} is not valid JSON ({error}), so I cannot read a field from it.",
            f"{path} は正しい JSON ではないため（{error}）、項目を読み取れません。",
        ))
    fields = flattened(value)
    wanted = words_asked_about(question, [path])
    found = field_asked_for(fields, question, wanted)
    if found is not None:
        key, inner = found
        shown = json.dumps(inner, ensure_ascii=False)
        return Reply().text(c.say(f"In {path}, {key} is {shown}.", f"{path} の {key} は {shown} です。"))
    top = [(key, inner) for key, inner in fields if "." not in key][:20]
    listing = ", ".join(f"{key} = {json.dumps(inner, ensure_ascii=False)}" for key, inner in top)
    asked = " ".join(word for word in wanted if word not in GENERIC)
    if asked:
        return Reply().text(c.say(
            f"{path} has no field for \"{asked}\"; the fields it has are: {listing}.",
            f"{path} には「{asked}」にあたる項目がありません。ある項目は次のとおりです: {listing}。",
        ))
    return Reply().text(c.say(f"{path} holds these fields: {listing}.", f"{path} の項目は次のとおりです: {listing}。"))


OPEN_ITEMS = re.compile(r"\b(?:left|open|remaining|undone|not (?:yet )?done|pending|unfinished|still to do)\b"
                        r"|終わっていない|終わってない|未完了|残り|残って|まだ", re.I)
DONE_ITEMS = re.compile(r"\b(?:done|finished|completed|checked|ticked)\b|済|完了|終わった", re.I)
CHECKBOX = re.compile(r"^\s*[-*+]\s*\[([ xX])\]")


def checklist_items(lines: list[str], question: str) -> list[str]:
    """The open or the done items of a Markdown checklist ("- [ ] ...", "- [x] ..."), if that is what is asked."""
    boxes = [(line, CHECKBOX.match(line)) for line in lines]
    if not any(box for _, box in boxes):
        return []
    if OPEN_ITEMS.search(question):
        return [line for line, box in boxes if box and box.group(1) == " "]
    if DONE_ITEMS.search(question):
        return [line for line, box in boxes if box and box.group(1) in "xX"]
    return []


def answer_question(c: Conversation, path: str, question: str) -> Reply:
    """Say what a file holds: the lines that share a word with the question, or the file itself."""
    text, failed, offset = file_read(c, path)
    if text is None and failed is None:
        return read_next(c, path, 0, (
            f"I'll read {path} to answer from what it actually says.",
            f"実際に書かれている内容から答えるため、{path} を読みます。",
        ))
    if failed is not None:
        return Reply().text(_failure(c, path, failed))
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    wanted = set(words_asked_about(question, [path]))
    path = read_as(c, path)
    relevant = checklist_items(lines, question) or [
        line for line in lines if wanted & {normalised(word) for word in re.findall(r"[A-Za-z][A-Za-z0-9]*", line)}]
    if relevant:
        quoted = relevant[:QUOTED_LINES]
        intro = c.say(f"What {path} says about it:", f"{path} のうち、質問にかかわる行です:")
    elif len(lines) <= QUOTED_LINES:
        quoted = lines
        intro = c.say(f"{path} says:", f"{path} には次のように書かれています:")
    else:
        quoted = lines[:QUOTED_LINES]
        intro = c.say(f"{path} is long; its first {QUOTED_LINES} lines of text:",
                      f"{path} は長いので、最初の {QUOTED_LINES} 行を示します:")
    more = c.say(" (it came back cut: this is the part I read)", "（途中で切れて返ってきたので、読めた部分です）") if offset else ""
    return Reply().text("\n".join([intro + more] + [f"  {line}" for line in quoted]))


SUMMARY_NOTES = 12


def summarise_work(c: Conversation) -> Reply:
    _, _, transcript = c.task.partition("Transcript:")
    lines = [line.strip() for line in transcript.splitlines() if line.strip()]
    counts: dict[str, int] = {}
    for earlier in re.findall(r"([\w-]+) ×(\d+)", " ".join(l for l in lines if l.startswith("Calls made:"))):
        counts[earlier[0]] = counts.get(earlier[0], 0) + int(earlier[1])  # from an earlier summary
    for line in lines:
        if line.startswith("called "):
            name = line.split()[1]
            counts[name] = counts.get(name, 0) + 1
    notes = [line[2:] for line in lines if line.startswith("- ")]  # an earlier summary's notes
    notes += [line.split(":", 1)[1].strip() for line in lines if line.startswith("assistant:")]
    counted = ", ".join(f"{name} ×{count}" for name, count in counts.items()) or "none"
    # A summary that copied every note would grow without end: the latest notes carry the progress.
    kept = notes[-SUMMARY_NOTES:]
    dropped = [f"({len(notes) - len(kept)} older notes left out)"] if len(notes) > len(kept) else []
    return Reply().text("\n".join([f"Calls made: {counted}.", "Notes:"] + dropped + [f"- {note}" for note in kept]))


# ---------------------------------------------------------------- calculate, delete, move, command, all files

def calculate(c: Conversation, expression: str) -> Reply:
    """Arithmetic goes through the calculator, never the model's head, when the request offers one."""
    done = c.results_of("calculate")
    if not done:
        if "calculate" not in c.tools:
            return missing_tool(c, "calculate")
        return Reply().text(c.say(
            f"I'll let the calculator work out {expression} rather than do it in my head.",
            f"暗算せずに、計算ツールで {expression} を計算します。",
        )).call("calculate", expression=expression)
    call = done[-1]
    if call.failed:
        return Reply().text(c.say(f"The calculator could not work out {expression}: {_reason(call)}.",
                                  f"計算ツールは {expression} を計算できませんでした: {_reason(call)}。"))
    return Reply().text(c.say(f"{expression} = {call.result.strip()}", f"{expression} = {call.result.strip()} です。"))


def _acted(c: Conversation, tool: str, **arguments) -> Call | None:
    """The latest call of ``tool`` with these arguments that has a result."""
    done = [call for call in c.results_of(tool) if all(call.input.get(k) == v for k, v in arguments.items())]
    return done[-1] if done else None


def _not_done(c: Conversation, call: Call, english: str, japanese: str) -> Reply:
    reason = _reason(call)
    return Reply().text(c.say(f"{english} did not happen: {reason}. Nothing was changed.",
                              f"{japanese}は行われませんでした: {reason}。何も変更していません。"))


def _one_change(c: Conversation, tool: str, call: Call | None, arguments: dict,
                plan: tuple[str, str], what: tuple[str, str], done: tuple[str, str]) -> Reply:
    """A family whose one call changes something: make the call, then say it happened or why it did not."""
    if call is None:
        if tool not in c.tools:
            return missing_tool(c, tool)
        return Reply().text(c.say(*plan)).call(tool, **arguments)
    if call.failed:
        return _not_done(c, call, *what)
    return Reply().text(c.say(*done))


def delete(c: Conversation, path: str) -> Reply:
    call = _acted(c, "delete_file", path=path) or _acted(c, "delete_file")
    path = call.input.get("path", path) if call else path
    return _one_change(c, "delete_file", call, {"path": path}, (
        f"You asked me to delete {path}, so I'll delete it; it cannot be undone, so the harness may ask you first.",
        f"{path} の削除を頼まれたので削除します。元に戻せない操作なので、先に確認を求められるかもしれません。",
    ), (f"Deleting {path}", f"{path} の削除"), (f"I deleted {path}.", f"{path} を削除しました。"))


def move(c: Conversation, source: str, destination: str) -> Reply:
    call = _acted(c, "move_file", destination=destination)
    source = call.input.get("source", source) if call else source
    return _one_change(c, "move_file", call, {"source": source, "destination": destination}, (
        f"I'll move {source} to {destination}, as asked; if {destination} exists, it is replaced.",
        f"頼まれたとおり {source} を {destination} に移します。{destination} がすでにあれば置き換わります。",
    ), (f"Moving {source} to {destination}", f"{source} から {destination} への移動"),
        (f"I moved {source} to {destination}.", f"{source} を {destination} に移しました。"))


def command(c: Conversation, command: str) -> Reply:
    call = _acted(c, "run_command", command=command)
    output = (call.result or "").strip() if call else ""
    return _one_change(c, "run_command", call, {"command": command}, (
        f"You named the command, so I'll run it as written: {command}",
        f"指定されたコマンドをそのまま実行します: {command}",
    ), (f"Running {command}", f"{command} の実行"),
        (f"I ran {command}:\n{output}", f"{command} を実行しました:\n{output}"))


MASKED = ("[masked", "[cleared")  # a result a pruning harness (s05) or the API took out: fetched again if needed
FILES_NOTE = re.compile(r"(?:Files to summarise|要約するファイル): (.+?)[.。]\s*$", re.M)


def seen(call: Call) -> bool:
    """A call whose result is in the history as it came back (not yet answered, or masked since: no)."""
    return call.result is not None and not call.result.lstrip().startswith(MASKED)


def summarise_all(c: Conversation) -> Reply:
    """List the workspace, then read and summarise one file a turn, noting each summary in the reply.

    What a careful model does on a long task in a harness that prunes (s05 on): old tool results
    may be masked before it reads them again, so it writes down what it found as it goes; its notes
    (the file list, a line per file) are its own text, which no pruning takes out. The answer is
    put together from the notes.
    """
    notes = "\n".join([c.task] + c.assistant_texts)
    planned = FILES_NOTE.findall(notes)
    if planned:
        files = [name.strip() for name in re.split(r",\s*|、", planned[-1]) if name.strip()]
    else:
        listed = [call for call in c.results_of("list_files") if not call.failed and seen(call)]
        if not listed:
            return list_workspace(c)
        files = [name for name in parse_listing(listed[-1].result) if not name.endswith("/")]
        if not files:
            return Reply().text(c.say("The workspace holds no files to summarise.", "要約するファイルがありません。"))
    found = {}
    for path in files:
        line = re.search(rf"^(?:- )?({re.escape(path)}: .+)$", notes, re.M)
        if line:
            found[path] = line.group(1)
    now = []
    for path in files:
        if path in found:
            continue
        text, failed, offset = file_read(c, path)
        if offset:  # cut: read on where the note says, before summarising
            more = read_next(c, path, offset, ("", ""))
            if more is not None:
                return more
        if failed is not None or text is not None:
            found[path] = _summary(c, path, failed or Call("read_file", {"path": path}, text))
            now.append(found[path])
    left = [path for path in files if path not in found]
    if not left:
        return Reply().text("\n".join(found[path] for path in files))
    if "read_file" not in c.tools:
        return missing_tool(c, "read_file")
    plan = [] if planned else [c.say(
        f"Files to summarise: {', '.join(files)}.\nI'll read them one at a time and note each summary as I go, "
        "so that nothing depends on a result that may be cleared to save context.",
        f"要約するファイル: {', '.join(files)}。\n一つずつ読み、要約をその都度書き留めます（古い結果は消されることがあるためです）。")]
    following = c.say(f"Next I'll read {left[0]}.", f"次に {left[0]} を読みます。")
    return Reply().text("\n".join(plan + now + [following])).call("read_file", path=left[0])


FAMILIES = {
    "work_summary": summarise_work,
    "list": list_workspace,
    "summarise": summarise,
    "report": write_report,
    "total": compute_total,
    "find": find_word,
    "count": count,
    "write": write_text,
    "field": read_field,
    "question": answer_question,
    "summarise_all": summarise_all,
    "calculate": calculate,
    "delete": delete,
    "move": move,
    "command": command,
}
