"""s06: a person approves exactly one thing, shown exactly, and the answer is read as people type it.

"Allow once" covers one call. "Allow always" covers exactly the command as sh reads it (only the
blanks sh itself skips ignored), or exactly the entries a file tool acts on; never a pattern, a
prefix, a program, where a link leads, or a command whose text does not say all it runs (that one
is offered once only, and the question says why). A deny rule is never put to a person, and an
approval never outranks one. Most tests go through the real ``run()``, with a scripted person.
"""

from __future__ import annotations

import json

import pytest

import course.sandbox.review
import course.sandbox.shell_reading
from helpers import DONE, results_in, scripted_client
from s06_world import (ENV_SECRET, OUTSIDE_SECRET, Person, gate, no_secret, outside_state, permissions, play, s06,
                       workspace_files, world)  # noqa: F401

pytestmark = pytest.mark.stage("s06")  # decided by decide() (exercise 1), put to a person by ask_person() (2)


class FirstYes:
    """A person who says ``first`` ("allow always") to the first question and no to every later one;
    with ``files_once``, "allow once" to every question about a file tool (an overwrite, say), and keeps
    what an approved command changed (course.sandbox.review)."""

    def __init__(self, first="allow always", files_once=False):
        self.first, self.files_once, self.asked = first, files_once, []

    def __call__(self, tool, arguments, why, covers):
        if self.files_once and (tool != "run_command" or covers == course.sandbox.review.KEEP_OR_UNDO):
            return "allow once", ""
        self.asked.append((tool, arguments, covers))
        return (self.first, "") if len(self.asked) == 1 else ("deny", "not that")


# ---------------------------------------------------------------- once, always, no

@pytest.mark.exercise(1, 2)
def test_allow_always_approves_that_exact_command_and_no_other(workspace):
    person = Person(("allow always", ""), ("deny", "not that one"))
    checking = gate(person)
    assert s06.run_tool(workspace, "run_command", {"command": "grep -r agent ."}, checking)[1] is False
    assert s06.run_tool(workspace, "run_command", {"command": " grep -r agent . "}, checking)[1] is False
    assert len(person.asked) == 1  # the same command needed no one
    assert "exactly the command 'grep -r agent .'" in person.asked[0][3]  # the question said what "always" covers
    assert s06.run_tool(workspace, "run_command", {"command": "grep -r memo ."}, checking)[1] is True
    assert len(person.asked) == 2  # another grep is another question
    assert s06.run_tool(workspace, "run_command", {"command": "grep -r agent . && rm memo.md"}, checking)[1] is True
    assert permissions.decide(gate().read_call(workspace, "run_command", {"command": "grep -r agent ."}), s06.RULES,
                              set()).decision == "ask"  # one run only: another gate has approved nothing
    checking.approver = Person(("deny", "not that"))
    assert s06.run_tool(workspace, "run_command", {"command": "grep -r agent . > memo.md"}, checking)[1] is True
    assert (workspace / "memo.md").read_text(encoding="utf-8").startswith("# Meeting memo")


@pytest.mark.exercise(1, 2)
def test_a_person_can_allow_once_and_is_asked_again_next_time(workspace):
    person = Person(("allow once", ""), ("deny", ""))
    checking = gate(person)
    assert s06.run_tool(workspace, "delete_file", {"path": "todo.md"}, checking)[1] is False
    assert not (workspace / "todo.md").exists()
    assert s06.run_tool(workspace, "delete_file", {"path": "hello.txt"}, checking)[1] is True
    assert (workspace / "hello.txt").is_file() and len(person.asked) == 2


@pytest.mark.exercise(1, 2)
def test_allow_always_means_the_same_call_needs_no_second_asking(workspace):
    person = Person(("allow always", ""))
    checking = gate(person)
    for _ in range(2):
        text, is_error = s06.run_tool(workspace, "run_command", {"command": "grep -rl agent ."}, checking)
        assert not is_error and "memo.md" in text, text
    assert len(person.asked) == 1
    assert person.asked[0][0] == "run_command" and "-r is not an option the safe list allows" in person.asked[0][2]


