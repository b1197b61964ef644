"""How the ``offline`` tutor reads a task: which of its families it is, and the details it needs.

A real model understands a task however it is worded; the tutor recognises the wordings a learner
reaches for first, in English and in Japanese, and nothing else. Each family below lists the cues
it is recognised by. The order of the checks matters where cues overlap ("write their *count* and
names to report.txt" is a report, not a count; "the *total* number of words" is a count; "create
notes.txt *containing* hi" is a write, not a search), so it is spelled out in ``classify``.

Families and the details each carries:
* ``report`` (``path``): list the files, write their count and names to a file (report.txt by default);
* ``write`` (``path``, ``text``): write given text to a file;
* ``count`` (``paths``, ``units``): count the words, lines or characters of named files;
* ``total`` (``path``): the total price of an order file (sample.txt by default);
* ``find`` (``word``): which files mention a word;
* ``summarise`` (``paths``): read named files and summarise them;
* ``field`` (``path``, ``question``): one field of a JSON file;
* ``question`` (``path``, ``question``): what a file says;
* ``list``: the workspace's files;
* ``summarise_all``: list the files, read them all, summarise each ("summarise all the files");
* ``calculate`` (``expression``): an arithmetic expression the task writes out ("Compute 1250 * 16");
* ``delete`` (``path``): delete a named file;
* ``move`` (``source``, ``destination``): move or rename a named file;
* ``command`` (``command``): run a shell command the task names ("Run wc -l memo.md");
* ``work_summary``: the summary of a run that a pruning harness asks for (not a learner's task).
"""

from __future__ import annotations

import re

# File names are ASCII here: Japanese text has no spaces, so a name must end where the Latin
# letters do ("todo.mdに" names todo.md). An extension starts with a letter, so "0.3.1" is no file.
FILE_NAME = re.compile(r"(?<![A-Za-z0-9_/.-])[A-Za-z0-9_-]+(?:/[A-Za-z0-9_.-]+)*\.[A-Za-z][A-Za-z0-9]{0,4}(?![A-Za-z0-9_])")
QUOTED = re.compile(r"[\"「『“]([^\"」』”\n]{1,500})[\"」』”]|(?<![A-Za-z])['‘]([^'’\n]{1,500})['’](?![A-Za-z])")

SUMMARY_WORDS = re.compile(r"summar|\bgist\b|overview|tl;?dr|\babout\s*[?？]?\s*$|要約|まとめ|概要|要点|あらまし", re.I)
READ_WORDS = re.compile(r"\bread\b|\bopen\b|\bget\b|\bfetch\b|\bextract\b|\blook up\b|読|取り出|取得|調べ", re.I)
QUESTION_WORDS = re.compile(
    r"\b(?:what|which|who|when|where|why|how|tell|show|say|says|said|does|do|is|are|print|display|cat|contents?|inside)\b"
    r"|[?？]|何|教えて|見せ|中身|内容|どんな|どう|表示|確認|書いて(?:あ|い)|書かれ", re.I)
LIST_WORDS = re.compile(r"\blist\b|\bfiles\b|\bls\b|director|folder|workspace|一覧|ファイル|フォルダ|ディレクトリ|ワークスペース",
                        re.I)

WRITE_VERB = re.compile(r"\b(?:write|save|put|store|create|make|add|append|record|overwrite|replace)\b|書|保存|作|記入|記録|入れ|追記|上書", re.I)
ASKING = re.compile(r"^\s*(?:what|which|who|when|where|why|how|did|does|do|is|are|has)\b|何|なに|どんな|どう", re.I)
APPENDING = re.compile(r"\b(?:add|append)\b|追記|追加|書き足", re.I)
LISTING = re.compile(r"\blist(?:ing)?\b|\bfiles\b|\bfile names\b|\bnames\b|\binventory\b"
                     r"|一覧|ファイル数|件数|ファイル名|ファイルの(?:数|名前|リスト)|リスト", re.I)

