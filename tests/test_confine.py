"""s06's second layer: whatever the gate lets run is confined by the kernel (course/sandbox/confinement.py).

Each attack runs twice where that makes the test meaningful: confined, where it must fail, and with
AGENT_COURSE_NO_CONFINEMENT=1, where the same command succeeds. A test that only checked the
failure could pass because the command was broken; the control shows it was not.
"""

from __future__ import annotations

import errno
import resource
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

import course.sandbox.confinement as confine
from course.sandbox.kernel import seccomp

SECRET = "sk-ant-not-a-real-key-0123"
BESIDE = "the folder beside the workspace"
PYTHON = sys.executable  # the venv's python: an approved `python3 ...` must still work


@pytest.fixture
def box(tmp_path):
    """A workspace with a hidden .env, and a secret in the folder beside it."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (workspace / ".env").write_text(f"ANTHROPIC_API_KEY={SECRET}\n")
    (tmp_path / "secret.txt").write_text(f"{BESIDE}: {SECRET}\n")
    return workspace


def run(command, workspace, *, confined=True, **options):
    """run_confined, or the same call with confinement switched off (the control)."""
    with pytest.MonkeyPatch.context() as patch:
        if not confined:
            patch.setenv(confine.OPT_OUT, "1")
        options.setdefault("hidden", [workspace / ".env"])
        return confine.run_confined(command, workspace, **options)


# ---------------------------------------------------------------- attacks that must fail

def test_a_secret_beside_the_workspace_cannot_be_read(confined, box):
    assert SECRET in run("cat ../secret.txt", box, confined=False).output
    finished = run("cat ../secret.txt", box)
    assert SECRET not in finished.output and finished.exit_code != 0


def test_nothing_can_be_written_outside_the_workspace(confined, box, tmp_path):
    run("echo planted > ../planted.txt", box, confined=False)
    assert (tmp_path / "planted.txt").exists()
    (tmp_path / "planted.txt").unlink()
    finished = run("echo planted > ../planted.txt; echo planted > /tmp/confine-planted-$$", box)
    assert finished.exit_code != 0
    # refused by the read-only mount (EROFS) before Landlock (EACCES) is asked
    assert not (tmp_path / "planted.txt").exists() and "Read-only file system" in finished.output


def test_a_hidden_env_file_can_be_neither_read_nor_overwritten(confined, box):
    assert SECRET in run("cat .env", box, confined=False).output
    assert "Permission denied" in run("cat .env", box).output  # denied, not merely empty: no capability left
    finished = run("cat .env; grep -r sk-ant .; echo overwritten > .env; chmod 644 .env; rm -f .env; cat .env",
                   box)
    assert SECRET not in finished.output
    assert (box / ".env").read_text() == f"ANTHROPIC_API_KEY={SECRET}\n"


def test_a_hidden_folder_can_be_neither_listed_nor_written(confined, box):
    (box / "private").mkdir()
    (box / "private" / "key.txt").write_text(SECRET)
    assert "key.txt" not in run("ls private", box, hidden=[box / "private"]).output
    finished = run("cat private/key.txt; touch private/new", box, hidden=[box / "private"])
    assert SECRET not in finished.output
    assert sorted(path.name for path in (box / "private").iterdir()) == ["key.txt"]


@pytest.mark.parametrize("escape", [
    "ln -s ../secret.txt shortcut; cat shortcut",  # a symbolic link inside the workspace leading outside
    "ln ../secret.txt stolen; cat stolen",  # a hard link: the same file under a name inside
    "mv ../secret.txt . ; cat secret.txt",  # moving the file in
], ids=["symbolic link", "hard link", "move"])
def test_links_and_moves_do_not_bring_an_outside_file_in(confined, box, escape):
    assert SECRET not in run(escape, box).output  # confined first: the control moves the file
    assert SECRET in run(escape, box, confined=False).output


def test_a_mount_cannot_undo_the_confinement(confined, box):
    finished = run("umount .env; mkdir -p up; mount --bind .. up; cat .env up/secret.txt", box)
    assert SECRET not in finished.output


def test_the_harness_environment_in_proc_is_out_of_reach(confined, box):
    # /proc/PID/environ is where an API key given to the harness can be read by a process of the same user.
    first_variable = Path(f"/proc/{os.getpid()}/environ").read_bytes().split(b"\0")[0].decode()
    command = f"tr '\\0' '\\n' < /proc/{os.getpid()}/environ"
    assert first_variable in run(command, box, confined=False).output.splitlines()
    assert first_variable not in run(command, box).output.splitlines()


@pytest.fixture
def listener():
    """A TCP socket on loopback that a command might connect to; closed after the test."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(2)
    yield server.getsockname()[1]
    server.close()


