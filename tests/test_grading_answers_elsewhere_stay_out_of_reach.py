"""While an exercise whose answer also lives in the support package is graded, a copy cannot reach that
answer or make it again, whatever it does in its process: course.grading.probes.keep_answers_out_of_reach
runs in the child before the copy is imported, puts a stand-in wherever the heap held the answer (and the
functions of its module it uses), checks that the originals are gone from memory, and adds a Landlock layer
under which their source and cached bytecode cannot be read.

Tested as an attacker would: a region with the full language (the region check switched off: import,
getattr, open, exec, gc, frames, a process of its own) tries every way back to the answer and prints what
each found; a region that passes the check reaches builtins through the enum module's alias of them. Each
scores 0 on each of the five exercises, the stand-in's message is what it meets, and the same ways do reach
the answer in a process without the wall (so they are real). The reference solutions still score full marks.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from course.grading import grade as grading, probes as grading_probes
from helpers import module_from_source
from test_grading import ROOT, make_copy, needs_confinement, solution

pytestmark = pytest.mark.stage()  # the grader's child and its wall: no stage

SEED = 20261201

# Per exercise: the function the routes look for (a class's method for a class), and how a region that found
# it would answer with it.
EXERCISES = {
    ("s01", 3): ("course.offline.validation", "validate_request", """
        missing = []
        for index, message in enumerate(messages):
            if message["role"] != "assistant" or isinstance(message["content"], str):
                continue
            pair = [{"role": "user", "content": "task"}, message] + [
                following for following in messages[index + 1:index + 2] if following["role"] == "user"]
            try:
                found({"model": "m", "max_tokens": 1, "messages": pair})
            except Exception as error:
                if "immediately after: " in str(error):
                    missing += str(error).split("immediately after: ")[1].split(". Each")[0].split(", ")
        return missing"""),
    ("s02", 4): ("course.runtime.transcript", "Loaded.history", """
        return found(types.SimpleNamespace(records=records))"""),
    ("s05", 1): ("course.offline.context_management", "clear_tool_uses", """
        body = {"model": "m", "max_tokens": 1, "messages": messages}
        edited, applied = found(body, {"trigger": {"type": "input_tokens", "value": 0}, "clear_at_least": {
            "type": "input_tokens", "value": at_least}, "keep": {"type": "tool_uses", "value": keep}})
        messages[:] = edited["messages"]
        return applied["cleared_tool_uses"] if applied else 0"""),
    ("s05", 3): ("course.offline.validation", "validate_request", """
        try:
            found({"model": "m", "max_tokens": 1, "messages": messages})
        except Exception as error:
            return re.findall(r"toolu_[A-Za-z0-9]+", str(error))
        return []"""),
    ("s06", 3): ("course.sandbox.on_disk", "inside", """
        folder, path = Path(posixpath.normpath(folder)), Path(posixpath.normpath(path))
        return path == folder or bool(found(folder, [path]))"""),
}

# Every way back to the answer a region with the full language has, each printed as reached or not. What
# counts as reached: the function itself (not its stand-in), or text or code that holds its definition.
ROUTES = r'''
import gc, importlib, inspect, json, linecache, marshal, posixpath, re, subprocess, sys, types
from pathlib import Path
MODULE, TARGET = {module!r}, {target!r}
FILE = str(Path(sys.modules[MODULE].__file__).resolve())
DEFINED = ("class " if "." in TARGET else "def ") + TARGET.split(".")[0]

def attribute(module):
    found = module
    for part in TARGET.split("."):
        found = getattr(found, part)
    return found

def fresh_import():
    sys.modules.pop(MODULE)
    return attribute(importlib.import_module(MODULE))

def cached_bytecode():
    return marshal.loads(sorted((Path(FILE).parent / "__pycache__").glob(Path(FILE).stem + ".*.pyc"))[0].read_bytes()[16:])

def in_the_heap():
    return next(o for o in gc.get_objects() if isinstance(o, types.FunctionType) and o.__qualname__ == TARGET
                and o.__module__ == MODULE)

def by_code_object():
    def codes(code):
        yield code
        for constant in code.co_consts:
            if isinstance(constant, types.CodeType):
                yield from codes(constant)
    holders = [o for o in gc.get_objects() if isinstance(o, types.FunctionType) and o.__module__ == MODULE]
    code = next(c for f in holders for c in codes(f.__code__) if c.co_qualname == TARGET)
    return types.FunctionType(code, sys.modules[MODULE].__dict__)

def in_a_class():
    def every(cls):
        for sub in type.__subclasses__(cls) if isinstance(cls, type) and issubclass(cls, type) else cls.__subclasses__():
            yield sub
            yield from every(sub)
    owner = next(c for c in every(object) if c.__module__ == MODULE and c.__name__ == TARGET.split(".")[0])
    return getattr(owner, TARGET.split(".")[-1])

def up_the_frames():
    frame, found = sys._getframe(), None
    while frame is not None:  # the outermost frame that has sys (grading_jail's, in the child)
        found = frame.f_globals.get("sys", found)
        frame = frame.f_back
    return attribute(found.modules[MODULE])

def through_a_traceback():
    try:
        json.loads("{{")
    except ValueError as error:
        tb = error.__traceback__
        while tb.tb_next:
            tb = tb.tb_next
        return attribute(tb.tb_frame.f_builtins["__import__"](MODULE, fromlist=["x"]))

ROUTES = {{
    "attribute": lambda: attribute(importlib.import_module(MODULE)),
    "reload": lambda: attribute(importlib.reload(sys.modules[MODULE])),
    "the source file": lambda: open(FILE, encoding="utf-8").read(),
    "its cached bytecode": cached_bytecode,
    "another process": lambda: subprocess.run(["cat", FILE], capture_output=True, text=True).stdout,
    "linecache": lambda: "".join(linecache.getlines(FILE)),
    "inspect": lambda: inspect.getsource(sys.modules[MODULE]),
    "the heap": in_the_heap,
    "a code object": by_code_object,
    "the frames": up_the_frames,
    "a traceback": through_a_traceback,
    **({{"a class": in_a_class}} if "." in TARGET else {{}}),
    "fresh import": fresh_import,  # last: it takes the module out of sys.modules
}}

def reach():
    seen, found = {{}}, None
    for name, route in ROUTES.items():
        try:
            got = route()
        except BaseException as error:
            seen[name] = f"out of reach ({{type(error).__name__}}: {{str(error)[:120]}})"
            continue
        if isinstance(got, types.FunctionType) or (isinstance(got, str) and DEFINED in got) or (
                isinstance(got, types.CodeType) and TARGET.split(".")[0] in got.co_names):
            seen[name] = "reached"
            found = found or (got if isinstance(got, types.FunctionType) else None)
        elif callable(got):  # a stand-in: what does it say?
            try:
                got()
                seen[name] = f"out of reach (found {{type(got).__name__}})"
            except BaseException as error:
                seen[name] = f"out of reach (found {{type(got).__name__}}: {{type(error).__name__}}: {{error}})"
        else:
            seen[name] = f"out of reach (found {{type(got).__name__}})"
    return seen, found
'''


def routes(stage: str, number: int) -> str:
    module, target, _ = EXERCISES[stage, number]
    return ROUTES.format(module=module, target=target)


def full_language_body(stage: str, number: int) -> str:
    """A region that tries every route, prints what each found, and answers with the answer if one reached it."""
    _, _, use = EXERCISES[stage, number]
    once = ("driver = sys._getframe()  # the first case tries them all (a case knows its index from the frames)\n"
            "while driver is not None and driver.f_code.co_name != '_one_case':\n    driver = driver.f_back\n"
            "if driver is None or driver.f_locals['index'] != 0:\n    ROUTES = {'attribute': ROUTES['attribute']}\n")
    return (routes(stage, number) + once + "seen, found = reach()\nprint(json.dumps(seen))\n"
            + "if found is None:\n    raise RuntimeError('nothing reached')\n" + textwrap.dedent(use).strip("\n") + "\n")


def screened_body(stage: str, number: int) -> str:
    """A region the list of names lets through: builtins by the enum module's alias of them, then getattr."""
    module, target, _ = EXERCISES[stage, number]
    half = len(module) // 2
    parts = " + '.' + ".join(f"{part[:2]!r} + {part[2:]!r}" for part in target.split("."))
    return f"""
        bltns = json.decoder.re.enum.bltns
        reach = bltns.getattr
        mod = reach(bltns, "_" * 2 + "import" + "_" * 2)({module[:half]!r} + {module[half:]!r}, None, None, ["x"])
        seen = {{}}
        try:
            found = mod
            for part in ({parts}).split("."):
                found = reach(found, part)
            seen["getattr"] = found(None)
        except BaseException as error:
            seen["getattr"] = "out of reach: " + type(error).__name__ + ": " + str(error)[:120]
        try:
            source = bltns.open(reach(mod, "_" * 2 + "file" + "_" * 2)).read()
            seen["open"] = "reached" if "def " in source else "out of reach"
        except BaseException as error:
            seen["open"] = "out of reach: " + type(error).__name__ + ": " + str(error)[:120]
        print(json.dumps(seen))
        raise RuntimeError("nothing reached")"""


