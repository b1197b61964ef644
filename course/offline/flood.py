"""``offline-flood-N``: a long, legitimate task whose tool results are large, done by a careful model.

What it reproduces: the cost argument of "Building an agent loop yourself". Every call resends
the whole history, so a loop that reads one big file per turn is billed for every earlier file
again on every later turn: the input billed over N turns grows with the square of N, and a long
enough run no longer fits the context window at all (the API answers "prompt is too long"). The
remedy the course measures in s05 is the one the sources report: Anthropic's context-editing
report found that clearing old tool results cut the tokens of a 100-turn agent evaluation by 84%,
and "The Complexity Trap" (arXiv 2508.21433) found that masking old observations halves the cost
of a software agent and matches LLM summarisation at it.

The task: ``Count the ERROR lines in every log file of the logs folder``. The model lists the
folder, then reads the logs one per turn (``logs/app-001.log``, ``app-002.log``...; each about
3,500 characters, so one read fits the 4,000-character cut of s04), reading at most N files,
and answers the total number of ERROR lines.

It is a careful model that knows its context may be pruned, so it keeps notes. Before each read,
its one sentence of reasoning records what it found and where it is::

    logs/ holds 40 log files; I'll read them one at a time and keep notes: running total 0; 0 of 40 files read; next logs/app-001.log.
    logs/app-007.log has 3 ERROR lines; running total 21; 7 of 40 files read; next logs/app-008.log.

It reads everything from the request, like a real model, and only what is there:
* a count comes from a tool result while the result is still visible;
* a result that has been masked (s05's placeholder starts "[masked", the API's clearing "[cleared") or
  folded into a summary (s05's, or the API's compaction)
  (which keeps the model's notes) is not re-read: the model relies on its latest note, found in
  its earlier replies or in the summary, for the running total, the number of files, and the
  next file to read; the files are numbered, so the file after a note's next one follows from
  its name;
* with neither a visible listing nor a note it has lost its place, and lists the folder again;
* a failed call ends the run with a report of the failure, never a guessed count.

Its final answer states the total of ERROR lines (lines whose level is ERROR; a WARN or INFO
line that mentions an error does not count). Other tasks, and a harness's request to summarise
the work so far, go to the tutor.

``logs(workspace, count)`` writes the log folder this task is run on (deterministic content), and
``error_total(snapshot)`` counts its ERROR lines for a check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from course.offline.behaviours import Reply
from course.offline.conversation import Call, Conversation, parse_listing
from course.offline.tutor import tutor

LOGS_FOLDER = "logs"
COUNT_TASK = f"Count the ERROR lines in every log file of the {LOGS_FOLDER} folder"

COUNT = re.compile(r"\bcount\b|how many|数え|何件|何行", re.I)
FOLDER = re.compile(r"([\w.-]+)/?\s*(?:folder|directory|フォルダ|ディレクトリ)|\b([\w.-]+)/(?!\w)", re.I)
# A log line: date, time, level, then the message. Only the level field decides.
ERROR_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ERROR\b", re.M)
NOTE = re.compile(
    r"(?:(?P<path>[\w./-]*\w) has (?P<count>\d+) ERROR lines?; )?running total (?P<total>\d+); "
    r"(?P<read>\d+) of (?P<of>\d+) files read(?:; next (?P<next>[\w./-]*\w))?")
NOTE_JA = re.compile(
    r"(?:(?P<path>[\w./-]*\w) の ERROR 行は (?P<count>\d+) 件。)?累計 (?P<total>\d+) 件、"
    r"(?P<of>\d+) 個中 (?P<read>\d+) 個読了(?:。次は (?P<next>[\w./-]*\w))?")
NUMBER = re.compile(r"(\d+)(?=\D*$)")
MASKED = ("[masked", "[cleared")  # s05's placeholder, and the API's own (context_management.py)


# ---------------------------------------------------------------- the workspace

def log_file_name(number: int) -> str:
    return f"app-{number:03d}.log"


LEVELS = ("INFO", "INFO", "WARN", "INFO", "ERROR", "INFO", "WARN", "INFO", "INFO", "ERROR", "INFO")
COMPONENTS = ("api", "db", "worker", "auth", "cache", "billing")
MESSAGES = {
    "INFO": ("request served in {n} ms", "retried after a transient error, then succeeded",
             "cache warmed with {n} keys", "job {n} finished"),
    "WARN": ("slow query took {n} ms", "error budget at {n}% for this hour", "queue depth {n}"),
    "ERROR": ("connection reset by peer after {n} ms", "job {n} failed: timeout", "payment {n} declined twice"),
}
LOG_SIZE = 3500          # characters a log file reaches before its last line...
LOG_SIZE_SPREAD = 300    # ...plus up to this much, varying by file; always under s04's 4,000-character cut


def log_text(number: int) -> str:
    """The content of log ``number``: deterministic lines of INFO, WARN and ERROR, about 3,500-3,900 characters."""
    target = LOG_SIZE + (number * 97) % LOG_SIZE_SPREAD
    lines, index, size = [], 0, 0
    while size < target:
        step = number * 31 + index * 7
        level = LEVELS[(step + index * index) % len(LEVELS)]
        component = COMPONENTS[(number + index) % len(COMPONENTS)]
        message = MESSAGES[level][(step // 3) % len(MESSAGES[level])].format(n=(step * 37) % 900 + 10)
        seconds = index * 13 + number
        lines.append(f"2025-03-{number % 28 + 1:02d} {seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d} "
                     f"{level:<5} {component}: {message}")
        size += len(lines[-1]) + 1
        index += 1
    return "\n".join(lines) + "\n"


def logs(workspace: Path, count: int) -> None:
    """Write ``logs/app-001.log`` ... ``app-{count}.log``: the folder offline-flood-N counts."""
    folder = Path(workspace) / LOGS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(1, count + 1):
        (folder / log_file_name(number)).write_text(log_text(number), encoding="utf-8")


def error_total(files: dict[str, bytes]) -> int:
    """The ERROR lines of every log in a workspace snapshot (path → bytes): the truth an answer is checked against.

    Counted here independently of the model's own reading: a line counts when its level field,
    the third one, is ERROR.
    """
    return sum(1 for path, data in files.items() if Path(path).parts[0] == LOGS_FOLDER and path.endswith(".log")
               for line in data.decode("utf-8", "replace").splitlines() if line.split()[2:3] == ["ERROR"])


# ---------------------------------------------------------------- offline-flood-N

def flood(most_files: int):
    """``offline-flood-N``: counts the ERROR lines of a log folder, reading at most N files (see the module docstring)."""

    def reply(conversation: Conversation) -> Reply:
        folder = folder_to_count(conversation.task)
        if folder is None:
            return tutor(conversation)
        return count_errors(conversation, folder, most_files)

    return reply


def folder_to_count(task: str) -> str | None:
    """The folder whose ERROR lines the task asks to count, else None (a summary request is not such a task)."""
    low = task.lower()
    if low.startswith(("summarise the work so far", "summarize the work so far")):
        return None
    if not (COUNT.search(task) and "ERROR" in task):
        return None
    match = FOLDER.search(task)
    return (match.group(1) or match.group(2)).rstrip("/") if match else None


@dataclass
class Note:
    """What a note of this model records: the last file counted, its count, and the progress."""

    path: str | None     # None in the first note, written before any file was read
    count: int | None
    total: int
    read: int
    of: int
    next: str | None


def notes_in(text: str) -> list[Note]:
    found = []
    for pattern in (NOTE, NOTE_JA):
        for match in pattern.finditer(text):
            count = int(match["count"]) if match["count"] else None
            found.append(Note(match["path"], count, int(match["total"]), int(match["read"]), int(match["of"]), match["next"]))
    return found


def latest_note(c: Conversation) -> Note | None:
    """The model's latest note: in its own latest reply that has one, else in a summary in the first message."""
    for text in reversed(c.assistant_texts):
        notes = notes_in(text)
        if notes:
            return notes[-1]
    notes = notes_in(c.task)
    return max(notes, key=lambda note: note.read) if notes else None


