"""What a tool hands back to the model, with every private key in it cut out.

The s06 gate hides a file that holds a private key, judged by its first bytes (``course.sandbox.paths.PRIVATE_KEY``).
A key further down a file (a certificate chain with its key appended), or one a command prints, would still
reach the history, and with it every later request to the API. So each output is read once more on its way
back: every key, from its first line to its last (or to the output's end, where the output was cut), becomes
one line that says what was there. The armours are those ``course.sandbox.paths`` knows: PEM's (RFC 7468) and
OpenSSH's, RFC 4716's, GnuPG's private key block (RFC 4880), PuTTY's .ppk (from its first line to its
Private-MAC) and age's secret keys (https://age-encryption.org/v1); and, with no armour, OpenSSH's body (by
the base64 of its magic), WireGuard's PrivateKey and a JSON Web Key's "d".

A key's body travels without its BEGIN line too: ``grep -v BEGIN key.pem``, ``tail -n 5``, a read from an
offset inside the block. So the lines of base64 are looked at on their own (``_bodies_hidden``), and so is a
PEM file written as one base64 value, as a Kubernetes Secret or a kubeconfig holds its key (``_encoded_hidden``).
This is a net under the gate, not a wall: a command can always reshape what it prints (``rev``, ``base64``, one
line at a time), and no reading of the output can tell such bytes from any others. What keeps a key's file out of
reach is the gate.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

KEY = re.compile(r"-----BEGIN (?P<armour>[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END (?P=armour)-----|\Z)"
                 r"|---- BEGIN (?P<ssh2>[A-Z0-9 ]*PRIVATE KEY) ----.*?(?:---- END (?P=ssh2) ----|\Z)"  # RFC 4716's
                 r"|PuTTY-User-Key-File-\d+:.*?(?:Private-MAC:[^\n]*|\Z)"
                 r"|AGE-SECRET-KEY-1[0-9A-Za-z]{20,}"
                 # OpenSSH's body with no armour: the base64 of its magic, "openssh-key-v1", then the rest of the run
                 r"|b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/]{20}[A-Za-z0-9+/=]*(?:\r?\n[ \t]*[A-Za-z0-9+/]{70}(?=\r?\n))*"
                 r"|(?:(?<=PrivateKey = )|(?<=PrivateKey=))[A-Za-z0-9+/]{43}=", re.S)  # WireGuard's, after its name
MARKERS = ("PRIVATE KEY", "PuTTY-User-Key-File-", "AGE-SECRET-KEY-1", "b3BlbnNzaC1rZXktdjE", "PrivateKey")
# A JSON Web Key's private member "d" (RFC 7518 section 6.2.2.1), in an object with a "kty": its value is cut.
JWK_PRIVATE = re.compile(r'("d"\s*:\s*)"[A-Za-z0-9_-]{20,}"')
SHOWN_INSTEAD = "[a private key was here: not shown, the rules keep keys out of the history]"

# A line of an armoured body: base64 wrapped at 64 characters by PEM (RFC 7468 section 2,
# https://www.rfc-editor.org/rfc/rfc7468#section-2), GnuPG (RFC 4880 section 6.3) and PuTTY, at 70 by OpenSSH
# (sshbuf_dtob64 in https://github.com/openssh/openssh-portable/blob/master/sshbuf-misc.c), at 76 by MIME
# encoders; the last line of a body is shorter and may end in "=" (RFC 7468 section 3).
FULL_WIDTHS = (64, 70, 76)
BASE64 = re.compile(r"[A-Za-z0-9+/]+")
BODY_PIECE = re.compile(r"[A-Za-z0-9+/]{1,76}={0,2}|=[A-Za-z0-9+/]{4}")  # a last line, a partial first one, GnuPG's checksum
ANY_FULL_LINE = re.compile(r"^[ \t]*(?:[A-Za-z0-9+/]{64}|[A-Za-z0-9+/]{70}|[A-Za-z0-9+/]{76})[ \t]*\r?$", re.M)
PRIVATE_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
OTHER_ARMOUR = re.compile(r"-----(?P<edge>BEGIN|END) (?P<label>[A-Z0-9 ]+)-----")
# With no armour line at all, this many full lines in a row are taken for a key's body. Prose and code have no
# line of exactly 64, 70 or 76 base64 characters with no space or punctuation (a SHA-256 in hex is 64 such
# characters, but it has no capital letter, which every full line must have, and a small one). The base64 of a
# public certificate, shown without its BEGIN CERTIFICATE line and its END line, is hidden too: nothing in those
# lines tells it from a key's, and hiding a certificate costs the model nothing it needs.
RUN_WITHOUT_ARMOUR = 2
# A PEM file written as one base64 value starts with the base64 of "-----BEGIN".
ENCODED_PEM = re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]*={0,2}")


def private_keys_hidden(text: str) -> str:
    """``text`` with each private key in it replaced by SHOWN_INSTEAD."""
    if any(marker in text for marker in MARKERS):
        text = KEY.sub(SHOWN_INSTEAD, text)
    if '"kty"' in text:
        text = JWK_PRIVATE.sub(lambda found: f'{found[1]}"{SHOWN_INSTEAD}"', text)
    if "LS0tLS1CRUdJTi" in text:
        text = ENCODED_PEM.sub(_encoded_hidden, text)
    if "PRIVATE KEY" in text or ANY_FULL_LINE.search(text):
        text = _bodies_hidden(text)
    return text


def _encoded_hidden(found: re.Match) -> str:
    value = found[0]
    whole = value[:len(value) - len(value) % 4]  # a value cut short still decodes as far as it goes
    try:
        decoded = base64.b64decode(whole, validate=True).decode("ascii", "replace")
    except (binascii.Error, ValueError):
        return value
    return SHOWN_INSTEAD if private_keys_hidden(decoded) != decoded else value


def _kind(line: str) -> str:
    """"full", "piece" (a short base64 line), "gap", "end" (a private key's END line), "begin"/"close" (another
    armour's BEGIN or END line), or "" (anything else)."""
    bare = line.strip(" \t\r")
    if bare == "--":
        return "gap"  # what grep prints between the groups of lines around its matches
    if PRIVATE_END.fullmatch(bare):
        return "end"
    armour = OTHER_ARMOUR.fullmatch(bare)
    if armour:
        return "begin" if armour["edge"] == "BEGIN" else "close"
    if len(bare) in FULL_WIDTHS and BASE64.fullmatch(bare) and not bare.islower() and not bare.isupper():
        return "full"
    return "piece" if BODY_PIECE.fullmatch(bare) else ""


def _bodies_hidden(text: str) -> str:
    """Each run of base64 lines that ends at a private key's END line, and each run of RUN_WITHOUT_ARMOUR full
    lines or more outside another armour's block (a certificate's, a public key's), becomes SHOWN_INSTEAD."""
    lines = text.split("\n")  # not splitlines(): a form feed or U+2028 ends no line of a PEM file
    kinds = [_kind(line) for line in lines]
    hidden = [False] * len(lines)
    for at, kind in enumerate(kinds):
        if kind == "end":  # the key's body is every base64 line above it, however it was cut at the top
            start = at
            while start > 0 and kinds[start - 1] in ("full", "piece", "gap"):
                start -= 1
            hidden[start:at + 1] = [True] * (at + 1 - start)
    inside = False  # within another armour's block, whose body is no key's
    at = 0
    while at < len(lines):
        kind = kinds[at]
        inside = True if kind == "begin" else False if kind == "close" else inside
        if kind != "full" or inside or hidden[at]:
            at += 1
            continue
        end = at
        while end < len(lines) and kinds[end] == "full" and not hidden[end]:
            end += 1
        after = end
        while after < len(lines) and after - end < 2 and kinds[after] == "piece":
            after += 1  # the body's last line, and GnuPG's checksum
        if end - at >= RUN_WITHOUT_ARMOUR and not (after < len(lines) and kinds[after] == "close"):
            first = at - 1 if at > 0 and kinds[at - 1] == "piece" else at  # a read that began inside a line
            hidden[first:after] = [True] * (after - first)
        at = after
    if not any(hidden):
        return text
    shown = []
    for line, hide in zip(lines, hidden):
        if not hide:
            shown.append(line)
        elif not shown or shown[-1] != SHOWN_INSTEAD:
            shown.append(SHOWN_INSTEAD)
    return "\n".join(shown)


# ---------------------------------------------------------------- tokens, by what they look like

# --8<-- [start:token-families]
# A secret under a name no rule lists (notes.txt, config.yml) still has the shape its issuer gives it. Each
# family below is a prefix or a form its issuer documents, so that a match is a token, not prose; what a family
# misses is said with it. A family cuts the value and keeps what names it, so that the model still sees that a
# key was configured there.
TOKEN_FAMILIES = {
    # AWS's access key ids, long-term (AKIA) and temporary (ASIA): 20 capitals and digits
    # (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids).
    # Misses: nothing of that form; the secret key has no prefix, and is found by its assignment below.
    "an AWS access key id": r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
    # GitHub's tokens: ghp_, gho_, ghu_, ghs_, ghr_ and fine-grained github_pat_
    # (https://github.blog/engineering/platform-security/behind-githubs-new-authentication-token-formats/).
    # Misses: the 40-hex tokens issued before 2021, which look like any SHA-1.
    "a GitHub token": r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})",
    # Slack's tokens: xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe- (https://api.slack.com/concepts/token-types).
    "a Slack token": r"\bxox[abeprs]-[A-Za-z0-9-]{10,255}",
    # Anthropic's (sk-ant-...) and OpenAI's (sk-..., sk-proj-...) API keys, as their consoles issue them.
    # Misses: a key of another provider with no documented prefix (found by its assignment, if it has one).
    "an API key": r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,255}",
    # A JSON Web Token: three base64url parts, the first two JSON objects, so "eyJ" (RFC 7519 section 3).
    "a JSON Web Token": r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    # Stripe's secret and restricted keys, live and test (https://docs.stripe.com/keys).
    "a Stripe key": r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,255}",
    # GitLab's personal access tokens (https://gitlab.com/gitlab-org/gitlab/-/issues/342327).
    # Misses: an instance that set a prefix of its own.
    "a GitLab token": r"\bglpat-[A-Za-z0-9_-]{20,255}",
    # Hugging Face's user access tokens, hf_ and 30 or more letters and digits
    # (https://huggingface.co/docs/hub/security-tokens).
    "a Hugging Face token": r"\bhf_[A-Za-z0-9]{30,255}",
    # npm's access tokens since 2021: npm_ and 36 letters and digits (GitHub's announcement of the format).
    "an npm token": r"\bnpm_[A-Za-z0-9]{36}\b",
    # Google's API keys: AIza and 35 more characters, as the Cloud console issues them.
    "a Google API key": r"\bAIza[0-9A-Za-z_-]{35}\b",
    # SendGrid's API keys: SG., a 22-character id, a dot, a 43-character secret.
    "a SendGrid key": r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b",
    # A bearer token as HTTP sends it (RFC 6750 section 2.1: "Bearer" and a b64token).
    # Misses: a token in a header of another name (found by its assignment, if the name says secret).
    "a bearer token": r"\bBearer\s+[A-Za-z0-9._~+/-]{16,}=*",
    # A password in a .netrc (the login, then the password; or a line of its own), which uses no ":" or "=".
    "a .netrc password": r"\blogin\s+\S+\s+password\s+\S+|(?m:^[ \t]*password[ \t]+\S+[ \t]*$)",
    # A private key's DER body in base64 with its armour taken off: a DER sequence of 256 bytes or more
    # begins "MII" in base64. Misses: a key shorter than that (none a current tool makes). A certificate
    # has the same form: it is hidden too, which costs the model nothing it needs.
    "a key without its armour": r"\bMII[A-Za-z0-9+/]{60,}={0,2}",
}
TOKEN = re.compile("|".join(f"(?:{form})" for form in TOKEN_FAMILIES.values()))
TOKEN_INSTEAD = "[a token was here: not shown, the rules keep credentials out of the history]"
# A value assigned to a name that says it is secret (AWS_SECRET_ACCESS_KEY=..., "api_token": "...",
# password: ...), in dotenv, shell, YAML, TOML, INI or JSON: the value is cut when it looks random.
# Misses: a short or word-like password (hunter2; "correct horse"), and a secret under a name that does not
# say so (DB_URL=postgres://user:pass@host).
SECRET_ASSIGNMENT = re.compile(
    r"""(?P<name>["']?[A-Za-z0-9_.-]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|CREDENTIALS?|AUTH)[A-Za-z0-9_]*["']?"""
    r"""\s*[:=]\s*["']?)(?P<value>[^\s"',;#]{12,})""", re.I)
MOST_LIKELY_WORDS = 3.0  # bits per character: English words sit below, a random token of 12 or more above
# --8<-- [end:token-families]


def random_looking(value: str) -> bool:
    """Whether a value looks like a key rather than a word or a setting: its characters' entropy is at least
    MOST_LIKELY_WORDS bits each, and it mixes letters with digits or symbols (a path or a URL does not count)."""
    if "/" in value[:8] or "://" in value or value.lower() in ("true", "false", "null", "none"):
        return False
    counts = Counter(value)
    entropy = -sum(count / len(value) * math.log2(count / len(value)) for count in counts.values())
    return entropy >= MOST_LIKELY_WORDS and any(char.isdigit() for char in value) and any(char.isalpha() for char in value)


def secrets_hidden(text: str) -> str:
    """``text`` with each private key (private_keys_hidden) and each token cut out: by the token's own form
    (TOKEN_FAMILIES), or by a name that says it is secret with a random-looking value (SECRET_ASSIGNMENT)."""
    text = private_keys_hidden(text)
    text = TOKEN.sub(TOKEN_INSTEAD, text)
    return SECRET_ASSIGNMENT.sub(lambda found: found["name"] + TOKEN_INSTEAD if random_looking(found["value"])
                                 else found[0], text)
