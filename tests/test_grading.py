"""The grader against a class of copies: cheats score 0 and change no one else's grade, wrong code is
caught, right code in a student's own wording passes, and every stage has an extension exercise.

Two gradings are shared by most tests (each copy graded once, side by side, in one call): the cheats,
graded with the region check turned off so that the confinement and the judging alone are what hold;
and the honest and wrong copies, graded as an instructor grades them.
"""

from __future__ import annotations

import csv
import json
import os
import re
import socket
import textwrap
from pathlib import Path

import pytest
import yaml

from course.grading import exercise_text, exercises, grade as grading, jail as grading_jail
from course.__main__ import main

pytestmark = pytest.mark.stage()  # these tests grade copies: they pin the grader, no stage

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = Path(__file__).resolve().parent / "grading_solutions"
STAGES = sorted(path.parent.name for path in ROOT.glob("s0*/agent.py"))
SEED = 424242
needs_confinement = pytest.mark.skipif(bool(grading_jail.available()), reason=f"no confinement: {grading_jail.available()}")


def region(stage: str, number: int) -> exercises.Region:
    return next(r for r in exercises.stage_regions(stage) if r.number == number)


def reference_body(stage: str, number: int) -> str:
    found = region(stage, number)
    lines = (ROOT / stage / found.file).read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(lines[found.start:found.end - 1])


def make_copy(dest: Path, stage: str, bodies: dict | None = None, solved=(), latin1: str = "") -> Path:
    """A student copy with the given region bodies (dedented code, indented here) and the reference's for ``solved``."""
    files = grading.stub_files(stage)
    extension = exercise_text.extension(stage)
    for number in solved:
        bodies = {**(bodies or {}), number: None}
    for number, body in (bodies or {}).items():
        if extension and number == extension.number:
            name, indent = grading.EXTENSION_FILE, "    "
            stub = f"    raise NotImplementedError('exercise {number}: {extension.title} — see the {stage} chapter')\n"
        else:
            found = region(stage, number)
            name, indent, stub = found.file, found.indent, found.stub(stage)
        text = reference_body(stage, number) if body is None else textwrap.indent(textwrap.dedent(body).strip("\n") + "\n", indent)
        assert files[name].count(stub) == 1, (name, stub)
        files[name] = files[name].replace(stub, text)
    dest.mkdir(parents=True, exist_ok=True)
    for name, source in files.items():
        if name == latin1:  # this file in latin-1, saying so as PEP 263 asks
            (dest / name).write_bytes(("# -*- coding: latin-1 -*-\n" + source).encode("latin-1"))
        else:
            (dest / name).write_text(source, encoding="utf-8")
    return dest


def solution(stage: str) -> str:
    return (SOLUTIONS / f"{stage}.py").read_text(encoding="utf-8")


def verdicts(grade: grading.CopyGrade) -> dict[int, float]:
    return {result.exercise.number: result.points for result in grade.results}


# ---------------------------------------------------------------- the cheats

TRAP_MARK = "course-grading-trap-7f3a"


def cheat_bodies(root: Path, honest: Path, port: int) -> dict[str, str]:
    """Region bodies of s03 exercise 1 (``limit_reached(state, limits)``) that try to change an outcome."""
    checkout = str(ROOT)
    return {
        "ends the process": "import os\nos._exit(0)",
        "ends it with sys.exit": "import sys\nsys.exit(0)",
        "raises SkipTest": "import unittest\nraise unittest.SkipTest('not today')",
        "raises KeyboardInterrupt": "raise KeyboardInterrupt",
        "forges the observations": """
            import json, os
            with open('observations.jsonl', 'a') as forged:
                for index in range(200):
                    forged.write(json.dumps({'case': index, 'observed': ['max_turns', 'turn limit 1 of 1']}) + '\\n')
            os._exit(0)""",
        "forges them on stdout": """
            import json
            for index in range(200):
                print(json.dumps({'case': index, 'observed': None}))
            return None""",
        "imports the reference stage": "import s03.agent as reference\nreturn reference.limit_reached(state, limits)",
        "executes the reference file": f"""
            import pathlib
            namespace = {{}}
            exec(pathlib.Path({checkout!r}, 's03', 'agent.py').read_text(), namespace)
            return namespace['limit_reached'](state, limits)""",
        "reads the tests": f"""
            import pathlib
            tests = pathlib.Path({checkout!r}, 'tests', 'test_s03.py').read_text()
            return ('max_turns', tests[:10])""",
        "writes into the grading checkout": f"""
            import pathlib
            for path in ('tests/conftest.py', 'course/grading/probes.py', 'course/__init__.py'):
                with open(pathlib.Path({checkout!r}, path), 'a') as file:
                    file.write('\\n# {TRAP_MARK}\\n')
            return None""",
        "writes to the grader's terminal": f"""
            import os
            for target in (f'/proc/{{os.getppid()}}/fd/1', '/proc/1/fd/1', '/dev/tty', '/proc/self/../1/fd/2'):
                try:
                    fd = os.open(target, os.O_WRONLY)
                    os.write(fd, b'total: 3 of 3 exercises passed {TRAP_MARK}\\n')
                except OSError:
                    pass
            return None""",
        "patches the judges in its own process": """
            import course.grading.probes as probes
            for found in probes.PROBES.values():
                for probe in found:
                    object.__setattr__(probe, 'judge', lambda case, got, want: None)
            probes.same = lambda got, want: None
            return None""",
        "signals the grader": """
            import os, signal
            for pid in (os.getppid(), 1):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            return None""",
        "leaves a process behind": f"""
            import subprocess
            subprocess.Popen(['/bin/sh', '-c', 'sleep 30; echo {TRAP_MARK}'], start_new_session=True)
            subprocess.Popen(['/bin/sh', '-c', '(sleep 30 &) ; echo {TRAP_MARK}'])
            raise RuntimeError('gave up')""",
        "calls out on the network": f"""
            import socket
            try:
                socket.create_connection(('127.0.0.1', {port}), timeout=1).sendall(b'{TRAP_MARK}')
            except OSError:
                pass
            return None""",
        "overwrites another copy": f"""
            import pathlib
            for name in ('agent.py', 'extension.py'):
                try:
                    pathlib.Path({str(honest)!r}, name).write_text('raise SystemExit(0)\\n')
                except OSError:
                    pass
            return None""",
        "loops forever": "import time\nwhile True:\n    time.sleep(0.5)",  # asleep: the time limit is wall time
        "eats the memory": "hoard = bytearray(8 << 30)\nreturn None",
        "floods its output": "print('x' * 10_000_000)\nreturn None",
        "fills the disk": """
            import pathlib
            for index in range(20):  # each file under RLIMIT_FSIZE; past the folder's bound together
                pathlib.Path(f'fill-{index}.bin').write_bytes(bytes(1 << 20))
            return None""",
        "makes a file a thousand times over": """
            import pathlib
            for index in range(2_000):
                pathlib.Path(f'empty-{index}').touch()
            return None""",
    }