COUNTING_EN = re.compile(r"\b(?:count|how many|number of|tally|wc)\b", re.I)
UNITS_EN = {"lines": re.compile(r"\blines?\b", re.I), "words": re.compile(r"\bwords?\b", re.I),
            "characters": re.compile(r"\b(?:characters?|chars?|letters?)\b", re.I)}
UNITS_JA = {"lines": "(?<!実)行", "words": "単語|語|ワード", "characters": "文字"}

TOTAL_WORDS = re.compile(r"\btotal\b|\bsum\b|how much|\bprice\b|\bcost\b|合計|総額|いくら|金額|代金", re.I)

FIND_WORDS = re.compile(
    r"mention|contain|search|which files?\b|\bgrep\b|look for|appears?\b|talks? about|refers? to|"
    r"含|検索|探|出て(?:く|き)|登場|使われ|言及|どのファイル", re.I)
FIND_AFTER = [
    re.compile(r"\b(?:word|term|string|text)\s+([\w-]+)", re.I),
    re.compile(r"\b(?:mentions?|mentioning|contains?|containing|grep|about|refers? to)\s+(?:the\s+|a\s+)?([\w-]+)", re.I),
    re.compile(r"\bwhere\s+(?:is|does)\s+([\w-]+)", re.I),
    re.compile(r"\b(?:for|find)\s+(?:the\s+)?([\w-]+)", re.I),
]
FIND_BEFORE_JA = re.compile(
    r"([A-Za-z0-9_.-]+|[ァ-ヶー]+|[\u4e00-\u9fff]+)\s*(?:という(?:単語|言葉|語|文字列)|を含|が含まれ|が出て|が登場|"
    r"が使われ|を検索|で検索|を探|に言及|の入った|が入った|が入って|が書かれ|(?:と|って)\s*書(?:いて|かれ))")
NOT_A_WORD = {"the", "a", "an", "word", "words", "file", "files", "text", "term", "string", "any", "all",
              "workspace", "which", "that", "it", "them", "me", "each", "every", "in", "of"}


def classify(task: str) -> tuple[str, dict] | None:
    """The family of ``task`` and its details, or None for a task the tutor does not do."""
    low = task.lower()
    if low.startswith(("summarise the work so far", "summarize the work so far")):
        return "work_summary", {}
    # A command the task names is run as written, whatever files or words it holds ("Run wc -l memo.md").
    command = command_to_run(task)
    if command:
        return "command", {"command": command}
    files = FILE_NAME.findall(task)
    unquoted = QUOTED.sub(" ", task)
    if files and DELETE_WORDS.search(unquoted) and not ASKING.search(unquoted):
        return "delete", {"path": files[0]}
    if len(files) >= 2 and MOVE_WORDS.search(unquoted) and not ASKING.search(unquoted):
        return "move", {"source": files[0], "destination": files[1]}
    expression = expression_in(task)
    if expression and not files:
        return "calculate", {"expression": expression}
    if not files and SUMMARY_WORDS.search(unquoted) and ALL_FILES.search(unquoted):
        return "summarise_all", {}
    writing = WRITE_VERB.search(unquoted)
    # A question about what a file says ("what did I write to x.txt?", 「何と書いてある？」) asks for no write.
    writing = writing and not ASKING.search(unquoted)
    if writing and files and LISTING.search(unquoted):
        return "report", {"path": files[-1]}
    if writing and files:
        text = text_to_write(task, files[-1])
        if text is not None:
            return "write", {"path": files[-1], "text": text, "append": bool(APPENDING.search(unquoted))}
        if "report.txt" in files:
            return "report", {"path": "report.txt"}
    units = units_to_count(unquoted)
    if units and files:
        return "count", {"paths": files, "units": units}
    if TOTAL_WORDS.search(unquoted):
        return "total", {"path": next((f for f in files if f != "report.txt"), "sample.txt")}
    if FIND_WORDS.search(unquoted):
        word = word_to_find(task)
        if word:
            return "find", {"word": word}
    if files and SUMMARY_WORDS.search(unquoted):
        return "summarise", {"paths": files}
    if files and files[0].lower().endswith(".json") and (QUESTION_WORDS.search(unquoted) or READ_WORDS.search(unquoted)):
        return "field", {"path": files[0], "question": task}
    if files and QUESTION_WORDS.search(unquoted):
        return "question", {"path": files[0], "question": task}
    if files and READ_WORDS.search(unquoted):
        return "summarise", {"paths": files}
    if LIST_WORDS.search(unquoted):
        return "list", {}
    return None