def python(code: str) -> str:
    return f"{PYTHON} -I -S -c {shlex.quote(code)}"  # -S: no site packages, a quicker start


def test_a_tcp_connection_to_loopback_is_refused(confined, box, listener):
    command = python(f"import socket; socket.create_connection(('127.0.0.1', {listener}), 2); print('connected')")
    assert "connected" in run(command, box, confined=False).output
    finished = run(command, box)
    assert "connected" not in finished.output and "PermissionError" in finished.output


def test_a_tcp_port_cannot_be_bound(confined, box):
    command = python("import socket; socket.socket().bind(('127.0.0.1', 0)); print('bound')")
    assert "bound" in run(command, box, confined=False).output
    assert "bound" not in run(command, box).output


def test_the_harness_cannot_be_signalled(confined, box):
    if landlock_abi() < 6:
        pytest.skip("signal scoping needs Landlock ABI 6 (Linux 6.12)")
    command = f"kill -0 {os.getpid()} && echo reached"  # signal 0: the permission check, no signal sent
    assert "reached" in run(command, box, confined=False).output
    assert "reached" not in run(command, box).output


def test_an_abstract_unix_socket_of_the_harness_is_out_of_reach(confined, box):
    if landlock_abi() < 6:
        pytest.skip("abstract socket scoping needs Landlock ABI 6 (Linux 6.12)")
    name = f"confine-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind("\0" + name)
        server.listen()
        command = python(f"import socket; socket.socket(socket.AF_UNIX).connect(chr(0) + {name!r}); print('reached')")
        assert "reached" in run(command, box, confined=False).output
        assert "reached" not in run(command, box).output


