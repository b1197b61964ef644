"""s06: every path a file tool is handed stays inside the workspace, and the gate judges the entry the tool opens.

The file tools and the gate resolve a path with the same resolver (course.sandbox.paths): a NUL byte, an
absolute path, '..' or a link that leads out, a sibling folder whose name starts with the
workspace's, a path too long or too deep are refused before anything runs; what is left is the entry
the tool will open, links and '..' followed by the file system (a link to .env is .env), or, for
delete_file and move_file, the link itself. The tools act on regular files with a single name: not a
named pipe, and not a hard link, which may be a file outside the workspace or a secret under another
name; a hard link of a denied file is denied like it.
"""

from __future__ import annotations

import json
import os
import threading

import pytest

import course
import course.sandbox.confinement
import course.sandbox.paths
from s06_world import ENV_SECRET, gate, no_secret, outside_state, play, s06, workspace_files, world  # noqa: F401

pytestmark = pytest.mark.stage("s06")  # every test here pins s06


def allow_all():
    return gate(lambda *question: ("allow once", ""), course.sandbox.confinement.probe())


# ---------------------------------------------------------------- escapes, case by case

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


def test_each_escape_is_refused_with_a_clear_error(workspace, outside):
    for case, path in sandbox_cases(workspace).items():
        for follow_link in (True, False):
            with pytest.raises(course.sandbox.paths.Refused) as refused:
                course.sandbox.paths.resolve(workspace, path, follow_link=follow_link)
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


def test_every_file_tool_refuses_an_escape_and_the_model_is_told_so(workspace, outside):
    before = files_outside(workspace)
    # a person who allows anything, and the kernel's confinement as probed
    checking = gate(lambda tool, arguments, why, covers: ("allow once", ""), course.sandbox.confinement.probe())
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


def test_every_file_tool_refuses_an_escape_even_called_past_the_gate(workspace, outside):
    before = files_outside(workspace)
    for case, path in sandbox_cases(workspace).items():
        for call in (lambda: s06.read_file(workspace, path), lambda: s06.write_file(workspace, path, "x"),
                     lambda: s06.list_files(workspace, path), lambda: s06.delete_file(workspace, path),
                     lambda: s06.move_file(workspace, path, "moved.txt"), lambda: s06.move_file(workspace, "memo.md", path)):
            with pytest.raises(course.sandbox.paths.Refused) as refused:
                call()
            assert refused.value.kind == "outside_workspace", case
    assert files_outside(workspace) == before


def test_paths_that_stay_inside_the_workspace_still_work(workspace):
    (workspace / "notes").mkdir()
    (workspace / "notes" / "link-in").symlink_to(workspace / "memo.md")
    memo = (workspace / "memo.md").read_text(encoding="utf-8")
    for path in ("memo.md", "./memo.md", "notes/../memo.md", "notes/link-in"):
        assert s06.read_file(workspace, path) == memo, path
    assert course.sandbox.paths.resolve(workspace, ".") == workspace.resolve()


@pytest.mark.parametrize("path", ["a/" * 40 + "f", "a/" * 992 + "f", "a" * 2000, "a/" * 240_000])
def test_a_path_too_deep_or_too_long_is_refused_at_once(world, path):
    before = workspace_files(world)
    text, is_error = s06.run_tool(world, "write_file", {"path": path, "content": "x"},
                                  gate(confinement=course.sandbox.confinement.probe()))
    assert is_error and json.loads(text)["error"] == "path_too_long"
    assert workspace_files(world) == before and not (world / "a").exists()  # nothing was made


@pytest.fixture
def deep_chain(world):
    """A chain of folders deeper than Python 3.11's recursion limit (os.walk and shutil.rmtree recurse),
    taken down again from the bottom, one folder at a time, so that pytest can clean up after it."""
    chain = [world / "a"]
    for _ in range(1100):
        chain.append(chain[-1] / "a")
    for folder in chain:
        folder.mkdir()
    yield world
    for folder in reversed(chain):
        folder.rmdir()


@pytest.mark.exercise(1)
def test_a_deep_folder_chain_made_by_other_means_does_not_break_the_tools(deep_chain):
    world = deep_chain
    checking = gate(confinement=course.sandbox.confinement.probe())
    assert len(checking.hidden(world)) >= 1  # .env, found beside the chain
    for tool, arguments in (("calculate", {"expression": "1 + 1"}), ("list_files", {"path": "."}),
                            ("read_file", {"path": "memo.md"}), ("run_command", {"command": "ls"})):
        text, is_error = s06.run_tool(world, tool, arguments, checking)
        assert not is_error, (tool, text)


