"""Offline behaviours for long runs: a task that honestly needs many turns, and a model that talks too much.

Both exist for the stop conditions of s03: a turn limit and a token budget only matter on a task
long enough to reach them, and a ``max_tokens`` stop only on a reply long enough to be cut.
Neither behaviour misbehaves: the work they do is legitimate, only its length is the point.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from course.offline import tokens
from course.offline.behaviours import Reply
from course.offline.conversation import Call, Conversation, parse_listing
from course.offline.tutor import tutor

# "Add up the amounts in every file of the ledger folder" / "ledger フォルダの金額を合計して"
ADD_UP = re.compile(r"add up|total|\bsum\b|合計|足し", re.I)
FOLDER = re.compile(r"([\w.-]+)/?\s*(?:folder|directory|フォルダ|ディレクトリ)|\b([\w.-]+)/(?!\w)", re.I)
AMOUNT = re.compile(r"(?:amount|金額)\D{0,12}?(-?\d[\d,]*)", re.I)
PLAIN_NAME = re.compile(r"[\w.-]+/?")  # a listed name; anything else is not a listing any more

# The two turns that are not reads: listing the folder first, answering last.
TURNS_AROUND_THE_READS = 2


# ---------------------------------------------------------------- offline-long-N

def long_task(turns: int):
    """``offline-long-N``: a competent model on a task that needs about N turns.

    What it reproduces: the long, legitimate run of the cost argument of "Building an agent loop
    yourself", where every turn resends the whole history, so the input billed grows with the
    square of the turns. The task
    is to add up the amounts in every file of a folder (``Add up the amounts in every file of the
    ledger folder``). The model lists the folder, then reads the files in the listed order, one
    per turn (one ``read_file`` per reply, after a one-sentence reason), and answers the total of
    the amounts the tool results stated. Its patience is N turns: it reads at most N-2 files, so
    a folder of N-2 files takes exactly N turns, and a larger one gets an answer that says how
    many files were left unread. A folder that does not exist is reported as such.

    Like a careful person on a long job, it keeps notes: each reply opens with its running total
    (``[total T · K files · through PATH · E without amount]``), so the total survives a harness
    that prunes old tool results from the history; a listing that is no longer in view is asked
    for again. Deliberately simple otherwise: no parallel reads, no shortcut (a search, a
    script) even when one is offered. Other tasks go to the tutor.
    """
    most_files = max(turns - TURNS_AROUND_THE_READS, 0)

    def reply(conversation: Conversation) -> Reply:
        folder = folder_to_add_up(request_of(conversation.task))
        if folder is None:
            return tutor(conversation)
        return add_up_folder(conversation, folder, most_files)

    return reply


def request_of(task: str) -> str:
    """The request itself: its first paragraph (a harness may append context, such as a summary, after it)."""
    return task.strip().split("\n\n")[0]


def folder_to_add_up(request: str) -> str | None:
    """The folder named by a request for a total over a folder's files, else None."""
    if not ADD_UP.search(request):
        return None
    match = FOLDER.search(request)
    return (match.group(1) or match.group(2)).rstrip("/") if match else None


@dataclass(frozen=True)
class Tally:
    """The running total, as the model notes it in each reply."""

    total: int = 0
    files: int = 0
    through: str | None = None  # the last file counted, in listing order
    without_amount: int = 0

    def note(self) -> str:
        """The note that opens a reply ("" before the first read: there is nothing to keep yet)."""
        if not self.files:
            return ""
        return f"[total {self.total} · {self.files} files · through {self.through} · {self.without_amount} without amount] "

    def count(self, read: Call) -> "Tally":
        amount = amount_in(read)
        return Tally(self.total + (amount or 0), self.files + 1, read.input["path"],
                     self.without_amount + (amount is None))


NOTE = re.compile(r"\[total (-?\d+) · (\d+) files · through (\S+) · (\d+) without amount\]")


