"""What a command changes beyond plain data is shown to the person who approved it, or undone.

A person approves a command, not every file it goes on to write. So the workspace is noted before a command
runs (course.sandbox.review); afterwards each entry that is not plain data (a script, a config, a link, anything
hidden, an executable file) and that the command created, changed or deleted is put to the person who approved
it, who keeps it or has it undone, and is undone when no person approved the command. Plain data the command
wrote stays, unasked.
"""

from __future__ import annotations

import json
import os

import pytest

import course.sandbox.confinement
import course.sandbox.review
from s06_world import Person, play, world  # noqa: F401

pytestmark = pytest.mark.stage("s06")


def writes(workspace, *entries):
    """A stand-in for a command that writes ``entries`` ((path, text), or (path, None) to delete) and prints nothing."""
    def run():
        for path, text in entries:
            target = workspace / path
            if text is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        return "exit code 0\n"
    return run


# Each row: what the command does, and whether it is beyond plain data (undone when nobody approved it).
ROWS = [
    ("a new script", [("build.py", "import os\n")], True),
    ("a new file in a hidden folder", [(".cache/x/hook.sh", "x")], True),
    ("a new JSON config", [("nodemon.json", "{}")], True),
    ("a new capitalised Markdown file", [("AGENTS.md", "obey\n")], True),
    ("an existing JSON file changed", [("config.json", '{"evil": 1}')], True),
    ("an existing JSON file deleted", [("config.json", None)], True),
    ("a new text file", [("out.txt", "total 3\n")], False),
    ("a new table", [("data/rows.csv", "a,b\n")], False),
    ("a plain file changed", [("memo.md", "rewritten\n")], False),
]


@pytest.mark.parametrize("what, entries, beyond", ROWS, ids=[row[0] for row in ROWS])
def test_with_no_person_what_is_beyond_plain_data_is_undone_and_plain_data_stays(world, what, entries, beyond):
    before = {path: (world / path).read_bytes() for path, _ in entries if (world / path).exists()}
    said = course.sandbox.review.run_reviewed(world, "a command", None, writes(world, *entries))
    for path, text in entries:
        if beyond:  # put back as it was: removed if new, its bytes back if it was there
            assert (world / path).read_bytes() == before[path] if path in before else not os.path.lexists(world / path)
        else:
            assert (world / path).read_text() == text
    assert ("undone, since no person approved it" in said) is beyond, said


def test_a_link_and_an_executable_bit_are_beyond_plain_data(world):
    def run():
        (world / "passwd.txt").symlink_to("/etc/passwd")
        os.chmod(world / "memo.md", 0o755)
        return "exit code 0\n"
    course.sandbox.review.run_reviewed(world, "a command", None, run)
    assert not os.path.lexists(world / "passwd.txt")
    assert os.stat(world / "memo.md").st_mode & 0o111 == 0 and (world / "memo.md").read_text()  # its bytes stay


def test_a_person_who_approved_it_is_shown_the_changes_and_keeps_them(world):
    person = Person(("allow once", ""))
    said = course.sandbox.review.run_reviewed(world, "make", person, writes(world, ("build.py", "x\n"), ("out.txt", "y")))
    assert (world / "build.py").read_text() == "x\n" and "kept" in said
    (asked,) = person.asked
    assert "build.py (created)" in asked[2] and "out.txt" not in asked[2]  # plain data is no question


def test_a_person_who_says_no_has_them_undone(world):
    person = Person(("deny", "not that"))
    course.sandbox.review.run_reviewed(world, "make", person, writes(world, ("build.py", "x\n"), ("out.txt", "y")))
    assert not (world / "build.py").exists() and (world / "out.txt").read_text() == "y"


def test_nobody_is_asked_when_the_command_changed_only_plain_data(world):
    person = Person()
    said = course.sandbox.review.run_reviewed(world, "make", person, writes(world, ("out.txt", "y")))
    assert said == "exit code 0\n" and person.asked == []


def test_an_approved_command_in_the_loop_shows_the_person_what_it_made_and_undoes_it_on_no(world):
    """The loop's behaviour, once, with the kernel's confinement: approved, run, shown, undone; the model is told."""
    if not course.sandbox.confinement.probe().available:
        pytest.skip(course.sandbox.confinement.probe().reason)
    person = Person(("allow once", ""), ("deny", ""))
    results, _ = play(world, [("run_command", {"command": "cp memo.md notes.sh"})], person=person)
    assert not (world / "notes.sh").exists()
    assert "notes.sh (created)" in person.asked[1][2]
    assert "undone, as the person asked" in json.loads(results[0]["content"])["output"]


def test_a_workspace_larger_than_the_check_is_said_to_be_checked_only_in_part(world, monkeypatch):
    """Past the walk's budget a change may go unseen; saying nothing would read as "nothing changed"."""
    monkeypatch.setattr(course.sandbox.review, "MOST_ENTRIES", 3)
    for number in range(6):
        (world / f"n{number}.txt").write_text("x")
    said = course.sandbox.review.run_reviewed(world, "a command", None, writes(world, ("out.txt", "y")))
    assert "only part was checked" in said
    monkeypatch.setattr(course.sandbox.review, "MOST_ENTRIES", 100_000)
    said = course.sandbox.review.run_reviewed(world, "a command", None, writes(world, ("out2.txt", "y")))
    assert "only part was checked" not in said
