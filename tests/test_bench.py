"""The token benchmark: s05 bills less than s04 and grows more slowly, and the plot shows one line per stage."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import pytest

from course import bench, runlog
from course.__main__ import main
from course.models import CourseError
from course.svgplot import line_chart, nice_step, short_number, tick_values

SVG = "{http://www.w3.org/2000/svg}"
SMALL = 30  # turns: enough for the shapes to part, a second or two offline


@pytest.fixture(scope="module")
def small_bench(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:  # conftest's offline environment, for the whole module
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "MODEL_ID"):
            patch.delenv(name, raising=False)
        patch.setenv(runlog.ENVIRONMENT_VARIABLE, str(tmp_path_factory.mktemp("bench") / "runs.jsonl"))
        return bench.run_token_bench(SMALL)


def test_every_stage_completes_the_same_task_in_the_same_turns(small_bench):
    rows = small_bench["stages"]
    assert list(rows) == ["s03", "s04", "s05"]
    for row in rows.values():
        assert row["completed"] and row["stop_reason"] == "end_turn" and row["turns"] == SMALL
        assert row["input_tokens"] == sum(row["input_per_call"]) == row["cumulative_input"][-1]
        assert row["peak_prompt_tokens"] == max(row["input_per_call"])


def test_s05_bills_less_than_s04_and_grows_more_slowly(small_bench):
    s04, s05 = small_bench["stages"]["s04"], small_bench["stages"]["s05"]
    assert s05["input_tokens"] < s04["input_tokens"]
    assert small_bench["ratio_s05_s04"] == pytest.approx(s05["input_tokens"] / s04["input_tokens"], abs=1e-4)
    assert s04["exponent"] > s05["exponent"]
    assert s05["peak_prompt_tokens"] < s04["peak_prompt_tokens"]


def test_the_exponent_is_the_slope_of_a_log_log_fit():
    assert bench.exponent([3 * n ** 2 for n in range(1, 50)]) == pytest.approx(2)
    assert bench.exponent([7 * n for n in range(1, 50)]) == pytest.approx(1)
    assert bench.exponent([5]) is None


def test_the_plot_is_svg_with_one_polyline_per_stage(small_bench):
    root = ET.fromstring(bench.plot_svg(small_bench))
    assert root.tag == f"{SVG}svg"
    lines = root.findall(f".//{SVG}polyline")
    assert [line.get("data-series").split()[0] for line in lines] == ["s03", "s04", "s05"]
    for line, row in zip(lines, small_bench["stages"].values()):
        assert len(line.get("points").split()) == len(row["cumulative_input"]) + 1  # from the origin
    texts = [text.text for text in root.iter(f"{SVG}text")]
    assert "cumulative input tokens" in texts and any(text.startswith("s05 (") for text in texts)


def test_the_report_is_a_table_then_the_findings_in_words(small_bench):
    text = bench.report(small_bench)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 100 and "|" not in text
    s04 = next(line.split() for line in lines if line.startswith("s04 "))
    assert s04[:4] == ["s04", "yes", "end_turn", "30"]
    ratio = small_bench["ratio_s05_s04"]
    assert f"s05 billed {ratio:.1%} of the input tokens s04 billed" in text
    assert "resend every log" in text and "2 is with the square of the turns" in text
    assert "Target" not in text and "met." not in text
    # The course's aim is stated at its own length, 100 turns, not judged on a shorter run.
    assert f"this run had {small_bench['turns']} turns" in " ".join(lines)


def test_the_docs_get_the_same_report_as_a_markdown_table(small_bench):
    text = bench.report(small_bench, markdown=True)
    assert "| s04 | yes | end_turn | 30 |" in text
    assert f"s05 billed {small_bench['ratio_s05_s04']:.1%}" in text


def test_bench_tokens_prints_json_and_writes_the_plot(tmp_path, capsys):
    plot = tmp_path / "bench.svg"
    assert main(["bench", "tokens", "--turns", "5", "--json", "--plot", str(plot)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["turns"] == 5 and set(result["stages"]) == {"s03", "s04", "s05"}
    assert result["plot"] == str(plot)
    assert len(ET.parse(plot).getroot().findall(f".//{SVG}polyline")) == 3


def test_bench_tokens_refuses_too_few_turns(capsys):
    with pytest.raises(CourseError):
        bench.run_token_bench(2)
    assert main(["bench", "tokens", "--turns", "2"]) == 2
    assert "--turns" in capsys.readouterr().err


# ---------------------------------------------------------------- the chart itself

def test_ticks_are_round_and_cover_the_data():
    assert nice_step(4_873_552) == 1_000_000
    assert tick_values(97) == [0, 20, 40, 60, 80, 100]
    assert short_number(1_500_000) == "1.5M" and short_number(2000) == "2k" and short_number(40) == "40"


def test_a_chart_places_points_inside_its_axes():
    root = ET.fromstring(line_chart({"a": [(0, 0), (10, 100)], "b <&>": [(5, 50)]}, title="t", x_label="x", y_label="y"))
    width, height = float(root.get("width")), float(root.get("height"))
    for line in root.findall(f".//{SVG}polyline"):
        for point in line.get("points").split():
            x, y = map(float, point.split(","))
            assert 0 < x < width and 0 < y < height and not math.isnan(x)
    assert [line.get("data-series") for line in root.findall(f".//{SVG}polyline")] == ["a", "b <&>"]


def test_the_call_benchmark_reports_the_median_and_quartiles_of_real_calls():
    from course.bench import run_call_bench
    result = run_call_bench(calls=12)
    assert result["calls"] == 12
    assert 0 < result["q1_ms"] <= result["median_ms"] <= result["q3_ms"]
