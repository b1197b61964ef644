"""The `offline` tutor: nine task families, in English and Japanese, run through s01 and s04.

Every answer is checked against the workspace the run worked on (the files actually there, the
text actually in them), never against a list written into the test.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx2
import pytest

from helpers import calls_of, load_stage, tool_uses
from course.offline import OfflineTransport

pytestmark = pytest.mark.stage()  # these tests drive a stage to test the offline model or a command; they pin none

TASKS = {
    "list": {"en": "List the files in the workspace", "ja": "ワークスペースのファイル一覧を見せてください"},
    "report": {"en": "List the files and write their count and names to report.txt",
               "ja": "作業ディレクトリのファイル一覧を取得し、ファイル数と一覧を report.txt に書いてください"},
    "total": {"en": "Read sample.txt and compute the total price", "ja": "sample.txt を読み込んで合計金額を計算してください"},
    "find": {"en": "Which files mention agent?", "ja": "「agent」という単語を含むファイルを探して"},
    "summarise": {"en": "Summarise memo.md", "ja": "memo.md を読んで要約して"},
}
LANGUAGES = ["en", "ja"]
JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


def run(task: str, workspace: Path) -> dict:
    return load_stage("s01").run(task, workspace=workspace)


def files_in(workspace: Path, *, excluding: tuple[str, ...] = ()) -> list[str]:
    return sorted(str(path.relative_to(workspace)) for path in Path(workspace).rglob("*")
                  if path.is_file() and str(path.relative_to(workspace)) not in excluding)


def names(file_name: str, text: str) -> bool:
    """Whether ``text`` names ``file_name`` as a whole name (memo.md, not memo.md.bak)."""
    return re.search(rf"(?<![\w./-]){re.escape(file_name)}(?![\w/-]|\.\w)", text) is not None


def numbers_in(text: str) -> list[int]:
    """The numbers written in ``text``, leaving out digits that are part of a name (v2.md)."""
    return [int(n) for n in re.findall(r"(?<![A-Za-z0-9_.])\d+(?!\.?[A-Za-z0-9_])", text)]


def assistant_messages(result: dict) -> list[dict]:
    return [m for m in result["messages"] if m["role"] == "assistant"]


def assert_in_the_task_language(answer: str, language: str) -> None:
    assert bool(JAPANESE.search(answer)) == (language == "ja"), answer


# ---------------------------------------------------------------- the first five families, checked against the workspace

@pytest.mark.parametrize("language", LANGUAGES)
def test_listing_names_every_file_in_the_workspace(workspace, language):
    result = run(TASKS["list"][language], workspace)
    assert result["stop_reason"] == "end_turn"
    present = files_in(workspace)
    assert present
    assert all(names(name, result["answer"]) for name in present), result["answer"]
    assert len(present) in numbers_in(result["answer"])
    assert_in_the_task_language(result["answer"], language)


@pytest.mark.parametrize("language", LANGUAGES)
def test_report_holds_the_count_and_every_name(workspace, language):
    result = run(TASKS["report"][language], workspace)
    assert result["stop_reason"] == "end_turn"
    report = workspace / "report.txt"
    assert report.is_file()
    listed = files_in(workspace, excluding=("report.txt",))
    text = report.read_text(encoding="utf-8")
    assert all(names(name, text) for name in listed), text
    assert numbers_in(text) == [len(listed)], text  # the count, and no other number
    assert_in_the_task_language(result["answer"], language)


@pytest.mark.parametrize("language", LANGUAGES)
def test_total_of_sample_txt_is_20000(workspace, language):
    # The order of "Building an AI agent without a framework": unit price 1250 yen, quantity 16.
    result = run(TASKS["total"][language], workspace)
    assert result["stop_reason"] == "end_turn"
    assert "20000" in result["answer"].replace(",", "")
    assert_in_the_task_language(result["answer"], language)


@pytest.mark.parametrize("language", LANGUAGES)
def test_find_names_exactly_the_files_that_contain_the_word(workspace, language):
    result = run(TASKS["find"][language], workspace)
    assert result["stop_reason"] == "end_turn"
    containing = {name for name in files_in(workspace)
                  if "agent" in (workspace / name).read_text(encoding="utf-8").lower()}
    assert containing and containing != set(files_in(workspace))  # the check can tell right from wrong
    named = {name for name in files_in(workspace) if names(name, result["answer"])}
    assert named == containing, result["answer"]
    assert_in_the_task_language(result["answer"], language)


@pytest.mark.parametrize("language", LANGUAGES)
def test_summary_names_the_file_it_read(workspace, language):
    result = run(TASKS["summarise"][language], workspace)
    assert result["stop_reason"] == "end_turn"
    assert names("memo.md", result["answer"])
    title = (workspace / "memo.md").read_text(encoding="utf-8").splitlines()[0].lstrip("# ")
    assert title in result["answer"]
    assert_in_the_task_language(result["answer"], language)


# ---------------------------------------------------------------- how it calls tools

@pytest.mark.parametrize("family", sorted(TASKS))
@pytest.mark.parametrize("language", LANGUAGES)
def test_says_why_before_each_tool_call(workspace, family, language):
    result = run(TASKS[family][language], workspace)
    calling = [message for message in assistant_messages(result) if tool_uses(message)]
    assert calling
    for message in calling:
        kinds = [block["type"] for block in message["content"]]
        assert kinds[0] == "text" and message["content"][0]["text"].strip()
        assert kinds[1:] and set(kinds[1:]) == {"tool_use"}


def test_reads_two_named_files_in_parallel(workspace):
    result = run("Summarise memo.md and hello.txt", workspace)
    first = assistant_messages(result)[0]
    assert calls_of(first) == [("read_file", {"path": "memo.md"}), ("read_file", {"path": "hello.txt"})]
    answered = [block["tool_use_id"] for block in result["messages"][2]["content"]]
    assert answered == [call["id"] for call in tool_uses(first)]
    assert result["stop_reason"] == "end_turn" and result["turns"] == 2
    assert names("memo.md", result["answer"]) and names("hello.txt", result["answer"])


@pytest.mark.parametrize("task", ["What is the capital of France?", "Write me a poem about the sea"])
def test_answers_a_task_outside_its_families_in_plain_text(workspace, task):
    result = run(task, workspace)
    assert result["turns"] == 1 and result["stop_reason"] == "end_turn"
    assert [block["type"] for block in result["messages"][-1]["content"]] == ["text"]
    assert "offline tutor" in result["answer"]
    assert "ANTHROPIC_API_KEY" in result["answer"]


def test_answers_a_japanese_task_outside_its_families_in_japanese(workspace):
    result = run("今日の天気を教えてください", workspace)
    assert result["turns"] == 1 and result["stop_reason"] == "end_turn"
    assert "ANTHROPIC_API_KEY" in result["answer"]
    assert_in_the_task_language(result["answer"], "ja")


# ---------------------------------------------------------------- answers come from tool results, not assumptions

@pytest.fixture
def other_workspace(tmp_path):
    """A workspace that shares no file with the sample one."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "invoice.txt").write_text("Order: unit price 300 yen, quantity 7.\n", encoding="utf-8")
    (folder / "notes.md").write_text("# Quarterly plan\n\nThe deadline moved to June.\n", encoding="utf-8")
    (folder / "plan.json").write_text('{"deadline": "June", "owner": "kim"}\n', encoding="utf-8")
    (folder / "budget.csv").write_text("item,cost\nservers,120\n", encoding="utf-8")
    return folder