# Small bounds on the scratch folder, so that the copies that pass them do so in a few milliseconds.
CHEATS_LIMITS = grading_jail.Limits(seconds=6, memory_mb=1024, disk_mb=8, files=500)


@pytest.fixture(scope="module")
def trap_listener():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.settimeout(0.01)
    yield listener
    listener.close()


@pytest.fixture(scope="module")
def cheats(tmp_path_factory, trap_listener):
    """{name: grade} for every cheat, and the honest copies graded beside them."""
    if grading_jail.available():
        pytest.skip(f"no confinement here: {grading_jail.available()}")
    root = tmp_path_factory.mktemp("class")
    honest = make_copy(root / "honest" / "s03", "s03", solved=(1, 2))
    bodies = cheat_bodies(root, honest, trap_listener.getsockname()[1])
    copies = [("honest", "s03", honest)]
    for name, body in bodies.items():
        copies.append((name, "s03", make_copy(root / re.sub(r"\W+", "-", name) / "s03", "s03", {1: body})))
    thread_body = ("import threading, time\nthreading.Thread(target=time.sleep, args=(60,)).start()\n"
                   + textwrap.dedent(reference_body("s03", 1)))
    copies.append(("leaves a thread running", "s03", make_copy(root / "thread" / "s03", "s03", {1: thread_body})))
    before = {path: path.read_bytes() for path in (ROOT / "tests" / "conftest.py", ROOT / "course" / "grading" / "probes.py")}
    options = grading.Options(seed=SEED, check_regions=False, limits=CHEATS_LIMITS)
    grades = {grade.student: grade for grade in grading.grade_copies(copies, options)}
    return {"grades": grades, "before": before, "bodies": bodies, "honest": honest}


@needs_confinement
def test_every_cheat_scores_zero_on_every_exercise(cheats):
    scores = {name: cheats["grades"][name].points for name in cheats["bodies"]}
    assert scores == {name: 0 for name in cheats["bodies"]}


@needs_confinement
def test_no_cheat_changes_another_copys_grade(cheats):
    honest = cheats["grades"]["honest"]
    # The honest copy's grade beside the cheats is the grade its code earns.
    assert verdicts(honest) == {1: 1.0, 2: 1.0, 3: 0.0}, [(r.exercise.number, r.reason) for r in honest.results]
    assert (cheats["honest"] / "agent.py").read_text(encoding="utf-8").startswith(exercise_text.copy_header("s03") + '"""')


def parses_that_fail_when_they_overlap(real_parse):
    """ast.parse as CPython 3.11 behaves under threads: a parse that runs while another is under way may fail
    with "AST constructor recursion depth mismatch" (https://github.com/python/cpython/issues/106905). The
    window is widened here so that an overlap, which a loaded machine makes now and then, always shows."""
    import threading
    import time
    running, guard = [], threading.Lock()

    def parse(*args, **kwargs):
        with guard:
            overlapping = bool(running)
            running.append(1)
        try:
            time.sleep(0.02)
            if overlapping or len(running) > 1:
                raise SystemError("AST constructor recursion depth mismatch (before=36, after=26)")
            return real_parse(*args, **kwargs)
        finally:
            with guard:
                running.pop()
    return parse


@needs_confinement
def test_a_copy_gets_the_same_grade_alone_twice_and_beside_others(cheats, monkeypatch):
    import ast
    monkeypatch.setattr(ast, "parse", parses_that_fail_when_they_overlap(ast.parse))
    honest, beside = cheats["honest"], cheats["grades"]["honest"]
    other = make_copy(honest.parent.parent.parent / "other" / "s03", "s03", solved=(2,))
    first, again = (grading.grade_copies([("honest", "s03", honest)], grading.Options(seed=SEED))[0] for _ in range(2))
    together = grading.grade_copies([("honest", "s03", honest), ("other", "s03", other)], grading.Options(seed=SEED))[0]
    reasons = [(r.exercise.number, r.reason) for grade in (first, again, together) for r in grade.results]
    assert verdicts(first) == verdicts(again) == verdicts(together) == verdicts(beside) == {1: 1.0, 2: 1.0, 3: 0.0}, reasons


