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
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import course
import course.sandbox.confinement as confine
from course.sandbox.kernel import processes
import course.sandbox.paths
import course.runtime.workspace
from helpers import cgroups_a_command_gets

pytestmark = pytest.mark.stage()  # the support package's confinement: no stage is loaded

PYTHON = sys.executable
IPC_CREAT, IPC_RMID = 0o1000, 0
SHM_KEY = 0x5EC0DE
libc = ctypes.CDLL(None, use_errno=True)


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


def test_a_command_cannot_watch_a_folder_for_the_names_of_new_files(confined, tmp_path):
    """inotify reports the name of every file made in a folder the command may look up (/tmp, the harness's
    runs/): no watch can be made, not even of the workspace. The control, unconfined, makes one."""
    code = ("import os\nfd = libc.inotify_init1(0)\nprint('init', fd, ctypes.get_errno())\n"
            "print('watch', libc.inotify_add_watch(max(fd, 0), b'/tmp', 0x100), ctypes.get_errno())")
    found = probe(code, tmp_path)
    assert f"init -1 {errno.EACCES}" in found, found
    unconfined = probe(code, tmp_path, confined=False)
    assert "init -1" not in unconfined and "watch -1" not in unconfined, unconfined


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


# ---------------------------------------------------------------- the sweep after a command, against one made to defeat it

DEPTH = 1200  # deeper than Python's recursion limit (1,000): shutil.rmtree and Path.rglob raised RecursionError
CHAIN = (f"{PYTHON} -I -S -c \"import os\nfor _ in range({DEPTH}):\n os.mkdir('deep'); os.chdir('deep')\n"
         "open('f', 'w').write('x')\"")
REPOSITORY = ("mkdir -p .git/objects .git/refs .vscode && echo 'ref: refs/heads/main' > .git/HEAD && "
              "printf '[core]\\n\\tfsmonitor = touch pwned\\n' > .git/config && echo '{}' > .vscode/tasks.json && "
              "echo x > json.py && echo x > sitecustomize.py")
NEW = (".git", ".vscode", "json.py", "sitecustomize.py")


@pytest.fixture
def fast_folder(tmp_path):
    """A workspace on tmpfs where there is one: 1,200 rmdir calls take 2 to 3 s on a busy ext4 disk and
    a few milliseconds in memory; the code run is the same."""
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        folder = Path(tempfile.mkdtemp(dir="/dev/shm", prefix="confine-test-"))
        yield folder
        course.runtime.workspace.remove_tree(folder)
    else:
        yield tmp_path


def test_a_new_git_with_a_chain_deeper_than_recursion_is_removed_with_everything_else(confined, fast_folder):
    """The chain inside the new .git raised RecursionError in the sweep: the error escaped, the other new
    entries stayed, and the next command counted the .git as there before."""
    finished = confine.run_confined(f"{REPOSITORY} && cd .git && {CHAIN}", fast_folder)
    assert set(NEW) <= set(finished.removed), finished.output
    assert not any(os.path.lexists(fast_folder / name) for name in NEW)
    again = confine.run_confined("ls -A", fast_folder)  # nothing is left to count as there before
    assert again.output == "" and not again.removed


def test_every_walk_of_the_workspace_holds_against_a_chain_a_command_made(confined, fast_folder):
    """A chain left in the workspace (not protected, so not removed) is walked by every later check:
    none may raise, and each still finds what lies within its reach (the .env beside the chain)."""
    (fast_folder / ".env").write_text("KEY=1\n")
    confine.run_confined(CHAIN, fast_folder)
    assert (fast_folder / "deep" / "deep").is_dir()
    hidden = course.sandbox.paths.covered_files(fast_folder, course.sandbox.paths.any_glob([".env", "**/.env"]))
    assert fast_folder.resolve() / ".env" in hidden
    assert course.sandbox.paths.protected_entries(fast_folder) == {}
    assert course.sandbox.paths.links_inside(fast_folder) == {}
    names = [path for path, _ in course.sandbox.paths.entries_under(fast_folder)]
    assert len(names) > 100 and all(len(os.fsencode(str(path))) < course.sandbox.paths.PATH_MAX for path in names)
    assert ".env" in course.snapshot(fast_folder)
    finished = confine.run_confined("mkdir -p deep/.git/objects deep/.git/refs && echo ref > deep/.git/HEAD", fast_folder)
    assert "deep/.git" in finished.removed and not (fast_folder / "deep" / ".git").exists()


