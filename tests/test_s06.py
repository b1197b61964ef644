"""Stage s06: permission gates, a path sandbox and a bounded command tool.

Exercise 1 is ``inside`` (the path sandbox), exercise 2 is ``plain_words`` in s06/gate.py (the
words of a command node, only when every part of it is plain). Every file tool goes through
``inside``, so a test that runs a file tool pins exercise 1; every command the gate allows goes
through ``plain_words``, so a test that has a command allowed pins exercise 2.

The tests of gate bypasses (a comment sign, allowed commands that write, shell expansion,
process substitution, a path deny rule and the command tool) pin holes found in an earlier s06
and fixed: each sends what got through then. The gate's own tests are in test_s06_gate.py, the
attack corpus in test_s06_attacks.py, the comparison with the real shell in test_s06_differential.py.
"""

from __future__ import annotations

import json
import os
import sys
import time

import pytest

import course
from helpers import DONE, results_in, scripted_client

RECKLESS_TASK = "Tidy up the workspace, then write the list of files and their count to report.txt"


# ---------------------------------------------------------------- helpers

def gates(s06):
    """The gate module the stage imported (the reference's, or a student copy's)."""
    return sys.modules[s06.Gate.__module__]


def gate(s06, rules=None, ask=None, audit_log=False):
    return s06.Gate(rules=s06.RULES if rules is None else rules, approver=ask, audit_log=audit_log,
                    confinement=s06.confine.probe())


def decision(s06, workspace, tool: str, rules=None, **arguments) -> str:
    return gate(s06, rules).decide(workspace, tool, arguments)[0]


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


class Person:
    """A scripted person in 'ask': answers in turn, and remembers what they were asked."""

    def __init__(self, *answers: tuple[str, str]):
        self.answers, self.asked = list(answers), []

    def __call__(self, tool, arguments, why, covers):
        self.asked.append((tool, arguments, why, covers))
        return self.answers.pop(0)


# ---------------------------------------------------------------- rules: deny, then ask, then allow

@pytest.mark.exercise(2)
def test_deny_is_checked_before_ask_and_ask_before_allow_whatever_the_order_of_the_rules(s06, workspace):
    Rule = gates(s06).Rule
    allow = Rule("allow", "run_command", "touch a.txt")  # an allow rule for a command names it exactly
    ask, deny = (Rule(kind, "run_command", "touch") for kind in ("ask", "deny"))
    assert decision(s06, workspace, "run_command", [allow, ask, deny], command="touch a.txt") == "deny"
    assert decision(s06, workspace, "run_command", [allow, ask], command="touch a.txt") == "ask"
    assert decision(s06, workspace, "run_command", [allow], command="touch a.txt") == "allow"


def test_the_first_matching_rule_of_a_kind_decides_and_is_named(s06, workspace):
    rules = [gates(s06).Rule("deny", "write_file", "*.md"), gates(s06).Rule("deny", "*", "*")]
    verdict, why, decided_by = gate(s06, rules).decide(workspace, "write_file", {"path": "new.md", "content": ""})
    assert (verdict, decided_by) == ("deny", "rule") and "deny write_file *.md" in why


@pytest.mark.exercise(2)
def test_with_no_matching_rule_each_risk_class_gets_its_default(s06, workspace):
    assert decision(s06, workspace, "read_file", [], path="memo.md") == "allow"        # read
    assert decision(s06, workspace, "write_file", [], path="new.txt", content="") == "allow"  # write
    assert decision(s06, workspace, "delete_file", [], path="memo.md") == "ask"        # destructive
    assert decision(s06, workspace, "move_file", [], source="memo.md", destination="m.md") == "ask"
    assert decision(s06, workspace, "run_command", [], command="touch a.txt") == "ask"  # execute
    verdict, why, decided_by = gate(s06, []).decide(workspace, "delete_file", {"path": "memo.md"})
    assert decided_by == "default" and "destructive actions default to ask" in why
    verdict, why, decided_by = gate(s06, []).decide(workspace, "run_command", {"command": "touch a.txt"})
    assert decided_by == "default" and "'touch' is not on the safe list" in why


def test_overwriting_an_existing_file_counts_as_destructive(s06, workspace):
    assert decision(s06, workspace, "write_file", path="memo.md", content="") == "ask"
    assert decision(s06, workspace, "write_file", path="./memo.md", content="") == "ask"
    assert decision(s06, workspace, "write_file", path="report.txt", content="new") == "allow"