@pytest.mark.exercise(1, 2)
def test_allow_always_never_outranks_a_deny_rule(workspace):
    person = Person(("allow always", ""))
    checking = gate(person)
    assert not s06.run_tool(workspace, "run_command", {"command": "grep -r agent ."}, checking)[1]
    text, is_error = s06.run_tool(workspace, "run_command", {"command": "grep -r agent . && rm memo.md"}, checking)
    assert is_error and json.loads(text)["error"] == "denied" and len(person.asked) == 1
    assert (workspace / "memo.md").is_file()


@pytest.mark.exercise(1, 2)
def test_a_person_who_refuses_gives_the_model_their_reason(workspace):
    person = Person(("deny", "keep the todo list, I still use it"))
    client, requests = scripted_client([{"type": "text", "text": "Trying."}, {
        "type": "tool_use", "id": "toolu_1", "name": "delete_file", "input": {"path": "todo.md"}}], DONE)
    result = s06.run("Tidy up", client=client, model="scripted", workspace=workspace, approver=person, audit_log=False)
    error = json.loads(results_in(result.messages)[0]["content"])
    assert error["error"] == "denied" and "keep the todo list, I still use it" in error["message"]
    assert "keep the todo list" in requests[1]["messages"][-1]["content"][0]["content"]
    assert (workspace / "todo.md").is_file() and result.stop_reason == "end_turn"


@pytest.mark.exercise(1)
def test_a_deny_rule_is_never_put_to_a_person(workspace):
    person = Person()
    text, is_error = s06.run_tool(workspace, "run_command", {"command": "rm memo.md"}, gate(person))
    assert is_error and person.asked == [] and (workspace / "memo.md").is_file()


@pytest.mark.exercise(1)
def test_an_empty_command_is_refused_and_never_put_to_a_person(world):
    person = FirstYes()
    for command in ("", "   ", "\n"):
        results, _ = play(world, [("run_command", {"command": command})], person)
        assert results[0]["is_error"] and "empty" in results[0]["content"]
    assert person.asked == []


@pytest.mark.exercise(2)
def test_with_no_one_to_ask_ask_means_deny_and_the_reason_is_kept(workspace):
    call = gate().read_call(workspace, "delete_file", {"path": "todo.md"})
    verdict = gate().ask_person(call, {"path": "todo.md"}, "destructive actions default to ask")
    assert (verdict.decision, verdict.decided_by) == ("deny", "no terminal")
    assert verdict.why == ("destructive actions default to ask, and there is no terminal to ask a person, "
                           "so ask means deny")


@pytest.mark.exercise(2)
def test_a_person_is_asked_exactly_this_call_and_always_stores_exactly_it(workspace):
    person = Person(("allow always", ""), ("allow always", ""), ("deny", ""), ("deny", "keep it"), ("allow once", ""))
    checking = gate(person)
    arguments = {"source": "memo.md", "destination": "notes/../m.md"}
    verdict = checking.ask_person(checking.read_call(workspace, "move_file", arguments), arguments, "why")
    assert (verdict.decision, verdict.decided_by) == ("allow", "person") and "allow always" in verdict.why
    assert person.asked[0] == ("move_file", {"source": "memo.md", "destination": "notes/../m.md"}, "why",
                               "move_file on exactly 'memo.md', 'm.md'")
    assert checking.approved == {("move_file", ("memo.md", "m.md"))}  # the entries together, never a pattern
    command = checking.read_call(workspace, "run_command", {"command": " grep -r x *.md\n"})
    assert checking.ask_person(command, {"command": " grep -r x *.md\n"}, "why").decision == "allow"
    assert person.asked[1][3].startswith("once only: ") and len(checking.approved) == 1  # once only: nothing stored
    listing = checking.read_call(workspace, "list_files", {"path": "."})
    refused = checking.ask_person(listing, {"path": "."}, "why")
    assert (refused.decision, refused.decided_by, refused.why) == ("deny", "person", "a person refused: no reason given")
    assert person.asked[2][3] == "once only" and len(checking.approved) == 1  # "." names no entry to approve
    assert checking.ask_person(command, {}, "why").why == "a person refused: keep it"
    assert checking.ask_person(command, {}, "why").decision == "allow" and len(checking.approved) == 1


