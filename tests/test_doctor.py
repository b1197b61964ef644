"""`python -m course doctor`: each offline model diagnosed as what it is, in a table that fits 80 columns."""

from __future__ import annotations

import json

import pytest

import course
from course.lab import doctor
from course.__main__ import main
from course.offline import ApiError, known_models


def verdict(model: str) -> dict[str, str]:
    """{check: "ok yes" / "!! no" / "-"}: what the table's result column says, for ``model``."""
    checks = doctor.diagnose(model).checks
    return {check.name: check.value if check.good is None else ("ok " if check.good else "!! ") + check.value
            for check in checks}


HEALTHY = {
    "answers at all": "ok yes", "returns tool_use blocks": "ok yes", "calls two tools in one reply": "ok yes",
    "uses the names the task gives": "ok yes", "ends its turn": "ok yes", "answers from a tool result": "ok yes",
    "writes calls as text": "ok no", "echoes the prompt": "ok no", "recovers from an actionable error": "ok yes",
}


def test_the_tutor_passes_every_check():
    assert verdict("offline") == HEALTHY


def test_the_echoing_model_is_diagnosed_as_echoing_its_prompt_and_cut():
    seen = verdict("offline-echo")
    assert seen["echoes the prompt"] == "!! yes" and seen["ends its turn"] == "!! no"
    assert seen["returns tool_use blocks"] == "!! no" and seen["writes calls as text"] == "ok no"


def test_the_rambling_model_is_diagnosed_as_cut_after_a_complete_call_and_not_as_an_echo():
    diagnosis = doctor.diagnose("offline-ramble")
    seen = {check.name: check for check in diagnosis.checks}
    assert seen["returns tool_use blocks"].good and seen["recovers from an actionable error"].good
    assert not seen["ends its turn"].good and seen["ends its turn"].saw.startswith("cut after a full call")
    assert seen["echoes the prompt"].good and seen["writes calls as text"].good


def test_the_rambling_text_model_is_diagnosed_as_writing_calls_as_text_then_cut():
    diagnosis = doctor.diagnose("offline-ramble-text")
    seen = {check.name: check for check in diagnosis.checks}
    assert (seen["returns tool_use blocks"].value, seen["writes calls as text"].value) == ("no", "yes")
    assert seen["ends its turn"].saw.startswith("cut after a full call") and seen["echoes the prompt"].good


def test_the_stubborn_model_is_diagnosed_as_ignoring_the_hint():
    seen = {check.name: check for check in doctor.diagnose("offline-stubborn").checks}
    assert not seen["recovers from an actionable error"].good
    assert seen["recovers from an actionable error"].saw == "sent read_file meom.md again"
    assert seen["returns tool_use blocks"].good and seen["ends its turn"].good


def test_the_typo_model_takes_the_same_hint():
    assert verdict("offline-typo")["recovers from an actionable error"] == "ok yes"


def test_the_borrowing_model_is_diagnosed_as_reading_the_example_and_repeating_the_result():
    seen = {check.name: check for check in doctor.diagnose("offline-borrowing").checks}
    assert (seen["uses the names the task gives"].good, seen["uses the names the task gives"].saw) == (
        False, f"read {doctor.EXAMPLE_FILE}: an example")
    assert seen["answers from a tool result"].saw == "repeated the tool result back"
    assert seen["returns tool_use blocks"].good and seen["echoes the prompt"].good


def test_the_text_calls_model_is_diagnosed_as_writing_calls_as_text():
    seen = verdict("offline-text-calls")
    assert (seen["returns tool_use blocks"], seen["writes calls as text"], seen["echoes the prompt"]) == (
        "!! no", "!! yes", "ok no")


@pytest.mark.parametrize("model", [model.replace("-N", "-5") for model in known_models()])
def test_every_offline_model_gets_a_table_within_80_columns(model):
    table = doctor.table(doctor.diagnose(model))
    assert all(len(line) <= 80 for line in table.splitlines()), table
    assert table.startswith(f"course doctor: {model} (the offline model, in process)")
    assert ("Every check passed" in table) != ("!! " in table)


def test_copied_share_counts_the_runs_of_words_found_in_the_source():
    source = "You are an agent working in a small project folder, the workspace."
    assert doctor.copied_share(source + " " + source, source) == pytest.approx(
        14 / 19)  # 24 words make 19 runs of six; the 5 that straddle the two copies are not in the source
    assert doctor.copied_share("The workspace holds 5 files: memo.md and todo.md.", source) == 0
    assert doctor.copied_share("memo.md\ntodo.md", "memo.md todo.md sample.txt") == 1
    assert doctor.copied_share("", source) == 0


