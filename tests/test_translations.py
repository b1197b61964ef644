"""The Japanese twin of a page says the same thing in code, generated parts and outline, and says which
English text it translates, so a change to one language alone is found, naming both files."""

from __future__ import annotations

import pytest

from course.site import translations

ENGLISH = '''# Setup

Run the stage:

```bash
.venv/bin/python s01/agent.py "List the files"   # offline, no key
```

## The loop

```python
--8<-- "s01/agent.py:loop"
```

<!-- trace s01 "List the files" max_turns=5 -->
'''

JAPANESE = '''# セットアップ

ステージを動かします。

```bash
.venv/bin/python s01/agent.py "ファイルを一覧して"   # オフライン、キー不要
```

## ループ

```python
--8<-- "s01/agent.py:loop"
```

<!-- trace s01 "ファイルを一覧して" max_turns=5 -->
'''


@pytest.fixture
def docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "setup.md").write_text(ENGLISH, encoding="utf-8")
    (folder / "setup.ja.md").write_text(JAPANESE, encoding="utf-8")
    translations.record(folder / "setup.ja.md")
    return folder


def test_a_recorded_translation_in_step_has_no_problem(docs):
    assert translations.every_problem(docs, docs.parent) == []


def test_the_recorded_source_is_the_english_pages_git_blob(docs):
    import subprocess
    blob = subprocess.run(["git", "hash-object", str(docs / "setup.md")], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert f"source: {blob}" in (docs / "setup.ja.md").read_text(encoding="utf-8")


def test_a_change_to_the_english_page_alone_is_found_naming_both_files(docs):
    page = docs / "setup.md"
    page.write_text(ENGLISH.replace("Run the stage:", "Run the stage, offline:"), encoding="utf-8")
    [problem] = translations.every_problem(docs, docs.parent)
    assert "docs/setup.md has changed since docs/setup.ja.md was written" in problem
    assert "git diff" in problem
    translations.record(docs / "setup.ja.md")  # the translator brought it up to date
    assert translations.every_problem(docs, docs.parent) == []


@pytest.mark.parametrize("before, after, what", [
    ('s01/agent.py "ファイルを一覧して"', 's02/agent.py "ファイルを一覧して"', "code block"),
    ('--8<-- "s01/agent.py:loop"', '--8<-- "s01/agent.py:take_turn"', "code block"),
    ("<!-- trace s01 \"ファイルを一覧して\" max_turns=5 -->", "<!-- trace s01 \"ファイルを一覧して\" -->", "generated part"),
    ("## ループ", "### ループ", "heading"),
    ("## ループ\n", "", "heading"),
])
def test_a_one_sided_change_to_the_japanese_page_is_found(docs, before, after, what):
    twin = docs / "setup.ja.md"
    text = twin.read_text(encoding="utf-8")
    assert before in text
    twin.write_text(text.replace(before, after), encoding="utf-8")
    problems = translations.every_problem(docs, docs.parent)
    assert len(problems) == 1 and f"differ in their {what}s" in problems[0], problems
    assert "docs/setup.md and docs/setup.ja.md" in problems[0]


def test_comments_and_quoted_tasks_are_the_pages_own_language():
    assert translations.outline(ENGLISH) == translations.outline(JAPANESE)


def test_a_page_without_its_twin_and_a_twin_without_its_page_are_both_found(docs):
    (docs / "new.md").write_text("# New\n", encoding="utf-8")
    (docs / "old.ja.md").write_text("# 古い\n", encoding="utf-8")
    problems = translations.every_problem(docs, docs.parent)
    assert any("docs/new.md has no Japanese twin: write docs/new.ja.md" in p for p in problems)
    assert any("docs/old.ja.md translates no English page" in p for p in problems)


def test_a_twin_that_names_no_source_says_how_to_record_it(docs):
    twin = docs / "setup.ja.md"
    twin.write_text(JAPANESE, encoding="utf-8")
    [problem] = translations.every_problem(docs, docs.parent)
    assert "does not say which text of docs/setup.md it translates" in problem
    assert "--record docs/setup.ja.md" in problem


def test_the_readme_names_its_source_in_a_comment_github_shows_nothing_of(docs):
    (docs.parent / "README.md").write_text("# Course\n\n```bash\nmake test\n```\n", encoding="utf-8")
    (docs.parent / "README.ja.md").write_text("# コース\n\n```bash\nmake test\n```\n", encoding="utf-8")
    translations.record(docs.parent / "README.ja.md")
    assert (docs.parent / "README.ja.md").read_text(encoding="utf-8").startswith("<!-- source: ")
    assert translations.every_problem(docs, docs.parent) == []
    (docs.parent / "README.md").write_text("# Course\n\n```bash\nmake demo\n```\n", encoding="utf-8")
    problems = translations.every_problem(docs, docs.parent)
    assert any("README.md has changed since README.ja.md" in p for p in problems)
    assert any("README.md and README.ja.md differ in their code blocks" in p for p in problems)


def test_the_course_checks_its_own_japanese_pages():
    """Every English page of the site, and the README, has a Japanese twin in step with it, and every
    Japanese page translates an English one."""
    assert list(translations.DOCS.rglob("*.ja.md")), "the course has Japanese pages"
    assert translations.every_problem() == []