# ---------------------------------------------------------------- what "always" covers

@pytest.mark.exercise(1, 2)
def test_an_approval_covers_the_exact_command_or_path_and_never_a_pattern(workspace):
    asked = []

    def person(tool, arguments, why, covers):
        asked.append(covers)
        return "allow always", ""

    checking = gate(person)
    assert checking.check(workspace, "run_command", {"command": "grep -r agent memo.md"}).decision == "allow"
    assert checking.check(workspace, "run_command", {"command": "grep -r agent *.md"}).decision == "allow"  # once
    assert checking.check(workspace, "delete_file", {"path": "*.md"}).decision == "allow"
    assert checking.approved == {("run_command", "grep -r agent memo.md"), ("delete_file", "*.md")}
    assert asked[0] == "exactly the command 'grep -r agent memo.md' and nothing else"
    assert asked[1].startswith("once only: it is not plain") and asked[2] == "delete_file on exactly '*.md'"
    refusing = gate(lambda *question: ("deny", "no"))
    refusing.approved = set(checking.approved)
    for command in ("grep -r agent .", "grep -r agent *.md", "grep -r agent memo.md" + "\x0b"):
        assert refusing.check(workspace, "run_command", {"command": command}).decision == "deny", command
    assert refusing.check(workspace, "run_command", {"command": " grep -r agent memo.md\n"}).decision == "allow"
    assert refusing.check(workspace, "delete_file", {"path": "memo.md"}).decision == "deny"


SCOPES = [  # (what the person approved always, what the model sends next)
    ("python3 --version", "python3 -c 'import os; os.remove(\"memo.md\")'"),
    ("find . -name notes.txt", "find . -name memo.md -delete"),
    ("sed -n 1p hello.txt", "sed -i d memo.md"),
    ("sort hello.txt", "sort -o memo.md hello.txt"),
    ("ls *", "ls * ; cat ../secret.txt"),
    ("cat memo.md > copy.txt", "cat memo.md > memo.md"),
    ("touch a.txt", "touch a.txt && rm memo.md"),
    ("expr 1 + 1", "expr 1 + 1 ; cat .env"),
]


@pytest.mark.exercise(1, 2)
@pytest.mark.parametrize("approved, attempted", SCOPES)
def test_allow_always_on_one_command_approves_no_other(world, approved, attempted):
    person = FirstYes()
    client, requests = scripted_client(
        [{"type": "tool_use", "id": "toolu_1", "name": "run_command", "input": {"command": approved}}],
        [{"type": "tool_use", "id": "toolu_2", "name": "run_command", "input": {"command": attempted}}], DONE)
    before = outside_state(world), workspace_files(world)
    result = s06.run("Do the task", client=client, model="scripted", workspace=world, approver=person,
                     audit_log=False, runs_log=False)
    covers = person.asked[0][2]  # exactly this command, or (for a command whose text does not say all it does) once only
    assert person.asked[0][1]["command"] == approved
    assert covers == f"exactly the command {approved!r} and nothing else" or covers.startswith("once only: ")
    second = result.messages[4]["content"][0]
    assert second["tool_use_id"] == "toolu_2" and second["is_error"], second  # not run
    if len(person.asked) == 1:  # not asked: a deny rule refused it outright
        assert json.loads(second["content"])["message"].startswith("run_command was not run: the rule 'deny")
    else:
        assert person.asked[1][1]["command"] == attempted  # asked again, and refused
    after = workspace_files(world)
    assert after["memo.md"] == before[1]["memo.md"] and outside_state(world) == before[0]
    assert ENV_SECRET not in json.dumps(requests) and OUTSIDE_SECRET not in json.dumps(requests)


