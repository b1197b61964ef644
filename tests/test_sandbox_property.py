"""s06's sandbox, gate and calculator, on many generated inputs: nothing escapes, nothing slips past.

* Paths: made of traversal segments, absolute prefixes, a sibling folder whose name starts with the
  workspace's (``workspace-evil``, the prefix bug behind CVE-2025-54794 and CVE-2025-53110),
  symbolic links inside the workspace that lead out (to a file, a folder, the parent, a file
  that does not exist yet), a link loop, unicode look-alikes, NUL bytes, '.' and empty segments.
  The one resolver (``course.sandbox.paths.resolve``, which the file tools and the gate share) either refuses
  a path or returns one inside the workspace, and no file tool creates, reads, changes or deletes
  anything outside it, whatever it is handed.
* Compound commands: harmless allowed commands (ls, echo, cat...) joined with a denied or an
  unknown one by ; && || | & newlines, $(...), backticks, bash -c, sh -c and eval, with quoting
  variants and environment-variable prefixes. The gate's decision is never milder than the
  decision on the worst part alone: an allowed prefix approves nothing chained to it.
* The calculator: adversarial inputs (towers of powers, long products, float overflow, deep
  nesting, generated expressions) each answer with a structured error or a result of bounded size,
  and no operation the calculator performs on the way has more than its thousand digits to compute.

The workspace sits eight folders deep in a temporary folder, deeper than any generated path can
climb, so that even a path that did escape could not reach beyond the temporary folder.
"""

from __future__ import annotations

import contextlib
import json
import math
import operator
import os
import shlex
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

import course
import course.sandbox.confinement
import course.sandbox.paths
import s06_world
from s06_world import gate, s06

pytestmark = pytest.mark.stage("s06")  # s06's tools and its decision; the paths through the support package's resolver

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
SECRET = "TOP-SECRET-OUTSIDE"
DEPTH = 8  # folders between the temporary root and the workspace: deeper than any generated climb


# ---------------------------------------------------------------- the world around the workspace

SAMPLE_FILES = {path.name: path.read_bytes() for path in course.SAMPLE.iterdir() if path.is_file()}


@pytest.fixture(scope="module")
def around(tmp_path_factory) -> Path:
    """The folder the workspace sits in, eight folders deep, with secrets beside and above it and a
    sibling folder whose name starts with the workspace's. Made once; each example gets a fresh
    workspace in it (removing folders is slow on some disks, and the outside must not change anyway)."""
    folder = tmp_path_factory.mktemp("sandbox").resolve().joinpath(*(f"level{n}" for n in range(DEPTH - 1)))
    folder.mkdir(parents=True)
    (folder / "secret.txt").write_text(f"{SECRET} beside the workspace\n", encoding="utf-8")
    (folder.parent / "secret.txt").write_text(f"{SECRET} two levels up\n", encoding="utf-8")
    (folder / "workspace-evil").mkdir()
    (folder / "workspace-evil" / "secret.txt").write_text(f"{SECRET} in the sibling\n", encoding="utf-8")
    return folder


def fresh_workspace(around: Path) -> Path:
    """The sample workspace, a folder in it, and links inside it that lead out (and one loop)."""
    workspace = around / "workspace"
    if workspace.exists():
        shutil.rmtree(workspace)
    workspace.mkdir()
    for name, data in SAMPLE_FILES.items():
        (workspace / name).write_bytes(data)
    (workspace / "sub").mkdir()
    (workspace / "sub" / "inner.txt").write_text("inside, one folder down\n", encoding="utf-8")
    (workspace / "out-file").symlink_to(around / "secret.txt")
    (workspace / "out-dir").symlink_to(around / "workspace-evil", target_is_directory=True)
    (workspace / "up").symlink_to("..", target_is_directory=True)
    (workspace / "sub" / "up-two").symlink_to("../..", target_is_directory=True)
    (workspace / "dangling-out").symlink_to(around / "not-there-yet.txt")
    (workspace / "in-link").symlink_to("memo.md")
    (workspace / "loop").symlink_to("loop")
    return workspace


@pytest.fixture
def standing_workspace(around) -> Path:
    """A fresh workspace for a test that changes nothing in it: made once for all its examples."""
    return fresh_workspace(around)


