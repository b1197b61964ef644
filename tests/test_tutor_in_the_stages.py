"""The `offline` tutor on the tasks each chapter's "Try it" invites, worded as a learner words them.

A table of phrasings, English and Japanese, run against the real code of the stages offline; each
answer is checked against the workspace the run worked on (the files there, the text in them, what
the calculator returns), never against an answer written into the test. Then what each stage adds,
shown on the learner's own task: s03 a limit the learner sets, s04 a misspelt name recovered from
the error's hint, s05 a long task that prunes, s06 a gate that asks the learner.
"""

from __future__ import annotations

import ast
import operator
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from helpers import calls_of, load_stage
import course

pytestmark = pytest.mark.stage()  # these tests drive the stages to test the offline model; they pin none

JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


def files_in(workspace: Path) -> list[str]:
    return sorted(str(path.relative_to(workspace)) for path in Path(workspace).rglob("*") if path.is_file())


def text_of(workspace: Path, name: str) -> str:
    return (Path(workspace) / name).read_text(encoding="utf-8")


def wc_lines(text: str) -> int:
    """What ``wc -l`` says, plus a last line without a newline (the tutor says it counts so)."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def named(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w./-]){re.escape(name)}(?![\w/-]|\.\w)", text) is not None


OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def evaluated(expression: str):
    """The value of a small arithmetic expression, by its syntax tree: what the answer must hold."""
    def value(node):
        if isinstance(node, ast.BinOp):
            return OPERATORS[type(node.op)](value(node.left), value(node.right))
        return node.value
    return value(ast.parse(expression, mode="eval").body)


# ---------------------------------------------------------------- what an answer must show

def lists_every_file(result, workspace, _):
    return all(named(name, result.answer) for name in files_in(workspace))


def summarises_every_file(result, workspace, _):
    # Each file named with its line count, counted as wc -l counts: no file left out, no count off by one.
    return all(re.search(rf"{re.escape(name)}: {wc_lines(text_of(workspace, name))} (?:lines|行)", result.answer)
               for name in files_in(workspace))


def summarises_memo(result, workspace, _):
    memo = text_of(workspace, "memo.md")
    return named("memo.md", result.answer) and memo.splitlines()[0].lstrip("# ") in result.answer \
        and re.search(rf"\b{wc_lines(memo)} (?:lines|行)", result.answer) is not None


def counts_memo_lines(result, workspace, _):
    return str(wc_lines(text_of(workspace, "memo.md"))) in re.findall(r"\d+", result.answer)


def computes(expression):
    def check(result, workspace, _):
        made = [call for call in calls_of(result.messages) if call[0] == "calculate"]
        expected = evaluated(expression)
        shown = f"{expected:g}" if isinstance(expected, float) else str(expected)
        return len(made) == 1 and shown in result.answer.replace(",", "")
    return check


def wrote(path, text):
    def check(result, workspace, _):
        return (Path(workspace) / path).is_file() and text_of(workspace, path).strip() == text
    return check


def finds(word):
    def check(result, workspace, _):
        containing = {name for name in files_in(workspace) if word.lower() in text_of(workspace, name).lower()}
        return containing and {name for name in files_in(workspace) if named(name, result.answer)} == containing
    return check


def totals_sample(result, workspace, _):
    return "20000" in result.answer.replace(",", "")


def quotes_todo(result, workspace, _):
    return all(line.strip("-[]x #").strip() in result.answer
               for line in text_of(workspace, "todo.md").splitlines() if line.strip())


def lists_what_it_can_do(result, workspace, language):
    return "1250 * 16" in result.answer and not [call for call in calls_of(result.messages)]


TABLE = [
    # list
    ("en", "List the files", lists_every_file),
    ("en", "What files are in the workspace?", lists_every_file),
    ("ja", "ワークスペースのファイル一覧を見せて", lists_every_file),
    ("ja", "どんなファイルがある？", lists_every_file),
    # summarise all the files
    ("en", "Summarise all the files", summarises_every_file),
    ("en", "summarise all the files", summarises_every_file),
    ("en", "Give me a summary of every file in the workspace", summarises_every_file),
    ("en", "Summarize each file", summarises_every_file),
    ("ja", "すべてのファイルを要約して", summarises_every_file),
    ("ja", "全部のファイルをまとめて", summarises_every_file),
    ("ja", "ファイルをそれぞれ要約してください", summarises_every_file),
    # one file
    ("en", "Summarise memo.md", summarises_memo),
    ("en", "Read memo.md and give me the gist", summarises_memo),
    ("ja", "memo.md を読んで要約して", summarises_memo),
    ("ja", "memo.md の要点をまとめて", summarises_memo),
    ("en", "How many lines does memo.md have?", counts_memo_lines),
    ("en", "Count the lines of memo.md", counts_memo_lines),
    ("ja", "memo.md の行数を数えて", counts_memo_lines),
    ("ja", "memo.md は何行？", counts_memo_lines),
    ("en", "What is in todo.md?", quotes_todo),
    ("ja", "todo.md に何が書いてある？", quotes_todo),
    # arithmetic goes through calculate
    ("en", "Compute 1250 * 16", computes("1250 * 16")),
    ("en", "What is 1250 * 16?", computes("1250 * 16")),
    ("en", "Calculate (3 + 4) * 2", computes("(3 + 4) * 2")),
    ("en", "what's 120 / 8", computes("120 / 8")),
    ("ja", "1250 * 16 を計算して", computes("1250 * 16")),
    ("ja", "1250 × 16 は？", computes("1250 * 16")),
    ("ja", "12かける8はいくつ？", computes("12 * 8")),
    ("ja", "100 - 37 を計算してください", computes("100 - 37")),
    ("en", "Read sample.txt and compute the total price", totals_sample),
    ("ja", "sample.txt を読み込んで合計金額を計算してください", totals_sample),
    # given text to a named file
    ("en", "Create a file called greeting.txt that says: good morning", wrote("greeting.txt", "good morning")),
    ("en", "Create greeting.txt containing good morning", wrote("greeting.txt", "good morning")),
    ("en", "Write good morning to greeting.txt", wrote("greeting.txt", "good morning")),
    ("en", "Save \"see you tomorrow\" in notes.txt", wrote("notes.txt", "see you tomorrow")),
    ("ja", "greeting.txt に おはよう と書いて", wrote("greeting.txt", "おはよう")),
    ("ja", "「おはようございます」と greeting.txt に保存して", wrote("greeting.txt", "おはようございます")),
    ("ja", "greeting.txt というファイルを作って、中身は こんにちは にして", wrote("greeting.txt", "こんにちは")),
    # find
    ("en", "Which files mention agent?", finds("agent")),
    ("ja", "「agent」という単語を含むファイルを探して", finds("agent")),
    # outside its families: the list of what it can do, in the task's language
    ("en", "Write me a poem about the sea", lists_what_it_can_do),
    ("ja", "海についての詩を書いて", lists_what_it_can_do),
]


def test_the_table_has_forty_phrasings_in_both_languages():
    assert len(TABLE) >= 40
    assert {language for language, _, _ in TABLE} == {"en", "ja"}
    assert all(bool(JAPANESE.search(task)) == (language == "ja") for language, task, _ in TABLE)


def run_on(stage: str, task: str, workspace: Path, **options):
    if stage == "s06":
        options = {"approver": None, "audit_log": False, **options}
    result = load_stage(stage).run(task, workspace=workspace, **options)
    return SimpleNamespace(**{"explanation": "", **result}) if isinstance(result, dict) else result  # s01: a dict


@pytest.mark.parametrize("stage", ["s01", "s02", "s03", "s04", "s05", "s06"])
@pytest.mark.parametrize("language, task, check", TABLE, ids=[task for _, task, _ in TABLE])
def test_every_phrasing_completes_on_the_stage(workspace, stage, language, task, check):
    result = run_on(stage, task, workspace)
    assert result.stop_reason == "end_turn", result.explanation
    assert check(result, workspace, language), result.answer
    assert bool(JAPANESE.search(result.answer)) == (language == "ja") or check is summarises_every_file, result.answer


# ---------------------------------------------------------------- s03: a limit the learner sets

@pytest.mark.parametrize("task", ["Summarise all the files", "すべてのファイルを要約して"])
def test_a_task_longer_than_the_turns_the_learner_allows_stops_at_the_limit(workspace, task):
    s03 = load_stage("s03")
    whole = s03.run(task, workspace=workspace)
    assert whole.stop_reason == "end_turn" and whole.turns > 2
    cut = s03.run(task, workspace=workspace, limits=s03.Limits(max_turns=2))
    assert cut.stop_reason == "max_turns" and cut.turns == 2


# ---------------------------------------------------------------- s04: a misspelt name, recovered from the error

MISSPELT = [("Summarise memo.mdd", "memo.mdd", "memo.md"), ("mmo.md を要約して", "mmo.md", "memo.md"),
            ("What is in todo.mb?", "todo.mb", "todo.md"), ("Count the lines of memo.mb", "memo.mb", "memo.md"),
            ("todo.mdd に何が書いてある？", "todo.mdd", "todo.md")]


@pytest.mark.parametrize("task, typed, meant", MISSPELT)
def test_a_misspelt_name_is_recovered_from_only_by_the_errors_hint(workspace, task, typed, meant):
    recovered = run_on("s04", task, workspace)
    reads = [arguments["path"] for name, arguments in calls_of(recovered.messages) if name == "read_file"]
    assert reads == [typed, meant] and recovered.stop_reason == "end_turn"
    assert named(meant, recovered.answer), recovered.answer
    # s03's error says what failed but not how to fix it: the tutor says so instead of guessing a name.
    reported = run_on("s03", task, workspace)
    assert [arguments["path"] for name, arguments in calls_of(reported.messages) if name == "read_file"] == [typed]
    assert not named(meant, reported.answer), reported.answer


# ---------------------------------------------------------------- s05: a long task that prunes

def test_summarising_many_files_survives_the_masking_of_their_results(workspace):
    for number in range(16):
        (workspace / f"log{number:02d}.txt").write_text(
            f"Log {number}\n" + "".join(f"line {line} of log {number}: all quiet\n" for line in range(number * 10)),
            encoding="utf-8")
    result = run_on("s05", "Summarise all the files", workspace)
    assert result.stop_reason == "end_turn", result.explanation
    masked = [block for message in result.messages if message["role"] == "user" and isinstance(message["content"], list)
              for block in message["content"] if str(block.get("content", "")).startswith("[masked")]
    assert masked  # the harness did prune: the answer could not come from the masked results
    assert summarises_every_file(result, workspace, "en"), result.answer


# ---------------------------------------------------------------- s06: the gate asks the learner

def scripted(*answers):
    """An approver that answers as a person would at the prompt, one answer a question, and records what it was asked."""
    asked = []

    def approver(tool, arguments, why, covers):
        asked.append((tool, arguments))
        word, _, reason = answers[len(asked) - 1].partition(" ")
        return course_answer(word, reason)
    approver.asked = asked
    return approver


def course_answer(word: str, reason: str):
    from s06.permissions import read_answer
    return read_answer(f"{word} {reason}".strip())


GATED = [
    ("Delete todo.md", "delete_file", {"path": "todo.md"}, lambda ws: not (ws / "todo.md").exists()),
    ("todo.md を削除して", "delete_file", {"path": "todo.md"}, lambda ws: not (ws / "todo.md").exists()),
    ("Remove hello.txt", "delete_file", {"path": "hello.txt"}, lambda ws: not (ws / "hello.txt").exists()),
    ("Rename todo.md to tasks.md", "move_file", {"source": "todo.md", "destination": "tasks.md"},
     lambda ws: (ws / "tasks.md").exists() and not (ws / "todo.md").exists()),
    ("todo.md を done.md に移動して", "move_file", {"source": "todo.md", "destination": "done.md"},
     lambda ws: (ws / "done.md").exists() and not (ws / "todo.md").exists()),
    ("Overwrite hello.txt with goodbye", "write_file", {"path": "hello.txt", "content": "goodbye"},
     lambda ws: text_of(ws, "hello.txt") == "goodbye"),
    ("hello.txt を さようなら で上書きして", "write_file", {"path": "hello.txt", "content": "さようなら"},
     lambda ws: text_of(ws, "hello.txt") == "さようなら"),
    ("Run python3 --version", "run_command", {"command": "python3 --version"}, None),
]


@pytest.mark.parametrize("task, tool, arguments, done", GATED, ids=[task for task, *_ in GATED])
def test_the_gate_asks_the_learner_and_a_no_goes_back_to_the_model(workspace, task, tool, arguments, done):
    before = {name: (workspace / name).read_bytes() for name in files_in(workspace)}
    approver = scripted("no not now")
    result = run_on("s06", task, workspace, approver=approver)
    assert approver.asked == [(tool, arguments)]  # asked once, about exactly the call the task names
    assert result.stop_reason == "end_turn"
    assert {name: (workspace / name).read_bytes() for name in files_in(workspace)} == before  # nothing happened
    denial = [block for block in result.messages[-2]["content"] if block.get("type") == "tool_result"]
    assert denial and denial[0]["is_error"]  # the no went back to the model, as an error it reads
    assert re.search(r"did not happen|行われませんでした", result.answer) and "not now" in result.answer, result.answer
    assert bool(JAPANESE.search(result.answer)) == bool(JAPANESE.search(task))
    if done is not None:
        yes = scripted("yes")
        accepted = run_on("s06", task, workspace, approver=yes)
        assert yes.asked == [(tool, arguments)] and accepted.stop_reason == "end_turn"
        assert done(workspace), accepted.answer
        assert not re.search(r"did not happen|行われませんでした", accepted.answer)


@pytest.mark.parametrize("task", ["Run wc -l memo.md", "「wc -l memo.md」を実行して"])
def test_a_plain_command_the_learner_names_runs_without_asking(workspace, task):
    approver = scripted()
    result = run_on("s06", task, workspace, approver=approver)
    assert approver.asked == [] and result.stop_reason == "end_turn"
    assert calls_of(result.messages) == [("run_command", {"command": "wc -l memo.md"})]
    assert str(text_of(workspace, "memo.md").count("\n")) in result.answer


@pytest.mark.parametrize("stage", ["s03", "s04", "s05"])
@pytest.mark.parametrize("task, tool", [("Delete todo.md", "delete_file"), ("Run wc -l memo.md", "run_command"),
                                        ("Rename todo.md to tasks.md", "move_file")])
def test_a_stage_without_the_tool_gets_no_such_call(workspace, stage, task, tool):
    result = run_on(stage, task, workspace)
    assert result.stop_reason == "end_turn" and calls_of(result.messages) == []
    assert tool in result.answer and (workspace / "todo.md").exists()


@pytest.mark.parametrize("task", ["Delete todo.mb", "todo.mb を削除して"])
def test_a_misspelt_name_to_delete_is_reported_never_swapped_for_the_nearest(workspace, task):
    approver = scripted("yes", "yes")
    result = run_on("s06", task, workspace, approver=approver)
    assert [call for call in calls_of(result.messages) if call[0] == "delete_file"] == [("delete_file", {"path": "todo.mb"})]
    assert (workspace / "todo.md").exists() and result.stop_reason == "end_turn"
    assert named("todo.md", result.answer)  # the nearest name is passed on to the person, who decides
