"""What the grader asks of each exercise: cases drawn per run, run on a copy in a confined child, judged here.

Each exercise is a ``Probe``: ``cases(rng)`` draws its cases in the grading process (numbers, names,
folder names and texts come from the run's seed, so nothing a student could hard-code stays the same
from run to run); ``drive(module, params, work)`` runs one case in the confined child, on the copy,
and returns what it observed as JSON; ``judge(case, got, want)`` decides, back in the grading process,
whether that observation is right. ``want`` is the reference stage's own observation of the same
case (run in a child of its own that holds no student code), or None for an exercise judged only by
what its cases were built to expect (the extension exercises: their answers are known by
construction, so the course ships no solution of them).

The split is the guarantee: the child only reports what the copy did, never whether that was right,
so the code a student writes can change its own answers and nothing else. An observation the child
forges is just an answer; to forge a right one, the copy has to compute it.
"""

from __future__ import annotations

import json
import random
import re
import string
import types
from pathlib import Path

from course.grading.cases.common import *  # noqa: F403  the names instructors' case files and the grader import from here
from course.grading.cases.common import ANSWERS_ELSEWHERE, Case, Probe, PROBES, probe, probes_for  # noqa: F401
from course.grading import cases as _cases  # noqa: F401,E402  registers every stage's probes


# ---------------------------------------------------------------------------------------------
# Keeping those answers out of reach while their exercise is graded

# The region check above is a screen, not a wall: a chain of names it lets through (the enum module's
# alias of builtins, say) reaches getattr, and so anything. What holds is done in the child before the
# copy is imported (course.grading.jail._work calls keep_answers_out_of_reach), for each exercise of the
# job that ANSWERS_ELSEWHERE names, so that whatever the copy's code does in its process, the answer is
# not there to find and cannot be made again:
#
# - the object, and every function of its module its code reaches by name (validate_request's checks live
#   in helpers), is replaced wherever anything holds it (gc.get_referrers over the whole heap, once) by a
#   stand-in that says what to do instead; a class is emptied of its functions. Then each replaced function
#   and each of its code objects must be gone from memory (a weak reference to it is dead), else the child
#   stops: nothing of the copy runs with an answer still alive somewhere;
# - its source and cached bytecode cannot be read: one more Landlock layer, which handles reading files
#   only, grants it on everything the child could read except those files (Landlock layers stack, and
#   each can only take rights away: https://docs.kernel.org/userspace-api/landlock.html). So exec(open(...)),
#   importlib.reload and a fresh interpreter started by the copy all meet a PermissionError; linecache's
#   copies of those lines are dropped.
#
# Nothing the child runs legitimately calls these while such an exercise is graded (the drivers of these
# five exercises call only the copy's function; the offline model's checks are not needed by them), so
# the stand-in refuses every caller: there is no caller check to forge. What the wall does not claim: the
# heap of a process is not wiped, and ctypes (which the child has loaded) reads raw memory, so bytes of a
# freed function could in principle be dug out of it; no object, file or module to call is left.


class AnswerOutOfReach(RuntimeError):
    """Raised by what stands where the support package's answer to the exercise being graded was."""


class OutOfReach:
    """Stands where the support package's answer to the graded exercise was: any call or attribute says so."""

    __slots__ = ("_message",)

    def __init__(self, message: str):
        object.__setattr__(self, "_message", message)

    def __call__(self, *args, **kwargs):
        raise AnswerOutOfReach(self._message)

    def __getattr__(self, name):
        raise AnswerOutOfReach(self._message)

    def __repr__(self) -> str:
        return f"<out of reach: {self._message}>"


def answers_of_job(order: dict) -> list[tuple[str, str]]:
    """The (module, name) answers of the exercises a child's job runs, each once."""
    exercises = {case["exercise"] for case in order.get("cases", [])}
    return list(dict.fromkeys(answer for number in sorted(exercises)
                              for answer in ANSWERS_ELSEWHERE.get((order["stage"], number), ())))


