"""Transcripts: a run's state, saved as it goes, so that a stopped or killed run can be resumed.

A stage (s02 on) saves its state after every step that changes it; this module is the file format
and the finding of files, which the learner does not build.

The format is JSON Lines, one object a line, appended; each line holds what changed since the
line before it:

* ``stage``, ``model``, ``workspace``: on the first line, and on the first line of each resumption;
* ``turn``: the turn count; ``stop_reason``: why the run ended (null while it goes on);
  ``usage``: the tokens used so far, in total;
* ``transitions``: why the loop went on, for the turns this line ends;
* ``messages``: the messages added to the history since the line before (the first line holds
  the task), and ``from``: where they go in the history, which is the end unless the stage
  rewrote the history (s05's summary), in which case the line holds the whole new history.

Written so that a process killed at any instant leaves a file that loads: each line is written
whole with one ``write`` to a file opened for appending, then flushed and ``fsync``-ed before the
run goes on (a line the disk has not got is a step the run has not taken). A kill can still tear
the last line; it is then detected (no newline at its end, or not JSON) and ignored, never trusted,
and cut off before the next line is appended. A bad line anywhere else is corruption: loading
refuses it, saying where.

Where: ``$AGENT_COURSE_TRANSCRIPTS`` if set, else ``runs/transcripts/`` under the current folder;
one file per run, named after the run: ``s02-20261130-101500-1a2b3c.jsonl``.

Signed (s06, the stage whose gate keeps the model away from the harness's files): each line of a
stage of SIGNED carries ``mac``, an HMAC-SHA256 of the run's id, the line before's mac and the line
itself, with a key kept outside every workspace (``$AGENT_COURSE_KEY`` if set, else
``~/.local/state/agent-course/transcript.key``, made on first use, mode 0600). A transcript the
model wrote, edited or put together from other runs' lines (its workspace, say, changed to a folder
outside) does not verify, and resuming it is refused in one line. Every stage signs its lines, and
every transcript of a stage must verify, wherever it lies: a model confined to a workspace can write
a file anywhere in it, and a folder that was one run's workspace may be where a later run keeps its
transcripts, or where a learner finds one to resume (s06's model, under s05/runs/transcripts/, which
`python agent.py --resume last` run from s05/ reads; under notes/ of a workspace of the week before),
and it would resume in any folder it names. Where it lies is no evidence of who wrote it; the mac is.
A transcript the learner changed by hand, or kept from before transcripts were signed, resumes once a
person signs it again (``sign_again()``, which the refusal names): that is the person's word for it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from course.runtime.commands import python_command
from course.runtime.models import CourseError
from course.runtime.runlog import runs_folder as course_runs_folder
from course.runtime.wire import sendable

ENVIRONMENT_VARIABLE = "AGENT_COURSE_TRANSCRIPTS"
KEY_VARIABLE = "AGENT_COURSE_KEY"
SIGNED = tuple(f"s{number:02d}" for number in range(7))  # the stages whose transcripts' lines carry a mac
ALWAYS_VERIFIED = SIGNED  # the stages whose transcripts are refused unless they verify, wherever they lie
SUFFIX = ".jsonl"
# fsync makes a line survive a power cut or a crash of the system; a killed process loses nothing
# the kernel already holds. It costs a few milliseconds a line, so a test that kills no machine
# (hundreds of runs against API faults) may turn it off; nothing else should.
DURABLE = True
_sizes: dict[Path, int] = {}  # the size each transcript had after this process's last line


def folder() -> Path:
    return Path(os.environ.get(ENVIRONMENT_VARIABLE) or course_runs_folder() / "transcripts")


def key_path() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or Path("~/.local/state").expanduser()
    return Path(os.environ.get(KEY_VARIABLE) or Path(state) / "agent-course" / "transcript.key")


def key() -> bytes:
    """The signing key, made on first use (32 random bytes, readable by its owner only)."""
    path = key_path()
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        made = secrets.token_hex(32)
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another run made it first
            return key()
        with os.fdopen(descriptor, "w", encoding="ascii") as file:
            file.write(made + "\n")
        return bytes.fromhex(made)
    except (OSError, ValueError) as error:
        raise CourseError(f"the transcripts' key {path} cannot be read ({error}); remove it to make a new one "
                          "(earlier s06 transcripts will then not resume)") from None


def signature(run: str, previous: str, record: dict) -> str:
    """The mac of one line: its run, the line before's mac, and its content without its own mac."""
    content = json.dumps({name: value for name, value in record.items() if name != "mac"}, sort_keys=True,
                         ensure_ascii=True, separators=(",", ":"))
    return hmac.new(key(), f"{run}\n{previous}\n{content}".encode("ascii"), hashlib.sha256).hexdigest()