def visible(call: Call) -> bool:
    """A result the model can still read: returned, not failed, not replaced by a placeholder."""
    return call.result is not None and not call.failed and not call.result.lstrip().startswith(MASKED)


def error_lines(text: str) -> int:
    return len(ERROR_LINE.findall(text))


def count_errors(c: Conversation, folder: str, most_files: int) -> Reply:
    failed = c.failed_last_turn
    if failed:
        return report_failure(c, folder, failed[0])
    listings = [call for call in c.results_of("list_files")
                if call.input.get("path", ".").rstrip("/") == folder and visible(call)]
    files = ([f"{folder}/{name}" for name in parse_listing(listings[-1].result) if not name.endswith("/")]
             if listings else None)
    latest = latest_note(c)
    if files is None and latest is None:
        if "list_files" not in c.tools or "read_file" not in c.tools:
            return Reply().text(c.say(
                f"To count the ERROR lines of {folder}/ I need list_files and read_file, but the tools offered are: "
                f"{', '.join(c.tools) or 'none'}.",
                f"{folder}/ の ERROR 行を数えるには list_files と read_file が必要ですが、渡された道具は "
                f"{', '.join(c.tools) or 'なし'} です。"))
        return Reply().text(c.say(
            f"I'll list {folder}/ first, because I cannot know which log files it holds without looking.",
            f"{folder}/ にどのログがあるかは見ないと分からないので、まず一覧を取得します。",
        )).call("list_files", path=folder)

    # Where the notes leave off, then on through every result still visible.
    of = len(files) if files is not None else latest.of
    if latest is not None:
        last = (latest.path, latest.count) if latest.path else None
        read, total, upcoming = latest.read, latest.total, latest.next
    else:
        last, read, total, upcoming = None, 0, 0, files[0] if files else None
    results = {call.input.get("path"): call for call in c.results_of("read_file") if visible(call)}
    while upcoming is not None and upcoming in results and read < of:
        count = error_lines(results[upcoming].result)
        last, read, total = (upcoming, count), read + 1, total + count
        upcoming = following(upcoming, files) if read < of else None
    if upcoming is None or read >= of or read >= most_files:
        return answer(c, folder, read, of, total)
    if last is None:
        return Reply().text(c.say(
            f"{folder}/ holds {of} log files; I'll read them one at a time and keep notes: "
            f"running total {total}; {read} of {of} files read; next {upcoming}.",
            f"{folder}/ には {of} 個のログがあります。1 つずつ読み、メモを残します: "
            f"累計 {total} 件、{of} 個中 {read} 個読了。次は {upcoming}。",
        )).call("read_file", path=upcoming)
    return Reply().text(c.say(
        f"{last[0]} has {last[1]} ERROR lines; running total {total}; {read} of {of} files read; next {upcoming}.",
        f"{last[0]} の ERROR 行は {last[1]} 件。累計 {total} 件、{of} 個中 {read} 個読了。次は {upcoming}。",
    )).call("read_file", path=upcoming)


