"""The trace viewer: one recorded run, stepped through turn by turn in a browser.

A run is read into a *view*, a small JSON object the page's script shows: for each turn, what was
sent (the prompt's size, split into tokens read from the prompt cache, written to it, and neither,
and how much it grew since the turn before), the reply's blocks (text, tool calls, thinking), each
tool result (errors marked), what the harness decided around the turn (a stop condition checked, a
result masked or old turns summarised, a gate's denial and its reason, a resumption), and the stop
with its reason and explanation; with each turn's tokens and dollars (``course/runtime/prices.py``), so the
page keeps a running total. Two sources make a view:

* a **transcript** (``course/runtime/transcript.py``), the file a learner's run of s02 on leaves under
  ``runs/transcripts/``: ``python -m course view RUN`` writes one standalone HTML file of it
  (``write_standalone``). A transcript holds the history, the transitions, the stop reason and the
  usage so far at each step; what the harness said beside them (the notes of the trace and the stop's
  explanation) the command line keeps with ``NoteKeeper`` and saves on one more line when the run
  ends (``notes``), since the stage's own lines do not hold them;
* a **recording** of the trace callback (``Recording``), which the site's build passes to every run
  it shows (``course/site/pages.py``): each chapter's run and each ladder cell gets a page of its own in
  the built site, ``viewer/RUN.html``, sharing one script and one style sheet, and a twin
  ``viewer/RUN.ja.html`` for the Japanese pages, the same run with the viewer's labels in Japanese.

Safe to view anything: the page builds every element with ``textContent`` (never ``innerHTML`` of
data), the view is embedded as JSON in which ``<``, ``>`` and ``&`` are written as ``\\u003c``...
(so no ``</script>`` nor ``<!--`` can end the block), and a Content-Security-Policy lets the page
run its own script only and reach no network. A transcript that is not one is refused in one line;
one damaged after its first line is shown up to the damage, with a warning that says where.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import html
import json
import re
import webbrowser
from pathlib import Path

from course.runtime import prices, runlog, transcript
from course.runtime.models import CourseError
from course.runtime.trace import escape_terminal_controls, readable

FORMAT = 1
ASSETS = Path(__file__).resolve().parents[1] / "viewer_assets"
SHOWN_CHARS = 20_000   # of one text block in a learner's view; the rest is said, not shown
SITE_SHOWN_CHARS = 3_000  # in the site's views: a flood of tool output would make every page heavy
LARGEST_TRANSCRIPT = 64 * 1024 * 1024  # bytes; a bigger file is no run of this course's stages
VIEWS_FOLDER = "views"  # in the runs folder (course.runtime.runlog.runs_folder)

# What a stop reason means, for a view whose run left no explanation of its own.
STOP_GLOSSES = {
    "end_turn": "the model ended its turn without asking for a tool: it thinks it is done",
    "tool_use": "the reply asked for a tool, and the run ended before answering it",
    "max_turns": "the turn limit was reached", "token_budget": "the token budget was spent",
    "no_progress": "the history showed no progress (the same call again, or failure after failure)",
    "max_tokens": "the reply was cut at max_tokens", "refusal": "the model declined to go on",
    "api_error": "the API kept failing after the SDK's retries",
    "pause_turn": "the server paused a long turn",
    "kept_pausing": "the API paused the same turn again and again",
    "model_context_window_exceeded": "the prompt no longer fits in the model's context window",
    "unknown_stop_reason": "the reply ended with a stop reason the stage does not know",
}
# What a stage checks around a turn, from s03 (the stop conditions' chapter) on: whether the history
# shows progress, after the results; the turn limit and the token budget, before the next call.
CHECKED = "no progress checked after the results: not stuck; the turn limit and the token budget are checked before the next call"
CHECKING_STAGES = ("s03", "s04", "s05", "s06")


# ---------------------------------------------------------------- the view, built turn by turn

def _count(usage, name: str) -> int:
    value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _usage(usage) -> dict:
    """The four counts of a usage (an SDK object or a dict), each a whole number of at least 0."""
    return {name: _count(usage, name) for name in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                                                   "cache_creation_input_tokens")}


def _shown(value, limit: int) -> str:
    """Text as data: any value as a string, terminal controls written visibly, cut at ``limit``."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = escape_terminal_controls(text)
    if len(text) > limit:
        return f"{text[:limit]}\n… ({len(text) - limit:,} more characters not shown)"
    return text