_last_mac: dict[Path, str] = {}  # the mac of the last line this process wrote, per transcript


def _signed_record(path: Path, record: dict, created: bool, fresh: bool) -> dict:
    """``record`` with its mac, if its run's stage signs. ``fresh``: this process wrote the file's last line."""
    stage = record.get("stage") if created else first_line(path).get("stage") or record.get("stage")
    if stage not in SIGNED:
        return record
    previous = "" if created else (_last_mac.get(path) if fresh else None) or _mac_of_last_line(path)
    mac = signature(run_id(path), previous, record)
    _last_mac[path] = mac
    return dict(record, mac=mac)


def _mac_of_last_line(path: Path) -> str:
    records = _scan(path).records
    mac = records[-1].get("mac") if records else ""
    return mac if isinstance(mac, str) else ""


TRANSCRIPT_NAME = re.compile(r"s\d\d-\d{8}-\d{6}-[0-9a-f]+\.jsonl")
RECORD_KEYS = ("turn", "usage", "stop_reason", "transitions", "messages")  # what every saved line holds


def new_path(stage: str) -> Path:
    """A fresh transcript for a new run of ``stage``; the run's id is the file's stem."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return folder() / f"{stage}-{stamp}-{secrets.token_hex(3)}{SUFFIX}"


def run_id(path: Path) -> str:
    return Path(path).stem


def append(path: str | Path, record: dict) -> None:
    """Append one line and make it durable before returning."""
    path = Path(path)
    created = not path.exists()
    fresh = not created and _sizes.get(path) == path.stat().st_size
    if created:
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not fresh:  # written by another process since: check its end
        cut_torn_end(path)
    record = _signed_record(path, record, created, fresh)
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    with path.open("ab") as file:
        file.write(line)
        file.flush()
        _sizes[path] = file.tell()
        if DURABLE:
            os.fsync(file.fileno())
    if created and DURABLE:  # the new file's name is durable too, not only its bytes
        _fsync_folder(path.parent)


def _fsync_folder(path: Path) -> None:
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:  # some systems cannot open a folder; the file's own fsync still holds
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


@dataclass
class Loaded:
    """A transcript as read back: its good lines, and how many bytes of a torn last line were ignored."""

    path: Path
    records: list[dict]
    torn_bytes: int = 0
    good_bytes: int = 0

    @property
    def last(self) -> dict:
        return self.records[-1]

    @property
    def named(self) -> dict:
        """The last line that names the run (stage, model, workspace): its start, or its latest resumption."""
        return next((record for record in reversed(self.records) if "model" in record), {})

    def history(self) -> list:
        """The messages, line by line: each line's go at its ``from`` (the end, unless the history was rewritten)."""
        messages: list = []
        for record in self.records:
            messages[record.get("from", len(messages)):] = record.get("messages", [])
        return sendable(messages)  # a lone surrogate written as \ud800 could not be saved again


@dataclass
class _Scan:
    records: list = field(default_factory=list)
    good_bytes: int = 0
    torn_bytes: int = 0


