"""A key's body without its BEGIN line reaches the model through no tool, and no terminal control leaves raw.

A command can print a key's base64 without the line that names it (``grep -v BEGIN``, ``tail``, a read from
an offset inside the block), and a Kubernetes Secret holds a whole PEM file as one base64 value: each is cut
out on its way back to the model (``course.private_keys_hidden``), while prose, code and a certificate pass as
they are. And the JSON s06 writes, the ``--json`` line and the runs and audit logs, carries a model's C1
controls and bidirectional overrides as escapes, not as the characters a terminal obeys.
"""

from __future__ import annotations

import base64
import json
import random
import unicodedata
from pathlib import Path

import pytest

import course
import course.running.cli
import course.sandbox.confinement
import course.sandbox.paths
from course.runtime.runlog import json_line
from helpers import ROOT, load_stage, scripted_client
from s06_world import play, world  # noqa: F401

pytestmark = pytest.mark.stage("s06")


def body(seed: int, size: int, width: int) -> list[str]:
    """A key's body as its armour writes it: base64 of random bytes, ``width`` characters a line."""
    encoded = base64.b64encode(random.Random(seed).randbytes(size)).decode()
    return [encoded[at:at + width] for at in range(0, len(encoded), width)]


PKCS8 = body(1, 1218, 64)        # an RSA key's PKCS#8 body, as OpenSSL writes it
OPENSSH = body(2, 399, 70)       # an Ed25519 key's, as ssh-keygen writes it
CERTIFICATE = body(3, 900, 64)
PEM = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(PKCS8) + "\n-----END PRIVATE KEY-----\n"
OPENSSH_PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(OPENSSH) + "\n-----END OPENSSH PRIVATE KEY-----\n"
CERTIFICATE_PEM = "-----BEGIN CERTIFICATE-----\n" + "\n".join(CERTIFICATE) + "\n-----END CERTIFICATE-----\n"


def assert_hidden(shown: str, lines: list[str], *kept: str) -> None:
    leaked = [line for line in lines if len(line) > 8 and line[4:-4] in shown]
    assert not leaked, shown
    assert "private key was here" in shown, shown
    for text in kept:
        assert text in shown, shown


@pytest.mark.parametrize("text, lines", [
    ("\n".join(PKCS8) + "\n-----END PRIVATE KEY-----\n", PKCS8),                     # grep -v BEGIN
    ("\n".join(OPENSSH[-4:]) + "\n-----END OPENSSH PRIVATE KEY-----\n", OPENSSH),    # tail -n 5
    (PEM[PEM.index("\n") + 30:], PKCS8),                                             # a read from inside a line
    ("".join(f"  {line}\r\n" for line in PKCS8[3:]) + "  -----END PRIVATE KEY-----\r\n", PKCS8),  # YAML, CRLF
], ids=["grep -v BEGIN", "tail, OpenSSH", "offset inside the block", "indented, CRLF"])
def test_a_body_that_ends_at_its_end_line_is_hidden_however_it_begins(text, lines):
    assert_hidden(course.private_keys_hidden(f"deploy settings\n{text}done\n"), lines, "deploy settings\n", "done")


def test_a_body_after_its_begin_line_is_hidden_though_its_end_is_cut_off():
    shown = course.private_keys_hidden("head -n 4:\n" + "\n".join(PEM.splitlines()[:4]) + "\n")
    assert_hidden(shown, PKCS8, "head -n 4:\n")


@pytest.mark.parametrize("count", [2, 3])
def test_full_lines_of_base64_with_no_armour_line_are_hidden(count):
    # grep -i -A3 private key.pem | tail -n 3: three lines of the body, nothing around them
    for lines in (PKCS8[5:5 + count], OPENSSH[1:1 + count]):
        assert_hidden(course.private_keys_hidden("exit code 0\n" + "\n".join(lines) + "\n"), lines, "exit code 0\n")


def test_gnupg_s_body_and_checksum_without_its_begin_line_are_hidden():
    lines = body(4, 700, 64)
    text = "\n".join(lines) + "\n=njUN\n-----END PGP PRIVATE KEY BLOCK-----\n"
    shown = course.private_keys_hidden(text)
    assert_hidden(shown, lines)
    assert "njUN" not in shown


def test_a_pem_file_written_as_one_base64_value_is_hidden_when_it_holds_a_private_key():
    key, certificate = (base64.b64encode(pem.encode()).decode() for pem in (PEM, CERTIFICATE_PEM))
    assert key.startswith("LS0tLS1CRUdJTi")
    secret = ("apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n"
              f"  tls.crt: {certificate}\n  tls.key: {key}\n")
    shown = course.private_keys_hidden(secret)
    assert key[20:80] not in shown and f"tls.crt: {certificate}\n" in shown and "tls.key: [a private key" in shown
    kubeconfig = f"users:\n- name: admin\n  user:\n    client-key-data: {key[:len(key) // 2]}\n"  # cut short
    assert key[20:80] not in course.private_keys_hidden(kubeconfig)