class ViewBuilder:
    """A view, put together from what happened in order: notes, turns, results, transitions, the stop."""

    def __init__(self, stage: str, model: str, task, *, shown_chars: int = SHOWN_CHARS, source: str = ""):
        self.stage, self.model, self.limit = str(stage), str(model), shown_chars
        self.view = {"format": FORMAT, "stage": self.stage, "model": self.model, "source": source,
                     "task": _shown(task if task is not None else "", shown_chars),
                     "priced_as": None, "turns": [], "end": None, "warnings": []}
        price = prices.price_of(self.model)
        if price is not None:
            self.view["priced_as"] = self.model
        self.pending: list[dict] = []   # said after the last turn's reply: shown before the next call
        self.names: dict[str, str] = {}
        self.sent_before = None

    @property
    def turns(self) -> list:
        return self.view["turns"]

    def note(self, kind: str, text) -> None:
        """Something the harness did between two calls; shown before the next call (or after the last)."""
        self.pending.append({"kind": kind, "text": _shown(text, self.limit)})

    def after(self, kind: str, text) -> None:
        """Something the harness decided after the last turn's results (a transition, a gate's denial)."""
        event = {"kind": kind, "text": _shown(text, self.limit)}
        (self.turns[-1]["after"] if self.turns else self.pending).append(event)

    def turn(self, message, usages: list) -> None:
        """A reply of the model: its blocks, and the calls it cost (the reply's own last, any before it
        on the same turn: a summary, a cut reply asked again)."""
        blocks = []
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else [{"type": "text", "text": content}]:
            blocks.append(self.block(block))
        counts = [_usage(usage) for usage in usages] or [_usage({})]
        reply = counts[-1]
        sent = {"uncached": reply["input_tokens"], "cache_read": reply["cache_read_input_tokens"],
                "cache_write": reply["cache_creation_input_tokens"]}
        sent["total"] = sum(sent.values())
        sent["grew"] = None if self.sent_before is None else sent["total"] - self.sent_before
        self.sent_before = sent["total"]
        summed = {name: sum(count[name] for count in counts) for name in reply}
        cost = prices.cost(self.model, summed)
        self.turns.append({
            "number": len(self.turns) + 1, "before": self.pending, "sent": sent, "output": reply["output_tokens"],
            "calls": len(usages), "input_all": summed["input_tokens"] + summed["cache_read_input_tokens"]
            + summed["cache_creation_input_tokens"], "output_all": summed["output_tokens"],
            "cost": None if cost is None else round(cost, 8), "blocks": blocks, "results": [], "after": []})
        self.pending = []

    def block(self, block) -> dict:
        if not isinstance(block, dict):
            return {"type": "other", "text": _shown(block, self.limit)}
        kind = block.get("type")
        if kind == "text":
            return {"type": "text", "text": _shown(block.get("text", ""), self.limit)}
        if kind == "tool_use":
            name = _shown(block.get("name", ""), 200)
            self.names[str(block.get("id"))] = name
            arguments = json.dumps(block.get("input"), ensure_ascii=False, indent=1, default=str)
            return {"type": "tool_use", "name": name, "text": _shown(arguments, self.limit)}
        if kind == "thinking":
            return {"type": "thinking", "text": _shown(block.get("thinking", ""), self.limit)}
        if kind == "redacted_thinking":
            return {"type": "thinking", "text": "(redacted thinking: encrypted by the API, sent back as it is)"}
        return {"type": "other", "name": _shown(kind, 100), "text": _shown(block, self.limit)}

    def results(self, message) -> None:
        """The user message after a reply: its tool results, and any note written to the model."""
        content = message.get("content") if isinstance(message, dict) else message
        if not self.turns:  # the task, or what a resumption wrote before any turn was seen
            return
        shown = self.turns[-1]["results"]
        for block in content if isinstance(content, list) else [{"type": "text", "text": content}]:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                body = block.get("content", "")
                if isinstance(body, list):
                    body = " ".join(str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in body)
                body = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, default=str)
                name = self.names.get(str(block.get("tool_use_id")), "tool")
                shown.append({"name": name, "error": bool(block.get("is_error")), "text": _shown(readable(body), self.limit)})
                denial = denied(body)
                if denial:
                    self.after("gate", f"{name}: {denial}")
            elif block.get("type") == "text":
                shown.append({"name": "note to the model", "error": False, "text": _shown(block.get("text", ""), self.limit)})

    def transition(self, reason) -> None:
        checked = CHECKED if self.stage in CHECKING_STAGES else ""
        self.after("transition", f"{reason}" + (f" ({checked})" if checked else ""))

    def finish(self, state: str, reason, explanation, answer="") -> dict:
        """The view, ended: ``state`` is how the run ended (stopped, interrupted, runaway, crashed, error)."""
        for event in self.pending:
            (self.turns[-1]["after"] if self.turns else self.view["warnings"]).append(
                event if self.turns else event["text"])
        self.pending = []
        reason = None if reason is None else _shown(reason, 200)
        if reason and (not explanation or explanation == reason):  # a stage says nothing more of its own end
            explanation = STOP_GLOSSES.get(reason, "")
        self.view["end"] = {"state": state, "reason": reason, "explanation": _shown(explanation or "", self.limit),
                            "answer": _shown(answer or "", self.limit)}
        totals = {"input": sum(t["input_all"] for t in self.turns), "output": sum(t["output_all"] for t in self.turns)}
        costs = [t["cost"] for t in self.turns]
        totals["cost"] = None if self.view["priced_as"] is None else round(sum(c or 0 for c in costs), 8)
        self.view["totals"] = totals
        return self.view


