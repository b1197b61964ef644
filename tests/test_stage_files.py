"""A stage file holds what its chapter teaches: the shape the course's design promises, pinned.

Each stage stays short enough to read beside its chapter, and the diff between two stages is one idea
of a readable size. What no chapter teaches (guards against malformed replies, parsers, limits'
checks) lives in the support package, which never imports a stage. A comment says why, never where a
finding came from.
"""

from __future__ import annotations

import ast
import difflib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STAGES = sorted(path.parent.name for path in ROOT.glob("s[0-9][0-9]/agent.py"))
# Upper bounds on each agent.py, in lines: room to read it in a sitting, not goals to fill. s06 is s05
# plus its chapter (three tools that can do harm in the table, the gate in call_tool and run, an approved
# command's changes reviewed after it ran); its decision is in s06/permissions.py, what the file tools do
# in s06/tools.py (not the chapter's code), what makes the decision trustworthy in the support package.
MOST_LINES = {"s00": 220, "s01": 230, "s02": 340, "s03": 430, "s04": 600, "s05": 700, "s06": 710}
MOST_CHANGED_LINES = 220  # between two consecutive agent.py files, removed and added lines counted
# Where a finding came from belongs in a commit message; the source articles are named by their titles.
HISTORY = re.compile(r"red[ -]team|\bround \d|found by the (differential|property)|\bseed (article|\d{3})|\bissue \d+\b",
                     re.IGNORECASE)


def lines_of(stage: str) -> list[str]:
    return (ROOT / stage / "agent.py").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_file_is_short_enough_to_read_beside_its_chapter(stage):
    assert len(lines_of(stage)) <= MOST_LINES[stage]


@pytest.mark.parametrize("old, new", list(zip(STAGES, STAGES[1:])), ids=STAGES[1:])
def test_the_diff_between_two_stages_is_of_a_readable_size(old, new):
    matcher = difflib.SequenceMatcher(None, lines_of(old), lines_of(new), autojunk=False)
    changed = sum((i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")
    assert changed <= MOST_CHANGED_LINES


@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_receives_clean_replies_and_does_not_guard_against_them(stage):
    source = (ROOT / stage / "agent.py").read_text(encoding="utf-8")
    assert "sendable" not in source  # the transports hand over replies JSON can carry back
    assert not re.search(r"isinstance\(\s*block\.name", source)  # a tool name is text by then


@pytest.mark.parametrize("path", sorted([*ROOT.glob("s[0-9][0-9]/*.py"), *ROOT.glob("course/**/*.py")]),
                         ids=lambda path: str(path.relative_to(ROOT)))
def test_comments_say_why_not_where_a_finding_came_from(path):
    found = [f"{path.name}:{number}: {line.strip()}" for number, line in
             enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if HISTORY.search(line)]
    assert not found, "\n".join(found)


def test_the_support_package_never_imports_a_stage():
    imports = []
    for path in sorted(ROOT.glob("course/**/*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            imports += [f"{path.relative_to(ROOT)}: {name}" for name in names if re.match(r"s\d\d(\.|$)", name)]
    assert not imports, "\n".join(imports)


@pytest.mark.parametrize("stage", [stage for stage in STAGES if stage >= "s03"])
def test_each_limit_is_named_once_in_its_stage(stage):
    source = (ROOT / stage / "agent.py").read_text(encoding="utf-8")
    for name in ("max_turns", "token_budget", "max_repeats", "max_consecutive_errors"):
        assert len(re.findall(rf"\b{name}\s*:\s*int\s*=", source)) == 1  # the Limits field
        assert not re.search(rf"\b{name}\s*=\s*Limits\.", source)  # no keyword copies of it in run()


def test_every_test_that_loads_a_stage_says_which_stage_it_pins():
    import conftest  # its collection hook read every test collected in this session

    problems = [f"{nodeid}: {problem}" for nodeid, problem in sorted(conftest.PINNING_PROBLEMS.items())]
    assert not problems, "\n".join(problems[:40]) + (f"\n... and {len(problems) - 40} more" if len(problems) > 40 else "")
