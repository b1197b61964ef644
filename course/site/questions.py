"""The three questions that end every chapter, answered for its stage from the stage's own code.

"Building an agent loop yourself" (【実装】エージェントループを自作する — ツール呼び出しの最小形) ends by
asking three things of any agent loop: how does it stop, what is the worst one task can cost, and
what does a failed tool call return to the model. ``three_questions(stage)`` answers them for one
stage, at build time:

* **how it stops**: the stage's ``StopReason`` values (s02 on), each with what ends the run that way;
  for a stage without one, the exits its ``run()`` has (s00 calls the model a fixed number of times,
  s01 leaves its ``while`` only when the model is done);
* **the worst it can cost**, computed from the stage's ``Limits()`` defaults, its ``MAX_TOKENS``, the
  context window and the price list (``course/runtime/prices.py``), on the model the offline runs are
  priced as; a stage whose loop only the model can end has no bound, and the answer says so;
* **what a failed call returns**: the ``tool_use`` of a real offline run that asks for a file that
  does not exist, and the ``tool_result`` block the stage wrote back for it, as the model read it.

Nothing here is typed as a figure: change a limit, ``MAX_TOKENS`` or a price, and the page changes.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import typing
from dataclasses import dataclass

from course.runtime import models, prices
from course.offline import DEFAULT_CONTEXT_WINDOW
from course.viewer.markdown import PlaceholderError, fenced, language, markdown_table, say

# What ends a run with each stop reason. A stop reason the stages gain must be explained here
# (tests/test_docs.py checks that every stage's StopReason is).
STOP_REASONS = {
    "end_turn": "the model's reply asks for no tool: the model's own end, the normal way out",
    "max_turns": "the turn limit: `max_turns` model calls were made, checked before the next one",
    "token_budget": "the token budget: the tokens the API reported reached `token_budget`, checked before the next call",
    "no_progress": "no progress: the same call `max_repeats` times in a row, or `max_consecutive_errors` failed "
                   "calls in a row, read off the history after the results are written back",
    "max_tokens": "the reply was cut at `MAX_TOKENS`",
    "refusal": "the model declined to go on",
    "stop_sequence": "a reply that asks for no tool ended at a stop sequence (the stages send none; a server may)",
    "api_error": "the API still failed after the SDK's retries; the run is saved and `--resume` goes on",
    "model_context_window_exceeded": "the reply was cut because the context window is full",
    "kept_pausing": "the API paused its own work on the turn (`pause_turn`) `MAX_PAUSES` times in a row; "
                    "a pause alone goes on",
    "unknown_stop_reason": "the API sent a stop reason the stage does not know: it stops, and the explanation "
                           "quotes it, rather than take it for the model's end",
}

# The same, for the Japanese chapters (tests/test_site_in_japanese.py requires one for each reason above).
STOP_REASONS_JA = {
    "end_turn": "モデルの返答がツールを求めない。モデル自身の終わりで、ふつうの抜け方",
    "max_turns": "ターン上限。`max_turns` 回のモデル呼び出しをした。次の呼び出しの前に調べる",
    "token_budget": "トークン予算。API が報告したトークンが `token_budget` に達した。次の呼び出しの前に調べる",
    "no_progress": "無進捗。同じ呼び出しが `max_repeats` 回続いた、または失敗した呼び出しが "
                   "`max_consecutive_errors` 回続いた。結果を書き戻したあとに履歴から読み取る",
    "max_tokens": "返答が `MAX_TOKENS` で切れた",
    "refusal": "モデルが続けることを断った",
    "stop_sequence": "ツールを求めない返答が停止シーケンスで終わった（ステージは送らないが、サーバーが送ることがある）",
    "api_error": "SDK の再試行のあとも API が失敗した。実行は保存されていて、`--resume` で続けられる",
    "model_context_window_exceeded": "コンテキストウィンドウがいっぱいで返答が切れた",
    "kept_pausing": "API がそのターンの自分の仕事を `MAX_PAUSES` 回続けて一時停止した（`pause_turn`）。"
                    "一回の一時停止なら続く",
    "unknown_stop_reason": "ステージの知らない停止理由を API が送った。モデルの終わりとは見なさずに止まり、"
                           "説明がそれを引用する",
}

# A reply that ends so is not the model's own end; what happens to a tool call in it depends on the stage.
CUT_OR_REFUSED = ("max_tokens", "refusal", "model_context_window_exceeded")

FAILING_TASK = "Compute the total price in missing.txt"  # the tutor reads a file the workspace lacks
FAILING_TASK_JA = "missing.txt の合計金額を計算して"  # the same task as a Japanese page asks it


@dataclass(frozen=True)
class Bound:
    """The worst one run can cost: at most ``tokens`` tokens, of which at most ``output`` are output."""

    tokens: int
    output: int
    calls: int | None       # the most model calls (None: bounded by the budget, not a count of calls)
    explained: str          # the arithmetic, in one sentence (in the page's language)


def three_questions(stage: str) -> str:
    from course.site.runs import stage_module  # the site's loader: reloaded when the stage file changed

    module = stage_module(stage)
    return "\n".join([how_it_stops(stage, module), worst_cost(stage, module), failed_call(stage)])


# ---------------------------------------------------------------- 1. how does it stop?

def stop_reasons(module) -> list[str]:
    reasons = getattr(module, "StopReason", None)
    return list(typing.get_args(reasons)) if reasons is not None else []


def how_it_stops(stage: str, module) -> str:
    reasons = stop_reasons(module)
    lines = [say("**1. How does it stop?**", "**1. どう止まるか**"), ""]
    if reasons:
        lines.append(say(f"Every way out of a run of {stage} is a value of its `StopReason`, the result's `stop_reason`:",
                         f"{stage} の実行の抜け方は、どれもその `StopReason` の値で、結果の `stop_reason` です。"))
        lines.append("")
        lines += [f"- `{reason}`: {explained(reason, module)}" for reason in reasons]
        return "\n".join(lines) + "\n"
    calls = model_calls_in_run(module)
    if calls is None:
        lines.append(say(
            f"Only when a reply asks for no tool: {stage}'s `run()` leaves its `while` loop there and "
            "nowhere else, with the reply's own `stop_reason` (`end_turn`, or `max_tokens` or `refusal` "
            "when such a reply asks for no tool). An API error that outlasts the SDK's retries escapes "
            "`run()` as an exception. Nothing of our own stops it: a model that always asks for a tool "
            "keeps it going.",
            f"返答がツールを求めないときだけです。{stage} の `run()` が `while` ループを抜けるのはそこだけで、"
            "`stop_reason` は返答自身のもの（`end_turn`、またはそうした返答がツールを求めないときの `max_tokens` "
            "か `refusal`）です。SDK の再試行でも収まらない API エラーは、例外として `run()` の外へ出ます。"
            "止めるための仕組みは何もないので、いつもツールを求めるモデルは実行を続けさせます。"))
    else:
        lines.append(say(
            f"After at most {calls} model call{'s' if calls != 1 else ''}, whatever the last reply says: "
            f"{stage}'s `run()` has no loop, and the result's `stop_reason` is the last reply's own "
            "(`end_turn`, or `tool_use` when the last reply asked for a tool nobody runs). An API error "
            "escapes `run()` as an exception.",
            f"最後の返答が何を言っても、多くとも {calls} 回のモデル呼び出しのあとです。{stage} の `run()` には"
            "ループがなく、結果の `stop_reason` は最後の返答自身のもの（`end_turn`、または最後の返答が、誰も"
            "実行しないツールを求めたときの `tool_use`）です。API エラーは例外として `run()` の外へ出ます。"))
    return "\n".join(lines) + "\n"


def explained(reason: str, module) -> str:
    text = say(STOP_REASONS.get(reason, "not explained yet"), STOP_REASONS_JA.get(reason, "まだ説明がありません"))
    if reason not in CUT_OR_REFUSED:
        return text
    if reason == "max_tokens" and hasattr(module, "MAX_TOKENS_CEILING"):  # s04 on: a cut reply is recovered
        return say("the reply was cut at `MAX_TOKENS` before any whole tool call, and again each time it was asked "
                   "again with twice the room, up to `MAX_TOKENS_CEILING` (a cut reply's whole calls run, and the run "
                   "goes on); the call it was cut in is answered without being run",
                   "返答が、完全なツール呼び出しの前に `MAX_TOKENS` で切れ、二倍の余地でもう一度求めるたびに "
                   "`MAX_TOKENS_CEILING` まで切れ続けた（切れた返答の完全な呼び出しは実行され、実行は続く）。"
                   "切れた途中の呼び出しには、実行せずに答える")
    if hasattr(module, "answer_without_running"):  # s03 on: a cut call is answered, never run
        return text + say("; a tool call in it is answered without being run", "。その中のツール呼び出しには、実行せずに答える")
    return text + say(", and the reply asks for no tool (one that does goes on: s03 stops it)",
                      "。返答はツールを求めていない（求める返答なら続く。s03 がそれを止める）")


def model_calls_in_run(module) -> int | None:
    """How many times ``run()`` calls the model: the calls to ``ask`` in its code, or None when it has a
    loop (then only the model, or the stage's limits, can end it)."""
    tree = ast.parse(inspect.getsource(module.run))
    if any(isinstance(node, (ast.While, ast.For)) for node in ast.walk(tree)):
        return None
    return sum(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ask"
               for node in ast.walk(tree))


# ---------------------------------------------------------------- 2. what is the worst it can cost?

def other_model_calls(module) -> list[str]:
    """The functions of the stage file, other than ``ask``, that call the model themselves
    (``client.messages.create``): s05's summariser. Each runs at most once a turn, at ``MAX_TOKENS``."""
    tree = ast.parse(inspect.getsource(module))
    return [function.name for function in ast.walk(tree)
            if isinstance(function, ast.FunctionDef) and function.name != "ask"
            and any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "create"
                    and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "messages"
                    for node in ast.walk(function))]


