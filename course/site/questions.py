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
    "end_turn": "the reply asks for no tool: the model's own end",
    "max_turns": "`max_turns` model calls made (checked before each call)",
    "token_budget": "`token_budget` tokens reported by the API (checked before each call)",
    "no_progress": "the same call `max_repeats` times, or `max_consecutive_errors` failed calls, in a row",
    "max_tokens": "the reply was cut at `MAX_TOKENS`",
    "refusal": "the model declined to go on",
    "stop_sequence": "a reply with no tool call ended at a stop sequence (a server may send one)",
    "api_error": "the API still failed after the SDK's retries; `--resume` goes on",
    "model_context_window_exceeded": "the reply was cut: the context window is full",
    "kept_pausing": "the API paused the turn (`pause_turn`) `MAX_PAUSES` times in a row; one pause goes on",
    "unknown_stop_reason": "a stop reason the stage does not know, quoted in the explanation",
}

# The same, for the Japanese chapters (tests/test_site_in_japanese.py requires one for each reason above).
STOP_REASONS_JA = {
    "end_turn": "返答がツールを求めない。モデル自身の終わり",
    "max_turns": "モデル呼び出しが `max_turns` 回に達した（各呼び出しの前に調べる）",
    "token_budget": "API が報告したトークンが `token_budget` に達した（各呼び出しの前に調べる）",
    "no_progress": "同じ呼び出しが `max_repeats` 回、または失敗が `max_consecutive_errors` 回続いた",
    "max_tokens": "返答が `MAX_TOKENS` で切れた",
    "refusal": "モデルが続けることを断った",
    "stop_sequence": "ツールを求めない返答が停止シーケンスで終わった（サーバーが送ることがある）",
    "api_error": "SDK の再試行のあとも API が失敗した。`--resume` で続けられる",
    "model_context_window_exceeded": "コンテキストウィンドウがいっぱいで返答が切れた",
    "kept_pausing": "API がターンを `MAX_PAUSES` 回続けて一時停止した（`pause_turn`）。一回なら続く",
    "unknown_stop_reason": "ステージの知らない停止理由。説明がそれを引用する",
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
                         f"{stage} の実行の抜け方は、どれも `StopReason` の値（結果の `stop_reason`）です。"))
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
        return say("cut with no whole tool call, even asked again with twice the room up to `MAX_TOKENS_CEILING`",
                   "完全なツール呼び出しがないまま、`MAX_TOKENS_CEILING` まで二倍の余地で求め直しても切れた")
    if hasattr(module, "answer_without_running"):  # s03 on: a cut call is answered, never run
        return text + say("; its tool calls are answered, not run", "。その中のツール呼び出しには実行せずに答える")
    return text + say(", asking for no tool (one that asks goes on: s03 stops it)",
                      "。ツールを求めない返答のとき（求めれば続く。s03 が止める）")


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
        a_turn = say(f"one call of a full context window ({window:,}) and a reply of `MAX_TOKENS` ({ladder[0]:,}), "
                     f"{turn_tokens:,} tokens",
                     f"いっぱいのコンテキストウィンドウ（{window:,}）と `MAX_TOKENS`（{ladder[0]:,}）の返答の呼び出し一回、"
                     f"{turn_tokens:,} トークン")
    else:
        ladder_sum = " + ".join(f"{n:,}" for n in ladder)
        asking = (say(f"the reply asked {len(ladder)} times, with more room each time it is cut "
                      f"(`max_tokens` {ladder_sum})",
                      f"返答を {len(ladder)} 回（切れるたびに余地を広げて求め直す。`max_tokens` {ladder_sum}）")
                  if len(ladder) > 1 else say(f"the reply (`max_tokens` {ladder[0]:,})",
                                              f"返答を 1 回（`max_tokens` {ladder[0]:,}）"))
        a_turn = say(f"{calls_a_turn} calls, each of a full context window ({window:,}): {asking}"
                     + "".join(f", and `{name}()` ({most:,})" for name in others)
                     + f"; {turn_tokens:,} tokens",
                     f"どれもいっぱいのコンテキストウィンドウ（{window:,}）の呼び出し {calls_a_turn} 回。{asking}"
                     + "".join(f"、`{name}()` を 1 回（{most:,}）" for name in others)
                     + f"で、{turn_tokens:,} トークン")
    by_turns = turns * turn_tokens if turns is not None else None
    output = turns * output_a_turn if turns is not None else None
    if budget is not None and (by_turns is None or budget - 1 + turn_tokens < by_turns):
        tokens = budget - 1 + turn_tokens
        # Output is counted in the budget too: before the last turn it is at most what the budget let
        # through (or what the turns before could write), then the last turn's replies on top.
        before = budget - 1 if turns is None else min(budget - 1, (turns - 1) * output_a_turn)
        output = before + output_a_turn
        explained = say(f"a run stops at the first turn that finds {budget:,} tokens used (checked before each call), "
                        f"so at most {budget - 1:,} before it, then one last turn: {a_turn}. At most {output:,} are "
                        f"output ({before:,} before the last turn, {output_a_turn:,} in it)",
                        f"実行は {budget:,} トークンを使ったと分かった最初のターンで止まる（各呼び出しの前に調べる）ので、"
                        f"それまでに多くとも {budget - 1:,}、そして最後のターンが一つ。{a_turn}です。出力は多くとも "
                        f"{output:,}（最後のターンの前に {before:,}、その中で {output_a_turn:,}）")
        return Bound(tokens, output, None, explained)
    return Bound(by_turns, output, turns * calls_a_turn,
                 say(f"{turns:,} turns, each at most {a_turn}", f"{turns:,} ターンで、どのターンも多くとも{a_turn}です"))