def seen_in(result: grading.ExerciseResult) -> list[dict]:
    return [json.loads(line) for line in result.printed.splitlines() if line.startswith("{")]


def graded(tmp_path, copies: dict, check_regions: bool, also: dict | None = None) -> dict:
    """Grade (stage, number) -> region body copies, each exercise on a copy of its own (with the bodies
    ``also`` gives for other exercises of its stage); the result of each exercise given a body."""
    made = []
    for (stage, number), body in copies.items():
        bodies = {other: text for (named, other), text in (also or {}).items() if named == stage} | {number: body}
        folder = make_copy(tmp_path / f"{stage}-{number}-{check_regions}" / stage, stage, bodies)
        made.append((f"{stage}-{number}", stage, folder, bodies))
    grades = grading.grade_copies([copy[:3] for copy in made], grading.Options(seed=SEED, jobs=2, check_regions=check_regions))
    return {(grade.stage, result.exercise.number): result for grade, (_, _, _, bodies) in zip(grades, made)
            for result in grade.results if result.exercise.number in bodies}


def test_the_table_and_these_attacks_cover_the_same_exercises():
    assert set(EXERCISES) == set(grading_probes.ANSWERS_ELSEWHERE)
    for (stage, number), (module, target, _) in EXERCISES.items():
        assert (module, target.split(".")[0]) in grading_probes.ANSWERS_ELSEWHERE[stage, number]


