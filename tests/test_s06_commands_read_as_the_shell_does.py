"""s06: a command is read as the shell reads it, and only a plain command of the safe list runs without a person.

The command is read with the shell's own grammar (course.sandbox.shell_reading: tree-sitter-bash, in a child
process), never as text: a command is *plain* only if it is words and quoted strings joined by &&,
||, ; and |, with nothing the shell expands, substitutes, redirects or runs first; a deny rule finds
its program anywhere in the tree (behind a wrapper, in a substitution, a function, a control
structure); an allowed prefix approves nothing chained behind it. What /bin/sh really starts is
compared with what the gate saw, on commands Hypothesis writes from the pieces attacks are made of.
Reading a command costs time in its length, so a command over a cap is refused before it is read.

Tests that ask decide() (exercise 1) for its verdict say so; those of the reading itself pin the
support package, not an exercise.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import course.sandbox.shell_reading as reader
from helpers import module_from_source
from s06_world import decide, gate, permissions, s06

pytestmark = pytest.mark.stage("s06")  # every test here pins s06


def reading(command: str):
    return reader.classify(reader.parse(command))


# ---------------------------------------------------------------- classify: plain or not

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


def test_the_plain_words_of_a_command_node_are_read_one_by_one():
    tree = reader.parse("grep -n 'a b' \"c d\" memo.md")
    assert reader.plain_words(tree.root_node.children[0]) == ["grep", "-n", "a b", "c d", "memo.md"]
    for command in ("echo $X", "echo a*", "ls > x", "X=1 ls", "'r'm x"):
        assert reader.plain_words(reader.parse(command).root_node.children[0]) is None, command


def test_every_program_is_found_anywhere_in_the_tree_wrapped_or_not():
    found = {words[start] for words, start in reading(
        "if true; then env -u X nice rm a; fi; echo $(git -C . push) `sudo ls` <(curl x); bash -c 'dd if=x'").programs}
    assert {"rm", "git", "sudo", "curl", "dd"} <= found


# ---------------------------------------------------------------- decide: the safe list and its options

@pytest.mark.exercise(1)
@pytest.mark.parametrize("command", [
    "ls", "ls -la", "ls -l -a memo.md", "cat memo.md hello.txt", "cat -n memo.md", "wc -l memo.md", "wc --lines memo.md",
    "grep -n agent memo.md", "grep -i -e agent memo.md hello.txt", "grep -c agent", "head -n 3 memo.md",
    "head -n3 memo.md", "tail -n 2 todo.md", "tail -c 10 todo.md", "echo hello world", "echo -n hi", "pwd",
    "cat memo.md | grep agent | head -n 3", "ls && wc -l memo.md || echo none", "cat -- memo.md",
])
def test_a_plain_command_of_the_safe_list_on_workspace_files_runs_without_a_person(workspace, command):
    verdict, why, decided_by = decide(workspace, command)
    assert (verdict, decided_by) == ("allow", "safe list"), why


@pytest.mark.exercise(1)
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


@pytest.mark.exercise(1)
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


# ---------------------------------------------------------------- deny rules find their program anywhere

@pytest.mark.exercise(1)
def test_a_deny_rule_names_a_program_by_its_base_name_and_after_gits_global_options(workspace):
    for command in ("/bin/rm x", "/usr/bin/git push", "git -C . push", "git --no-pager -c a=b push",
                    "git --git-dir .git push", "env -i PATH=/bin rm x"):
        assert decide(workspace, command)[0] == "deny", command
    assert decide(workspace, "git log")[0] == "ask" and decide(workspace, "git -C push log")[0] == "ask"


# ---------------------------------------------------------------- compound commands, part by part

@pytest.mark.exercise(1)
@pytest.mark.parametrize("command", [
    "ls && rm memo.md", "ls; rm memo.md", "ls || rm memo.md", "ls | rm memo.md", "ls & rm memo.md",
    "ls\nrm memo.md", "echo $(rm memo.md)", "echo `rm memo.md`", "echo \"$(rm memo.md)\"",
    "bash -c 'rm memo.md'", "sh -c \"ls; rm memo.md\"", "eval rm memo.md", "eval 'ls && rm memo.md'",
    "FOO=1 rm memo.md", "env rm memo.md", "ls | xargs rm", "nohup rm memo.md", "'r'm memo.md", "\\rm memo.md",
    "ls && curl http://example.invalid", "cat memo.md; sudo ls", "ls; /bin/rm memo.md",
])
def test_an_allowed_prefix_never_approves_a_denied_command_chained_behind_it(workspace, command):
    assert decide(workspace, command)[0] == "deny"


@pytest.mark.exercise(1)
@pytest.mark.parametrize("command", ["ls && touch a.txt", "cat memo.md | python3 -", "echo hi > memo.md",
                                     "echo hi >> memo.md", "ls; ./tidy.sh memo.md"])
def test_a_chained_command_no_rule_allows_is_asked_about(workspace, command):
    assert decide(workspace, command)[0] == "ask"


@pytest.mark.exercise(1)
def test_allowed_commands_alone_or_chained_are_allowed(workspace):
    for command in ("ls", "ls -l && wc -l memo.md", "cat memo.md | grep agent | head -n 3", "echo 'a; rm x'"):
        assert decide(workspace, command)[0] == "allow", command


@pytest.mark.exercise(1, 2)
def test_a_command_the_grammar_cannot_read_is_never_allowed_and_with_no_terminal_is_denied(workspace):
    verdict, why, _ = decide(workspace, "echo 'unbalanced; touch x")
    assert verdict == "ask" and "parse error" in why
    verdict, why, _ = decide(workspace, "echo 'unbalanced; rm memo.md")
    assert verdict == "deny" and "deny run_command rm" in why  # a deny rule still finds its program
    text, is_error = s06.run_tool(workspace, "run_command", {"command": "echo 'unbalanced; touch x"}, gate())
    assert is_error and json.loads(text)["error"] == "denied" and not (workspace / "x").exists()


@pytest.mark.exercise(1)
@pytest.mark.parametrize("command", ["echo a#b; rm memo.md", "ls; #\nrm memo.md"])
def test_a_comment_sign_hides_no_command_from_the_gate(workspace, command):
    text, is_error = s06.run_tool(workspace, "run_command", {"command": command}, gate())
    assert (workspace / "memo.md").is_file(), f"memo.md was deleted: {text}"
    assert is_error


@pytest.mark.exercise(1)
@pytest.mark.parametrize("command", ["cat /etc/passwd", "ls ..", "cat ../secret.txt", "grep -r key ~/", "echo hi > x.txt"])
def test_an_allowed_command_pointed_outside_the_workspace_or_at_a_file_is_asked_about(workspace, command):
    assert decide(workspace, command)[0] == "ask"


@pytest.mark.exercise(1)
@pytest.mark.parametrize("command", [
    "sort -o memo.md hello.txt", "uniq hello.txt memo.md", "sort -o ${HOME%/*}/escaped.txt hello.txt",
    "sort -S 1 --compress-program=sh lines.txt", "date -s 2001-01-01"])
def test_an_allowed_prefix_does_not_approve_writing_files_or_running_programs(workspace, command):
    assert decide(workspace, command)[0] != "allow"


@pytest.mark.exercise(1, 2)
@pytest.mark.parametrize("command", ["cat ${HOME%/*}/secret.txt", "cat .[.]/secret.txt", "ls .[.]"])
def test_an_allowed_command_cannot_reach_outside_through_shell_expansion(workspace, command):
    (workspace.parent / "secret.txt").write_text("the secret beside the workspace\n", encoding="utf-8")
    text, _ = s06.run_tool(workspace, "run_command", {"command": command}, gate())
    assert "the secret beside" not in text and "workspace" not in json.loads(text).get("output", "")


@pytest.mark.exercise(1)
def test_a_process_substitution_is_checked_like_a_command_substitution(workspace):
    assert decide(workspace, "cat <(rm memo.md)")[0] == "deny"


@pytest.mark.exercise(1)
def test_a_deny_rule_on_a_path_also_covers_the_command_tool(workspace):
    (workspace / ".env").write_text("ANTHROPIC_API_KEY=sk-ant-test-secret\n", encoding="utf-8")
    text, _ = s06.run_tool(workspace, "run_command", {"command": "cat .env"}, gate())
    assert "sk-ant-test-secret" not in text


def test_the_tool_tables_command_example_is_a_plain_command():
    example = next(tool for tool in s06.TOOLS if tool["name"] == "run_command")["input_schema"]["properties"]["command"]
    for command in example["description"].removeprefix("e.g. ").split(" or "):
        assert reading(command.strip("'")).plain, command


# ---------------------------------------------------------------- properties of the parser

# Bare words start with a letter and hold no @ or %: the grammar reads a few odd ones (`1@`, `a%`, and `a+:`
# as a program's name) as errors, which is only stricter.
SAFE_CHARACTERS = st.builds(lambda first, rest: first + rest, st.sampled_from("abcdefghijklmnopqrstuvwxyz"),
                            st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-/:=,+", max_size=7))
PROGRAM_NAMES = SAFE_CHARACTERS.filter(lambda word: not word.startswith("-") and "=" not in word and "+:" not in word)
ANY_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
OPERATORS = st.sampled_from(["&&", "||", ";", "|", "\n"])
PROPERTY = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def plain_commands(draw) -> tuple[str, list[list[str]]]:
    """(a plain command, its commands' words): words bare or quoted, joined by the four operators."""
    commands = [[draw(PROGRAM_NAMES)]
                + draw(st.lists(st.one_of(SAFE_CHARACTERS, ANY_TEXT), max_size=3)) for _ in range(draw(st.integers(1, 3)))]
    text = ""
    for index, words in enumerate(commands):
        quoted = " ".join(word if reader.PLAIN_WORD.fullmatch(word) else "'" + word.replace("'", "") + "'" for word in words)
        text += (f" {draw(OPERATORS)} " if index else "") + quoted
    expected = [[word if reader.PLAIN_WORD.fullmatch(word) else word.replace("'", "") for word in words] for words in commands]
    return text, expected


@PROPERTY
@given(plain_commands())
def test_a_plain_command_is_read_as_exactly_its_words(case):
    command, expected = case
    if reader.TWO_READINGS.search(command):
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
    found = reader.read_command(before + after)  # in a child: tree-sitter-bash crashed on a few such strings
    assert isinstance(found.plain, bool) and (found.plain or found.why_not)


@pytest.mark.exercise(1)
def test_a_crash_of_the_parser_ends_a_child_not_the_run(workspace, monkeypatch, tmp_path):
    crashing = module_from_source(tmp_path, "crashing_reader", "import os, signal\n\n"
                                  "def read_here(command):\n    os.kill(os.getpid(), signal.SIGSEGV)\n")
    monkeypatch.setattr(reader, "read_here", crashing.read_here)  # the child reads, and dies as a C crash would
    try:
        verdict, why, _ = decide(workspace, "ls")
        assert verdict == "ask" and "parser crashed" in why
        assert decide(workspace, "ls; rm memo.md")[0] == "deny"  # deny rules still read every word,
        assert decide(workspace, "cat .env")[0] == "deny"  # as programs and as paths
    finally:
        del sys.modules["crashing_reader"]


@pytest.mark.exercise(1)
@PROPERTY
@given(plain_commands(), st.sampled_from(["rm x", "/bin/rm x", "git -C . push", "'r'm x", "curl x"]),
       st.sampled_from(["{} ; ({})", "{} && echo $({})", "{} | xargs {}", "{}; if true; then {}; fi",
                        "{} && env -u A {}", "{} ; bash -c '{}'", "{}\n\\{}", "{}; f() {{ {}; }}; f"]))
def test_a_denied_program_is_denied_wherever_it_hides(workspace, case, denied, form):
    command, _ = case
    hidden = form.format(command, denied.replace("'", "") if "bash -c" in form else denied)
    assert decide(workspace, hidden)[0] == "deny", hidden


# ---------------------------------------------------------------- what /bin/sh starts is what the gate saw

# Each command runs under /bin/sh with PATH set to a folder of logging stand-ins, one per program name: a
# stand-in only appends its name to a log, so nothing real runs. No absolute program path, `command -p` or
# `kill` is generated: those would reach real programs. HYPOTHESIS_PROFILE=explore draws new commands.
STAND_INS = ["ls", "cat", "wc", "grep", "head", "tail", "rm", "env", "xargs", "nice", "timeout", "nohup", "stdbuf",
             "sh", "bash", "find", "git", "touch", "sed", "busybox", "setsid", "curl", "python3", "sort", "r", "m"]
STAND_IN = """#!/bin/sh
printf '%s\\n' "${0##*/}" >> "$LOG"
"""  # one short write in append mode: lines of stand-ins running side by side (a & b) never mix
RUNS = 150


@pytest.fixture(scope="module")
def shell(tmp_path_factory):
    """(the folder of stand-ins, a scratch workspace) made once; each run gets a fresh log."""
    root = tmp_path_factory.mktemp("differential")
    stand_ins = root / "bin"
    stand_ins.mkdir()
    for name in STAND_INS:
        (stand_ins / name).write_text(STAND_IN, encoding="utf-8")
        (stand_ins / name).chmod(0o755)
    workspace = root / "workspace"
    workspace.mkdir()
    for name in ("memo.md", "notes.txt", "list.txt"):
        (workspace / name).write_text("rm memo.md\n", encoding="utf-8")
    return stand_ins, workspace


def started_by_the_shell(command: str, stand_ins: Path, workspace: Path) -> list[str]:
    """The programs /bin/sh started for ``command`` (by name, in order), read from the stand-ins' log."""
    log = workspace / "started.log"
    log.write_text("", encoding="utf-8")
    try:  # eval, then wait: what it started in the background (a &) has logged too when sh ends
        subprocess.run(["/bin/sh", "-c", 'eval "$1"; wait', "sh", command], cwd=workspace,
                       env={"PATH": str(stand_ins), "LOG": str(log)}, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=2)
    except subprocess.TimeoutExpired:
        pass
    return [line.split(" ", 1)[0] for line in log.read_text(encoding="utf-8").splitlines() if line]


PROGRAMS = st.sampled_from(STAND_INS + ["echo", "pwd", "eval", "exec", "command", "true"])
WORDS = st.sampled_from(["memo.md", "-l", "-n", "3", "-r", "x", "rm", "cat", "'rm memo.md'", '"ls; rm x"', "'r'm",
                         "\\rm", "r''m", "-c", "-i", "-S'rm x'", "-I", "R", "-exec", "{}", "';'", "+", "*.md", "$X",
                         "${X:-rm}", "~", "a#b", "#", "'#'", "\"$(rm x)\"", "`rm x`", "$(ls)", "<(rm x)", "list.txt"])
JOINERS = st.sampled_from([" ", " ", " ", ";", "; ", " && ", "&&", " || ", "|", " | ", "\n", " & ", "&", "\r\n",
                           "\\\n", " #'\n", ";<notes.txt ", ";>out.txt ", " $(", ") ", " `", "` ", " (", ") ", "{ ",
                           "; } ", " <<'EOF'\n'\nEOF\n", " <<EOF\n$(rm x)\nEOF\n", "\n\\", " if true; then ",
                           "; fi ", " for f in x; do ", "; done ", "X=1 ", " f() { ", "; }; f ", " ! "])


@st.composite
def commands(draw) -> str:
    """A command made of programs, words and joiners, such as an attacker would write."""
    pieces = []
    for _ in range(draw(st.integers(1, 4))):
        pieces.append(draw(PROGRAMS))
        pieces += [" " + draw(WORDS) for _ in range(draw(st.integers(0, 3)))]
        pieces.append(draw(JOINERS))
    return "".join(pieces).strip()


def seen_by_the_gate(command: str) -> set[str]:
    reading = reader.classify(reader.parse(command))
    return {os.path.basename(words[0]) for words in [w[s:] for w, s in reading.programs] + reading.commands}


@pytest.mark.exercise(1)
@settings(max_examples=RUNS, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(commands())
def test_every_program_the_shell_starts_is_one_the_gate_saw_and_judged(shell, command):
    stand_ins, workspace = shell
    started = started_by_the_shell(command, stand_ins, workspace)
    unseen = set(started) - seen_by_the_gate(command)
    assert not unseen, f"sh started {sorted(unseen)} for {command!r}, and the gate never saw them"
    if decide(workspace, command)[0] == "allow":
        assert set(started) <= set(reader.SAFE_PROGRAMS), f"{command!r} was allowed and started {started}"


@pytest.mark.exercise(1)
@pytest.mark.parametrize("command", ["ls\n\\rm memo.md", "ls;<notes.txt rm memo.md", "cat memo.md #'\nrm memo.md",
                                     "r\\\nm memo.md", "ls -\\\nR", "echo a#b; rm x", "env -S'rm x'",
                                     "cat <<EOF\n$(rm x)\nEOF\n", "xargs rm < list.txt"])
def test_known_disagreements_between_the_grammar_and_sh_are_caught(shell, command):
    stand_ins, workspace = shell
    started = started_by_the_shell(command, stand_ins, workspace)
    assert set(started) <= seen_by_the_gate(command)
    assert decide(workspace, command)[0] != "allow"


# ---------------------------------------------------------------- the cost of reading is linear, and bounded

@pytest.mark.exercise(1)
def test_a_command_longer_than_the_cap_is_refused_in_one_line(workspace):
    # Straight to the dispatcher: 8 KB of arguments is more than one reply of MAX_TOKENS can carry.
    text, is_error = s06.run_tool(workspace, "run_command", {"command": "env " + "a " * 4000}, gate())
    message = json.loads(text)["message"]
    assert is_error and str(reader.MAX_COMMAND_CHARS) in message and "\n" not in message


@pytest.mark.exercise(1)
@pytest.mark.parametrize("command", ["env " + "a " * 2040, "xargs " + "x " * 2040, "echo '" + "b; " * 1360 + "'",
                                     "env 'env " + "a " * 2030 + "'", "echo 'x;" + " rm" * 1360])
def test_reading_and_deciding_a_command_at_the_cap_takes_little_memory(command):
    """Each word behind a wrapper may be a program: kept as (words, start), not as a copied tail
    (which took 160 MB for 8 KB)."""
    assert len(command) <= reader.MAX_COMMAND_CHARS
    tracemalloc.start()
    found = reader.classify(reader.parse(command))
    read = reader.Command(command, "", found, [(word, [word]) for word in found.words], "not plain")
    permissions.decide(permissions.Call("run_command", "execute", [command], command=read, unsafe="not plain"),
                       s06.RULES, set())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 6_000_000, peak


# ---------------------------------------------------------------- a + operand of head or tail is an option, not a path

def runs_past(command: list[str], workspace: Path, seconds: float = 1.0) -> bool:
    """Whether the real program is still running after ``seconds`` (it follows the file: it never ends)."""
    try:
        subprocess.run(command, cwd=workspace, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=seconds)
    except subprocess.TimeoutExpired:
        return True
    return False


@pytest.mark.exercise(1)
@pytest.mark.parametrize("command", ["tail +1f memo.md", "tail +f memo.md", "tail -q +1f memo.md",
                                     "tail -- +1f memo.md", "head +1 memo.md", "cat memo.md | tail +1f"])
def test_a_plus_operand_of_head_or_tail_is_no_path_and_goes_to_a_person(workspace, command):
    verdict, why, _ = decide(workspace, command)
    assert verdict == "ask" and "+" in why and "obsolete" in why, why


@pytest.mark.skipif(subprocess.run(["tail", "--version"], capture_output=True, text=True).stdout.find("GNU") < 0,
                    reason="the obsolete + syntax is GNU tail's")
@pytest.mark.parametrize("command", ["tail +1f memo.md", "tail +f memo.md"])
def test_what_gnu_tail_runs_for_ever_is_never_allowed_without_a_person(workspace, command):
    """Differential: the real tail follows the file (still running after a second), and the gate asks."""
    assert runs_past(command.split(), workspace)
    assert decide(workspace, command)[0] == "ask"
    assert decide(workspace, "tail -n +1 memo.md")[0] == "allow" and not runs_past("tail -n +1 memo.md".split(), workspace)


# ---------------------------------------------------------------- an operand that is neither a file nor a folder

@pytest.mark.exercise(1)
@pytest.mark.parametrize("command", ["cat fifo", "head fifo", "head -c 40 fifo", "tail -n 1 ./fifo", "wc -l memo.md fifo",
                                     "grep x fifo", "cat fifo-link", "cat sub/../fifo", "ls memo.md && cat fifo"])
def test_a_fifo_or_device_already_in_the_workspace_is_never_read_without_a_person(workspace, command):
    """Tests cannot make a device (`head -c 40 disk`): a fifo stands in; it would also block the loop."""
    os.mkfifo(workspace / "fifo")
    (workspace / "fifo-link").symlink_to("fifo")
    (workspace / "sub").mkdir()
    verdict, why, _ = decide(workspace, command)
    assert verdict == "ask" and "not a regular file or a folder" in why, why
    assert decide(workspace, "cat memo.md")[0] == "allow" and decide(workspace, "ls sub")[0] == "allow"


# ---------------------------------------------------------------- a command built to cost is refused, not judged

NESTED = "env " + "$(a " * 450 + "a " * 921 + ")" * 450  # 4,096 characters: 1.5 million candidates read in full


@pytest.mark.exercise(1)
def test_a_command_with_too_many_candidate_programs_is_denied_unread_in_one_line(workspace):
    """It stalled the loop for about 80 s: every candidate matched against every deny rule."""
    assert len(NESTED) <= reader.MAX_COMMAND_CHARS
    found = reader.read_here(NESTED)
    assert found.too_complex and not found.plain and found.programs == [] and found.words == []
    stopped_at = int(found.too_complex.split("(")[1].split(" programs")[0].replace(",", ""))
    assert reader.MAX_CANDIDATES < stopped_at <= reader.MAX_CANDIDATES + reader.MAX_COMMAND_CHARS  # capped early
    verdict, why, decided_by = decide(workspace, NESTED)
    assert (verdict, decided_by) == ("deny", "rule") and "too complex" in why and "\n" not in why, why
    text, is_error = s06.run_tool(workspace, "run_command", {"command": NESTED}, gate())
    assert is_error and "too complex" in json.loads(text)["message"]


@pytest.mark.parametrize("command", ["env " + "a " * 2040, "xargs " + "x " * 2040, "env 'env " + "a " * 2030 + "'",
                                     "echo " + "$(a) " * 800, "ls " + "-l " * 2000])
def test_a_long_command_of_ordinary_shape_is_still_read_in_full(command):
    found = reader.read_here(command)
    assert not found.too_complex and 0 < len(found.programs) <= reader.MAX_CANDIDATES
