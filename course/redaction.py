"""What a tool hands back to the model, with every private key in it cut out.

The s06 gate hides a file that holds a private key, judged by its first bytes (``course.paths.PRIVATE_KEY``).
A key further down a file (a certificate chain with its key appended), or one a command prints, would still
reach the history, and with it every later request to the API. So each output is read once more on its way
back: every key, from its first line to its last (or to the output's end, where the output was cut), becomes
one line that says what was there. The armours are those ``course.paths`` knows: PEM's (RFC 7468) and
OpenSSH's, GnuPG's private key block (RFC 4880), PuTTY's .ppk (from its first line to its Private-MAC) and
age's secret keys (https://age-encryption.org/v1).
"""

from __future__ import annotations

import re

KEY = re.compile(r"-----BEGIN (?P<armour>[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END (?P=armour)-----|\Z)"
                 r"|PuTTY-User-Key-File-\d+:.*?(?:Private-MAC:[^\n]*|\Z)"
                 r"|AGE-SECRET-KEY-1[0-9A-Za-z]+", re.S)
MARKERS = ("PRIVATE KEY", "PuTTY-User-Key-File-", "AGE-SECRET-KEY-1")  # none of them: nothing to look for
SHOWN_INSTEAD = "[a private key was here: not shown, the rules keep keys out of the history]"


def private_keys_hidden(text: str) -> str:
    """``text`` with each private key in it replaced by SHOWN_INSTEAD."""
    if not any(marker in text for marker in MARKERS):
        return text
    return KEY.sub(SHOWN_INSTEAD, text)
