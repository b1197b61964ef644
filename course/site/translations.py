"""The site in two languages, kept in step: each English page ``docs/NAME.md`` has a Japanese twin
``docs/NAME.ja.md`` (mkdocs-static-i18n's suffix layout), written as a Japanese developer would write
it, not word for word. What must not differ between the two is checked here:

* the twin says which English text it translates: its front matter holds ``source: BLOB``, the git
  blob id of the English page it was written from (``git hash-object docs/NAME.md``), so a change to
  the English page alone is found, and ``git diff BLOB NEW`` shows the translator what changed;
* the same code: every fenced block and every included section (``--8<-- "sNN/agent.py:NAME"``),
  in the same order, equal once comments and quoted text are set aside (a command's comment and the
  task it is given are written in the page's language: ``"List the files"`` becomes a Japanese task);
* the same generated parts: every placeholder (``<!-- trace s01 "TASK" -->``), of the same kind with
  the same arguments, quoted text set aside;
* the same outline: the headings, level by level.

``python -m course translations`` prints every difference and exits 1 if there is one;
``python -m course translations --record docs/NAME.ja.md`` records the English page's present blob
in the twin, once the translation says what the English says.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LANGUAGE = "ja"
FRONT_MATTER = re.compile(r"\A---\n(?P<body>.*?)\n---\n", re.S)
SOURCE = re.compile(r"^source:\s*(?P<blob>[0-9a-f]{40})\s*$", re.M)
# README.ja.md is read on GitHub, where front matter shows as a table: it names its source in a comment.
SOURCE_COMMENT = re.compile(r"\A<!--\s*source:\s*(?P<blob>[0-9a-f]{40})\s*-->\n")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$")
HEADING = re.compile(r"^(?P<level>#{1,6})\s")
PLACEHOLDER = re.compile(r"^[ \t]*<!--\s*(?P<kind>[a-z][\w-]*)\b(?P<arguments>.*?)-->[ \t]*$")
SNIPPET = re.compile(r'^[ \t]*-{1,}8<-{1,}\s')
QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|「[^」]*」')
COMMENT = re.compile(r"(^|\s)#(?![!>]).*$")  # a shell or Python comment; '#!' and '# >>>' markers stay


def blob_id(data: bytes) -> str:
    """What ``git hash-object`` says of a file with these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def twin_of(page: Path) -> Path:
    return page.with_name(f"{page.stem}.{LANGUAGE}.md")


def english_pages(docs: Path = DOCS) -> list[Path]:
    pages = sorted(path for path in docs.rglob("*.md")
                   if not path.name.endswith(f".{LANGUAGE}.md") and "hooks" not in path.relative_to(docs).parts)
    readme = docs.parent / "README.md"
    return ([readme] if readme.is_file() else []) + pages


def recorded_source(translation: str) -> str | None:
    """The blob the twin says it translates: in its front matter, or a README's first-line comment."""
    if comment := SOURCE_COMMENT.match(translation):
        return comment["blob"]
    front = FRONT_MATTER.match(translation)
    recorded = SOURCE.search(front["body"]) if front else None
    return recorded["blob"] if recorded else None


@dataclasses.dataclass(frozen=True)
class Outline:
    """What two twins must share: their code, their generated parts and their headings."""
    code: tuple[str, ...]
    placeholders: tuple[str, ...]
    headings: tuple[int, ...]


def outline(markdown: str) -> Outline:
    code, placeholders, headings = [], [], []
    fence = None
    block: list[str] = []
    for line in FRONT_MATTER.sub("", SOURCE_COMMENT.sub("", markdown)).splitlines():
        opening = FENCE.match(line)
        if fence is not None:
            if opening and opening["fence"][0] == fence[0] and len(opening["fence"]) >= len(fence) \
                    and not opening["info"].strip():
                code.append("\n".join(block))
                fence, block = None, []
            else:
                block.append(neutral(line))
            continue
        if opening:
            fence, block = opening["fence"], [opening["info"].strip()]
            continue
        if match := PLACEHOLDER.match(line):
            placeholders.append(f"{match['kind']} {QUOTED.sub('TEXT', match['arguments']).strip()}")
        elif match := HEADING.match(line):
            headings.append(len(match["level"]))
    return Outline(tuple(code), tuple(placeholders), tuple(headings))


