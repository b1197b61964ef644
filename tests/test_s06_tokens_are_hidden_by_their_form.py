"""A token reaches the model under no name: it is found by its form, whatever file or command holds it.

The deny rules hide files by their names; a key pasted into notes.txt has none of them. So every tool's output is
read once more on its way back (``course.secrets_hidden``): each family of TOKEN_FAMILIES (a prefix or a form its
issuer documents) and each random-looking value assigned to a name that says it is secret is cut out; the name
stays, so the model still knows that something was configured there. Ordinary settings and prose pass as they are.
"""

from __future__ import annotations

import json

import pytest

import course
import course.sandbox.redaction
from s06_world import play, world  # noqa: F401

pytestmark = pytest.mark.stage("s06")

# One made-up token per family, each in the form its issuer gives it (none of them is a real credential).
FAMILIES = {
    "an AWS access key id": "AKIA" + "Q7ZB3XK2M9LPW4TR",
    "a GitHub token": "ghp_" + "Zx8Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8Lz0Xc2V",
    "a fine-grained GitHub token": "github_pat_" + "11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789",
    "a Slack token": "xoxb-" + "2048-4096-Qw3Er5Ty7Ui9",
    "an Anthropic key": "sk-ant-" + "api03-Qw3Er5Ty7Ui9Op1As2Df4Gh6",
    "an OpenAI key": "sk-proj-" + "Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8",
    "a JSON Web Token": "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiI0MiJ9." + "Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8Lz0Xc",
    "a Stripe key": "sk_live_" + "51Hq8Zx3Er5Ty7Ui9Op1As2Df4",
    "a GitLab token": "glpat-" + "Zx8Qw3Er5Ty7Ui9Op1As",
    "a Hugging Face token": "hf_" + "Zx8Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8L",
    "an npm token": "npm_" + "Zx8Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8Lz0Xc2",
    "a Google API key": "AIza" + "SyZx8Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8Lz0",
    "a SendGrid key": "SG." + "Zx8Qw3Er5Ty7Ui9Op1As2D" + "." + "Zx8Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8Lz0Xc2Vb4Nm6Q",
    "a bearer token": "Bearer " + "7hG9kLmN2pQ4rS6tU8vW0xY2zA4bC6dE",
    "a .netrc password": "login bob password " + "9f8e7d6c5b4a3210",
    "a key without its armour": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC" + "7Zx8Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8Lz0Xc",
}
ASSIGNED = {  # a value with no prefix of its own, found by the name it is assigned to
    "dotenv": ("AWS_SECRET_ACCESS_KEY=", "wJa1rXUtnFEMIK7MDENGbPxRfiCY9xq2"),
    "YAML": ("  api_token: ", "9fX2kQ7vLp3ZrT8mWq"),
    "JSON": ('"client_secret": "', "Hk29dQpX0vLz7RtY3w"),
    "shell": ("export DB_PASSWORD='", "p4Zq9LmX2vRt8Kw1"),
}


@pytest.mark.parametrize("family", FAMILIES)
def test_a_token_is_cut_out_by_its_form_and_the_text_around_it_stays(family):
    token = FAMILIES[family]
    shown = course.secrets_hidden(f"notes from Tuesday\npasted {token} here\nthanks\n")
    assert token not in shown
    assert shown.startswith("notes from Tuesday\n") and shown.endswith("thanks\n")
    assert course.sandbox.redaction.TOKEN_INSTEAD in shown


@pytest.mark.parametrize("form", ASSIGNED)
def test_a_random_value_assigned_to_a_secret_name_is_cut_and_its_name_kept(form):
    name, value = ASSIGNED[form]
    shown = course.secrets_hidden(f"{name}{value}\n")
    assert value not in shown and shown.startswith(name)


@pytest.mark.parametrize("text", [
    "max_tokens = 4096\n", "PASSWORD_MIN_LENGTH=12\n", "sort(key=lambda row: row[1])\n",
    "DB_PASSWORD_FILE=/run/secrets/database\n", "token_url: https://example.com/oauth/token\n",
    "The secret to a good stew is time.\n", "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n",
    "use_keyring = true\n", "See the task-management-overview page.\n",
])
def test_settings_and_prose_that_mention_keys_pass_as_they_are(text):
    assert course.secrets_hidden(text) == text


def test_private_keys_are_still_cut_by_the_same_pass():
    key = "-----BEGIN PRIVATE KEY-----\nMIIEkeybody\n-----END PRIVATE KEY-----\n"
    assert "MIIEkeybody" not in course.secrets_hidden("cert chain\n" + key)


def test_a_token_in_a_file_of_an_ordinary_name_reaches_the_model_through_no_read(world):
    """The loop's own behaviour: the file is read (no rule names it), and what goes back to the model has no token."""
    tokens = list(FAMILIES.values()) + [value for _, value in ASSIGNED.values()]
    (world / "handover.txt").write_text("".join(f"{name}{value}\n" for name, value in ASSIGNED.values())
                                        + "\n".join(FAMILIES.values()) + "\n", encoding="utf-8")
    results, requests = play(world, [("read_file", {"path": "handover.txt"})])
    assert not results[0]["is_error"], results[0]
    assert "AWS_SECRET_ACCESS_KEY=" in json.loads(results[0]["content"])["output"]
    sent = json.dumps(requests, ensure_ascii=False)
    assert not [token for token in tokens if token in sent]


def test_a_read_that_starts_inside_a_token_or_after_its_name_shows_no_rest_of_it(world):
    """An offset cuts the text the model sees; cutting before hiding would leave a token without the form that
    names it (its prefix, or the secret name before its value)."""
    lines = [f"{name}{value}" for name, value in ASSIGNED.values()] + list(FAMILIES.values())
    text = "\n".join(lines) + "\n"
    (world / "handover.txt").write_text(text, encoding="utf-8")
    secrets = [value for _, value in ASSIGNED.values()] + list(FAMILIES.values())
    # A value assigned to a secret name is read from its first character (its name is cut off); a token from
    # its second (its prefix is cut). One read each: the run's turns are limited.
    offsets = sorted({text.index(value) for _, value in ASSIGNED.values()}
                     | {text.index(token) + 1 for token in FAMILIES.values()})
    results, requests = play(world, [("read_file", {"path": "handover.txt", "offset": offset}) for offset in offsets])
    assert not [result for result in results if result["is_error"]], results
    sent = json.dumps(requests, ensure_ascii=False)
    assert not [secret for secret in secrets if secret[3:] in sent]