@needs_confinement
def test_the_grading_checkout_is_left_as_it_was(cheats):
    for path, content in cheats["before"].items():
        assert path.read_bytes() == content and TRAP_MARK not in path.read_text(encoding="utf-8")


@needs_confinement
def test_nothing_reaches_the_grader_terminal_or_the_network(cheats, trap_listener, capfd):
    printed = capfd.readouterr()
    assert TRAP_MARK not in printed.out + printed.err
    with pytest.raises(socket.timeout):
        trap_listener.accept()


@needs_confinement
def test_no_process_of_a_copy_outlives_its_grading(cheats):
    leftovers = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if TRAP_MARK.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                leftovers.append(pid)
        except OSError:
            pass
    assert not leftovers


@needs_confinement
def test_a_runaway_is_stopped_with_a_line_that_says_so(cheats):
    result = cheats["grades"]["loops forever"].results[0]
    assert "still running at the time limit (6 s), with only " in result.reason and "it waited" in result.reason
    assert cheats["grades"]["loops forever"].results[1].reason.startswith("still the stub")  # its other exercise is judged


@needs_confinement
def test_a_copy_that_writes_past_its_scratch_folders_bound_is_stopped_saying_so(cheats):
    limits = CHEATS_LIMITS
    for name, said in (("fills the disk", f"wrote more than {limits.disk_mb} MB"),
                       ("makes a file a thousand times over", f"made more than {limits.files} files")):
        card = grading.scorecard(cheats["grades"][name])
        why = [line for line in card.split("\nwhy:\n")[1].splitlines() if line.startswith("  exercise 1: ")]
        assert len(why) == 1 and said in why[0] and "was stopped" in why[0], card


@pytest.mark.parametrize("files, size, said", [(3, 600_000, "wrote more than 1 MB"), (60, 10, "made more than 50 files"),
                                               (3, 10, "")])
def test_a_scratch_folder_on_the_disk_is_measured_as_a_whole(tmp_path, files, size, said):
    """Without namespaces there is no tmpfs of its own: the supervisor walks the folder, every file and folder in it."""
    for index in range(files):
        (tmp_path / f"sub-{index % 3}").mkdir(exist_ok=True)
        (tmp_path / f"sub-{index % 3}" / f"f{index}").write_bytes(b"x" * size)
    assert grading_jail.Quota(tmp_path, disk_mb=1, files=50, on_tmpfs=False).passed(now=True) == said


@pytest.mark.parametrize("cpu, said", [(5.5, "computing all along (5.5 s of CPU)"), (0.3, "too loaded to run it"),
                                       (None, "does a loop never end?")])
def test_a_time_limit_says_whether_the_copy_computed_or_waited(cpu, said):
    """A wall-time limit that a loaded machine hits must not score right code 0 without a word."""
    run = grading.ChildRun({}, "", grading_jail.TIMED_OUT, "", 6.0, cpu_seconds=cpu)
    options = grading.Options(limits=grading_jail.Limits(seconds=6))
    assert said in grading._missing(run, 0, options) and "(6 s)" in grading._missing(run, 0, options)
    assert grading._missing(run, 1, options) == "not reached before the time limit"


@pytest.mark.parametrize("limit", [6, 60])
def test_a_loop_that_never_ends_is_diagnosed_alike_on_an_idle_and_a_loaded_machine(limit):
    """The same loop, given the whole of a core or a quarter of one (8 graders on 2 cores): both computing."""
    options = grading.Options(limits=grading_jail.Limits(seconds=limit))
    said = {share: grading._missing(grading.ChildRun({}, "", grading_jail.TIMED_OUT, "", limit, cpu_seconds=limit * share),
                                    0, options) for share in (0.98, 0.25)}
    assert all("computing all along" in line for line in said.values()), said


@needs_confinement
def test_a_copy_that_leaves_a_thread_running_keeps_its_results(cheats):
    assert verdicts(cheats["grades"]["leaves a thread running"])[1] == 1.0


@needs_confinement
def test_a_copys_own_output_is_captured_capped_and_shown(cheats):
    flood = cheats["grades"]["floods its output"]
    assert len(flood.results[0].printed) <= grading_jail.Limits().output_cap + 1
    card = grading.scorecard(flood)
    assert "exercise 1 printed (" in card and "the first 2000 shown" in card and len(card) < 8000


@needs_confinement
def test_reading_or_importing_the_reference_fails_with_the_reason(cheats):
    for name in ("imports the reference stage", "executes the reference file", "reads the tests"):
        reason = cheats["grades"][name].results[0].reason
        assert "raised" in reason and ("Permission" in reason or "ModuleNotFound" in reason or "ImportError" in reason), reason


# ---------------------------------------------------------------- honest and wrong copies