def denied(body: str) -> str:
    """A gate's refusal (s06: ``{"ok": false, "error": "denied", ...}``), as its reason and what to do instead."""
    try:
        result = json.loads(body)
    except (ValueError, RecursionError):
        return ""
    if isinstance(result, dict) and result.get("error") == "denied":
        return f"denied: {result.get('message')}" + (f"; instead: {result.get('hint')}" if result.get("hint") else "")
    return ""


# ---------------------------------------------------------------- a recording of the trace (the site's runs)

def _plain(payload):
    """A copy of a trace payload that later changes to the history (a masked result) cannot reach."""
    try:
        return copy.deepcopy(payload)
    except Exception:  # noqa: BLE001 (an SDK object that cannot be copied is kept as its text)
        return str(payload)


class Recording:
    """A trace callback that keeps every event in order, and passes each on to ``trace`` (a printer)."""

    def __init__(self, trace=None):
        self.trace = trace
        self.events: list[tuple[str, object]] = []

    def __call__(self, kind: str, payload) -> None:
        if kind == "resumed":
            kept = {"turn_count": getattr(payload, "turn_count", 0)}
        elif kind == "usage":
            kept = payload  # the SDK's object itself: the capped client keeps the same one (see view)
        else:
            kept = _plain(payload)
        self.events.append((kind, kept))
        if self.trace is not None:
            self.trace(kind, payload)

    def view(self, stage: str, model: str, task, *, usages=(), result: dict | None = None,
             raised: BaseException | None = None, shown_chars: int = SITE_SHOWN_CHARS, source: str = "") -> dict:
        """The view of the recorded run. ``usages``: every reply's usage in order (``course.capped``),
        so that each turn is billed for every call it made, a summary or a cut reply asked again too."""
        builder = ViewBuilder(stage, model, task, shown_chars=shown_chars, source=source)
        usages, used = list(usages), 0
        retried = 0
        explanation = None
        for number, (kind, payload) in enumerate(self.events):
            if kind == "assistant":
                following = next((p for k, p in self.events[number + 1:number + 2] if k == "usage"), None)
                if following is not None:  # s05 on: the reply's own usage, found among the calls by identity
                    end = next((i for i in range(used, len(usages)) if usages[i] is following), None)
                    group = usages[used:end + 1] if end is not None else [following]
                    used = end + 1 if end is not None else used
                else:  # before s05, the only extra calls of a turn are cut replies asked again, each noted
                    group = usages[used:used + 1 + retried]
                    used += len(group)
                builder.turn(payload, group)
                retried = 0
            elif kind == "tool_results":
                builder.results(payload)
            elif kind == "transition":
                builder.transition(payload)
            elif kind == "stop":  # an attempt's end; a run resumed after it goes on below
                explanation = payload
                builder.after("stop", f"stopped: {payload}")
            elif kind == "resumed":
                builder.note("resumed", f"resumed from the transcript after turn {payload['turn_count']}")
            elif kind == "note":
                if isinstance(payload, str) and "asking again" in payload:
                    retried += 1
                builder.note("note", payload)
        if used < len(usages) and builder.turns:  # calls after the last reply (a summary before a stop)
            last = builder.turns[-1]
            extra = [_usage(u) for u in usages[used:]]
            last["calls"] += len(extra)
            last["input_all"] += sum(u["input_tokens"] + u["cache_read_input_tokens"]
                                     + u["cache_creation_input_tokens"] for u in extra)
            last["output_all"] += sum(u["output_tokens"] for u in extra)
            more = prices.cost(builder.model, {k: sum(u[k] for u in extra) for k in extra[0]})
            if last["cost"] is not None and more is not None:
                last["cost"] = round(last["cost"] + more, 8)
        last = next((turn["after"] for turn in reversed(builder.turns) if turn["after"]), [])
        if explanation is not None and last and last[-1]["kind"] == "stop":
            last.pop()  # the run's own end: the view's stop says it
        if raised is not None:
            import anthropic

            from course.runtime.api_errors import explain_api_error
            from course.runtime.guard import Runaway
            if isinstance(raised, Runaway):
                return builder.finish("runaway", None, f"stopped by the guard, not by the agent: {raised}")
            if isinstance(raised, anthropic.APIError):  # what the command line prints of it
                return builder.finish("error", None, f"the stage let the SDK's error escape: {explain_api_error(raised)}")
            return builder.finish("crashed", None, f"{type(raised).__name__}: {raised}")
        result = result or {}
        return builder.finish("stopped", result.get("stop_reason"), explanation or result.get("explanation"),
                              result.get("answer", ""))