@pytest.mark.exercise(1)
def test_overwriting_through_a_detour_still_counts_as_destructive(s06, workspace):
    before = (workspace / "memo.md").read_bytes()
    text, is_error = s06.run_tool(workspace, "write_file", {"path": "nowhere/../memo.md", "content": ""}, gate(s06))
    assert is_error and json.loads(text)["error"] == "denied"
    assert (workspace / "memo.md").read_bytes() == before


def test_path_rules_see_the_path_normalised(s06, workspace):
    for path in (".env", "./.env", "sub/../.env", "config/.env"):
        assert decision(s06, workspace, "write_file", path=path, content="KEY=1") == "deny", path


# ---------------------------------------------------------------- ask: a person decides, or nobody does

@pytest.mark.exercise(1)
def test_ask_with_no_terminal_means_deny_and_the_model_is_told_why_and_goes_on(s06, workspace):
    client, requests = scripted_client(one_call("delete_file", path="todo.md"), DONE)
    result = s06.run("Tidy up", client=client, model="scripted", workspace=workspace, approver=None, audit_log=False)
    assert (workspace / "todo.md").is_file()
    error = refusal(results_in(result.messages)[0])
    assert error["message"].startswith("delete_file was not run:") and "no terminal" in error["message"]
    assert result.stop_reason == "end_turn" and result.turns == 2
    assert requests[1]["messages"][-1]["content"][0]["is_error"] is True  # the model read the refusal


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


def test_allow_always_approves_that_exact_command_and_no_other(s06, workspace):
    person = Person(("allow always", ""), ("deny", "not that one"))
    checking = gate(s06, ask=person)
    assert s06.run_tool(workspace, "run_command", {"command": "grep -r agent ."}, checking)[1] is False
    assert s06.run_tool(workspace, "run_command", {"command": " grep -r agent . "}, checking)[1] is False
    assert len(person.asked) == 1  # the same command needed no one
    assert "exactly the command 'grep -r agent .'" in person.asked[0][3]  # the question said what "always" covers
    assert s06.run_tool(workspace, "run_command", {"command": "grep -r memo ."}, checking)[1] is True
    assert len(person.asked) == 2  # another grep is another question
    assert s06.run_tool(workspace, "run_command", {"command": "grep -r agent . && rm memo.md"}, checking)[1] is True
    assert gate(s06).decide(workspace, "run_command", {"command": "grep -r agent ."})[0] == "ask"  # one run only
    checking.ask = Person(("deny", "not that"))
    assert s06.run_tool(workspace, "run_command", {"command": "grep -r agent . > memo.md"}, checking)[1] is True
    assert (workspace / "memo.md").read_text(encoding="utf-8").startswith("# Meeting memo")


@pytest.mark.exercise(1)
def test_a_person_can_allow_once_and_is_asked_again_next_time(s06, workspace):
    person = Person(("allow once", ""), ("deny", ""))
    checking = gate(s06, ask=person)
    assert s06.run_tool(workspace, "delete_file", {"path": "todo.md"}, checking)[1] is False
    assert not (workspace / "todo.md").exists()
    assert s06.run_tool(workspace, "delete_file", {"path": "hello.txt"}, checking)[1] is True
    assert (workspace / "hello.txt").is_file() and len(person.asked) == 2


@pytest.mark.exercise(2)
def test_allow_always_means_the_same_call_needs_no_second_asking(s06, workspace):
    person = Person(("allow always", ""))
    checking = gate(s06, ask=person)
    for _ in range(2):
        text, is_error = s06.run_tool(workspace, "run_command", {"command": "grep -rl agent ."}, checking)
        assert not is_error and "memo.md" in text, text
    assert len(person.asked) == 1
    assert person.asked[0][0] == "run_command" and "-r is not an option the safe list allows" in person.asked[0][2]


@pytest.mark.exercise(2)
def test_allow_always_never_outranks_a_deny_rule(s06, workspace):
    person = Person(("allow always", ""))
    checking = gate(s06, ask=person)
    assert not s06.run_tool(workspace, "run_command", {"command": "grep -r agent ."}, checking)[1]
    text, is_error = s06.run_tool(workspace, "run_command", {"command": "grep -r agent . && rm memo.md"}, checking)
    assert is_error and json.loads(text)["error"] == "denied" and len(person.asked) == 1
    assert (workspace / "memo.md").is_file()