def test_prose_code_hashes_and_certificates_pass_unchanged():
    hashes = "".join(f"{random.Random(seed).randbytes(32).hex()}\n" for seed in range(6))
    token = base64.b64encode(random.Random(5).randbytes(48)).decode()  # one full line is no key
    texts = [CERTIFICATE_PEM, CERTIFICATE_PEM[CERTIFICATE_PEM.index("\n") + 100:],  # a read inside a certificate
             hashes, hashes.upper(), f"TOKEN={token}\n{token}\n",
             "The key's body is base64, 64 characters a line (RFC 7468).\nDone\n"]
    texts += [(ROOT / name).read_text(encoding="utf-8") for name in
              ("course/sandbox/redaction.py", "course/runtime/runlog.py", "s06/agent.py", "docs/s06.md")
              if (ROOT / name).exists()]
    certifi = pytest.importorskip("certifi")  # some 140 certificates, one after the other
    texts.append(Path(certifi.where()).read_text(encoding="utf-8"))
    for text in texts:
        assert course.private_keys_hidden(text) == text, text[:200]


def test_a_key_far_down_a_file_reaches_the_model_through_no_command(world):
    # A command reads a file whole, so the gate looks for a key past the MiB a file tool reads: one line of the
    # body printed alone is no key to the output's second look, and must never be reached at all.
    if not course.sandbox.confinement.probe().available:
        pytest.skip("commands run only confined")
    (world / "tls").mkdir()
    chain = CERTIFICATE_PEM * (3_300_000 // len(CERTIFICATE_PEM))
    (world / "tls" / "site.crt").write_text(chain + PEM, encoding="utf-8")
    sent = ""
    for commands in (["grep -v BEGIN tls/site.crt | tail -n 5", "tail -n 3 tls/site.crt | head -n 1"],
                     ["grep -A3 PRIVATE tls/site.crt | tail -n 3", "cp tls/site.crt c.txt && tail -n 2 c.txt | head -n 1"]):
        _, requests = play(world, [("run_command", {"command": command}) for command in commands])
        sent += json.dumps(requests)
    assert not [line for line in PKCS8 if line[4:-4] in sent]


def test_a_key_is_found_wherever_it_lies_in_a_file_a_command_reads(tmp_path):
    certificate = CERTIFICATE_PEM.encode()
    for before in (0, course.sandbox.paths.KEY_SNIFF_BYTES - 20, 5 * course.sandbox.paths.KEY_SNIFF_BYTES + 7):
        file = tmp_path / f"at-{before}.crt"
        file.write_bytes((certificate * (before // len(certificate) + 1))[:before] + PEM.encode())
        assert course.sandbox.paths.holds_private_key(file), before  # the BEGIN line split between two reads, too
    plain = tmp_path / "chain.crt"
    plain.write_bytes(certificate * (3 * course.sandbox.paths.KEY_SNIFF_BYTES // len(certificate)))
    assert not course.sandbox.paths.holds_private_key(plain)


def test_a_kubernetes_secret_s_key_reaches_the_model_through_no_tool(world):
    (world / "k8s").mkdir()
    (world / "k8s" / "secret.yaml").write_text(f"data:\n  tls.key: {base64.b64encode(PEM.encode()).decode()}\n",
                                               encoding="utf-8")
    results, requests = play(world, [("read_file", {"path": "k8s/secret.yaml"})])
    content = json.loads(results[0]["content"])  # the gate may refuse the file; if it lets it be read, the key is cut out
    assert content.get("error") == "denied" if results[0]["is_error"] else "private key was here" in content["output"], content
    assert base64.b64encode(PEM.encode()).decode()[20:80] not in json.dumps(requests)


# ---------------------------------------------------------------- JSON a terminal shows inert

UNSEEN = "\u009b2J\u0085\u202e\u2066\u2028\u200b\ufeff\U000e0041\ue000\x7f"  # C1 CSI, NEL, bidi, LS, tags...
ANSWER = "Done.\u009b2J\u009bH\u009b32mAll 3 files tidied, nothing deleted.\u009b0m \u202eexe.txt 整理しました"


def assert_inert(line: str) -> None:
    raw = [hex(ord(character)) for character in line if character == "\x7f" or (not character.isascii() and
           unicodedata.category(character) in ("Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"))]
    assert not raw, (raw, line)
    for character in "\u009b\u202e\u2066":
        assert character.encode() not in line.encode("utf-8", "surrogatepass"), line


def test_a_json_line_escapes_what_a_terminal_obeys_and_gives_the_same_value_back():
    value = {"answer": ANSWER + UNSEEN, "path": "p\u009b2Jq.txt", "lone": "\udc80", UNSEEN: [UNSEEN]}
    line = json_line(value)
    assert_inert(line)
    assert json.loads(line) == value
    assert "整理しました" in line and "\n" not in line  # readable where it is harmless, and one line


def test_the_json_summary_and_both_logs_carry_a_model_s_controls_as_escapes(tmp_path, monkeypatch, capsys):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.md").write_text("hello\n", encoding="utf-8")
    client, _ = scripted_client(
        [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "notes\u009b2J\u202e.md"}}],
        [{"type": "text", "text": ANSWER}])
    monkeypatch.setattr(course.running.cli, "client_for", lambda args: client)
    load_stage("s06").main(["Tidy\u202e up", "--model", "scripted", "--workspace", str(workspace), "--json"])
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    assert_inert(printed)
    assert json.loads(printed)["answer"] == ANSWER
    runs, audit = (tmp_path / "runs.jsonl").read_text(encoding="utf-8"), (tmp_path / "audit.jsonl").read_text(encoding="utf-8")
    for log in (runs, audit):
        assert log.strip(), "nothing was logged"
        assert_inert(log)
    assert json.loads(runs.splitlines()[-1])["task"] == "Tidy\u202e up"
    assert any(json.loads(line)["arguments"] == {"path": "notes\u009b2J\u202e.md"} for line in audit.splitlines())