def outside_state(workspace: Path) -> dict:
    """Every entry of the temporary root except the workspace's contents: files with their bytes,
    links with their targets, folders by name. Links are never followed."""
    root = workspace.parents[DEPTH - 1]
    state = {}
    for folder, folders, files in os.walk(root):
        if Path(folder) == workspace.parent:
            folders.remove(workspace.name)
        for name in folders + files:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                state[path] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                state[path] = ("folder",)
            else:
                state[path] = ("file", Path(path).read_bytes())
    return state


# ---------------------------------------------------------------- paths

SEGMENTS = st.sampled_from([
    "..", ".", "", "memo.md", "sub", "inner.txt", "secret.txt", "workspace", "workspace-evil", "level7",
    "out-file", "out-dir", "up", "up-two", "dangling-out", "in-link", "loop", "new.txt", "report.txt",
    "\x00", "memo.md\x00", "..\x00", "ｍemo.md", "．．", "..\u2215secret.txt", "\u202e..", "...", ". .", "~", "$HOME",
])
UNICODE = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)


@st.composite
def paths(draw) -> tuple[str, str]:
    """(prefix kind, path): a relative path or one of the world's absolute prefixes, then segments."""
    segments = draw(st.lists(st.one_of(SEGMENTS, SEGMENTS, SEGMENTS, UNICODE), min_size=0, max_size=6))
    prefix = draw(st.sampled_from(["", "", "", "/", "WORKSPACE/", "WORKSPACE-evil/", "AROUND/", "WORKSPACE"]))
    return prefix, "/".join(segments)


def concrete(workspace: Path, prefix: str, path: str) -> str:
    around = str(workspace.parent)
    return (prefix.replace("WORKSPACE", str(workspace)).replace("AROUND", around)) + path


def assert_outside_untouched(workspace: Path, before: dict, outputs: list[str], what: str) -> None:
    assert outside_state(workspace) == before, f"something outside the workspace changed after {what}"
    for output in outputs:
        assert SECRET not in output, f"a secret from outside the workspace was read by {what}"


@PROPERTY
@given(paths())
@example(("", "../secret.txt"))
@example(("", "../workspace-evil/secret.txt"))
@example(("WORKSPACE-evil/", "secret.txt"))
@example(("", "out-file"))
@example(("", "out-dir/secret.txt"))
@example(("", "up/secret.txt"))
@example(("", "sub/up-two/secret.txt"))
@example(("", "dangling-out"))
@example(("", "memo.md\x00/../../secret.txt"))
@example(("WORKSPACE/", "../secret.txt"))
@example(("", "loop"))
def test_the_resolver_refuses_or_returns_a_path_inside_the_workspace(standing_workspace, case):
    workspace = standing_workspace
    path = concrete(workspace, *case)
    try:
        resolved = course.sandbox.paths.resolve(workspace, path)
    except course.sandbox.paths.Refused as refused:
        assert refused.kind == "outside_workspace" and refused.message and refused.hint
        return
    except RuntimeError as loop:  # a link loop: Path.resolve() gives up, nothing is opened
        assert "loop" in str(loop).lower()
        return
    assert resolved.is_relative_to(workspace), f"{path!r} was let through to {resolved}"
    assert Path(os.path.realpath(os.path.join(workspace, path))).is_relative_to(workspace)


FILE_TOOLS = ("read_file", "write_file", "list_files", "delete_file", "move_file from", "move_file to", "search_files")


def use_tool(workspace: Path, tool: str, path: str) -> tuple[bool, str]:
    """Call one file tool straight (no gate: the resolver must hold on its own) with ``path``.
    Returns (whether it succeeded, what it returned or the failure)."""
    calls = {
        "read_file": lambda: s06.read_file(workspace, path),
        "write_file": lambda: s06.write_file(workspace, path, f"written by the test through {path!r}\n"),
        "list_files": lambda: s06.list_files(workspace, path),
        "delete_file": lambda: s06.delete_file(workspace, path),
        "move_file from": lambda: s06.move_file(workspace, path, "moved-here.txt"),
        "move_file to": lambda: s06.move_file(workspace, "sub/inner.txt", path),
        "search_files": lambda: s06.search_files(workspace, SECRET),
    }
    try:
        return True, calls[tool]()
    except (s06.ToolError, course.sandbox.paths.Refused) as refused:
        return False, f"{refused.kind}: {refused.message} ({refused.hint})"
    except (OSError, ValueError, RuntimeError) as failed:  # e.g. a folder read as a file, a link loop
        return False, f"{type(failed).__name__}: {failed}"


