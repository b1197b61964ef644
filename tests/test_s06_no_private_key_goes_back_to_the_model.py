"""No private key reaches the model, wherever in a file it lies and whichever tool prints it.

The gate hides a file whose first bytes hold a private key. A key further down (a certificate chain with its
key appended) passes that look, and a command may print one however it finds it; so every output is read
once more on its way back to the model (``course.private_keys_hidden``), and each key in it is cut out,
from its first line to its last, or to the output's end where the output was cut.
"""

from __future__ import annotations

import json

import pytest

import course
import course.sandbox.confinement
import course.sandbox.paths
from s06_world import play, world  # noqa: F401

pytestmark = pytest.mark.stage("s06")

SECRET = "KEYBODY-5e1d"
KEYS = {
    "PKCS#8": f"-----BEGIN PRIVATE KEY-----\nMIIE{SECRET}\n-----END PRIVATE KEY-----\n",
    "OpenSSH": f"-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl{SECRET}\n-----END OPENSSH PRIVATE KEY-----\n",
    "RSA, encrypted": (f"-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\n{SECRET}\n"
                       "-----END RSA PRIVATE KEY-----\n"),
    "GnuPG": f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQ{SECRET}\n-----END PGP PRIVATE KEY BLOCK-----\n",
    "PuTTY": (f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\n{SECRET}\n"
              "Private-MAC: 0123abcd\n"),
    "age": f"# created: 2026-12-01\nAGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQ{SECRET.replace('-', '')}\n",
}
CHAIN = "-----BEGIN CERTIFICATE-----\n" + "MIID" * 2000 + "\n-----END CERTIFICATE-----\n"  # past the gate's first look


@pytest.mark.parametrize("kind", KEYS)
def test_a_key_is_cut_out_of_any_text_and_what_is_around_it_stays(kind):
    shown = course.private_keys_hidden(f"before\n{KEYS[kind]}after\n")
    assert SECRET not in shown and SECRET.replace("-", "") not in shown, shown
    assert shown.startswith("before\n") and shown.endswith("after\n") and "private key was here" in shown


def test_a_key_cut_short_by_the_output_is_cut_out_to_its_end():
    shown = course.private_keys_hidden("log line\n" + KEYS["PKCS#8"][:40])
    assert shown.startswith("log line\n") and "MIIE" not in shown


def test_a_certificate_a_public_key_and_prose_are_left_as_they_are():
    for text in (CHAIN, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI user@host\n",
                 "ssh-keygen writes a PRIVATE KEY to ~/.ssh/id_ed25519; keep it there.\n"):
        assert course.private_keys_hidden(text) == text


@pytest.mark.parametrize("kind", ["PKCS#8", "OpenSSH", "age"])
def test_a_key_appended_to_a_certificate_chain_reaches_the_model_through_no_tool(world, kind):
    (world / "tls").mkdir()
    (world / "tls" / "site.crt").write_text(CHAIN + KEYS[kind], encoding="utf-8")
    calls = [("read_file", {"path": "tls/site.crt", "offset": len(CHAIN) - 10})]
    if course.sandbox.confinement.probe().available:
        calls.append(("run_command", {"command": "tail -n 3 tls/site.crt"}))
    results, requests = play(world, calls)
    for result in results:  # the gate refuses the file (a key in its first MiB), or the key is cut out
        content = json.loads(result["content"])
        assert content.get("error") == "denied" if result["is_error"] else "private key was here" in content["output"], content
    sent = json.dumps([request for request in requests], ensure_ascii=False)
    assert SECRET not in sent and SECRET.replace("-", "") not in sent


@pytest.mark.parametrize("folder", ["node_modules/pkg", ".venv/lib/python3.12/site-packages/pkg", "src/__pycache__"])
def test_search_answers_nothing_about_a_key_where_the_walk_does_not_look(world, folder):
    """A yes or no about a key's text, asked once a character, spells it out: search skips a file holding a key
    in the trees the gate's walk does not look into (node_modules/, site-packages/), as read_file refuses it."""
    (world / folder).mkdir(parents=True)
    (world / folder / "fixture.txt").write_text(KEYS["PKCS#8"], encoding="utf-8")
    (world / folder / "plain.txt").write_text(f"MIIE{SECRET} is a word here too\n", encoding="utf-8")  # the control
    results, _ = play(world, [("search_files", {"text": f"MIIE{SECRET[:4]}"})])
    found = json.loads(results[0]["content"])["output"]
    assert f"{folder}/plain.txt" in found and "fixture.txt" not in found, found


# The same keys as a file may hold them without PEM's armour, or with it written another way.
OTHER_FORMS = {
    "OpenSSH's body on one line": f"deploy_key: b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB {SECRET}\n".encode(),
    "RFC 4716": f"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: x\nP2/56w{SECRET}\n"
                "---- END SSH2 ENCRYPTED PRIVATE KEY ----\n".encode(),
    "a JSON Web Key": ('{"kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", '
                       f'"d": "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI", "kid": "{SECRET}"}}\n').encode(),
    "WireGuard's": f"[Interface]\nPrivateKey = yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=\n# {SECRET}\n".encode(),
    "UTF-16 without a byte order mark": KEYS["OpenSSH"].encode("utf-16-le"),
    "UTF-16 with one": KEYS["PKCS#8"].encode("utf-16"),
    "URL-encoded": f"key=-----BEGIN%20PRIVATE%20KEY-----%0AMIIE{SECRET}\n".encode(),
    "in hex": ("-----BEGIN PRIVATE KEY-----\n".encode().hex() + f" {SECRET}\n").encode(),
}
# What looks like them and is no secret: a public JWK, WireGuard's public key, prose.
PUBLIC_FORMS = [b'{"kty": "EC", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"}\n',
                b"[Peer]\nPublicKey = yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=\n",
                "Keep your private key safe.\n".encode("utf-16"), b"the key is openssh-key-v1 in PROTOCOL.key\n"]


@pytest.mark.parametrize("form", OTHER_FORMS)
def test_a_key_in_another_form_reaches_the_model_through_no_tool(world, form):
    (world / "notes").mkdir()
    (world / "notes" / "deploy.yml").write_bytes(OTHER_FORMS[form])
    calls = [("read_file", {"path": "notes/deploy.yml"}), ("search_files", {"text": "E"})]
    if course.sandbox.confinement.probe().available:
        calls.append(("run_command", {"command": "cat notes/deploy.yml"}))
    results, requests = play(world, calls)
    assert results[0]["is_error"] and "holds a private key" in results[0]["content"], results[0]["content"]
    assert "deploy.yml" not in json.loads(results[1]["content"])["output"]
    sent = json.dumps(requests)
    assert SECRET not in sent and json.dumps(SECRET.encode("utf-16-le").decode("latin-1"))[1:-1] not in sent


@pytest.mark.parametrize("text", PUBLIC_FORMS)
def test_what_only_looks_like_a_key_is_read(tmp_path, text):
    (tmp_path / "public.txt").write_bytes(text)
    assert not course.sandbox.paths.holds_private_key(tmp_path / "public.txt")
