"""A mutation audit of the exercises' cases: does a grade of full marks mean the code is right?

For each exercise, small wrong versions of its reference solution (mutants) are graded like a copy, on
several seeds. A mutant that gets full marks on any seed *survives*: the cases let a wrong answer through,
unless that mutant is equivalent (it behaves like the reference wherever the contract speaks; the reason
is listed in ``EQUIVALENT``). ``python -m course grade --audit [STAGE...]`` prints, per exercise, the
mutants made, killed, equivalent and surviving (with their diffs).

The mutants are made from the region's syntax tree (``mutants``), one change each: a comparison, boolean
or arithmetic operator replaced, an integer one more or one less, a condition negated, a statement or a
branch dropped, two statements or two items swapped, ``all`` for ``any``; plus the wrong solutions a
chapter warns about, written out by hand (``WRONG_SOLUTIONS``). A mutation-testing library (mutmut,
cosmic-ray) mutates a package's files and runs its test suite; here only a region is mutated, and a
mutant is judged by the grader's own cases on drawn seeds, so a few dozen lines over ``ast`` fit better.

The rebuild exercises' references are the stage files; an extension's is read from the course's
``tests/grading_solutions/`` (absent from a student edition, where its extension is not audited).
"""

from __future__ import annotations

import ast
import copy
import difflib
import hashlib
import os
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from course.grading import exercises, grade as grading, jail as grading_jail

SOLUTIONS = exercises.REPO_ROOT / "tests" / "grading_solutions"
SEEDS = (11, 22, 33, 44, 55)

COMPARISONS = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE,
               ast.GtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
ARITHMETIC = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
              ast.Div: ast.Mult, ast.Mod: ast.FloorDiv}
SWAPPED_CALLS = {"any": "all", "all": "any", "min": "max", "max": "min"}


@dataclass(frozen=True)
class Mutant:
    what: str    # one line: the change
    text: str    # the region's body, indented as the region is
    key: str     # stable while the reference stays as it is: names the mutant in EQUIVALENT


@dataclass
class Audit:
    exercise: grading.Exercise
    made: int = 0
    killed: int = 0
    equivalent: list = field(default_factory=list)   # (mutant, reason)
    survivors: list = field(default_factory=list)    # (mutant, seed, diff)
    skipped: str = ""                                # why this exercise was not audited


# ---------------------------------------------------------------------------------------------
# Mutants

