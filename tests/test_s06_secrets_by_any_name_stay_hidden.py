"""s06: a secret file is out of every tool's reach by any of its usual names, and a denied folder whole.

The default deny rules name the usual secret files (course.sandbox.paths.SECRETS, with sources):
dotenv's variants, private keys, cloud and package-registry credentials. With the default rules and
no person, none of them reaches the model through read_file, search_files, list_files' hints or a
command; a folder the rules deny hides everything beneath it from every tool; a refusal's reason
says what it is (never "a hard link" when it is not one). A repository's .git/config is denied to the
file tools and to a command that names it, and hidden from commands when it holds a credential: git
cannot run with a config it cannot read, so a plain one stays readable to an approved `git status`.
"""

from __future__ import annotations

import fnmatch
import json
import os

import pytest
from hypothesis import given, strategies as st

import course.sandbox.paths

from s06_world import ENV_SECRET, Person, gate, no_secret, play, s06, world, world_to_decide_on  # noqa: F401

pytestmark = pytest.mark.stage("s06")

SECRET_FILES = [".env.local", ".env.production", "config/.env.staging", "id_rsa", ".ssh/id_ed25519", "certs/server.pem",
                "tls.key", ".aws/credentials", ".npmrc", ".pypirc", ".netrc", ".docker/config.json",
                ".git-credentials", ".kube/config", ".config/gcloud/credentials.db", "deploy/secrets/token",
                ".env~", ".envrc", ".config/gh/hosts.yml", ".pgpass", ".cargo/credentials.toml",
                ".streamlit/secrets.toml", "id_rsa.old", "keys/deploy_key", "credentials.json",
                ".terraform.d/credentials.tfrc.json", ".yarnrc.yml"]
# One a family, each where its tool keeps a credential (s06/permissions.py names the source of each).
MORE_SECRET_FILES = [".git/config", "vendor/lib/.git/modules/dep/config", ".terraformrc", "infra/terraform.tfstate",
                     "infra/prod.tfstate.backup", ".vault-token", ".s3cfg", ".boto", ".gem/credentials",
                     ".databrickscfg", ".config/rclone/rclone.conf", ".m2/settings.xml", ".config/hub",
                     ".kaggle/kaggle.json", ".cache/huggingface/token", "auth.json", "php/auth.json", ".env-local",
                     "config/.env_prod",
                     # act's and dynaconf's secrets files, Ansible's vault password, a Kerberos keytab, GnuPG 1's
                     # secret keyring outside .gnupg, WakaTime's key
                     ".secrets", ".secrets.toml", "config/.secrets.yaml", ".vault_pass.txt", "etc/krb5.keytab",
                     "backup/secring.gpg", ".wakatime.cfg",
                     # a framework's own secrets: WordPress's, cookiecutter-django's, Google Cloud's default login
                     "site/wp-config.php", ".envs/.production/.django", "keys/application_default_credentials.json",
                     # older tools' and mail clients' saved passwords, and configs that hold one
                     ".subversion/auth/svn.simple/0a1b", ".cvspass", ".smbcredentials", ".fetchmailrc", ".msmtprc",
                     ".purple/accounts.xml", "cookies.txt", "token.pickle", ".config/pip/pip.conf", ".hgrc",
                     ".gitconfig",
                     # command lines' and desktop tools' logins, and Rails' master key
                     ".circleci/cli.yml", ".config/filezilla/sitemanager.xml", ".cloudflared/6ff42ae2.json",
                     ".acme.sh/account.conf", ".config/twilio-cli/config.json", ".dvc/config.local", ".vnc/passwd",
                     ".config/helm/registry/config.json", "config/master.key", "config/credentials/production.key",
                     # the same secrets by their tools' other names
                     ".authinfo", ".gitcookies", "infra/prod.auto.tfvars.json", "backup/rclone.conf", "ngrok.yml",
                     ".odbc.ini", ".mbsyncrc", ".cassandra/cqlshrc"]


