"""The `offline` tutor: five task families, in English and Japanese, run through s01.

Every answer is checked against the workspace the run worked on (the files actually there, the
text actually in them), never against a list written into the test.
"""

from __future__ import annotations

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


# ---------------------------------------------------------------- the five families, checked against the workspace

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
