"""The token benchmark: what each run costs in tokens and dollars, and the plot shows one line per run."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import pytest

from course.lab import bench
from course.runtime import prices, runlog
from course.__main__ import main
from course.runtime.models import CourseError
from course.lab.svgplot import line_chart, nice_step, short_number, tick_values

pytestmark = pytest.mark.stage()  # these tests drive a stage to test the offline model or a command; they pin none

SVG = "{http://www.w3.org/2000/svg}"
SMALL = 30  # turns: enough for the shapes to part, a second or two offline


@pytest.fixture(scope="module")
def small_bench(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:  # conftest's offline environment, for the whole module
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "MODEL_ID"):
            patch.delenv(name, raising=False)
        patch.setenv(runlog.ENVIRONMENT_VARIABLE, str(tmp_path_factory.mktemp("bench") / "runs.jsonl"))
        return bench.run_token_bench(SMALL)


ROWS = ["s03", "s04", "s04+cache", "s04+clearing", "s04+compaction", "s05-every-turn", "s05"]


def test_every_run_completes_the_same_task_in_the_same_turns(small_bench):
    rows = small_bench["stages"]
    assert list(rows) == ROWS
    for row in rows.values():
        assert row["completed"] and row["stop_reason"] == "end_turn" and row["turns"] == SMALL


def test_the_numbers_are_the_sums_of_the_usages_recorded_call_by_call(small_bench):
    price = prices.price_of(small_bench["model"])
    for row in small_bench["stages"].values():
        usages = row["usages"]
        assert len(usages) == row["calls"] == len(row["input_per_call"]) == len(row["dollars_per_call"])
        assert row["uncached_input_tokens"] == sum(usage["input_tokens"] for usage in usages)
        assert row["cache_write_tokens"] == sum(usage["cache_creation_input_tokens"] for usage in usages)
        assert row["cache_read_tokens"] == sum(usage["cache_read_input_tokens"] for usage in usages)
        assert row["input_tokens"] == row["uncached_input_tokens"] + row["cache_write_tokens"] + row["cache_read_tokens"]
        assert row["input_tokens"] == sum(row["input_per_call"]) == row["cumulative_input"][-1]
        by_hand = sum(usage["input_tokens"] * price.input + usage["output_tokens"] * price.output
                      + usage["cache_creation_input_tokens"] * price.cache_write
                      + usage["cache_read_input_tokens"] * price.cache_read for usage in usages) / 1e6
        assert row["dollars"] == pytest.approx(by_hand) == pytest.approx(row["cumulative_dollars"][-1])
        assert row["peak_prompt_tokens"] == max(row["input_per_call"])


def test_only_the_runs_that_mark_breakpoints_use_the_cache(small_bench):
    rows = small_bench["stages"]
    for name in ("s03", "s04"):
        assert rows[name]["cache_write_tokens"] == rows[name]["cache_read_tokens"] == 0
    # A cache changes the bill, never the prompt: s04 sends the same tokens with a breakpoint or without.
    assert rows["s04+cache"]["input_tokens"] == rows["s04"]["input_tokens"]
    assert rows["s04+cache"]["dollars"] < rows["s04"]["dollars"] / 3


def test_s05_bills_less_than_s04_and_batches_cost_less_than_masking_every_turn(small_bench):
    rows = small_bench["stages"]
    s04, s05 = rows["s04"], rows["s05"]
    assert s05["input_tokens"] < s04["input_tokens"]
    assert small_bench["ratio_s05_s04"] == pytest.approx(s05["input_tokens"] / s04["input_tokens"], abs=1e-4)
    assert small_bench["dollar_ratio_s05_s04_cached"] == pytest.approx(s05["dollars"] / rows["s04+cache"]["dollars"], abs=1e-4)
    assert s05["dollars"] < rows["s05-every-turn"]["dollars"] and s05["dollars"] < rows["s04+cache"]["dollars"]
    assert s05["cache_write_tokens"] < rows["s05-every-turn"]["cache_write_tokens"]  # every masking writes again
    assert s04["exponent"] > s05["exponent"]
    assert s05["peak_prompt_tokens"] < s04["peak_prompt_tokens"]


def test_the_every_turn_variant_leaves_the_stage_as_it_was(small_bench):
    s05 = bench.load_stage("s05")
    assert (s05.CLEAR_TRIGGER, s05.CLEAR_AT_LEAST) != (0, 0)  # the constants were set for that run only


def test_the_exponent_is_the_slope_of_a_log_log_fit():
    assert bench.exponent([3 * n ** 2 for n in range(1, 50)]) == pytest.approx(2)
    assert bench.exponent([7 * n for n in range(1, 50)]) == pytest.approx(1)
    assert bench.exponent([5]) is None


def test_the_plot_is_svg_with_one_polyline_of_dollars_per_run(small_bench):
    root = ET.fromstring(bench.plot_svg(small_bench))
    assert root.tag == f"{SVG}svg"
    lines = root.findall(f".//{SVG}polyline")
    assert [line.get("data-series").split()[0] for line in lines] == ROWS
    for line, row in zip(lines, small_bench["stages"].values()):
        assert len(line.get("points").split()) == len(row["cumulative_dollars"]) + 1  # from the origin
    texts = [text.text for text in root.iter(f"{SVG}text")]
    assert "cumulative dollars" in texts and any(text.startswith("s05 ($") for text in texts)


def test_the_report_is_a_table_then_what_it_means_in_words(small_bench):
    text = bench.report(small_bench)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 100 and "|" not in text  # a terminal's table
    s04 = small_bench["stages"]["s04"]
    assert next(line.split() for line in lines if line.startswith("s04 ")) == [
        "s04", "yes", f"{s04['input_tokens']:,}", "0", "0", f"${s04['dollars']:.4f}", f"{s04['peak_prompt_tokens']:,}"]
    words = " ".join(lines)
    assert "the cache-aware s05 costs" in words and "Without caching, s05 would be billed for" in words
    assert "Target" not in text and "met" not in text.split()  # plain words, not a verdict
    # The course's aims are stated at their own length, 100 turns, not judged on a shorter run.
    assert f"the course's aim, at {bench.DEFAULT_TURNS} turns" in words


def test_the_docs_get_the_same_report_as_a_markdown_table(small_bench):
    text = bench.report(small_bench, markdown=True)
    s04 = small_bench["stages"]["s04"]
    assert f"| s04 | yes | {s04['input_tokens']:,} | 0 | 0 | ${s04['dollars']:.4f} | {s04['peak_prompt_tokens']:,} |" in text


def test_bench_tokens_prints_json_and_writes_the_plot(tmp_path, capsys):
    plot = tmp_path / "bench.svg"
    assert main(["bench", "tokens", "--turns", "5", "--json", "--plot", str(plot)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["turns"] == 5 and list(result["stages"]) == ROWS
    assert result["plot"] == str(plot)
    assert len(ET.parse(plot).getroot().findall(f".//{SVG}polyline")) == len(ROWS)


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
    from course.lab.bench import run_call_bench
    result = run_call_bench(calls=12)
    assert result["calls"] == 12
    assert 0 < result["q1_ms"] <= result["median_ms"] <= result["q3_ms"]


def test_the_cached_runs_have_a_plot_of_their_own_in_the_same_colours(small_bench):
    every = ET.fromstring(bench.plot_svg(small_bench)).findall(f".//{SVG}polyline")
    cached = ET.fromstring(bench.plot_svg(small_bench, bench.CACHED_RUNS)).findall(f".//{SVG}polyline")
    assert [line.get("data-series").split()[0] for line in cached] == list(bench.CACHED_RUNS)
    colours = {line.get("data-series"): line.get("stroke") for line in every}
    assert all(colours[line.get("data-series")] == line.get("stroke") for line in cached)