def keep_answers_out_of_reach(order: dict, copy: Path) -> None:
    """In the graded child, before the copy is imported: the answers of this job's exercises replaced in
    memory and gone, their files unreadable (when the child is confined). ``copy``: the job's copy folder.
    Raises when either cannot be made so: the exercise then fails, it never runs with the answer in reach."""
    answers = answers_of_job(order)
    if not answers:
        return
    import gc
    import importlib
    import linecache

    modules, gone = [], []
    for module_name, name in answers:
        modules.append(importlib.import_module(module_name))
        gone += _replace_everywhere(modules[-1], name)
    if any(ref() is not None for ref, _ in gone):
        gc.collect()  # what only a cycle still held (none is known: this costs a fifth of a second)
    alive = [shown for ref, shown in gone if ref() is not None]
    if alive:
        raise AnswerOutOfReach(f"the grader could not take {alive[0]} out of the child's memory")
    files = sorted({path for module in modules for path in _files_of(module)})
    for path in files:
        linecache.cache.pop(path, None)
    if _confined():
        _unreadable(files, Path(copy).parent, order.get("readable", []))


# An instructor's hidden cases (--extra-tests) are a file the child imports for its drivers; the same file
# draws the cases and judges them, in the grading process, and may hold the solver that computes what each
# case expects. In the child, once the file is imported and before the copy is, only what its drivers reach
# is left of it (keep_only_the_drivers): its probes' cases and judge are stand-ins, every global of the file
# no driver names is deleted (so a solver only the cases or the judge use is gone from memory), the probe
# classes lose their cases and judge, and the file cannot be read again (a Landlock layer, as above).


def keep_only_the_drivers(modules: list, files: list[str], order: dict, copy: Path, work: Path) -> None:
    """In the graded child, after the instructor's ``files`` were imported as ``modules``, before the copy is
    (``copy``: the job's copy folder; ``work``: the child's scratch folder)."""
    import dataclasses
    import linecache

    origins = {str(Path(path).resolve()) for path in files}
    standin = OutOfReach("an instructor's cases are drawn and judged by the grader, outside the child")
    drivers = []
    for found in PROBES.values():
        for position, one in enumerate(found):
            if one.origin in origins:
                drivers.append(one.drive)
                found[position] = dataclasses.replace(one, cases=standin, judge=standin)
    for module in modules:
        namespace = module.__dict__
        for value in list(namespace.values()):
            if isinstance(value, type) and any(value.__dict__.get("drive") is driver for driver in drivers):
                for name in ("cases", "judge"):
                    if name in value.__dict__:
                        delattr(value, name)
        kept = _named_by([driver for driver in drivers if getattr(driver, "__globals__", None) is namespace], namespace)
        for name in [name for name in namespace if name not in kept and not name.startswith("__")]:
            del namespace[name]
    for path in files:
        linecache.cache.pop(str(path), None)
        linecache.cache.pop(str(Path(path).resolve()), None)
    if _confined():
        # The job's folder holds the hidden files (in its probes folder) and cannot be listed by the child, so
        # what may be read in it is named: the copy, the scratch folder, the probes folder but those files.
        _unreadable([str(Path(path).resolve()) for path in files], Path(copy).parent,
                    [str(copy), str(work), *order.get("readable", [])])


