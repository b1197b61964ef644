"""The generated parts of the Japanese pages (docs/NAME.ja.md): their words in Japanese, the figures the
same as the English page's, from the same code and runs. Each text a part shows is kept beside its
English (the exercises, the changes table's whys, the stop reasons), and these tests require both."""

from __future__ import annotations

import re
import types
from pathlib import Path

import pytest

from course.lab import bench
from course import changes
from course.grading import exercise_text, exercises
from course.site import pages as site
from course.viewer import pages as viewer
from course.runtime.models import CourseError
from course.site.questions import STOP_REASONS, STOP_REASONS_JA
from helpers import STAGES, load_stage

ROOT = Path(__file__).resolve().parents[1]
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")  # kana and kanji
LOOPING_TASK_JA = "ファイル一覧を作って report.txt に件数と名前を書いて"  # as docs/s03-stop-conditions.ja.md asks it


def japanese(text: str) -> bool:
    return bool(JAPANESE.search(text))


# ---------------------------------------------------------------- the texts, in both languages

def test_every_exercise_has_its_japanese_text_beside_the_english():
    texts = [(key, entry) for key, entry in exercise_text.REBUILD.items()]
    texts += [(stage, entry) for stage, entry in exercise_text.EXTENSIONS.items()]
    missing = [key for key, entry in texts if entry.ja is None]
    assert missing == []
    for key, entry in texts:
        assert all(japanese(part) for part in (entry.ja.title, entry.ja.what, *entry.ja.contract)), key
        assert len(entry.ja.contract) == len(entry.contract), f"{key}: one Japanese item for each contract item"
    hinted = {key for key, entry in exercise_text.REBUILD.items() if entry.ja.hint}
    assert hinted == set(exercise_text.HINTS), "a Japanese hint exactly where the English has one"


def test_every_region_of_the_code_has_a_japanese_title():
    for stage in STAGES:
        for region in exercises.stage_regions(stage):
            assert japanese(exercise_text.REBUILD[stage, region.number].ja.title), (stage, region.number)


def test_every_change_the_table_declares_has_a_japanese_why():
    declared = {(stage, kind, name) for stage, kinds in changes.CHANGES.items()
                for kind, names in kinds.items() for name in names}
    translated = {(stage, kind, name) for stage, kinds in changes.WHY_JA.items()
                  for kind, names in kinds.items() for name in names}
    assert declared - translated == set(), "a change with no Japanese why"
    assert translated - declared == set(), "a Japanese why for a change the table no longer declares"
    assert all(japanese(why) for kinds in changes.WHY_JA.values() for names in kinds.values() for why in names.values())


def test_every_stop_reason_is_explained_in_japanese_too():
    assert set(STOP_REASONS_JA) == set(STOP_REASONS)
    assert all(japanese(text) for text in STOP_REASONS_JA.values())


def test_the_pages_write_each_term_one_way():
    """The glossary, the style sheet and the pages agree: 再開, 権限ゲート, ターン上限 (course/translation_style.md)."""
    pages = sorted((ROOT / "docs").glob("*.ja.md")) + [ROOT / "README.ja.md", ROOT / "docs" / "glossary.md", ROOT / "mkdocs.yml"]
    found = [(page.name, word) for page in pages for word in ("レジューム", "パーミッションゲート", "手数の上限")
             if word in page.read_text(encoding="utf-8")]
    assert found == []


# ---------------------------------------------------------------- the parts a Japanese page shows

def test_the_exercise_section_is_in_the_pages_language():
    regions = exercises.stage_regions("s03")
    english = exercise_text.section("s03", regions)
    japanese_section = exercise_text.section("s03", regions, "ja")
    for region in regions:
        entry = exercise_text.REBUILD["s03", region.number]
        assert f"### 演習 {region.number}: {entry.ja.title}" in japanese_section
        assert all(f"- {item}" in japanese_section for item in entry.ja.contract)
        assert entry.ja.hint in japanese_section and entry.ja.title not in english
        assert f"`{entry.where}`" in japanese_section  # the code's names stay the code's
    assert f"演習 3（発展）: {exercise_text.EXTENSIONS['s03'].ja.title}" in japanese_section
    assert not japanese(english)
    assert "check s03 my-s03" in japanese_section  # the same commands