def asked_in_one_turn(stage: str, module) -> list[int]:
    """The ``max_tokens`` of every call one turn makes when each reply is cut before it says anything
    whole: a model that writes on and on. Measured by running the stage on such a scripted model, so
    that a stage which asks again with more room (s04 on) shows its whole ladder."""
    from course import make_client
    from course.helpers.limits import run_options
    from course.site.runs import command_line_workspace

    asked: list[int] = []

    def writes_on_and_on(request: dict) -> list[dict]:
        asked.append(request["max_tokens"])
        return [{"type": "text", "text": "and on " * (2 * request["max_tokens"])}]

    client = make_client(behaviour=writes_on_and_on, max_retries=0)
    options = run_options(module.run, {"runs_log": False, "transcript": False, "approver": None,
                                       "audit_log": False, "max_turns": 1})
    with command_line_workspace() as workspace:
        module.run(FAILING_TASK, client=client, model="offline", workspace=workspace, **options)
    if not asked:
        raise PlaceholderError(f"{stage} made no model call on a task")
    return asked


def default_limits(module):
    limits = getattr(module, "Limits", None)
    return limits() if limits is not None and dataclasses.is_dataclass(limits) else None


def bound(stage: str, module) -> Bound | None:
    """The most tokens one run of the stage can use at its defaults; None if nothing bounds it."""
    window, most = DEFAULT_CONTEXT_WINDOW, module.MAX_TOKENS
    limits = default_limits(module)
    if limits is None:
        calls = model_calls_in_run(module)
        if calls is None:
            return None
        return Bound(calls * (window + most), calls * most, calls, say(
                     f"{calls} calls × ({window:,} tokens of prompt, the most a context window holds, "
                     f"+ {most:,} of reply, `MAX_TOKENS`)",
                     f"{calls} 回の呼び出し ×（プロンプト {window:,} トークン、コンテキストウィンドウに入る最大、"
                     f"+ 返答 {most:,} トークン、`MAX_TOKENS`）"))
    turns = getattr(limits, "max_turns", None)
    budget = getattr(limits, "token_budget", None)
    if turns is None and budget is None:
        return None
    ladder = asked_in_one_turn(stage, module)
    others = other_model_calls(module)
    calls_a_turn = len(ladder) + len(others)
    output_a_turn = sum(ladder) + len(others) * most
    turn_tokens = calls_a_turn * window + output_a_turn
    if calls_a_turn == 1:
        a_turn = say(f"the last turn it lets through makes one model call: up to {window:,} tokens of prompt (a full "
                     f"context window) and {ladder[0]:,} of reply (`MAX_TOKENS`), {turn_tokens:,} tokens",
                     f"通す最後のターンはモデルを一回呼び出します。プロンプトは最大 {window:,} トークン（いっぱいの"
                     f"コンテキストウィンドウ）、返答は {ladder[0]:,} トークン（`MAX_TOKENS`）で、{turn_tokens:,} トークンです")
    else:
        ladder_sum = " + ".join(f"{n:,}" for n in ladder)
        asking = (say(f"{len(ladder)} for the reply, asked again with more room each time it is cut "
                      f"(`max_tokens` {ladder_sum})",
                      f"返答に {len(ladder)} 回（切れるたびに余地を広げてもう一度求める。`max_tokens` {ladder_sum}）")
                  if len(ladder) > 1 else say(f"one for the reply (`max_tokens` {ladder[0]:,})",
                                              f"返答に 1 回（`max_tokens` {ladder[0]:,}）"))
        a_turn = say(f"the last turn it lets through makes at most {calls_a_turn} model calls, each with up to "
                     f"{window:,} tokens of prompt (a full context window): {asking}"
                     + "".join(f", and one in `{name}()` ({most:,})" for name in others)
                     + f"; {turn_tokens:,} tokens in all",
                     f"通す最後のターンはモデルを多くとも {calls_a_turn} 回呼び出し、どれもプロンプトは最大 "
                     f"{window:,} トークン（いっぱいのコンテキストウィンドウ）です。内訳は{asking}"
                     + "".join(f"、`{name}()` で 1 回（{most:,}）" for name in others)
                     + f"で、合わせて {turn_tokens:,} トークンです")
    by_turns = turns * turn_tokens if turns is not None else None
    output = turns * output_a_turn if turns is not None else None
    if budget is not None and (by_turns is None or budget - 1 + turn_tokens < by_turns):
        tokens = budget - 1 + turn_tokens
        # Output is counted in the budget too: before the last turn it is at most what the budget let
        # through (or what the turns before could write), then the last turn's replies on top.
        before = budget - 1 if turns is None else min(budget - 1, (turns - 1) * output_a_turn)
        output = before + output_a_turn
        explained = say(f"the budget is checked before each turn, so a run stops at the first turn that finds "
                        f"{budget:,} tokens used; before it, at most {budget - 1:,}, and {a_turn}",
                        f"予算は各ターンの前に調べるので、実行は {budget:,} トークンを使ったと分かった最初のターンで"
                        f"止まります。それまでに多くとも {budget - 1:,} トークン、そして{a_turn}")
        explained += say(f"; of the whole, at most {output:,} are output ({before:,} before the last turn, no more than the "
                         f"budget let through or the turns before could write, and {output_a_turn:,} in it)",
                         f"。全体のうち出力は多くとも {output:,} トークンです（最後のターンの前に {before:,}。予算が通した量も、"
                         f"それまでのターンが書ける量も超えない。そして最後のターンで {output_a_turn:,}）")
        return Bound(tokens, output, None, explained)
    return Bound(by_turns, output, turns * calls_a_turn,
                 say(f"{a_turn}, and {turns:,} turns are allowed", f"{a_turn}。許されるターンは {turns:,} です"))


