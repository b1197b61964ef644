"""The ladder: every scenario against every stage, pinned; and the rule that each stage fixes one and breaks none."""

from __future__ import annotations

import json
import re

import pytest

import course
from course.lab import ladder
from course.runtime import runlog
from course.__main__ import main
from course.lab.ladder import outcome_of, rule_violations
from course.lab.scenarios import SCENARIOS, Scenario, scenario_named

# The expected matrix: scenarios down, stages across. "stopped:REASON" pins the stop reason too.
EXPECTED = """
scenario     s00        s01        s02                s03                   s04                s05                s06
list         completed  completed  completed          completed             completed          completed          completed
summarise    completed  completed  completed          completed             completed          completed          completed
report       stopped    completed  completed          completed             completed          completed          completed
total        stopped    completed  completed          completed             completed          completed          completed
find         completed  completed  completed          completed             completed          completed          completed
looping      stopped    runaway    runaway            stopped:no_progress   stopped:no_progress  stopped:no_progress  stopped:no_progress
long-budget  stopped    runaway    runaway            stopped:token_budget  stopped:token_budget  stopped:token_budget  stopped:token_budget
cut          stopped    stopped    stopped            stopped:max_tokens    completed          completed          completed
outage       crashed    crashed    completed          completed             completed          completed          completed
killed       stopped    crashed    completed          completed             completed          completed          completed
typo         stopped    runaway    runaway            stopped:no_progress   completed          completed          completed
unknown-tool stopped    runaway    runaway            stopped:no_progress   completed          completed          completed
bad-args     stopped    runaway    runaway            stopped:no_progress   completed          completed          completed
text-calls   stopped    stopped    stopped            stopped:end_turn      completed          completed          completed
flood        stopped    crashed    stopped:api_error  stopped:api_error     stopped:api_error  completed          completed
reckless     stopped    damaged    damaged            damaged               damaged            damaged            completed
echo         stopped    stopped    stopped:max_tokens stopped:max_tokens    stopped:max_tokens stopped:max_tokens stopped:max_tokens
rambling     stopped    stopped    stopped:max_tokens stopped:max_tokens    completed          completed          completed
stubborn     stopped    runaway    runaway            stopped:no_progress   stopped:no_progress  stopped:no_progress  stopped:no_progress
borrowing    stopped    stopped    stopped:end_turn   stopped:end_turn      stopped:end_turn   stopped:end_turn   stopped:end_turn
"""


def expected_matrix() -> dict[str, dict[str, str]]:
    """{stage: {scenario: expected cell}} from the table above."""
    header, *rows = [line.split() for line in EXPECTED.strip().splitlines()]
    return {stage: {row[0]: row[column] for row in rows} for column, stage in enumerate(header) if column}


EXPECTED_STAGES = list(expected_matrix())
PRESENT = [stage for stage in EXPECTED_STAGES if stage in ladder.stage_names()]


def observed_cell(row: dict) -> str:
    """A row in the table's notation: the outcome, with the stop reason where the table pins one."""
    return f"{row['outcome']}:{row['stop_reason']}" if row["outcome"] == "stopped" else row["outcome"]


def matches(expected: str, row: dict) -> bool:
    return observed_cell(row) == expected if ":" in expected else row["outcome"] == expected


@pytest.fixture(scope="module")
def observed(tmp_path_factory):
    """The ladder over the expected stages present, run once for this module (a few seconds)."""
    with pytest.MonkeyPatch.context() as patch:  # the offline environment of conftest, for the whole module
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "MODEL_ID"):
            patch.delenv(name, raising=False)
        patch.setenv(runlog.ENVIRONMENT_VARIABLE, str(tmp_path_factory.mktemp("ladder") / "runs.jsonl"))
        return ladder.run_ladder(PRESENT)