def test_the_changes_table_is_in_the_pages_language():
    english, japanese_table = (site.render("changes", "s03", language=language) for language in ("en", "ja"))
    assert japanese_table.startswith("| 定義 | 変更 | 理由 |")
    assert changes.WHY_JA["s03"]["added"]["limit_reached"] in japanese_table
    assert changes.CHANGES["s03"]["added"]["limit_reached"] in english and not japanese(english)
    assert japanese_table.count("\n") == english.count("\n")  # a row for each change, in both


def test_an_unknown_language_is_refused():
    with pytest.raises(CourseError, match="language 'fr'"):
        site.render("changes", "s03", language="fr")


@pytest.mark.stage()
def test_a_japanese_trace_translates_the_harness_labels_and_keeps_the_run_as_it_printed():
    arguments = f'"{LOOPING_TASK_JA}" model=offline-looping'
    english = site.trace("s03", LOOPING_TASK_JA, model="offline-looping")
    shown = site.render("trace", f"s03 {arguments}", language="ja")
    assert "── ターン 1 · モデル" in shown and "■ 停止: no progress: write_file(" in shown
    assert re.search(r"^答え（no_progress、4 ターン、入力 \d+ \+ 出力 \d+ トークン）:$", shown, re.M)
    assert re.search(r"^停止の理由: no progress: ", shown, re.M) and "ワークスペース: <workspace>" in shown
    assert not re.search(r"^(── turn|■ stop:|answer \(|stopped:|workspace:)", shown, re.M)
    # The same run: the model's lines, the tools' lines and every number are the English page's.
    numbers = re.compile(r"\d[\d,]*")
    assert numbers.findall(shown.split("```")[1].replace("4 ターン", "")) == numbers.findall(
        english.replace("4 turns", ""))
    kept = [line for line in english.splitlines() if line.startswith(("   →", "   ←", "   ✗"))]
    assert kept and all(line in shown for line in kept)
    assert "viewer" not in shown and "この実行をビューアーでたどる" in shown


def test_a_models_line_that_looks_like_a_label_is_left_as_it_is():
    printed = ("── turn 1 · model\n   workspace: not a label here\n   ↻ continue: tool_results_written\n\n"
               "answer (end_turn, 1 turn, 10 input + 2 output tokens):\nworkspace: the model wrote this\n"
               "stopped: and this\nall done\nworkspace: <workspace>\n")
    shown = site.labels_in_japanese(printed)
    assert shown.splitlines() == ["── ターン 1 · モデル", "   workspace: not a label here", "   ↻ 続行: tool_results_written",
                                  "", "答え（end_turn、1 ターン、入力 10 + 出力 2 トークン）:",
                                  "workspace: the model wrote this", "stopped: and this", "all done",
                                  "ワークスペース: <workspace>"]