class NoteKeeper:
    """The command line's trace: printed as ever, and what the transcript does not hold (the notes and
    the stop's explanation) saved on one more line of the transcript when the run ends, for the viewer."""

    def __init__(self, trace=None):
        self.trace = trace
        self.turn = 0
        self.notes: list[dict] = []

    def __call__(self, kind: str, payload) -> None:
        if kind == "assistant":
            self.turn += 1
        elif kind == "resumed":
            self.turn = getattr(payload, "turn_count", 0)
        elif kind in ("note", "stop"):
            self.notes.append({"after_turn": self.turn, "kind": kind, "text": str(payload)})
        if self.trace is not None:
            self.trace(kind, payload)

    def save(self, result: dict) -> None:
        path = result.get("transcript")
        if not self.notes or not path or not Path(path).is_file():
            return
        # A line like the run's last, with nothing new for a resumption to go on from (no message, no
        # transition, the same turn, usage and stop reason): only the notes, which the viewer reads.
        transcript.append(path, {"turn": result.get("turns", self.turn), "usage": result.get("usage") or {},
                                 "stop_reason": result.get("stop_reason"), "transitions": [], "messages": [],
                                 "notes": self.notes})
        self.notes = []


# ---------------------------------------------------------------- a transcript, read tolerantly

def read_transcript(path: str | Path, *, shown_chars: int = SHOWN_CHARS) -> dict:
    """The view of a run's transcript. Refuses (CourseError, one line) a file that is no run's
    transcript; a file damaged after its first line is shown up to the damage, with a warning."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > LARGEST_TRANSCRIPT:
            raise CourseError(f"{path} holds {size:,} bytes, more than any run of the course writes "
                              f"({LARGEST_TRANSCRIPT:,}): not shown")
        data = path.read_bytes()
    except OSError as error:
        raise CourseError(f"cannot read {path}: {error.strerror or error}") from None
    records, warnings, start = [], [], 0
    while start < len(data):
        end = data.find(b"\n", start)
        line = data[start:] if end == -1 else data[start:end]
        try:
            record = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):
            record = None
        problem = line_problem(record) if end != -1 else "its last line is torn (the run was killed while saving it)"
        if problem:
            if not records:
                raise CourseError(f"{path} is not a run's transcript: its first line {problem}")
            warnings.append(f"line {len(records) + 1}: {problem}; the run is shown up to the line before it")
            break
        records.append(record)
        start = end + 1
    if not records:
        raise CourseError(f"{path} is empty: the run was killed before its first step was saved")
    view = view_of_records(records, shown_chars=shown_chars, source=path.name)
    view["warnings"] = warnings + view["warnings"]
    return view


def line_problem(record) -> str:
    """Why a transcript's line cannot be shown, or "" if it can."""
    if not isinstance(record, dict):
        return "is not a JSON object"
    missing = [key for key in transcript.RECORD_KEYS if key not in record]
    if missing:
        return f"lacks {', '.join(missing)}"
    if not isinstance(record["messages"], list) or not isinstance(record["transitions"], list):
        return "holds messages or transitions that are not lists"
    if not isinstance(record["usage"], dict) or not isinstance(record["turn"], int):
        return "holds a usage that is not an object, or a turn that is not a number"
    return ""


