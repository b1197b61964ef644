"""A copy answers each case from that case alone: nothing it keeps in memory carries from one case to the
next (each case runs in a fork of the child made after the copy is imported), the cases come in an order
drawn from the seed, the copy cannot learn the seed, and what a child reports is read back only up to
a bound.

The attack these pin: the cases of an exercise keep their kinds from run to run (only the values change
with the seed), so a copy that counts its calls could answer the k-th case with the k-th answer of a
table learned once, and compute nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from course.grading import grade as grading, probes as grading_probes
from test_grading import make_copy, needs_confinement
from test_grading_constant_answers_score_nothing import InProcess

pytestmark = pytest.mark.stage()  # grades copies: it pins the grader, no stage

# limit_reached's explanation must give the numbers of the case: this one gives them all, and takes
# the verdict (None, max_turns or token_budget) from a table by the case's position.
EXPLAINED = ('f"{state.turn_count} of {limits.max_turns} turns; "'
             'f"{state.usage[\'input_tokens\'] + state.usage[\'output_tokens\']} of {limits.token_budget} tokens"')


def table_by_definition_order(tmp_path) -> list:
    """What a student learns once: the reference's verdicts of s03 exercise 1's cases in the order the
    probe defines them (the same for every seed), observed on a seed of their own."""
    probe = grading_probes.probes_for("s03", 1)[0]
    import random
    drawn = [(0, case) for case in probe.cases(random.Random("a seed of the student's"))]
    observed = InProcess(tmp_path / "packages", grading.assemble("s03", None)).observe("s03", 1, "agent", drawn, tmp_path)
    return [None if got is None else got[0] for _, got in sorted(observed.items())]


def graded(tmp_path, name, body, seed=20261201, check_regions=True):
    copy = make_copy(tmp_path / name / "s03", "s03", {1: body})
    options = grading.Options(seed=seed, jobs=1, check_regions=check_regions)
    grade = grading.grade_copies([(name, "s03", copy)], options)[0]
    return next(result for result in grade.results if result.exercise.number == 1)


@needs_confinement
def test_a_count_kept_in_the_support_package_does_not_reach_the_next_case(tmp_path):
    table = table_by_definition_order(tmp_path)
    assert len(set(table)) == 3  # the table holds every verdict: a right one per position would pass
    result = graded(tmp_path, "counter", f"""
        try:
            course.calls_so_far += 1
        except AttributeError:
            course.calls_so_far = 0
        kind = {table!r}[course.calls_so_far % {len(table)}]
        return None if kind is None else (kind, {EXPLAINED})""")
    assert result.points == 0, result.reason


@needs_confinement
@pytest.mark.parametrize("kept_on", ["limit_reached", "Limits", "json"])  # a function, a class, another module
def test_a_count_kept_on_a_function_or_class_does_not_reach_the_next_case(tmp_path, kept_on):
    table = table_by_definition_order(tmp_path)
    result = graded(tmp_path, kept_on, f"""
        try:
            {kept_on}.calls_so_far += 1
        except AttributeError:
            {kept_on}.calls_so_far = 0
        kind = {table!r}[{kept_on}.calls_so_far % {len(table)}]
        return None if kind is None else (kind, {EXPLAINED})""")
    assert result.points == 0, result.reason


@needs_confinement
def test_the_position_read_from_the_scratch_folder_does_not_say_which_case_it_is(tmp_path):
    """A copy can still count the cases' folders beside its own; the order they come in is drawn from
    the seed, so the position does not tell the case."""
    table = table_by_definition_order(tmp_path)
    result = graded(tmp_path, "folders", f"""
        position = len(list(Path.cwd().glob("case-*"))) - 1
        kind = {table!r}[position % {len(table)}]
        return None if kind is None else (kind, {EXPLAINED})""")
    assert result.points < 1, result.reason


def test_the_order_of_the_cases_is_drawn_from_the_seed():
    names = {seed: [case.name.split(" ")[-1] for _, case in grading.draw_cases("s00", 1, seed)] for seed in range(12)}
    kinds = {tuple(case.group for _, case in grading.draw_cases("s03", 1, seed)) for seed in range(12)}
    assert len(kinds) > 6  # which group comes where changes from seed to seed
    assert grading.draw_cases("s03", 1, 5) == grading.draw_cases("s03", 1, 5)  # and --seed N draws the same again
    assert len({tuple(v) for v in names.values()}) == len(names)


def test_the_default_seed_is_drawn_afresh_from_a_range_too_wide_to_search():
    seeds = {grading.Options().seed_value() for _ in range(20)}
    assert len(seeds) == 20 and max(seeds) > 10**9


@needs_confinement
def test_the_copy_cannot_see_the_seed(tmp_path):
    seed = 731_904_268_155
    result = graded(tmp_path, "looks", """
        import os, sys
        seen = [repr(os.environ), repr(sys.argv), repr(sys.orig_argv)]
        for path in ("/proc/self/cmdline", "/proc/self/environ", f"/proc/{os.getppid()}/cmdline", "/proc/1/cmdline",
                     f"/proc/{os.getppid()}/environ"):
            try:
                seen.append(Path(path).read_bytes().decode(errors="replace"))
            except OSError as error:
                seen.append(f"{path}: {error}")
        for folder in (Path.cwd(), Path.cwd().parent, Path(__file__).parent.parent):
            for found in folder.rglob("*"):
                try:
                    seen.append(f"{found}: {found.read_text(errors='replace')[:20000] if found.is_file() else ''}")
                except OSError as error:
                    seen.append(f"{found}: {error}")
        print("\\n".join(seen))
        return None""", seed=seed, check_regions=False)  # the confinement alone is what holds
    assert "agent.py" in result.printed  # it did look around
    assert str(seed) not in result.printed


@needs_confinement
def test_a_copy_that_reports_too_much_fails_that_exercise_in_one_line(tmp_path):
    result = graded(tmp_path, "floods", f"""
        import os
        flood = b"[" + b"[]," * {grading.OBSERVATIONS_CAP // 3} + b"[]]\\n"  # one JSON line just past the bound
        for descriptor in range(3, 64):  # the child's report is one of them
            try:
                os.write(descriptor, flood)
            except OSError:
                pass
        return None""", check_regions=False)
    assert result.points == 0
    assert f"reported more than {grading.OBSERVATIONS_CAP >> 20} MB of observations" in result.reason
    assert "\n" not in result.reason


@needs_confinement
def test_a_case_sees_no_other_cases_inputs_on_disk_or_in_memory(tmp_path):
    """Cases are drawn in related sets (one is another plus a round), so a case that could read the others'
    inputs could answer from them without doing the exercise. The job's file lies beside the copy, out of the
    child's reach once it is confined, and each case's fork keeps its own case only: neither the file nor
    the heap holds another case's parameters."""
    result = graded(tmp_path, "peeks", """
        import gc, json
        from pathlib import Path
        seen = {"files": sorted(str(path) for path in Path("../..").rglob("*.json"))}
        try:
            seen["job"] = Path("../../job.json").read_text()[:100]
        except OSError as error:
            seen["job"] = type(error).__name__
        import sys
        frame, held = sys._getframe(), []  # the frames that drive this case, up to the worker's loop
        while frame is not None:
            held += [value for value in frame.f_locals.values() if isinstance(value, dict) and "cases" in value]
            frame = frame.f_back
        gc.unfreeze()  # what the worker froze before forking is out of get_objects' sight otherwise
        held += [item for item in gc.get_objects() if isinstance(item, dict) and "cases" in item]
        seen["cases_in_memory"] = [len(item["cases"]) for item in held if isinstance(item["cases"], list)]
        print("PEEK " + json.dumps(seen))
        return None""", check_regions=False)  # the confinement and the fork alone are what hold
    peeks = [json.loads(line[5:]) for line in result.printed.splitlines() if line.startswith("PEEK ")]
    assert peeks, result.printed
    for seen in peeks:
        assert seen["job"] in ("PermissionError", "FileNotFoundError"), seen
        assert not any(name.endswith("job.json") for name in seen["files"]), seen
        assert seen["cases_in_memory"] and all(count == 0 for count in seen["cases_in_memory"]), seen


def test_a_cases_line_that_comes_after_its_bound_counts_for_nothing_whatever_one_read_brings():
    import os
    import threading
    from course.grading import jail as grading_jail
    cap = 1000
    for junk in (cap - 10, cap - 1, cap, cap + 5):  # the junk's end just before, at and after the bound
        reading, writing = os.pipe()
        sent = b"x" * junk + b"\n" + b'{"case": 0, "observed": 1}\n'
        writer = threading.Thread(target=lambda: (os.write(writing, sent), os.close(writing)))
        writer.start()
        line = grading_jail._line_of_case(reading, 0, cap)
        writer.join()
        os.close(reading)
        assert json.loads(line) == {"case": 0, "too_much": True}, (junk, line)
    reading, writing = os.pipe()
    os.write(writing, b"x" * 10 + b"\n" + b'{"case": 0, "observed": 1}\n')
    os.close(writing)
    assert json.loads(grading_jail._line_of_case(reading, 0, cap)) == {"case": 0, "observed": 1}
    os.close(reading)