def following(path: str, files: list[str] | None) -> str:
    """The file after ``path``: from the listing while it is visible, else the next number in the name."""
    if files is not None and path in files and files.index(path) + 1 < len(files):
        return files[files.index(path) + 1]
    match = NUMBER.search(path)
    if not match:
        return path
    number = str(int(match.group(1)) + 1).zfill(len(match.group(1)))
    return path[:match.start(1)] + number + path[match.end(1):]


def answer(c: Conversation, folder: str, read: int, of: int, total: int) -> Reply:
    if of == 0:
        return Reply().text(c.say(f"{folder}/ holds no log files, so there are no ERROR lines to count.",
                                  f"{folder}/ にはログがないため、数える ERROR 行はありません。"))
    if read < of:
        return Reply().text(c.say(
            f"I stopped after {read} of the {of} log files of {folder}/: they hold {total} ERROR lines. "
            f"{of - read} files were not read, so this is not the full count.",
            f"{folder}/ の {of} 個中 {read} 個で打ち切りました。その中の ERROR 行は {total} 件です。"
            f"残り {of - read} 個は読んでいないため、全体の件数ではありません。"))
    return Reply().text(c.say(
        f"I read all {of} log files of {folder}/: they hold {total} ERROR lines in total.",
        f"{folder}/ の {of} 個のログをすべて読みました。ERROR 行は合計 {total} 件です。"))


def report_failure(c: Conversation, folder: str, call: Call) -> Reply:
    first_line = (call.result or "").strip().splitlines()[0] if (call.result or "").strip() else "an error"
    target = call.input.get("path", folder)
    return Reply().text(c.say(
        f"I could not count the ERROR lines of {folder}/: {call.name} on {target} failed with \"{first_line}\". "
        "I did not guess a count.",
        f"{folder}/ の ERROR 行を数えられませんでした。{target} への {call.name} が「{first_line}」で失敗しました。件数は推測していません。"))