def view_of_records(records: list[dict], *, shown_chars: int = SHOWN_CHARS, source: str = "") -> dict:
    first = records[0]
    messages = first["messages"]
    task = messages[0].get("content") if messages and isinstance(messages[0], dict) else ""
    if isinstance(task, list):
        task = " ".join(str(block.get("text", "")) for block in task if isinstance(block, dict))
    builder = ViewBuilder(first.get("stage", "?"), first.get("model", "?"), task, shown_chars=shown_chars, source=source)
    history: list = []
    before = {}
    notes = []
    resumed = False
    for number, record in enumerate(records):
        if number and "model" in record:
            resumed = True
            if records[number - 1]["stop_reason"]:
                builder.note("stop", f"stopped: {records[number - 1]['stop_reason']}")
            builder.note("resumed", f"resumed from the transcript after turn {record['turn']}"
                         + (f", on {record['model']}" if record.get("model") != builder.model else ""))
        new, at = record["messages"], record.get("from")
        if isinstance(at, int) and not isinstance(at, bool) and 0 <= at < len(history):
            new = rewritten(history, at, new, builder)
            history[at:] = record["messages"]
        else:
            history += new
        spent = {name: max(_count(record["usage"], name) - _count(before, name), 0)
                 for name in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")}
        billed = False
        for message in new:
            if not isinstance(message, dict):
                continue
            if message.get("role") == "assistant":
                builder.turn(message, [spent if not billed else {}])
                billed = True
            elif message is not history[0]:
                builder.results(message)
        for reason in record["transitions"]:
            builder.transition(reason)
        if isinstance(record.get("notes"), list):
            notes += [note for note in record["notes"] if isinstance(note, dict)]
        before = record["usage"]
    place_notes(builder, notes)
    last = records[-1]
    stops = [note for note in notes if note.get("kind") == "stop"]
    if last["stop_reason"]:
        state = "stopped"
    else:
        # The command line's word for a run stopped by Ctrl-C, the commonest way a run ends without a stop.
        state = "interrupted"
        builder.note("interrupted", "the transcript ends without a stop: the run was interrupted (Ctrl-C) or "
                                    "killed, or is still going (a stage of s02 on can go on with --resume)")
    answer = ""
    if last["stop_reason"] and history and isinstance(history[-1], dict) and history[-1].get("role") == "assistant":
        content = history[-1].get("content")
        answer = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text") \
            if isinstance(content, list) else str(content)
    view = builder.finish(state, last["stop_reason"], stops[-1]["text"] if stops else None, answer)
    view["resumed"] = resumed
    return view


def rewritten(history: list, at: int, messages: list, builder: ViewBuilder) -> list:
    """A line that rewrote the history (s05's summary): said as a note, and what in it is new."""
    seen = [json.dumps(message, sort_keys=True, default=str) for message in history]
    answered = {str(block.get("tool_use_id")) for message in history if isinstance(message, dict)
                and isinstance(message.get("content"), list) for block in message["content"]
                if isinstance(block, dict) and block.get("type") == "tool_result"}
    new = []
    for number, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if at + number == 0 and message.get("role") == "user":
            summary = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
            builder.note("summary", f"the history was rewritten: {len(history)} messages became "
                                    f"{at + len(messages)}, the first being:\n{summary}")
            continue
        ids = {str(block.get("tool_use_id")) for block in content if isinstance(block, dict)} \
            if isinstance(content, list) else set()
        if json.dumps(message, sort_keys=True, default=str) in seen or (ids and ids <= answered):
            continue
        new.append(message)
    return new


def place_notes(builder: ViewBuilder, notes: list) -> None:
    """The command line's notes (NoteKeeper), each before the turn after the one it followed."""
    for note in notes:
        if note.get("kind") != "note":
            continue
        after = note.get("after_turn")
        after = after if isinstance(after, int) and not isinstance(after, bool) else 0
        event = {"kind": "note", "text": _shown(note.get("text", ""), builder.limit)}
        if 0 <= after < len(builder.turns):
            builder.turns[after]["before"].append(event)
        elif builder.turns:
            builder.turns[-1]["after"].append(event)


# ---------------------------------------------------------------- the page

def embedded_json(view: dict) -> str:
    """The view as JSON that cannot end the script block it sits in, nor open a comment, nor break a line of JS."""
    text = json.dumps(view, ensure_ascii=False, separators=(",", ":"))
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def _script_hash(script: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


def title_of(view: dict) -> str:
    task = " ".join(str(view.get("task", "")).split())
    return f"{view['stage']} · {view['model']} · {task[:80]}"


NO_SCRIPT = {"en": "This page steps through a recorded run with JavaScript, which is off.",
             "ja": "このページは記録した実行を JavaScript でたどります。JavaScript がオフになっています。"}


def page(view: dict, *, linked: str | None = None, language: str = "en") -> str:
    """One run's page. ``linked``: the folder of viewer.js and viewer.css, relative to the page (the
    site shares them between its pages); None: both inside the page (a standalone file). ``language``:
    the page's ``lang``, which the script's own labels follow ("en" or "ja"); the run is shown as it is."""
    if language not in NO_SCRIPT:
        raise CourseError(f"the viewer has no labels in language {language!r}")
    script = asset("viewer.js")
    if linked is None:
        head = f"<style>{asset('viewer.css')}</style>"
        tail = f"<script>{script}</script>"
        sources = f"script-src '{_script_hash(script)}'; style-src 'unsafe-inline'"
    else:
        head = f'<link rel="stylesheet" href="{html.escape(linked)}viewer.css">'
        tail = f'<script src="{html.escape(linked)}viewer.js"></script>'
        sources = "script-src 'self'; style-src 'self'"
    # Nothing but the page's own script and style; no request leaves the page (no network, no form).
    policy = f"default-src 'none'; {sources}; img-src data:; base-uri 'none'; form-action 'none'"
    return (f'<!doctype html>\n<html lang="{language}">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(title_of(view))}</title>\n{head}\n</head>\n<body>\n"
            f'<noscript>{NO_SCRIPT[language]}</noscript>\n'
            f'<main id="viewer" aria-live="polite"></main>\n'
            f'<script type="application/json" id="run-data">{embedded_json(view)}</script>\n{tail}\n</body>\n</html>\n')


# ---------------------------------------------------------------- course view RUN

def find_run(which: str) -> Path:
    """The transcript ``which`` names: ``last`` (the newest run of any stage), a run id, or a path."""
    which = str(which)
    folder = transcript.folder()
    if which == "last":
        found = sorted((path for path in folder.glob(f"s[0-9][0-9]-*{transcript.SUFFIX}")
                        if transcript.TRANSCRIPT_NAME.fullmatch(path.name) and path.is_file()),
                       key=lambda path: (path.stat().st_mtime_ns, path.name))
        if not found:
            raise CourseError(f"no run to view: {folder} holds no transcript; run a stage of s02 on first")
        return found[-1]
    for candidate in (Path(which).expanduser(), folder / which, folder / f"{which}{transcript.SUFFIX}"):
        if candidate.is_file():
            return candidate
    raise CourseError(f"no run {which!r} to view: give a run id from {folder}, a transcript's path, or 'last'")


def write_standalone(which: str, out: str | Path | None = None) -> Path:
    """``course view RUN``: one HTML file of the run, needing nothing else; returns its path."""
    path = find_run(which)
    view = read_transcript(path)
    target = Path(out) if out else runlog.runs_folder() / VIEWS_FOLDER / f"{path.stem}.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page(view), encoding="utf-8")
    return target


def view_command(which: str, out: str | None = None, open_it: bool = False) -> int:
    target = write_standalone(which, out)
    print(target)
    if open_it:
        webbrowser.open(target.resolve().as_uri())
    return 0


# ---------------------------------------------------------------- the site's views

_site_views: dict[str, dict] = {}  # this build's views, by run id (course/site/pages.py registers them)
SITE_FOLDER = "viewer"  # in the built site: viewer/RUN.html, viewer/viewer.js, viewer/viewer.css
# The page of a run for the Japanese pages, beside the English one: viewer/RUN.ja.html (the same run, the viewer's
# labels in Japanese).
PAGE_SUFFIX = {"en": ".html", "ja": ".ja.html"}


def site_run_id(readable: str, key) -> str:
    """A run's name in the site, stable from build to build: a few words of ``readable``, and a short
    hash of ``key`` (what the run ran), which tells apart two runs with the same words."""
    words = re.sub(r"[^a-z0-9]+", "-", readable.lower()).strip("-")[:48].strip("-") or "run"
    digest = hashlib.sha256(repr(key).encode("utf-8")).hexdigest()[:8]
    return f"{words}-{digest}"


def without(view: dict, text: str, instead: str) -> dict:
    """The view with every ``text`` in it (a scratch workspace's path) written as ``instead``."""
    if not text:
        return view
    encoded = json.dumps(view, ensure_ascii=False)
    return json.loads(encoded.replace(json.dumps(text)[1:-1], json.dumps(instead)[1:-1]))


def register(run_id: str, view: dict) -> str:
    _site_views[run_id] = view
    return run_id


def forget_site_views() -> None:
    _site_views.clear()


def site_views() -> dict[str, dict]:
    return dict(_site_views)


def write_site(site_dir: str | Path) -> list[Path]:
    """Every view of this build as a page of the built site, and the script and style they share."""
    folder = Path(site_dir) / SITE_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "viewer.js").write_text(asset("viewer.js"), encoding="utf-8")
    (folder / "viewer.css").write_text(asset("viewer.css"), encoding="utf-8")
    written = []
    for run_id, view in _site_views.items():
        for language, suffix in PAGE_SUFFIX.items():
            target = folder / f"{run_id}{suffix}"
            target.write_text(page(view, linked="", language=language), encoding="utf-8")
            written.append(target)
    return written


LINK_SCHEME = "course-run:"  # a page's link to a run, made relative to the page by the docs hook


def link(run_id: str, text: str | None = None) -> str:
    """A Markdown link to the run's page in the site's viewer (the hook turns the scheme into a path),
    its words in the language of the page being rendered (course/viewer/markdown.py)."""
    from course.viewer.markdown import say
    if text is None:
        text = say("▶ Step through this run in the viewer", "▶ この実行をビューアーでたどる")
    title = say("step through this run, turn by turn", "この実行をターンごとにたどる")
    return f'[{text}]({LINK_SCHEME}{run_id} "{title}")'


def resolve_links(page_html: str, page_url: str, language: str = "en") -> str:
    """The site's ``course-run:ID`` links as paths from the page at ``page_url`` to ``viewer/ID.html``
    (``viewer/ID.ja.html`` from a Japanese page)."""
    up = "../" * page_url.count("/")
    suffix = PAGE_SUFFIX[language]
    return SITE_LINK.sub(lambda found: f'href="{up}{SITE_FOLDER}/{found[1]}{suffix}"', page_html)


SITE_LINK = re.compile(r'href="' + LINK_SCHEME + r'([a-z0-9-]+)"')