def test_listing_follows_the_workspace_it_is_given(other_workspace, workspace):
    answer = run(TASKS["list"]["en"], other_workspace)["answer"]
    assert all(names(name, answer) for name in files_in(other_workspace)), answer
    assert not any(names(name, answer) for name in files_in(workspace)), answer


def test_report_follows_the_workspace_it_is_given(other_workspace):
    run(TASKS["report"]["en"], other_workspace)
    text = (other_workspace / "report.txt").read_text(encoding="utf-8")
    listed = files_in(other_workspace, excluding=("report.txt",))
    assert all(names(name, text) for name in listed), text
    assert numbers_in(text) == [len(listed)]
    assert "memo.md" not in text


def test_total_is_computed_from_the_file_it_read(other_workspace):
    answer = run("Read invoice.txt and compute the total price", other_workspace)["answer"]
    assert str(300 * 7) in answer
    assert "20000" not in answer


def test_find_follows_the_text_of_the_workspace_it_is_given(other_workspace):
    answer = run("Which files mention deadline?", other_workspace)["answer"]
    containing = {name for name in files_in(other_workspace)
                  if "deadline" in (other_workspace / name).read_text(encoding="utf-8").lower()}
    assert {name for name in files_in(other_workspace) if names(name, answer)} == containing == {"notes.md", "plan.json"}