def _named_by(functions: list, namespace: dict) -> set:
    """The globals of ``namespace`` the functions name, and those named by what they name, and so on (a name
    an attribute shares with a global counts: more is kept, never less)."""
    kept, codes, seen = set(), [function.__code__ for function in functions], set()

    def codes_of(value) -> list:
        value = getattr(value, "__func__", value)  # a staticmethod's or classmethod's function
        if isinstance(value, types.FunctionType):
            cells = [cell.cell_contents for cell in value.__closure__ or () if _filled(cell)]
            return [value.__code__] + [code for inner in [*cells, *(value.__defaults__ or ())] for code in codes_of(inner)]
        if isinstance(value, type):
            return [code for name, inner in vars(value).items() if name not in ("cases", "judge")
                    for code in codes_of(inner)]
        if isinstance(value, property):
            return [code for inner in (value.fget, value.fset, value.fdel) if inner for code in codes_of(inner)]
        return []
    for function in functions:
        codes += [code for inner in function.__closure__ or () if _filled(inner) for code in codes_of(inner.cell_contents)]
    while codes:
        code = codes.pop()
        if id(code) in seen:
            continue
        seen.add(id(code))
        codes += [const for const in code.co_consts if isinstance(const, types.CodeType)]
        for name in code.co_names:
            if name in namespace and name not in kept:
                kept.add(name)
                codes += codes_of(namespace[name])
    return kept


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _replace_everywhere(module, name: str) -> list:
    """Put a stand-in wherever the heap holds the answer or a function of its module it reaches; returns a
    (weak reference, name) for each of those functions and code objects, which must now be gone."""
    import gc
    import sys
    import weakref

    answer = getattr(module, name)
    where = f"{module.__name__}.{name}"
    functions = _reached(answer, module)
    standins = {}
    for function in functions:
        shown = f"{function.__module__}.{function.__qualname__}"
        standins[id(function)] = OutOfReach(f"this exercise asks you to write what {where} does"
                                            + ("" if shown in (where, f"{where}.{function.__name__}") else f" ({shown} is part of it)"))
    gone = [(weakref.ref(function), f"{function.__module__}.{function.__qualname__}") for function in functions]
    # The code objects written in the module (a dataclass's generated __repr__ runs the dataclasses module's
    # code, which every dataclass shares).
    gone += [(weakref.ref(code), f"the code of {function.__qualname__}") for function in functions
             for code in _codes(function.__code__) if code.co_filename == module.__file__]
    if isinstance(answer, type):  # a class is emptied of its functions: a class lives on in its own cycles
        standins[id(answer)] = OutOfReach(f"this exercise asks you to write what {where} does")
        for key, value in list(vars(answer).items()):
            if _functions_in(value):
                type.__setattr__(answer, key, standins[id(answer)])
    gc.unfreeze()  # what was imported before the fork is frozen (grading_jail), and get_referrers does not look there
    try:
        _swap_all(gc.get_referrers(answer, *functions), standins, answer, {id(functions)})
    finally:
        gc.freeze()  # and frozen again: a collection would copy every page of it into this fork
    sys._clear_type_cache()  # a class's own dict changed in place: no lookup may still find what it held
    return gone


def _swap_all(holders: list, standins: dict, answer, mine: set) -> None:
    """Each reference a holder keeps to a target, pointed at its stand-in. A holder of a kind this cannot
    change stops the child (fail closed): nothing of the copy runs beside an answer still held."""
    import types
    for holder in holders:
        if id(holder) in mine or isinstance(holder, types.FrameType):
            continue
        if isinstance(holder, dict):
            for key, value in list(holder.items()):
                if id(value) in standins:
                    holder[key] = standins[id(value)]
        elif isinstance(holder, list):
            holder[:] = [standins.get(id(value), value) for value in holder]
        elif isinstance(holder, types.CellType):
            holder.cell_contents = standins[id(holder.cell_contents)]
        elif isinstance(answer, type) and (isinstance(holder, (answer, type)) or getattr(holder, "__objclass__", None) is answer
                                           or (isinstance(holder, tuple) and answer in holder and all(isinstance(item, type) for item in holder))):
            continue  # the emptied class's instances, subclasses, descriptors and own __mro__: no function of it
        else:
            raise AnswerOutOfReach(f"the grader cannot take an answer out of a {type(holder).__name__}")