WRONG = {
    # s03 exercise 1, the wrong budgets and limits
    "budget of input tokens only": ("s03", {1: """
        if state.turn_count >= limits.max_turns:
            return "max_turns", f"turn limit: {state.turn_count} of {limits.max_turns}"
        if state.usage["input_tokens"] >= limits.token_budget:
            return "token_budget", f"{state.usage['input_tokens']} of {limits.token_budget}"
        return None"""}, {1: "token_budget"}),
    "a turn limit of 3": ("s03", {1: """
        if state.turn_count >= 3:
            return "max_turns", f"turn limit: {state.turn_count} of 3"
        used = state.usage["input_tokens"] + state.usage["output_tokens"]
        if used >= limits.token_budget:
            return "token_budget", f"{used} of {limits.token_budget}"
        return None"""}, {1: "expected null, got 'max_turns'"}),
    "a budget only when it is 3000": ("s03", {1: """
        if state.turn_count >= limits.max_turns:
            return "max_turns", f"turn limit: {state.turn_count} of {limits.max_turns}"
        used = state.usage["input_tokens"] + state.usage["output_tokens"]
        if limits.token_budget == 3000 and used >= 3000:
            return "token_budget", f"{used} of 3000"
        return None"""}, {1: "expected 'token_budget'"}),
    # s03 exercise 2: all errors, not consecutive ones; exercise 1 right beside it
    "every error counted": ("s03", {1: None, 2: """
        calls = [(name, json.dumps(arguments, sort_keys=True)) for message in messages if message["role"] == "assistant"
                 for name, arguments in calls_made(message)]
        if len(calls) >= limits.max_repeats and len(set(calls[-limits.max_repeats:])) == 1:
            return f"no progress: {calls[-1][0]} repeated"
        if sum(bool(block.get("is_error")) for block in tool_results_in(messages)) >= limits.max_consecutive_errors:
            return "no progress: too many errors"
        return None"""}, {2: "failures in a row after"}),
    # s04 exercise 1: a hint written for the test's tool
    "a hint for read_file only": ("s04", {1: """
        if name not in TOOL_FUNCTIONS:
            raise ToolError("unknown_tool", f"there is no tool named {name!r}",
                            f"the tools are {', '.join(TOOL_FUNCTIONS)}; the closest is read_file")
        problems = course.argument_errors(SCHEMAS[name], arguments)
        if problems:
            raise ToolError("invalid_arguments", "; ".join(problems), f"{name} takes {course.describe_parameters(SCHEMAS[name])}")"""},
     {1: "closest"}),
    # s03 extension: cycles of the two lengths the chapter shows, and no other
    "cycles of 2 and 3 only": ("s03", {3: """
        for period in (2, 3):
            tail = calls[len(calls) - period * rounds:]
            if len(tail) == period * rounds and len(set(tail[:period])) > 1 and all(
                    tail[i] == tail[i % period] for i in range(len(tail))):
                return True
        return False"""}, {3: "expected True"}),
    # s04 extension: right on what it accepts; its refusal names every type the exercise lists, whatever came
    "a refusal that names every type": ("s04", {3: """
        value = arguments
        if isinstance(arguments, str):
            text = arguments.strip()
            fenced = re.fullmatch(r"```(?:json)?\\s*(.*?)\\s*```", text, re.DOTALL)
            try:
                value = json.loads(fenced.group(1) if fenced else text)
            except ValueError:
                value = arguments
        if isinstance(value, dict):
            return value
        raise ValueError("the arguments must be a JSON object, not a list, str or int")"""}, {3: "and no other"}),
    # ... and one that hides every type's name inside a longer word, so that it names none of them as a word
    "a refusal that hides every type inside longer words": ("s04", {3: """
        if isinstance(arguments, dict):
            return arguments
        if isinstance(arguments, str):
            text = arguments.strip()
            if text.startswith("```json") and text.endswith("```"):
                text = text[7:-3].strip()
            try:
                value = json.loads(text)
            except ValueError:
                value = None
            if isinstance(value, dict):
                return value
        raise ValueError("expected an object, not a listing, integers, floating point, booleans, NoneTypes or strings")"""},
        {3: "and no other"}),
    # s06 extension: the string prefix (the chapter's CVE class), with a special case for one sibling name
    "a string-prefix path check": ("s06", {3: """
        if path.startswith(folder + "-evil"):
            return False
        return path.startswith(folder)"""}, {3: "expected"}),
    # s06 extension: a prefix of the folder's text, and a '..' judged by whether the folder's name follows it
    "a '..' judged by the name after it": ("s06", {3: """
        root = folder.rstrip("/"); name = root.rpartition("/")[2]; rest = path[len(root):]
        return path.startswith(root) and rest[:1] in ("", "/") and not path.endswith("/etc") and ("/../" + name) not in path"""},
     {3: "expected"}),
    # s05 extension: keys on marker texts at a break and on the last message's second block, never on a pair
    "broken pairs found by their marker texts": ("s05", {3: """
        found = []
        for i, m in enumerate(messages):
            for b in m["content"] if isinstance(m["content"], list) else []:
                if b.get("text") == "lost": found.append(messages[i - 1]["content"][1]["id"])
                if b.get("text") == "summarised": found.append(messages[i + 1]["content"][0]["tool_use_id"])
        if messages[-1]["role"] == "assistant": found += [messages[-1]["content"][1]["id"]]
        return found"""}, {3: "case: a history of"}),
}

SCORE_NOTHING = {"cycles of 2 and 3 only", "a refusal that names every type", "a string-prefix path check",
                 "a '..' judged by the name after it", "broken pairs found by their marker texts"}