def priced_model() -> str:
    return models.DEFAULT_CLAUDE_MODEL


def input_price(module, price: prices.Price) -> tuple[float, str]:
    """The dearest rate an input token of this stage can be billed at: a cache write for a stage that
    marks cache breakpoints (at its lifetime's rate), the plain input price otherwise."""
    breakpoint_ = getattr(module, "CACHE_BREAKPOINT", None)
    if isinstance(breakpoint_, dict):
        if breakpoint_.get("ttl") == "1h":
            return price.cache_write_1h, say("a 1-hour cache write, the dearest way an input token is billed",
                                             "1 時間のキャッシュ書き込みの料金で、入力トークンのいちばん高い請求のされ方です")
        return price.cache_write, say("a 5-minute cache write, the dearest way an input token of this stage is billed",
                                      "5 分のキャッシュ書き込みの料金で、このステージの入力トークンのいちばん高い請求のされ方です")
    return price.input, say("the input price (this stage marks no cache breakpoint)",
                            "入力の料金です（このステージはキャッシュのブレークポイントを付けません）")


def dollars(amount: float) -> str:
    return f"${amount:,.2f}" if amount >= 0.01 else f"${amount:,.4f}"


def worst_cost(stage: str, module) -> str:
    model = priced_model()
    price = prices.price_of(model)
    if price is None:
        raise PlaceholderError(f"the price list has no price for {model}, the model the course prices runs as")
    per_call = DEFAULT_CONTEXT_WINDOW * price.input + module.MAX_TOKENS * price.output
    lines = [say("**2. What is the worst it can cost?**", "**2. 最悪でいくらかかるか**"), ""]
    worst = bound(stage, module)
    if worst is None:
        lines.append(say(
            f"There is no bound: only the model can stop {stage}, and a model that always asks for a tool "
            f"keeps it going. Each turn can cost up to {dollars(per_call / prices.MILLION)} on `{model}` "
            f"({DEFAULT_CONTEXT_WINDOW:,} tokens of prompt at ${price.input:g} a million, a full context "
            f"window, and {module.MAX_TOKENS:,} of reply at ${price.output:g}), and the history is resent every "
            "turn, so the turns cost more as they go; the number of turns is the model's choice. s03 bounds it.",
            f"上限はありません。{stage} を止められるのはモデルだけで、いつもツールを求めるモデルは実行を続けさせます。"
            f"`{model}` では 1 ターンで最大 {dollars(per_call / prices.MILLION)} かかります（プロンプト "
            f"{DEFAULT_CONTEXT_WINDOW:,} トークンを 100 万あたり ${price.input:g}、いっぱいのコンテキストウィンドウ、"
            f"返答 {module.MAX_TOKENS:,} トークンを ${price.output:g}）。履歴は毎ターン送り直すので、ターンは進むほど"
            "高くなります。ターン数はモデルが決めます。s03 がこれに上限を付けます。"))
        return "\n".join(lines) + "\n"
    limits = default_limits(module)
    rate, why_rate = input_price(module, price)
    cost = ((worst.tokens - worst.output) * rate + worst.output * price.output) / prices.MILLION
    rows = []
    if limits is not None:
        rows += [[f"`{field.name}`", f"{getattr(limits, field.name):,}"] for field in dataclasses.fields(limits)
                 if field.name in ("max_turns", "token_budget")]
    rows += [["`MAX_TOKENS`", f"{module.MAX_TOKENS:,}"],
             [say("context window (the largest prompt)", "コンテキストウィンドウ（最大のプロンプト）"),
              f"{DEFAULT_CONTEXT_WINDOW:,}"],
             [say("worst case, tokens", "最悪の場合のトークン"), f"**{worst.tokens:,}**"],
             [say(f"worst case, dollars on `{model}`", f"最悪の場合の料金（`{model}`、ドル）"), f"**{dollars(cost)}**"]]
    if language() == "ja":
        where = "既定の上限では、" if limits is not None else ""
        lines.append(f"{where}{stage} の一回の実行が使うのは多くとも {worst.tokens:,} トークンです。{worst.explained}。")
    else:
        where = "At its default limits, one run" if limits is not None else "One run"
        lines.append(f"{where} of {stage} uses at most {worst.tokens:,} tokens: {worst.explained}.")
    lines.append("")
    lines.append(markdown_table([say("figure", "項目"), say("value", "値")], rows))
    lines.append("")
    lines.append(say(
        f"The dollars price the output tokens at ${price.output:g} a million and the rest at "
        f"${rate:g} a million, {why_rate}, from the price list of {prices.PRICES_DATE} "
        f"([source]({prices.SOURCE})). A real run costs far less: this is "
        f"what the {'limits' if limits is not None else 'code'} promise{'' if limits is not None else 's'}.",
        f"料金は、出力トークンを 100 万あたり ${price.output:g}、残りを 100 万あたり ${rate:g} で計算しています。"
        f"後者は{why_rate}。価格は {prices.PRICES_DATE} の価格表によります（[出典]({prices.SOURCE})）。実際の実行は"
        f"これよりずっと安く済みます。これは{'上限' if limits is not None else 'コード'}が約束する値です。"))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- 3. what does a failed call return?