def test_summary_comes_from_the_file_it_read(other_workspace):
    answer = run("Summarise notes.md", other_workspace)["answer"]
    assert names("notes.md", answer) and "Quarterly plan" in answer


def test_reports_a_file_it_could_not_read_instead_of_inventing_it(workspace):
    result = run("Summarise missing.txt", workspace)
    assert result["stop_reason"] == "end_turn"
    results = [block for m in result["messages"] if m["role"] == "user" and isinstance(m["content"], list)
               for block in m["content"]]
    assert results and all(block["is_error"] for block in results)
    assert "could not" in result["answer"].lower()
    assert "missing.txt" in result["answer"]
    assert "lines" not in result["answer"] and "opens with" not in result["answer"]
    assert not (workspace / "missing.txt").exists()


# ---------------------------------------------------------------- nothing but the request

def request_body(messages: list) -> dict:
    s01 = load_stage("s01")
    return {"model": "offline", "max_tokens": s01.MAX_TOKENS, "system": s01.SYSTEM_PROMPT,
            "tools": s01.TOOLS, "messages": messages}


def post(transport: OfflineTransport, body: dict) -> dict:
    response = httpx2.Client(transport=transport).post("http://offline.invalid/v1/messages", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_the_same_request_gets_the_same_reply_from_the_transport(workspace):
    history = run(TASKS["report"]["en"], workspace)["messages"][:3]  # the task, the list_files call, its result
    body = request_body(history)
    transport = OfflineTransport()
    first = post(transport, body)
    post(transport, request_body([{"role": "user", "content": "Which files mention agent?"}]))  # something else between
    assert post(transport, body) == first == post(OfflineTransport(), body)
    assert [block["type"] for block in first["content"]] == ["text", "tool_use"]
    assert first["content"][1]["name"] == "write_file"  # it read the history: the listing is done


def test_answers_from_the_tool_result_in_the_history_not_from_the_disk():
    listing = {"type": "tool_use", "id": "toolu_listing", "name": "list_files", "input": {"path": "."}}
    body = request_body([
        {"role": "user", "content": "List the files"},
        {"role": "assistant", "content": [{"type": "text", "text": "I'll look."}, listing]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_listing",
                                      "content": "alpha.txt\nbeta.md\ngamma.py"}]},
    ])
    answer = "".join(block["text"] for block in post(OfflineTransport(), body)["content"])
    assert all(names(name, answer) for name in ("alpha.txt", "beta.md", "gamma.py"))
    assert 3 in numbers_in(answer)
    assert "memo.md" not in answer


# ---------------------------------------------------------------- every family, several wordings, through s04
#
# Each row: the family, the task's language, the task, and what the answer is checked against
# (a file, a unit, a word, a key, a text), read from the workspace when the check runs.

