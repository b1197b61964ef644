"""Against a real model (needs ANTHROPIC_API_KEY; skipped without one by conftest)."""

from __future__ import annotations

import pytest

from conftest import load_stage


@pytest.mark.live
def test_s01_on_the_default_model_lists_the_files(workspace):
    result = load_stage("s01").run("List the files in the workspace", workspace=workspace)
    assert result["stop_reason"] == "end_turn"
    assert not result["model"].startswith("offline")
    assert result["turns"] >= 2  # it had to call list_files to know
    files = [path.name for path in workspace.iterdir() if path.is_file()]
    assert files and all(name in result["answer"] for name in files), result["answer"]