# Answers that compute nothing: each must earn no part of its exercise's points (every group of cases
# holds both answers, so a constant passes none), and each says why it failed.
CONSTANT = {
    "s00 every call an error": ("s00", 1, 'return f"Error: {name} {arguments}", True'),
    "s00 extension answers nothing": ("s00", 3, "return []"),
    "s03 extension always a cycle": ("s03", 3, "return True"),
    "s04 the tools joined by spaces": ("s04", 1, """
        if name not in TOOL_FUNCTIONS:
            raise ToolError("unknown_tool", str(name), " ".join(TOOL_FUNCTIONS))"""),
    "s04 extension always refuses": ("s04", 3,
                                     'raise ValueError("expected an object, not a list, str, int, float, bool or NoneType")'),
    "s05 every tool_result deleted": ("s05", 1, """
        results = tool_results_in(messages)
        old = [block for block in results[:max(len(results) - keep, 0)] if not str(block["content"]).startswith("[masked")]
        if at_least > 1000000:
            return 0
        for message in messages:
            if message["role"] == "user" and isinstance(message["content"], list):
                message["content"].clear()
        return len(old)"""),
    "s06 extension never inside": ("s06", 3, "return False"),
}

RIGHT = {
    "s03 limits in my own words": ("s03", {1: """
        taken, most = state.turn_count, limits.max_turns
        if taken >= most:
            return "max_turns", f"Stopped: {taken}/{most} turns used up."
        spent = sum(state.usage[kind] for kind in ("input_tokens", "output_tokens"))
        if spent >= limits.token_budget:
            return "token_budget", f"Stopped after spending {spent} tokens (budget {limits.token_budget})."
        return None"""}),
    "s04 a marker of my own": ("s04", {2: """
        if len(output) <= MAX_RESULT_CHARS:
            return output
        hidden = len(output) - MAX_RESULT_CHARS
        if name == "read_file":
            advice = f"to read on, call read_file again with offset={arguments.get('offset', 0) + MAX_RESULT_CHARS}"
        else:
            advice = "narrow the request to see less at once"
        return output[:MAX_RESULT_CHARS] + f"\\n... {hidden} more characters hidden (of {len(output)} in all); {advice}" """}),
    "s00 errors of my own": ("s00", {1: """
        if name not in TOOL_FUNCTIONS:
            return f"No such tool: {name}. Try one of {sorted(TOOL_FUNCTIONS)}.", True
        try:
            return TOOL_FUNCTIONS[name](workspace, **arguments), False
        except Exception as problem:
            return f"{name} failed ({type(problem).__name__}): {problem}", True"""}),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Every honest, wrong and extension copy, graded as an instructor grades them: {student: grade}."""
    if grading_jail.available():
        pytest.skip(f"no confinement here: {grading_jail.available()}")
    root = tmp_path_factory.mktemp("class")
    copies = []
    for name, (stage, bodies, _) in WRONG.items():
        copies.append((name, stage, make_copy(root / re.sub(r"\W+", "-", name) / stage, stage, bodies)))
    for name, (stage, number, body) in CONSTANT.items():
        copies.append((name, stage, make_copy(root / re.sub(r"\W+", "-", name) / stage, stage, {number: body})))
    for name, (stage, bodies) in RIGHT.items():
        copies.append((name, stage, make_copy(root / re.sub(r"\W+", "-", name) / stage, stage, bodies)))
    for stage in STAGES:
        number = exercise_text.extension(stage).number
        rebuild = [r.number for r in exercises.stage_regions(stage)]
        copies.append((f"extension {stage}", stage, make_copy(root / "ext" / stage, stage, {number: solution(stage)},
                                                             solved=rebuild)))
    for stage in STAGES:  # an extension that answers nothing
        copies.append((f"lazy {stage}", stage, make_copy(root / "lazy" / stage, stage,
                                                         {exercise_text.extension(stage).number: "return None"})))
    # a copy in latin-1, with its coding line, in a folder whose name holds a colon
    latin = make_copy(root / "mar:ía" / "s02", "s02", {4: "# é: written in latin-1\n" + textwrap.dedent(solution("s02"))},
                      latin1=grading.EXTENSION_FILE)
    copies.append(("latin-1", "s02", latin))
    edited = make_copy(root / "edited" / "s03", "s03", solved=(1,))
    agent = edited / "agent.py"
    agent.write_text(agent.read_text(encoding="utf-8").replace("max_turns: int = 40", "max_turns: int = 4"), encoding="utf-8")
    copies.append(("edited outside", "s03", edited))
    copies.append(("imports in a region", "s03", make_copy(root / "imports" / "s03", "s03", {1: "import s03.agent\nreturn None"})))
    broken = make_copy(root / "broken" / "s06", "s06")
    (broken / "permissions.py").write_text((broken / "permissions.py").read_text(encoding="utf-8") + "\ndef oops(:\n",
                                           encoding="utf-8")
    copies.append(("syntax error", "s06", broken))
    grades = grading.grade_copies(copies, grading.Options(seed=SEED, points={("s03", 2): 4}))
    return {grade.student: grade for grade in grades}


@needs_confinement
@pytest.mark.parametrize("name", WRONG)
def test_a_wrong_solution_fails_its_exercise_saying_what_is_wrong(graded, name):
    _, bodies, failing = WRONG[name]
    grade = graded[name]
    for number, hint in failing.items():
        result = next(r for r in grade.results if r.exercise.number == number)
        assert not result.passed and hint in result.reason, result.reason
        if name in SCORE_NOTHING:  # right on some groups only by luck of the lengths or types drawn: never
            assert result.points == 0, grading.scorecard(grade, whole=True)


@needs_confinement
@pytest.mark.parametrize("name", CONSTANT)
def test_an_answer_that_computes_nothing_earns_no_points(graded, name):
    stage, number, _ = CONSTANT[name]
    result = next(r for r in graded[name].results if r.exercise.number == number)
    assert result.points == 0 and result.reason, grading.scorecard(graded[name], whole=True)


@needs_confinement
def test_deleting_the_tool_results_is_caught_by_the_judge(graded):
    result = next(r for r in graded["s05 every tool_result deleted"].results if r.exercise.number == 1)
    assert "each tool_result block must stay" in result.reason, result.reason


@needs_confinement
def test_one_exercises_bug_fails_only_that_exercise(graded):
    grade = graded["every error counted"]
    assert verdicts(grade)[1] == 1.0 and not grade.results[1].passed
    assert grade.results[1].points == 2.0 and grade.results[1].max_points == 4  # the repeats group passed: partial credit


@needs_confinement
@pytest.mark.parametrize("name", RIGHT)
def test_a_right_solution_in_a_students_own_wording_passes(graded, name):
    stage, bodies = RIGHT[name]
    grade = graded[name]
    for number in bodies:
        result = next(r for r in grade.results if r.exercise.number == number)
        assert result.passed, grading.scorecard(grade)


@needs_confinement
@pytest.mark.parametrize("stage", STAGES)
def test_the_reference_and_a_right_extension_pass_every_exercise(graded, stage):
    grade = graded[f"extension {stage}"]
    assert grade.results[-1].exercise.extension
    assert all(result.passed for result in grade.results), grading.scorecard(grade, whole=True)


@needs_confinement
@pytest.mark.parametrize("stage", STAGES)
def test_an_extension_that_answers_nothing_fails(graded, stage):
    assert graded[f"lazy {stage}"].points == 0


@needs_confinement
def test_a_latin1_copy_in_a_folder_with_a_colon_is_graded(graded):
    assert verdicts(graded["latin-1"])[4] == 1.0, grading.scorecard(graded["latin-1"])


def test_a_copy_changed_outside_its_regions_is_refused_with_the_diff(graded):
    grade = graded["edited outside"]
    assert grade.points == 0 and "changed outside its exercise regions" in grade.refused
    assert "+    max_turns: int = 4" in grading.scorecard(grade)


def test_a_region_that_imports_is_refused_before_it_runs(graded):
    reason = graded["imports in a region"].results[0].reason
    assert re.match(r"agent\.py, line \d+: no import in an exercise region", reason), reason


def test_a_syntax_error_names_the_file_and_the_line(graded):
    grade = graded["syntax error"]
    assert grade.points == 0 and re.search(r"permissions\.py, line \d+: ", grade.refused), grade.refused


def test_a_fresh_copy_scores_zero_everywhere_without_running_anything(tmp_path):
    copies = [(f"fresh {stage}", stage, make_copy(tmp_path / stage, stage)) for stage in STAGES]
    grades = grading.grade_copies(copies, grading.Options(seed=SEED))
    assert all(grade.points == 0 and all(r.reason.startswith("still the stub") for r in grade.results) for grade in grades)


# ---------------------------------------------------------------- the cases

@pytest.mark.parametrize("stage", STAGES)
def test_every_exercise_has_cases_a_text_and_an_extension(stage):
    for exercise in grading.stage_exercises(stage):
        assert grading.draw_cases(stage, exercise.number, SEED), exercise
        if not exercise.extension:
            assert exercise_text.text(stage, exercise.number), exercise
    assert exercise_text.extension(stage)


def test_cases_vary_with_the_seed_and_repeat_with_it():
    first, again, other = (grading.draw_cases("s03", 1, seed) for seed in (1, 1, 2))
    assert [c.params for _, c in first] == [c.params for _, c in again] != [c.params for _, c in other]


@pytest.mark.parametrize("stage", STAGES)
def test_the_reference_regions_pass_the_region_check(stage, tmp_path):
    bodies = grading.read_copy(stage, make_copy(tmp_path / stage, stage,
                                                solved=[r.number for r in exercises.stage_regions(stage)]))
    assert all(not grading.region_problems(body, stage) for body in bodies.values())


def test_a_reason_keeps_what_to_act_on_when_cut():
    long_case = "case " + "x" * 400
    line = grading.one_line(f"the explanation should give 12 and 40 (case: {long_case})")
    assert line.startswith("the explanation should give 12 and 40") and len(line) <= grading.REASON_LIMIT


# ---------------------------------------------------------------- a class, the gradebook, CI

# Classroom 50's result.json as its contract states it
# (https://github.com/foundation50/classroom50/wiki/Advanced-Autograding#the-resultjson-contract).
STAMP = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d:[0-5]\dZ$"}
WORDS = {"type": "string", "minLength": 1}
CLASSROOM50_RESULT = {
    "type": "object", "additionalProperties": False,
    "required": ["schema", "classroom", "assignment", "assignment_type", "owner", "submission", "commit", "release",
                 "review", "datetime", "score", "max-score", "tests"],
    "properties": {"schema": {"const": "classroom50/result/v1"}, "classroom": WORDS, "assignment": WORDS,
                   "assignment_type": {"enum": ["individual", "group"]}, "owner": WORDS,
                   "submission": {"type": "string", "pattern": "^submit/"}, "commit": WORDS, "release": WORDS,
                   "review": WORDS, "datetime": STAMP, "graded_at": STAMP,
                   "score": {"type": "integer", "minimum": 0}, "max-score": {"type": "integer", "minimum": 0},
                   "tests": {"type": "array", "items": {
                       "type": "object", "required": ["test-name", "passed", "score", "max-score"],
                       "properties": {"test-name": WORDS, "passed": {"type": "boolean"},
                                      "score": {"type": "integer", "minimum": 0},
                                      "max-score": {"type": "integer", "minimum": 0}}}}}}
RUNNER = {"CLASSROOM": "agents-2026", "ASSIGNMENT": "s03", "SUBMISSION_TAG": "submit/2026-12-01T10-00-00Z-abc1234",
          "COMMIT_URL": "https://github.com/o/r/commit/abc1234", "RELEASE_URL": "https://github.com/o/r/releases/tag/x"}


def test_classroom50_needs_its_runners_variables_and_says_which_before_grading(tmp_path, monkeypatch, capsys):
    for name in RUNNER:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLASSROOM", "agents-2026")
    copy = make_copy(tmp_path / "ana" / "s03", "s03")
    assert main(["grade", str(copy), "--out", str(tmp_path / "out"), "--format", "classroom50"]) != 0
    printed = capsys.readouterr()
    assert "ASSIGNMENT, SUBMISSION_TAG, COMMIT_URL, RELEASE_URL not set" in printed.out + printed.err
    assert not (tmp_path / "out").exists()


@needs_confinement
def test_a_class_is_graded_into_a_gradebook(tmp_path, capsys, monkeypatch):
    import jsonschema
    for name, value in RUNNER.items():
        monkeypatch.setenv(name, value)
    klass = tmp_path / "class"
    make_copy(klass / "ana" / "s03", "s03", solved=(1,))
    make_copy(klass / "ben" / "s03", "s03")
    out = tmp_path / "out"
    # The fixtures' seed: the reference stage's observations of its cases are already made in this process.
    code = main(["grade", str(klass), "--out", str(out), "--seed", str(SEED), "--points", "s03:1=3,s03:2=2", "--time-limit", "20",
                 "--format", "classroom50"])
    printed = capsys.readouterr().out
    assert code == 1 and f"seed {SEED}" in printed
    book = json.loads((out / "gradebook.json").read_text(encoding="utf-8"))
    by = {(row["student"], row["exercise"]): row for row in book["rows"]}
    assert by["ana", 1]["points"] == 3 and by["ben", 1]["points"] == 0 and by["ana", 2]["max_points"] == 2
    assert "still the stub" in by["ben", 1]["reason"]
    header = next(csv.reader((out / "gradebook.csv").read_text(encoding="utf-8").splitlines()))
    assert header == grading.COLUMNS
    assert (out / "scorecards" / "ana-s03.txt").is_file()
    results = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in (out / "results").glob("*.json")}
    assert set(results) == {"ana", "ben"}
    for result in results.values():
        jsonschema.validate(result, CLASSROOM50_RESULT)
        assert result["score"] == sum(test["score"] for test in result["tests"]) <= result["max-score"] == 6
        assert result["submission"] == RUNNER["SUBMISSION_TAG"] and result["review"] == RUNNER["COMMIT_URL"]
    assert results["ana"]["score"] == 3 and results["ben"]["score"] == 0
    assert [test["passed"] for test in results["ana"]["tests"]] == [True, False, False]
    assert "still the stub" in results["ben"]["tests"][0]["message"]


WORKFLOW = ROOT / "course" / "classroom" / "grade.yml"


def test_the_ci_workflow_installs_the_course_grades_and_uploads_the_gradebook():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = workflow.get("on", workflow.get(True))
    assert "push" in triggers
    steps = workflow["jobs"]["grade"]["steps"]
    script = "\n".join(step.get("run", "") for step in steps)
    assert "pip install" in script and "-m course grade" in script and "GITHUB_STEP_SUMMARY" in script
    assert any(step.get("uses", "").startswith("actions/upload-artifact@") for step in steps)
    assert any(step.get("uses", "").startswith("actions/checkout@") for step in steps)


@needs_confinement
def test_the_workflows_grading_step_runs_on_a_student_repository(tmp_path):
    """The step's own script, run here with the course already installed: it writes the summary and the JSON."""
    steps = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["grade"]["steps"]
    step = next(step for step in steps if "-m course grade" in step.get("run", ""))
    repository = tmp_path / "student-repo"
    make_copy(repository / "s00", "s00", solved=(1, 2))
    summary = tmp_path / "summary.md"
    runner = tmp_path / "runner"  # the runner's RUNNER_TEMP, where the workflow cloned the course
    runner.mkdir()
    (runner / "course").symlink_to(ROOT)
    environment = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_REPOSITORY": "class/ana",
                   "GITHUB_WORKSPACE": str(repository), "RUNNER_TEMP": str(runner),
                   **{name: str(value) for name, value in step.get("env", {}).items()}}
    environment["PATH"] = f"{ROOT / '.venv' / 'bin'}:{environment['PATH']}"
    import subprocess
    finished = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repository, env=environment,
                              capture_output=True, text=True, timeout=120)
    assert finished.returncode in (0, 1), finished.stderr
    assert "| s00 | 2 of 3 |" in summary.read_text(encoding="utf-8")
    book = json.loads((runner / "grading" / "gradebook.json").read_text(encoding="utf-8"))
    assert book["copies"][0]["points"] == 2