def failed_call(stage: str) -> str:
    from course.site.runs import traced_run

    task = say(FAILING_TASK, FAILING_TASK_JA)
    run = traced_run(stage, task)
    result = run.result
    if result is None:
        raise PlaceholderError(f"the run of {stage} on {task!r} returned no result")
    messages, workspace = result["messages"], result["workspace"]
    calls = {block["id"]: block for message in messages if message["role"] == "assistant"
             for block in message["content"] if block.get("type") == "tool_use"}
    failed = next((block for message in messages if message["role"] == "user" and isinstance(message["content"], list)
                   for block in message["content"] if block.get("type") == "tool_result" and block.get("is_error")), None)
    if failed is None:
        raise PlaceholderError(f"the run of {stage} on {task!r} made no call that failed")
    call = calls[failed["tool_use_id"]]
    shown = "\n".join(json.dumps(block, ensure_ascii=False, indent=2) for block in
                      ({"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["input"]}, failed))
    lines = [say("**3. What does a failed tool call return to the model?**", "**3. 失敗したツール呼び出しはモデルに何を返すか**"), "",
             say(f"A `tool_result` with `is_error` set, in the next user message, and the run goes on. Here is the "
                 f"call and its answer from a run of {stage} on the offline model, made while this page was built "
                 f"(the task: \"{task}\", a file the workspace does not have):",
                 f"`is_error` を設定した `tool_result` を次の user メッセージで返し、実行は続きます。次に示すのは、"
                 f"このページのビルド中にオフラインモデルで動かした {stage} の実行の、呼び出しとその答えです"
                 f"（タスクは「{task}」で、ワークスペースにないファイルを読ませます）。"), "",
             fenced("json", shown.replace(workspace, "<workspace>")).rstrip("\n"), "",
             say(f"The model reads exactly this text on its next call, and nothing else about the failure; the run "
                 f"ended with `{result['stop_reason']}` after {result['turns']} turns.",
                 f"モデルが次の呼び出しで読むのはちょうどこのテキストで、失敗についてほかには何も読みません。実行は "
                 f"{result['turns']} ターンのあと `{result['stop_reason']}` で終わりました。")]
    return "\n".join(lines) + "\n"
