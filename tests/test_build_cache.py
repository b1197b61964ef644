"""The site's runs are taken from an earlier build only while every file they depend on is unchanged."""

from __future__ import annotations

import pickle

import pytest

from course.site import build_cache, pages as site


@pytest.fixture
def tree(tmp_path):
    for name, text in {"course/offline/tutor.py": "A = 1\n", "course/sample_workspace/memo.md": "memo\n",
                       "s00/agent.py": "B = 2\n", "s06/permissions.py": "C = 3\n",
                       "docs/hooks/generate.py": "D = 4\n", "pyproject.toml": "[project]\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("name", ["course/offline/tutor.py", "course/sample_workspace/memo.md", "s00/agent.py",
                                  "s06/permissions.py", "docs/hooks/generate.py", "pyproject.toml"])
def test_a_changed_byte_in_any_input_makes_a_new_fingerprint(tree, name):
    before = build_cache.fingerprint(tree)
    assert build_cache.fingerprint(tree) == before  # nothing changed: the same
    path = tree / name
    path.write_bytes(path.read_bytes()[:-1] + b"!")
    assert build_cache.fingerprint(tree) != before


def test_a_new_stage_or_module_makes_a_new_fingerprint_and_notebooks_and_bytecode_do_not(tree):
    before = build_cache.fingerprint(tree)
    (tree / "s00" / "s00_one_call.ipynb").write_text("{}")
    (tree / "course" / "__pycache__").mkdir()
    (tree / "course" / "__pycache__" / "tutor.cpython-311.pyc").write_bytes(b"\0")
    assert build_cache.fingerprint(tree) == before
    (tree / "s07").mkdir()
    (tree / "s07" / "agent.py").write_text("E = 5\n")
    assert build_cache.fingerprint(tree) != before


def test_the_variables_the_course_and_the_sdk_read_are_part_of_the_fingerprint(tree, monkeypatch):
    before = build_cache.fingerprint(tree)
    monkeypatch.setenv("AGENT_COURSE_RUNS_LOG", "/elsewhere/runs.jsonl")  # where logs go changes no page
    assert build_cache.fingerprint(tree) == before
    monkeypatch.setenv("AGENT_COURSE_NO_CONFINEMENT", "1")
    assert build_cache.fingerprint(tree) != before


def test_a_run_is_made_once_and_then_taken_as_it_was(tmp_path):
    made = []
    first = build_cache.Remembered(tmp_path)
    assert first.get(("trace", "s01"), lambda: made.append(1) or {"turns": 3}) == {"turns": 3}
    again = build_cache.Remembered(tmp_path)  # the next build, same fingerprint
    assert again.get(("trace", "s01"), lambda: pytest.fail("made again")) == {"turns": 3}
    assert again.get(("trace", "s02"), lambda: made.append(2) or "other") == "other"
    assert made == [1, 2]


def test_a_damaged_entry_is_made_anew(tmp_path):
    build_cache.Remembered(tmp_path).get(("k",), lambda: "value")
    for entry in tmp_path.glob("*.pickle"):
        entry.write_bytes(b"not a pickle")
    assert build_cache.Remembered(tmp_path).get(("k",), lambda: "anew") == "anew"


def test_fresh_runs_keep_nothing(monkeypatch):
    monkeypatch.setenv(build_cache.SWITCH, "fresh")
    assert build_cache.Remembered.for_this_build().folder is None


@pytest.mark.stage("s01")
def test_a_page_run_survives_being_kept():
    """A run that could not be kept would be made again by every build: the cache would do nothing."""
    site.start_build()
    run = site.traced_run("s01", "List the files and write their count and names to report.txt")
    kept = pickle.loads(pickle.dumps(run))
    assert kept.printed == run.printed and kept.usages == run.usages
    assert kept.result == run.result
