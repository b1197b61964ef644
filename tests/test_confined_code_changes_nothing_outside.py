"""Confined code changes nothing outside its writable folder, not even a file's mode or times, run as root.

Landlock governs opening, creating, renaming and removing; a file's owner changes its mode (chmod
without the set-id bits) or its times (utime, touch -d) without opening it, and run as uid 0 the
confined code owns every file of the machine. Each test runs the real attack inside the real
confinement (an s06 command, a graded copy's case) on a file outside, then reads the file's mode and
times from here. Every mount but the writable folder is read-only in the confinement's own mount
namespace; a graded copy on a machine without namespaces (Limits.namespaces=False) is refused the
calls by its seccomp filter instead.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
from pathlib import Path

import pytest

import course.sandbox.confinement as confine
from course.grading import grade as grading, jail as grading_jail
from test_grading import make_copy, needs_confinement

pytestmark = pytest.mark.stage()  # the support package's confinement and the grader: no stage is loaded

MODE, TIMES = 0o640, (1_000_000_000, 1_000_000_000)


def victims(*folders: Path) -> list[Path]:
    """A file in each folder, of a known mode and times, owned by whoever runs the tests (root, here)."""
    made = []
    for folder in folders:
        path = folder / f"victim-{os.getpid()}.txt"
        path.write_text("unchanged\n")
        os.chmod(path, MODE)
        os.utime(path, TIMES)
        made.append(path)
    return made


def unchanged(path: Path) -> bool:
    found = path.stat()
    return (found.st_mode & 0o7777, int(found.st_mtime), int(found.st_atime)) == (MODE, *TIMES)


@pytest.fixture
def outside(tmp_path):
    """A file beside the workspace, and one on another file system (a tmpfs, /dev/shm, where there is one)."""
    folders = [tmp_path]
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) and os.stat("/dev/shm").st_dev != os.stat(tmp_path).st_dev:
        folders.append(Path(tempfile.mkdtemp(dir="/dev/shm")))
    made = victims(*folders)
    yield made
    for path in made:
        path.unlink(missing_ok=True)
        if path.parent != tmp_path:
            path.parent.rmdir()


def attack(path: Path) -> str:
    quoted = shlex.quote(str(path))
    return (f"chmod 777 {quoted}; chmod 600 {quoted}; touch -d 2000-01-01 {quoted}; touch -a {quoted}; "
            f"{shlex.quote(sys.executable)} -I -S -c 'import os, sys; os.utime(sys.argv[1], (0, 0))' {quoted}")


def test_a_command_changes_no_mode_and_no_time_outside_its_workspace(confined, tmp_path, outside):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for path in outside:
        finished = confine.run_confined(attack(path), workspace)
        assert unchanged(path), (path, oct(path.stat().st_mode), path.stat().st_mtime, finished.output)
        assert "read-only file system" in finished.output.lower(), finished.output


def test_the_same_attack_unconfined_does_change_the_file(tmp_path, outside, monkeypatch):
    """The control: without the confinement the attack works, so the test above would see it work."""
    monkeypatch.setenv(confine.OPT_OUT, "1")
    confine.run_confined(attack(outside[0]), tmp_path)
    assert not unchanged(outside[0])


def test_inside_its_workspace_a_command_still_changes_modes_and_times(confined, tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (inside,) = victims(workspace)
    finished = confine.run_confined(f"chmod 600 {inside.name} && touch -d 2000-01-01 {inside.name} && echo made > new.txt",
                                    workspace)
    assert inside.stat().st_mode & 0o777 == 0o600 and int(inside.stat().st_mtime) < TIMES[0], finished.output
    assert (workspace / "new.txt").read_text() == "made\n", finished.output


def test_the_course_checkout_is_read_only_to_a_command(confined, tmp_path):
    """The harness's own files (here, the course's README) are outside every workspace: not a mode changes."""
    readme = Path(__file__).resolve().parent.parent / "README.md"
    before = readme.stat()
    finished = confine.run_confined(f"chmod 600 {shlex.quote(str(readme))}; touch -d 2000-01-01 {shlex.quote(str(readme))}",
                                    tmp_path)
    after = readme.stat()
    assert (after.st_mode, after.st_mtime_ns) == (before.st_mode, before.st_mtime_ns), finished.output


# ---------------------------------------------------------------- a graded copy

def graded_attack(tmp_path: Path, path: Path, namespaces: bool) -> str:
    """Grade an s03 copy whose exercise 1 tries chmod and utime on ``path`` in every case; its scorecard."""
    body = f"""
        import os
        for attempt in (lambda: os.chmod({str(path)!r}, 0o777), lambda: os.utime({str(path)!r}, (0, 0)),
                        lambda: os.chmod({str(path)!r}, 0o600)):
            try:
                attempt()
            except OSError as error:
                print("refused:", error.strerror)
        return None"""
    copy = make_copy(tmp_path / f"namespaces-{namespaces}" / "s03", "s03", {1: body})
    options = grading.Options(seed=20261201, jobs=1, check_regions=False,
                              limits=grading_jail.Limits(seconds=30, namespaces=namespaces))
    return grading.scorecard(grading.grade_copies([("attacker", "s03", copy)], options)[0])


@needs_confinement
@pytest.mark.parametrize("namespaces", [True, False], ids=["read-only mounts", "no namespaces: seccomp"])
def test_a_graded_copy_changes_no_mode_and_no_time_outside_its_scratch_folder(tmp_path, namespaces):
    if namespaces and not grading_jail.namespaces_available():
        pytest.skip("this machine refuses user namespaces: the fallback is the other case")
    (path,) = victims(tmp_path)
    card = graded_attack(tmp_path, path, namespaces)
    assert unchanged(path), (oct(path.stat().st_mode), path.stat().st_mtime, card)
    assert "refused:" in card, card  # the attack ran, and the scorecard shows what it printed
