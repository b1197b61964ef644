"""Stage s06: the decision and its place in the loop.

Exercise 1 is ``decide()`` in s06/permissions.py (deny, then ask, then allow, then the risk class's
default), exercise 2 is ``Gate.ask_person()`` (a person approves exactly one thing; with no one to
ask, ask means deny). Every call that reaches the gate is decided by ``decide()``, so a test that
runs a tool through the gate pins exercise 1; one whose decision is "ask" pins exercise 2 as well.

The other properties of s06 have files of their own: tests/test_s06_approvals_cover_exactly_one_thing.py,
test_s06_paths_stay_inside.py, test_s06_commands_read_as_the_shell_does.py,
test_s06_commands_run_confined.py and test_s06_attacks_breach_nothing.py.
"""

from __future__ import annotations

import json
import sys

import pytest

import course
import course.sandbox.confinement
from helpers import DONE, results_in, scripted_client
from s06_world import Person, gate

pytestmark = pytest.mark.stage("s06")  # every test here pins s06, unless it says otherwise

RECKLESS_TASK = "Tidy up the workspace, then write the list of files and their count to report.txt"


# ---------------------------------------------------------------- helpers

def permissions(s06):
    """The permissions module the stage imported (the reference's, or a student copy's)."""
    return sys.modules[s06.Gate.__module__]


def verdict(s06, workspace, tool: str, arguments: dict, rules=None, approved=()):
    """What decide() says about one call, read by the gate as run() would read it; nothing runs."""
    checking = gate(confinement=course.sandbox.confinement.probe(), rules=rules)
    return permissions(s06).decide(checking.read_call(workspace, tool, arguments), checking.rules, set(approved))


def decision(s06, workspace, tool: str, rules=None, **arguments) -> str:
    return verdict(s06, workspace, tool, arguments, rules).decision


def one_call(name: str, number: int = 1, **arguments) -> list[dict]:
    return [{"type": "text", "text": "Trying."},
            {"type": "tool_use", "id": f"toolu_scripted_{number}", "name": name, "input": arguments}]


def refusal(block: dict, kind: str = "denied") -> dict:
    """An is_error result in the structured shape: ok false, the kind, a message and a hint."""
    assert block["is_error"] is True
    error = json.loads(block["content"])
    assert set(error) == {"ok", "error", "message", "hint"} and error["ok"] is False and error["error"] == kind
    assert error["message"] and error["hint"]
    return error


# ---------------------------------------------------------------- decide: deny, then ask, then allow, then the default

@pytest.mark.exercise(1)
def test_deny_is_checked_before_ask_and_ask_before_allow_whatever_the_order_of_the_rules(s06, workspace):
    Rule = permissions(s06).Rule
    allow = Rule("allow", "run_command", "touch a.txt")  # an allow rule for a command names it exactly
    ask, deny = (Rule(kind, "run_command", "touch") for kind in ("ask", "deny"))
    assert decision(s06, workspace, "run_command", [allow, ask, deny], command="touch a.txt") == "deny"
    assert decision(s06, workspace, "run_command", [allow, ask], command="touch a.txt") == "ask"
    assert decision(s06, workspace, "run_command", [allow], command="touch a.txt") == "allow"


@pytest.mark.exercise(1)
def test_the_same_order_holds_for_a_file_tool_and_a_path_rule(s06, workspace):
    Rule = permissions(s06).Rule
    allow, ask, deny = (Rule(kind, "delete_file", "*.md") for kind in ("allow", "ask", "deny"))
    assert decision(s06, workspace, "delete_file", [allow, ask, deny], path="memo.md") == "deny"
    assert decision(s06, workspace, "delete_file", [allow, ask], path="memo.md") == "ask"
    assert decision(s06, workspace, "delete_file", [allow], path="memo.md") == "allow"  # destructive, yet allowed
    assert decision(s06, workspace, "delete_file", [allow], path="todo.md") == "allow"
    assert decision(s06, workspace, "delete_file", [allow], path="hello.txt") == "ask"  # no rule: the default


@pytest.mark.exercise(1)
def test_the_first_matching_rule_of_a_kind_decides_and_is_named(s06, workspace):
    rules = [permissions(s06).Rule("deny", "write_file", "*.md"), permissions(s06).Rule("deny", "*", "*")]
    found = verdict(s06, workspace, "write_file", {"path": "new.md", "content": ""}, rules)
    assert (found.decision, found.decided_by) == ("deny", "rule") and "deny write_file *.md" in found.why


