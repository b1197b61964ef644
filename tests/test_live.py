"""Against a real model (needs ANTHROPIC_API_KEY; skipped without one by conftest).

The same stage code that the offline tests drive runs here against Claude, unchanged: only the
client differs. Each test costs a few cents at most.
"""

from __future__ import annotations

import pytest

import course
from helpers import each_stage, load_stage

STAGES = ["s01", "s02", "s03", "s04", "s05", "s06"]


@pytest.mark.live
@pytest.mark.parametrize("stage", each_stage(*STAGES))
def test_each_stage_on_the_default_model_lists_the_files(stage, workspace):
    options = {"approver": None, "audit_log": False} if stage == "s06" else {}
    result = course.as_dict(load_stage(stage).run("List the files in the workspace", workspace=workspace, **options))
    assert result["stop_reason"] == "end_turn"
    assert not result["model"].startswith("offline")
    assert result["turns"] >= 2  # it had to call list_files to know
    files = [path.name for path in workspace.iterdir() if path.is_file()]
    assert files and all(name in result["answer"] for name in files), result["answer"]


@pytest.mark.stage("s03")  # s03 on the real API
@pytest.mark.live
def test_s03_computes_the_total_price_of_sample_txt(workspace):
    result = load_stage("s03").run("Read sample.txt and compute the total price", workspace=workspace, runs_log=False)
    assert result.stop_reason == "end_turn"
    assert "20000" in result.answer.replace(",", "")
