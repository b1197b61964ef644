"""No case of a copy reaches another case, on disk or through what the cases report: each case's fork
writes in its own case folder only (a Landlock layer of its own), that folder is removed before the next
case's fork begins, and the fork reports through a pipe of its own, of which the process that drives the
cases keeps the first line that names that case. The fork holds no descriptor of the observations file.

The attacks these pin: a case appended its inputs to a file in the scratch folder and a later case answered
from them (the cases are drawn in related sets, so the others' inputs give the answer away); a case
truncated the shared observations file and wrote every other case's line, undoing "first line wins". Each
attack runs with the region check off: the confinement and the pipes alone are what hold.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from course.grading import grade as grading
from test_grading import make_copy, needs_confinement, reference_body

pytestmark = pytest.mark.stage()  # grades copies: it pins the grader, no stage

SEED = 20261202

# Each attack first finds its own case's index in the frames that drive it, as the attacks did.
FINDS_ITS_CASE = """
    import json, os, sys
    frame, mine = sys._getframe(), None
    while frame is not None:
        if frame.f_code.co_name == "_one_case":
            mine = frame.f_locals["index"]
        frame = frame.f_back
"""

# On every descriptor it holds, tries to rewind, truncate and write a wrong line for every other case; then
# answers its own case rightly. Were any forged line kept, the cases it names would fail.
FORGES = FINDS_ITS_CASE + """
    print(f"FORGER {mine}")
    forged = "".join(json.dumps({"case": other, "observed": ["max_turns", "forged"]}) + "\\n"
                     for other in range(40) if other != mine).encode()
    for descriptor in range(3, 256):
        for attempt in (lambda: os.ftruncate(descriptor, 0), lambda: os.lseek(descriptor, 0, 0),
                        lambda: os.write(descriptor, forged)):
            try:
                attempt()
            except OSError:
                pass
"""

# Leaves a note wherever it may and reads every note the scratch folder holds: a note from another case
# is what a case could answer from.
LEAVES_NOTES = """
    import json, os
    from pathlib import Path
    root = Path.cwd().parent if Path.cwd().name.startswith("case-") else Path.cwd()
    seen = sorted(path.read_text() for path in root.rglob("note-*.txt"))
    me = os.urandom(8).hex()
    tried = {}
    for where in (Path.cwd(), root, root / "tmp", Path(os.environ["HOME"]), Path(os.environ["TMPDIR"])):
        try:
            (where / f"note-{me}.txt").write_text(me)
            tried[str(where.relative_to(root))] = "wrote"
        except OSError as error:
            tried[str(where.relative_to(root))] = type(error).__name__
    print("NOTES " + json.dumps({"seen": [note for note in seen if note != me], "tried": tried}))
    return None
"""


# The first case writes one line that is its own (valid JSON: a carriage return is whitespace inside an
# array) but holds, between raw carriage returns, a wrong line for every other case (each with a raw line
# separator in a string): were the line split anywhere but at "\n", the others would be judged on those.
FORGES_INSIDE_ITS_OWN_LINE = FINDS_ITS_CASE + """
    if mine == 0:
        cut = chr(13)  # a carriage return: whitespace to JSON, a line's end to str.splitlines
        inside = "".join(f",{cut}" + json.dumps({"case": other, "observed": ["FORGED", chr(0x2028)]}) + cut
                         for other in range(1, 40))
        line = '{"case": 0, "observed": [null' + inside + ']}' + chr(10)
        json.loads(line)  # one line, and valid: the case's own
        for descriptor in range(3, 256):
            try:
                os.write(descriptor, line.encode())
            except OSError:
                pass
"""


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Both attacks, graded in one run (a graded copy costs about a second)."""
    base = tmp_path_factory.mktemp("cases")
    right = textwrap.dedent(reference_body("s03", 1))
    copies = [("forger", "s03", make_copy(base / "forger" / "s03", "s03", {1: textwrap.dedent(FORGES) + right})),
              ("notes", "s03", make_copy(base / "notes" / "s03", "s03", {1: LEAVES_NOTES})),
              ("inside", "s03", make_copy(base / "inside" / "s03", "s03",
                                          {1: textwrap.dedent(FORGES_INSIDE_ITS_OWN_LINE) + right}))]
    grades = grading.grade_copies(copies, grading.Options(seed=SEED, jobs=2, check_regions=False))
    return {grade.student: next(result for result in grade.results if result.exercise.number == 1) for grade in grades}


@needs_confinement
def test_a_case_cannot_rewrite_the_lines_of_the_other_cases(graded):
    result = graded["forger"]
    forgers = [line for line in result.printed.splitlines() if line.startswith("FORGER ")]
    assert len(forgers) == len(grading.draw_cases("s03", 1, SEED)), result.printed  # every case forged
    assert "FORGER None" not in forgers  # and knew which case it was, so forged only the others
    assert result.passed and result.points == result.max_points, result.reason


@needs_confinement
def test_a_case_reads_no_file_another_case_wrote_and_writes_only_in_its_own_folder(graded):
    result = graded["notes"]
    notes = [json.loads(line[6:]) for line in result.printed.splitlines() if line.startswith("NOTES ")]
    assert len(notes) == len(grading.draw_cases("s03", 1, SEED)), result.printed
    for note in notes:
        assert note["seen"] == [], note  # no note of an earlier case was left to read
        own = [where for where in note["tried"] if where.startswith("case-")]
        assert own and all(note["tried"][where] == "wrote" for where in own), note  # its own folder is its home
        assert note["tried"]["."] == "PermissionError" and note["tried"]["tmp"] == "PermissionError", note


@needs_confinement
def test_a_line_with_other_cases_inside_it_decides_only_its_own_case(graded):
    result = graded["inside"]
    failed = [case for case in result.cases if not case.passed]
    assert len(result.cases) == len(grading.draw_cases("s03", 1, SEED)) and len(failed) == 1, result.cases
    assert "FORGED" not in " ".join(case.reason for case in result.cases)