# ---------------------------------------------------------------- delete, move, command, calculate

DELETE_WORDS = re.compile(r"\b(?:delete|remove|erase|trash)\b|削除|消して|消す|消去|捨て", re.I)
MOVE_WORDS = re.compile(r"\b(?:move|rename|mv)\b|移動|名前を変|名前変更|改名|リネーム|移して", re.I)
ALL_FILES = re.compile(r"\b(?:all|every|each)\b.*\bfiles?\b|\bfiles\b|全部|すべて|全て|全ファイル|各ファイル|それぞれ", re.I)
# "Run wc -l memo.md", "Execute `ls -l`", 「wc -l memo.md を実行して」: a command the task names, as written.
_RUN_EN = re.compile(r"^\s*(?:please\s+)?(?:run|execute|exec)\s+(?:the\s+command\s+)?:?\s*(?P<command>.+?)\s*[.!]?\s*$", re.I)
_BACKTICKED = re.compile(r"`([^`\n]{1,300})`")
_RUN_JA = re.compile(r"^\s*(?:[「『\"`](?P<quoted>[^」』\"`\n]{1,300})[」』\"`]|(?P<command>[ -~]{1,300}?))\s*(?:という)?(?:コマンド)?\s*を\s*(?:実行|走らせ|動かし)")
_RUN_JA_AFTER = re.compile(r"(?:コマンド|次のコマンド)\s*[:：]?\s*[「『\"`]?(?P<command>[ -~]{1,300}?)[」』\"`]?\s*を?\s*(?:実行|走らせ)")
_RUNNING = re.compile(r"\b(?:run|execute|exec)\b|実行", re.I)


def command_to_run(task: str) -> str | None:
    """The shell command a task asks to run, as it writes it; None if it names none."""
    if not _RUNNING.search(task):
        return None
    quoted = _BACKTICKED.search(task)
    if quoted:
        return quoted.group(1).strip()
    japanese = _RUN_JA.search(task) or _RUN_JA_AFTER.search(task)
    if japanese:
        found = (japanese.groupdict().get("quoted") or japanese.group("command") or "").strip()
        return found or None
    english = _RUN_EN.search(task)
    if english:
        found = english.group("command").strip().strip("\"'“”")
        # "Run the tests" or "run a command" describes a command to be chosen: a task for a real model.
        if found and not re.match(r"(?:a|an|the|some|my|this|that|it)\b", found, re.I):
            return found
    return None


NUMBER = r"\d+(?:\.\d+)?"
OPERATOR = r"(?:\*\*|//|[-+*/%×÷xX]|かける|たす|ひく|わる|足す|引く|割る)"
EXPRESSION = re.compile(rf"\(*\s*{NUMBER}\s*\)*(?:\s*{OPERATOR}\s*\(*\s*{NUMBER}\s*\)*)+")
SPOKEN = {"×": "*", "÷": "/", "x": "*", "X": "*", "かける": "*", "たす": "+", "ひく": "-", "わる": "/",
          "足す": "+", "引く": "-", "割る": "/"}


