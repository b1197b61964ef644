"""Confined code reads nothing the system keeps from other users, and nothing a normal user could not reach.

Run as root, confined code owns /etc/shadow (mode 0640, owner root): Landlock granted /etc whole, so
an s06 command printed it into its output (which goes to the model) and a graded copy into its
scorecard. Each test runs the real reading inside the real confinement and asserts the secret's
text is not in what comes out, with a marker proving the reading ran and its output is shown. The
secrets are the machine's own (every file of the system folders not readable by others that the
tests can read); the other places are what an attacker tries next: another process's environment
(/proc/PID/environ), /sys, /root and /home.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

import course.sandbox.confinement as confine
from course.sandbox.kernel import landlock
from course.grading import grade as grading, jail as grading_jail
from test_grading import make_copy, needs_confinement

pytestmark = pytest.mark.stage()  # the support package's confinement and the grader: no stage is loaded

MARKER = "environ-secret-5e1f"


def system_secrets() -> dict[str, str]:
    """path -> a line of it, for each file the system keeps from other users that this process can read."""
    found = {}
    for path in sorted(landlock.kept_from_others()):
        if os.path.isfile(path) and not os.path.islink(path):
            try:
                lines = [line for line in Path(path).read_text(errors="replace").splitlines() if len(line.strip()) >= 8]
            except OSError:
                continue
            if lines:
                found[path] = lines[0]
    return found


@pytest.fixture
def secrets():
    found = system_secrets()
    if not found:
        pytest.skip("no file kept from other users is readable here (not run as root): nothing to leak")
    return found


@pytest.fixture
def neighbour():
    """A process of the machine with a secret in its environment, as the harness holds its API key."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env={"SECRET": MARKER})
    yield process.pid
    process.kill()
    process.wait()


def reading(paths) -> str:
    """A shell script that prints each path (a file, or a folder's listing), after a line naming it."""
    return "; ".join(f"echo tried {shlex.quote(path)}; cat {shlex.quote(path)} 2>&1 || ls -a {shlex.quote(path)} 2>&1"
                     for path in paths)


def test_a_command_reads_no_file_the_system_keeps_from_other_users(confined, tmp_path, secrets):
    finished = confine.run_confined(reading(secrets), tmp_path, output_cap=200_000)
    for path, line in secrets.items():
        assert f"tried {path}" in finished.output, finished.output  # it ran and we see its output
        assert line not in finished.output, (path, finished.output)


def test_the_same_reading_unconfined_does_print_them(tmp_path, secrets, monkeypatch):
    """The control: the secrets are readable here, so the test above would see one leak."""
    monkeypatch.setenv(confine.OPT_OUT, "1")
    finished = confine.run_confined(reading(secrets), tmp_path, output_cap=200_000)
    assert any(line in finished.output for line in secrets.values())


def test_the_rest_of_the_system_folders_stays_readable(confined, tmp_path):
    """Narrowing the grant around the secrets must not take /etc from the programs that need it."""
    finished = confine.run_confined("head -1 /etc/passwd; ls /etc | grep -c .; ls /etc/ssl | grep -c .", tmp_path)
    lines = finished.output.splitlines()
    assert lines[0].startswith("root:") and int(lines[1]) > 10 and int(lines[2]) >= 1, finished.output


def test_a_command_reaches_no_other_process_nor_root_home_nor_sys(confined, tmp_path, neighbour):
    places = [f"/proc/{neighbour}/environ", "/proc/1/environ", f"/proc/{os.getpid()}/environ", "/proc/self/mounts",
              "/sys/kernel", "/root", "/home"]
    finished = confine.run_confined(reading(places) + f"; ls /proc | grep -x {neighbour}; echo done", tmp_path)
    assert MARKER not in finished.output and "done" in finished.output, finished.output
    for place in places:
        assert f"tried {place}" in finished.output
    assert f"\n{neighbour}\n" not in finished.output, finished.output
    assert "Permission denied" in finished.output, finished.output


# ---------------------------------------------------------------- a graded copy

@pytest.fixture(scope="module")
def graded_reader(tmp_path_factory):
    """The scorecard of an s03 copy whose exercise 1 prints every system secret and a neighbour's
    environment, in every case; and what it tried to read."""
    if grading_jail.available():
        pytest.skip(f"no confinement: {grading_jail.available()}")
    tmp_path = tmp_path_factory.mktemp("reader")
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env={"SECRET": MARKER})
    try:
        time.sleep(0.05)
        places = [f"/proc/{process.pid}/environ", "/proc/1/environ", "/root", "/home", "/sys/kernel", *system_secrets()]
        body = f"""
            import os
            for place in {places!r}:
                try:
                    print("tried", place, open(place, errors="replace").read() if os.path.isfile(place) else os.listdir(place))
                except OSError as error:
                    print("tried", place, error.strerror)
            return None"""
        copy = make_copy(tmp_path / "s03", "s03", {1: body})
        options = grading.Options(seed=20261201, jobs=1, check_regions=False,
                                  limits=grading_jail.Limits(seconds=30, output_cap=200_000))
        card = grading.scorecard(grading.grade_copies([("reader", "s03", copy)], options)[0])
    finally:
        process.kill()
        process.wait()
    return card, places


@needs_confinement
def test_a_graded_copy_prints_no_system_secret_into_its_scorecard(graded_reader):
    card, _ = graded_reader
    secrets = system_secrets()
    if not secrets:
        pytest.skip("no file kept from other users is readable here (not run as root): nothing to leak")
    for path, line in secrets.items():
        assert f"tried {path}" in card, card
        assert line not in card, (path, card)


@needs_confinement
def test_a_graded_copy_reaches_no_other_process_nor_root_home_nor_sys(graded_reader):
    card, places = graded_reader
    assert MARKER not in card, card
    for place in places[:5]:
        assert f"tried {place} Permission denied" in card, card
