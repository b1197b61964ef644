"""What docs/setup-local.md says a stage does with ANTHROPIC_BASE_URL set and no model named, checked
against the stage's command line: it stops before any call, with the message the page quotes."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from helpers import ROOT, STAGES, load_stage

pytestmark = pytest.mark.stage()  # this drives each stage's command line to check a page; it pins none

PAGE = ROOT / "docs" / "setup-local.md"


def quoted_error() -> str:
    """The error line the page quotes (in a code block, starting with "error: ANTHROPIC_BASE_URL")."""
    found = re.findall(r"^error: ANTHROPIC_BASE_URL.*$", PAGE.read_text(encoding="utf-8"), re.M)
    assert len(found) == 1, f"{PAGE.name} should quote the error once, found {found}"
    return found[0]


def closed_local_port() -> int:
    """A loopback port nothing listens on: a stage that tried to reach it would fail to connect."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_asks_for_the_local_model_name_as_the_page_says(stage, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{closed_local_port()}")
    monkeypatch.delenv("MODEL_ID", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    status = load_stage(stage).main(["List the files", "--workspace", str(tmp_path)])
    out, err = capsys.readouterr()
    assert status == 2
    assert err.strip() == quoted_error(), err
    assert "offline" in quoted_error()  # the page's claim: it does not fall back to the offline model
    assert not list(tmp_path.iterdir())  # no call was made: nothing ran in the workspace
    assert "exit status 2" in " ".join(PAGE.read_text(encoding="utf-8").split())  # the status the page gives