def priced_model() -> str:
    return models.DEFAULT_CLAUDE_MODEL


def input_price(module, price: prices.Price) -> tuple[float, str]:
    """The dearest rate an input token of this stage can be billed at: a cache write for a stage that
    marks cache breakpoints (at its lifetime's rate), the plain input price otherwise."""
    breakpoint_ = getattr(module, "CACHE_BREAKPOINT", None)
    if isinstance(breakpoint_, dict):
        if breakpoint_.get("ttl") == "1h":
            return price.cache_write_1h, say("a 1-hour cache write, the dearest an input token is billed",
                                             "1 時間のキャッシュ書き込み、入力トークンのいちばん高い料金")
        return price.cache_write, say("a 5-minute cache write, the dearest an input token of this stage is billed",
                                      "5 分のキャッシュ書き込み、このステージの入力トークンのいちばん高い料金")
    return price.input, say("the input price: this stage marks no cache breakpoint",
                            "入力の料金。このステージはキャッシュのブレークポイントを付けない")


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
    # Two rows: the limits the figure comes from are named in the sentence above the table.
    rows = [[say("worst case, tokens", "最悪の場合のトークン"), f"**{worst.tokens:,}**"],
            [say(f"worst case, dollars on `{model}`", f"最悪の場合の料金（`{model}`、ドル）"), f"**{dollars(cost)}**"]]
    if limits is not None:
        named = ", ".join(f"`{field.name}` {getattr(limits, field.name):,}" for field in dataclasses.fields(limits)
                          if field.name in ("max_turns", "token_budget"))
        where = say(f"At its default limits ({named}), one run", f"既定の上限（{named}）では、")
    else:
        where = say("One run", "")
    if language() == "ja":
        lines.append(f"{where}{stage} の一回の実行が使うのは多くとも {worst.tokens:,} トークンです。{worst.explained}。")
    else:
        lines.append(f"{where} of {stage} uses at most {worst.tokens:,} tokens: {worst.explained}.")
    lines.append("")
    lines.append(markdown_table([say("figure", "項目"), say("value", "値")], rows))
    lines.append("")
    lines.append(say(
        f"Output at ${price.output:g} a million tokens, the rest at ${rate:g} ({why_rate}); prices of "
        f"{prices.PRICES_DATE} ([source]({prices.SOURCE})). This is what the "
        f"{'limits' if limits is not None else 'code'} promise{'' if limits is not None else 's'}; a real run costs far less.",
        f"出力は 100 万トークンあたり ${price.output:g}、残りは ${rate:g}（{why_rate}）。価格は {prices.PRICES_DATE} の"
        f"ものです（[出典]({prices.SOURCE})）。これは{'上限' if limits is not None else 'コード'}が約束する値で、"
        "実際の実行はずっと安く済みます。"))
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
    # One line a block: the two blocks are what matters, not their indentation.
    shown = "\n".join(json.dumps(block, ensure_ascii=False) for block in
                      ({"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["input"]}, failed))
    lines = [say("**3. What does a failed tool call return to the model?**", "**3. 失敗したツール呼び出しはモデルに何を返すか**"), "",
             say(f"A `tool_result` with `is_error` set, in the next user message, and the run goes on. The call and "
                 f"its answer, from a run of {stage} on the offline model while this page was built (\"{task}\": "
                 "the workspace has no such file):",
                 f"`is_error` を設定した `tool_result` を次の user メッセージで返し、実行は続きます。このページの"
                 f"ビルド中にオフラインモデルで動かした {stage} の呼び出しとその答えです（「{task}」。そのファイルは"
                 "ワークスペースにありません）。"), "",
             fenced("json", shown.replace(workspace, "<workspace>")).rstrip("\n"), "",
             say(f"This text is all the model reads of the failure; the run ended with `{result['stop_reason']}` "
                 f"after {result['turns']} turns.",
                 f"失敗についてモデルが読むのはこのテキストだけです。実行は {result['turns']} ターンのあと "
                 f"`{result['stop_reason']}` で終わりました。")]
    return "\n".join(lines) + "\n"