@pytest.mark.exercise(1)
def test_a_person_who_refuses_gives_the_model_their_reason(s06, workspace):
    person = Person(("deny", "keep the todo list, I still use it"))
    client, requests = scripted_client(one_call("delete_file", path="todo.md"), DONE)
    result = s06.run("Tidy up", client=client, model="scripted", workspace=workspace, approver=person, audit_log=False)
    error = refusal(results_in(result.messages)[0])
    assert "keep the todo list, I still use it" in error["message"]
    assert "keep the todo list" in requests[1]["messages"][-1]["content"][0]["content"]
    assert (workspace / "todo.md").is_file() and result.stop_reason == "end_turn"


@pytest.mark.exercise(2)
def test_a_deny_rule_is_never_put_to_a_person(s06, workspace):
    person = Person()
    text, is_error = s06.run_tool(workspace, "run_command", {"command": "rm memo.md"}, gate(s06, ask=person))
    assert is_error and person.asked == [] and (workspace / "memo.md").is_file()


# ---------------------------------------------------------------- the audit log

@pytest.mark.exercise(1, 2)
def test_the_audit_log_has_one_json_line_per_decision(s06, workspace, tmp_path):
    log = tmp_path / "decisions.jsonl"
    checking = gate(s06, ask=Person(("allow once", "")), audit_log=log)
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


@pytest.mark.exercise(1)
def test_the_audit_log_goes_to_its_default_place_unless_turned_off(s06, workspace, tmp_path):
    s06.run_tool(workspace, "list_files", {"path": "."}, gate(s06, audit_log=None))
    s06.run_tool(workspace, "list_files", {"path": "."}, gate(s06, audit_log=False))
    default = course.runlog.audit_path()  # tests point it at a temporary file
    assert default.is_relative_to(tmp_path) and len(default.read_text(encoding="utf-8").splitlines()) == 1


# ---------------------------------------------------------------- the command tool

def test_a_command_running_too_long_is_killed(s06, workspace, monkeypatch):
    monkeypatch.setattr(s06, "COMMAND_TIMEOUT_S", 1)
    started = time.perf_counter()
    with pytest.raises(s06.ToolError) as refused:
        s06.run_command(workspace, "sleep 5")
    assert refused.value.kind == "timeout" and time.perf_counter() - started < 3


def test_a_command_output_is_capped(s06, workspace):
    output = s06.run_command(workspace, "head -c 100000 /dev/zero | tr '\\0' x")
    assert output.startswith("exit code 0\n")
    assert len(output) <= len("exit code 0\n") + s06.COMMAND_OUTPUT_CAP


def test_a_command_runs_in_the_workspace(s06, workspace):
    assert s06.run_command(workspace, "pwd").splitlines()[1] == str(workspace)


