"""MkDocs hook: the glue between the pages and ``course.site.pages``, which renders their generated parts.

The placeholders a page may hold (``<!-- trace s01 "TASK" -->``, ``<!-- diff s00 s01 -->``, ...) and
their options are documented in ``course/site/pages.py``'s docstring; this file only

* finds the placeholders, each on a line of its own and outside fenced code blocks, and replaces
  each with what ``course.site.pages.render`` makes of it, indented as the placeholder was (so that it
  works inside a content tab or an admonition);
* renders each page's parts in the page's language: a page ``docs/NAME.ja.md`` gets Japanese words
  around the same generated figures (``language_of``), and its runs link to the viewer's Japanese pages;
* checks that every code include of a page names a section that exists (``course.site.pages.check_code_includes``);
* fails the build, naming the page and the line, for a placeholder that cannot be honoured or a
  renderer that crashes;
* draws the diagrams with no network: Material for MkDocs draws ``mermaid`` blocks with the script it
  finds as the global ``mermaid``, and loads it from a CDN only when there is none. ``make install``
  vendors the script of the npm package ``mermaid`` at the version the Makefile pins
  (``MERMAID_VERSION``) into ``.venv/share/agent-course/``; this hook adds it to the site as
  ``assets/javascripts/mermaid.min.js``, loaded before Material's own script runs. Without it (no
  npm when the course was installed), the build says so and the diagrams need the network.

The hook is registered in ``mkdocs.yml`` under ``hooks:`` and kept out of the site by ``exclude_docs``.
"""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[2]  # the repository root, where the course package lives
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from course.site import pages as site  # noqa: E402  (found through the line above when the course is not installed)
from course.viewer import pages as viewer  # noqa: E402
from course.runtime.models import CourseError  # noqa: E402
from course.site.pages import KINDS, inline_html  # noqa: E402,F401  (tests read the hook's tables with inline_html)

log = logging.getLogger("mkdocs.hooks.generate")

PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)<!--\s*(?P<kind>" + "|".join(KINDS) + r")\b(?P<arguments>.*?)-->[ \t]*$")
FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})")
MERMAID_SITE_PATH = "assets/javascripts/mermaid.min.js"


# ---------------------------------------------------------------- MkDocs events

def on_config(config):
    # `mkdocs serve` rebuilds in one process: each build runs the code as it is now, taking only the runs
    # an earlier build made of byte-for-byte the same code (course/site/build_cache.py)
    site.start_build(remember=True)
    return config


def on_page_markdown(markdown: str, page, config, files) -> str:
    where = page.file.src_uri
    try:
        markdown = site.check_code_includes(markdown)
    except site.PlaceholderError as error:
        raise PluginError(f"{where}:{error.line}: {error}") from None
    return expand(markdown, where=where, language=language_of(page))


def language_of(page) -> str:
    """The language a page is written in. Its file's name says it (``NAME.ja.md``, the suffix layout of
    mkdocs-static-i18n), and so does ``page.file.locale``, which the plugin sets from that suffix
    (mkdocs_static_i18n/suffix.py); the language of the build a page sits in does not: a page that
    falls back to English in the Japanese build is English. Both must agree."""
    named = "ja" if page.file.src_uri.endswith(".ja.md") else "en"
    locale = getattr(page.file, "locale", None)
    if locale is not None and locale != named:
        raise PluginError(f"{page.file.src_uri}: its name says {named!r}, mkdocs-static-i18n says {locale!r}")
    return named


def on_page_content(html: str, page, config, files) -> str:
    # A generated run links to its page in the viewer as course-run:ID; here, as a path from this page,
    # to the viewer's page in this page's language.
    return viewer.resolve_links(html, page.url, language=language_of(page))


LANGUAGE_SWITCH = re.compile(r'href="/(?P<rest>[^"]*)"(?P<between>[^>]*hreflang=")')


def on_post_page(output: str, page, config) -> str:
    """The language switch of a home page links to "/" and "/ja/" (mkdocs-static-i18n): made relative to
    the page, like every other link, so that the site works opened from its folder or under any path."""
    up = "../" * page.url.count("/")
    return LANGUAGE_SWITCH.sub(lambda link: f'href="{up or "./"}{link["rest"]}"{link["between"]}', output)


def on_post_build(config):
    # Each run the pages showed, as a page of the trace viewer (course/viewer/pages.py), with its script and style.
    viewer.write_site(config.site_dir)


def on_files(files, config):
    script = vendored_mermaid()
    if script is None:
        log.info("mermaid is not vendored (run make install, which needs npm): the diagrams will load it "
                 "from the network")
        return files
    from mkdocs.structure.files import File

    files.append(File.generated(config, MERMAID_SITE_PATH, abs_src_path=str(script)))
    # Material's own script runs after the extra scripts; finding a global `mermaid`, it loads no other.
    if MERMAID_SITE_PATH not in [str(entry) for entry in config.extra_javascript]:
        config.extra_javascript.append(MERMAID_SITE_PATH)
    return files


def vendored_mermaid() -> Path | None:
    """The mermaid script `make install` vendored, at the version the Makefile pins; None if absent."""
    pinned = re.search(r"^MERMAID_VERSION\s*:=\s*(\S+)", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    if not pinned:
        raise PluginError("the Makefile pins no MERMAID_VERSION")
    path = Path(sys.prefix) / "share" / "agent-course" / f"mermaid-{pinned[1]}.min.js"
    return path if path.is_file() else None


# ---------------------------------------------------------------- placeholders

# Said once on a Japanese page, after its first trace: the labels of a trace are translated for the page only.
TRACE_LABELS_NOTE_JA = ("トレースのラベル（ターン、続行、停止、答えなど）はこのページ用に日本語にしています。"
                        "端末で `course run` を動かすと、同じ行が英語で表示されます。\n\n")


def expand(markdown: str, where: str = "<page>", language: str = "en") -> str:
    """Replace every placeholder line of ``markdown`` that is not inside a fenced code block."""
    out = []
    fence = None
    noted = False
    for number, line in enumerate(markdown.splitlines(keepends=True), start=1):
        opening = FENCE.match(line)
        if fence is not None:
            if opening and opening["fence"][0] == fence[0] and len(opening["fence"]) >= len(fence):
                fence = None
            out.append(line)
            continue
        if opening:
            fence = opening["fence"]
            out.append(line)
            continue
        match = PLACEHOLDER.match(line)
        if not match:
            out.append(line)
            continue
        generated = generate(match["kind"], match["arguments"].strip(), where=f"{where}:{number}", language=language)
        if language == "ja" and match["kind"] == "trace" and not noted:
            generated, noted = generated + TRACE_LABELS_NOTE_JA, True
        out.append("".join(match["indent"] + generated_line if generated_line.strip() else generated_line
                           for generated_line in generated.splitlines(keepends=True)))
    return "".join(out)


def generate(kind: str, arguments: str, where: str = "<page>", language: str = "en") -> str:
    """``course.site.pages.render``, its failure turned into the build's, at ``where`` (page:line)."""
    try:
        return site.render(kind, arguments, language=language)
    except CourseError as error:  # a placeholder that cannot be honoured: its own words are enough
        raise PluginError(f"{where}: {error}") from None
    except Exception as error:  # a renderer that crashes must fail the build, with its place
        raise PluginError(f"{where}: {kind} failed: {type(error).__name__}: {error}") from error
