"""s06's gate step by step (parse, classify, decide), the file tools' new care, the calculator's
refusals, confinement as the gate uses it, and properties of the parser on generated commands.

Exercise 2 is ``plain_words`` in s06/gate.py: the words of one command node, only when every part
of it is a plain word or a quoted literal. The tests marked ``exercise(2)`` pin it.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import load_stage, module_from_source, scripted_client

s06 = load_stage("s06")
pytestmark = pytest.mark.exercise(2)  # every command decision reads its words through plain_words
gates = sys.modules[s06.Gate.__module__]
AVAILABLE = s06.confine.Confinement(available=True, reason="assumed available by the test")
UNAVAILABLE = s06.confine.Confinement(available=False, reason="no Landlock on this test's kernel")


def gate(rules=None, approver=None, confinement=AVAILABLE):
    return s06.Gate(rules=s06.RULES if rules is None else rules, approver=approver, audit_log=False,
                    confinement=confinement)


def decide(workspace, command: str, **options) -> tuple[str, str, str]:
    return gate(**options).decide(workspace, "run_command", {"command": command})


def reading(command: str):
    return gates.classify(gates.parse(command))


# ---------------------------------------------------------------- classify: plain or not (exercise 2)

@pytest.mark.exercise(2)
@pytest.mark.parametrize("command, commands", [
    ("ls", [["ls"]]),
    ("ls -l && wc -l memo.md | sort", [["ls", "-l"], ["wc", "-l", "memo.md"], ["sort"]]),
    ("echo 'a; rm x' \"b c\"", [["echo", "a; rm x", "b c"]]),
    ("head -n 3 memo.md || echo none; pwd", [["head", "-n", "3", "memo.md"], ["echo", "none"], ["pwd"]]),
    ("ls\npwd", [["ls"], ["pwd"]]),
    ("echo ''", [["echo", ""]]),
])
def test_a_plain_command_is_read_into_exactly_the_words_the_shell_passes(command, commands):
    found = reading(command)
    assert found.plain and found.commands == commands, found.why_not


@pytest.mark.exercise(2)
@pytest.mark.parametrize("command, construct", [
    ("echo $HOME", "expansion"), ("echo \"$HOME\"", "expansion"), ("echo ${HOME}", "expansion"),
    ("ls *.md", "glob"), ("ls memo.?d", "glob"), ("ls [m]emo.md", "glob"), ("ls ~", "tilde"), ("echo {a,b}", "brace"),
    ("echo $(pwd)", "substitution"), ("echo `pwd`", "substitution"), ("cat <(ls)", "process substitution"),
    ("echo hi > x.txt", "redirection"), ("cat < memo.md", "redirection"), ("ls 2>&1", "redirection"),
    ("X=1 ls", "assignment"), ("cat <<EOF\nhi\nEOF", "here-document"), ("(ls)", "subshell"), ("{ ls; }", "group"),
    ("f() { ls; }", "function"), ("if true; then ls; fi", "control"), ("for f in a; do ls; done", "control"),
    ("ls &", "background"), ("ls # note", "comment"), ("! ls", "negation"), ("'l's", "concatenation"),
    ("\\ls", "escape"), ("ls -\\\nR", "line continuation"), ("ls\r", "carriage return"), ("ls 'x", "parse error"),
    ("ls &&", "missing command"), ("echo \"a\\\"b\"", "escape in quotes"),
])
def test_anything_the_shell_rewrites_or_runs_is_not_plain(command, construct):
    found = reading(command)
    assert not found.plain and found.why_not, construct


@pytest.mark.exercise(2)
def test_the_plain_words_of_a_command_node_are_read_one_by_one():
    tree = gates.parse("grep -n 'a b' \"c d\" memo.md")
    assert gates.plain_words(tree.root_node.children[0]) == ["grep", "-n", "a b", "c d", "memo.md"]
    for command in ("echo $X", "echo a*", "ls > x", "X=1 ls", "'r'm x"):
        assert gates.plain_words(gates.parse(command).root_node.children[0]) is None, command


def test_every_program_is_found_anywhere_in_the_tree_wrapped_or_not():
    found = {words[start] for words, start in reading(
        "if true; then env -u X nice rm a; fi; echo $(git -C . push) `sudo ls` <(curl x); bash -c 'dd if=x'").programs}
    assert {"rm", "git", "sudo", "curl", "dd"} <= found


# ---------------------------------------------------------------- decide: the safe list and its options

@pytest.mark.exercise(2)
@pytest.mark.parametrize("command", [
    "ls", "ls -la", "ls -l -a memo.md", "cat memo.md hello.txt", "cat -n memo.md", "wc -l memo.md", "wc --lines memo.md",
    "grep -n agent memo.md", "grep -i -e agent memo.md hello.txt", "grep -c agent", "head -n 3 memo.md",
    "head -n3 memo.md", "tail -n 2 todo.md", "tail -c 10 todo.md", "echo hello world", "echo -n hi", "pwd",
    "cat memo.md | grep agent | head -n 3", "ls && wc -l memo.md || echo none", "cat -- memo.md",
])
def test_a_plain_command_of_the_safe_list_on_workspace_files_runs_without_a_person(workspace, command):
    verdict, why, decided_by = decide(workspace, command)
    assert (verdict, decided_by) == ("allow", "safe list"), why


@pytest.mark.parametrize("command, because", [
    ("grep -r agent .", "-r"), ("grep -R agent", "-R"), ("grep -f memo.md hello.txt", "-f"), ("grep --include=x a", "--include"),
    ("wc --files0-from=list.txt", "--files0-from"), ("tail -f memo.md", "-f"), ("tail -F memo.md", "-F"),
    ("tail --follow memo.md", "--follow"), ("head -n x memo.md", "number"), ("ls -R", "-R"), ("ls memo.md -R", "-R"),
    ("ls -L", "-L"), ("cat -x memo.md", "-x"), ("pwd x", "operands"), ("sort memo.md", "safe list"),
    ("touch x", "safe list"), ("./cat memo.md", "safe list"), ("/bin/cat memo.md", "safe list"),
    ("env ls", "safe list"), ("xargs ls", "safe list"), ("nohup ls", "safe list"), ("timeout 1 ls", "safe list"),
    ("sh -c ls", "safe list"), ("bash -c ls", "safe list"), ("command ls", "safe list"), ("nice ls", "safe list"),
])
def test_an_unknown_option_or_program_and_every_wrapper_goes_to_a_person(workspace, command, because):
    verdict, why, _ = decide(workspace, command)
    assert verdict == "ask" and because in why, why


def test_a_path_argument_must_resolve_inside_the_workspace_and_outside_every_deny_rule(workspace):
    (workspace.parent / "secret.txt").write_text("outside\n", encoding="utf-8")
    (workspace / "out").symlink_to(workspace.parent, target_is_directory=True)
    (workspace / ".env").write_text("KEY=1\n", encoding="utf-8")
    (workspace / "env-link").symlink_to(".env")
    assert decide(workspace, "cat out/secret.txt")[0] == "ask"          # a link that leads out, followed
    assert decide(workspace, f"cat {workspace.parent}/secret.txt")[0] == "ask"
    assert decide(workspace, f"cat {workspace}/memo.md")[0] == "allow"  # absolute, but inside
    assert decide(workspace, "cat env-link")[0] == "deny"                # a link to .env is .env
    assert decide(workspace, "grep -e KEY .env")[0] == "deny"


def test_without_kernel_confinement_no_command_runs_without_a_person(workspace):
    verdict, why, _ = decide(workspace, "ls", confinement=UNAVAILABLE)
    assert verdict == "ask" and "no Landlock on this test's kernel" in why
    assert decide(workspace, "ls", confinement=None)[0] == "ask"


def test_without_confinement_the_trace_says_so_once_and_every_command_is_refused(workspace, monkeypatch):
    monkeypatch.setattr(s06.confine, "probe", lambda: UNAVAILABLE)
    calls = [{"type": "tool_use", "id": f"toolu_{n}", "name": "run_command", "input": {"command": "ls"}} for n in (1, 2)]
    client, _ = scripted_client([calls[0]], [calls[1]], [{"type": "text", "text": "Done."}])
    notes = []
    result = s06.run("List", client=client, model="scripted", workspace=workspace, approver=None, audit_log=False,
                     runs_log=False, trace=lambda kind, payload: notes.append(payload) if kind == "note" else None)
    assert sum("no kernel confinement" in note for note in notes) == 1
    assert result.tool_errors == {"run_command": 2}


# ---------------------------------------------------------------- deny rules and approvals

def test_a_deny_rule_names_a_program_by_its_base_name_and_after_gits_global_options(workspace):
    for command in ("/bin/rm x", "/usr/bin/git push", "git -C . push", "git --no-pager -c a=b push",
                    "git --git-dir .git push", "env -i PATH=/bin rm x"):
        assert decide(workspace, command)[0] == "deny", command
    assert decide(workspace, "git log")[0] == "ask" and decide(workspace, "git -C push log")[0] == "ask"


def test_an_approval_covers_the_exact_command_or_path_and_never_a_pattern(workspace):
    asked = []

    def person(tool, arguments, why, covers):
        asked.append(covers)
        return "allow always", ""

    checking = gate(approver=person)
    assert checking.check(workspace, "run_command", {"command": "grep -r agent memo.md"}).decision == "allow"
    assert checking.check(workspace, "run_command", {"command": "grep -r agent *.md"}).decision == "allow"  # once
    assert checking.check(workspace, "delete_file", {"path": "*.md"}).decision == "allow"
    assert checking.approved == {("run_command", "grep -r agent memo.md"), ("delete_file", "*.md")}
    assert asked[0] == "exactly the command 'grep -r agent memo.md' and nothing else"
    assert asked[1].startswith("once only: it is not plain") and asked[2] == "delete_file on exactly '*.md'"
    refusing = gate(approver=lambda *question: ("deny", "no"))
    refusing.approved = set(checking.approved)
    for command in ("grep -r agent .", "grep -r agent *.md", "grep -r agent memo.md" + "\x0b"):
        assert refusing.check(workspace, "run_command", {"command": command}).decision == "deny", command
    assert refusing.check(workspace, "run_command", {"command": " grep -r agent memo.md\n"}).decision == "allow"
    assert refusing.check(workspace, "delete_file", {"path": "memo.md"}).decision == "deny"


def test_files_a_deny_rule_covers_are_hidden_at_any_depth(workspace):
    (workspace / "config").mkdir()
    for path in (".env", "config/.env"):
        (workspace / path).write_text("KEY=1\n", encoding="utf-8")
    assert sorted(str(path.relative_to(workspace.resolve())) for path in gate().hidden(workspace)) == [".env", "config/.env"]


def test_a_command_runs_through_confinement_with_the_hidden_files_and_a_clean_environment(workspace, monkeypatch):
    (workspace / ".env").write_text("KEY=1\n", encoding="utf-8")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-secret")
    monkeypatch.setenv("PATH", f"{workspace}:.:{os.environ['PATH']}")
    seen = {}

    def run_confined(command, where, **options):
        seen.update(options, command=command)
        return s06.confine.Finished(exit_code=0, output="fine\n", timed_out=False, stragglers=2)

    monkeypatch.setattr(s06.confine, "run_confined", run_confined)
    text, is_error = s06.run_tool(workspace, "run_command", {"command": "ls"}, gate())
    assert not is_error and "2 process(es) it left running were ended" in json.loads(text)["output"]
    assert seen["hidden"] == [workspace.resolve() / ".env"]
    assert "sk-ant-test-secret" not in json.dumps(seen["environment"])
    folders = seen["environment"]["PATH"].split(os.pathsep)
    assert str(workspace) not in folders and "." not in folders and folders


# ---------------------------------------------------------------- file tools

def allow_all():
    return gate(rules=s06.RULES, approver=lambda *question: ("allow once", ""))


@pytest.mark.exercise(1)
def test_delete_and_move_act_on_a_link_itself_never_on_its_target(workspace):
    (workspace / "link").symlink_to("memo.md")
    (workspace / "other").symlink_to("todo.md")
    memo = (workspace / "memo.md").read_bytes()
    assert not s06.run_tool(workspace, "delete_file", {"path": "link"}, allow_all())[1]
    assert not (workspace / "link").is_symlink() and (workspace / "memo.md").read_bytes() == memo
    assert not s06.run_tool(workspace, "move_file", {"source": "other", "destination": "moved"}, allow_all())[1]
    assert (workspace / "moved").is_symlink() and (workspace / "todo.md").is_file()


@pytest.mark.exercise(1)
def test_a_named_pipe_is_neither_read_nor_written_and_nothing_blocks(workspace):
    os.mkfifo(workspace / "pipe")
    results = []
    worker = threading.Thread(target=lambda: results.extend(
        s06.run_tool(workspace, tool, arguments, allow_all())
        for tool, arguments in (("read_file", {"path": "pipe"}), ("write_file", {"path": "pipe", "content": "x"}))),
        daemon=True)
    worker.start()
    worker.join(3)
    assert not worker.is_alive(), "a file tool blocked on a named pipe"
    assert [json.loads(text)["error"] for text, _ in results] == ["not_a_file", "denied"] or \
        all(json.loads(text)["error"] == "not_a_file" for text, _ in results)


@pytest.mark.exercise(1)
def test_deny_rules_see_where_a_link_leads_and_search_skips_what_they_cover(workspace):
    (workspace / ".env").write_text("API_KEY=sk-ant-secret\n", encoding="utf-8")
    (workspace / "notes").mkdir()
    (workspace / "notes" / "innocent.txt").symlink_to("../.env")
    for tool, arguments in (("read_file", {"path": "notes/innocent.txt"}),
                            ("write_file", {"path": "notes/innocent.txt", "content": "x"})):
        text, is_error = s06.run_tool(workspace, tool, arguments, allow_all())
        assert is_error and json.loads(text)["error"] == "denied" and "sk-ant" not in text
    for probe in ("API_KEY=s", "sk-ant", "secret"):
        text, _ = s06.run_tool(workspace, "search_files", {"text": probe}, allow_all())
        assert json.loads(text)["output"] == "(no matches)", probe
    assert "memo.md" in s06.run_tool(workspace, "search_files", {"text": "meeting"}, allow_all())[0]


@pytest.mark.parametrize("expression, why", [("1e308 * 10", "overflowed"), ("1e308 * 10 - 1e308 * 10", "overflowed"),
                                             ("(-8) ** 0.5", "complex"), ("(-1) ** 0.5 * 0", "complex")])
def test_the_calculator_refuses_inf_nan_and_complex_results(workspace, expression, why):
    text, is_error = s06.run_tool(workspace, "calculate", {"expression": expression}, gate())
    assert is_error and json.loads(text)["error"] == "tool_failed" and why in json.loads(text)["message"]
    assert s06.run_tool(workspace, "calculate", {"expression": "2 ** 0.5"}, gate())[1] is False


def test_the_tool_tables_command_example_is_a_plain_command():
    example = next(tool for tool in s06.TOOLS if tool["name"] == "run_command")["input_schema"]["properties"]["command"]
    for command in example["description"].removeprefix("e.g. ").split(" or "):
        assert reading(command.strip("'")).plain, command


# ---------------------------------------------------------------- properties of the parser

# Bare words start with a letter and hold no @ or %: the grammar reads a few odd ones (`1@`, `a%`) as errors,
# which is only stricter.
SAFE_CHARACTERS = st.builds(lambda first, rest: first + rest, st.sampled_from("abcdefghijklmnopqrstuvwxyz"),
                            st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-/:=,+", max_size=7))
ANY_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
OPERATORS = st.sampled_from(["&&", "||", ";", "|", "\n"])
PROPERTY = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def plain_commands(draw) -> tuple[str, list[list[str]]]:
    """(a plain command, its commands' words): words bare or quoted, joined by the four operators."""
    commands = [[draw(SAFE_CHARACTERS.filter(lambda w: not w.startswith("-") and "=" not in w))]
                + draw(st.lists(st.one_of(SAFE_CHARACTERS, ANY_TEXT), max_size=3)) for _ in range(draw(st.integers(1, 3)))]
    text = ""
    for index, words in enumerate(commands):
        quoted = " ".join(word if gates.PLAIN_WORD.fullmatch(word) else "'" + word.replace("'", "") + "'" for word in words)
        text += (f" {draw(OPERATORS)} " if index else "") + quoted
    expected = [[word if gates.PLAIN_WORD.fullmatch(word) else word.replace("'", "") for word in words] for words in commands]
    return text, expected


@PROPERTY
@given(plain_commands())
def test_a_plain_command_is_read_as_exactly_its_words(case):
    command, expected = case
    if gates.TWO_READINGS.search(command):
        return  # a control character inside quotes: not plain, by choice (see the next property)
    found = reading(command)
    assert found.plain and found.commands == expected, (command, found.why_not)
    assert all(shlex.split(shlex.join(words)) == words for words in found.commands)


@PROPERTY
@given(plain_commands(), st.sampled_from(["$X", "*", "?", "[a]", "~", "{a,b}", "$(ls)", "`ls`", "> x", "< x", "&",
                                          "2>&1", "<(ls)", "#", "\\x", "(ls)", "\\\n"]))
def test_adding_any_construct_the_shell_rewrites_makes_it_not_plain(case, construct):
    command, _ = case
    assert not reading(f"{command} {construct}").plain, f"{command} {construct}"


@PROPERTY
@given(ANY_TEXT, ANY_TEXT)
def test_any_text_is_read_without_failing(before, after):
    found = gates.read_command(before + after)  # in a child: tree-sitter-bash crashed on a few such strings
    assert isinstance(found.plain, bool) and (found.plain or found.why_not)


def test_a_crash_of_the_parser_ends_a_child_not_the_run(workspace, monkeypatch, tmp_path):
    crashing = module_from_source(tmp_path, "crashing_reader", "import os, signal\n\n"
                                  "def read_here(command):\n    os.kill(os.getpid(), signal.SIGSEGV)\n")
    monkeypatch.setattr(gates, "read_here", crashing.read_here)  # the child reads, and dies as a C crash would
    try:
        verdict, why, _ = decide(workspace, "ls")
        assert verdict == "ask" and "parser crashed" in why
        assert decide(workspace, "ls; rm memo.md")[0] == "deny"  # deny rules still read every word,
        assert decide(workspace, "cat .env")[0] == "deny"  # as programs and as paths
    finally:
        del sys.modules["crashing_reader"]


@PROPERTY
@given(plain_commands(), st.sampled_from(["rm x", "/bin/rm x", "git -C . push", "'r'm x", "curl x"]),
       st.sampled_from(["{} ; ({})", "{} && echo $({})", "{} | xargs {}", "{}; if true; then {}; fi",
                        "{} && env -u A {}", "{} ; bash -c '{}'", "{}\n\\{}", "{}; f() {{ {}; }}; f"]))
def test_a_denied_program_is_denied_wherever_it_hides(workspace, case, denied, form):
    command, _ = case
    hidden = form.format(command, denied.replace("'", "") if "bash -c" in form else denied)
    assert decide(workspace, hidden)[0] == "deny", hidden