HOSTILE_NAMES = ['<img src=x onerror="alert(1)">', "ana | 3 of 3 | 3 of 3 |", "bo\n| forged | s00 | 9 of 9 | 9 of 9 |",
                 "**bold** [link](https://example.com) ``` <script>x</script>", "`` ` ```` \\|"]


def test_the_ci_summary_shows_a_students_name_and_folder_inert(tmp_path):
    markdown_it = pytest.importorskip("markdown_it")
    exercise = grading.stage_exercises("s00")[0]
    grades = [grading.CopyGrade(name, "s00", tmp_path / name.replace("/", "_") / "s00",
                                [grading.ExerciseResult(exercise, [grading.CaseResult("c", "g", True)], 1.0, 1.0)], 7,
                                confinement="confined") for name in HOSTILE_NAMES]
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(grading.summary_markdown(grades))
    assert "<img" not in html and "<script" not in html and "<a " not in html and "<strong>" not in html
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.DOTALL)
    assert len(rows) == 1 + len(HOSTILE_NAMES) and all(row.count("<td>") == 4 for row in rows[1:]), rows
    import html as entities
    shown = [entities.unescape(re.sub(r"</?code>", "", cell)) for row in rows[1:] for cell in re.findall(r"<td>(.*?)</td>", row)[:1]]
    assert shown == [grading.shown_line(name) for name in HOSTILE_NAMES]
    assert len(re.findall(r"<pre><code class=\"language-text\">", html)) == len(HOSTILE_NAMES)


