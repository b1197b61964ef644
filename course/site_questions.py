"""The three questions that end every chapter, answered for its stage from the stage's own code.

"Building an agent loop yourself" (【実装】エージェントループを自作する — ツール呼び出しの最小形) ends by
asking three things of any agent loop: how does it stop, what is the worst one task can cost, and
what does a failed tool call return to the model. ``three_questions(stage)`` answers them for one
stage, at build time:

* **how it stops**: the stage's ``StopReason`` values (s02 on), each with what ends the run that way;
  for a stage without one, the exits its ``run()`` has (s00 calls the model a fixed number of times,
  s01 leaves its ``while`` only when the model is done);
* **the worst it can cost**, computed from the stage's ``Limits()`` defaults, its ``MAX_TOKENS``, the
  context window and the price list (``course/prices.py``), on the model the offline runs are
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

from . import models, prices
from .offline import DEFAULT_CONTEXT_WINDOW
from .site_markdown import PlaceholderError, fenced, markdown_table

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

# A reply that ends so is not the model's own end; what happens to a tool call in it depends on the stage.
CUT_OR_REFUSED = ("max_tokens", "refusal", "model_context_window_exceeded")

FAILING_TASK = "Compute the total price in missing.txt"  # the tutor reads a file the workspace lacks


@dataclass(frozen=True)
class Bound:
    """The worst one run can cost: at most ``tokens`` tokens, of which at most ``output`` are output."""

    tokens: int
    output: int
    calls: int | None       # the most model calls (None: bounded by the budget, not a count of calls)
    explained: str          # the arithmetic, in one sentence


def three_questions(stage: str) -> str:
    from .site import stage_module  # the site's loader: reloaded when the stage file changed

    module = stage_module(stage)
    return "\n".join([how_it_stops(stage, module), worst_cost(stage, module), failed_call(stage)])


# ---------------------------------------------------------------- 1. how does it stop?

def stop_reasons(module) -> list[str]:
    reasons = getattr(module, "StopReason", None)
    return list(typing.get_args(reasons)) if reasons is not None else []


def how_it_stops(stage: str, module) -> str:
    reasons = stop_reasons(module)
    lines = ["**1. How does it stop?**", ""]
    if reasons:
        lines.append(f"Every way out of a run of {stage} is a value of its `StopReason`, the result's `stop_reason`:")
        lines.append("")
        lines += [f"- `{reason}`: {explained(reason, module)}" for reason in reasons]
        return "\n".join(lines) + "\n"
    calls = model_calls_in_run(module)
    if calls is None:
        lines.append(f"Only when a reply asks for no tool: {stage}'s `run()` leaves its `while` loop there and "
                     "nowhere else, with the reply's own `stop_reason` (`end_turn`, or `max_tokens` or `refusal` "
                     "when such a reply asks for no tool). An API error that outlasts the SDK's retries escapes "
                     "`run()` as an exception. Nothing of our own stops it: a model that always asks for a tool "
                     "keeps it going.")
    else:
        lines.append(f"After at most {calls} model call{'s' if calls != 1 else ''}, whatever the last reply says: "
                     f"{stage}'s `run()` has no loop, and the result's `stop_reason` is the last reply's own "
                     "(`end_turn`, or `tool_use` when the last reply asked for a tool nobody runs). An API error "
                     "escapes `run()` as an exception.")
    return "\n".join(lines) + "\n"


def explained(reason: str, module) -> str:
    text = STOP_REASONS.get(reason, "not explained yet")
    if reason not in CUT_OR_REFUSED:
        return text
    if reason == "max_tokens" and hasattr(module, "MAX_TOKENS_CEILING"):  # s04 on: a cut reply is recovered
        return ("the reply was cut at `MAX_TOKENS` before any whole tool call, and again each time it was asked "
                "again with twice the room, up to `MAX_TOKENS_CEILING` (a cut reply's whole calls run, and the run "
                "goes on); the call it was cut in is answered without being run")
    if hasattr(module, "answer_without_running"):  # s03 on: a cut call is answered, never run
        return text + "; a tool call in it is answered without being run"
    return text + ", and the reply asks for no tool (one that does goes on: s03 stops it)"


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
    from . import make_client
    from .limits import run_options
    from .site import command_line_workspace

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
        return Bound(calls * (window + most), calls * most, calls,
                     f"{calls} calls × ({window:,} tokens of prompt, the most a context window holds, "
                     f"+ {most:,} of reply, `MAX_TOKENS`)")
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
        a_turn = (f"the last turn it lets through makes one model call: up to {window:,} tokens of prompt (a full "
                  f"context window) and {ladder[0]:,} of reply (`MAX_TOKENS`), {turn_tokens:,} tokens")
    else:
        asking = (f"{len(ladder)} for the reply, asked again with more room each time it is cut "
                  f"(`max_tokens` {' + '.join(f'{n:,}' for n in ladder)})" if len(ladder) > 1
                  else f"one for the reply (`max_tokens` {ladder[0]:,})")
        a_turn = (f"the last turn it lets through makes at most {calls_a_turn} model calls, each with up to "
                  f"{window:,} tokens of prompt (a full context window): {asking}"
                  + "".join(f", and one in `{name}()` ({most:,})" for name in others)
                  + f"; {turn_tokens:,} tokens in all")
    by_turns = turns * turn_tokens if turns is not None else None
    output = turns * output_a_turn if turns is not None else None
    if budget is not None and (by_turns is None or budget - 1 + turn_tokens < by_turns):
        tokens = budget - 1 + turn_tokens
        output = min(output, tokens) if output is not None else tokens
        explained = (f"the budget is checked before each turn, so a run stops at the first turn that finds "
                     f"{budget:,} tokens used; before it, at most {budget - 1:,}, and {a_turn}")
        if turns is not None:
            explained += f"; of the whole, at most {output:,} are output ({turns:,} turns × {output_a_turn:,} of reply)"
        return Bound(tokens, output, None, explained)
    return Bound(by_turns, output, turns * calls_a_turn, f"{a_turn}, and {turns:,} turns are allowed")


def priced_model() -> str:
    return models.DEFAULT_CLAUDE_MODEL


def input_price(module, price: prices.Price) -> tuple[float, str]:
    """The dearest rate an input token of this stage can be billed at: a cache write for a stage that
    marks cache breakpoints (at its lifetime's rate), the plain input price otherwise."""
    breakpoint_ = getattr(module, "CACHE_BREAKPOINT", None)
    if isinstance(breakpoint_, dict):
        if breakpoint_.get("ttl") == "1h":
            return price.cache_write_1h, "a 1-hour cache write, the dearest way an input token is billed"
        return price.cache_write, "a 5-minute cache write, the dearest way an input token of this stage is billed"
    return price.input, "the input price (this stage marks no cache breakpoint)"


def dollars(amount: float) -> str:
    return f"${amount:,.2f}" if amount >= 0.01 else f"${amount:,.4f}"


def worst_cost(stage: str, module) -> str:
    model = priced_model()
    price = prices.price_of(model)
    if price is None:
        raise PlaceholderError(f"the price list has no price for {model}, the model the course prices runs as")
    per_call = DEFAULT_CONTEXT_WINDOW * price.input + module.MAX_TOKENS * price.output
    lines = ["**2. What is the worst it can cost?**", ""]
    worst = bound(stage, module)
    if worst is None:
        lines.append(
            f"There is no bound: only the model can stop {stage}, and a model that always asks for a tool "
            f"keeps it going. Each turn can cost up to {dollars(per_call / prices.MILLION)} on `{model}` "
            f"({DEFAULT_CONTEXT_WINDOW:,} tokens of prompt at ${price.input:g} a million, a full context "
            f"window, and {module.MAX_TOKENS:,} of reply at ${price.output:g}), and the history is resent every "
            "turn, so the turns cost more as they go; the number of turns is the model's choice. s03 bounds it.")
        return "\n".join(lines) + "\n"
    limits = default_limits(module)
    rate, why_rate = input_price(module, price)
    cost = ((worst.tokens - worst.output) * rate + worst.output * price.output) / prices.MILLION
    rows = []
    if limits is not None:
        rows += [[f"`{field.name}`", f"{getattr(limits, field.name):,}"] for field in dataclasses.fields(limits)
                 if field.name in ("max_turns", "token_budget")]
    rows += [["`MAX_TOKENS`", f"{module.MAX_TOKENS:,}"],
             ["context window (the largest prompt)", f"{DEFAULT_CONTEXT_WINDOW:,}"],
             ["worst case, tokens", f"**{worst.tokens:,}**"],
             [f"worst case, dollars on `{model}`", f"**{dollars(cost)}**"]]
    where = "At its default limits, one run" if limits is not None else "One run"
    lines.append(f"{where} of {stage} uses at most {worst.tokens:,} tokens: {worst.explained}.")
    lines.append("")
    lines.append(markdown_table(["figure", "value"], rows))
    lines.append("")
    lines.append(f"The dollars price the output tokens at ${price.output:g} a million and the rest at "
                 f"${rate:g} a million, {why_rate}, from the price list of {prices.PRICES_DATE} "
                 f"([source]({prices.SOURCE})). A real run costs far less: this is "
                 f"what the {'limits' if limits is not None else 'code'} promise{'' if limits is not None else 's'}.")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- 3. what does a failed call return?

def failed_call(stage: str) -> str:
    from .site import traced_run

    run = traced_run(stage, FAILING_TASK)
    result = run.result
    if result is None:
        raise PlaceholderError(f"the run of {stage} on {FAILING_TASK!r} returned no result")
    messages, workspace = result["messages"], result["workspace"]
    calls = {block["id"]: block for message in messages if message["role"] == "assistant"
             for block in message["content"] if block.get("type") == "tool_use"}
    failed = next((block for message in messages if message["role"] == "user" and isinstance(message["content"], list)
                   for block in message["content"] if block.get("type") == "tool_result" and block.get("is_error")), None)
    if failed is None:
        raise PlaceholderError(f"the run of {stage} on {FAILING_TASK!r} made no call that failed")
    call = calls[failed["tool_use_id"]]
    shown = "\n".join(json.dumps(block, ensure_ascii=False, indent=2) for block in
                      ({"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["input"]}, failed))
    lines = ["**3. What does a failed tool call return to the model?**", "",
             f"A `tool_result` with `is_error` set, in the next user message, and the run goes on. Here is the "
             f"call and its answer from a run of {stage} on the offline model, made while this page was built "
             f"(the task: \"{FAILING_TASK}\", a file the workspace does not have):", "",
             fenced("json", shown.replace(workspace, "<workspace>")).rstrip("\n"), "",
             f"The model reads exactly this text on its next call, and nothing else about the failure; the run "
             f"ended with `{result['stop_reason']}` after {result['turns']} turns."]
    return "\n".join(lines) + "\n"