@PROPERTY
@given(paths(), st.sampled_from(FILE_TOOLS))
@example(("", "../secret.txt"), "write_file")
@example(("", "dangling-out"), "write_file")
@example(("", "out-dir/new.txt"), "write_file")
@example(("", "up/secret.txt"), "delete_file")
@example(("", "out-file"), "read_file")
@example(("", "out-dir"), "list_files")
@example(("", "up"), "list_files")
@example(("", "secrt.txt"), "read_file")
@example(("WORKSPACE-evil/", "secret.txt"), "move_file from")
@example(("", "up/stolen.txt"), "move_file to")
@example(("", "../workspace-evil"), "list_files")
def test_no_file_tool_touches_anything_outside_the_workspace(around, case, tool):
    workspace = fresh_workspace(around)
    before = outside_state(workspace)
    path = concrete(workspace, *case)
    succeeded, output = use_tool(workspace, tool, path)
    assert_outside_untouched(workspace, before, [output], f"{tool} {path!r}")
    if tool == "search_files":
        assert output == "(no matches)", "search_files found files outside the workspace"
    if succeeded and tool == "list_files":
        assert "secret.txt" not in output and "workspace-evil" not in output, f"listed outside: {output}"
    if output.startswith("not_found"):  # its hint names the nearest existing names: none from outside
        assert "secret" not in output.rpartition("(")[2], f"a name from outside leaked: {output}"


@pytest.mark.exercise(1)
def test_every_tool_through_the_harness_leaves_the_outside_untouched(around):
    """The same through run_tool, as the model reaches the tools, with a person who allows anything."""
    workspace = fresh_workspace(around)
    before = outside_state(workspace)
    anyone = s06.Gate(rules=[], approver=lambda tool, arguments, why, covers: ("allow always", ""), audit_log=False)
    outputs = []
    for path in ("../secret.txt", "out-file", "out-dir/secret.txt", "up/secret.txt", "dangling-out",
                 f"{workspace}-evil/secret.txt", "sub/up-two/secret.txt", "memo.md\x00"):
        for name, arguments in (("read_file", {"path": path}), ("write_file", {"path": path, "content": "x"}),
                                ("list_files", {"path": path}), ("delete_file", {"path": path}),
                                ("move_file", {"source": path, "destination": "here.txt"}),
                                ("move_file", {"source": "hello.txt", "destination": path}),
                                ("search_files", {"text": SECRET})):
            text, is_error = s06.run_tool(workspace, name, arguments, anyone)
            outputs.append(text)
            assert is_error or name == "search_files", (name, arguments, text)
    assert_outside_untouched(workspace, before, outputs, "the tools")


# ---------------------------------------------------------------- compound commands

HARMLESS = ["ls", "ls -l", "echo hi", "echo 'a b'", "cat memo.md", "wc -l memo.md", "pwd", "grep agent memo.md",
            "head -n 1 memo.md", "tail -n 2 todo.md", "wc -w memo.md", "pwd"]
DENIED = ["rm memo.md", "rm -rf .", "curl http://example.invalid", "wget http://example.invalid", "sudo ls",
          "chmod 777 memo.md", "chown root memo.md", "kill 1", "git push", "dd if=/dev/zero of=memo.md",
          "'rm' memo.md", "\"rm\" -rf .", "r''m memo.md", "\\rm memo.md"]
UNKNOWN = ["touch new.txt", "mv memo.md gone.md", "cp memo.md copy.md", "/bin/rm memo.md", "tee memo.md",
           "python3 -c 'print(1)'", "find . -delete", "git commit -m x"]
PREFIXES = ["", "", "", "FOO=1 ", "LANG=C ", "env ", "nohup ", "time ", "command ", "A=1 B=2 "]
JOINERS = ["; ", ";", " && ", "&&", " || ", " | ", "|", "\n", " & ", " ;\n "]