PHRASINGS = [
    ("list", "en", "List the files in the workspace", None),
    ("list", "en", "What files are there?", None),
    ("list", "en", "Show me the files in the workspace", None),
    ("list", "en", "How many files are in the workspace?", None),
    ("list", "ja", "ワークスペースのファイル一覧を見せてください", None),
    ("list", "ja", "どんなファイルがある？", None),
    ("list", "ja", "ファイルを一覧表示して", None),
    ("list", "ja", "ワークスペースには何がありますか？", None),
    ("summarise", "en", "Summarise memo.md", "memo.md"),
    ("summarise", "en", "Give me a summary of memo.md", "memo.md"),
    ("summarise", "en", "Read todo.md and summarise it", "todo.md"),
    ("summarise", "en", "What is memo.md about?", "memo.md"),
    ("summarise", "ja", "memo.md を要約して", "memo.md"),
    ("summarise", "ja", "todo.md の要点をまとめて", "todo.md"),
    ("summarise", "ja", "memo.md の概要を教えて", "memo.md"),
    ("report", "en", "List the files and write their count and names to report.txt", None),
    ("report", "en", "Write the list of files and how many there are to report.txt", None),
    ("report", "en", "Save a file list with the count in report.txt", None),
    ("report", "ja", "ファイル一覧を作って report.txt に件数と名前を書いて", None),
    ("report", "ja", "ファイルの数と名前を report.txt に保存して", None),
    ("report", "ja", "report.txt にファイル一覧と件数を書き込んで", None),
    ("total", "en", "Read sample.txt and compute the total price", "sample.txt"),
    ("total", "en", "What is the total in sample.txt?", "sample.txt"),
    ("total", "en", "How much does the order in sample.txt cost?", "sample.txt"),
    ("total", "ja", "sample.txt を読んで合計金額を計算して", "sample.txt"),
    ("total", "ja", "sample.txt の合計はいくら？", "sample.txt"),
    ("total", "ja", "sample.txt の注文の総額を出して", "sample.txt"),
    ("find", "en", "Which files mention agent?", "agent"),
    ("find", "en", "Find the files that contain the word loop", "loop"),
    ("find", "en", "Search the workspace for stop", "stop"),
    ("find", "en", "Which files talk about tokens?", "tokens"),
    ("find", "ja", "「agent」という単語を含むファイルを探して", "agent"),
    ("find", "ja", "loop を含むファイルはどれ？", "loop"),
    ("find", "ja", "stop が出てくるファイルを検索して", "stop"),
    ("find", "ja", "どのファイルに agent と書いてある？", "agent"),
    ("count", "en", "Count the words in memo.md", ("memo.md", "words")),
    ("count", "en", "How many lines are in todo.md?", ("todo.md", "lines")),
    ("count", "en", "What is the word count of hello.txt?", ("hello.txt", "words")),
    ("count", "en", "How many characters are in hello.txt?", ("hello.txt", "characters")),
    ("count", "en", "Tell me the number of lines in memo.md", ("memo.md", "lines")),
    ("count", "ja", "memo.md の単語数を数えて", ("memo.md", "words")),
    ("count", "ja", "todo.md は何行ある？", ("todo.md", "lines")),
    ("count", "ja", "hello.txt の行数を教えて", ("hello.txt", "lines")),
    ("count", "ja", "hello.txt の文字数を数えて", ("hello.txt", "characters")),
    ("count", "ja", "memo.md は何語ある？", ("memo.md", "words")),
    ("count", "ja", "memo.md には単語がいくつありますか？", ("memo.md", "words")),
    ("write", "en", "Write hello to greeting.txt", ("greeting.txt", "hello")),
    ("write", "en", "Put hello world in greeting.txt", ("greeting.txt", "hello world")),
    ("write", "en", "Create a file called notes.txt containing buy milk", ("notes.txt", "buy milk")),
    ("write", "en", "Save the text 'Hello, world!' to greeting.txt", ("greeting.txt", "Hello, world!")),
    ("write", "en", "Create greeting.txt and write hello in it", ("greeting.txt", "hello")),
    ("write", "ja", "greeting.txt に hello と書いて", ("greeting.txt", "hello")),
    ("write", "ja", "hello を greeting.txt に保存して", ("greeting.txt", "hello")),
    ("write", "ja", "notes.txt に「牛乳を買う」と書き込んでください", ("notes.txt", "牛乳を買う")),
    ("write", "ja", "greeting.txt というファイルを作って こんにちは と書いて", ("greeting.txt", "こんにちは")),
    ("write", "ja", "greeting.txt というファイルに hello と書いてください", ("greeting.txt", "hello")),
    ("field", "en", "Read config.json and tell me the project name", "project"),
    ("field", "en", "What is the version in config.json?", "version"),
    ("field", "en", "How many retries does config.json allow?", "max_retries"),
    ("field", "en", "Get the language from config.json", "language"),
    ("field", "ja", "config.json の version を教えて", "version"),
    ("field", "ja", "config.json を読んでプロジェクト名を教えて", "project"),
    ("field", "ja", "config.json の最大リトライ回数は？", "max_retries"),
    ("field", "ja", "config.json に書かれている言語は？", "language"),
    ("question", "en", "What is in todo.md?", ("todo.md", None)),
    ("question", "en", "What does hello.txt say?", ("hello.txt", None)),
    ("question", "en", "Show me todo.md", ("todo.md", None)),
    ("question", "en", "What is the next step in memo.md?", ("memo.md", "Next step")),
    ("question", "en", "What is left to do in todo.md?", ("todo.md", "[ ]")),
    ("question", "ja", "todo.md に何が書いてある？", ("todo.md", None)),
    ("question", "ja", "hello.txt の中身を見せて", ("hello.txt", None)),
    ("question", "ja", "todo.md の内容を教えて", ("todo.md", None)),
    ("question", "ja", "memo.md の次のステップは？", ("memo.md", "Next step")),
    ("question", "ja", "todo.md でまだ終わっていないことは？", ("todo.md", "[ ]")),
]