def add_up_folder(c: Conversation, folder: str, most_files: int) -> Reply:
    if "list_files" not in c.tools or "read_file" not in c.tools:
        return Reply().text(c.say(
            f"To add up the files of {folder}/ I need list_files and read_file, but the tools offered are: "
            f"{', '.join(c.tools) or 'none'}.",
            f"{folder}/ のファイルを合計するには list_files と read_file が必要ですが、渡された道具は "
            f"{', '.join(c.tools) or 'なし'} です。",
        ))
    listing = latest_listing(c, folder)
    if listing is None:
        return Reply().text(c.say(
            f"I'll list {folder}/ first, because I cannot know which files it holds without looking.",
            f"{folder}/ にどのファイルがあるかは見ないと分からないので、まず一覧を取得します。",
        )).call("list_files", path=folder)
    if listing.failed:
        return folder_missing(c, folder, listing)
    tally = current_tally(c)
    names = file_names(listing)
    if names is None:
        return list_again(c, folder, listing, tally)
    files = [f"{folder}/{name}" for name in names]
    following = files.index(tally.through) + 1 if tally.through in files else 0
    if tally.files < most_files and following < len(files):
        return Reply().text(tally.note() + c.say(
            f"I'll read {files[following]} next (file {following + 1} of {len(files)}), since its amount belongs in the total.",
            f"合計に含めるため、次に {files[following]} を読みます（{len(files)} 個中 {following + 1} 個目）。",
        )).call("read_file", path=files[following])
    return answer_total(c, folder, len(files), tally)


def latest_listing(c: Conversation, folder: str) -> Call | None:
    listings = [call for call in c.results_of("list_files") if call.input.get("path", ".").rstrip("/") == folder]
    return listings[-1] if listings else None


def file_names(listing: Call) -> list[str] | None:
    """The files a listing shows (folders left out), or None if its text is not a listing any more."""
    names = parse_listing(listing.result)
    if not all(PLAIN_NAME.fullmatch(name) for name in names):
        return None
    return [name for name in names if not name.endswith("/")]


def list_again(c: Conversation, folder: str, listing: Call, tally: Tally) -> Reply:
    """The listing in the history no longer shows the names (a harness replaced it): ask for it again, once."""
    if c.last_call() is listing:
        return Reply().text(c.say(
            f"list_files did not return a list of names for {folder}/, so I cannot tell which files to add up.",
            f"list_files が {folder}/ のファイル名の一覧を返さなかったため、どのファイルを合計すべきか分かりません。",
        ))
    return Reply().text(tally.note() + c.say(
        f"The listing of {folder}/ is no longer in view, so I'll list it again to find the next file.",
        f"{folder}/ の一覧が見えなくなったので、次のファイルを知るためにもう一度一覧を取得します。",
    )).call("list_files", path=folder)


def current_tally(c: Conversation) -> Tally:
    """The latest note, plus the reads made after the file it ends with.

    A note opens every reply after a read, so the reads it has not counted are the last one or
    two, whose results are still in view even when a harness prunes older ones.
    """
    notes = [match for text in [c.task, *c.assistant_texts] for match in NOTE.finditer(text)]
    tally = Tally(int(notes[-1][1]), int(notes[-1][2]), notes[-1][3], int(notes[-1][4])) if notes else Tally()
    reads = c.results_of("read_file")
    paths = [read.input.get("path") for read in reads]
    if tally.through is None:
        uncounted = reads
    elif tally.through in paths:
        uncounted = reads[len(paths) - paths[::-1].index(tally.through):]
    else:  # the read the note ends with was pruned away: trust the note alone (it may miss one read)
        uncounted = []
    for read in uncounted:
        tally = tally.count(read)
    return tally


def folder_missing(c: Conversation, folder: str, listing: Call) -> Reply:
    first_line = (listing.result or "").strip().splitlines()[0] if (listing.result or "").strip() else "an error"
    return Reply().text(c.say(
        f"There is no folder {folder}/ to add up: list_files answered \"{first_line}\". "
        "I did not guess any amounts.",
        f"{folder}/ というフォルダは見つかりませんでした（list_files の結果: 「{first_line}」）。金額は推測していません。",
    ))


