"""Against a local server (needs ANTHROPIC_BASE_URL and MODEL_ID; skipped without the URL by conftest).

Every stage's basic task, the stage code unchanged, against whatever model the server runs. A small
local model may well not complete it; what these tests hold any model to is what the course
measured on Gemma 3 270M (base, llama.cpp): no stage crashed, and every run from s03 on ended with
a named reason and a valid history. s01 and s02 have no stop condition of their own, so a guard
ends their runaway (``course.capped``), and that counts as what it is, not as a failure.

    export ANTHROPIC_BASE_URL=http://localhost:8080 MODEL_ID=local
    .venv/bin/python -m pytest -m live_local -s    # -s: see the doctor's table too
"""

from __future__ import annotations

import shutil
import typing

import pytest

import course
from course.lab import doctor, ladder
from helpers import assert_valid_history, each_stage

STAGES = ["s00", "s01", "s02", "s03", "s04", "s05", "s06"]
TASK = "List the files in the workspace"
CAP = 12  # model calls: more than the task needs, few enough for a slow local model


@pytest.fixture
def local_model() -> str:
    try:
        return course.resolve_model()
    except course.CourseError as error:
        pytest.fail(str(error))


def fresh_workspace(tmp_path):
    return course.prepare_workspace(shutil.copytree(course.SAMPLE, tmp_path / "workspace"))


@pytest.mark.live_local
@pytest.mark.parametrize("stage", each_stage(*STAGES))
def test_each_stage_ends_its_basic_task_on_the_local_model_without_crashing(stage, local_model, tmp_path):
    agent = ladder.load_stage(stage)
    client = course.capped(course.make_client(local_model), CAP)
    options = ladder.accepted_options(agent.run, {"approver": None, "audit_log": False, "runs_log": False})
    try:
        result = course.as_dict(agent.run(TASK, client=client, model=local_model, workspace=fresh_workspace(tmp_path),
                                          **options))
    except course.Runaway:
        assert stage in ("s01", "s02"), f"{stage} has stop conditions, yet the guard had to stop it"
        return
    assert_valid_history(result["messages"])
    if stage >= "s03":
        named = typing.get_args(agent.StopReason)
        assert result["stop_reason"] in named and result["explanation"], result
    print(f"\n{stage}: {result['stop_reason']} after {result['turns']} turns: {result['answer'][:200]!r}")


@pytest.mark.live_local
def test_the_doctor_reaches_the_local_model(local_model):
    diagnosis = doctor.diagnose(local_model)
    print("\n" + doctor.table(diagnosis))
    assert diagnosis.where.startswith("the server at ") and diagnosis.checks[0].name == "answers at all"