@pytest.mark.exercise(1, 2)
@pytest.mark.parametrize("approved, attempted", [
    ({"path": "*.md"}, {"path": "memo.md"}), ({"path": "todo.md"}, {"path": "memo.md"}),
    ({"path": "."}, {"path": "memo.md"}), ({"path": "notes/../todo.md"}, {"path": "hello.txt"})])
def test_allow_always_on_one_path_approves_no_other_path(world, approved, attempted):
    person = FirstYes()
    client, _ = scripted_client(
        [{"type": "tool_use", "id": "toolu_1", "name": "delete_file", "input": approved}],
        [{"type": "tool_use", "id": "toolu_2", "name": "delete_file", "input": attempted}], DONE)
    s06.run("Tidy up", client=client, model="scripted", workspace=world, approver=person, audit_log=False, runs_log=False)
    assert len(person.asked) == 2 and (world / attempted["path"]).is_file()


@pytest.fixture
def tricky(world):
    """-a=memo.md as a name; M a link to a folder, so that M/.. is not where the text says."""
    (world / "-a=memo.md").write_text("a file with an odd name\n")
    (world / "keep").mkdir()
    (world / "keep" / "old.txt").write_text("important\n")
    (world / "old.txt").write_text("scratch\n")
    (world / "M").symlink_to("keep/inner", target_is_directory=True)
    (world / "keep" / "inner").mkdir()
    (world / "notes-link").symlink_to("memo.md")
    return world


@pytest.mark.exercise(1, 2)
@pytest.mark.parametrize("approved, attempted, spared", [
    ("-a=memo.md", "memo.md", "memo.md"),          # the text after = is not the subject
    ("notes-link", "memo.md", "memo.md"),          # deleting a link approves the link, not its target
    ("old.txt", "M/../old.txt", "keep/old.txt"),   # M/.. is keep, not the workspace
    ("./old.txt", "M/./../old.txt", "keep/old.txt")])
def test_an_approval_to_delete_covers_only_the_entry_deleted(tricky, approved, attempted, spared):
    person = FirstYes()
    results, _ = play(tricky, [("delete_file", {"path": approved}), ("delete_file", {"path": attempted})], person)
    assert not results[0]["is_error"] and len(person.asked) == 2 and results[1]["is_error"]
    assert (tricky / spared).exists()


# ---------------------------------------------------------------- an approval is compared exactly

@pytest.mark.exercise(1, 2)
@pytest.mark.parametrize("suffix", ["\x0b", "\x0c", "\r", "\x1c", "\x1f", "\x85", "\xa0", "\u2028", "\u3000"])
def test_always_is_not_stretched_by_characters_sh_reads_as_letters(world, suffix):
    """str.strip() removes these; sh reads them as part of the last word: another file runs."""
    approved = "grep -r agent ."
    person = FirstYes()
    results, _ = play(world, [("run_command", {"command": approved}), ("run_command", {"command": approved + suffix}),
                              ("run_command", {"command": suffix + approved})], person)
    assert person.asked[0][2] == f"exactly the command {approved!r} and nothing else"
    assert not results[0]["is_error"] and results[1]["is_error"] and results[2]["is_error"]
    assert [arguments["command"] for _, arguments, _ in person.asked[1:]] == [approved + suffix, suffix + approved]