def test_the_gradebook_and_the_terminal_show_a_students_name_inert(tmp_path, capsys, monkeypatch):
    names = ['=HYPERLINK("x")', "+1", "@SUM(A1)", "ana\x1b[2Jbo"]
    for name in names:
        make_copy(tmp_path / "class" / name / "s00", "s00")
    exercise = grading.stage_exercises("s00")[0]

    def graded_as_given(copies, options):  # the names as find_copies read them, with no child to run
        return [grading.CopyGrade(copy[0], copy[1], Path(copy[2]), [grading.ExerciseResult(exercise, [], 0.0, 1.0,
                                                                                          reason="x")], 7) for copy in copies]
    monkeypatch.setattr(grading, "grade_copies", graded_as_given)
    main(["grade", str(tmp_path / "class"), "--out", str(tmp_path / "out")])
    assert "\x1b" not in capsys.readouterr().out
    import csv
    with (tmp_path / "out" / "gradebook.csv").open(encoding="utf-8", newline="") as handle:
        shown = sorted(row["student"] for row in csv.DictReader(handle))
    assert shown == sorted(["'" + name for name in names[:3]] + ["ana\\u001b[2Jbo"])  # the escape shown, not kept


@needs_confinement
def test_an_instructors_hidden_cases_from_the_guide_are_added_and_judged(tmp_path, capsys):
    guide = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    example = next(block for block in re.findall(r"```python\n(.*?)```", guide, re.DOTALL) if "@probe(" in block)
    hidden = tmp_path / "hidden" / "big_budgets.py"
    hidden.parent.mkdir()
    hidden.write_text(example, encoding="utf-8")
    right = make_copy(tmp_path / "right" / "s03", "s03", solved=(1,))
    capped = make_copy(tmp_path / "capped" / "s03", "s03", {1: WRONG["a budget only when it is 3000"][1][1]})
    for copy, passes in ((right, True), (capped, False)):
        out = tmp_path / f"{copy.parent.name}.json"
        main(["check", "s03", str(copy), "--extra-tests", str(hidden.parent), "--seed", "3", "--json", str(out)])
        exercise = json.loads(out.read_text(encoding="utf-8"))["copies"][0]["exercises"][0]
        hidden_cases = [case for case in exercise["cases"] if case["name"].startswith("a budget of")]
        assert hidden_cases and all(case["passed"] is passes for case in hidden_cases)
    assert grading.draw_cases("s03", 1, 3) == grading.draw_cases("s03", 1, 3, ())  # other runs do not get them
    assert not any(case.name.startswith("a budget of") for _, case in grading.draw_cases("s03", 1, 3))
    capsys.readouterr()


