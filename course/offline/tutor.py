"""``offline``: a competent, deterministic tutor for five task families.

What it models is a good tool-using model, as the course's sources describe one:
* it says why before each tool call (one sentence of reasoning, then the tool_use: the part of
  ReAct that survived structured tool use, as "Building an agent loop yourself" puts it);
* it calls independent tools in one reply (several tool_use blocks), e.g. reading two files;
* it answers from the tool results in the history, never from assumptions about the workspace;
* it recovers from a failed call only when the error says how (a nearest name, a list of
  tools); after a bare "Error" it reports the failure instead of guessing;
* told that a call was interrupted and may have happened (a resumed run), it checks before
  repeating: a read is made again, a write is read back and made again only if it did not happen;
* outside its task families it says what it is and what it can do.

It knows tools by the names the course's tool table uses (``list_files``, ``read_file``,
``write_file``, ``search_files``, ``calculate``), the way a real model relies on the names and
descriptions it is given. If a tool it needs is not offered, it says so.

Task families (English or Japanese; it answers in the task's language):
1. list the workspace's files;
2. read one or more named files and summarise them (several files are read in parallel);
3. list the files and write their count and names to ``report.txt`` (the task of "An AI agent
   is a while loop inside");
4. read ``sample.txt`` (or a named file) and compute the total price (the task of "Building an
   AI agent without a framework");
5. find which files mention a word.

It also writes the summary a pruning harness asks for ("Summarise the work so far ...
Transcript: ..."): it keeps what the model said (its notes, where a careful model records its
findings) and counts the calls made, and drops the tool results, which can be fetched again.
"""

from __future__ import annotations

import re

from .behaviours import Reply
from .conversation import Call, Conversation, parse_listing

FILE_NAME = re.compile(r"(?<![\w/.-])[\w-]+(?:/[\w.-]+)*\.[A-Za-z0-9]{1,5}(?![\w])")
QUOTED = re.compile(r"[\"'「『“‘]([^\"'」』”’\n]{1,40})[\"'」』”’]")
WORD_AFTER = re.compile(r"\b(?:mentions?|contains?|containing|word|for)\s+(?:the\s+word\s+)?([\w-]+)", re.I)
UNIT_PRICE = re.compile(r"(?:単価|unit price)\D{0,12}?(\d[\d,]*)", re.I)
QUANTITY = re.compile(r"(?:数量|個数|quantity|qty)\D{0,12}?(\d[\d,]*)", re.I)
# The harness's word for a call whose result was lost when its run was stopped (s02 on, on resume).
INTERRUPTED = re.compile(r"\binterrupted\b.*\bmay (?:or may not )?have happened", re.I | re.S)
HINT = re.compile(r"(?:nearest|did you mean|closest|similar)[^:\n]*:\s*['\"`]?([\w./-]+)", re.I)


# ---------------------------------------------------------------- reading the task

def classify(task: str) -> tuple[str, dict] | None:
    low = task.lower()
    if low.startswith("summarise the work so far") or low.startswith("summarize the work so far"):
        return "work_summary", {}
    files = [name for name in FILE_NAME.findall(task)]
    if "report.txt" in low and any(w in low for w in ("write", "save", "create", "書", "保存", "作")):
        return "report", {}
    if any(w in low for w in ("total", "合計", "sum ", "how much")):
        return "total", {"path": next((f for f in files if f != "report.txt"), "sample.txt")}
    if any(w in low for w in ("mention", "contain", "search", "which files", "含", "検索", "探", "grep")):
        word = _word_to_find(task)
        if word:
            return "find", {"word": word}
    if files and any(w in low for w in ("summar", "read", "what is in", "要約", "読", "内容", "まとめ")):
        return "summarise", {"paths": files}
    if any(w in low for w in ("list", "files", "一覧", "ファイル", "what is in the workspace")):
        return "list", {}
    return None


def _word_to_find(task: str) -> str | None:
    quoted = QUOTED.search(task)
    if quoted:
        return quoted.group(1).strip()
    after = WORD_AFTER.search(task)
    return after.group(1) if after else None


# ---------------------------------------------------------------- the tutor