@pytest.mark.exercise(1, 2)
def test_blanks_sh_itself_skips_do_not_matter_and_odd_characters_are_never_approved_always(world):
    person = FirstYes()
    results, _ = play(world, [("run_command", {"command": "grep -r agent ."}),
                              ("run_command", {"command": " \tgrep -r agent .\n"})], person)
    assert len(person.asked) == 1 and not results[1]["is_error"]  # the same command to sh: no second question
    for command in ("grep -r agent\xa0.", "grep -r agent .\x0b", "grep -r agënt ."):
        person = FirstYes()
        results, _ = play(world, [("run_command", {"command": command}), ("run_command", {"command": command})], person)
        assert person.asked[0][2].startswith("once only: it holds control or non-ASCII characters"), command
        assert len(person.asked) == 2 and results[1]["is_error"], command


# ---------------------------------------------------------------- "always" only where the text says all it does

CODE_FROM_FILES = {  # (files written before, the command, the files written after it was approved)
    "a shell script": ({"run.sh": "echo building\n"}, "sh run.sh", {"run.sh": "rm -f memo.md\n"}),
    "bash on a script": ({"run.sh": "echo building\n"}, "bash run.sh", {"run.sh": "rm -f memo.md\n"}),
    "an import hijack": ({"report.py": "import json\nprint(json.dumps(['ok']))\n"}, "python3 report.py",
                         {"json.py": "import os\nos.remove('memo.md')\ndumps = str\n"}),
    "tar options from file names": ({"x.sh": "rm -f memo.md\n"}, "tar -cf b.tar *",
                                    {"--checkpoint=1": "", "--checkpoint-action=exec=sh x.sh": ""}),
    "a program of the workspace": ({"tool.sh": "#!/bin/sh\necho hi\n"}, "./tool.sh", {"tool.sh": "#!/bin/sh\nrm -f memo.md\n"}),
    "make reads its Makefile": ({"Makefile": "all:\n\techo hi\n"}, "make", {"Makefile": "all:\n\trm -f memo.md\n"}),
    "awk -f reads its program": ({"p.awk": "{ print }\n"}, "awk -f p.awk hello.txt",
                                 {"p.awk": "BEGIN { system(\"rm -f memo.md\") }\n"}),
}


@pytest.mark.exercise(1, 2)
@pytest.mark.parametrize("case", CODE_FROM_FILES)
def test_a_command_whose_behaviour_is_a_workspace_file_is_allowed_once_only(world, case):
    before, command, after = CODE_FROM_FILES[case]
    memo = (world / "memo.md").read_bytes()
    calls = [("write_file", {"path": path, "content": text}) for path, text in before.items()]
    calls += [("run_command", {"command": command})]
    calls += [("write_file", {"path": path, "content": text}) for path, text in after.items()]
    calls += [("run_command", {"command": command})]
    person = FirstYes(files_once=True)  # the person lets the model write its files; the second run is the question
    results, requests = play(world, calls, person)
    assert person.asked[0][2].startswith("once only: ") and len(person.asked) == 2  # asked again, and refused
    assert results[-1]["is_error"] and "a person refused" in results[-1]["content"]
    assert all(not result["is_error"] for result in results[:-1]), results  # the attack was set up in full
    assert (world / "memo.md").read_bytes() == memo
    no_secret(requests)


def test_only_a_plain_command_of_safe_list_programs_may_be_allowed_always():
    reader = course.sandbox.shell_reading
    for command in ("grep -r agent .", "cat ../notes.txt", "ls -R", "tail -f memo.md | grep x"):
        assert reader.why_once_only(command, reader.read_command(command)) == "", command
    for command in ("python3 -m json.tool x", "env cp a b", "git log", "find . -name x", "xargs cp", "node x.js",
                    "cp $HOME/x y", "cp a b > c", "perl5.36 x", "/usr/bin/python3.11 x", "cp hello.txt copy.txt",
                    # Python scripts and programs that load code from the folder or HOME
                    "pydoc3 colorsys", "pygmentize -V", "py3versions -d", "pdb3 -h", "yq --version", "/bin/ls -R",
                    "./ls -R", "grep -r x . ; uname"):
        assert reader.why_once_only(command, reader.read_command(command)), command


# ---------------------------------------------------------------- the answer, as people type it