# ---------------------------------------------------------------- links, pipes and folders: what a tool acts on

@pytest.mark.exercise(1, 2)
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


@pytest.mark.exercise(1, 2)
def test_move_file_moves_one_file_not_a_folder_and_its_secret(world):
    (world / "conf").mkdir()
    (world / "conf" / ".env").write_text("KEY=1\n")
    text, is_error = s06.run_tool(world, "move_file", {"source": "conf", "destination": "conf2"}, allow_all())
    assert is_error and (world / "conf" / ".env").is_file() and not (world / "conf2").exists()


@pytest.fixture
def tricky(world):
    """-a=b and -a=memo.md as names; L a link to a folder, so that L/.. is not where the text says."""
    (world / "-a=b").symlink_to(".env")
    (world / "-a=memo.md").write_text("a file with an odd name\n")
    (world / "sub" / "inner").mkdir()
    (world / "L").symlink_to("sub/inner", target_is_directory=True)
    (world / "sub" / "notes").symlink_to("../.env")
    (world / "keep").mkdir()
    (world / "keep" / "old.txt").write_text("important\n")
    (world / "old.txt").write_text("scratch\n")
    (world / "M").symlink_to("keep/inner", target_is_directory=True)
    (world / "keep" / "inner").mkdir()
    (world / "notes-link").symlink_to("memo.md")
    return world


@pytest.mark.exercise(1)
@pytest.mark.parametrize("path", ["-a=b", "L/../notes", "./-a=b", "sub/inner/../notes", "L/../../env-link"])
def test_read_file_is_judged_on_the_file_it_opens(tricky, path):
    results, requests = play(tricky, [("read_file", {"path": path})])
    assert results[0]["is_error"] and "deny" in results[0]["content"], results[0]
    no_secret(requests)


@pytest.mark.exercise(1)
def test_write_file_through_a_dash_equals_link_is_denied_not_shown_as_another_name(tricky):
    asked = []
    results, _ = play(tricky, [("write_file", {"path": "-a=b", "content": "API_KEY=attacker\n"})],
                      lambda *question: asked.append(question) or ("allow once", ""))
    assert results[0]["is_error"] and asked == []  # denied by the rule on .env, never put to a person
    assert ENV_SECRET in (tricky / ".env").read_text()


@pytest.mark.parametrize("name", ["read_file", "write_file", "delete_file", "move_file"])
def test_the_gate_resolves_a_path_exactly_as_the_tool_does(tricky, name):
    root = tricky.resolve()
    for path in ("-a=b", "-a=memo.md", "L/../notes", "L/../old.txt", "M/../old.txt", "notes-link", "sub/notes",
                 "./x/../memo.md", "L", "memo.md/"):
        opened = course.sandbox.paths.entry(tricky, path) if name in ("delete_file", "move_file") else course.sandbox.paths.resolve(tricky, path)
        judged = gate(confinement=course.sandbox.confinement.probe()).read_call(tricky, name, {"path": path}).acts_on
        assert judged == [str(opened.relative_to(root))], (name, path)


# ---------------------------------------------------------------- hard links

@pytest.fixture
def hard_linked(world):
    os.link(world / ".env", world / "notes.txt")
    os.link(world / "sub" / ".env", world / "sub" / "readme.md")
    return world


@pytest.mark.exercise(1)
@pytest.mark.parametrize("tool, arguments", [
    ("read_file", {"path": "notes.txt"}), ("read_file", {"path": "sub/readme.md"}),
    ("run_command", {"command": "cat notes.txt"}), ("run_command", {"command": "grep -c SECRET sub/readme.md"}),
    ("search_files", {"text": ENV_SECRET[:10]}), ("search_files", {"text": "API_KEY="}),
    ("move_file", {"source": "notes.txt", "destination": "public.txt"})])
def test_a_hard_link_of_a_denied_file_is_denied_like_it(hard_linked, tool, arguments):
    results, requests = play(hard_linked, [(tool, arguments)])
    no_secret(requests)
    content = results[0]["content"]
    assert "notes.txt" not in content.replace(json.dumps(arguments)[1:-1], "") or results[0]["is_error"]
    if tool == "search_files":
        assert "notes.txt" not in content and "readme.md" not in content
    else:
        assert results[0]["is_error"], content
    hidden = {str(path.relative_to(hard_linked.resolve())) for path in s06.Gate(rules=s06.RULES).hidden(hard_linked)}
    assert {"notes.txt", "sub/readme.md", ".env", "sub/.env"} <= hidden