def expression_in(task: str) -> str | None:
    """An arithmetic expression written out in the task, in the calculator's notation ("1250 × 16" -> "1250 * 16")."""
    found = EXPRESSION.search(task)
    if not found:
        return None
    text = found.group(0).strip()
    for spoken, symbol in SPOKEN.items():
        text = text.replace(spoken, f" {symbol} ")
    text = re.sub(r"\s+", " ", text).strip()
    if text.count("(") != text.count(")"):
        text = text.replace("(", "").replace(")", "").strip()
    return text


# ---------------------------------------------------------------- count

def units_to_count(task: str) -> list[str]:
    """The units a task asks to count (lines, words, characters), in a fixed order; [] if it asks none."""
    found = []
    if COUNTING_EN.search(task):
        found = [unit for unit, pattern in UNITS_EN.items() if pattern.search(task)]
    for unit, pattern in UNITS_JA.items():
        asked = rf"(?:{pattern})\s*(?:の)?\s*(?:数|[はがを]\s*(?:いくつ|何|数え))|何\s*(?:{pattern})"
        if re.search(asked, task) and unit not in found:
            found.append(unit)
    return [unit for unit in UNITS_EN if unit in found]


# ---------------------------------------------------------------- find

def word_to_find(task: str) -> str | None:
    quoted = QUOTED.search(task)
    if quoted:
        return (quoted.group(1) or quoted.group(2)).strip()
    for pattern in FIND_AFTER:
        for match in pattern.finditer(task):
            if match.group(1).lower() not in NOT_A_WORD | STOP_WORDS and not FILE_NAME.fullmatch(match.group(1)):
                return match.group(1)
    japanese = FIND_BEFORE_JA.search(task)
    if japanese and japanese.group(1) not in ("ファイル", "単語", "言葉"):
        return japanese.group(1)
    return None


# ---------------------------------------------------------------- write

_F = "{file}"
# Text in the middle of an English sentence is taken as given only if it is not a description of
# text to be made up ("write a poem to poem.txt"): that is a task for a real model.
_EN_WRITE = [
    r"\b(?:write|put|save|store|add|append|record)\s+(?:the\s+(?:text|words?|line|string|message|phrase)\s+)?"
    r"(?P<text>.+?)\s+(?:to|into|in|inside|as)\s+(?:the\s+|a\s+)?(?:new\s+)?(?:file\s+)?(?:called\s+|named\s+)?{file}",
    r"\b(?:create|make|write|overwrite|replace)\s+(?:a\s+|the\s+)?(?:new\s+)?(?:file\s+)?(?:called\s+|named\s+)?{file}\s*,?\s+"
    r"(?:with|containing|that\s+says|saying|reading)\s*:?\s+(?:the\s+(?:text|contents?|line|words?)\s*:?\s*)?(?P<text>.+?)[.!]?$",
    r"\b(?:write|save|put|add)\s+(?:to|into|in)\s+{file}\s*:?\s+(?:the\s+(?:text|line|words?)\s+)?(?P<text>.+?)[.!]?$",
    r"\b(?:make|have|let)\s+{file}\s+(?:say|read|contain)\s+(?P<text>.+?)[.!]?$",
    r"{file},?\s+(?:and|then)\s+(?:write|put|save|add)\s+(?:the\s+(?:text|words?|line)\s+)?(?P<text>.+?)\s+(?:in|into|to)\s+it\b",
]
_JA_WRITE = [
    r"{file}\s*(?:という(?:名前の)?ファイル)?\s*(?:に|へ|の中に)\s*(?P<text>.+?)\s*(?:と|って)\s*(?:書(?!いてあ|かれ)|記|保存|入力|入れ|追記|追加)",
    r"{file}\s*(?:という(?:名前の)?ファイル)?\s*(?:に|へ|の中に)\s*(?P<text>.+?)\s*を\s*(?:書(?!いてあ|かれ)|記|保存|入力|入れ|追記|追加)",
    r"^(?P<text>.+?)\s*(?:と|を)\s*{file}\s*(?:に|へ)\s*(?:書(?!いてあ|かれ)|保存|記|入れ|追記|追加)",
    r"^(?P<text>.+?)\s*と(?:いう内容|書いた|書かれた|だけ書いた)[^\s]*?\s*(?:の)?\s*(?:ファイル\s*)?{file}",
    r"{file}\s*(?:という(?:名前の)?ファイル)?\s*を(?:作|作成)(?:って|し(?:て)?)[、,]?\s*(?:(?:中身|内容)\s*[はを]\s*)?(?P<text>.+?)\s*(?:と|に)\s*(?:書|し)",
    r"{file}\s*の(?:中身|内容)\s*を\s*(?P<text>.+?)\s*に(?:し|書き換え)",
    r"{file}\s*を\s*(?P<text>.+?)\s*で\s*上書き",
]
MADE_UP = re.compile(r"^(?:a|an|the|its|their|my|your|some|this|that|it|them)\b", re.I)


