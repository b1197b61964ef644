"""Nothing a confined s06 command leaves in the workspace lets another user, or a later program, gain
privileges (course/sandbox/confinement.py, s06/tools.py).

Two attacks, each run in the real confinement and checked on disk. A set-user-id program planted in
the workspace: a command makes `tool` with mode 0o4755 (a mode given when a file is made, which the
chmod check never saw), then write_file fills it, written by the harness, which as root keeps the bit.
And a workspace opened to every user (`chmod 1777 .`, `chmod 666 notes.txt`), where anyone could then
plant what the next command runs. Where a control makes sense, the same command runs unconfined
(AGENT_COURSE_NO_CONFINEMENT=1) to show that it does what the test says it does.
"""

from __future__ import annotations

import errno
import os
import shlex
import stat
import sys
from pathlib import Path

import pytest

import course.sandbox.confinement as confine
from course.sandbox.kernel import seccomp
from helpers import load_stage
from test_confine import outcome

PYTHON = sys.executable
SET_UID_ROOT_SHELL = "#!/bin/sh\nexec /bin/sh -p\n"


def python(code: str) -> str:
    return f"{PYTHON} -I -S -c {shlex.quote(code)}"


def run(command: str, workspace: Path, *, confined: bool = True):
    with pytest.MonkeyPatch.context() as patch:
        if not confined:
            patch.setenv(confine.OPT_OUT, "1")
        return confine.run_confined(command, workspace)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def box(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir(mode=0o755)
    workspace.chmod(0o755)
    (workspace / "notes.txt").write_text("alpha\n")
    (workspace / "notes.txt").chmod(0o644)
    return workspace


# ---------------------------------------------------------------- the filter, read as data

MAKE = {"x86_64": {"open": (2, 2, 1), "creat": (85, 1, None), "openat": (257, 3, 2), "mknod": (133, 1, None),
                   "mknodat": (259, 2, None)},
        "aarch64": {"openat": (56, 3, 2), "mknodat": (33, 2, None)}}


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_refuses_a_new_file_whose_mode_is_set_id_and_openat2(machine):
    arch, socket_number, refused, mode_calls = seccomp.SECCOMP_ARCHES[machine]
    program = seccomp.seccomp_program(arch, socket_number, refused, mode_calls, seccomp.PREALLOCATE_CALLS[machine])
    for name, (number, mode_at, flags_at) in MAKE[machine].items():
        def call(file_mode, flags=os.O_CREAT | os.O_WRONLY):
            args = [3, 3, 3, 3]
            args[mode_at] = file_mode
            if flags_at is not None:
                args[flags_at] = flags
            return outcome(program, number, arch=arch, args=tuple(args))

        for file_mode in (0o4755, 0o2755, 0o6777, stat.S_IFREG | 0o4700):
            assert call(file_mode) == seccomp.RET_EACCES, (name, oct(file_mode))
        for file_mode in (0o755, 0o644, 0o1777, 0o000, stat.S_IFIFO | 0o644):
            assert call(file_mode) == seccomp.RET_ALLOW, (name, oct(file_mode))
        if flags_at is not None:  # the kernel reads the mode only when a file is made: anything may be there
            assert call(0o4755, flags=os.O_RDONLY) == seccomp.RET_ALLOW, name
            assert call(0o4755, flags=0o20000000 | os.O_RDWR) == seccomp.RET_EACCES, name  # O_TMPFILE
    assert outcome(program, 437, arch=arch, args=(3, 3, 3, 3)) == seccomp.RET_ENOSYS  # openat2: mode in a struct
    assert outcome(program, 63 if machine == "aarch64" else 0, arch=arch, args=(3, 0o4755, 0o4755, 0o4755)
                   ) == seccomp.RET_ALLOW  # read()


# ---------------------------------------------------------------- 1. a set-user-id program planted

MAKE_TOOL = ("import ctypes, os\n"
             "libc = ctypes.CDLL(None, use_errno=True)\n"
             "def said(what, result):\n"
             "    print(what, 'made' if result >= 0 else 'refused', ctypes.get_errno() if result < 0 else '')\n"
             "try:\n"
             "    fd = os.open('tool', os.O_CREAT | os.O_WRONLY, 0o4755); print('open made', oct(os.fstat(fd).st_mode))\n"
             "except OSError as error:\n"
             "    print('open refused', error.errno)\n"
             "said('creat', libc.creat(b'tool2', 0o2755))\n"
             "said('mknod', libc.mknod(b'tool3', 0o100000 | 0o4755, 0))\n"
             "how = (ctypes.c_uint64 * 3)(os.O_CREAT | os.O_WRONLY, 0o4755, 0)\n"
             "said('openat2', libc.syscall(437, -100, b'tool4', how, 24))\n"
             "if os.uname().machine == 'x86_64':  # the old calls libc no longer makes, made directly\n"
             "    for name, number, args in (('raw-open', 2, (b'tool5', os.O_CREAT | os.O_WRONLY, 0o4755)),\n"
             "                               ('raw-creat', 85, (b'tool6', 0o4755)),\n"
             "                               ('raw-mknod', 133, (b'tool7', 0o100000 | 0o4755, 0))):\n"
             "        said(name, libc.syscall(number, *args))\n")
TOOLS = ("tool", "tool2", "tool3", "tool4", *(("tool5", "tool6", "tool7") if os.uname().machine == "x86_64" else ()))


def test_a_command_cannot_make_a_set_id_file_and_one_made_anyway_loses_its_bits(confined, box):
    outside = run(python(MAKE_TOOL), box, confined=False)
    assert "open made 0o104755" in outside.output and "creat made" in outside.output, outside.output  # the control
    assert "set-user-id and set-group-id bits taken off" in outside.output  # the sweep runs unconfined too
    for name in TOOLS:
        assert not mode(box / name) & 0o6000, name
        os.remove(box / name)
    inside = run(python(MAKE_TOOL), box)
    assert f"open refused {errno.EACCES}" in inside.output and f"creat refused {errno.EACCES}" in inside.output
    assert f"mknod refused {errno.EACCES}" in inside.output and f"openat2 refused {errno.ENOSYS}" in inside.output
    assert inside.output.count(f"refused {errno.EACCES}") == len(TOOLS) - 1, inside.output
    assert not any((box / name).exists() for name in TOOLS), inside.output
    made = run(python("import os; os.close(os.open('plain', os.O_CREAT | os.O_WRONLY, 0o755)); "
                      "print(open('notes.txt').read())"), box)
    assert "alpha" in made.output and mode(box / "plain") == 0o755  # opening and making plain files still work


@pytest.mark.stage("s06")
def test_an_approved_command_then_write_file_leaves_no_set_id_program(confined, box):
    """The attack as it was played: `python3 make_tool.py`, then write_file into what it made."""
    s06 = load_stage("s06")
    (box / "make_tool.py").write_text("import os\nos.close(os.open('tool', os.O_CREAT | os.O_WRONLY, 0o4755))\n")
    run(f"{PYTHON} -I -S make_tool.py", box)
    s06.write_file(box, "tool", SET_UID_ROOT_SHELL)
    assert (box / "tool").read_text() == SET_UID_ROOT_SHELL and not mode(box / "tool") & 0o6000


@pytest.mark.stage("s06")
def test_the_file_tools_never_write_move_or_replace_a_set_id_file(confined, box):
    """The second half of the attack: the harness writes what the model sent into `tool`. As root it
    holds CAP_FSETID, so the kernel would keep the bit: write_file and move_file refuse such a file."""
    s06 = load_stage("s06")
    tool = box / "tool"
    tool.write_text("")
    tool.chmod(0o4755)  # made some way the filter does not see; the harness may be root
    for call in (lambda: s06.write_file(box, "tool", SET_UID_ROOT_SHELL),
                 lambda: s06.move_file(box, "tool", "bin-tool"),
                 lambda: s06.move_file(box, "notes.txt", "tool")):
        with pytest.raises(s06.ToolError) as refused:
            call()
        assert refused.value.kind == "set_id_file"
    assert tool.read_text() == "" and mode(tool) == 0o4755 and (box / "notes.txt").exists()
    old_umask = os.umask(0)  # the harness's umask may be 0: write_file's own mode has no set-id or others' write
    try:
        s06.write_file(box, "made.sh", "echo hi\n")
        s06.write_file(box, "new/deeper/made.txt", "hi\n")
        s06.move_file(box, "made.sh", "moved/here/made.sh")
    finally:
        os.umask(old_umask)
    assert mode(box / "moved" / "here" / "made.sh") == 0o644 and mode(box / "new" / "deeper" / "made.txt") == 0o644
    assert {mode(box / folder) for folder in ("new", "new/deeper", "moved", "moved/here")} == {0o755}
    finished = run("true", box)  # and after any command, the bit is gone
    assert mode(tool) == 0o755 and "'tool'" in finished.output and "set-user-id" in finished.output
    assert s06.write_file(box, "tool", "echo hi\n") and tool.read_text() == "echo hi\n" and mode(tool) == 0o755


def test_the_sweep_clears_every_set_id_file_but_never_one_outside_through_a_link(confined, box, tmp_path):
    """A hard link in the workspace to a set-uid file outside (made before the run) is left as it is,
    and said; a file whose every name is in the workspace loses its bits, whatever made it."""
    system_binary = tmp_path / "passwd"
    system_binary.write_text("#!/bin/sh\n")
    system_binary.chmod(0o4755)
    os.link(system_binary, box / "passwd-link")
    (box / "sub").mkdir()
    copied = box / "sub" / "copied"
    copied.write_text("#!/bin/sh\n")
    copied.chmod(0o6755)
    os.link(copied, box / "copied-again")  # two names, both inside
    finished = run("true", box)
    assert mode(system_binary) == 0o4755 and mode(box / "passwd-link") == 0o4755
    assert mode(copied) == 0o755 and mode(box / "copied-again") == 0o755
    assert "set-id bits left on 'passwd-link'" in finished.output, finished.output
    assert "'sub/copied'" in finished.output and "'copied-again'" in finished.output, finished.output


def a_set_uid_program() -> Path:
    for folder in ("/usr/bin", "/bin", "/usr/sbin"):
        for entry in sorted(Path(folder).iterdir()) if os.path.isdir(folder) else ():
            if entry.is_file() and not entry.is_symlink() and entry.stat().st_mode & stat.S_ISUID and os.access(entry, os.R_OK):
                return entry
    pytest.skip("no set-user-id program on this machine to copy")


def test_a_set_uid_program_copied_linked_or_installed_in_keeps_no_bit(confined, box):
    """The other ways a command could bring a set-id file in: a copy that keeps its mode, a hard link,
    install -m. Unconfined (the control) the copy keeps its bit while the command runs."""
    program = a_set_uid_program()
    command = (f"cp -p {program} copied; ln {program} linked; install -m 4755 {program} installed; "
               "stat -c '%a %n' copied installed")
    outside = run(command, box, confined=False)
    assert "4755 copied" in outside.output, outside.output
    for name in ("copied", "linked", "installed"):
        if os.path.lexists(box / name):
            os.remove(box / name)
    finished = run(command, box)
    assert not any(mode(entry) & 0o6000 for entry in box.iterdir()), finished.output
    assert not (box / "linked").exists() and mode(program) & stat.S_ISUID  # no link out, the program unchanged


# ---------------------------------------------------------------- 2. the workspace opened to every user

OPEN_UP = ("chmod 1777 . && chmod 666 notes.txt && mkdir d && chmod 777 d && echo more >> shared.txt && "
           "touch shared/new && echo made > new.txt && stat -c '%a %n' . notes.txt d new.txt")


def test_what_a_command_opens_to_every_user_is_closed_again_and_what_was_open_stays(confined, box):
    (box / "shared.txt").write_text("the user's, open to all on purpose\n")
    (box / "shared.txt").chmod(0o666)
    (box / "shared").mkdir()
    (box / "shared").chmod(0o777)
    old_umask = os.umask(0)  # the user's umask is 0: a command still makes nothing others may write
    try:
        finished = run(OPEN_UP, box)
    finally:
        os.umask(old_umask)
    assert "1777 .\n666 notes.txt\n777 d\n644 new.txt" in finished.output, finished.output  # it did open them
    assert mode(box) == 0o755 and mode(box / "notes.txt") == 0o664 and mode(box / "d") == 0o775  # others' write only
    assert mode(box / "new.txt") == 0o644 and mode(box / "shared" / "new") == 0o644
    assert mode(box / "shared.txt") == 0o666 and mode(box / "shared") == 0o777  # open before: as they were
    said = [line for line in finished.output.splitlines() if "others' write permission" in line]
    assert len(said) == 1 and "put back from 1777 to 755" in said[0], finished.output
    assert "'notes.txt'" in said[0] and "'d'" in said[0] and "shared" not in said[0]
    again = run("echo again >> shared.txt && touch shared/another && chmod 666 notes.txt", box)  # a later command
    assert mode(box / "shared.txt") == 0o666 and mode(box / "shared") == 0o777 and mode(box / "notes.txt") == 0o664
    assert "'notes.txt'" in again.output and "shared" not in again.output.split("[", 1)[-1], again.output


def test_a_command_never_makes_files_wider_than_the_users_umask(confined, box):
    old_umask = os.umask(0o077)
    try:
        run("echo made > private.txt && mkdir private", box)
    finally:
        os.umask(old_umask)
    assert mode(box / "private.txt") == 0o600 and mode(box / "private") == 0o700
