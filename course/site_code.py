"""The code as the pages show it (``course/site.py``): the diff from one stage to the next, the table
of what a stage changes and why, the exercises stubbed out with their solutions folded away, and the
list of every exercise; all read from the stage files at build time, so that none can drift."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from . import changes, exercises
from .ladder import REPOSITORY as ROOT
from .models import CourseError
from .site_markdown import SECTION_MARKER, PlaceholderError, fenced, folded, inline_html, markdown_table

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
    title = f"{old}/agent.py → {new}/agent.py: {added} lines added, {removed} removed (click to open)"
    return folded(f'??? abstract "{title}"', fenced("diff", diff))


def declared_changes(stage: str) -> str:
    """The stage's row of course/changes.py as a table: what changed, was added or removed, and why."""
    row = changes.CHANGES.get(stage)
    if not row:
        raise PlaceholderError(f"expected <!-- changes sNN --> with a stage listed in course/changes.py, got {stage!r}")
    rows = [[f"`{name}`", kind, inline_html(why)] for kind in changes.KINDS for name, why in row.get(kind, {}).items()]
    return markdown_table(["definition", "change", "why"], rows, align="lll")


SNIPPET_FENCE = re.compile(
    r'^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>python\b[^\n]*)\n'
    r'(?P=indent)--8<-- "(?P<stage>s\d\d)/(?P<module>\w+\.py):(?P<section>[\w-]+)"\n'
    r'(?P=indent)(?P=fence)[ \t]*$', re.M)


def show_exercises_as_stubs(markdown: str) -> str:
    """Each included section that holds exercises: shown stubbed, each solution folded away after it."""
    def replace(match: re.Match) -> str:
        try:
            return stubbed_section(match["stage"], match["section"], match["fence"], match["info"], match["indent"],
                                   module=match["module"])
        except CourseError as error:
            raise PlaceholderError(str(error), line=markdown.count("\n", 0, match.start()) + 1) from None
    return SNIPPET_FENCE.sub(replace, markdown)


def stubbed_section(stage: str, name: str, fence: str, info: str, indent: str, module: str = "agent.py") -> str:
    source = stage_file(stage, module).read_text(encoding="utf-8")
    regions = exercises.find_regions(source, f"{stage}/{module}")
    lines = source.splitlines(keepends=True)
    start, end = section_bounds(lines, f"{stage}/{module}", name)
    inside = [region for region in regions if start < region.start and region.end < end]
    original = f'{indent}{fence}{info}\n{indent}--8<-- "{stage}/{module}:{name}"\n{indent}{fence}'
    if not inside:
        return original  # pymdownx.snippets includes it as it is
    stubbed = exercises.stub_out("".join(lines[:end]), inside, stage).splitlines(keepends=True)
    shift = sum(region.end - region.start - 2 for region in inside)  # each region became one line
    shown = [line for line in stubbed[start:end - 1 - shift] if not SECTION_MARKER.match(line)]
    blocks = [fenced(info, "".join(shown))]
    for region in inside:
        solution = "".join(lines[region.start:region.end - 1])  # indented as it sits in the function
        title = f"Exercise {region.number}, {region.title}: a reference solution (try it yourself first)"
        blocks.append(folded(f'??? success "{title}"', fenced("python", solution)))
    return "\n".join("".join(indent + line if line.strip("\n") else line for line in block.splitlines(keepends=True))
                     for block in blocks).rstrip("\n")


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
        chapters = sorted((ROOT / "docs").glob(f"{stage}-*.md"))
        chapter = f"[{stage}]({chapters[0].name})" if chapters else f"`{stage}`"
        try:
            regions = exercises.stage_regions(stage)
        except CourseError as error:
            # What `python -m course exercise` would answer: shown, so that an instructor sees it.
            rows.append([chapter, "", f"⚠ the exercise markers are refused: {error}", "", ""])
            continue
        for region in regions:  # a region may live in a module beside agent.py (s06/permissions.py)
            module = path.parent / region.file
            source = module.read_text(encoding="utf-8").splitlines()
            function = next((match["name"] for line in reversed(source[:region.start])
                             if (match := re.match(r"\s*def (?P<name>\w+)", line))), None)
            rows.append([chapter, region.number, region.title, f"`{function}()`" if function else "",
                         f"`{module.relative_to(ROOT).as_posix()}:{region.start}`"])
    return markdown_table(["stage", "exercise", "title", "in", "at"], rows, align="lrlll")