def tutor(conversation: Conversation) -> Reply:
    """A competent, deterministic tutor for five task families (list, summarise, report, total, find); see the module docstring."""
    kind = classify(conversation.task)
    if kind is None:
        return out_of_scope(conversation)
    recovery = recover_from_error(conversation)
    if recovery is not None:
        return recovery
    family, details = kind
    return FAMILIES[family](conversation, **details)


def out_of_scope(c: Conversation) -> Reply:
    return Reply().text(c.say(
        "I am the course's offline tutor, a stand-in model that runs with no API key. I can list the "
        "workspace's files, read and summarise a named file, write a report of the listing to "
        "report.txt, compute the total price in sample.txt, and find which files mention a word. "
        "For any other task, run with a real model: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for "
        "a local server) and pass --model.",
        "私はこのコースのオフライン・チューターです（API キーなしで動く代役のモデルです）。できるのは、"
        "ワークスペースのファイル一覧、指定したファイルの要約、一覧を report.txt に書くこと、sample.txt の"
        "合計金額の計算、ある単語を含むファイルの検索です。それ以外の仕事は本物のモデルで実行してください："
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
    last_turn = c.turns[-1] if c.turns else []
    failed = [call for call in last_turn if call.result is not None and call.failed]
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


# ---------------------------------------------------------------- the five families

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
        reply = Reply().text(c.say(
            f"I'll read {' and '.join(unread)} to summarise {'them' if len(unread) > 1 else 'it'}"
            + ("; the files are independent, so I read them at once." if len(unread) > 1 else "."),
            f"要約するために {'、'.join(unread)} を読みます。",
        ))
        for path in unread:
            reply.call("read_file", path=path)
        return reply
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
    lines = [line.strip() for line in (call.result or "").splitlines() if line.strip()]
    words = sum(len(line.split()) for line in lines)
    opening = lines[0].lstrip("# ") if lines else ""
    closing = lines[-1].lstrip("-# ") if len(lines) > 1 else ""
    english = f"{path}: {len(lines)} lines, {words} words. It opens with \"{opening}\""
    english += f" and ends with \"{closing}\"." if closing else "."
    japanese = f"{path}: {len(lines)} 行。冒頭は「{opening}」" + (f"、末尾は「{closing}」です。" if closing else "です。")
    return c.say(english, japanese)


def write_report(c: Conversation) -> Reply:
    listed = [call for call in c.results_of("list_files") if not call.failed]
    if not listed:
        return list_workspace(c)
    # The report is about files: folders (listed with a trailing "/") and the report itself are left out.
    names = [name for name in parse_listing(listed[-1].result) if name != "report.txt" and not name.endswith("/")]
    written = [call for call in c.results_of("write_file") if call.input.get("path") == "report.txt" and not call.failed]
    if written or confirmed_write(c, "report.txt"):
        return Reply().text(c.say(
            f"I wrote report.txt: {len(names)} files ({', '.join(names)}).",
            f"report.txt を書きました: ファイル数 {len(names)}（{', '.join(names)}）。",
        ))
    if "write_file" not in c.tools:
        return missing_tool(c, "write_file")
    header = c.say(f"Files: {len(names)}", f"ファイル数: {len(names)}")
    content = "\n".join([header] + [f"- {name}" for name in names]) + "\n"
    return Reply().text(c.say(
        f"The listing shows {len(names)} files, so I'll write their count and names to report.txt.",
        f"一覧には {len(names)} 個のファイルがあるので、ファイル数と一覧を report.txt に書きます。",
    )).call("write_file", path="report.txt", content=content)


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
        reply = Reply().text(c.say(
            f"There is no search tool, so I'll read all {len(unread)} files at once and look for \"{word}\".",
            f"検索ツールがないので、{len(unread)} 個のファイルをまとめて読んで「{word}」を探します。",
        ))
        for name in unread:
            reply.call("read_file", path=name)
        return reply
    matches = [name for name in names if word.lower() in (read[name].result or "").lower() and not read[name].failed]
    return Reply().text(c.say(
        f"{len(matches)} files mention \"{word}\": {', '.join(matches) or 'none'}.",
        f"「{word}」を含むファイルは {len(matches)} 個です: {'、'.join(matches) or 'なし'}。",
    ))


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


FAMILIES = {
    "work_summary": summarise_work,
    "list": list_workspace,
    "summarise": summarise,
    "report": write_report,
    "total": compute_total,
    "find": find_word,
}