def _sites(tree: ast.AST) -> list[tuple[int, str]]:
    """(index of a node in ast.walk order, kind of change) for every change the generator makes."""
    sites = []
    for index, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.Compare):
            sites += [(index, f"compare{position}") for position, op in enumerate(node.ops) if type(op) in COMPARISONS]
        elif isinstance(node, ast.BoolOp):
            sites.append((index, "boolop"))
        elif isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
            sites.append((index, "binop"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            sites.append((index, "not"))
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            sites += [(index, "plus"), (index, "minus")]
        elif isinstance(node, ast.Constant) and type(node.value) is bool:
            sites.append((index, "flip"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in SWAPPED_CALLS:
            sites.append((index, "call"))
        elif isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) == 2 and isinstance(node.ctx, ast.Load):
            sites.append((index, "swap items"))
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            sites.append((index, "negate"))
        if isinstance(node, ast.If):
            sites.append((index, "drop branch"))
            if node.orelse:
                sites.append((index, "drop else"))
        if isinstance(node, ast.comprehension) and node.ifs:
            sites.append((index, "drop filter"))
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                sites += [(index, f"drop {name} {position}") for position in range(len(block))]
                sites += [(index, f"swap {name} {position}") for position in range(len(block) - 1)]
    return sites


def _apply(node: ast.AST, kind: str) -> str:
    """Change ``node`` in place; returns what was done (empty when this change does not apply)."""
    if kind.startswith("compare"):
        position = int(kind[7:])
        old = node.ops[position]
        node.ops[position] = COMPARISONS[type(old)]()
        return f"`{_op(old, node)}` became `{_op(node.ops[position], node)}`"
    if kind == "boolop":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return f"`{'or' if isinstance(node.op, ast.And) else 'and'}` became `{'and' if isinstance(node.op, ast.And) else 'or'}`"
    if kind == "binop":
        old = type(node.op)
        node.op = ARITHMETIC[old]()
        return f"an arithmetic operator changed ({old.__name__} to {type(node.op).__name__})"
    if kind == "not":
        return "a `not` dropped"
    if kind in ("plus", "minus"):
        node.value += 1 if kind == "plus" else -1
        return f"a constant {node.value - 1 if kind == 'plus' else node.value + 1} became {node.value}"
    if kind == "flip":
        node.value = not node.value
        return f"{not node.value} became {node.value}"
    if kind == "call":
        old = node.func.id
        node.func.id = SWAPPED_CALLS[old]
        return f"{old}() became {node.func.id}()"
    if kind == "swap items":
        node.elts.reverse()
        return "two items swapped"
    if kind == "negate":
        node.test = ast.UnaryOp(ast.Not(), node.test)
        return "a condition negated"
    if kind == "drop else":
        node.orelse = []
        return "an else branch dropped"
    if kind == "drop filter":
        node.ifs = []
        return "a comprehension's condition dropped"
    action, name, position = kind.split()
    block, position = getattr(node, name), int(position)
    if action == "drop":
        del block[position]
        if not block and name == "body":
            block.append(ast.Pass())
        return "a statement dropped"
    block[position], block[position + 1] = block[position + 1], block[position]
    return "two statements swapped"


def _op(op: ast.cmpop, _) -> str:
    return {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.In: "in",
            ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}[type(op)]


class _DropNot(ast.NodeTransformer):
    def __init__(self, target):
        self.target = target

    def visit_UnaryOp(self, node):
        return node.operand if node is self.target else self.generic_visit(node)


class _DropBranch(ast.NodeTransformer):
    def __init__(self, target):
        self.target = target

    def generic_visit(self, node):
        super().generic_visit(node)
        return node

    def visit_If(self, node):
        if node is self.target:
            return node.orelse or ast.Pass()
        return self.generic_visit(node)


def mutants(body: str) -> list[Mutant]:
    """Every one-change mutant of a region's body (its statements, indented as in the file). Mutants that
    unparse to the same code as the reference, or to code that does not compile, are left out."""
    indent = exercises._indentation(next(line for line in body.splitlines() if line.strip()))
    tree = ast.parse(textwrap.dedent(body))
    original = ast.unparse(tree)
    found, seen = [], {original}
    for index, kind in _sites(tree):
        changed = copy.deepcopy(tree)
        node = list(ast.walk(changed))[index]
        if kind == "not":
            changed, what = _DropNot(node).visit(changed), "a `not` dropped"
        elif kind == "drop branch":
            changed, what = _DropBranch(node).visit(changed), "an if's branch dropped (its else, if any, kept)"
        else:
            what = _apply(node, kind)
        ast.fix_missing_locations(changed)
        try:
            text = ast.unparse(changed)
            compile(text, "<mutant>", "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)
        except (SyntaxError, ValueError, TypeError, AttributeError):
            continue
        if text in seen:
            continue
        seen.add(text)
        line = _changed_line(original, text)
        found.append(Mutant(f"{what} (line {line} of the region)", textwrap.indent(text + "\n", indent), _key(text)))
    return found


def _changed_line(before: str, after: str) -> int:
    for number, (old, new) in enumerate(zip(before.splitlines(), after.splitlines()), 1):
        if old != new:
            return number
    return min(len(before.splitlines()), len(after.splitlines())) + 1


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def diff(reference: str, mutant: str) -> str:
    before = ast.unparse(ast.parse(textwrap.dedent(reference))).splitlines()
    after = textwrap.dedent(mutant).rstrip("\n").splitlines()
    return "\n".join(line for line in difflib.unified_diff(before, after, "reference", "mutant", lineterm="", n=1))


# ---------------------------------------------------------------------------------------------
# The wrong solutions a chapter warns about, written out, and the mutants that are not wrong

WRONG_SOLUTIONS: dict[tuple[str, int], list[tuple[str, str]]] = {
    ("s01", 3): [
        ("a tool_result in any later message counts as the answer, not only in the message right after", """
missing = []
for index, message in enumerate(messages):
    if message["role"] != "assistant" or isinstance(message["content"], str):
        continue
    answered = {block.get("tool_use_id") for later in messages[index + 1:]
                if later["role"] == "user" and isinstance(later["content"], list)
                for block in later["content"] if block.get("type") == "tool_result"}
    missing += [block["id"] for block in message["content"] if block.get("type") == "tool_use" and block["id"] not in answered]
return missing
"""),
    ],
    ("s04", 2): [
        ("the read-on marker counts from the start of the file, not from the call's offset", """
if len(output) <= MAX_RESULT_CHARS:
    return output
if name == "read_file":
    how = f"call read_file with offset={MAX_RESULT_CHARS} to read on"
else:
    how = "ask for less: a narrower path or a more specific search"
return output[:MAX_RESULT_CHARS] + f"\\n[cut: {len(output) - MAX_RESULT_CHARS} of {len(output)} characters not shown; {how}]"
"""),
    ],
    ("s06", 1): [
        ("the first matching rule in list order wins (an allow listed before a deny lets the call through)", """
if call.refused:
    return Verdict("deny", call.refused, "rule")
for rule in rules:
    found = rule.found_in(call) if rule.decision in ("deny", "ask") else ""
    if found:
        return Verdict(rule.decision, f"the rule '{rule}' {found}", "rule")
    if rule.decision == "allow" and all(rule.allows(call.tool, subject) for subject in call.acts_on):
        return Verdict("allow", f"the rule '{rule}' matches", "rule")
for subject in call.acts_on:
    if call.tool == "run_command" and not call.unsafe:
        continue
    default = DEFAULT_DECISION[call.risk]
    if default != "allow":
        return Verdict(default, call.unsafe or f"no rule matches {subject!r}", "default")
if call.tool == "run_command" and not call.unsafe:
    return Verdict("allow", "a plain command of the safe list", "safe list")
return Verdict(DEFAULT_DECISION[call.risk], "no rule matches", "default")
"""),
        ("a person's 'always' is looked at before the deny rules", """
if call.refused:
    return Verdict("deny", call.refused, "rule")
if approval(call.tool, call.acts_on) in approved and not call.once_only:
    return Verdict("allow", f"a person allowed {call.tool} always", "person")
for kind in ("deny", "ask"):
    for rule in rules:
        found = rule.found_in(call) if rule.decision == kind else ""
        if found:
            return Verdict(kind, f"the rule '{rule}' {found}", "rule")
allowed = []
for subject in call.acts_on:
    rule = next((rule for rule in rules if rule.decision == "allow" and rule.allows(call.tool, subject)), None)
    if rule:
        allowed.append(Verdict("allow", f"the rule '{rule}' matches {subject!r}", "rule"))
    elif call.tool == "run_command" and not call.unsafe:
        allowed.append(Verdict("allow", "a plain command of the safe list", "safe list"))
    else:
        default = DEFAULT_DECISION[call.risk]
        if default != "allow":
            return Verdict(default, call.unsafe or f"no rule matches {subject!r}", "default")
        allowed.append(Verdict(default, "no rule matches", "default"))
return allowed[0]
"""),
    ],
}

# (stage, exercise) -> {mutant key: why it is right wherever the contract speaks}
EQUIVALENT: dict[tuple[str, int], dict[str, str]] = {
    ("s02", 1): {
        "42f3edfb14": "the reason is recorded in two places that do not depend on each other, in the other order",
        "2560d54ab9": "the trace is told before the list is appended to: neither reads the other",
    },
    ("s02", 3): {
        "fcd41cabbb": "only the words of the error's message change; the cases pin its type, never its wording",
    },
    ("s05", 1): {
        "9f51656196": "two lookups that do not depend on each other, in the other order",
        "4d489e2aa9": "the stub's wording is free (the contract asks for a shorter text): non-ASCII arguments escaped still say the same",
    },
    ("s04", 1): {
        "f156957f5f": "get_close_matches lists the best match first: asking for two still names the same closest tool",
        "39bec5c1f4": "with n=1 the list holds one match at most: its last item is its first",
    },
    ("s04", 2): {
        "0e83cf392b": "the marker's advice is made before the early return of a short result: made, then not used",
    },
    ("s01", 3): {
        "d1239a8cc7": "the next message is looked up before the check that skips the message: a lookup, no effect",
        "668d99bb2b": "two assignments that do not depend on each other, in the other order",
        "4af3fd4f37": "only a tool_result block carries a tool_use_id in a user message the contract allows",
    },
}


# ---------------------------------------------------------------------------------------------
# Grading the mutants

def reference_body(exercise: grading.Exercise) -> str | None:
    """The body of the exercise's reference solution, indented as its region is; None when this checkout
    holds none (an extension, in a student edition)."""
    if exercise.extension:
        path = SOLUTIONS / f"{exercise.stage}.py"
        # the file holds the body indented as in a function; dedented first, or it would be indented twice
        return textwrap.indent(textwrap.dedent(path.read_text(encoding="utf-8")).strip("\n") + "\n", "    ") if path.is_file() else None
    region = next(r for r in exercises.stage_regions(exercise.stage) if r.number == exercise.number)
    lines = grading.reference_files(exercise.stage)[region.file].splitlines(keepends=True)
    return "".join(lines[region.start:region.end - 1])


def all_mutants(exercise: grading.Exercise, body: str) -> list[Mutant]:
    indent = exercises._indentation(next(line for line in body.splitlines() if line.strip()))
    written = [Mutant(f"wrong on purpose: {what}", textwrap.indent(textwrap.dedent(text).strip("\n") + "\n", indent),
                      _key(textwrap.dedent(text).strip()))
               for what, text in WRONG_SOLUTIONS.get((exercise.stage, exercise.number), [])]
    return written + mutants(body)


def full_marks_on(exercise: grading.Exercise, text: str, seeds, options: grading.Options) -> int | None:
    """The first seed on which this body of the exercise gets full marks, or None."""
    found = seeds_of_full_marks(exercise, text, seeds, options)
    return found[0] if found else None


def seeds_of_full_marks(exercise: grading.Exercise, text: str, seeds, options: grading.Options) -> list[int]:
    """The seeds on which this body of the exercise gets full marks. The cases of every seed run in one
    child (a child costs more than its cases) and are judged seed by seed, as a grading would."""
    body = grading.Body(exercise.number, exercise.file, 1, text, False)
    readies = {seed: grading.prepare_exercise(exercise, body, seed, options) for seed in seeds}
    if any(ready.result is not None for ready in readies.values()):
        return []  # refused before running (the region check): never full marks
    probes = grading.grading_probes.probes_for(exercise.stage, exercise.number, options.extra_tests)
    jobs = [{"exercise": exercise.number, "probe": index, "params": case.params}
            for ready in readies.values() for index, case in ready.drawn]
    run = grading.run_child(exercise.stage, readies[seeds[0]].files, probes[0].module, jobs, options)
    offset, full = 0, []
    for seed, ready in readies.items():
        wants = grading.reference_observations(exercise.stage, exercise.number, seed, options) \
            if grading._judged_by_reference(exercise.stage, exercise.number, options) else {}
        passed = True
        for position, (index, case) in enumerate(ready.drawn):
            got = run.observations.get(offset + position)
            try:
                passed = passed and got is not None and not probes[index].judge(case, got, wants.get(position))
            except Exception:
                passed = False
        offset += len(ready.drawn)
        if passed and ready.drawn and not run.import_error:
            full.append(seed)
    return full


def audit_exercise(exercise: grading.Exercise, options: grading.Options, seeds=SEEDS, sample: int = 0,
                   jobs: int = 0, only_written: bool = False) -> Audit:
    """Grade the exercise's mutants on ``seeds``; ``sample``: only the hand-written ones and every
    ``sample``-th generated one (a quick check; the command audits all); ``only_written``: the hand-written
    ones alone."""
    audit = Audit(exercise)
    body = reference_body(exercise)
    if body is None:
        audit.skipped = "no reference solution in this checkout"
        return audit
    rewritten = "" if only_written else textwrap.indent(ast.unparse(ast.parse(textwrap.dedent(body))) + "\n", exercises._indentation(body.splitlines()[0]))
    # (the check of the hand-written ones alone leaves this to the full audit, which makes it once)
    short = [seed for seed in seeds if seed not in seeds_of_full_marks(exercise, rewritten, seeds, options)] if rewritten else []
    if short:  # on every seed: a case the reference fails would kill mutants for the wrong reason
        audit.skipped = (f"the reference, rewritten from its syntax tree, does not get full marks on seed {short[0]}: "
                         "the audit would mean nothing")
        return audit
    found = all_mutants(exercise, body)
    if only_written:
        found = [m for m in found if m.what.startswith("wrong on purpose")]
    elif sample:
        found = [m for m in found if m.what.startswith("wrong on purpose")] + \
                [m for m in found if not m.what.startswith("wrong on purpose")][::sample]
    listed = EQUIVALENT.get((exercise.stage, exercise.number), {})
    audit.made = len(found)
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        outcomes = list(pool.map(lambda mutant: full_marks_on(exercise, mutant.text, seeds, options), found))
    for mutant, seed in zip(found, outcomes):
        if mutant.key in listed:
            audit.equivalent.append((mutant, listed[mutant.key]))
        elif seed is None:
            audit.killed += 1
        else:
            audit.survivors.append((mutant, seed, diff(body, mutant.text)))
    return audit


def audit(stages: list[str], options: grading.Options, seeds=SEEDS, sample: int = 0, numbers=None) -> list[Audit]:
    grading.pin_versions(stages)
    options.confine = options.confine and not grading_jail.available()
    results = []
    for stage in stages:
        for exercise in grading.stage_exercises(stage):
            if numbers is None or exercise.number in numbers:
                results.append(audit_exercise(exercise, options, seeds, sample, options.jobs))
    return results


def report(results: list[Audit], seeds=SEEDS) -> str:
    lines = [f"mutation audit on seeds {', '.join(map(str, seeds))}: a mutant survives if it gets full marks on any of them",
             f"{'exercise':<58} {'made':>5} {'killed':>6} {'equiv.':>6} {'survive':>7}"]
    for found in results:
        name = f"{found.exercise.stage} {found.exercise.number}: {found.exercise.title}"[:58]
        if found.skipped:
            lines.append(f"{name:<58} not audited: {found.skipped}")
            continue
        lines.append(f"{name:<58} {found.made:>5} {found.killed:>6} {len(found.equivalent):>6} {len(found.survivors):>7}")
    for found in results:
        for mutant, reason in found.equivalent:
            lines.append(f"\n{found.exercise.stage} {found.exercise.number} equivalent [{mutant.key}] {mutant.what}: {reason}")
        for mutant, seed, shown in found.survivors:
            lines.append(f"\n{found.exercise.stage} {found.exercise.number} SURVIVES [{mutant.key}] {mutant.what}; "
                         f"full marks on seed {seed}\n{shown}")
    return "\n".join(lines)