def embed(draw, command: str) -> str:
    """The command as it is, or hidden in a substitution or a shell started by a harmless command."""
    quoted = shlex.quote(command)
    forms = [command, command, f"echo $({command})", f"echo \"$({command})\"", f"echo `{command}`",
             f"bash -c {quoted}", f"sh -c {quoted}", f"eval {quoted}", f"eval {command}",
             f"ls $(bash -c {quoted})", f"echo \"`{command}`\"", f"bash -lx -c {quoted}"]
    if not any(char in command for char in "\"$`\\"):
        forms += [f"sh -c \"{command}\"", f"bash -c \"ls; {command}\""]
    return draw(st.sampled_from(forms))


@st.composite
def compound_commands(draw) -> tuple[str, list[str]]:
    """(the compound command, the simple commands put in it), with at least one denied or unknown."""
    bad = draw(st.lists(st.sampled_from(DENIED + UNKNOWN), min_size=1, max_size=2))
    good = draw(st.lists(st.sampled_from(HARMLESS), min_size=1, max_size=3))
    parts = draw(st.permutations(good + bad))
    pieces = [draw(st.sampled_from(PREFIXES)) + part for part in parts]
    pieces = [embed(draw, piece) if part in bad else piece for piece, part in zip(pieces, parts)]
    command = pieces[0]
    for piece in pieces[1:]:
        command += draw(st.sampled_from(JOINERS)) + piece
    return command, parts


def decide(workspace: Path, command: str) -> tuple[str, str, str]:
    """decide()'s verdict on a command with the default rules and the kernel's confinement as probed, as
    (decision, why, decided_by): nothing runs."""
    return s06_world.decide(workspace, command, confinement=course.sandbox.confinement.probe())


def severity(verdict: str) -> int:
    return {"allow": 0, "ask": 1, "deny": 2}[verdict]


@pytest.mark.exercise(1)
@PROPERTY
@given(compound_commands())
@example(("ls && rm memo.md", ["ls", "rm memo.md"]))
@example(("echo hi; FOO=1 rm -rf .", ["echo hi", "rm -rf ."]))
@example(("cat memo.md | bash -c 'rm memo.md'", ["cat memo.md", "rm memo.md"]))
@example(("ls\ntouch new.txt", ["ls", "touch new.txt"]))
@example(("echo `sudo ls`", ["echo hi", "sudo ls"]))
def test_an_allowed_prefix_never_approves_a_part_that_alone_is_denied_or_asked_about(around, case):
    command, parts = case
    workspace = around  # deciding runs nothing: any folder will do
    alone = max(severity(decide(workspace, part)[0]) for part in parts)
    assert alone >= severity("ask")  # the generator put a denied or unknown command in
    verdict, why, _ = decide(workspace, command)
    assert severity(verdict) >= alone, f"{command!r} was decided {verdict!r} ({why}); a part alone is worse"


@pytest.mark.exercise(1)
@settings(PROPERTY, max_examples=20)
@given(st.sampled_from(["echo a#b", "ls x#", "echo #\n", "ls; #note\n", "cat memo.md#"]), st.sampled_from(DENIED),
       st.sampled_from(["; ", " && ", "\n", " | "]))
def test_a_comment_sign_in_a_harmless_command_hides_nothing(around, harmless, bad, joiner):
    workspace = around  # deciding runs nothing: any folder will do
    verdict = decide(workspace, harmless + joiner + bad)[0]
    assert verdict == "deny", f"{harmless + joiner + bad!r} was decided {verdict!r}"


# ---------------------------------------------------------------- the calculator

ADVERSARIAL = [
    "9**9**9", "(((9**64)**64)**64)**64", "10**1000", "2**2**2**2**2", "9**9**9**9", "(-9)**9**9",
    "1e308*1e308", "1e308**2", "2.0**100000", "10**999 * 10**999", "(10**999 + 1) * (10**999 + 1)",
    "*".join(["999999999"] * 20), "*".join(["99999999999999999999"] * 9), "+".join(["10**999"] * 20),
    "(" * 90 + "1" + ")" * 90, "-" * 199 + "1", "1" * 199, "1" * 201, "(" * 300 + "1" + ")" * 300,
    "(-1)**(10**18)", "0**(10**18)", "2**-99999999999", "(2**3321)**1.5", "10**999 // 3 % 7",
    "9**9**9 * 0", "1/0", "(10**999)**(10**999)", "2**3321", "7**1183 * 3", "1.5**2000",
]


