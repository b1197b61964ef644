"""libc, and a call's failure as OSError."""

from __future__ import annotations

import ctypes
import functools
import os


@functools.lru_cache(maxsize=None)
def libc():
    return ctypes.CDLL(None, use_errno=True)


def prctl(option: int, value: int) -> None:
    check(libc().prctl(ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0),
                         ctypes.c_ulong(0)), f"prctl {option}")


def check(result: int, what: str) -> int:
    if result < 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")
    return result