def test_udp_to_loopback_does_not_get_out(confined, box):
    """A network namespace of its own: UDP, which Landlock does not check, fails like TCP."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server:
        server.bind(("127.0.0.1", 0))
        server.settimeout(0.5)
        port = server.getsockname()[1]
        command = python(f"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
                         f".sendto(b'leak', ('127.0.0.1', {port})); print('sent')")
        assert "sent" in run(command, box, confined=False).output
        assert server.recv(16) == b"leak"  # the control: unconfined, the packet arrives
        finished = run(command, box)
        assert "sent" not in finished.output and "unreachable" in finished.output
        with pytest.raises(TimeoutError):
            server.recv(16)


@pytest.mark.parametrize("beside", [True, False], ids=["beside the workspace", "inside the workspace"])
def test_a_named_unix_socket_cannot_be_connected(confined, box, beside):
    """Landlock does not check connect() on a socket's path (/var/run/docker.sock): seccomp refuses
    socket(AF_UNIX), wherever the socket file is."""
    path = (box.parent if beside else box) / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen()
        command = python(f"import socket; socket.socket(socket.AF_UNIX).connect({str(path)!r}); print('reached')")
        assert "reached" in run(command, box, confined=False).output
        finished = run(command, box)
        assert "reached" not in finished.output and "PermissionError" in finished.output
    path.unlink()


def outcome(program: list, nr: int, family: int = 0, arch: int = 0xC000003E, args: tuple = ()) -> int:
    """What the filter returns for one system call: the program run as the kernel would run it.
    ``family`` is the first argument (socket's), ``args`` all of them when given."""
    arguments = args or (family,)
    data = {0: nr, 4: arch, **{16 + 8 * index: value & 0xFFFFFFFF for index, value in enumerate(arguments)},
            **{20 + 8 * index: value >> 32 for index, value in enumerate(arguments)}}  # each argument's two words
    index, loaded = 0, 0
    while True:
        code, jump_true, jump_false, value = program[index]
        if code == seccomp.RETURN:
            return value
        if code == seccomp.LOAD_WORD:
            loaded, index = data.get(value, 0), index + 1
            continue
        if code == seccomp.AND:
            loaded, index = loaded & value, index + 1
            continue
        taken = loaded == value if code == seccomp.JUMP_EQUAL else loaded >= value
        index += 1 + (jump_true if taken else jump_false)


def test_the_seccomp_program_refuses_every_family_but_ip_the_rings_the_keyring_and_other_architectures():
    """The filter read as data and run: a wrong jump offset would allow everything, or refuse read()."""
    program = seccomp.seccomp_program(*seccomp.SECCOMP_ARCHES["x86_64"], unsupported=seccomp.PREALLOCATE_CALLS["x86_64"])
    refused, allowed = seccomp.RET_EACCES, seccomp.RET_ALLOW
    assert outcome(program, 285) == seccomp.RET_EOPNOTSUPP  # fallocate
    for family in range(0, 64):  # every family the kernel knows (AF_MAX is 46 on 6.x), and some it does not
        expected = allowed if family in (socket.AF_INET, socket.AF_INET6) else refused
        assert outcome(program, 41, family) == expected, family
    for number in (425, 426, 427, 248, 249, 250):  # io_uring_setup, _enter, _register; add_key, request_key, keyctl
        assert outcome(program, number) == refused, number
    for number in (92, 93, 94, 260, 188, 189, 190, 197, 198, 199, 463, 466):  # owners, extended attributes
        assert outcome(program, number) == refused, number
    for number, mode_at in ((90, 1), (91, 1), (268, 2), (452, 2)):  # chmod, fchmod, fchmodat, fchmodat2
        for mode in (0o4755, 0o2755, 0o6777, 0o104755):
            assert outcome(program, number, args=tuple(mode if i == mode_at else 3 for i in range(4))) == refused
        for mode in (0o755, 0o644, 0o1777, 0o000):
            assert outcome(program, number, args=tuple(mode if i == mode_at else 0o4000 for i in range(4))) == allowed
    assert all(outcome(program, nr, socket.AF_UNIX) == allowed for nr in (0, 1, 2, 3, 53, 59, 60, 231, 424, 428))
    assert outcome(program, 0x40000000 | 41, socket.AF_UNIX) == refused  # x32
    assert outcome(program, 0, arch=0x40000003) == refused  # i386


def test_io_uring_and_vsock_are_refused_inside(confined, box):
    """A ring's socket operation makes a socket that the socket() check never sees; vsock leaves the
    network namespace. Both fail inside, with EACCES."""
    command = python("import ctypes, socket\n"
                     "libc = ctypes.CDLL(None, use_errno=True)\n"
                     "params = ctypes.create_string_buffer(120)\n"
                     "print('io_uring', libc.syscall(425, 8, params), ctypes.get_errno())\n"
                     "try:\n    socket.socket(40, socket.SOCK_STREAM)\n    print('vsock made')\n"
                     "except OSError as error:\n    print('vsock', error.errno)")
    finished = run(command, box)
    assert "io_uring -1 13" in finished.output and "vsock 13" in finished.output, finished.output


def test_prlimit_is_allowed_on_the_command_itself_only():
    """The filter read as data: prlimit64 with pid 0 (setrlimit and getrlimit) passes; any other pid, in
    either word of the argument, is refused."""
    program = seccomp.seccomp_program(*seccomp.SECCOMP_ARCHES["x86_64"], own_process_only=seccomp.OWN_PROCESS_ONLY["x86_64"])
    assert outcome(program, 302, args=(0, 7, 0, 0)) == seccomp.RET_ALLOW
    for pid in (1, 4242, 1 << 32, (1 << 32) | 1):
        assert outcome(program, 302, args=(pid, 7, 0, 0)) == seccomp.RET_EACCES, pid
    assert outcome(program, 160, args=(4242,)) == seccomp.RET_ALLOW  # setrlimit: the caller's own, always


def test_a_command_cannot_change_the_limits_of_a_process_outside(confined, box):
    """Run as root, a command could set any root process's limits (the harness's, its supervisor's, the
    machine's): an open-files limit of 0 on its supervisor left what it started running. Inside, prlimit on
    another process is refused and the process keeps its limits; the command's own limits still change."""
    outside = subprocess.Popen(["sleep", "30"])
    try:
        before = resource.prlimit(outside.pid, resource.RLIMIT_NOFILE)
        command = python("import resource\n"
                         "try:\n"
                         f"    resource.prlimit({outside.pid}, resource.RLIMIT_NOFILE, (3, 3)); print('changed')\n"
                         "except OSError as error: print('refused', error.errno)\n"
                         "resource.setrlimit(resource.RLIMIT_NOFILE, (100, 100))\n"
                         "print('own', resource.getrlimit(resource.RLIMIT_NOFILE))")
        inside = run(command, box).output
        assert f"refused {errno.EACCES}" in inside and "own (100, 100)" in inside, inside
        assert resource.prlimit(outside.pid, resource.RLIMIT_NOFILE) == before
    finally:
        outside.kill()
        outside.wait()


def test_blocks_are_reserved_only_by_writing_them(confined, box):
    """fallocate reserves a gigabyte in one call that neither the file-size limit (FALLOC_FL_KEEP_SIZE
    leaves the size alone) nor the watch of the disk sees in time: inside, it fails as unsupported, and
    posix_fallocate writes its blocks instead, as it does on a file system without fallocate."""
    command = python("import ctypes, os\n"
                     "libc = ctypes.CDLL(None, use_errno=True)\n"
                     "fd = os.open('reserved', os.O_WRONLY | os.O_CREAT, 0o644)\n"
                     "print('fallocate', libc.fallocate(fd, 1, ctypes.c_long(0), ctypes.c_long(1 << 30)), ctypes.get_errno())\n"
                     "os.posix_fallocate(fd, 0, 1 << 16)\n"
                     "print('size', os.fstat(fd).st_size, 'blocks', os.fstat(fd).st_blocks * 512)")
    outside = run(command, box, confined=False).output
    assert "fallocate 0 0" in outside, outside  # the control: the file system supports it
    os.remove(box / "reserved")
    inside = run(command, box).output
    assert f"fallocate -1 {errno.EOPNOTSUPP}" in inside and f"size {1 << 16} blocks {1 << 16}" in inside, inside


def test_no_file_becomes_set_user_id_changes_owner_or_gains_an_attribute(confined, box):
    """Landlock has no right for a file's metadata: beside the workspace (where Landlock refuses writes),
    a command could still make a file set-user-id or give it capabilities. The kernel refuses those;
    a plain chmod +x inside the workspace still works."""
    outside = box.parent / "victim"
    outside.write_text("x")
    outside.chmod(0o644)
    (box / "script.sh").write_text("echo hi\n")
    command = python("import os\n"
                     f"for mode in (0o4777, 0o2755):\n"
                     f"    try:\n        os.chmod({str(outside)!r}, mode); print('set-id made', oct(mode))\n"
                     f"    except OSError as error: print('chmod', error.errno)\n"
                     f"for call in (lambda: os.chown({str(outside)!r}, 1, 1),\n"
                     f"             lambda: os.setxattr({str(outside)!r}, 'user.x', b'1')):\n"
                     f"    try:\n        call(); print('changed')\n"
                     f"    except OSError as error: print('refused', error.errno)\n"
                     "os.chmod('script.sh', 0o755); print('plain chmod', oct(os.stat('script.sh').st_mode & 0o777))")
    finished = run(command, box)
    assert "set-id made" not in finished.output and "changed" not in finished.output, finished.output
    assert finished.output.count("chmod 13") == 2 and finished.output.count("refused 13") == 2, finished.output
    assert "plain chmod 0o755" in finished.output and oct(outside.stat().st_mode & 0o7777) == "0o644"


def landlock_abi() -> int:
    return confine.landlock_abi()


# ---------------------------------------------------------------- no process outlives the call (both modes)

LEFT_BEHIND = textwrap.dedent("""\
    sleep 100.{0} & echo $! >> pids
    setsid sleep 100.{0} & echo $! >> pids
    (sleep 100.{0} & echo $! >> pids)
    nohup sleep 100.{0} > /dev/null 2>&1 & echo $! >> pids
    echo started
""")


@pytest.mark.parametrize("confined_run", [True, False], ids=["confined", "unconfined"])
def test_no_process_outlives_the_call(box, confined_run):
    if confined_run and not confine.probe().available:
        pytest.skip(confine.probe().reason)
    start = time.monotonic()
    marker = f"{os.getpid()}{time.monotonic_ns() % 10**6}"  # confined, $! is a pid of the command's own namespace:
    finished = run(LEFT_BEHIND.format(marker), box, confined=confined_run)  # its processes are found by their marker
    pids = [int(line) for line in (box / "pids").read_text().split()]
    try:
        assert finished.output == "started\n" and time.monotonic() - start < 3  # stdout held open: no hang
        assert len(pids) == 4 and finished.stragglers == 4
        assert running_with(marker) == []
    finally:
        for pid in running_with(marker):
            os.kill(pid, 9)


def running_with(marker: str) -> list[int]:
    """The live processes of the machine whose command line holds the marker."""
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and marker.encode() in Path(f"/proc/{name}/cmdline").read_bytes() and alive(int(name)):
                found.append(int(name))
        except OSError:
            pass
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_the_timeout_kills_the_command_and_says_so(box):
    start = time.monotonic()
    finished = run("echo begun; sleep 100", box, timeout_s=0.3)
    assert finished.timed_out and finished.exit_code is None and finished.output == "begun\n"
    assert time.monotonic() - start < 2


def test_output_is_cut_at_the_cap(box):
    finished = run("head -c 50000 /dev/zero | tr '\\0' a", box, output_cap=1000)
    assert finished.output == "a" * 1000 and finished.exit_code == 0


def test_a_runaway_writer_is_stopped_at_the_file_size_limit(box):
    finished = run("head -c 2000000 /dev/zero > big.bin", box, output_cap=1000)
    assert (box / "big.bin").stat().st_size == 1000 * 50
    assert "File size limit exceeded" in finished.output


def test_memory_beyond_the_limit_cannot_be_had(box):
    finished = run(python(f"bytearray({2 * confine.MEMORY_LIMIT})"), box)
    assert "MemoryError" in finished.output and finished.exit_code != 0


# ---------------------------------------------------------------- what must still work

def test_ordinary_work_in_the_workspace_still_works(confined, box):
    finished = run(f"cat notes.txt | wc -l; grep -n beta notes.txt; ls; echo fresh > new.txt; "
                   f"echo more >> notes.txt; {PYTHON} -c 'print(1 + 1)'; cat new.txt", box)
    assert finished.exit_code == 0, finished.output
    assert finished.output.split("\n") == ["3", "2:beta", "notes.txt", "2", "fresh", ""]
    assert (box / "new.txt").read_text() == "fresh\n" and (box / "notes.txt").read_text().endswith("more\n")
    assert finished.stragglers == 0


def test_a_command_gets_no_shell_startup_variables(box):
    environment = {"PATH": os.environ["PATH"], "KEEP": "kept", "ENV": "/tmp/x", "BASH_ENV": "/tmp/x",
                   "BASH_FUNC_ls%%": "() { echo hijacked; }", "LD_PRELOAD": "/tmp/x.so"}
    finished = run("env", box, environment=environment)
    names = {line.split("=", 1)[0] for line in finished.output.splitlines()}
    assert "KEEP" in names and not names & {"ENV", "BASH_ENV", "BASH_FUNC_ls%%", "LD_PRELOAD"}


def test_confinement_is_available_where_the_kernel_allows_it():
    """probe() runs a real confined command and turns unavailable when any protection fails to hold;
    on a kernel with Landlock ABI 4 and user namespaces (checked here with util-linux's unshare, not
    with our code), that must not happen, or every test above would pass by skipping."""
    witness = shutil.which("unshare")
    if not sys.platform.startswith("linux") or confine.landlock_abi() < 4 or not witness:
        pytest.skip("needs Linux with Landlock ABI 4 and util-linux's unshare")
    if subprocess.run([witness, "--user", "--map-root-user", "--mount", "true"], capture_output=True).returncode:
        pytest.skip("this machine does not allow user namespaces")
    found = confine.probe()
    assert found.available, found.reason


def test_a_workspace_that_is_gone_is_one_line_and_nothing_runs(tmp_path):
    with pytest.raises(confine.CommandNotStarted, match="cannot enter the workspace") as raised:
        confine.run_confined("touch ran", tmp_path / "gone")
    assert "\n" not in str(raised.value) and not (tmp_path / "ran").exists()


def test_off_linux_commands_run_with_limits_and_are_reported_unconfined(box, monkeypatch):
    """macOS and friends: no Landlock, no namespaces, no /proc; the plain path must still work."""
    monkeypatch.setattr(confine, "LINUX", False)
    confine._probe_machine.cache_clear()
    try:
        found = confine.probe()
        finished = run("cat .env; head -c 2000000 /dev/zero > big.bin; echo done", box, output_cap=1000)
    finally:
        confine._probe_machine.cache_clear()
    assert not found.available and "Linux only" in found.reason
    assert SECRET in finished.output and finished.output.endswith("done\n")  # not confined: said so above
    assert (box / "big.bin").stat().st_size == 1000 * 50


def test_the_opt_out_makes_confinement_unavailable(monkeypatch):
    monkeypatch.setenv(confine.OPT_OUT, "1")
    found = confine.probe()
    assert not found.available and confine.OPT_OUT in found.reason and "\n" not in found.reason


UNPRIVILEGED = textwrap.dedent("""\
    import sys, types
    from pathlib import Path
    package = sys.modules["course"] = types.ModuleType("course")  # the package's folder, not its __init__:
    package.__path__ = [sys.argv[1]]  # the sandbox and what it imports need nothing but the standard library
    import course.sandbox.confinement as confine
    found = confine.probe()
    print(found.available, found.reason)
    workspace = Path(sys.argv[2])
    print(confine.run_confined("cat .env ../secret.txt; echo ok > made; id -u", workspace,
                               hidden=[workspace / ".env"]).output)
""")


def test_an_unprivileged_user_is_confined_too(confined):
    """A learner is usually not root: the user namespace path is the one they take."""
    system_python = shutil.which("python3", path="/usr/bin:/bin")
    if os.getuid() != 0 or not shutil.which("setpriv") or not system_python or not os.path.isdir("/tmp"):
        pytest.skip("needs root, setpriv and a system python3 to switch to an unprivileged user")
    # Not under tmp_path: its parents are private to root, and the user must reach the workspace.
    folder = Path(tempfile.mkdtemp(dir="/tmp", prefix="confine-unprivileged-"))
    try:
        workspace, scratch = folder / "workspace", folder / "scratch"
        workspace.mkdir()
        scratch.mkdir()
        (workspace / ".env").write_text(SECRET)
        (folder / "secret.txt").write_text(SECRET)
        for path in (folder, workspace, scratch, workspace / ".env", folder / "secret.txt"):
            os.chown(path, 65534, 65534)
        folder.chmod(0o755)
        result = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", system_python,
                                 "-I", "-c", UNPRIVILEGED, str(Path(confine.__file__).parents[1]), str(workspace)],
                                capture_output=True, text=True, timeout=20,
                                env={"PATH": "/usr/bin:/bin", "TMPDIR": str(scratch)})
        assert result.stdout.startswith("True Landlock"), result.stdout + result.stderr
        assert SECRET not in result.stdout and result.stdout.rstrip().endswith("65534")
        assert (workspace / "made").exists()
        assert list(scratch.iterdir()) == []  # the stand-ins for hidden files went when the process ended
    finally:
        shutil.rmtree(folder)