@pytest.fixture
def linked_out(world):
    """A project that holds hard links to files outside it (a hard-link copy, a package store)."""
    os.link(world.parent / "secret.txt", world / "h")
    (world / "notes").mkdir()
    os.link(world.parent / "secret.txt", world / "notes" / "key.txt")
    return world


@pytest.mark.exercise(1)
@pytest.mark.parametrize("tool, arguments", [
    ("read_file", {"path": "h"}), ("read_file", {"path": "notes/key.txt"}), ("search_files", {"text": "OUTSIDE"}),
    ("run_command", {"command": "cat h"}), ("run_command", {"command": "grep -c SECRET notes/key.txt"})])
def test_a_hard_link_to_a_file_outside_is_never_read(linked_out, tool, arguments):
    results, requests = play(linked_out, [(tool, arguments)])
    no_secret(requests)


@pytest.mark.exercise(1)
def test_a_hard_link_to_a_file_outside_is_never_written_even_when_approved(linked_out):
    before = outside_state(linked_out)
    results, _ = play(linked_out, [("write_file", {"path": "h", "content": "overwritten"})],
                      lambda *question: ("allow once", ""))
    assert results[0]["is_error"] and "hard link" in results[0]["content"]
    assert outside_state(linked_out) == before


def test_the_file_tools_refuse_a_hard_link_even_called_past_the_gate(linked_out):
    before = outside_state(linked_out)
    for call in (lambda: s06.read_file(linked_out, "h"), lambda: s06.write_file(linked_out, "h", "overwritten")):
        with pytest.raises(course.sandbox.paths.Refused) as refused:
            call()
        assert refused.value.kind == "hard_link"
    assert outside_state(linked_out) == before


# ---------------------------------------------------------------- a rule on a folder's name covers what lies beneath it

@pytest.fixture
def env_folders(world):
    """.env as a folder at the top (the world's .env file moved into it) and config/.env nested, each with a secret."""
    (world / ".env").unlink()
    (world / ".env").mkdir()
    (world / ".env" / "production").write_text(f"API_KEY={ENV_SECRET}\n", encoding="utf-8")
    (world / "config" / ".env").mkdir(parents=True)
    (world / "config" / ".env" / "keys").write_text(f"KEY={ENV_SECRET}\n", encoding="utf-8")
    return world


@pytest.mark.exercise(1)
@pytest.mark.parametrize("tool, arguments", [
    ("read_file", {"path": ".env/production"}), ("read_file", {"path": "config/.env/keys"}),
    ("read_file", {"path": "./config/../.env/production"}),
    ("write_file", {"path": ".env/new", "content": "KEY=attacker\n"}),
    ("write_file", {"path": ".env/production", "content": "KEY=attacker\n"}),
    ("write_file", {"path": "config/.env/new", "content": "KEY=attacker\n"}),
    ("write_file", {"path": "config/.env/keys", "content": "KEY=attacker\n"}),
    ("list_files", {"path": ".env"}), ("list_files", {"path": "config/.env"}),
    ("delete_file", {"path": ".env/production"}), ("move_file", {"source": "config/.env/keys", "destination": "k.txt"}),
    ("move_file", {"source": "memo.md", "destination": ".env/memo.md"}),
    ("run_command", {"command": "cat .env/production"}), ("run_command", {"command": "head -n 1 config/.env/keys"}),
])
def test_a_file_inside_a_folder_a_deny_rule_covers_is_denied_at_any_depth(env_folders, tool, arguments):
    asked, before = [], workspace_files(env_folders)
    results, requests = play(env_folders, [(tool, arguments)], lambda *question: asked.append(question) or ("allow once", ""))
    assert results[0]["is_error"] and "deny" in results[0]["content"] and asked == [], results[0]
    assert workspace_files(env_folders) == before
    no_secret(requests)


def test_the_files_inside_a_folder_a_deny_rule_covers_are_hidden_from_commands_and_search(env_folders):
    hidden = {str(path.relative_to(env_folders)) for path in gate().hidden(env_folders)}
    for secret in (".env/production", "config/.env/keys"):  # hidden itself, or inside a hidden folder
        assert any(secret == path or secret.startswith(path + "/") for path in hidden), (secret, hidden)
    text, _ = s06.run_tool(env_folders, "search_files", {"text": "KEY"}, allow_all())
    assert ENV_SECRET not in text and ".env" not in json.loads(text)["output"]
