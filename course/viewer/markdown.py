"""Markdown for the generated parts of the pages (``course/site/pages.py``), written so that pymdownx
leaves it as it is: fenced blocks the snippets extension cannot swallow, table cells that stay one
cell, folded blocks; and the error a placeholder raises when it cannot be honoured."""

from __future__ import annotations

import contextlib
import contextvars
import html
import re

from course.runtime.models import CourseError

# The language of the page a part is rendered for: "en", or "ja" for a page docs/NAME.ja.md. Only the
# words around the generated figures change with it; the figures come from the same code and runs.
LANGUAGES = ("en", "ja")
_language = contextvars.ContextVar("page_language", default="en")


@contextlib.contextmanager
def page_language(language: str):
    """Render for a page in ``language`` inside the block."""
    if language not in LANGUAGES:
        raise CourseError(f"no rendering in language {language!r}: one of {', '.join(LANGUAGES)}")
    token = _language.set(language)
    try:
        yield language
    finally:
        _language.reset(token)


def language() -> str:
    return _language.get()


def say(english: str, japanese: str) -> str:
    """The words of a generated part in the page's language; both are given wherever a part is written."""
    return japanese if _language.get() == "ja" else english


class PlaceholderError(CourseError):
    """A placeholder that cannot be honoured (unknown stage, malformed arguments, a run that raises);
    ``line``: where in the page, when the error knows it."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


# Lines that pymdownx.snippets would treat as its own notation, inside generated text.
SNIPPET_NOTATION = re.compile(
    r"(-+8<-+[ \t]+\[[ \t]*(?:start|end)[ \t]*:[ \t]*[a-z][-_0-9a-z]*[ \t]*\])"                 # a section marker
    r"|^([ \t]*)(-+8<-+(?:[ \t]+(?:\"(?:\\\"|[^\"\n\r])+?\"|'(?:\\'|[^'\n\r])+?'))?)(?=\r?\n?$)"  # an include line
)
SECTION_MARKER = re.compile(r"^[ \t]*# --8<-- \[(?:start|end):[\w-]+\][ \t]*$")


def fenced(language: str, text: str) -> str:
    """A fenced block holding ``text`` verbatim, safe from pymdownx.snippets."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = "".join(escape_snippet_notation(line) for line in text.splitlines(keepends=True))
    if not body.endswith("\n"):
        body += "\n"
    return f"{fence}{language}\n{body}{fence}\n"


def escape_snippet_notation(line: str) -> str:
    # pymdownx.snippets runs before the code blocks are formed: a section marker such as
    # "# --8<-- [start:run]" in a diff would be swallowed. Its escape is a ';' before the marker,
    # which snippets removes again, so the reader sees the line as it is in the file.
    def add_escape(match: re.Match) -> str:
        if match.group(1):
            return ";" + match.group(1)
        return match.group(2) + ";" + match.group(3)

    return SNIPPET_NOTATION.sub(add_escape, line, count=1)


def folded(header: str, block: str) -> str:
    """``block`` inside a collapsible admonition (``??? abstract "title"``), indented under it."""
    return f"{header}\n\n" + "".join(f"    {line}" if line.strip("\n") else line
                                     for line in block.splitlines(keepends=True))


def inline_html(text: str) -> str:
    """Text for a table cell, shown as it is: no Markdown, no HTML, no column break."""
    escaped = html.escape(text)
    for character, entity in (("`", "&#96;"), ("*", "&#42;"), ("_", "&#95;"), ("|", "&#124;"), ("\\", "&#92;")):
        escaped = escaped.replace(character, entity)
    return escaped


def markdown_table(header: list[str], rows: list[list], align: str = "") -> str:
    """A Markdown table; ``align`` gives one letter per column, l or r (default: first left, others right)."""
    align = align or "l" + "r" * (len(header) - 1)
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = [header, rule] + [[str(cell) for cell in row] for row in rows]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def shortened(line: str, width: int) -> str:
    """A printed line cut to ``width`` characters for the page, saying how much was left out."""
    text = line.rstrip("\n")
    if len(text) <= width:
        return line
    left_out = len(text) - width
    return f"{text[:width]}… " + say(f"({left_out} more characters on this line, left out on this page)",
                                     f"（この行の残り {left_out} 文字はこのページでは省略）") + "\n"
