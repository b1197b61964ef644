"""Copy-forward that cannot drift: each stage is the one before it plus what course/changes.py declares.

Every top-level definition of a stage's modules (``agent.py`` and any module beside it) is compared
with the same definition of the stage before, by its syntax tree (``ast.dump``: docstrings count,
comments and layout do not). A definition that is changed, added or removed without a line in
``course.changes.CHANGES`` fails, and so does a line there that the code does not bear out. A module
that a stage adds beside ``agent.py`` (s06's ``gate.py``) is one addition, named ``gate.py``: its
chapter is about it; from the next stage on, its definitions are compared one by one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from course.changes import BESIDE_THE_STAGES, CHANGES, KINDS
from helpers import load_hook

ROOT = Path(__file__).resolve().parents[1]
STAGES = sorted(path.parent.name for path in ROOT.glob("s[0-9][0-9]/agent.py"))


def modules(stage: str) -> list[Path]:
    """The stage's modules: agent.py and any module beside it, not a notebook's jupytext twin, nor
    the stage's idea written for another API (course.changes.BESIDE_THE_STAGES)."""
    return [path for path in sorted((ROOT / stage).glob("*.py"))
            if path.name != "__init__.py" and not path.with_suffix(".ipynb").exists()
            and f"{stage}/{path.name}" not in BESIDE_THE_STAGES]


def definitions(stage: str) -> dict[str, str]:
    """{name: syntax tree} of every top-level definition of the stage's modules."""
    found: dict[str, str] = {}
    for path in modules(stage):
        prefix = "" if path.stem == "agent" else f"{path.stem}."
        for name, tree in module_definitions(path.read_text(encoding="utf-8")):
            found[prefix + name] = found.get(prefix + name, "") + tree
    return found


def new_modules(old: str, new: str) -> set[str]:
    return {path.name for path in modules(new)} - {path.name for path in modules(old)}


def module_definitions(source: str) -> list[tuple[str, str]]:
    body = ast.parse(source).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the module docstring: each stage's summary of its chapter, always rewritten
    return [(definition_name(node), ast.dump(node)) for node in body]


def definition_name(node: ast.stmt) -> str:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign):
        return ", ".join(ast.unparse(target) for target in node.targets)
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        return ast.unparse(node.target)
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return "imports"
    return "other statements"  # `if __name__ == "__main__":` and the like, compared as one


def differences(old: dict[str, str], new: dict[str, str], added_modules: set[str] = frozenset()) -> dict[str, set[str]]:
    """What changed, was added or removed; a whole module added counts once, by its file name."""
    def module_of(name: str) -> str | None:
        module = name.split(".", 1)[0] + ".py"
        return module if "." in name and module in added_modules else None

    added = new.keys() - old.keys()
    return {
        "changed": {name for name in new.keys() & old.keys() if new[name] != old[name]},
        "added": {module_of(name) or name for name in added},
        "removed": set(old.keys() - new.keys()),
    }


def undeclared_and_stale(stage: str, found: dict[str, set[str]], declared: dict[str, dict]) -> list[str]:
    problems = []
    for kind in KINDS:
        listed = set(declared.get(kind, {}))
        problems += [f"{stage}: {name} is {kind} but course/changes.py does not say so"
                     for name in sorted(found[kind] - listed)]
        problems += [f"{stage}: course/changes.py says {name} is {kind}, but it is not"
                     for name in sorted(listed - found[kind])]
    return problems


@pytest.mark.parametrize("old, new", list(zip(STAGES, STAGES[1:])), ids=STAGES[1:])
def test_a_stage_changes_only_what_it_declares(old, new):
    found = differences(definitions(old), definitions(new), new_modules(old, new))
    problems = undeclared_and_stale(new, found, CHANGES.get(new, {}))
    assert not problems, "\n".join(problems)


def test_every_stage_after_the_first_has_a_row_and_every_row_a_stage():
    assert sorted(CHANGES) == STAGES[1:]
    for stage, kinds in CHANGES.items():
        assert set(kinds) <= set(KINDS), f"{stage}: kinds are {KINDS}, got {sorted(kinds)}"
        for kind, lines in kinds.items():
            for name, why in lines.items():
                assert why.strip() and "\n" not in why, f"{stage}: {name} ({kind}) needs one line saying why"


def test_each_chapter_shows_its_row_of_the_table_as_what_changed():
    hook = load_hook()
    for stage, kinds in CHANGES.items():
        # The chapter, or one of its depth pages (a chapter's skippable depth has a page of its own).
        pages = sorted((ROOT / "docs").glob(f"{stage}-*.md"))
        assert any(f"<!-- changes {stage} -->" in page.read_text(encoding="utf-8") for page in pages), stage
        table = hook.generate("changes", stage)
        for kind, lines in kinds.items():
            for name, why in lines.items():
                assert f"| `{name}` | {kind} | {hook.inline_html(why)} |" in table


def test_a_change_in_one_stage_only_is_caught():
    """The comparison itself: a body edited, a definition added, one dropped, a module added."""
    old = {"run": ast.dump(ast.parse("def run():\n    return 1")), "KEEP": "k"}
    new = {"run": ast.dump(ast.parse("def run():\n    return 2")), "gate.Gate": "g"}
    assert differences(old, new)["added"] == {"gate.Gate"}  # gate.py was there before: one definition added
    found = differences(old, new, added_modules={"gate.py"})
    assert found == {"changed": {"run"}, "added": {"gate.py"}, "removed": {"KEEP"}}
    problems = undeclared_and_stale("s09", found, {"changed": {"run": "why"}, "added": {"stale": "why"}})
    assert problems == ["s09: gate.py is added but course/changes.py does not say so",
                        "s09: course/changes.py says stale is added, but it is not",
                        "s09: KEEP is removed but course/changes.py does not say so"]


def test_comments_and_layout_do_not_count_but_docstrings_do():
    plain = dict(module_definitions('"""Stage."""\ndef f(x):\n    """Say."""\n    return x\n'))
    commented = dict(module_definitions('"""Other."""\ndef f(x):  # >>> exercise 1\n    """Say."""\n\n    return (x)\n'))
    redocumented = dict(module_definitions('def f(x):\n    """Said."""\n    return x\n'))
    assert plain == commented
    assert plain != redocumented