@pytest.mark.exercise(1)
def test_with_no_matching_rule_each_risk_class_gets_its_default(s06, workspace):
    assert decision(s06, workspace, "read_file", [], path="memo.md") == "allow"        # read
    assert decision(s06, workspace, "write_file", [], path="new.txt", content="") == "allow"  # write
    assert decision(s06, workspace, "delete_file", [], path="memo.md") == "ask"        # destructive
    assert decision(s06, workspace, "move_file", [], source="memo.md", destination="m.md") == "ask"
    assert decision(s06, workspace, "run_command", [], command="touch a.txt") == "ask"  # execute
    found = verdict(s06, workspace, "delete_file", {"path": "memo.md"}, [])
    assert found.decided_by == "default" and "destructive actions default to ask" in found.why
    found = verdict(s06, workspace, "run_command", {"command": "touch a.txt"}, [])
    assert found.decided_by == "default" and "'touch' is not on the safe list" in found.why


@pytest.mark.exercise(1)
def test_a_plain_command_of_the_safe_list_is_the_default_that_allows_a_command(s06, workspace):
    found = verdict(s06, workspace, "run_command", {"command": "wc -l memo.md"}, [])
    if not course.sandbox.confinement.probe().available:
        assert found.decision == "ask" and "kernel confinement is not available" in found.why
        return
    assert (found.decision, found.decided_by) == ("allow", "safe list")


@pytest.mark.exercise(1)
def test_a_call_is_decided_on_what_it_acts_on_not_on_its_text(s06, workspace):
    """decide() takes what the support package read: the entries a file tool acts on, and every program
    anywhere in a command, so that its rules need no parsing of their own."""
    Call, Rule = permissions(s06).Call, permissions(s06).Rule
    rules = [Rule("deny", "run_command", "rm"), Rule("deny", "*", "secret/*"), Rule("allow", "move_file", "drafts/*")]
    decide = permissions(s06).decide
    assert decide(Call("read_file", "read", ["secret/key.txt"]), rules, set()).decision == "deny"
    assert decide(Call("delete_file", "destructive", ["link"], ["secret/key.txt"]), rules, set()).decision == "deny"
    assert decide(Call("read_file", "read", ["notes.txt"]), rules, set()).decision == "allow"
    assert decide(Call("move_file", "destructive", ["drafts/a", "drafts/b"]), rules, set()).decision == "allow"
    assert decide(Call("move_file", "destructive", ["drafts/a", "memo.md"]), rules, set()).decision == "ask"
    assert decide(Call("read_file", "read", ["x"], refused="a hard link of a denied file"), [], set()).decision == "deny"
    checking = gate(confinement=course.sandbox.confinement.probe())
    command = checking.read_call(workspace, "run_command", {"command": "ls && rm memo.md"}).command
    found = decide(Call("run_command", "execute", [command.text], command=command), rules, set())
    assert found.decision == "deny" and "rm memo.md" in found.why


@pytest.mark.exercise(1)
def test_a_persons_always_allows_exactly_what_was_approved(s06, workspace):
    Call = permissions(s06).Call
    decide = permissions(s06).decide
    approved = {("delete_file", "todo.md"), ("run_command", "grep -r x .")}
    found = decide(Call("delete_file", "destructive", ["todo.md"]), [], approved)
    assert (found.decision, found.decided_by) == ("allow", "person")
    assert decide(Call("delete_file", "destructive", ["memo.md"]), [], approved).decision == "ask"
    assert decide(Call("run_command", "execute", ["grep -r x ."], unsafe="-r"), [], approved).decision == "allow"
    assert decide(Call("run_command", "execute", ["grep -r x ."], unsafe="-r", once_only="a glob"), [],
                  approved).decision == "ask"  # a command "always" may not cover is asked about every time
    deny = permissions(s06).Rule("deny", "delete_file", "todo.md")
    assert decide(Call("delete_file", "destructive", ["todo.md"]), [deny], approved).decision == "deny"


@pytest.mark.exercise(1)
def test_an_allow_rule_for_a_command_names_the_command_exactly(s06, workspace):
    Rule = permissions(s06).Rule
    rules = [Rule("allow", "run_command", "touch")]
    assert decision(s06, workspace, "run_command", rules, command="touch a.txt") == "ask"
    assert decision(s06, workspace, "run_command", [Rule("allow", "run_command", "touch a.txt")],
                    command="touch a.txt\n") == "allow"  # the blanks sh itself skips do not count


@pytest.mark.exercise(1)
def test_overwriting_an_existing_file_counts_as_destructive(s06, workspace):
    assert decision(s06, workspace, "write_file", path="memo.md", content="") == "ask"
    assert decision(s06, workspace, "write_file", path="./memo.md", content="") == "ask"
    assert decision(s06, workspace, "write_file", path="report.txt", content="new") == "allow"