def with_secrets(world):
    for name in SECRET_FILES + MORE_SECRET_FILES:
        (world / name).parent.mkdir(parents=True, exist_ok=True)
        (world / name).write_text(f"{ENV_SECRET} in {name}\n")
    # what actions/checkout leaves in the repository's config
    (world / ".git" / "config").write_text(f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {ENV_SECRET}\n')
    (world / ".env.local").unlink()
    (world / ".env.local").mkdir()  # a secret folder: its files are secrets too
    (world / ".env.local" / "key").write_text(f"{ENV_SECRET} in a folder\n")
    return world


@pytest.fixture
def secrets(world):
    return with_secrets(world)


@pytest.fixture(scope="module")
def secrets_to_decide_on(world_to_decide_on):
    return with_secrets(world_to_decide_on)


@pytest.mark.parametrize("name", SECRET_FILES[1:] + MORE_SECRET_FILES + [".env.local/key"])
def test_every_secret_name_is_denied_to_the_file_tools_by_the_secrets_rule(secrets_to_decide_on, name):
    """The decision, name by name: denied by the deny rule of the secrets (never as a hard link: it is none)."""
    for tool, arguments in [("read_file", {"path": name}), ("write_file", {"path": name, "content": "x"})]:
        found = gate().check(secrets_to_decide_on, tool, arguments)
        assert found.decision == "deny" and found.decided_by == "rule", (name, found.why)
        assert "<a secret>" in found.why and "hard link" not in found.why, (name, found.why)


def test_a_denied_read_goes_back_to_the_model_without_the_secret(secrets):
    """The loop's behaviour, once: each denial is a tool error the model reads, and no request holds the secret."""
    names = [".env.production", ".aws/credentials", ".env.local/key"]  # the loop stops after three refusals in a row
    results, requests = play(secrets, [("read_file", {"path": name}) for name in names])
    assert all(result["is_error"] and '"denied"' in result["content"] for result in results), results
    no_secret(requests)


def test_search_finds_no_secret_and_commands_cannot_read_them(secrets):
    calls = [("search_files", {"text": ENV_SECRET[:-1]}), ("list_files", {"path": ".env.local"}),
             ("run_command", {"command": "cat .env.production .npmrc"}),
             ("run_command", {"command": "grep -c SECRET .env.local/key"})]
    results, requests = play(secrets, calls)
    assert json.loads(results[0]["content"])["output"] == "(no matches)"
    assert all(result["is_error"] for result in results[1:])
    no_secret(requests)


@pytest.mark.parametrize("name", MORE_SECRET_FILES)
def test_a_plain_cat_or_grep_of_them_is_denied_without_a_person(secrets_to_decide_on, name):
    for command in (f"cat {name}", f"grep -c SECRET {name}"):
        found = gate().check(secrets_to_decide_on, "run_command", {"command": command})
        assert found.decision == "deny" and found.decided_by == "rule", (command, found.why)


def test_a_confined_command_a_person_approved_still_cannot_read_them(secrets):
    import course.sandbox.confinement
    if not course.sandbox.confinement.probe().available:
        pytest.skip(course.sandbox.confinement.probe().reason)
    hidden = gate().hidden(secrets)
    finished = s06.run_command(secrets, "cat .env.production .aws/credentials .env.local/key id_rsa 2>&1; echo end",
                               hidden=hidden)
    assert ENV_SECRET not in finished and "end" in finished
    finished = s06.run_command(secrets, " ".join(f"cat {name} 2>&1;" for name in MORE_SECRET_FILES) + " echo end",
                               hidden=hidden)
    assert ENV_SECRET not in finished and "end" in finished


# ---------------------------------------------------------------- a repository's config: git must read it

CHECKOUT_CONFIG = (f'[core]\n\trepositoryformatversion = 0\n[remote "origin"]\n\turl = https://github.com/o/r.git\n'
                   f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {ENV_SECRET}\n')


@pytest.mark.parametrize("config, plain", [
    ('[core]\n\tbare = false\n[remote "origin"]\n\turl = git@github.com:o/r.git\n', True),
    ('[remote "origin"]\n\turl = https://github.com/o/r.git\n[branch "main"]\n\tremote = origin\n', True),
    (CHECKOUT_CONFIG, False),
    ('[remote "origin"]\n\turl = https://x-access-token:ghp_abc@github.com/o/r.git\n', False),
    ('[remote "origin"]\n\turl = https://ghp_abc@github.com/o/r.git\n', False),
    ('[sendemail]\n\tsmtpPass = hunter2\n\tsmtpPassword = hunter2\n', False),
    # A key whose name holds pass, token, secret or credential, in each way git reads a name.
    ('[sendemail]\n\tsmtpPass = hunter2\n', False),  # git send-email's password, on its own
    ('[sendemail] smtppass=hunter2\n', False),  # a key on the section's own line
    ('[SendEmail]\n\tSMTPPASS = hunter2\n', False),  # names in any case
    ('[sendemail "work"]\n\tsmtpPass\n', False),  # a bare key, in a subsection
    ('[imap]\n\tpass = hunter2\n', False),
    ('[github]\n\toauth-token = ghp_abc\n', False), ('[deploy]\n\tapiSecret = x\n', False),
    ('[credential]\n\thelper = "!f() { echo password=hunter2; }; f"\n', False),
    ('[http]\n\tproxy = http://user:hunter2@proxy.example:3128\n', False),  # a URL with user info
    ('[remote "origin"]\n\turl = https://github.com/o/compass.git\n', True),  # "pass" in a value: no key
    ('[core]\n\tbare = false\n\tfilemode = true\n', True),
])
def test_a_repository_config_is_hidden_from_commands_when_it_holds_a_credential(world, config, plain):
    (world / ".git").mkdir()
    (world / ".git" / "config").write_text(config)
    assert course.sandbox.paths.plain_git_config(world / ".git" / "config") is plain
    assert ((world / ".git" / "config").resolve() in gate().hidden(world)) is not plain
    assert gate().check(world, "read_file", {"path": ".git/config"}).decision == "deny"  # never to the file tools


@pytest.mark.parametrize("name", [".gitconfig", ".config/git/config"])
def test_the_users_git_config_is_hidden_from_commands_only_when_it_holds_a_credential(world, name):
    """A home folder's git config names the user (git needs it to commit) and may hold a URL with a token."""
    (world / name).parent.mkdir(parents=True, exist_ok=True)
    for config, plain in (("[user]\n\tname = Ana\n", True),
                          ('[url "https://ana:ghp_abc@github.com/"]\n\tinsteadOf = https://github.com/\n', False)):
        (world / name).write_text(config)
        assert course.sandbox.paths.plain_git_config(world / name) is plain
        assert ((world / name).resolve() in gate().hidden(world)) is not plain
        assert gate().check(world, "read_file", {"path": name}).decision == "deny"
    assert not course.sandbox.paths.plain_git_config(world / "notes" / "config")  # a file named config elsewhere is no git's


@pytest.fixture
def checkout(world):
    """A clone as actions/checkout leaves it: a commit, and the job's token in .git/config."""
    import shutil
    import subprocess

    import course.sandbox.confinement
    if not shutil.which("git") or not course.sandbox.confinement.probe().available:
        pytest.skip("needs git and the kernel confinement")
    alone = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}  # no signing, no hooks of the machine
    for command in (["init", "-q"], ["add", "memo.md"], ["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "x"]):
        subprocess.run(["git", *command], cwd=world, check=True, capture_output=True, env=alone)
    return world


def test_git_runs_for_an_approved_command_in_a_repository_whose_config_holds_no_credential(checkout):
    finished = s06.run_command(checkout, "git log --oneline; git status --short memo.md; echo end",
                               hidden=gate().hidden(checkout))
    assert "unable to access" not in finished and " x\n" in finished and "end" in finished, finished


def test_a_checkout_token_in_the_repository_config_is_out_of_every_commands_reach(checkout):
    (checkout / ".git" / "config").write_text(CHECKOUT_CONFIG)
    finished = s06.run_command(checkout, "git config --list; git remote -v; cat .git/config; echo end",
                               hidden=gate().hidden(checkout))
    assert ENV_SECRET not in finished and "end" in finished


def test_the_not_found_hint_names_no_secret(secrets):
    results, requests = play(secrets, [("read_file", {"path": ".env.productio"}), ("read_file", {"path": "id_rsb"})])
    for result in results:
        hint = json.loads(result["content"])["hint"]
        assert ".env" not in hint and "id_rsa" not in hint, hint
    assert "memo.md" in json.loads(play(secrets, [("read_file", {"path": "memo.m"})])[0][0]["content"])["hint"]


def test_the_env_denial_names_the_rule_and_a_real_hard_link_is_called_one(world):
    reason = gate().check(world, "read_file", {"path": ".env"}).why
    assert "the rule 'deny * <a secret>' matches '.env' (a secret's name: .env)" in reason and "hard link" not in reason
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


DENIED = list(course.sandbox.paths.SECRET_GLOBS)
PARTS = st.sampled_from([".env", ".ENV", "a", ".git", "config", "modules", "x.pem", "id_rsa.old", "secrets",
                         ".config", "gcloud", "auth.json", "b.tfstate", ".env-local", "日本"])


@given(st.lists(PARTS, min_size=1, max_size=6).map("/".join))
def test_the_walks_quick_match_of_the_deny_globs_is_fnmatchs(path):
    """course.sandbox.paths.any_glob answers most globs with a set and an ending instead of one long expression:
    it must still answer exactly what fnmatch answers, without regard to case, for every deny glob."""
    expected = any(fnmatch.fnmatchcase(path.lower(), pattern.lower()) for pattern in DENIED)
    assert course.sandbox.paths.any_glob(DENIED)(path) == expected


# Where the common ones live, each as its tool names it (course.sandbox.paths.SECRETS gives the sources).
COMMON_SECRETS = ["secrets.yaml", "conf/secrets.yml", "app/secrets.json", ".my.cnf", ".dockercfg",
                  "client_secret_1234-abc.apps.googleusercontent.com.json", "infra/prod.tfvars",
                  ".gradle/gradle.properties", ".git/config.worktree", ".config/doctl/config.yaml",
                  ".config/ngrok/ngrok.yml", ".ngrok2/ngrok.yml", ".oci/config", ".sentryclirc", ".bash_history",
                  "home/.zsh_history", ".python_history", ".psql_history", ".mysql_history",
                  "keys/server.ppk", "AuthKey_ABC123DEFG.p8", "token.json", "app/serviceAccountKey.json",
                  "prod-service-account.json", "service-account-key.json", "wg0.conf", "vpn/client.ovpn",
                  "web/.htpasswd", "release.keystore", "android/app/upload.jks", ".password-store/mail.gpg",
                  ".local/share/keyrings/login.keyring", ".node_repl_history", ".sqlite_history", ".irb_history"]
COPIES = ["{}~", "{}.bak", "{}.old", "{}.orig", "{}.swp", ".{}.swp", "#{}#", "{}.save"]


def single_names() -> list[str]:
    """Each name of the list that is a name alone (no glob, no folder), and not itself a copy of another."""
    listed = course.sandbox.paths.SECRETS
    plain = [name for name in listed if not any(mark in name for mark in "*?[/")]
    return [name for name in plain if not any(copy.format(other) == name for other in plain for copy in COPIES)]


def test_every_copy_an_editor_or_a_tool_leaves_of_a_secret_is_denied():
    """NAME~, #NAME#, .NAME.swp, NAME.bak...: what the secret holds, under a name made from it."""
    denied = course.sandbox.paths.secret_name
    names = single_names()
    assert {".npmrc", ".pgpass", "credentials.json", "secrets.yaml"} <= set(names)
    missed = [copy.format(name) for name in names for copy in COPIES
              if not denied(copy.format(name)) or not denied("deep/down/" + copy.format(name))]
    assert not missed


@pytest.mark.parametrize("path", COMMON_SECRETS + [".npmrc.bak", "config/#.pgpass#", ".netrc.orig", "..git-credentials.swp"])
def test_the_common_names_of_secrets_are_denied_to_every_tool(world_to_decide_on, path):
    for tool, arguments in [("read_file", {"path": path}), ("write_file", {"path": path, "content": "x"})]:
        found = gate().check(world_to_decide_on, tool, arguments)
        assert found.decision == "deny" and "the rule 'deny * " in found.why, (path, found.why)


# ---------------------------------------------------------------- a secret moved out from under its name

def moved(world, first_gate, source, destination):
    """``source`` renamed to ``destination`` after the run's first check, as an approved `mv` would."""
    first_gate.check(world, "list_files", {"path": "."})
    (world / destination).parent.mkdir(parents=True, exist_ok=True)
    os.rename(world / source, world / destination)


@pytest.fixture
def streamlit(world):
    (world / ".streamlit").mkdir()
    (world / ".streamlit" / "secrets.toml").write_text(f'api_key = "{ENV_SECRET}"\n')
    (world / ".aws").mkdir()
    # AWS's config may hold the keys too; a file named credentials is a secret by that name wherever it is moved
    (world / ".aws" / "config").write_text(f"[default]\naws_secret_access_key = {ENV_SECRET}\n")
    (world / ".env.local").write_text(f"KEY={ENV_SECRET}\n")
    return world


@pytest.mark.parametrize("source, destination, now", [
    (".streamlit", "x", "x/secrets.toml"),            # a folder above a secret of two parts
    (".env.local", "notes.txt", "notes.txt"),         # the secret itself
    (".aws", "cloud", "cloud/config"),                # a folder the rules hide whole: what it held
    (".streamlit/secrets.toml", "deep/er/plain.txt", "deep/er/plain.txt"),
])
def test_a_secret_moved_to_a_name_no_rule_covers_is_still_hidden(streamlit, source, destination, now):
    """What was a secret stays one whatever it is called later in the run: the file tools refuse it, search
    skips it, a command finds it masked and is not allowed it without a person."""
    checking = gate()
    moved(streamlit, checking, source, destination)
    for tool, arguments in [("read_file", {"path": now}), ("write_file", {"path": now, "content": "x"}),
                            ("move_file", {"source": now, "destination": "other.txt"})]:
        found = checking.check(streamlit, tool, arguments)
        assert found.decision == "deny" and "moved or renamed" in found.why, (tool, found.why)
    assert (streamlit / now).resolve() in checking.hidden(streamlit)
    assert s06.search_files(streamlit, ENV_SECRET[:-1], hidden=checking.hidden(streamlit)) == "(no matches)"
    found = checking.check(streamlit, "run_command", {"command": f"cat {now}"})
    assert found.decision == "deny" and "hard link" not in found.why, found.why


def test_a_gate_that_never_saw_the_secret_does_not_know_it_and_an_ordinary_file_is_read(streamlit):
    """The memory is the run's: a file with no secret past stays an ordinary file (the test above fails
    closed only because the run saw the secret first)."""
    os.rename(streamlit / ".env.local", streamlit / "notes.txt")
    assert gate().check(streamlit, "read_file", {"path": "notes.txt"}).decision == "allow"
    checking = gate()
    moved(streamlit, checking, "memo.md", "old-memo.md")
    assert checking.check(streamlit, "read_file", {"path": "old-memo.md"}).decision == "allow"


def test_a_new_file_that_takes_a_deleted_secrets_number_is_not_taken_for_it(streamlit):
    """A file system gives a deleted file's inode to the next new file: the identity remembered is the
    file's number with its size and last change, which a rename keeps and a new file does not."""
    checking = gate()
    checking.check(streamlit, "list_files", {"path": "."})
    number = os.stat(streamlit / ".env.local").st_ino
    (streamlit / ".env.local").unlink()
    for attempt in range(50):  # most file systems hand the number out again at once; tmpfs never does
        (streamlit / f"report-{attempt}.txt").write_text("the report\n")
        if os.stat(streamlit / f"report-{attempt}.txt").st_ino == number:
            break
    os.utime(streamlit / f"report-{attempt}.txt", ns=(1, 1))  # even with the same size, another change time
    assert checking.check(streamlit, "read_file", {"path": f"report-{attempt}.txt"}).decision == "allow"


def test_an_approved_move_of_a_folder_leaves_its_secret_out_of_every_later_call(streamlit):
    """The whole run: a person allows `mv .streamlit x` once; no later call reads what it held."""
    import course.sandbox.confinement
    if not course.sandbox.confinement.probe().available:
        pytest.skip(course.sandbox.confinement.probe().reason)
    from s06_world import Person

    calls = [("run_command", {"command": "mv .streamlit x"}), ("read_file", {"path": "x/secrets.toml"}),
             ("run_command", {"command": "cat x/secrets.toml"}), ("search_files", {"text": ENV_SECRET[:-1]}),
             ("run_command", {"command": "grep -c api x/secrets.toml"})]
    results, requests = play(streamlit, calls, person=Person(("allow once", ""), ("allow once", ""), ("allow once", "")))
    assert (streamlit / "x" / "secrets.toml").exists() and not results[0]["is_error"], results[0]
    assert results[1]["is_error"] and '"denied"' in results[1]["content"], results
    no_secret(requests)


def test_a_copy_a_person_approves_inside_the_confinement_gets_nothing_of_the_secret(streamlit):
    """A copy is a new file the gate does not know; inside the confinement the secret is masked, so a
    copy by its name or by a pattern cannot read it (the in-depth page says what this does not cover)."""
    import course.sandbox.confinement
    if not course.sandbox.confinement.probe().available:
        pytest.skip(course.sandbox.confinement.probe().reason)
    (streamlit / "backup").mkdir()
    finished = s06.run_command(streamlit, "cp .env* .env.local backup/ 2>&1; cat backup/* 2>&1; echo end",
                               hidden=gate().hidden(streamlit))
    assert ENV_SECRET not in finished and "end" in finished
    assert not any(ENV_SECRET in path.read_text() for path in (streamlit / "backup").iterdir() if path.is_file())


# ---------------------------------------------------------------- a private key by what it holds, whatever its name

KEYS = {  # the first bytes of each kind (course.sandbox.paths.PRIVATE_KEY gives the sources)
    "OpenSSH": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n",
    "PKCS#8": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n",
    "an RSA key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n",
    "an encrypted key": "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG\n",
    "after openssl's bag attributes": "Bag Attributes\n    localKeyID: 01 02\n-----BEGIN EC PRIVATE KEY-----\nMHcC\n",
    "PuTTY's": "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n",
    "GnuPG's": "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n",
    "age's, as age-keygen writes it": "# created: 2026-01-01T00:00:00Z\n# public key: age1ql3z7hjy54pw3hyww5ay\n"
                                      "AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGP\n",
}


@pytest.fixture
def renamed_key(world):
    (world / "backup").mkdir()
    return world


@pytest.mark.parametrize("kind", KEYS)
def test_a_private_key_under_any_name_reaches_no_tool(renamed_key, kind):
    (renamed_key / "backup" / "notes.txt").write_text(KEYS[kind] + f"{ENV_SECRET}\n-----END-----\n")
    results, requests = play(renamed_key, [("read_file", {"path": "backup/notes.txt"}),
                                           ("search_files", {"text": ENV_SECRET[:-1]}),
                                           ("run_command", {"command": "cat backup/notes.txt"})])
    assert results[0]["is_error"] and "holds a private key" in results[0]["content"], results[0]["content"]
    assert json.loads(results[1]["content"])["output"] == "(no matches)"
    assert results[2]["is_error"] and '"denied"' in results[2]["content"]
    assert (renamed_key / "backup" / "notes.txt").resolve() in gate().hidden(renamed_key)
    no_secret(requests)


def test_a_confined_command_cannot_read_a_private_key_by_another_name(renamed_key):
    import course.sandbox.confinement
    if not course.sandbox.confinement.probe().available:
        pytest.skip(course.sandbox.confinement.probe().reason)
    (renamed_key / "backup" / "k").write_text(KEYS["OpenSSH"] + f"{ENV_SECRET}\n")
    finished = s06.run_command(renamed_key, "cat backup/k 2>&1; echo end", hidden=gate().hidden(renamed_key))
    assert ENV_SECRET not in finished and "end" in finished


@pytest.mark.parametrize("content", [
    "-----BEGIN CERTIFICATE-----\nMIID\n",  # a certificate is public
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI user@host\n",  # and so is a public key
    "How to make a key: ssh-keygen writes a private key to ~/.ssh/id_ed25519.\n",
    "x" * 3 * course.sandbox.paths.KEY_SNIFF_BYTES + "\n-----BEGIN CERTIFICATE-----\n",  # a large file: read a MiB at a time
])
def test_a_file_that_holds_no_private_key_is_read(renamed_key, content):
    (renamed_key / "backup" / "notes.txt").write_text(content)
    assert gate().check(renamed_key, "read_file", {"path": "backup/notes.txt"}).decision == "allow"
    (renamed_key / "backup" / "notes.txt").write_text(content + KEYS["OpenSSH"])  # the same, a key appended
    assert gate().check(renamed_key, "read_file", {"path": "backup/notes.txt"}).decision == "deny"


CERTIFICATE_PEM = "-----BEGIN CERTIFICATE-----\n" + "MIIFazCCA1OgAwIBAgIRAIIQz7DSQONZRGPgu2OCiwAwDQYJKoZIhvcNAQELBQAw\n" * 30 \
    + "-----END CERTIFICATE-----\n"


@pytest.mark.parametrize("name", ["certs/fullchain.crt", "group_vars/web.yml"])
def test_a_key_that_follows_a_certificate_chain_is_hidden_and_the_chain_alone_is_read(renamed_key, name):
    """A server's .crt holding its chain, then its key (or a vars file with a key among its values): the key is past
    the first 4 KB, which is where a gate that reads only a file's first bytes stops."""
    chain = CERTIFICATE_PEM * 4  # three intermediates and the leaf: some 8 KB
    assert len(chain) > 4096
    path = renamed_key / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(chain)
    assert gate().check(renamed_key, "read_file", {"path": name}).decision == "allow"
    path.write_text(chain + KEYS["PKCS#8"] + f"{ENV_SECRET}\n-----END PRIVATE KEY-----\n")
    results, requests = play(renamed_key, [("read_file", {"path": name}),
                                           ("run_command", {"command": f"cat {name}"})])
    assert results[0]["is_error"] and "holds a private key" in results[0]["content"], results[0]["content"]
    assert results[1]["is_error"] and '"denied"' in results[1]["content"]
    assert path.resolve() in gate().hidden(renamed_key)
    no_secret(requests)


def test_a_key_written_over_an_ordinary_file_is_hidden_from_the_next_check_on(renamed_key):
    """What a gate remembers of a file it read is keyed by its size and change times: a rewrite is read again."""
    notes = renamed_key / "backup" / "notes.txt"
    notes.write_text("ordinary\n")
    assert gate().check(renamed_key, "read_file", {"path": "backup/notes.txt"}).decision == "allow"
    notes.write_text(KEYS["PKCS#8"])
    assert gate().check(renamed_key, "read_file", {"path": "backup/notes.txt"}).decision == "deny"


# ---------------------------------------------------------------- secrets by the names other tools give them

# Each where its tool keeps a credential (course.sandbox.paths.SECRETS gives the sources): Docker Compose's env_file,
# curl's and git's netrc on Windows, Wrangler's, Azure Functions', a kubeconfig outside .kube, AWS's shared
# credentials file outside .aws, SOPS's age keys, Solana's keypair; and an editor's copy of one of them.
OTHER_TOOLS_SECRETS = ["deploy/prod.env", "compose/app.env", "_netrc", "home/_netrc", ".dev.vars",
                       "worker/.dev.vars.staging", "local.settings.json", "functions/api/local.settings.json",
                       "kubeconfig", "clusters/prod.kubeconfig", "credentials", "backup/aws/credentials",
                       ".config/sops/age/keys.txt", ".config/solana/id.json", "_netrc.bak", "local.settings.json~",
                       # agents', clouds', registries' and browsers' logins, each where its tool keeps it
                       ".claude/.credentials.json", ".claude.json", ".gemini/oauth_creds.json",
                       ".config/github-copilot/apps.json", ".config/github-copilot/hosts.json",
                       ".config/hcloud/cli.toml", ".config/glab-cli/config.yml", ".mc/config.json", ".dbt/profiles.yml",
                       ".sbt/.credentials", ".ivy2/.credentials", ".bundle/config", ".passwd-s3fs", ".passwd-s3fs~",
                       ".snowflake/connections.toml", ".local/share/atuin/key", ".aliyun/config.json",
                       ".config/scw/config.yaml", ".nuget/NuGet/NuGet.Config", ".config/NuGet/NuGet.Config",
                       ".netlify/config.json", ".config/netlify/config.json", ".wrangler/config/default.toml",
                       ".config/.wrangler/config/default.toml", ".config/configstore/firebase-tools.json",
                       ".mozilla/firefox/ab12cd34.default-release/logins.json",
                       ".mozilla/firefox/ab12cd34.default-release/key4.db",
                       ".mozilla/firefox/ab12cd34.default-release/cookies.sqlite",
                       ".config/google-chrome/Default/Login Data", ".config/google-chrome/Profile 1/Cookies",
                       ".config/chromium/Default/Network/Cookies", "home/ana/.config/chromium/Default/Login Data",
                       # more browsers', mail's, chat's, password managers', command lines' and shells' stores
                       ".config/BraveSoftware/Brave-Browser/Default/Cookies",
                       ".config/BraveSoftware/Brave-Browser-Beta/Profile 2/Login Data",
                       ".thunderbird/x1y2.default/logins.json", ".thunderbird/x1y2.default/key4.db",
                       ".config/Slack/Cookies", ".config/Slack/Network/Cookies", ".config/Signal/config.json",
                       ".config/Signal/sql/db.sqlite", "vault.kdbx", "backup/Passwords.kdbx", "signing.p8", "keys/api.p8",
                       ".supabase/access-token", ".config/helm/repositories.yaml", ".helm/repository/repositories.yaml",
                       "terraform.tfstate.1700000000.backup", "infra/prod.tfstate.1700000000.backup",
                       ".sh_history", ".ash_history", ".histfile", ".local/share/fish/fish_history", ".histfile.bak",
                       ".fly/config.yml",
                       # OpenStack's, Stripe's, Poetry's, MySQL's and Cachix's logins, where each tool keeps them
                       "clouds.yaml", ".config/openstack/clouds.yaml", "deploy/clouds.yaml", ".config/stripe/config.toml",
                       ".config/pypoetry/auth.toml", ".mylogin.cnf", ".config/cachix/cachix.dhall"]


@pytest.mark.parametrize("path", OTHER_TOOLS_SECRETS)
def test_the_secrets_other_tools_keep_are_denied_to_every_tool(world_to_decide_on, path):
    for tool, arguments in [("read_file", {"path": path}), ("write_file", {"path": path, "content": "x"})]:
        found = gate().check(world_to_decide_on, tool, arguments)
        assert found.decision == "deny" and "the rule 'deny * " in found.why, (path, found.why)


@pytest.mark.parametrize("path", ["deploy/prod.env.example", "docs/credentials.md", "kubeconfig.md", "key.txt",
                                  "settings.json", "solana/notes.json", "netrc.md",
                                  # beside the logins above: a project's own files of the same tools
                                  ".claude/settings.json", ".gemini/settings.json", "profiles.yml", "config.json",
                                  ".mozilla/firefox/profiles.ini", ".config/google-chrome/Default/Bookmarks",
                                  ".bundle/notes.md", ".netlify/state.json", "docs/login-data.md",
                                  ".config/Slack/settings.json", ".thunderbird/profiles.ini", "kdbx.md", "p8.txt",
                                  "terraform.tfstate.md", "history.md", ".config/fish/config.md",
                                  "docs/secrets.md", "keytab.md", "secring.md", "wakatime.cfg.md", "vault_pass.md",
                                  # Poetry's own settings beside its auth.toml, and names only like the logins above
                                  ".config/pypoetry/config.toml", "clouds.yaml.md", "stripe.md", "mylogin.md",
                                  "cachix.md"])
def test_what_is_only_named_like_them_is_still_read(world, path):
    (world / path).parent.mkdir(parents=True, exist_ok=True)
    (world / path).write_text("notes\n")
    assert gate().check(world, "read_file", {"path": path}).decision == "allow", path


def test_an_age_key_in_a_file_of_any_name_is_hidden_by_what_it_holds(renamed_key):
    """key.txt is too common a name for a rule: the key's own prefix makes it a secret, wherever it lies."""
    (renamed_key / "key.txt").write_text(KEYS["age's, as age-keygen writes it"])
    found = gate().check(renamed_key, "read_file", {"path": "key.txt"})
    assert found.decision == "deny" and "holds a private key" in found.why, found.why
    (renamed_key / "key.txt").write_text("# public key: age1ql3z7hjy54pw3hyww5ay\n")  # a public key alone is no secret
    assert gate().check(renamed_key, "read_file", {"path": "key.txt"}).decision == "allow"



# ---------------------------------------------------------------- private keys in DER: binary, with no armour

def der(tag: int, content: bytes) -> bytes:
    """One DER element: its tag, its length (short or long form), its content."""
    length = len(content)
    encoded = bytes([length]) if length < 0x80 else bytes([0x80 | ((length.bit_length() + 7) // 8)]) + \
        length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes([tag]) + encoded + content


SEQUENCE, INTEGER, OCTET_STRING, OID = 0x30, 0x02, 0x04, 0x06
ED25519 = der(SEQUENCE, der(OID, bytes.fromhex("2b6570")))  # the algorithm 1.3.101.112
# Built by hand as RFC 5208, 8017, 5915 and 7292 lay them out (course.sandbox.paths names the sections): the key's bytes
# stand in for a real key, which the structure, not the numbers, gives away.
HAND_BUILT = {
    "PKCS#8": der(SEQUENCE, der(INTEGER, b"\x00") + ED25519 + der(OCTET_STRING, der(OCTET_STRING, bytes(32)))),
    "PKCS#1 RSA": der(SEQUENCE, der(INTEGER, b"\x00") + b"".join(der(INTEGER, b"\x01" * 64) for _ in range(8))),
    "SEC1 EC": der(SEQUENCE, der(INTEGER, b"\x01") + der(OCTET_STRING, bytes(32)) + der(0xA0, der(OID, b"\x2a\x86\x48"))),
    "PKCS#12": der(SEQUENCE, der(INTEGER, b"\x03") + der(SEQUENCE, der(OID, b"\x2a\x86\x48") + der(0xA0, bytes(300)))),
    "encrypted PKCS#8": der(SEQUENCE, der(SEQUENCE, der(OID, b"\x2a\x86\x48\x86\xf7\x0d\x01\x05\x0d") + der(SEQUENCE, b""))
                            + der(OCTET_STRING, bytes(200))),
}
CERTIFICATE = der(SEQUENCE, der(SEQUENCE, der(0xA0, der(INTEGER, b"\x02")) + der(INTEGER, b"\x01") + ED25519)
                  + ED25519 + der(0x03, b"\x00" + bytes(64)))


@pytest.fixture(scope="module")
def der_files(tmp_path_factory) -> dict[str, bytes]:
    """Private keys and a certificate in DER: made by openssl where it is installed, else built by hand."""
    import shutil
    import subprocess

    made = tmp_path_factory.mktemp("der")
    if not shutil.which("openssl"):
        return {**HAND_BUILT, "a certificate": CERTIFICATE}
    commands = {"PKCS#8": ["genpkey", "-algorithm", "ed25519", "-outform", "DER", "-out", "PKCS#8"],
                "SEC1 EC": ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-outform", "DER", "-out", "SEC1 EC"],
                "a certificate": ["req", "-x509", "-key", "PKCS#8", "-keyform", "DER", "-subj", "/CN=x", "-days", "1",
                                  "-outform", "DER", "-out", "a certificate"]}
    for command in commands.values():
        subprocess.run(["openssl", *command], cwd=made, check=True, capture_output=True, timeout=30)
    return {**HAND_BUILT, **{name: (made / name).read_bytes() for name in commands}}


@pytest.mark.parametrize("kind", [*HAND_BUILT])
def test_a_der_private_key_under_any_name_is_denied_to_commands_and_file_tools(world, der_files, kind):
    (world / "server.der").write_bytes(der_files[kind])
    results, requests = play(world, [("run_command", {"command": "cat -v server.der"}),
                                     ("read_file", {"path": "server.der"})])
    assert all(result["is_error"] and "holds a private key" in result["content"] for result in results), results
    assert (world / "server.der").resolve() in gate().hidden(world)  # and a command a person approves finds it hidden


@pytest.mark.parametrize("content", ["a certificate", "a text that starts with 0"])
def test_a_der_certificate_stays_readable(world, der_files, content):
    data = {"a certificate": der_files["a certificate"], "a text that starts with 0": b"0 items\n"}[content]
    (world / "cert.der").write_bytes(data)
    assert not course.sandbox.paths.holds_private_key(world / "cert.der")
    found = gate().check(world, "run_command", {"command": "cat -v cert.der"})
    assert found.decision == "allow" and "private key" not in found.why, found.why


def test_a_key_named_like_a_pkcs8_file_is_denied_whatever_it_holds(world):
    (world / "AuthKey.p8").write_text("MIGTAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHkwdwIBAQQg\n")  # base64, no armour
    found = gate().check(world, "read_file", {"path": "AuthKey.p8"})
    assert found.decision == "deny" and "a secret's name: *.p8" in found.why, found.why


# ---------------------------------------------------------------- git's own copy of a committed secret

COMMIT_MESSAGE = "add the local config (TOKEN-IN-A-COMMIT-MESSAGE-4d1e)"


@pytest.fixture(params=[".git", "store"], ids=["in .git", "in a separate git dir"])
def committed(world, request):
    """.env.local committed once (a common slip), then deleted from the work tree; the repository in .git, or in
    a folder of another name (`git init --separate-git-dir store`: git takes it for one by what it holds)."""
    import shutil
    import subprocess

    if not shutil.which("git"):
        pytest.skip("needs git")
    (world / ".env.local").write_text(f"API_KEY={ENV_SECRET}\n")
    alone = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    init = ["init", "-q"] if request.param == ".git" else ["init", "-q", "--separate-git-dir", "store"]
    for command in (init, ["add", "memo.md", ".env.local"],
                    ["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", COMMIT_MESSAGE]):
        subprocess.run(["git", *command], cwd=world, check=True, capture_output=True, env=alone, timeout=30)
    blob = subprocess.run(["git", "rev-parse", "HEAD:.env.local"], cwd=world, check=True, capture_output=True,
                          text=True, env=alone, timeout=30).stdout.strip()
    (world / ".env.local").unlink()
    return world, request.param, f"{request.param}/objects/{blob[:2]}/{blob[2:]}"


def test_a_committed_secret_is_not_read_from_gits_store_without_a_person(committed):
    world, store, blob = committed
    assert (world / blob).is_file()  # the secret, compressed with zlib, byte for byte
    calls = [("run_command", {"command": f"cat -v {store}/index"}), ("run_command", {"command": f"cat -v {blob}"}),
             ("read_file", {"path": f"{store}/COMMIT_EDITMSG"})]  # three refusals in a row end a run: no more
    results, requests = play(world, calls)
    for result in results:
        message = json.loads(result["content"])["message"]
        assert result["is_error"] and "git's own store" in message and "git's own commands" in message, message
    assert "TOKEN-IN-A-COMMIT-MESSAGE" not in json.dumps(requests)
    no_secret(requests)
    for tool, arguments in [("run_command", {"command": f"head -c 4000 {store}/COMMIT_EDITMSG"}),
                            ("run_command", {"command": f"ls {store}/objects"}), ("read_file", {"path": blob})]:
        found = gate().check(world, tool, arguments)
        assert found.decision == "deny" and "git's own store" in found.why, found.why


def test_search_does_not_look_into_gits_store(committed):
    world, store, _ = committed
    results, _ = play(world, [("search_files", {"text": "TOKEN-IN-A-COMMIT-MESSAGE"}), ("search_files", {"text": "ref: refs"})])
    assert [json.loads(result["content"])["output"] for result in results] == ["(no matches)", "(no matches)"]


def test_a_person_approves_gits_own_commands_and_they_still_work(committed):
    """What git keeps is read through git, which a person approves; the store is not hidden from git itself."""
    import course.sandbox.confinement
    if not course.sandbox.confinement.probe().available:
        pytest.skip(course.sandbox.confinement.probe().reason)
    world, _, _ = committed
    finished = s06.run_command(world, "git log --format=%s; echo end", hidden=gate().hidden(world))
    assert "TOKEN-IN-A-COMMIT-MESSAGE" in finished and "end" in finished, finished


@pytest.mark.parametrize("command, folder", [("mv .config cfg", ".config"), ("cp -r .streamlit backup", ".streamlit"),
                                             ("tar czf all.tgz .", "."), ("mv ./.config/ cfg", "./.config/")])
def test_a_person_asked_to_move_a_folder_is_told_it_holds_secrets(streamlit, command, folder):
    """A later run knows a secret only by its name: a person who approves `mv .config cfg` is told that the
    folder holds files the rules hide, which the move takes out from under their names."""
    (streamlit / ".config" / "gh").mkdir(parents=True)
    (streamlit / ".config" / "gh" / "hosts.yml").write_text(f"oauth_token: {ENV_SECRET}\n")
    person = Person(("deny", "no"))
    found = gate(person).check(streamlit, "run_command", {"command": command})
    assert found.decision == "deny" and len(person.asked) == 1
    why = person.asked[0][2]
    assert f"{folder!r} holds files the rules hide" in why and "a later run reads them" in why, why
    plain = Person(("deny", "no"))  # the control: a folder holding no secret is not said to
    gate(plain).check(streamlit, "run_command", {"command": "mv docs manuals"})
    assert "holds files the rules hide" not in plain.asked[0][2]


def test_a_path_is_beneath_a_hidden_entry_exactly_when_it_is_one_or_lies_under_one(tmp_path):
    """search_files skips what lies beneath a hidden entry by a look-up per folder above it (thousands of hard
    links are as many hidden files): the same answer as asking each entry in turn."""
    import itertools
    from pathlib import Path
    names = [Path(*parts) for length in (1, 2, 3) for parts in itertools.product("ab", repeat=length)]
    entries = frozenset(tmp_path / name for name in (Path("a"), Path("b/a"), Path("b/b/b")))
    for name in names:
        path = tmp_path / name
        assert course.sandbox.paths.beneath_any(path, entries) == any(path.is_relative_to(entry) for entry in entries), name
