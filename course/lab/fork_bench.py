"""How long reading one command costs in a child process, forked three ways: ``python -m course.lab.fork_bench``.

The measurement behind course.sandbox.isolated's small server: a fork of a process that has imported the SDK, or
a test suite, copies more pages than a fork of a server that imported only the command reader.
"""

from __future__ import annotations

import os
import pickle
import statistics
import time
from typing import Callable

from course.sandbox import shell_reading
from course.sandbox.isolated import call


def bench(repeats: int = 200) -> dict[str, float]:
    """Median milliseconds to read one command as s06's gate does: in a fork of this process as it is
    (small), then after importing the SDK, then after importing what a test run holds, against call()."""
    command = "cat memo.md | grep agent | head -n 3"

    def forking_this_process() -> None:
        reading_end, writing_end = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(reading_end)
            with os.fdopen(writing_end, "wb") as out:
                out.write(pickle.dumps(shell_reading.read_here(command)))
            os._exit(0)
        os.close(writing_end)
        with os.fdopen(reading_end, "rb") as received:
            pickle.loads(received.read())
        os.waitpid(child, 0)

    def median_ms(read: Callable[[], None]) -> float:
        samples = []
        for _ in range(repeats):
            started = time.perf_counter()
            read()
            samples.append((time.perf_counter() - started) * 1000)
        return round(statistics.median(samples), 2)

    timings = {"fork of this process, course and the command reader imported": median_ms(forking_this_process)}
    import anthropic  # noqa: F401  (what a stage's agent has loaded)
    timings["fork of this process, the SDK imported too"] = median_ms(forking_this_process)
    import hypothesis, jsonschema, mkdocs, nbclient, pytest  # noqa: F401,E401  (what a test worker has loaded)
    timings["fork of this process, a test run's imports too"] = median_ms(forking_this_process)
    call(shell_reading.read_here, command)  # start the server
    timings["course.sandbox.isolated.call (fork of the small server)"] = median_ms(lambda: call(shell_reading.read_here, command))
    return timings


if __name__ == "__main__":
    for how, milliseconds in bench().items():
        print(f"{milliseconds:8.2f} ms  {how}")