def test_calls_in_text_reads_json_calls_to_the_offered_tools_only():
    text = 'I will list.\n{"name": "list_files", "arguments": {"path": "."}}\n{"name": "rm", "arguments": {}} {oops'
    assert doctor.calls_in_text(text) == [("list_files", {"path": "."})]


def test_a_model_that_does_not_answer_is_one_line_naming_the_server():
    client = course.make_client("offline", faults=course.Faults(rate=1.0, kinds=("overloaded",)), max_retries=0)
    with pytest.raises(course.CourseError, match=r"^offline on the offline model, in process did not answer: "
                                                 r"the API answered 529"):
        doctor.diagnose("offline", client=client)


def test_a_later_request_the_server_rejects_is_a_row_of_the_table():
    def no_tools(body):
        if body.get("tools"):
            raise ApiError(400, "invalid_request_error", "tools are not supported")
        return [{"type": "text", "text": "Hello there."}]

    diagnosis = doctor.diagnose("local", client=course.make_client(behaviour=no_tools, max_retries=0))
    seen = {check.name: check for check in diagnosis.checks}
    assert seen["answers at all"].good
    assert not seen["returns tool_use blocks"].good and "tools are not supported" in seen["returns tool_use blocks"].saw
    assert not diagnosis.healthy


def test_doctor_command_exits_0_when_healthy_1_when_not_and_prints_json(capsys):
    assert main(["doctor"]) == 0
    assert "Every check passed" in capsys.readouterr().out
    assert main(["doctor", "--model", "offline-echo", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["model"] == "offline-echo" and not report["healthy"] and len(report["seconds"]) == 5
    assert {"check": "echoes the prompt", "value": "yes", "good": False} .items() <= next(
        check for check in report["checks"] if check["check"] == "echoes the prompt").items()


def test_doctor_command_asks_for_the_local_model_name(monkeypatch, capsys):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://localhost:8080")
    assert main(["doctor"]) == 2
    assert capsys.readouterr().err.startswith("error: ANTHROPIC_BASE_URL is set: name the local model")


def test_doctor_command_names_an_unknown_offline_model(capsys):
    assert main(["doctor", "--model", "offline-nonesuch"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "offline-echo" in err


@pytest.mark.parametrize("offline_model, echoes", [("offline-echo", "yes"), ("offline", "no")])
def test_the_doctor_reaches_a_local_server_through_anthropic_base_url(monkeypatch, offline_model, echoes):
    """Real HTTP on loopback, a model name the course does not know: the path a learner's llama.cpp takes."""
    from local_server import serving

    with serving(offline_model) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        diagnosis = doctor.diagnose("gemma-3-270m")
    assert diagnosis.where == f"the server at {url}"
    assert {check.name: check.value for check in diagnosis.checks}["echoes the prompt"] == echoes


def test_the_docs_placeholder_shows_the_doctor_of_one_model_or_a_table_of_several():
    from helpers import load_hook
    hook = load_hook()
    one = hook.expand("<!-- doctor offline-stubborn -->\n")
    assert one.startswith("```text\ncourse doctor: offline-stubborn") and "sent read_file meom.md again" in one
    table = hook.expand("<!-- doctor offline offline-echo -->\n").splitlines()
    assert table[0] == "| check | `offline` | `offline-echo` |"
    assert "| echoes the prompt | ok no | **!!** yes |" in table
    with pytest.raises(Exception, match="offline model ids"):
        hook.expand("<!-- doctor claude-sonnet-5 -->\n")


def test_a_call_whose_input_is_not_an_object_is_judged_not_crashed_on():
    def odd(body):
        return [{"type": "tool_use", "id": "toolu_odd", "name": "read_file", "input": "memo.md"}] if body.get("tools") \
            else [{"type": "text", "text": "Hello."}]

    seen = {check.name: check for check in doctor.diagnose("local", client=course.make_client(behaviour=odd)).checks}
    assert seen["returns tool_use blocks"].good and seen["uses the names the task gives"].saw == "a call with no path"


def test_doctor_command_says_in_one_line_that_no_server_answers(monkeypatch, capsys):
    import socket
    with socket.socket() as probe:  # a loopback port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    assert main(["doctor", "--model", "local"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: local on the server at http://127.0.0.1:{port} did not "
                                                   "answer: could not reach the API")
