"""cgroups of a confined process's own: a pids limit that binds root too, and a memory limit over all its
processes together; and the end of every process still in one."""

from __future__ import annotations

import os
import signal
import time

# RLIMIT_NPROC does not bind root (the kernel exempts uid 0 of the machine, whatever the user namespace
# maps it to), so where the harness may make a pids cgroup, the command runs in one of its own whose
# pids.max is its process limit (https://docs.kernel.org/admin-guide/cgroup-v1/pids.html, and for cgroup v2
# https://docs.kernel.org/admin-guide/cgroup-v2.html#pid): a fork past it fails with EAGAIN, as the
# rlimit would. cgroup v1's pids hierarchy, where mounted and writable; cgroup v2 only where the
# harness's own cgroup delegates the pids controller to its children (cgroup.subtree_control names it).
# RLIMIT_AS bounds each process, not the command: 50 children of 200 MB each would use 10 GB. So the
# same goes for memory: a memory cgroup of the command's own holds all its processes to
# its memory limit together, swap included (cgroup v2's memory.max and memory.swap.max,
# https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files; v1's memory.limit_in_bytes
# and memory.memsw.limit_in_bytes, https://docs.kernel.org/admin-guide/cgroup-v1/memory.html); past it
# the kernel reclaims what it can (the page cache of written files) and then ends a process of the
# command (the OOM killer, within the group only). In cgroup v2 a process is in one group, so one group
# gets both limits. Elsewhere there is no such group, and the docstring above says what is then not bounded.
CONTROLLERS = ("pids", "memory")


def groups_of_its_own(processes: int, memory: int) -> dict[str, str]:
    """{controller: a new, empty cgroup beneath the harness's own with that controller's limit (``processes``
    in pids.max, ``memory`` bytes, swap included)}, for each of CONTROLLERS that can be made here (two controllers may share one folder: cgroup v2)."""
    try:
        with open("/proc/self/cgroup") as listing:
            lines = [line.rstrip("\n").split(":", 2) for line in listing]
    except OSError:
        return {}
    places: list[tuple[str, set[str]]] = []
    for _, kinds, path in lines:
        if kinds == "":  # cgroup v2: the unified hierarchy, wherever it is mounted
            for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
                folder = os.path.join(root, path.lstrip("/"))
                try:
                    with open(os.path.join(folder, "cgroup.subtree_control")) as control:
                        places.append((folder, set(control.read().split()) & set(CONTROLLERS)))
                except OSError:
                    pass
        else:  # cgroup v1: a hierarchy per controller
            places += [(os.path.join("/sys/fs/cgroup", kind, path.lstrip("/")), {kind})
                       for kind in kinds.split(",") if kind in CONTROLLERS]
    groups: dict[str, str] = {}
    for place, controllers in places:
        controllers -= groups.keys()
        if not controllers:
            continue
        folder = os.path.join(place, f"agent-course-command-{os.getpid()}-{time.monotonic_ns()}")
        try:
            os.mkdir(folder)
        except OSError:
            continue
        limited = [controller for controller in controllers if _limit(folder, controller, processes, memory)]
        if limited:
            groups.update(dict.fromkeys(limited, folder))
        else:
            os.rmdir(folder)
    return groups


def _limit(folder: str, controller: str, processes: int, memory: int) -> bool:
    """Write the controller's limit in the group; whether it could be (cgroup v2's names, then v1's)."""
    if controller == "pids":
        return write_setting(folder, "pids.max", processes)
    if write_setting(folder, "memory.max", memory):
        write_setting(folder, "memory.swap.max", 0)  # absent where the kernel keeps no swap account
        return True
    if write_setting(folder, "memory.limit_in_bytes", memory):
        write_setting(folder, "memory.memsw.limit_in_bytes", memory)  # memory and swap together
        return True
    return False


def write_setting(folder: str, name: str, value: int) -> bool:
    try:
        with open(os.path.join(folder, name), "w") as setting:
            setting.write(str(value))
        return True
    except OSError:
        return False


def join(folder: str) -> None:
    """This process (and so every process the command starts) into the group; it raises if it cannot."""
    with open(os.path.join(folder, "cgroup.procs"), "w") as procs:
        procs.write("0")  # 0: the process that writes



def end_and_remove(groups) -> None:
    """End every process still in each group, then remove the group. The supervisor ends what the command
    left by walking
    its descendants through /proc; a process it did not find, or a supervisor kept from looking, leaves one
    running after the call, with the workspace writable while the file tools work in it. The cgroup holds
    every process the command started, however it forked: cgroup v2's cgroup.kill ends them all at once
    (https://docs.kernel.org/admin-guide/cgroup-v2.html#core-interface-files); elsewhere each is killed."""
    for group in groups:
        _end_what_is_left_in(group)
        for _ in range(200):  # a group cannot be removed while a process, even a dying one, is in it
            try:
                os.rmdir(group)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.01)


def _end_what_is_left_in(group: str) -> None:
    try:
        with open(os.path.join(group, "cgroup.kill"), "w") as kill:
            kill.write("1")
    except OSError:
        pass
    for _ in range(100):
        try:
            with open(os.path.join(group, "cgroup.procs")) as procs:
                left = [int(pid) for pid in procs.read().split()]
        except (OSError, ValueError):
            return
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005)

