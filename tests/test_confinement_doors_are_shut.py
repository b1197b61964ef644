"""Each door of the confinement, probed by a confined command, with the kernel's answer asserted.

The doors beyond files and the network: System V IPC (a new IPC namespace), the kernel's key store
(a fresh session keyring, and keyctl, add_key and request_key refused), socket families other than
AF_INET and AF_INET6, and io_uring's three calls. Each probe is a small Python program run as a
confined command; where it makes the test meaningful, the same probe is run unconfined as a control,
to show that the door is open there and the probe would see it.
"""

from __future__ import annotations

import ctypes
import errno
import shlex
import socket
import sys

import pytest

import course.confinement as confine

pytestmark = pytest.mark.stage()  # the support package's confinement: no stage is loaded

PYTHON = sys.executable
IPC_CREAT, IPC_RMID = 0o1000, 0
SHM_KEY = 0x5EC0DE
libc = ctypes.CDLL(None, use_errno=True)


@pytest.fixture
def confined():
    found = confine.probe()
    if not found.available:
        pytest.skip(found.reason)
    return found


def probe(code: str, workspace, *, confined=True) -> str:
    command = f"{PYTHON} -I -S -c {shlex.quote('import ctypes, socket, sys; libc = ctypes.CDLL(None, use_errno=True)' + chr(10) + code)}"
    with pytest.MonkeyPatch.context() as patch:
        if not confined:
            patch.setenv(confine.OPT_OUT, "1")
        return confine.run_confined(command, workspace).output


@pytest.fixture
def segment():
    """A System V shared memory segment of the harness's, mode 0600, holding a secret."""
    libc.shmget.restype, libc.shmat.restype = ctypes.c_int, ctypes.c_void_p
    number = libc.shmget(SHM_KEY, 4096, IPC_CREAT | 0o600)
    if number < 0:
        pytest.skip(f"no System V shared memory here ({errno.errorcode[ctypes.get_errno()]})")
    address = libc.shmat(number, None, 0)
    ctypes.memmove(address, b"SEGMENT-SECRET", 14)
    yield number
    libc.shmdt(ctypes.c_void_p(address))
    libc.shmctl(number, IPC_RMID, None)


SHM_PROBE = f"print('shmget', libc.shmget({SHM_KEY}, 0, 0), ctypes.get_errno())"


def test_the_harness_shared_memory_is_not_there_for_a_command(confined, tmp_path, segment):
    assert f"shmget {segment} 0" in probe(SHM_PROBE, tmp_path, confined=False)  # the control: it is found
    assert f"shmget -1 {errno.ENOENT}" in probe(SHM_PROBE, tmp_path)  # another IPC namespace: no such segment


def test_the_key_store_is_refused(confined, tmp_path):
    calls = SYSCALLS[confine.os.uname().machine]
    code = "\n".join(f"print({name!r}, libc.syscall({number}, {arguments}), ctypes.get_errno())"
                     for name, (number, arguments) in calls.items())
    found = probe(code, tmp_path)
    for name in calls:
        assert f"{name} -1 {errno.EACCES}" in found, found


SESSION_KEYRING = -3
SYSCALLS = {
    "x86_64": {"keyctl": (250, f"0, {SESSION_KEYRING}, 0"), "add_key": (248, "b'user', b'k', b'v', 1, -3"),
               "request_key": (249, "b'user', b'k', None, 0"), "io_uring_setup": (425, "8, ctypes.create_string_buffer(120)"),
               "io_uring_enter": (426, "0, 0, 0, 0, None, 0"), "io_uring_register": (427, "0, 0, None, 0")},
    "aarch64": {"keyctl": (219, f"0, {SESSION_KEYRING}, 0"), "add_key": (217, "b'user', b'k', b'v', 1, -3"),
                "request_key": (218, "b'user', b'k', None, 0"), "io_uring_setup": (425, "8, ctypes.create_string_buffer(120)"),
                "io_uring_enter": (426, "0, 0, 0, 0, None, 0"), "io_uring_register": (427, "0, 0, None, 0")},
}


def test_io_uring_is_refused_whichever_of_its_calls(confined, tmp_path):
    """Not only io_uring_setup: _enter and _register too, which a ring handed down would use."""
    calls = {name: value for name, value in SYSCALLS[confine.os.uname().machine].items() if name.startswith("io_uring")}
    code = "\n".join(f"print({name!r}, libc.syscall({number}, {arguments}), ctypes.get_errno())"
                     for name, (number, arguments) in calls.items())
    found = probe(code, tmp_path)
    assert all(f"{name} -1 {errno.EACCES}" in found for name in calls), found
    unconfined = probe(code, tmp_path, confined=False)  # the control: the kernel answers otherwise there
    assert f"io_uring_enter -1 {errno.EACCES}" not in unconfined, unconfined


FAMILIES = ("for family in range(1, 46):\n"
            "    try:\n        socket.socket(family, socket.SOCK_DGRAM if family != 17 else socket.SOCK_RAW).close()\n"
            "        print(family, 'made')\n"
            "    except OSError as error:\n        print(family, error.errno)")


def test_only_ip_sockets_can_be_made_and_they_reach_nothing(confined, tmp_path):
    answers = dict(line.split() for line in probe(FAMILIES, tmp_path).splitlines())
    made = sorted(int(family) for family, answer in answers.items() if answer == "made")
    assert made == [socket.AF_INET, socket.AF_INET6], answers
    assert all(answers[str(family)] == str(errno.EACCES) for family in range(1, 46)
               if family not in (socket.AF_INET, socket.AF_INET6)), answers
    unconfined = dict(line.split() for line in probe(FAMILIES, tmp_path, confined=False).splitlines())
    assert unconfined[str(socket.AF_UNIX)] == "made" and unconfined[str(socket.AF_NETLINK)] == "made"  # the control
    reach = probe("s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                  "try:\n    s.connect(('192.0.2.1', 53)); s.send(b'x'); print('sent')\n"
                  "except OSError as error:\n    print('connect', error.errno)", tmp_path)
    assert f"connect {errno.ENETUNREACH}" in reach, reach


def test_an_unnamed_socket_pair_still_works(confined, tmp_path):
    """socketpair() reaches nothing, and programs use it (a pipe with two ways)."""
    found = probe("a, b = socket.socketpair(); a.send(b'pair'); print(b.recv(4).decode())", tmp_path)
    assert found.strip() == "pair"