@pytest.mark.stage("s03")
def test_no_progress_names_a_repeated_call_as_written_with_terminal_controls_escaped():
    s03 = load_stage("s03")
    call = {"type": "tool_use", "id": "", "name": "write_file", "input": {"path": "報告.txt", "content": "件数\u202e\x9b"}}
    messages = [{"role": "user", "content": "タスク"}]
    for number in range(3):
        messages += [{"role": "assistant", "content": [dict(call, id=f"t{number}")]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{number}", "content": "ok"}]}]
    said = s03.no_progress(messages, s03.Limits(max_repeats=3))
    assert "報告.txt" in said and "件数" in said and "\\u5831" not in said
    assert "\u202e" not in said and "\\u202e" in said and "\x9b" not in said and "\\x9b" in said


@pytest.mark.stage()
def test_the_japanese_tables_hold_the_english_figures():
    task, options = LOOPING_TASK_JA, 'model=offline-looping'
    english, japanese_table = (site.render("tokens", f's03 "{task}" {options}', language=language) for language in ("en", "ja"))
    assert japanese_table.splitlines()[0] == "| モデル呼び出し | 入力トークン | 前の呼び出しからの増分 | ここまでに請求された入力 |"
    assert japanese_table.splitlines()[1:] == english.splitlines()[1:]


def test_the_benchmark_plot_is_labelled_in_japanese_and_draws_the_same_lines():
    result = {"turns": 3, "stages": {"s04": {"dollars": 0.3, "cumulative_dollars": [0.1, 0.2, 0.3]},
                                     "s05": {"dollars": 0.1, "cumulative_dollars": [0.05, 0.08, 0.1]}}}
    english = bench.plot_svg(result)
    shown = site.plot_in_japanese(english, result, None)
    assert ">3 ターンのタスクで使った料金（ドル）<" in shown and ">累積料金（ドル）<" in shown
    assert "Dollars spent" not in shown and "cumulative dollars" not in shown
    polylines = re.compile(r"<polyline[^>]*>")
    assert polylines.findall(shown) == polylines.findall(english)
    with pytest.raises(site.PlaceholderError, match="no label"):
        site.plot_in_japanese(english.replace("cumulative dollars", "dollars"), result, None)


def test_the_benchmark_table_header_is_in_japanese():
    header = "| " + " | ".join(bench.COLUMNS) + " |"
    with site.page_language("ja"):
        assert site.bench_header_in_japanese(header) == ("| 実行 | 完了 | 入力トークン | キャッシュ書き込み | "
                                                         "キャッシュ読み込み | ドル | 最大のプロンプト |")
        row = "| s05 | yes | 1,000 | 10 | 900 | $0.0100 | 500 |"
        assert site.bench_header_in_japanese(row) == "| s05 | はい | 1,000 | 10 | 900 | $0.0100 | 500 |"
        assert site.bench_header_in_japanese("With caching on, yes") == "With caching on, yes"


# ---------------------------------------------------------------- the hook and the viewer

def hook():
    import importlib.util
    spec = importlib.util.spec_from_file_location("generate_hook_ja", ROOT / "docs" / "hooks" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page_named(src_uri: str, locale: str | None = None, url: str = "s03-stop-conditions/"):
    file = types.SimpleNamespace(src_uri=src_uri, **({"locale": locale} if locale else {}))
    return types.SimpleNamespace(file=file, url=url)


def test_the_hook_renders_a_page_in_the_language_its_name_says(monkeypatch):
    generate = hook()
    assert generate.language_of(page_named("s03-stop-conditions.ja.md", "ja")) == "ja"
    assert generate.language_of(page_named("s03-stop-conditions.md", "en")) == "en"
    assert generate.language_of(page_named("s03-stop-conditions.md")) == "en"  # built without the i18n plugin
    with pytest.raises(generate.PluginError, match="its name says 'en'"):
        generate.language_of(page_named("s03-stop-conditions.md", "ja"))
    asked = []
    monkeypatch.setattr(generate.site, "render", lambda kind, arguments, language: asked.append(language) or "```text\nx\n```\n")
    markdown = '<!-- trace s01 "a" -->\n\n<!-- trace s01 "b" -->\n'
    japanese_page = generate.expand(markdown, language="ja")
    assert asked == ["ja", "ja"] and japanese_page.count(generate.TRACE_LABELS_NOTE_JA) == 1
    assert generate.TRACE_LABELS_NOTE_JA not in generate.expand(markdown, language="en")


def test_a_japanese_page_links_its_runs_to_the_viewers_japanese_pages(tmp_path):
    viewer.forget_site_views()
    view = {"format": 1, "stage": "s01", "model": "offline", "task": "タスク", "turns": [], "end": {"state": "stopped"}}
    viewer.register("s01-run-12345678", view)
    written = viewer.write_site(tmp_path)
    assert sorted(path.name for path in written) == ["s01-run-12345678.html", "s01-run-12345678.ja.html"]
    assert '<html lang="ja">' in (tmp_path / "viewer" / "s01-run-12345678.ja.html").read_text(encoding="utf-8")
    assert '<html lang="en">' in (tmp_path / "viewer" / "s01-run-12345678.html").read_text(encoding="utf-8")
    linked = '<a href="course-run:s01-run-12345678">'
    assert viewer.resolve_links(linked, "ja/s01-closed-loop/", "ja") == '<a href="../../viewer/s01-run-12345678.ja.html">'
    assert viewer.resolve_links(linked, "s01-closed-loop/") == '<a href="../viewer/s01-run-12345678.html">'
    viewer.forget_site_views()
    script = viewer.asset("viewer.js")
    assert 'document.documentElement.lang === "ja"' in script and "実行ビューアー" in script


def test_every_scenario_says_what_it_shows_in_japanese_too():
    from course.lab import scenarios
    assert set(site.SCENARIO_SHOWS_JA) == {scenario.name for scenario in scenarios.SCENARIOS}
    assert all(japanese(text) for text in site.SCENARIO_SHOWS_JA.values())
    with site.page_language("ja"):
        table = site.scenario_table()
    assert table.startswith("| シナリオ | モデル | タスク | 何を示すか |")
    assert site.SCENARIO_SHOWS_JA["looping"] in table