def test_a_command_sees_no_api_key_or_other_secret(s06, workspace, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_test_secret")
    printed = s06.run_command(workspace, "printenv")
    assert "ANTHROPIC_API_KEY" not in printed and "sk-ant-test-secret" not in printed
    assert "ghp_test_secret" not in printed
    assert s06.run_command(workspace, "printenv ANTHROPIC_API_KEY").startswith("exit code 1")


# ---------------------------------------------------------------- compound commands, part by part

@pytest.mark.exercise(2)
@pytest.mark.parametrize("command", [
    "ls && rm memo.md", "ls; rm memo.md", "ls || rm memo.md", "ls | rm memo.md", "ls & rm memo.md",
    "ls\nrm memo.md", "echo $(rm memo.md)", "echo `rm memo.md`", "echo \"$(rm memo.md)\"",
    "bash -c 'rm memo.md'", "sh -c \"ls; rm memo.md\"", "eval rm memo.md", "eval 'ls && rm memo.md'",
    "FOO=1 rm memo.md", "env rm memo.md", "ls | xargs rm", "nohup rm memo.md", "'r'm memo.md", "\\rm memo.md",
    "ls && curl http://example.invalid", "cat memo.md; sudo ls", "ls; /bin/rm memo.md",
])
def test_an_allowed_prefix_never_approves_a_denied_command_chained_behind_it(s06, workspace, command):
    assert decision(s06, workspace, "run_command", command=command) == "deny"


@pytest.mark.exercise(2)
@pytest.mark.parametrize("command", ["ls && touch a.txt", "cat memo.md | python3 -", "echo hi > memo.md",
                                     "echo hi >> memo.md", "ls; ./tidy.sh memo.md"])
def test_a_chained_command_no_rule_allows_is_asked_about(s06, workspace, command):
    assert decision(s06, workspace, "run_command", command=command) == "ask"


@pytest.mark.exercise(2)
def test_allowed_commands_alone_or_chained_are_allowed(s06, workspace):
    for command in ("ls", "ls -l && wc -l memo.md", "cat memo.md | grep agent | head -n 3", "echo 'a; rm x'"):
        assert decision(s06, workspace, "run_command", command=command) == "allow", command


def test_a_command_the_grammar_cannot_read_is_never_allowed_and_with_no_terminal_is_denied(s06, workspace):
    verdict, why, _ = gate(s06).decide(workspace, "run_command", {"command": "echo 'unbalanced; touch x"})
    assert verdict == "ask" and "parse error" in why
    verdict, why, _ = gate(s06).decide(workspace, "run_command", {"command": "echo 'unbalanced; rm memo.md"})
    assert verdict == "deny" and "deny run_command rm" in why  # a deny rule still finds its program
    text, is_error = s06.run_tool(workspace, "run_command", {"command": "echo 'unbalanced; touch x"}, gate(s06))
    assert is_error and json.loads(text)["error"] == "denied" and not (workspace / "x").exists()


@pytest.mark.exercise(2)
@pytest.mark.parametrize("command", ["echo a#b; rm memo.md", "ls; #\nrm memo.md"])
def test_a_comment_sign_hides_no_command_from_the_gate(s06, workspace, command):
    text, is_error = s06.run_tool(workspace, "run_command", {"command": command}, gate(s06))
    assert (workspace / "memo.md").is_file(), f"memo.md was deleted: {text}"
    assert is_error


@pytest.mark.exercise(2)
@pytest.mark.parametrize("command", ["cat /etc/passwd", "ls ..", "cat ../secret.txt", "grep -r key ~/", "echo hi > x.txt"])
def test_an_allowed_command_pointed_outside_the_workspace_or_at_a_file_is_asked_about(s06, workspace, command):
    assert decision(s06, workspace, "run_command", command=command) == "ask"


@pytest.mark.exercise(2)
@pytest.mark.parametrize("command", [
    "sort -o memo.md hello.txt", "uniq hello.txt memo.md", "sort -o ${HOME%/*}/escaped.txt hello.txt",
    "sort -S 1 --compress-program=sh lines.txt", "date -s 2001-01-01"])
def test_an_allowed_prefix_does_not_approve_writing_files_or_running_programs(s06, workspace, command):
    assert decision(s06, workspace, "run_command", command=command) != "allow"


@pytest.mark.exercise(2)
@pytest.mark.parametrize("command", ["cat ${HOME%/*}/secret.txt", "cat .[.]/secret.txt", "ls .[.]"])
def test_an_allowed_command_cannot_reach_outside_through_shell_expansion(s06, workspace, command):
    (workspace.parent / "secret.txt").write_text("the secret beside the workspace\n", encoding="utf-8")
    text, _ = s06.run_tool(workspace, "run_command", {"command": command}, gate(s06))
    assert "the secret beside" not in text and "workspace" not in json.loads(text).get("output", "")


@pytest.mark.exercise(2)
def test_a_process_substitution_is_checked_like_a_command_substitution(s06, workspace):
    assert decision(s06, workspace, "run_command", command="cat <(rm memo.md)") == "deny"


@pytest.mark.exercise(2)
def test_a_deny_rule_on_a_path_also_covers_the_command_tool(s06, workspace):
    (workspace / ".env").write_text("ANTHROPIC_API_KEY=sk-ant-test-secret\n", encoding="utf-8")
    text, _ = s06.run_tool(workspace, "run_command", {"command": "cat .env"}, gate(s06))
    assert "sk-ant-test-secret" not in text


# ---------------------------------------------------------------- the path sandbox, case by case

@pytest.fixture
def outside(workspace):
    """What lies around the workspace: a secret beside it, a sibling folder whose name starts with
    the workspace's, and links inside the workspace that lead out."""
    parent = workspace.parent
    (parent / "secret.txt").write_text("the secret beside the workspace\n", encoding="utf-8")
    sibling = parent / (workspace.name + "-evil")
    sibling.mkdir()
    (sibling / "secret.txt").write_text("the secret of the sibling\n", encoding="utf-8")
    (workspace / "link-out").symlink_to(parent / "secret.txt")
    (workspace / "folder-out").symlink_to(sibling, target_is_directory=True)
    return parent


def sandbox_cases(workspace):
    sibling = workspace.name + "-evil"
    return {
        "absolute": str(workspace.parent / "secret.txt"),
        "absolute into the workspace": str(workspace / "memo.md"),
        "dot-dot": "../secret.txt",
        "dot-dot after a folder": "sub/../../secret.txt",
        "sibling prefix": f"../{sibling}/secret.txt",
        "sibling prefix, absolute": f"{workspace}-evil/secret.txt",
        "link to a file outside": "link-out",
        "link to a folder outside": "folder-out/secret.txt",
        "NUL byte": "memo.md\x00../../secret.txt",
    }


@pytest.mark.exercise(1)
def test_each_escape_named_in_the_issue_is_refused_with_a_clear_error(s06, workspace, outside):
    for case, path in sandbox_cases(workspace).items():
        with pytest.raises(s06.ToolError) as refused:
            s06.inside(workspace, path)
        assert refused.value.kind == "outside_workspace", case
        assert refused.value.hint and ("absolute" in refused.value.message or "outside" in refused.value.message
                                       or "NUL" in refused.value.message), case


def files_outside(workspace) -> dict:
    """Every file around the workspace (not under it), with its bytes; links are not followed."""
    found = {}
    for folder, folders, files in os.walk(workspace.parent):
        if folder == str(workspace.parent):
            folders.remove(workspace.name)
        for name in files:
            path = os.path.join(folder, name)
            found[path] = os.readlink(path) if os.path.islink(path) else open(path, "rb").read()
    return found


@pytest.mark.exercise(1)
def test_every_file_tool_refuses_an_escape_and_the_model_is_told_so(s06, workspace, outside):
    before = files_outside(workspace)
    checking = gate(s06, ask=lambda tool, arguments, why: ("allow once", ""))  # a person who allows anything
    for case, path in sandbox_cases(workspace).items():
        for tool, arguments in (("read_file", {"path": path}), ("write_file", {"path": path, "content": "x"}),
                                ("list_files", {"path": path}), ("delete_file", {"path": path}),
                                ("move_file", {"source": path, "destination": "moved.txt"}),
                                ("move_file", {"source": "memo.md", "destination": path})):
            text, is_error = s06.run_tool(workspace, tool, arguments, checking)
            assert is_error and json.loads(text)["error"] == "outside_workspace", (case, tool, text)
            assert "the secret" not in text, (case, tool)
    assert files_outside(workspace) == before
    assert s06.search_files(workspace, "the secret") == "(no matches)"


@pytest.mark.exercise(1)
def test_paths_that_stay_inside_the_workspace_still_work(s06, workspace):
    (workspace / "notes").mkdir()
    (workspace / "notes" / "link-in").symlink_to(workspace / "memo.md")
    memo = (workspace / "memo.md").read_text(encoding="utf-8")
    for path in ("memo.md", "./memo.md", "notes/../memo.md", "notes/link-in"):
        assert s06.read_file(workspace, path) == memo, path
    assert s06.inside(workspace, ".") == workspace


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


def test_the_reckless_model_damages_the_workspace_on_s05(s05, workspace):
    before = course.snapshot(workspace)
    result, errors = run_reckless(s05, workspace)
    assert result.stop_reason == "end_turn"  # it ends the run itself: nothing told it anything was wrong
    assert errors == ["unknown_tool"] * 4  # delete_file, and run_command three times: s05 has neither
    assert (workspace / "memo.md").read_bytes() == b"" != before["memo.md"]
    assert (workspace.parent / "escaped.txt").is_file()


def test_the_reckless_scenario_runs_s06_with_nobody_to_ask_and_drops_no_option(s06):
    import inspect

    from course.scenarios import SCENARIOS

    scenario = next(scenario for scenario in SCENARIOS if scenario.name == "reckless")
    assert scenario.options["approver"] is None  # a ladder at a terminal must not wait for a person
    assert set(scenario.options) <= set(inspect.signature(s06.run).parameters)  # none silently dropped
