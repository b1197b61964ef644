"""How many pages each chapter prints to: Chromium headless, print-to-pdf at its default page size.

    .venv/bin/python -m mkdocs build --strict -d /tmp/site
    .venv/bin/python tests/print_pages.py /tmp/site [s03-stop-conditions ...]

A chapter a learner can finish is one that prints short: the main page of each stage should stay at
16 pages or under, in English and in Japanese (the rare cases live on the depth pages). The pages are
counted from the PDF itself (its page objects), so no PDF tool beyond Chromium is needed.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
MAIN_PAGES = ["s00-one-call", "s01-closed-loop", "s02-loop-state", "s03-stop-conditions", "s04-error-feedback",
              "s05-pruning", "s06-permission-gates"]
MOST = 16


def pdf_pages(pdf: bytes) -> int:
    # Every page is an object of /Type /Page (the tree's nodes are /Pages, which the regex leaves out).
    return len(re.findall(rb"/Type\s*/Page(?![a-z])", pdf))


def printed_pages(html: Path) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "page.pdf"
        subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={scratch}/profile",
                        "--virtual-time-budget=5000", f"--print-to-pdf={out}", html.as_uri()],
                       check=True, capture_output=True, timeout=120)
        return pdf_pages(out.read_bytes())


def main(argv: list[str]) -> int:
    site = Path(argv[0]).resolve()
    names = argv[1:] or MAIN_PAGES
    too_long = []
    for name in names:
        counts = []
        for prefix in ("", "ja/"):
            html = site / prefix / name / "index.html"
            counts.append(printed_pages(html) if html.exists() else None)
        print(f"{name:24} en {counts[0]!s:>3}  ja {counts[1]!s:>3}", flush=True)
        too_long += [name for count in counts if count and count > MOST]
    return 1 if too_long else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