def text_to_write(task: str, path: str) -> str | None:
    """The text a task gives to write to ``path``: quoted if it is quoted, else read off the sentence."""
    for quoted in QUOTED.finditer(task):
        text = quoted.group(1) or quoted.group(2)
        if text.strip() != path:
            return text
    file = re.escape(path)
    for pattern in _JA_WRITE:
        found = re.search(pattern.replace(_F, file), task.strip())
        if found and found.group("text").strip(" 、。,"):
            return found.group("text").strip(" 、。,")
    for pattern in _EN_WRITE:
        found = re.search(pattern.replace(_F, file), task.strip(), re.I)
        if found:
            text = found.group("text").strip()
            if text and not MADE_UP.match(text) and not FILE_NAME.search(text):
                return text
    return None


# ---------------------------------------------------------------- field and question

STOP_WORDS = set("""
a an the and or of in on at to from for with by is are was be been it its this that these those there
what what's whats which who whom whose when where why how does do did done say says said tell me my i
you your please can could would will shall show give get find read open file files value values field
fields key keys set setting settings entry inside content contents written write stored given look check
let know about out up as into than then so just kind sort thing anything something all any only
""".split())
GENERIC = {"name", "names", "value", "id", "field", "key", "setting", "entry", "property", "option", "number"}
JAPANESE_TERMS = {
    "モデル": "model", "バージョン": "version", "版": "version", "プロジェクト": "project", "言語": "language",
    "リトライ": "retry", "再試行": "retry", "最大": "max", "上限": "max", "名前": "name", "名": "name",
    "作者": "author", "著者": "author", "ポート": "port", "ホスト": "host", "タイムアウト": "timeout",
    "説明": "description", "温度": "temperature", "トークン": "token", "期限": "deadline", "締め切り": "deadline",
    "担当": "owner", "所有者": "owner", "ユーザー": "user", "パス": "path", "次": "next", "手順": "step",
}


def normalised(word: str) -> str:
    """A word without case or its plural/-ing ending, so that 'retries' meets 'max_retries' and 'steps' 'step'."""
    word = word.lower()
    for ending, replacement in (("ies", "y"), ("ing", ""), ("es", ""), ("s", "")):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: len(word) - len(ending)] + replacement
    return word


def words_asked_about(question: str, paths: list[str]) -> list[str]:
    """The content words of a question, without the file it names: what the answer should be about."""
    text = question
    for path in paths:
        text = text.replace(path, " ")
    stems = {normalised(path.rsplit("/", 1)[-1].split(".")[0]) for path in paths}
    words = [normalised(w) for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", text) if w.lower() not in STOP_WORDS]
    words += [english for japanese, english in JAPANESE_TERMS.items() if japanese in text]
    seen: list[str] = []
    for word in words:
        if word not in stems and word not in seen:
            seen.append(word)
    return seen


def key_words(key: str) -> list[str]:
    """The words of a JSON key: max_retries, maxRetries and max-retries are all (max, retry)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", key)
    return [normalised(part) for part in re.split(r"[\s_.\-/]+", spaced) if part]
