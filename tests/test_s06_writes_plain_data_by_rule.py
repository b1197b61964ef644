"""s06: a file tool writes without a person only what one rule calls plain data; anything else asks.

The rule (course.sandbox.paths.not_plain_data): a new file of a plain-data suffix (text, Markdown, CSV; not
JSON, which programs read as their settings), a lowercase name, no hidden part in the path, named directly
(never through a link), not executable, and not one of the few lowercase names a program looks up. It holds for names nobody listed: with no person, a write the rule does not call plain data
is denied, with a reason the model can act on, and nothing is written.
"""

from __future__ import annotations

import os
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import course.sandbox.paths
from s06_world import Person, gate, world  # noqa: F401

pytestmark = pytest.mark.stage("s06")


def write(workspace, path, person=None):
    return gate(person).check(workspace, "write_file", {"path": path, "content": "x"})


# Names no list of dangers held when the rule came: each is run or obeyed by something, and none is plain data.
NOBODY_LISTED = ["jest.config.js", "Procfile", ".direnv/bin/python", "bin/activate", "ls", "Brewfile",
                 # configs with a plain-looking suffix: CMake runs its presets' commands, Terraform reads *.tf.json
                 # as code, nodemon and lefthook run what they name, agents obey their instruction files, Jupyter
                 # starts the argv of a kernel.json
                 "CMakeUserPresets.json", "infra/main.tf.json", "nodemon.json", "lefthook.json", "GEMINI.md",
                 "docs/AGENTS.md", "env/share/jupyter/kernels/py/kernel.json", "vercel.json"]


@pytest.mark.parametrize("path", NOBODY_LISTED)
def test_a_name_nobody_listed_is_not_written_without_a_person(world, path):
    found = write(world, path)
    assert found.decision == "deny" and found.decided_by == "no terminal", found.why
    assert "plain data" in found.why and found.instead  # what is allowed, said to the model
    assert not os.path.lexists(world / path)


@pytest.mark.parametrize("path", NOBODY_LISTED)
def test_a_person_is_asked_about_it_and_may_allow_it(world, path):
    person = Person(("allow once", ""))
    assert write(world, path, person).decision == "allow"
    assert len(person.asked) == 1 and "plain data" in person.asked[0][2]


# The rule's cases: (path, whether it is plain data).
CASES = [
    ("report.txt", True), ("notes/summary.md", True), ("data/totals.csv", True), ("rows.jsonl", True),
    ("Notes/readme.md", True), ("logs/run.log", True), ("table.tsv", True), ("docs/guide.rst", True),
    ("out.json", False), ("README.MD", False), ("Summary.md", False), ("gemini.md", False), ("CLAUDE.md", False),
    ("script.py", False), ("run.sh", False), ("config.yml", False), ("Makefile", False), ("setup.cfg", False),
    (".notes.txt", False), (".vscode/notes.md", False), ("docs/.hidden/a.csv", False), (".git/description.txt", False),
    ("package.json", False), ("sub/package.json", False), ("requirements.txt", False), ("CMakeLists.txt", False),
    ("AGENTS.md", False), ("docs/CLAUDE.md", False), ("report.txt.py", False), ("report", False),
    ("x.dist-info/entry_points.txt", False), ("x.DIST-INFO/entry_points.txt", False), ("y.Egg-Info/RECORD.txt", False),
]


@pytest.mark.parametrize("path, plain", CASES)
def test_the_rule_decides_each_case(world, path, plain):
    assert (course.sandbox.paths.not_plain_data(world, path) == "") is plain
    assert write(world, path).decision == ("allow" if plain else "deny")


def test_a_data_file_reached_through_a_link_is_not_plain(world):
    (world / "real").mkdir()
    (world / "through").symlink_to("real", target_is_directory=True)
    (world / "real" / "data.txt").write_text("x")
    (world / "alias.txt").symlink_to("real/data.txt")
    assert write(world, "through/data.txt").decision == "deny"
    assert write(world, "alias.txt").decision == "deny"
    assert (world / "real" / "data.txt").read_text() == "x"


def test_an_executable_data_file_is_not_plain(world):
    (world / "tool.txt").write_text("#!/bin/sh\n")
    os.chmod(world / "tool.txt", 0o755)
    assert "executable" in course.sandbox.paths.not_plain_data(world, "tool.txt")


def test_every_looked_up_name_says_what_runs_and_has_a_plain_suffix():
    for name, why in course.sandbox.paths.LOOKED_UP_DATA_NAMES.items():
        assert name == name.lower() and why and os.path.splitext(name)[1] in course.sandbox.paths.PLAIN_DATA_SUFFIXES, name
        assert "https://" in why, name  # each entry says where its reading is documented


PART = st.text(string.ascii_letters + string.digits + "._-", min_size=1, max_size=12).filter(
    lambda part: part not in (".", ".."))
SUFFIX = st.sampled_from(["", ".txt", ".md", ".csv", ".json", ".py", ".sh", ".js", ".toml", ".yml", ".cfg", ".rst", ".log",
                          ".MD", ".Txt", ".jsonl", ".tf.json", ".pth"])
# The rule restated here, apart from the code: what may be written with no person at all.
KNOWN_INERT = (".txt", ".text", ".md", ".markdown", ".rst", ".csv", ".tsv", ".jsonl", ".ndjson", ".log")


def inside_the_rule(path: str) -> bool:
    parts = path.split("/")
    return (parts[-1].endswith(KNOWN_INERT) and parts[-1] == parts[-1].lower()
            and not any(part.startswith(".") for part in parts) and not parts[-1].endswith(".json"))
PATHS = st.builds(lambda parts, last, suffix: "/".join([*parts, last + suffix]),
                  st.lists(PART, max_size=3), PART, SUFFIX)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=PATHS)
def test_a_write_without_a_person_succeeds_only_for_plain_data(world, path):
    """For any generated path: written unasked exactly when the rule calls it plain data (and never outside)."""
    if os.path.lexists(world / path):
        return  # an overwrite is destructive and asks whatever the rule says; the property is about new files
    plain = course.sandbox.paths.not_plain_data(world, path) == ""
    found = write(world, path)
    if found.decision == "allow":
        assert plain and inside_the_rule(path), path
    elif plain:  # plain data refused only for a reason other than the rule: a secret's name, the harness's files
        assert "plain data" not in found.why, (path, found.why)
    else:  # refused with no person, with a reason the model can act on: what is written without one
        assert found.decision == "deny" and found.instead, (path, found.why)
        assert "plain data" in found.why or found.decided_by == "rule", (path, found.why)  # a secret's name: denied first


def test_a_command_path_deeper_than_the_file_tools_take_is_asked_about_not_read(world):
    deep = "a/" * course.sandbox.paths.MAX_PATH_DEPTH + "x.txt"
    refused = gate(None).check(world, "run_command", {"command": f"cat {deep}"})
    assert refused.decision == "deny" and "names deep" in refused.why, refused.why
    shallow = gate(None).check(world, "run_command", {"command": "cat memo.md"})
    assert shallow.decision == "allow", shallow.why
