"""The runs log: one JSON line per run of a stage that records metrics (s03 onwards).

"Building an agent loop yourself" names the three numbers a team needs to improve an agent: how many turns a task took,
which tool failed how often, and how often runs were cut off. Every run appends them here.

Where: ``$AGENT_COURSE_RUNS_LOG`` if set, else ``runs/runs.jsonl`` under the current folder.
One line holds: stage, model, task, stop_reason, turns, tool_calls ({tool: count}),
tool_errors ({tool: count}), usage ({input_tokens, output_tokens}, and from s05 on the cache's
cache_creation_input_tokens and cache_read_input_tokens), cost_usd (the usage priced with
``course/runtime/prices.py``; null for a model the price list does not know), duration_s, time (UTC, ISO 8601).
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from datetime import datetime, timezone
from pathlib import Path

from course.runtime import prices

ENVIRONMENT_VARIABLE = "AGENT_COURSE_RUNS_LOG"
AUDIT_VARIABLE = "AGENT_COURSE_AUDIT_LOG"  # s06's gate decisions: runs/audit.jsonl unless set


# What JSON leaves raw but a terminal, or `cat` of a log, obeys or draws as nothing: JSON escapes U+0000-U+001F
# only (https://www.rfc-editor.org/rfc/rfc8259#section-7), so a model's U+009B (a one-character CSI) or U+202E
# would reach the screen as it is. Escaped here: DEL, C1 (Cc), format characters such as the bidirectional
# controls and the tag characters (Cf), the line and paragraph separators (Zl, Zp), private-use and unassigned
# code points (Co, Cn), as ``course.escape_terminal_controls`` escapes them, and lone surrogates (Cs), which
# UTF-8 cannot write at all.
UNSEEN_CATEGORIES = ("Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp")


def json_line(value) -> str:
    """``value`` as one line of JSON that a terminal shows inert: each character it would obey or hide written as
    a \\uXXXX escape, so json.loads gives back the same value. Any other character, Japanese included, stays
    as it is, readable."""
    text = json.dumps(value, ensure_ascii=False)
    if text.isascii() and "\x7f" not in text:
        return text
    # Outside its strings JSON text is ASCII, and in them a raw character is never part of an escape: writing
    # one as \uXXXX (a surrogate pair past U+FFFF) leaves the same value.
    return "".join(json.dumps(character)[1:-1] if _unseen(character) else character for character in text)


def _unseen(character: str) -> bool:
    if character.isascii():
        return character == "\x7f"
    return unicodedata.category(character) in UNSEEN_CATEGORIES


ROOT = Path(__file__).resolve().parents[2]  # the repository that holds the course package


def runs_folder() -> Path:
    """Where runs are kept: ``runs/`` of the working directory, except in a stage's own folder.

    A notebook's kernel starts in the notebook's folder (``s03/``): its runs went to ``s03/runs/``,
    where ``--resume last`` and ``course view last``, run from the repository's root, never look.
    From a stage folder of this repository they go to the root's ``runs/``, the one folder of them all.
    """
    here = Path.cwd()
    if re.fullmatch(r"s\d\d", here.name) and here.resolve().parent == ROOT and (here / "agent.py").is_file():
        return ROOT / "runs"
    return Path("runs")


def log_path() -> Path:
    return Path(os.environ.get(ENVIRONMENT_VARIABLE) or runs_folder() / "runs.jsonl")


def audit_path() -> Path:
    return Path(os.environ.get(AUDIT_VARIABLE) or runs_folder() / "audit.jsonl")


# A logged text longer than this is cut, with its length said: a refused write_file of 60 MB was written to
# the audit log whole.
MOST_LOGGED_CHARS = 20_000


def bounded(value):
    """``value`` with every text in it (in dicts and lists too) cut to MOST_LOGGED_CHARS, its length said."""
    if isinstance(value, str) and len(value) > MOST_LOGGED_CHARS:
        return f"{value[:MOST_LOGGED_CHARS]}[... cut: {len(value):,} characters in all]"
    if isinstance(value, dict):
        return {key: bounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [bounded(item) for item in value]
    return value


def append(record: dict, path: str | Path | None = None) -> Path:
    path = Path(path) if path else log_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    line = dict(bounded(record), time=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    if "usage" in record and "model" in record and "cost_usd" not in record:
        line["cost_usd"] = prices.cost(record["model"], record["usage"])
    with path.open("a", encoding="utf-8") as log:
        log.write(json_line(line) + "\n")
    return path


def read(path: Path | None = None) -> list[dict]:
    path = path or log_path()
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