@pytest.mark.parametrize("stage", EXPECTED_STAGES)
def test_each_stage_meets_its_row_of_the_ladder(observed, stage):
    if stage not in PRESENT:
        pytest.skip(f"{stage} is not present yet")
    rows = {row["scenario"]: row for row in observed if row["stage"] == stage}
    wrong = {name: f"expected {expected}, observed {observed_cell(rows[name])}"
             for name, expected in expected_matrix()[stage].items() if not matches(expected, rows[name])}
    assert not wrong, f"{stage}: {wrong}"


def test_every_scenario_has_a_row_in_the_expected_matrix():
    assert set(expected_matrix()["s00"]) == {scenario.name for scenario in SCENARIOS}


def test_every_stage_fixes_a_failure_of_the_one_before_and_breaks_nothing(observed):
    assert rule_violations(observed) == []


def test_rule_violations_name_a_stage_that_breaks_or_fixes_nothing():
    def row(stage, scenario, outcome):
        return {"stage": stage, "scenario": scenario, "outcome": outcome}
    rows = [row("s00", "a", "completed"), row("s00", "b", "crashed"),
            row("s01", "a", "stopped"), row("s01", "b", "completed"),
            row("s02", "a", "stopped"), row("s02", "b", "completed")]
    assert rule_violations(rows) == [
        "s01 no longer completes a, which s00 completes (stopped)",
        "s02 improves no scenario that s01 fails",
    ]


def test_a_run_that_loses_or_changes_a_file_damages_the_workspace(workspace):
    scenario = Scenario("careful", "task", lambda result, workspace, before: True, may_write=("report.txt",))
    before = course.snapshot(workspace)
    finished = {"stop_reason": "end_turn", "answer": ""}
    (workspace / "report.txt").write_text("allowed\n", encoding="utf-8")
    assert outcome_of(scenario, finished, None, workspace, before) == "completed"
    (workspace / "memo.md").write_text("overwritten\n", encoding="utf-8")
    assert outcome_of(scenario, finished, None, workspace, before) == "damaged"
    (workspace / "memo.md").write_bytes(before["memo.md"])
    (workspace / "todo.md").unlink()
    assert outcome_of(scenario, None, course.Runaway(5), workspace, before) == "damaged"


def test_a_file_written_changed_or_removed_beside_the_workspace_damages_a_scenario_that_watches_outside(workspace):
    watching = Scenario("watching", "task", lambda result, workspace, before: True, watches_outside=True)
    finished = {"stop_reason": "end_turn", "answer": ""}
    (workspace.parent / "already-there.txt").write_text("beside\n", encoding="utf-8")
    before, outside = course.snapshot(workspace), ladder.outside_of(workspace)
    assert outcome_of(watching, finished, None, workspace, before, outside) == "completed"
    (workspace.parent / "escaped.txt").write_text("out\n", encoding="utf-8")
    assert outcome_of(watching, finished, None, workspace, before, outside) == "damaged"
    assert outcome_of(watching, finished, None, workspace, before) == "completed"  # not watched: not seen
    (workspace.parent / "escaped.txt").unlink()
    (workspace.parent / "already-there.txt").write_text("changed\n", encoding="utf-8")
    assert outcome_of(watching, finished, None, workspace, before, outside) == "damaged"
    (workspace.parent / "already-there.txt").unlink()
    assert outcome_of(watching, finished, None, workspace, before, outside) == "damaged"


@pytest.mark.parametrize("stage, outcome", [("s05", "damaged"), ("s06", "completed")])
def test_the_reckless_model_damages_s05_and_completes_on_s06(stage, outcome):
    scenario = scenario_named("reckless")
    with ladder.scratch_workspace() as workspace:
        cell = ladder.run_cell(stage, scenario, workspace)
        assert cell.outcome == outcome and cell.stop_reason == "end_turn"
        escaped = (workspace.parent / "escaped.txt").exists()
    assert escaped == (stage == "s05")  # s05 wrote beside the workspace; s06's sandbox refused it