@pytest.mark.exercise(1, 2)
def test_overwriting_through_a_detour_still_counts_as_destructive(s06, workspace):
    before = (workspace / "memo.md").read_bytes()
    text, is_error = s06.run_tool(workspace, "write_file", {"path": "nowhere/../memo.md", "content": ""},
                                  gate(confinement=course.sandbox.confinement.probe()))
    assert is_error and json.loads(text)["error"] == "denied"
    assert (workspace / "memo.md").read_bytes() == before


@pytest.mark.exercise(1)
def test_path_rules_see_the_path_normalised(s06, workspace):
    for path in (".env", "./.env", "sub/../.env", "config/.env"):
        assert decision(s06, workspace, "write_file", path=path, content="KEY=1") == "deny", path


# ---------------------------------------------------------------- the denial fed back to the model

@pytest.mark.exercise(1, 2)
def test_ask_with_no_terminal_means_deny_and_the_model_is_told_why_and_goes_on(s06, workspace):
    client, requests = scripted_client(one_call("delete_file", path="todo.md"), DONE)
    result = s06.run("Tidy up", client=client, model="scripted", workspace=workspace, approver=None, audit_log=False)
    assert (workspace / "todo.md").is_file()
    error = refusal(results_in(result.messages)[0])
    assert error["message"].startswith("delete_file was not run:") and "no terminal" in error["message"]
    assert result.stop_reason == "end_turn" and result.turns == 2
    assert requests[1]["messages"][-1]["content"][0]["is_error"] is True  # the model read the refusal


@pytest.mark.exercise(1, 2)
def test_with_no_terminal_the_default_person_is_no_one_and_ask_means_deny(s06, workspace, monkeypatch, tmp_path):
    monkeypatch.setattr(s06.sys.stdin, "isatty", lambda: False, raising=False)
    audit = tmp_path / "audit.jsonl"
    result = s06.run("Delete memo.md", model="offline", workspace=workspace, audit_log=audit)  # the default ask
    assert result.stop_reason == "end_turn"  # the tutor does not delete; nothing was asked, nothing hung
    monkeypatch.setattr(s06, "ask_on_terminal", lambda *a: pytest.fail("asked with no terminal"))
    checking = s06.Gate(rules=s06.RULES, approver=None, audit_log=audit)
    text, is_error = s06.run_tool(workspace, "delete_file", {"path": "memo.md"}, checking)
    assert is_error and "no terminal to ask a person, so ask means deny" in text
    assert json.loads(audit.read_text().splitlines()[-1])["decided_by"] == "no terminal"


@pytest.mark.exercise(1, 2)
def test_a_denial_says_what_to_do_instead_by_risk_class(s06, workspace):
    instead = permissions(s06).INSTEAD
    for tool, arguments, risk in (("delete_file", {"path": "todo.md"}, "destructive"),
                                  ("read_file", {"path": ".env"}, "read"),
                                  ("run_command", {"command": "touch x"}, "execute")):
        (workspace / ".env").write_text("KEY=1\n", encoding="utf-8")
        text, is_error = s06.run_tool(workspace, tool, arguments, gate(confinement=course.sandbox.confinement.probe()))
        assert is_error and json.loads(text)["hint"] == instead[risk], tool
    assert "ls, cat, wc, grep, head, tail, echo, pwd" in instead["execute"]  # the safe list, as the tool table says it


@pytest.mark.exercise(1)
@pytest.mark.parametrize("expression, why", [("1e308 * 10", "overflowed"), ("1e308 * 10 - 1e308 * 10", "overflowed"),
                                             ("(-8) ** 0.5", "complex"), ("(-1) ** 0.5 * 0", "complex")])
def test_the_calculator_refuses_inf_nan_and_complex_results(s06, workspace, expression, why):
    text, is_error = s06.run_tool(workspace, "calculate", {"expression": expression},
                                  gate(confinement=course.sandbox.confinement.probe()))
    assert is_error and json.loads(text)["error"] == "tool_failed" and why in json.loads(text)["message"]
    assert s06.run_tool(workspace, "calculate", {"expression": "2 ** 0.5"},
                        gate(confinement=course.sandbox.confinement.probe()))[1] is False


# ---------------------------------------------------------------- the audit log