def _reached(answer, module) -> list:
    """The answer's functions (a class's own, or the function itself) and, through the names their code
    uses, every function of its own module they reach."""
    import types
    waiting = [part for value in vars(answer).values() for part in _functions_in(value)] \
        if isinstance(answer, type) else [answer]
    found = []
    while waiting:
        function = waiting.pop()
        if any(function is known for known in found):
            continue
        found.append(function)
        for code in _codes(function.__code__):
            for name in code.co_names:
                value = vars(module).get(name)
                if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
                    waiting.append(value)
    return found


def _functions_in(value) -> list:
    import types
    if isinstance(value, types.FunctionType):
        return [value]
    if isinstance(value, property):
        return [part for part in (value.fget, value.fset, value.fdel) if isinstance(part, types.FunctionType)]
    if isinstance(value, (staticmethod, classmethod)) and isinstance(value.__func__, types.FunctionType):
        return [value.__func__]
    return []


def _codes(code) -> list:
    """A code object and those nested in it (its inner functions, comprehensions, lambdas)."""
    import types
    found = [code]
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            found += _codes(constant)
    return found


def _files_of(module) -> list[str]:
    """The module's source and every cached bytecode of it: in its __pycache__ folder, and where
    PYTHONPYCACHEPREFIX puts it instead (sys.pycache_prefix, a tree that mirrors the source's path:
    https://docs.python.org/3/library/sys.html#sys.pycache_prefix)."""
    import importlib.util
    source = Path(module.__file__).resolve()
    folders = {source.parent / "__pycache__", Path(importlib.util.cache_from_source(str(source))).parent}
    cached = sorted(str(path) for folder in folders if folder.is_dir() for path in folder.glob(f"{source.stem}.*.pyc"))
    return [str(source), *cached]


def _confined() -> bool:
    """Whether the child runs under no_new_privs (course.grading.jail sets it before Landlock): only then
    can it add a Landlock layer, and only then is there a confinement for the layer to narrow."""
    from course.sandbox.kernel.calls import libc
    return libc().prctl(39, 0, 0, 0, 0) == 1  # PR_GET_NO_NEW_PRIVS


# The folders a child may be granted beside the ones named (course.grading.jail._landlock grants the system
# folders, the Python that runs it, the support package, the job): this layer grants reading in all of them,
# so that it narrows the child's confinement by the answers' files and nothing else.
TOP_FOLDERS = ("/bin", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc", "/run", "/sbin", "/srv",
               "/sys", "/tmp", "/usr", "/var")


def _unreadable(files: list[str], job: Path, readable: list) -> None:
    """One more Landlock layer: a file may be read wherever the child could read one, except ``files``.
    The layer handles only LANDLOCK_ACCESS_FS_READ_FILE, so what the child may write, list or run is as it was."""
    import os
    from course.sandbox import kernel
    from course.sandbox.kernel import landlock

    hidden = {Path(path) for path in files}
    grants: list[Path] = []

    def holds_hidden(path: Path) -> bool:
        return any(path in file.parents for file in hidden)

    def split(folder: Path) -> None:  # every entry of a folder that holds a hidden file, but that file
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:  # a folder the child cannot list is granted through the deeper folders it may read
            return
        for entry in entries:
            path = Path(entry.path)
            if path in hidden or entry.is_symlink():  # a rule on a link would grant where it points
                continue
            if entry.is_dir(follow_symlinks=False) and holds_hidden(path):
                split(path)
            else:
                grants.append(path)

    roots = [*landlock.SYSTEM_FOLDERS, *kernel._python_prefixes(), str(kernel.SUPPORT_PACKAGE), str(job),
             *readable, *TOP_FOLDERS]
    for root in dict.fromkeys(Path(os.path.realpath(path)) for path in roots):
        if root in hidden or not os.path.exists(root):
            continue
        if holds_hidden(root):
            split(root)
        else:
            grants.append(root)

    landlock.add_layer(landlock.READ_FILE, [(str(path), landlock.READ_FILE) for path in grants])