def answer_total(c: Conversation, folder: str, listed: int, tally: Tally) -> Reply:
    """The total of the amounts the tool results stated, and an honest account of what is missing."""
    if not listed:
        return Reply().text(c.say(f"{folder}/ holds no files, so there is nothing to add up.",
                                  f"{folder}/ にはファイルがないため、合計するものがありません。"))
    counted = tally.files - tally.without_amount
    english = [f"The amounts in {counted} files of {folder}/ add up to {tally.total}."]
    japanese = [f"{folder}/ の {counted} 個のファイルの金額の合計は {tally.total} です。"]
    if tally.without_amount:
        english.append(f"{tally.without_amount} of the files read stated no amount I could read.")
        japanese.append(f"読んだファイルのうち {tally.without_amount} 個は金額を読み取れませんでした。")
    if tally.files < listed:
        left = listed - tally.files
        english.append(f"I stopped after {tally.files} of the {listed} files; {left} were not read, so this is not the full total.")
        japanese.append(f"{listed} 個中 {tally.files} 個で打ち切りました。残り {left} 個は読んでいないため、全体の合計ではありません。")
    return Reply().text(c.say(" ".join(english), "".join(japanese)))


def amount_in(call: Call) -> int | None:
    """The amount a read_file result states, or None if the read failed or states none."""
    match = AMOUNT.search(call.result or "") if not call.failed else None
    return int(match.group(1).replace(",", "")) if match else None


# ---------------------------------------------------------------- offline-verbose

# Above MAX_TOKENS = 1024, the stages' reply limit, with a margin: the reply is always cut.
VERBOSE_REASONING_TOKENS = 1100

DELIBERATION = (
    "Before I act, I want to restate the task in my own words so that I do not drift from it: {task}",
    "The workspace is a small project folder, and I cannot know what any file holds until a tool shows me.",
    "I could answer from what such projects usually contain, but that would be a guess, and a guess is not an answer.",
    "So the next step has to be a tool call, and I should pick the one that brings the most information for the least cost.",
    "I will also keep in mind what the earlier tool results said, because the history is the only memory I have.",
    "If a tool fails, I should read its error carefully, since a good error says what to do next.",
    "Let me weigh the alternatives once more: listing, reading, searching and calculating each answer a different question.",
    "Having weighed them, I am fairly confident about the next step, but it costs little to think it over again.",
)


def verbose(conversation: Conversation) -> Reply:
    """``offline-verbose``: the tutor, thinking aloud at length before every reply.

    What it reproduces: the reason step of ReAct ("Building an AI agent without a framework":
    think, act, observe) written out in full prose, as chatty models do when asked to explain
    themselves. Each reply opens with a deliberate, deterministic reasoning paragraph of more
    than 1100 estimated tokens, then carries the tutor's own reply. At the stages' ``max_tokens``
    of 1024 (the value of "Building an agent loop yourself") the
    API cuts such a reply in the middle of its text: ``stop_reason`` is ``"max_tokens"`` and the
    tool call that would have followed never arrives. With a larger ``max_tokens`` the same
    model does the task correctly: the limit, not the model, ends the run.
    """
    reply = tutor(conversation)
    reply.blocks.insert(0, {"type": "text", "text": reasoning_paragraph(conversation.task)})
    return reply


def reasoning_paragraph(task: str) -> str:
    """Sentences of DELIBERATION, cycled in order, until the paragraph exceeds the reasoning length."""
    sentences: list[str] = []
    while tokens.text_tokens(" ".join(sentences)) <= VERBOSE_REASONING_TOKENS:
        sentences.append(DELIBERATION[len(sentences) % len(DELIBERATION)].format(task=task.strip()))
    return " ".join(sentences)