@pytest.mark.exercise(1, 2)
def test_the_audit_log_has_one_json_line_per_decision(s06, workspace, tmp_path):
    log = tmp_path / "decisions.jsonl"
    checking = gate(Person(("allow once", "")), course.sandbox.confinement.probe(), audit_log=log)
    s06.run_tool(workspace, "list_files", {"path": "."}, checking)                 # a default allows
    s06.run_tool(workspace, "run_command", {"command": "ls && rm memo.md"}, checking)  # a rule denies
    s06.run_tool(workspace, "delete_file", {"path": "todo.md"}, checking)          # a person allows
    s06.run_tool(workspace, "no_such_tool", {}, checking)                          # never reaches the gate
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 3
    assert all({"tool", "arguments", "rule", "decision", "decided_by"} <= set(line) for line in lines)
    assert [(line["tool"], line["decision"], line["decided_by"]) for line in lines] == [
        ("list_files", "allow", "default"), ("run_command", "deny", "rule"), ("delete_file", "allow", "person")]
    assert lines[1]["arguments"] == {"command": "ls && rm memo.md"} and "deny run_command rm" in lines[1]["rule"]


def test_the_audit_log_keeps_a_refused_write_short(s06, workspace, tmp_path):
    """A refused write_file of 3 MB is logged with its content cut to the log's bound and its length said."""
    log = tmp_path / "decisions.jsonl"
    content = "x" * 3_000_000
    s06.run_tool(workspace, "write_file", {"path": "big.txt", "content": content}, gate(audit_log=log))
    line = json.loads(log.read_text(encoding="utf-8"))
    assert line["decision"] == "deny" and log.stat().st_size < 2 * course.runtime.runlog.MOST_LOGGED_CHARS
    assert line["arguments"]["content"].endswith("[... cut: 3,000,000 characters in all]")
    assert line["arguments"]["path"] == "big.txt" and not (workspace / "big.txt").exists()


@pytest.mark.exercise(1)
def test_the_audit_log_goes_to_its_default_place_unless_turned_off(s06, workspace, tmp_path):
    s06.run_tool(workspace, "list_files", {"path": "."}, gate(confinement=course.sandbox.confinement.probe(), audit_log=None))
    s06.run_tool(workspace, "list_files", {"path": "."}, gate(confinement=course.sandbox.confinement.probe(), audit_log=False))
    default = course.runtime.runlog.audit_path()  # tests point it at a temporary file
    assert default.is_relative_to(tmp_path) and len(default.read_text(encoding="utf-8").splitlines()) == 1


# ---------------------------------------------------------------- the reckless model, s05 against s06

def run_reckless(stage, workspace, **options):
    """A run of offline-reckless, and the errors its tool results reported, read as they were written
    (s05 on masks old results in the history itself)."""
    errors = []

    def trace(kind, payload):
        if kind == "tool_results":
            errors.extend(json.loads(block["content"])["error"] for block in payload["content"] if block["is_error"])

    result = stage.run(RECKLESS_TASK, client=course.capped(course.make_client("offline-reckless"), 40),
                       model="offline-reckless", workspace=workspace, runs_log=False, trace=trace, **options)
    return result, errors


def outside_entries(workspace) -> set[str]:
    return {path.name for path in workspace.parent.iterdir()} - {workspace.name}


@pytest.mark.exercise(1, 2)
def test_the_reckless_model_completes_on_s06_and_the_workspace_is_intact(s06, workspace):
    before, around = course.snapshot(workspace), outside_entries(workspace)
    result, errors = run_reckless(s06, workspace, approver=None, audit_log=False)
    after = course.snapshot(workspace)
    assert result.stop_reason == "end_turn"
    assert {path: after[path] for path in before} == before and set(after) - set(before) == {"report.txt"}
    assert outside_entries(workspace) == around
    report = after["report.txt"].decode("utf-8")
    assert "Files: 5" in report and all(name in report for name in before)
    assert errors == ["denied", "denied", "outside_workspace", "outside_workspace", "denied", "denied"]


@pytest.mark.stage()  # s05 only shows what the gate fixes; it pins no stage
def test_the_reckless_model_damages_the_workspace_on_s05(s05, workspace):
    before = course.snapshot(workspace)
    result, errors = run_reckless(s05, workspace)
    assert result.stop_reason == "end_turn"  # it ends the run itself: nothing told it anything was wrong
    assert errors == ["unknown_tool"] * 4  # delete_file, and run_command three times: s05 has neither
    assert (workspace / "memo.md").read_bytes() == b"" != before["memo.md"]
    assert (workspace.parent / "escaped.txt").is_file()


def test_the_reckless_scenario_runs_s06_with_nobody_to_ask_and_drops_no_option(s06):
    import inspect

    from course.lab.scenarios import SCENARIOS

    scenario = next(scenario for scenario in SCENARIOS if scenario.name == "reckless")
    assert scenario.options["approver"] is None  # a ladder at a terminal must not wait for a person
    assert set(scenario.options) <= set(inspect.signature(s06.run).parameters)  # none silently dropped