def test_the_remover_follows_no_link_and_opens_what_its_owner_locked(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("kept")
    tree = tmp_path / "tree"
    (tree / "locked" / "inner").mkdir(parents=True)
    (tree / "locked" / "inner" / "file").write_text("x")
    (tree / "to-outside").symlink_to(outside)
    (tree / "locked" / "file-link").symlink_to(outside / "keep")
    os.chmod(tree / "locked" / "inner", 0)
    os.chmod(tree / "locked", 0o100)
    course.runtime.workspace.remove_tree(tree)
    assert not os.path.lexists(tree) and (outside / "keep").read_text() == "kept"


def test_what_the_sweep_cannot_remove_stops_every_later_command_until_it_is_gone(confined, tmp_path, monkeypatch):
    """Fail closed: a sweep that leaves an entry says so in one line, and the next command does not run
    (its marker is not made) while the entry stands; once it is gone, commands run again."""
    monkeypatch.setattr(course.sandbox.paths, "remove_tree", lambda path: None)  # a removal that fails, whatever the cause
    with pytest.raises(confine.LeftBehind) as left:
        confine.run_confined(REPOSITORY, tmp_path)
    assert "'.git'" in str(left.value) and "'.vscode'" in str(left.value) and "\n" not in str(left.value)
    with pytest.raises(confine.LeftBehind, match="an earlier command made"):
        confine.run_confined("echo ran > marker", tmp_path)
    assert not (tmp_path / "marker").exists()
    monkeypatch.undo()
    finished = confine.run_confined("echo ran > marker", tmp_path)  # removed first, then the command runs
    assert (tmp_path / "marker").exists() and not (tmp_path / ".git").exists(), finished.output


# ---------------------------------------------------------------- a second mount of the same file system

SECOND_MOUNT = """
import subprocess
import sys
from pathlib import Path
import course.sandbox.confinement as confine
workspace, second = Path(sys.argv[1]), Path(sys.argv[2])
print("probe", confine.probe().available)
for command in ("cat .env.local", f"cat {second}/workspace/.env.local", f"echo evil >> {second}/workspace/.vscode/tasks.json",
                f"echo evil > {second}/workspace/.git/hooks/pre-commit"):
    print(confine.run_confined(command, workspace, hidden=[workspace / ".env.local"]).output.replace(chr(10), " "))
"""


def test_a_hidden_file_stays_hidden_and_a_protected_one_read_only_at_a_second_mount_point(confined, tmp_path):
    """The workspace is also reachable at a second mount point (a bind mount of a folder above it): a
    stand-in over one path left `cat /second/workspace/.env.local` printing the secret, since Landlock
    follows the file, not the path. Made the way an attacker would, in a mount namespace of the test's own."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("no unshare or mount here")
    around, second = tmp_path / "around", tmp_path / "second"
    workspace = around / "workspace"
    (workspace / ".vscode").mkdir(parents=True)
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".env.local").write_text("SECOND-MOUNT-SECRET\n")
    (workspace / ".vscode" / "tasks.json").write_text("{}\n")
    second.mkdir()
    script = (f"mount --bind {shlex.quote(str(around))} {shlex.quote(str(second))} && "
              f"cat {shlex.quote(str(second / 'workspace' / '.env.local'))} && "  # the control: the second path reaches it
              f"{shlex.quote(PYTHON)} -c {shlex.quote(SECOND_MOUNT)} {shlex.quote(str(workspace))} {shlex.quote(str(second))}")
    ran = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], capture_output=True,
                         text=True, timeout=60, cwd=Path(__file__).parent.parent)
    if ran.returncode != 0 and "SECOND-MOUNT-SECRET" not in ran.stdout:
        pytest.skip(f"a mount namespace of the test's own is not permitted here: {ran.stderr.strip()[:200]}")
    lines = ran.stdout.splitlines()
    assert lines[0] == "SECOND-MOUNT-SECRET" and lines[1] == "probe True", ran.stdout + ran.stderr
    assert "SECOND-MOUNT-SECRET" not in "\n".join(lines[1:]), ran.stdout
    assert all(word in " ".join(lines[2:]) for word in ("Permission denied", "Read-only file system")), ran.stdout
    assert (workspace / ".vscode" / "tasks.json").read_text() == "{}\n" and not (workspace / ".git/hooks/pre-commit").exists()


# ---------------------------------------------------------------- processes and disk, all of a command's together

def test_a_command_cannot_start_more_processes_than_the_limit_even_as_root(confined, tmp_path):
    """As root, RLIMIT_NPROC does not bind (the kernel exempts uid 0): 100 background sleeps all ran.
    A pids cgroup of the command's own bounds it where one can be made; as another user, the rlimit does."""
    if "pids" not in cgroups_a_command_gets() and os.getuid() == 0:
        pytest.skip("root, and no pids cgroup can be made here: the process limit is not enforced (said in the docs)")
    finished = confine.run_confined("i=0; while [ $i -lt 100 ]; do sleep 3 & i=$((i+1)); done; echo started", tmp_path)
    assert "cannot fork" in finished.output.lower() and "started" not in finished.output, finished.output
    assert finished.stragglers < confine.PROCESS_LIMIT, finished.stragglers


def test_a_command_that_fills_the_disk_with_many_files_is_stopped(confined, tmp_path, monkeypatch):
    """Each file is bounded (RLIMIT_FSIZE); their sum was not. The supervisor stops a command once the
    workspace's file system has filled by more than the bound (8 MB here, so that the test is quick)."""
    monkeypatch.setattr(confine, "DISK_GROWTH_LIMIT", 8 << 20)
    fill = "i=0; while [ $i -lt 64 ]; do head -c 1000000 /dev/zero > f$i; i=$((i+1)); done; echo finished"
    finished = confine.run_confined(fill, tmp_path, timeout_s=20)
    assert "wrote more than 8 MB, so it was stopped" in finished.output and "finished" not in finished.output
    assert finished.exit_code is None and not finished.timed_out and len(list(tmp_path.iterdir())) < 64
    small = confine.run_confined("head -c 1000000 /dev/zero > one && echo finished", tmp_path)  # the control
    assert small.output == "finished\n" and small.exit_code == 0


def test_the_commands_of_a_run_together_cannot_fill_the_disk(confined, tmp_path, monkeypatch):
    """Each command within its own bound, command after command, filled the disk: the commands of one process
    share a bound (40 MB here, so that the test is quick; what other processes write meanwhile counts too, so
    the margins are wide), and what a command deletes is given back."""
    monkeypatch.setattr(confine, "RUN_DISK_GROWTH_LIMIT", 40 << 20)
    monkeypatch.setattr(confine, "_disk_added", {})
    write = "for i in $(seq 15); do head -c 1000000 /dev/zero > f{0}.$i; done && echo wrote {0}"  # 1 MB a file
    outputs = [confine.run_confined(write.format(n), tmp_path, timeout_s=20).output for n in range(2)]
    assert outputs == ["wrote 0\n", "wrote 1\n"], outputs
    slowly = write.replace("; done", "; sleep 0.2; done")  # the supervisor looks 20 times a second
    third = confine.run_confined(slowly.format(2), tmp_path, timeout_s=20).output
    assert "what was left of the 40 MB this run's commands may add" in third and "wrote 2" not in third, third
    assert len(list(tmp_path.glob("f2.*"))) < 15
    cleaned = confine.run_confined("rm f* && echo cleaned", tmp_path)  # a run past its bound still cleans up
    assert cleaned.output == "cleaned\n", cleaned.output
    again = confine.run_confined(write.format(3), tmp_path, timeout_s=20)
    assert again.output == "wrote 3\n", again.output
    other = tmp_path / "other"  # another workspace has its own bound
    other.mkdir()
    assert confine.disk_growth_left(other)[0] == 40 << 20 > confine.disk_growth_left(tmp_path)[0]


def test_the_commands_of_a_run_together_cannot_make_files_without_end(confined, tmp_path, monkeypatch):
    """Each command may make 50,000 entries; the gate walks them all before every call. The commands of one
    process share a bound on entries (3,000 here), counted in the workspace, and what is deleted is given
    back. (While a command runs, the supervisor reads the file system's count, to which others add hundreds
    while a parallel test runs: the margins are wide.)"""
    if not os.statvfs(tmp_path).f_favail:
        pytest.skip("this file system counts no entries (statvfs f_favail is 0)")
    monkeypatch.setattr(confine, "RUN_ENTRY_GROWTH_LIMIT", 3_000)
    monkeypatch.setattr(confine, "_disk_added", {})
    make = (f"{shlex.quote(PYTHON)} -I -S -c \"import os; os.mkdir('d{{0}}'); "
            "[open(f'd{0}/f{{i}}', 'w').close() for i in range({1})]; print('made {0}')\"")
    first = confine.run_confined(make.format(0, 900), tmp_path, timeout_s=20).output
    assert first == "made 0\n" and confine.disk_growth_left(tmp_path)[1] == 3_000 - 901, first
    second = confine.run_confined(make.format(1, 2_500), tmp_path, timeout_s=20).output
    assert "what was left of the 3,000 this run's commands may make" in second, second
    assert confine.run_confined("rm -r d0 d1 && echo cleaned", tmp_path, timeout_s=20).output == "cleaned\n"
    assert confine.disk_growth_left(tmp_path)[1] == 3_000  # given back, exactly
    assert confine.run_confined(make.format(2, 900), tmp_path, timeout_s=20).output == "made 2\n"


def test_a_command_that_spreads_its_memory_over_many_processes_is_held_to_one_bound(confined, tmp_path, monkeypatch):
    """RLIMIT_AS bounds each process: six children of 40 MB each, all alive at once, all held it. A
    memory cgroup of the command's own bounds them together (64 MB here, so that the test is quick)
    where one can be made: the kernel ends one (the OOM killer, within the group) before six hold."""
    if "memory" not in cgroups_a_command_gets():
        pytest.skip("no memory cgroup can be made here: each process is bounded, the command is not (said in the docs)")
    (tmp_path / "spread.py").write_text(SPREAD)
    monkeypatch.setattr(confine, "COMMAND_MEMORY_LIMIT", 64 << 20)
    finished = confine.run_confined(f"{shlex.quote(PYTHON)} -I -S spread.py", tmp_path, timeout_s=20)
    assert "held 6" not in finished.output, finished.output
    monkeypatch.setattr(confine, "COMMAND_MEMORY_LIMIT", 1 << 30)  # the control: under the real bound, all six hold
    control = confine.run_confined(f"{shlex.quote(PYTHON)} -I -S spread.py", tmp_path, timeout_s=20)
    assert "held 6" in control.output, control.output


# Six children, each holding 40 MB until the parent has heard from all of them (a child that was
# ended reports nothing: its pipe ends), so all six are alive at once however slowly they start.
SPREAD = """
import os
release_r, release_w = os.pipe()
readers = []
for _ in range(6):
    r, w = os.pipe()
    if os.fork() == 0:
        os.close(release_w)
        os.close(r)
        kept = b"x" * 40_000_000
        os.write(w, b"1")
        os.read(release_r, 1)
        os._exit(0)
    os.close(w)
    readers.append(r)
print("held", sum(os.read(r, 1) == b"1" for r in readers), flush=True)
os.close(release_w)
for _ in readers:
    os.wait()
"""


def test_a_process_the_supervisor_misses_is_ended_through_the_commands_cgroup(confined, tmp_path, monkeypatch):
    """The supervisor ends what a command left by walking its descendants; a supervisor kept from looking (or
    a process it does not find) left one running after the call, free to race the file tools in the workspace.
    Every process the command started is in its cgroup, and that cgroup is emptied before the call returns.
    The supervisor's walk is switched off here (its fork inherits the patch), to stand for any way it misses."""
    if not cgroups_a_command_gets():
        pytest.skip("no cgroup of its own can be made here for a command")
    marker = f"{len(str(tmp_path))}{os.getpid()}"
    monkeypatch.setattr(processes, "end_descendants", lambda spare_from_count=(): 0)
    finished = confine.run_confined(f"(setsid sleep 30{marker[-3:]}.{marker[:3]} &) ; echo started", tmp_path, timeout_s=5)
    assert finished.output.strip() == "started", finished.output
    left = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if f"{marker[-3:]}.{marker[:3]}".encode() in cmdline:
                left.append(int(entry))
    for pid in left:
        os.kill(pid, 9)
    assert left == [], "a process the command started outlived the call"


def test_a_command_is_refused_when_too_many_files_would_need_a_mask(confined, tmp_path, monkeypatch):
    """Each hidden file is masked by a mount of its own: hard links cost no disk and no inode, and 10,000 of
    them made every command take seconds. Past MOST_HIDDEN (5 here) the command does not start, in one line."""
    monkeypatch.setattr(confine, "MOST_HIDDEN", 5)
    (tmp_path / "big.txt").write_text("x")
    for number in range(6):
        os.link(tmp_path / "big.txt", tmp_path / f"l{number}")
    links = [tmp_path / f"l{number}" for number in range(6)]
    with pytest.raises(confine.CommandNotStarted, match="6 files the rules hide or that have a second name"):
        confine.run_confined("echo ran > ran", tmp_path, hidden=links)
    assert not (tmp_path / "ran").exists()
    assert confine.run_confined("echo ran", tmp_path, hidden=links[:5]).output == "ran\n"  # the control