def real_count(text: str, unit: str) -> int:
    """What wc counts: lines of text, runs of characters between white space, characters."""
    return {"lines": len(text.splitlines()), "words": len(text.split()), "characters": len(text)}[unit]


def check_list(result, workspace, before, _):
    assert all(names(name, result["answer"]) for name in before), result["answer"]
    assert len(before) in numbers_in(result["answer"])


def check_summary(result, workspace, before, path):
    title = before[path].splitlines()[0].lstrip("# ")
    assert names(path, result["answer"]) and title in result["answer"], result["answer"]


def check_report(result, workspace, before, _):
    text = (workspace / "report.txt").read_text(encoding="utf-8")
    assert all(names(name, text) for name in before), text
    assert numbers_in(text) == [len(before)], text


def check_total(result, workspace, before, path):
    price = int(re.search(r"unit price\D*(\d+)", before[path]).group(1))
    quantity = int(re.search(r"quantity\D*(\d+)", before[path]).group(1))
    assert price * quantity in numbers_in(result["answer"]), result["answer"]


def check_find(result, workspace, before, word):
    containing = {name for name, text in before.items() if word.lower() in text.lower()}
    assert containing and containing != set(before)  # the check can tell right from wrong
    assert {name for name in before if names(name, result["answer"])} == containing, result["answer"]


def check_count(result, workspace, before, spec):
    path, unit = spec
    counts = {other: real_count(before[path], other) for other in ("lines", "words", "characters")}
    assert len(set(counts.values())) == 3  # a count of the wrong unit would not pass
    assert names(path, result["answer"])
    assert counts[unit] in numbers_in(result["answer"]), (counts, result["answer"])
    assert not {counts[other] for other in counts if other != unit} & set(numbers_in(result["answer"]))


def check_write(result, workspace, before, spec):
    path, text = spec
    assert path not in before
    assert (workspace / path).read_text(encoding="utf-8") == text
    assert set(files_in(workspace)) == set(before) | {path}
    assert all((workspace / name).read_text(encoding="utf-8") == data for name, data in before.items())


def check_field(result, workspace, before, key):
    fields = json.loads(before["config.json"])
    assert json.dumps(fields[key], ensure_ascii=False) in result["answer"], result["answer"]
    others = [json.dumps(value) for name, value in fields.items() if name != key]
    assert not any(re.search(rf"(?<![\w.]){re.escape(value)}(?![\w.])", result["answer"]) for value in others), result["answer"]


def check_question(result, workspace, before, spec):
    path, about = spec
    lines = [line for line in before[path].splitlines() if line.strip()]
    wanted = [line for line in lines if about is None or about in line]
    assert wanted and all(line in result["answer"] for line in wanted), result["answer"]
    if about is not None:
        assert len(wanted) < len(lines)
        assert not any(line in result["answer"] for line in lines if line not in wanted), result["answer"]


CHECKS = {"list": check_list, "summarise": check_summary, "report": check_report, "total": check_total,
          "find": check_find, "count": check_count, "write": check_write, "field": check_field,
          "question": check_question}


def test_the_table_has_three_wordings_of_every_family_in_each_language():
    for family in CHECKS:
        for language in LANGUAGES:
            assert len([row for row in PHRASINGS if row[:2] == (family, language)]) >= 3, (family, language)


@pytest.mark.parametrize("family, language, task, expected", PHRASINGS,
                         ids=[f"{row[0]}-{row[1]}-{index}" for index, row in enumerate(PHRASINGS)])
