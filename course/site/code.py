"""The code as the pages show it (``course/site/pages.py``): the diff from one stage to the next, the table
of what a stage changes and why, the check that every code include names a section that exists, and
the list of every exercise; all read from the stage files at build time, so that none can drift."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from course import changes
from course.grading import exercise_text, exercises
from course.lab.ladder import REPOSITORY as ROOT
from course.runtime.models import CourseError
from course.viewer.markdown import SECTION_MARKER, PlaceholderError, fenced, folded, inline_html, language, markdown_table, say

STAGE = re.compile(r"^s\d\d$")


def stage_file(stage: str, module: str = "agent.py") -> Path:
    if not STAGE.match(stage):
        raise PlaceholderError(f"a stage is named sNN (e.g. s01), got {stage!r}")
    path = ROOT / stage / module
    if not path.is_file():
        raise PlaceholderError(f"{stage}/{module} does not exist")
    return path


def stage_diff(old: str, new: str) -> str:
    """The unified diff of one stage file to the next: the chapter, in code."""
    before, after = (without_section_markers(stage_file(stage).read_text(encoding="utf-8")) for stage in (old, new))
    lines = difflib.unified_diff(before, after, fromfile=f"{old}/agent.py", tofile=f"{new}/agent.py")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def without_section_markers(source: str) -> list[str]:
    return [line for line in source.splitlines(keepends=True) if not SECTION_MARKER.match(line)]


def folded_diff(old: str, new: str) -> str:
    """The diff in a block folded away, titled with what it adds and removes: long, and read on demand."""
    diff = stage_diff(old, new)
    changed = [line for line in diff.splitlines() if not line.startswith(("+++", "---"))]
    added = sum(line.startswith("+") for line in changed)
    removed = sum(line.startswith("-") for line in changed)
    title = f"{old}/agent.py → {new}/agent.py: " + say(f"{added} lines added, {removed} removed (click to open)",
                                                      f"{added} 行追加、{removed} 行削除（クリックで開く）")
    return folded(f'??? abstract "{title}"', fenced("diff", diff))


def declared_changes(stage: str) -> str:
    """The stage's row of course/changes.py as a table: what changed, was added or removed, and why."""
    row = changes.CHANGES.get(stage)
    if not row:
        raise PlaceholderError(f"expected <!-- changes sNN --> with a stage listed in course/changes.py, got {stage!r}")
    if language() == "ja":  # the Japanese chapter: each why's Japanese, declared beside it (course/changes.py)
        japanese = changes.WHY_JA.get(stage, {})
        rows = [[f"`{name}`", KIND_JA[kind], inline_html(japanese.get(kind, {}).get(name) or why)]
                for kind in changes.KINDS for name, why in row.get(kind, {}).items()]
        return markdown_table(["定義", "変更", "理由"], rows, align="lll")
    rows = [[f"`{name}`", kind, inline_html(why)] for kind in changes.KINDS for name, why in row.get(kind, {}).items()]
    return markdown_table(["definition", "change", "why"], rows, align="lll")


KIND_JA = {"changed": "変更", "added": "追加", "removed": "削除"}


SNIPPET_FENCE = re.compile(
    r'^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>python\b[^\n]*)\n'
    r'(?P=indent)--8<-- "(?P<stage>s\d\d)/(?P<module>\w+\.py):(?P<section>[\w-]+)"\n'
    r'(?P=indent)(?P=fence)[ \t]*$', re.M)


def check_code_includes(markdown: str) -> str:
    """A page's code includes, checked: each names a section of a stage file that exists. The code is
    then included as it is in the file, exercise regions and all, by pymdownx.snippets: the reading path
    shows the real code where the prose explains it, and the exercise markers (``# >>> exercise N``)
    stay visible, so that a learner sees which lines an exercise asks them to write."""
    for match in SNIPPET_FENCE.finditer(markdown):
        try:
            where = f"{match['stage']}/{match['module']}"
            lines = stage_file(match["stage"], match["module"]).read_text(encoding="utf-8").splitlines()
            section_bounds(lines, where, match["section"])
        except CourseError as error:
            raise PlaceholderError(str(error), line=markdown.count("\n", 0, match.start()) + 1) from None
    return markdown


def section_bounds(lines: list[str], where: str, name: str) -> tuple[int, int]:
    """The 1-based lines of a section's start and end markers."""
    marks = {kind: number for number, line in enumerate(lines, start=1)
             for kind in ("start", "end") if line.strip() == f"# --8<-- [{kind}:{name}]"}
    if set(marks) != {"start", "end"} or marks["start"] > marks["end"]:
        raise PlaceholderError(f"{where} has no section {name!r} (# --8<-- [start:{name}] ... [end:{name}])")
    return marks["start"], marks["end"]


def exercise_table() -> str:
    """Every stage's exercises, read from the markers in the stage files, so the list cannot drift."""
    rows = []
    for path in sorted(ROOT.glob("s[0-9][0-9]/agent.py")):
        stage = path.parent.name
        chapters = sorted(page for page in (ROOT / "docs").glob(f"{stage}-*.md") if not page.name.endswith(".ja.md"))
        # The chapter with the stage's exercise section (s02's is s02-loop-state, not s02-in-depth, first by name).
        chapters.sort(key=lambda page: f"<!-- exercise-section {stage} -->" not in page.read_text(encoding="utf-8"))
        chapter = f"[{stage}]({chapters[0].name})" if chapters else f"`{stage}`"
        try:
            regions = exercises.stage_regions(stage)
        except CourseError as error:
            # What `python -m course exercise` would answer: shown, so that an instructor sees it.
            rows.append([chapter, "", say("⚠ the exercise markers are refused: ", "⚠ 演習の目印が受け付けられません: ")
                         + str(error), "", ""])
            continue
        for region in regions:  # a region may live in a module beside agent.py (s06/permissions.py)
            module = path.parent / region.file
            source = module.read_text(encoding="utf-8").splitlines()
            function = next((match["name"] for line in reversed(source[:region.start])
                             if (match := re.match(r"\s*def (?P<name>\w+)", line))), None)
            japanese = exercise_text.JAPANESE.get((stage, region.number))
            title = japanese.title if language() == "ja" and japanese else region.title
            rows.append([chapter, region.number, title, f"`{function}()`" if function else "",
                         f"`{module.relative_to(ROOT).as_posix()}:{region.start}`"])
    return markdown_table([say("stage", "ステージ"), say("exercise", "演習"), say("title", "題"), say("in", "関数"),
                           say("at", "場所")], rows, align="lrlll")