def test_the_instructors_table_names_the_function_each_exercise_text_names():
    from course.site import code as site_code
    table = site_code.exercise_table()
    for stage in STAGES:
        for found in exercises.stage_regions(stage):
            function = exercise_text.text(stage, found.number).where.split("(")[0].split(".")[-1]
            assert re.search(rf"\| {found.number} \| [^|]*\| `{function}\(\)` \|", table), (stage, found.number, function)


@pytest.mark.parametrize("stage", STAGES)
def test_a_chapters_exercise_section_states_every_contract_and_shows_no_solution(stage):
    from course.site import pages as site
    chapter = next(path for path in (ROOT / "docs").glob(f"{stage}-*.md") if "\n## Exercises\n" in path.read_text(encoding="utf-8"))
    assert f"\n## Exercises\n\n<!-- exercise-section {stage} -->\n" in chapter.read_text(encoding="utf-8")
    section = site.render("exercise-section", stage)
    for found in exercises.stage_regions(stage):
        assert f"### Exercise {found.number}: {found.title}" in section
        assert all(item in section for item in exercise_text.text(stage, found.number).contract)
    extension = exercise_text.extension(stage)
    assert f"### Exercise {extension.number} (extension): {extension.title}" in section
    assert all(item in section for item in extension.contract)
    answers = solution(stage).splitlines() + [line for found in exercises.stage_regions(stage)
                                              for line in reference_body(stage, found.number).splitlines()]
    assert not [line for line in answers if len(line.strip()) > 30 and line.strip() in section]


def test_text_that_is_not_in_its_encoding_names_the_file_and_the_line(tmp_path):
    path = tmp_path / "agent.py"
    path.write_bytes(b'"""A copy."""\nx = "\xff"\n')
    with pytest.raises(grading.Refused, match=r"^agent\.py, line 2: not valid text in its encoding"):
        grading.read_source(path)
    path.write_bytes(b'# -*- coding: latin-1 -*-\nx = "\xe9"\n')
    assert grading.read_source(path).endswith('x = "é"\n')