@pytest.mark.parametrize("typed, answer", [
    ("n", ("deny", "")), ("no", ("deny", "")), ("No", ("deny", "")), ("N", ("deny", "")),
    ("no, keep it", ("deny", "keep it")), ("no keep it", ("deny", "keep it")), ("n, keep it", ("deny", "keep it")),
    ("no: I still use it, really", ("deny", "I still use it, really")), ("  no  ", ("deny", "")),
    ("y", ("allow once", "")), ("yes", ("allow once", "")), ("YES", ("allow once", "")), ("o", ("allow once", "")),
    ("once", ("allow once", "")), ("a", ("allow always", "")), ("always", ("allow always", "")),
    ("keep it", None), ("nothing", None), ("nope", None), ("yse", None), ("yes please", None), ("", None),
])
def test_an_answer_is_read_as_people_type_it_and_anything_else_is_asked_again(typed, answer):
    assert permissions.read_answer(typed) == answer


def test_the_terminal_asks_again_until_it_reads_an_answer_and_keeps_the_whole_reason(monkeypatch, capsys):
    typed = iter(["keep it", "", "no, keep it"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(typed))
    assert permissions.ask_on_terminal("delete_file", {"path": "todo.md"}, "destructive", "delete_file on exactly "
                                       "'todo.md'") == ("deny", "keep it")
    printed = capsys.readouterr().out
    assert printed.count("answer o or y (once), a (always), or n, no, or no followed by your reason") == 2

    def end_of_input(prompt):
        raise EOFError

    monkeypatch.setattr("builtins.input", end_of_input)
    assert permissions.ask_on_terminal("run_command", {"command": "x"}, "why", "once only: x")[0] == "deny"


def test_the_question_shows_the_escape_sequences_in_a_call_as_data(monkeypatch, capsys):
    monkeypatch.setattr("builtins.input", lambda prompt: print(prompt) or "no")
    fake = "x\n  ? read_file memo.md\x1b[8m\x1b[2K\x9b2K\u202e\x7f\u2028"
    assert permissions.ask_on_terminal(f"run_command{fake}", {"command": fake}, f"why{fake}", f"once only: {fake}") \
        == ("deny", "")
    printed = capsys.readouterr().out
    assert not [char for char in ("\x1b", "\x9b", "\u202e", "\x7f", "\u2028") if char in printed]
    assert "\\x1b[8m" in printed and "\\u202e" in printed


@pytest.mark.exercise(1, 2)
def test_always_on_two_moves_approves_exactly_those_two_never_a_mix_of_their_paths(workspace):
    (workspace / "old").mkdir()
    person = Person(("allow always", ""), ("allow always", ""))
    checking = gate(person)
    for source in ("memo.md", "todo.md"):
        assert checking.check(workspace, "move_file", {"source": source, "destination": f"old/{source}"}).decision == "allow"
    assert checking.approved == {("move_file", ("memo.md", "old/memo.md")), ("move_file", ("todo.md", "old/todo.md"))}
    refusing = gate(lambda *question: ("deny", "not that one"))
    refusing.approved = set(checking.approved)
    for source, destination in [("memo.md", "old/todo.md"), ("todo.md", "old/memo.md"), ("old/memo.md", "memo.md"),
                                ("memo.md", "todo.md"), ("old/todo.md", "old/memo.md")]:
        verdict = refusing.check(workspace, "move_file", {"source": source, "destination": destination})
        assert (verdict.decision, verdict.decided_by) == ("deny", "person"), (source, destination)
    for source in ("memo.md", "todo.md"):  # exactly what was approved still is, with no one asked
        verdict = refusing.check(workspace, "move_file", {"source": source, "destination": f"old/{source}"})
        assert (verdict.decision, verdict.decided_by) == ("allow", "person")
    assert refusing.check(workspace, "delete_file", {"path": "memo.md"}).decision == "deny"  # nor one entry alone