def test_a_cell_writes_the_runs_log_it_is_given_and_no_transcript_nor_audit_of_the_learner(tmp_path, monkeypatch):
    """The ladder measures: a run it makes is nobody's run to resume or audit, and is logged only where asked."""
    learner = {runlog.ENVIRONMENT_VARIABLE: "runs.jsonl", "AGENT_COURSE_TRANSCRIPTS": "transcripts",
               runlog.AUDIT_VARIABLE: "audit.jsonl"}
    for variable, name in learner.items():
        monkeypatch.setenv(variable, str(tmp_path / name))
    given = tmp_path / "given.jsonl"
    with ladder.scratch_workspace() as workspace:
        cell = ladder.run_cell("s06", scenario_named("report"), workspace, log_runs=given)
    assert cell.outcome == "completed" and cell.raised is None and len(cell.usages) == cell.turns == 3
    assert cell.result["stop_reason"] == "end_turn" and not cell.result["transcript"]
    assert [record["stage"] for record in runlog.read(given)] == ["s06"]
    assert [name for name in learner.values() if (tmp_path / name).exists()] == []


def test_a_correct_workspace_does_not_complete_a_run_cut_short(workspace):
    scenario = scenario_named("report")
    before = course.snapshot(workspace)
    (workspace / "report.txt").write_text("Files: 5\n" + "\n".join(before) + "\n", encoding="utf-8")
    assert outcome_of(scenario, {"stop_reason": "end_turn"}, None, workspace, before) == "completed"
    assert outcome_of(scenario, {"stop_reason": "no_progress"}, None, workspace, before) == "stopped"


def test_markdown_shows_scenarios_down_and_stages_across(observed):
    table = ladder.markdown(observed).splitlines()
    assert table[0].split("|")[2:-1] == [f" {stage} " for stage in PRESENT]
    assert [line.split("|")[1].strip(" `") for line in table[2:]] == [scenario.name for scenario in SCENARIOS]
    assert "| `list` | completed · 2 turns |" in table[2]


def test_ladder_command_prints_the_table_or_the_json(observed, monkeypatch, capsys):
    monkeypatch.setattr(ladder, "run_ladder", lambda: observed)
    assert main(["ladder", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == observed
    assert main(["ladder"]) == 0
    assert "The ladder holds" in capsys.readouterr().out
    assert main(["ladder", "--markdown"]) == 0
    assert ladder.markdown(observed) in capsys.readouterr().out


def test_the_terminal_table_fits_100_columns_and_its_legend_spells_out_every_word(observed, monkeypatch, capsys):
    monkeypatch.setattr(ladder, "run_ladder", lambda: observed)
    assert main(["ladder"]) == 0
    printed = capsys.readouterr().out
    assert max(len(line) for line in printed.splitlines()) <= 100
    table, legend = printed.split("\n\n", 1)
    header, *lines = table.splitlines()
    assert header.split() == ["scenario"] + PRESENT
    assert [line.split()[0] for line in lines] == [scenario.name for scenario in SCENARIOS]
    for row in observed:
        cell = ladder.short_cell(row)
        word = cell.split()[0]
        assert word in legend, f"the legend does not explain {word!r}"
        if row["outcome"] == "stopped":
            assert f"{word} = {row['stop_reason']}" in legend
        line = lines[[scenario.name for scenario in SCENARIOS].index(row["scenario"])]
        assert cell in line


def test_run_command_plays_a_scenario_with_a_trace(capsys):
    assert main(["run", "s01", "--scenario", "report"]) == 0
    out = capsys.readouterr().out
    assert "→ write_file" in out and "outcome: completed · 3 turns" in out


def test_what_a_scenario_shows_names_its_article_by_title():
    for scenario in SCENARIOS:
        assert not re.search(r"\bseed\b", scenario.shows, re.I), f"{scenario.name}: {scenario.shows}"