# Why the calculator answers at once: every operation it performs has operands and a result of at most
# MAX_DIGITS digits (a thousand-digit product takes microseconds). That is checked here, before each
# operation runs, by a bound of its own (bits, not the calculator's logarithms), so that a guard that
# let 9**9**9 through fails this test instead of hanging it, on any machine, however loaded.
MOST_BITS = int(course.helpers.arithmetic.MAX_DIGITS * math.log2(10)) + 64


def most_bits(operation, operands) -> float:
    """The bits of ``operation(*operands)``'s whole-number operands and, for a product or a power of whole
    numbers, of its result, worked out without computing it (a float overflows to an error instead)."""
    whole = [value for value in operands if isinstance(value, int)]
    bits = [math.log2(abs(value)) + 1 if value else 0 for value in whole]
    if len(whole) == 2 and operation is operator.pow and whole[1] > 0 and abs(whole[0]) > 1:
        bits.append(whole[1] * math.log2(abs(whole[0])) + 1)
    elif len(whole) == 2 and operation is operator.mul:
        bits.append(sum(bits))
    return max(bits, default=0)


@contextlib.contextmanager
def every_operation_bounded():
    """Each operation the calculator performs, refused by this test if it could pass MOST_BITS."""
    original = dict(course.helpers.arithmetic.OPERATORS)

    def bounded(operation):
        def run(*operands):
            bits = most_bits(operation, operands)
            assert bits <= MOST_BITS, f"the calculator was about to compute {operation.__name__}{operands!r:.80} (about {bits:.0f} bits)"
            return operation(*operands)
        return run
    course.helpers.arithmetic.OPERATORS.update({kind: bounded(operation) for kind, operation in original.items()})
    try:
        yield
    finally:
        course.helpers.arithmetic.OPERATORS.update(original)


def assert_bounded(expression: str) -> None:
    workspace = Path(tempfile.gettempdir())  # the calculator never touches its workspace
    checking = gate(confinement=course.sandbox.confinement.probe())
    with every_operation_bounded():
        text, is_error = s06.run_tool(workspace, "calculate", {"expression": expression}, checking)
    result = json.loads(text)
    if is_error:
        assert result["ok"] is False and result["error"] and result["message"] and result["hint"]
        assert "the calculator was about to compute" not in text, text  # the bound above, not the calculator, refused
    else:
        assert len(result["output"]) <= course.helpers.arithmetic.MAX_DIGITS + 10, f"calculate({expression[:60]!r}) gave {len(result['output'])} characters"


def test_the_bound_of_this_file_catches_a_calculator_that_computes_a_tower(monkeypatch):
    monkeypatch.setattr(course.helpers.arithmetic, "refuse_huge", lambda *arguments: None)
    with pytest.raises(AssertionError, match="about to compute"):
        assert_bounded("9**9**9")


@pytest.mark.parametrize("expression", ADVERSARIAL, ids=[text[:40] for text in ADVERSARIAL])
def test_the_calculator_never_computes_a_number_too_big_to_answer_at_once(expression):
    assert_bounded(expression)


NUMBERS = st.one_of(st.integers(-10**12, 10**12), st.sampled_from([9, 10, 64, 999, 10**18]),
                    st.floats(allow_nan=False, allow_infinity=False))
OPERATORS = st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "**", "*"])
expressions = st.recursive(
    NUMBERS.map(lambda number: f"({number!r})" if repr(number).startswith("-") else repr(number)),
    lambda operands: st.tuples(operands, OPERATORS, operands).map(lambda parts: "({} {} {})".format(*parts)),
    max_leaves=12)


@PROPERTY
@given(expressions)
def test_no_generated_expression_makes_the_calculator_compute_a_number_too_big(expression):
    assert_bounded(expression)