def test_every_wording_of_a_family_completes_on_s04(workspace, family, language, task, expected):
    before = {name: (workspace / name).read_text(encoding="utf-8") for name in files_in(workspace)}
    result = vars(load_stage("s04").run(task, workspace=workspace))
    assert result["stop_reason"] == "end_turn", result["answer"]
    CHECKS[family](result, workspace, before, expected)
    assert_in_the_task_language(result["answer"], language)
    calling = [message for message in assistant_messages(result) if tool_uses(message)]
    assert calling, "it answered without looking"
    for message in calling:  # it says why before each call
        assert message["content"][0]["type"] == "text" and message["content"][0]["text"].strip()


# ---------------------------------------------------------------- the new families, beyond the sample workspace

def test_the_model_name_is_the_model_field_not_the_name_field(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(
        {"name": "greeter", "model": "claude-haiku-4-5", "max_tokens": 512}), encoding="utf-8")
    for task in ("Read config.json and tell me the model name", "config.json のモデル名を教えて"):
        answer = vars(load_stage("s04").run(task, workspace=tmp_path))["answer"]
        assert '"claude-haiku-4-5"' in answer and "greeter" not in answer, answer


def test_a_field_that_is_not_there_is_said_to_be_missing_and_the_fields_listed(workspace):
    fields = json.loads((workspace / "config.json").read_text(encoding="utf-8"))
    assert "model" not in fields
    answer = vars(load_stage("s04").run("Read config.json and tell me the model name", workspace=workspace))["answer"]
    assert "no field" in answer
    assert all(name in answer and json.dumps(value) in answer for name, value in fields.items()), answer


def test_a_long_file_is_counted_whole_by_reading_on_where_the_cut_says(tmp_path):
    s04 = load_stage("s04")
    text = "".join(f"line {number} has five words\n" for number in range(1, 1001))
    assert len(text) > 3 * s04.MAX_RESULT_CHARS
    (tmp_path / "long.txt").write_text(text, encoding="utf-8")
    result = vars(s04.run("Count the words in long.txt", workspace=tmp_path))
    assert real_count(text, "words") in numbers_in(result["answer"]), result["answer"]
    offsets = [call[1].get("offset", 0) for call in calls_of(result["messages"]) if call[0] == "read_file"]
    assert offsets == list(range(0, len(text), s04.MAX_RESULT_CHARS))


def test_adding_to_a_file_keeps_what_it_held(workspace):
    before = (workspace / "hello.txt").read_text(encoding="utf-8")
    for task in ('Append "see you" to hello.txt', "hello.txt に bye と追記して"):
        result = vars(load_stage("s04").run(task, workspace=workspace))
        assert result["stop_reason"] == "end_turn"
    assert (workspace / "hello.txt").read_text(encoding="utf-8") == before + "see you\nbye\n"


def test_adding_to_a_file_that_is_not_there_makes_it(workspace):
    result = vars(load_stage("s04").run("Append bye to greeting.txt", workspace=workspace))
    assert result["stop_reason"] == "end_turn"
    assert (workspace / "greeting.txt").read_text(encoding="utf-8") == "bye"


def test_the_text_to_write_comes_from_the_task(tmp_path):
    for text in ("first", "something else entirely"):
        load_stage("s01").run(f"Write {text} to out.txt", workspace=tmp_path)
        assert (tmp_path / "out.txt").read_text(encoding="utf-8") == text


@pytest.mark.parametrize("task, language", [("Translate memo.md into French", "en"),
                                            ("memo.md をフランス語に翻訳して", "ja")])
def test_a_task_it_cannot_do_gets_the_list_of_what_it_can_in_the_task_language(workspace, task, language):
    result = run(task, workspace)
    assert result["turns"] == 1 and not tool_uses(result["messages"])
    assert_in_the_task_language(result["answer"], language)
    for example in ("report.txt", "sample.txt", "todo.md", "config.json", "greeting.txt"):
        assert example in result["answer"], example


@pytest.mark.parametrize("task, needed", [("Write hello to greeting.txt", "write_file"),
                                          ("Count the words in memo.md", "read_file"),
                                          ("config.json の version を教えて", "read_file")])
def test_it_uses_only_the_tools_the_request_offers(task, needed):
    body = request_body([{"role": "user", "content": task}])
    body["tools"] = [tool for tool in body["tools"] if tool["name"] != needed]
    reply = post(OfflineTransport(), body)
    assert [block["type"] for block in reply["content"]] == ["text"]
    assert needed in reply["content"][0]["text"]