def neutral(line: str) -> str:
    """A line of code with what a translation may change set aside: its comment and quoted text. An
    included section (``--8<-- "FILE:NAME"``) is code itself, and stays whole."""
    if SNIPPET.match(line):
        return line.strip()
    return COMMENT.sub("", QUOTED.sub('"TEXT"', line)).rstrip()


def problems(page: Path, root: Path = ROOT) -> list[str]:
    """What is wrong between an English page and its twin, each in one line naming both files."""
    page, root = page.resolve(), root.resolve()
    twin = twin_of(page)
    english, japanese = (path.relative_to(root).as_posix() for path in (page, twin))
    if not twin.is_file():
        return [f"{english} has no Japanese twin: write {japanese}"]
    source, translation = page.read_bytes(), twin.read_text(encoding="utf-8")
    found = []
    recorded = recorded_source(translation)
    if recorded is None:
        found.append(f"{japanese} does not say which text of {english} it translates: add front matter "
                     f"'source: {blob_id(source)}' (python -m course translations --record {japanese})")
    elif recorded != blob_id(source):
        found.append(f"{english} has changed since {japanese} was written: see git diff {recorded} "
                     f"{blob_id(source)}, bring the translation up to date, then python -m course "
                     f"translations --record {japanese}")
    ours, theirs = outline(source.decode("utf-8")), outline(translation)
    for field, what in (("code", "code block"), ("placeholders", "generated part"), ("headings", "heading")):
        mine, other = getattr(ours, field), getattr(theirs, field)
        if mine != other:
            found.append(f"{english} and {japanese} differ in their {what}s: {first_difference(mine, other)}")
    return found


def first_difference(english: tuple, japanese: tuple) -> str:
    for number, (one, two) in enumerate(zip(english, japanese), start=1):
        if one != two:
            return f"number {number} is {short(one)} in English and {short(two)} in Japanese"
    if len(english) > len(japanese):
        return f"the English has {len(english)}, the Japanese {len(japanese)}; the first missing is {short(english[len(japanese)])}"
    return f"the Japanese has {len(japanese)}, the English {len(english)}; the first extra is {short(japanese[len(english)])}"


def short(value) -> str:
    text = repr(value) if not isinstance(value, int) else f"level {value}"
    return text if len(text) <= 80 else text[:77] + "…'"


def every_problem(docs: Path = DOCS, root: Path = ROOT) -> list[str]:
    docs, root = docs.resolve(), root.resolve()
    found = [problem for page in english_pages(docs) for problem in problems(page, root)]
    for twin in sorted(docs.rglob(f"*.{LANGUAGE}.md")):
        page = twin.with_name(twin.name.removesuffix(f".{LANGUAGE}.md") + ".md")
        if not page.is_file():
            found.append(f"{twin.relative_to(root).as_posix()} translates no English page: "
                         f"{page.relative_to(root).as_posix()} does not exist")
    return found


def record(twin: Path) -> None:
    """Write the English page's present blob into the twin's front matter."""
    page = twin.with_name(twin.name.removesuffix(f".{LANGUAGE}.md") + ".md")
    line = f"source: {blob_id(page.read_bytes())}"
    text = twin.read_text(encoding="utf-8")
    front = FRONT_MATTER.match(text)
    if page.name == "README.md":
        text = f"<!-- {line} -->\n" + SOURCE_COMMENT.sub("", text)
    elif front is None:
        text = f"---\n{line}\n---\n" + text
    elif SOURCE.search(front["body"]):
        text = text[:front.start("body")] + SOURCE.sub(line, front["body"]) + text[front.end("body"):]
    else:
        text = text[:front.end("body")] + "\n" + line + text[front.end("body"):]
    twin.write_text(text, encoding="utf-8")
