"""s06: a secret file is out of every tool's reach by any of its usual names, and a denied folder whole.

The default deny rules name the usual secret files (s06/permissions.py, SECRETS, with sources):
dotenv's variants, private keys, cloud and package-registry credentials. With the default rules and
no person, none of them reaches the model through read_file, search_files, list_files' hints or a
command; a folder the rules deny hides everything beneath it from every tool; a refusal's reason
says what it is (never "a hard link" when it is not one).
"""

from __future__ import annotations

import json
import os

import pytest

from s06_world import ENV_SECRET, gate, no_secret, play, s06, world  # noqa: F401

pytestmark = pytest.mark.stage("s06")

SECRET_FILES = [".env.local", ".env.production", "config/.env.staging", "id_rsa", ".ssh/id_ed25519", "certs/server.pem",
                "tls.key", ".aws/credentials", ".npmrc", ".pypirc", ".netrc", ".docker/config.json",
                ".git-credentials", ".kube/config", ".config/gcloud/credentials.db", "deploy/secrets/token",
                ".env~", ".envrc", ".config/gh/hosts.yml", ".pgpass", ".cargo/credentials.toml",
                ".streamlit/secrets.toml", "id_rsa.old", "keys/deploy_key", "credentials.json",
                ".terraform.d/credentials.tfrc.json", ".yarnrc.yml"]


@pytest.fixture
def secrets(world):
    for name in SECRET_FILES:
        (world / name).parent.mkdir(parents=True, exist_ok=True)
        (world / name).write_text(f"{ENV_SECRET} in {name}\n")
    (world / ".env.local").unlink()
    (world / ".env.local").mkdir()  # a secret folder: its files are secrets too
    (world / ".env.local" / "key").write_text(f"{ENV_SECRET} in a folder\n")
    return world


@pytest.mark.parametrize("name", SECRET_FILES[1:] + [".env.local/key"])
def test_read_file_is_denied_every_secret_name(secrets, name):
    results, requests = play(secrets, [("read_file", {"path": name})])
    assert results[0]["is_error"] and '"denied"' in results[0]["content"]
    assert "hard link" not in results[0]["content"]  # a secret by its own name is no hard link
    no_secret(requests)


def test_search_finds_no_secret_and_commands_cannot_read_them(secrets):
    calls = [("search_files", {"text": ENV_SECRET[:-1]}), ("list_files", {"path": ".env.local"}),
             ("run_command", {"command": "cat .env.production .npmrc"}),
             ("run_command", {"command": "grep -c SECRET .env.local/key"})]
    results, requests = play(secrets, calls)
    assert json.loads(results[0]["content"])["output"] == "(no matches)"
    assert all(result["is_error"] for result in results[1:])
    no_secret(requests)


def test_a_confined_command_a_person_approved_still_cannot_read_them(secrets):
    import course.confinement
    if not course.confinement.probe().available:
        pytest.skip(course.confinement.probe().reason)
    hidden = gate().hidden(secrets)
    finished = s06.run_command(secrets, "cat .env.production .aws/credentials .env.local/key id_rsa 2>&1; echo end",
                               hidden=hidden)
    assert ENV_SECRET not in finished and "end" in finished


def test_the_not_found_hint_names_no_secret(secrets):
    results, requests = play(secrets, [("read_file", {"path": ".env.productio"}), ("read_file", {"path": "id_rsb"})])
    for result in results:
        hint = json.loads(result["content"])["hint"]
        assert ".env" not in hint and "id_rsa" not in hint, hint
    assert "memo.md" in json.loads(play(secrets, [("read_file", {"path": "memo.m"})])[0][0]["content"])["hint"]


def test_the_env_denial_names_the_rule_and_a_real_hard_link_is_called_one(world):
    reason = gate().check(world, "read_file", {"path": ".env"}).why
    assert "the rule 'deny * .env' matches '.env'" in reason and "hard link" not in reason
    assert "hard link" not in gate().check(world, "delete_file", {"path": "env-link"}).why  # a symbolic link
    os.link(world / ".env", world / "notes.txt")
    assert "hard link" in gate().check(world, "read_file", {"path": "notes.txt"}).why


def test_ordinary_files_with_similar_names_are_still_read(world):
    (world / "environment.md").write_text("notes\n")
    (world / "keys.txt").write_text("notes\n")
    for name in ("environment.md", "keys.txt", "memo.md"):
        assert gate().check(world, "read_file", {"path": name}).decision == "allow"


@pytest.fixture
def linked(world):
    """A dotfile manager's layout: .env and .aws are links to the files that hold the secrets."""
    (world / ".env").unlink()
    (world / "dotfiles" / "aws").mkdir(parents=True)
    (world / "dotfiles" / "env.production").write_text(f"API={ENV_SECRET}\n")
    (world / "dotfiles" / "aws" / "credentials").write_text(f"aws_secret_access_key = {ENV_SECRET}\n")
    (world / ".env").symlink_to("dotfiles/env.production")
    (world / ".aws").symlink_to("dotfiles/aws", target_is_directory=True)
    return world


@pytest.mark.parametrize("tool, arguments", [
    ("read_file", {"path": ".env"}), ("read_file", {"path": ".aws/credentials"}),
    ("read_file", {"path": "dotfiles/env.production"}), ("read_file", {"path": "dotfiles/aws/credentials"}),
    ("write_file", {"path": ".aws/config", "content": "[default]\ncredential_process = id\n"}),
    ("write_file", {"path": "dotfiles/aws/config", "content": "[default]\ncredential_process = id\n"})])
def test_a_secret_behind_a_link_named_like_one_is_denied_by_either_name(linked, tool, arguments):
    results, requests = play(linked, [(tool, arguments)])
    assert results[0]["is_error"] and '"denied"' in results[0]["content"], results[0]["content"]
    assert not (linked / "dotfiles" / "aws" / "config").exists()
    no_secret(requests)


def test_search_and_commands_do_not_reach_what_a_secret_named_link_leads_to(linked):
    results, requests = play(linked, [("search_files", {"text": ENV_SECRET[:-1]})])
    assert json.loads(results[0]["content"])["output"] == "(no matches)"
    hidden = {str(path) for path in gate().hidden(linked)}
    assert {str((linked / "dotfiles" / "aws").resolve()), str((linked / "dotfiles" / "env.production").resolve())} <= hidden
    no_secret(requests)