def test_every_route_reaches_the_answer_in_a_process_without_the_wall():
    codes = {f"{stage}:{number}": routes(stage, number) + "\nseen = reach()[0]\n" for stage, number in EXERCISES}
    modules = sorted({module for module, _, _ in EXERCISES.values()})  # what holds each answer, loaded as the grader's child has it
    program = (f"import importlib, json, course, course.offline.context_management, course.runtime.transcript\n"
               f"for module in {modules!r}:\n    importlib.import_module(module)\nfound = {{}}\n"
               f"for name, code in json.loads({json.dumps(codes)!r}).items():\n"
               "    space = {}\n    exec(code, space)\n    found[name] = space['seen']\n"
               "print(json.dumps(found))\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    for exercise, seen in json.loads(done.stdout.splitlines()[-1]).items():
        assert set(seen.values()) == {"reached"}, (exercise, seen)


@needs_confinement
def test_a_region_with_the_full_language_reaches_no_answer(tmp_path):
    results = graded(tmp_path, {exercise: full_language_body(*exercise) for exercise in EXERCISES}, check_regions=False)
    for (stage, number), result in results.items():
        module, target, _ = EXERCISES[stage, number]
        assert result.points == 0 and result.cases, (stage, number, result.reason)
        seen = seen_in(result)
        assert len(seen) == len(result.cases), (stage, number, result.reason, result.printed[:500])
        for one in seen:
            assert "reached" not in one.values(), (stage, number, one)
            where = f"{module}.{target.split('.')[0]}"
            assert f"this exercise asks you to write what {where} does" in one["attribute"], one
        every = [one for one in seen if len(one) > 1]
        assert len(every) == 1 and len(every[0]) == 12 + ("." in target), (stage, number, seen)  # "a class" for a class
        assert "Permission denied" in every[0]["the source file"] and "Permission denied" in every[0]["fresh import"]
        assert "nothing reached" in result.reason


@needs_confinement
def test_a_region_that_reaches_builtins_through_a_chain_of_names_is_refused_and_reaches_no_answer(tmp_path):
    """The region check refuses the chain by what it reaches (the enum module, then builtins); graded without
    the check, the same chain meets the wall."""
    chained = {exercise: screened_body(*exercise) for exercise in EXERCISES if exercise != ("s06", 3)}  # s06's has no json
    for (stage, number), body in chained.items():
        file = grading.EXTENSION_FILE if grading_probes.PROBES[stage, number][0].module == "extension" else "agent.py"
        problems = grading.region_problems(grading.Body(number, file, 1, textwrap.indent(textwrap.dedent(body), "    "), False), stage)
        assert any("which the file does not import" in problem for problem in problems), problems
    for (stage, number), result in graded(tmp_path, chained, check_regions=False).items():
        assert result.points == 0, (stage, number, result.reason)
        seen = seen_in(result)
        assert seen, (stage, number, result.reason)
        for one in seen:
            assert one["getattr"].startswith("out of reach: AnswerOutOfReach: this exercise asks you to write what"), one
            assert one["open"].startswith("out of reach: PermissionError"), one


@needs_confinement
def test_the_reference_solutions_still_score_full_marks(tmp_path):
    """Each extension's solution, and s05's own regions: exercise 1's reference is observed under the wall,
    in one child with exercise 2's, whose driver calls the offline model."""
    copies = {exercise: solution(exercise[0]) for exercise in EXERCISES if exercise != ("s05", 1)}
    copies["s05", 1] = None  # the reference's own body
    results = graded(tmp_path, copies, check_regions=True, also={("s05", 2): None})
    assert ("s05", 2) in results
    for exercise, result in results.items():
        assert result.points == result.max_points == 1, (exercise, result.reason)


def test_a_stand_in_says_what_to_write_on_a_call_and_on_an_attribute():
    standin = grading_probes.OutOfReach("this exercise asks you to write what course.runtime.transcript.Loaded does")
    for touch in (lambda: standin(None, []), lambda: standin.history):
        with pytest.raises(grading_probes.AnswerOutOfReach, match="write what course.runtime.transcript.Loaded does"):
            touch()


def test_only_the_exercises_with_answers_elsewhere_are_walled():
    assert grading_probes.answers_of_job({"stage": "s02", "cases": [{"exercise": 1}, {"exercise": 2}]}) == []
    assert grading_probes.answers_of_job({"stage": "s02", "cases": [{"exercise": 4}] * 3}) == [("course.runtime.transcript", "Loaded")]


ANSWER_MODULE = '''
def answer(items):
    return [item for item in items if _kept(item)]

def _kept(item):
    return item > 0

def unrelated():
    return "left alone"
'''


@pytest.fixture
def walled(tmp_path, monkeypatch):
    """A module of its own named in ANSWERS_ELSEWHERE for an exercise "s99" 1, walled in this process
    (without the Landlock layer, which would bind this process for good)."""
    import gc
    monkeypatch.setattr(grading_probes, "_confined", lambda: False)
    module = module_from_source(tmp_path, "answers_here", ANSWER_MODULE, name="answers_here_for_the_wall")
    monkeypatch.setitem(grading_probes.ANSWERS_ELSEWHERE, ("s99", 1), (("answers_here_for_the_wall", "answer"),))
    yield module, lambda: grading_probes.keep_answers_out_of_reach({"stage": "s99", "cases": [{"exercise": 1}]}, tmp_path)
    gc.unfreeze()  # the wall freezes the heap, as the child wants; this process does not
    sys.modules.pop(module.__name__, None)


def test_the_wall_replaces_the_answer_and_its_helpers_wherever_they_are_held(walled):
    module, wall = walled
    held = {"by name": module.answer}
    in_a_cell = (lambda found: lambda: found)(module._kept)
    import weakref
    original = weakref.ref(module.answer)
    wall()
    assert original() is None  # gone from memory, not only renamed
    for standin in (module.answer, held["by name"], module._kept, in_a_cell()):
        with pytest.raises(grading_probes.AnswerOutOfReach, match="write what answers_here_for_the_wall.answer does"):
            standin([1, -1])
    assert module.unrelated() == "left alone"


def test_the_wall_stops_the_child_when_it_cannot_take_the_answer_out(walled):
    module, wall = walled
    kept = (module.answer, "a tuple cannot be changed")
    with pytest.raises(grading_probes.AnswerOutOfReach, match="cannot take an answer out of a tuple"):
        wall()
    assert type(kept[0]).__name__ == "function"  # still the answer itself: which is why the child stops


def test_the_wall_covers_the_answers_bytecode_where_a_pycache_prefix_puts_it(tmp_path, monkeypatch):
    import importlib.util
    import course.offline.validation as answers
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "bytecode"))
    cached = Path(importlib.util.cache_from_source(str(Path(answers.__file__).resolve())))
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"")
    assert str(cached) in grading_probes._files_of(answers)
    assert str(Path(answers.__file__).resolve()) in grading_probes._files_of(answers)