def _scan(path: Path) -> _Scan:
    data = path.read_bytes()
    scan, start = _Scan(), 0
    while start < len(data):
        end = data.find(b"\n", start)
        line = data[start:] if end == -1 else data[start:end]
        try:
            record = json.loads(line.decode("utf-8")) if end != -1 else None
        except (ValueError, RecursionError):
            record = None
        if not isinstance(record, dict):
            if end == -1 or end + 1 == len(data):  # the last line: torn by a kill, ignored
                scan.torn_bytes = len(data) - start
                return scan
            raise CourseError(f"transcript {path} is damaged at line {len(scan.records) + 1} (byte {start}): "
                              "not a JSON object; it was changed by something other than a run")
        scan.records.append(record)
        start = scan.good_bytes = end + 1
    return scan


# What each saved line must hold for a stage to go on from it. A line of JSON in another shape (the
# file edited by hand, or by something else) is refused here in one line; unchecked, it would crash
# the stage's resume somewhere in its loop.
BLOCK = {"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}}, "allOf": [
    {"if": {"required": ["type"], "properties": {"type": {"const": "tool_use"}}},
     "then": {"required": ["id", "name", "input"], "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}},
    {"if": {"required": ["type"], "properties": {"type": {"const": "tool_result"}}},
     "then": {"required": ["tool_use_id"], "properties": {"tool_use_id": {"type": "string"}}}},
    {"if": {"required": ["type"], "properties": {"type": {"const": "text"}}},
     "then": {"required": ["text"], "properties": {"text": {"type": "string"}}}}]}
MESSAGE = {"type": "object", "required": ["role", "content"],
           "properties": {"role": {"enum": ["user", "assistant"]},
                          "content": {"anyOf": [{"type": "string"}, {"type": "array", "items": BLOCK}]}},
           "if": {"properties": {"role": {"const": "assistant"}}}, "then": {"properties": {"content": {"type": "array"}}}}
COUNT = {"type": "integer", "minimum": 0, "maximum": 10**9}  # a 4,300-digit count could not be saved again
LINE_SHAPE = {
    "type": "object", "required": list(RECORD_KEYS),
    "properties": {
        "turn": COUNT,
        # The cache counts come in pairs (the command line prints both when either is there).
        "usage": {"type": "object", "required": ["input_tokens", "output_tokens"], "additionalProperties": COUNT,
                  "dependentRequired": {"cache_read_input_tokens": ["cache_creation_input_tokens"],
                                        "cache_creation_input_tokens": ["cache_read_input_tokens"]}},
        "stop_reason": {"type": ["string", "null"]},
        "transitions": {"type": "array", "items": {"type": "string"}},
        "messages": {"type": "array", "items": MESSAGE},
        "from": {"type": "integer", "minimum": 0},
        "stage": {"type": "string"}, "model": {"type": "string"}, "workspace": {"type": "string"},
    },
}


LINE_SHAPE_WITH_CACHE = {**LINE_SHAPE, "properties": {**LINE_SHAPE["properties"], "usage": {
    **LINE_SHAPE["properties"]["usage"], "required": ["input_tokens", "output_tokens", "cache_creation_input_tokens",
                                                      "cache_read_input_tokens"]}}}


def load(path: str | Path) -> Loaded:
    path = Path(path)
    scan = _scan(path)
    _check_shape(path, scan.records)
    unsigned = unsigned_line(path, scan.records)
    if unsigned:
        raise CourseError(f"transcript {path} is damaged at line {unsigned} (its mac is not the one the harness "
                          "wrote): it was changed by something other than a run; start a new run, or, if you "
                          f"changed it yourself and mean it, sign it again: {sign_again_command(path)}")
    records = [{name: value for name, value in record.items() if name != "mac"} for record in scan.records]
    loaded = Loaded(path=path, records=records, torn_bytes=scan.torn_bytes, good_bytes=scan.good_bytes)
    history = loaded.history()
    calls = {block["id"] for message in history if isinstance(message["content"], list)
             for block in message["content"] if block["type"] == "tool_use"}
    answers = {block["tool_use_id"] for message in history if isinstance(message["content"], list)
               for block in message["content"] if block["type"] == "tool_result"}
    if not history or history[0]["role"] != "user" or not answers <= calls:
        raise CourseError(f"transcript {path} holds no history a run can go on from (no task first, or an answer "
                          "to no call): it was changed by something other than a run; start a new run")
    return loaded


def _check_shape(path: Path, records: list[dict]) -> None:
    """Refuse, in one line, a transcript with no line, or with a line of another shape than LINE_SHAPE's."""
    from course.runtime.schema import first_problem  # jsonschema: imported when a run is resumed, not with the course

    if not records:
        raise CourseError(f"transcript {path} holds no complete line: the run was killed before its first step "
                          "was saved; start it again")
    # A stage that keeps the cache counts (s05 on) reads them on resuming: every line of its runs holds them.
    stage = records[0].get("stage")
    shape = LINE_SHAPE_WITH_CACHE if isinstance(stage, str) and stage >= "s05" else LINE_SHAPE
    for number, record in enumerate(records, 1):
        problem = first_problem(shape, record)
        if problem:
            raise CourseError(f"transcript {path} is damaged at line {number} ({problem}): it was changed by "
                              "something other than a run; start a new run")


def sign_again(path: str | Path) -> Loaded:
    """Sign every line of a transcript again with the harness's key, as the lines now are, and load it:
    for one a person changed by hand, or kept from before transcripts were signed, and means to resume.
    Its shape is checked first (a line no run could write is not signed); what it says is the person's word.
    Written whole to a file beside it, then renamed over it: a kill leaves the old or the new, never half."""
    path = Path(path)
    records = [{name: value for name, value in record.items() if name != "mac"} for record in _scan(path).records]
    _check_shape(path, records)
    previous, lines = "", []
    for record in records:
        previous = signature(run_id(path), previous, record)
        line = json.dumps(dict(record, mac=previous), ensure_ascii=False) + "\n"
        try:
            lines.append(line.encode("utf-8"))
        except UnicodeEncodeError:  # a lone surrogate read from an escape is written as one again
            lines.append((json.dumps(dict(record, mac=previous)) + "\n").encode("ascii"))
    signing = path.with_name(f".{path.name}.signing")
    with signing.open("wb") as file:
        file.write(b"".join(lines))
        file.flush()
        if DURABLE:
            os.fsync(file.fileno())
    os.replace(signing, path)
    _sizes.pop(path, None)
    _last_mac.pop(path, None)
    return load(path)


def sign_again_command(path: Path) -> str:
    """The command a person types to sign ``path`` again (sign_again()), quoted for a POSIX shell."""
    import shlex

    code = f"import course.runtime.transcript as t; t.sign_again({json.dumps(str(path))})"  # a JSON string is a Python one
    return f"{python_command()} -c {shlex.quote(code)}"


def signs(path: Path, records: list[dict]) -> bool:
    """Whether a transcript must verify: its first line names a stage of ALWAYS_VERIFIED, or its name does;
    or it lies where a model may have written it (where_a_model_may_write)."""
    stage = records[0].get("stage") if records else None
    return (stage in ALWAYS_VERIFIED or any(run_id(path).startswith(f"{signed}-") for signed in ALWAYS_VERIFIED)
            or where_a_model_may_write(path, records))


def where_a_model_may_write(path: Path, records: list[dict]) -> bool:
    """Whether a transcript lies inside the folder the harness runs from (``--workspace .``, or a folder
    above it, puts it in a model's reach) or inside a workspace one of its lines names, links resolved."""
    where = Path(os.path.realpath(path))
    named = [folder for record in records if isinstance(folder := record.get("workspace"), str) and folder]
    try:
        here = os.getcwd()
    except OSError:  # the folder it ran from was removed: nothing lies inside it
        here = None
    return any(where.is_relative_to(os.path.realpath(folder)) for folder in [*([here] if here else []), *named])


def unsigned_line(path: Path, records: list[dict]) -> int:
    """The number of the first line whose mac is not the harness's, or 0 when every line verifies (or
    the transcript is of a stage that does not sign). Compared in constant time."""
    if not signs(path, records):
        return 0
    previous = ""
    for number, record in enumerate(records, 1):
        mac = record.get("mac")
        if not isinstance(mac, str) or not hmac.compare_digest(mac, signature(run_id(path), previous, record)):
            return number
        previous = mac
    return 0


def cut_torn_end(path: Path) -> int:
    """Cut a torn last line off before appending, so that it never sits in the middle. Returns its size."""
    if not path.exists():
        return 0
    scan = _scan(path)
    if scan.torn_bytes:
        with path.open("r+b") as file:
            file.truncate(scan.good_bytes)
            file.flush()
            if DURABLE:
                os.fsync(file.fileno())
    return scan.torn_bytes


def starts_a_run(path: Path) -> bool:
    """Whether the file's first line is a run's first step (a runs log or an audit log is JSON Lines too)."""
    record = first_line(path)
    return all(key in record for key in RECORD_KEYS)


def _first_line_verifies(path: Path) -> bool:
    record = first_line(path)
    return not signs(path, [record]) or unsigned_line(path, [record]) == 0


def first_line(path: Path) -> dict:
    """The file's first line as a JSON object, or {} if it is not one."""
    with path.open("rb") as file:
        first = file.readline()
    try:
        record = json.loads(first)
    except (ValueError, RecursionError):
        return {}
    return record if isinstance(record, dict) else {}


def find(which: str | Path, stage: str | None = None) -> Path:
    """The transcript named by ``which``: ``last`` (the newest), a run id, or a path; with ``stage``,
    only that stage's runs: another stage's saved state lacks what this one keeps (s05's cache
    counts, say), and resuming it would crash the stage."""
    which = str(which)
    if which == "last":
        # Transcripts only (sNN-DATE-TIME-ID.jsonl): a runs log or an audit log may share the folder.
        # Of ``stage``, as its first line says (the name alone could be anyone's), and signed if the stage signs:
        # a transcript the model planted, newer than every real one, is passed over.
        candidates = [path for path in folder().glob(f"{stage or 's[0-9][0-9]'}-*{SUFFIX}")
                      if TRANSCRIPT_NAME.fullmatch(path.name) and path.is_file()  # not a pipe, folder, broken link
                      and (not stage or first_line(path).get("stage") == stage)]
        found = sorted((path for path in candidates if _first_line_verifies(path)),
                       key=lambda path: (path.stat().st_mtime_ns, path.name))
        of = f" of {stage}" if stage else ""
        if not found and candidates:
            raise CourseError(f"no run to resume: none of the {len(candidates)} transcript(s){of} in {folder()} verifies "
                              "(changed by something other than a run, or made before transcripts were signed); run a "
                              "task, or give one's path to --resume to see how to sign it again, if you trust it")
        if not found:
            raise CourseError(f"no run to resume: {folder()} holds no transcript{of}; run a task first")
        return found[-1]
    for candidate in (Path(which).expanduser(), folder() / which, folder() / f"{which}{SUFFIX}"):
        if candidate.is_file():
            if not starts_a_run(candidate):
                raise CourseError(f"{candidate} is not a run's transcript (its first line lacks "
                                  f"{', '.join(RECORD_KEYS)}); give a run id, a transcript's path, or 'last'")
            made_by = first_line(candidate).get("stage")
            if stage and made_by != stage:
                raise CourseError(f"run {candidate.stem} was made by {made_by}, not {stage}: resume it with "
                                  f"{python_command()} {made_by}/agent.py --resume {candidate.stem}")
            return candidate
    raise CourseError(f"no run {which!r} to resume: give a run id from {folder()}, a transcript's path, or 'last'")