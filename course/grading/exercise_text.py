"""The text of every exercise, in one place: what to build and every contract the grader checks.

A chapter's exercise section is rendered from here (``<!-- exercise-section sNN -->``, by
``course/site/pages.py``), and so is the extension file a student copy gets (``extension_template``).
``tests/test_grading.py`` checks that every region of every stage has a text here under the title
its marker gives, and that each contract the cases of ``course/grading/probes.py`` check is stated.
Exact wording is asked for only where the wording is the lesson; elsewhere the grader checks meaning
(a number given, a name named), never phrasing. No text here shows a solution.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from course.runtime.commands import course_command


@dataclass(frozen=True)
class Text:
    where: str              # the function to complete
    what: str               # what to build, in a sentence or two
    contract: tuple         # what the grader checks, one item each
    ja: "Ja | None" = None  # the same in Japanese, for the Japanese chapter (JAPANESE, below)


@dataclass(frozen=True)
class Extension:
    number: int
    title: str
    signature: str          # the def line
    docstring: str
    what: str
    contract: tuple
    imports: str = "import json\nimport re\n"
    ja: "Ja | None" = None  # the same in Japanese (EXTENSIONS_JA, below)


REBUILD: dict[tuple[str, int], Text] = {
    ("s00", 1): Text("run_tool(workspace, name, arguments)",
                     "Look the tool up by name in TOOL_FUNCTIONS and run it with the call's arguments.",
                     ("returns (text, is_error): the tool's own text and False when it ran;",
                      "an unknown tool is (a text that names the tool, True), never an exception;",
                      "a tool that raises (a missing file, an argument it does not take) is (a text that holds "
                      "the exception's message, True): nothing escapes;",
                      "the tool really runs: a write_file call writes its file.")),
    ("s00", 2): Text("tool_result(workspace, call)",
                     "Run the call through run_tool and wrap what it returns in the block that answers it.",
                     ("returns exactly the keys type ('tool_result'), tool_use_id (the call's id), content (the text) "
                      "and is_error (the flag run_tool returned);",)),
    ("s01", 1): Text("tool_calls(reply)",
                     "Pick the tool_use blocks out of a reply.",
                     ("returns the reply's tool_use blocks, in their order, and nothing else (not its text blocks);",
                      "a reply with no tool_use gives an empty list.")),
    ("s01", 2): Text("run(...)", "Close the loop: ask, record, look for calls, act on every call, write every result back; "
                     "stop when a reply asks for no tool.",
                     ("every reply goes into messages as an assistant message, and every call's result into the next "
                      "user message (the offline model refuses a history that breaks a pair, as the API does);",
                      "the run ends at the first reply without tool_use; turns counts the model calls;",
                      "answer is that reply's text and stop_reason its stop_reason.")),
    ("s02", 1): Text("carry_on(state, reason, trace)", "Record why the loop goes on, and go on.",
                     ("sets state.transition_reason to reason and appends it to state.transitions, once a call;",
                      "calls trace('transition', reason);", "returns True.")),
    ("s02", 2): Text("run(...)", "Take turns until one says stop, saving the state as the run goes.",
                     ("take_turn is called until it returns False;",
                      "the state is saved after every turn that goes on, and once more after the stop, so the "
                      "transcript's last line has the stop reason;",)),
    ("s02", 3): Text("answer_interrupted_calls(state, stop_reason)",
                     "A run killed while its calls ran is resumed with those calls answered, never run again.",
                     ("appends one user message with a tool_result for each tool_use of the last message, in order, "
                      "each with is_error True and the content INTERRUPTED (the constant above the function: its "
                      "wording is the lesson, it tells the model the call may or may not have happened);",
                      "a last message with no tool_use raises course.CourseError: there is nothing to go on from.")),
    ("s03", 1): Text("limit_reached(state, limits)", "Check the turn limit and the token budget before each call.",
                     ("('max_turns', explanation) once state.turn_count has reached limits.max_turns;",
                      "('token_budget', explanation) once input plus output tokens (state.usage) have reached "
                      "limits.token_budget;",
                      "the turn limit is checked first; None while neither is reached;",
                      "the explanation gives the numbers: turns taken and the limit, or tokens used and the budget "
                      "(any wording).",
                      "the limits differ from run to run: nothing may assume a value.")),
    ("s03", 2): Text("no_progress(messages, limits)", "Read off the history whether the run is stuck.",
                     ("a text (any wording) when the last limits.max_repeats calls are one call: the same name and "
                      "the same arguments; it names the call;",
                      "a text when the last limits.max_consecutive_errors tool results all have is_error: "
                      "consecutive ones only, a success in between starts the count again;",
                      "None otherwise.")),
    ("s04", 1): Text("call_tool(workspace, name, arguments)", "Check the name, then the arguments, before a tool runs.",
                     ("an unknown name raises ToolError('unknown_tool', ...) whose hint lists every tool and, when one "
                      "is close (difflib), names the closest;",
                      "arguments the schema refuses raise ToolError('invalid_arguments', ...) whose hint names the "
                      "tool's parameters (course.argument_errors and course.describe_parameters read the schema);",
                      "a good call runs, and its output is returned.")),
    ("s04", 2): Text("cut_to_fit(output, name, arguments)", "Keep a long result small, and say how to see the rest.",
                     ("an output of at most MAX_RESULT_CHARS characters comes back whole;",
                      "a longer one keeps exactly its first MAX_RESULT_CHARS characters, then a marker of one line "
                      "that gives how many characters were not shown and how many there were (any wording);",
                      "for read_file, the marker gives the offset to read on from (the call's offset plus "
                      "MAX_RESULT_CHARS); for other tools, it says to ask for less.")),
    ("s05", 1): Text("mask_old_results(messages, keep, at_least)",
                     "Mask all but the last keep tool results in one batch, or none.",
                     ("every result but the last keep, if not already masked, gets a shorter text content; the count "
                      "of those is returned;",
                      "every tool_result block stays, with its tool_use_id; the assistant messages do not change;",
                      "when the old results hold fewer than at_least estimated tokens (estimate_tokens), nothing "
                      "changes and 0 is returned: the cache is worth more.")),
    ("s05", 2): Text("summarise_old_turns(state, client, model)",
                     "Fold every turn but the last KEEP_TURNS into a summary the model writes.",
                     ("with fewer than 2 × KEEP_TURNS turns, returns False and changes nothing;",
                      "a summary that does not end with end_turn (cut at max_tokens) changes nothing: False;",
                      "otherwise the history becomes one user message holding the task and the summary's text, then "
                      "the last KEEP_TURNS turns whole (each tool_use with its tool_result); returns True.")),
    ("s06", 1): Text("decide(call, rules, approved)", "Deny, then ask, then allow, then the risk class's default.",
                     ("a deny rule anywhere in the list wins over everything; then an ask rule; then, for each entry "
                      "the call acts on, a person's approval of the whole call, an allow rule, the safe list for a "
                      "command, or the default of its risk class;",
                      "the verdict's decision and decided_by ('rule', 'person', 'safe list', 'default') are checked, "
                      "not its wording; the rules and file names differ from run to run.")),
    ("s06", 2): Text("Gate.ask_person(call, arguments, why)", "Put exactly this call to a person.",
                     ("with no approver, deny, decided_by 'no terminal';",
                      "the approver is asked once, with the tool and the arguments;",
                      "'allow once' and 'allow always' allow (decided_by 'person'); only 'allow always' adds the "
                      "call's approval() to gate.approved, so that decide allows the same call again;",
                      "anything else denies, and the verdict's why passes on the person's reason.")),
}


EXTENSIONS: dict[str, Extension] = {
    "s00": Extension(3, "Answer every tool call of one reply", "def answer_all(content: list, run) -> list:",
                     "One tool_result block per tool_use block of ``content``, in order.",
                     "A model may ask for several tools in one reply. s00's run() answers them in a list comprehension; "
                     "write that step as a function of its own, one that a tool raising cannot break.",
                     ("content is a reply's blocks, as dicts; text blocks are skipped;",
                      "run(name, input) returns (text, is_error), or raises;",
                      "returns one block per tool_use, in order: type 'tool_result', its tool_use_id, the text as "
                      "content, is_error as run said;",
                      "when run raises, that call's block has is_error True and the exception's message in its "
                      "content; answer_all itself never raises.")),
    "s01": Extension(3, "Find the calls a history left unanswered", "def unanswered(messages: list) -> list:",
                     "The ids of the tool_use blocks that no tool_result answers in the message right after.",
                     "The loop's promise is that every tool_use is answered. Write the check a reviewer would run.",
                     ("messages is a history, as dicts (string contents have no blocks);",
                      "a tool_use is answered only by a tool_result with its id in the user message right after "
                      "its own message (in any order there);",
                      "returns the unanswered ids, in the order the calls were made.")),
    "s02": Extension(4, "Rebuild the history from a transcript", "def history(records: list) -> list:",
                     "The messages a transcript's records add up to.",
                     "A transcript line says where its messages go ('from'), because a later stage rewrites the "
                     "history. Rebuild it as resume does.",
                     ("records are the transcript's lines, in order, each with 'from' (an index) and 'messages';",
                      "each line's messages replace the history from its 'from' on;",
                      "returns the history after the last line.")),
    "s03": Extension(3, "Stop when the calls go round in a circle", "def cycling(calls: list, rounds: int) -> bool:",
                     "Whether the last calls repeat a cycle of two or more different calls ``rounds`` times.",
                     "no_progress catches one call repeated; a model can also alternate between two or three calls "
                     "forever. Detect it.",
                     ("calls are (name, arguments as JSON text) pairs, oldest first;",
                      "True when, for some length p of 2 or more, the last p × rounds calls are the same p calls "
                      "repeated rounds times, and those p calls are not all the same call;",
                      "False otherwise: fewer rounds, a broken last round, one call repeated (that is no_progress's), "
                      "no calls.")),
    "s04": Extension(3, "Accept arguments sent as a JSON string", "def arguments_object(arguments) -> dict:",
                     "The call's arguments as an object, when a model sent them as JSON text.",
                     "Small models send a tool's arguments as a string of JSON, sometimes in a code fence. s04 "
                     "refuses them; recover instead, and refuse clearly what cannot be recovered.",
                     ("a dict comes back as it is;",
                      "a string that holds a JSON object (spaces around it allowed, or inside a Markdown code fence "
                      "marked json) comes back parsed;",
                      "anything else raises ValueError whose message says an object was expected and names the "
                      "type of what came, and no other type: for JSON text, the type of the value it holds (a JSON "
                      "list is a list, `null` is None); the types are list, int, float, bool and None, and naming "
                      "str as well is always fine.")),
    "s05": Extension(3, "Check that a history keeps every pair", "def broken_pairs(messages: list) -> list:",
                     "The ids a pruning broke: calls with no result after them, results with no call before them.",
                     "Pruning must never break a tool_use/tool_result pair. Write the checker that proves it.",
                     ("a message's content is a text or a list of blocks, and text blocks may sit anywhere among them;",
                      "a tool_use is paired when the user message right after its message has a tool_result with "
                      "its id;",
                      "a tool_result is paired when the assistant message right before its message has a tool_use "
                      "with its id;",
                      "returns the ids of every unpaired block (either kind), each once; the grader sorts them.")),
    "s06": Extension(3, "Tell inside from beside", "def inside(folder: str, path: str) -> bool:",
                     "Whether ``path`` is ``folder`` or beneath it, lexically.",
                     "A path check that compares text prefixes lets /srv/work-evil pass for /srv/work: the CVE class "
                     "the chapter is about. Compare paths, not strings.",
                     ("folder and path are absolute POSIX paths; nothing on the disk is read;",
                      "'.', '..', repeated and trailing slashes are resolved as text first;",
                      "True when path, so resolved, is folder or inside it (a '..' that leaves and comes back in "
                      "ends inside); False for a sibling whose name starts the same, for the parent, and for a '..' "
                      "that leads out."),
                     imports="import posixpath\n"),
}


# A nudge, folded away in the chapter: where to look, never the code.
HINTS = {
    ('s00', 1): "`TOOL_FUNCTIONS.get(name)` gives `None` for a name that is not in the table. The arguments arrive as a dict, so `function(workspace, **arguments)` passes them as keyword arguments; a missing or unexpected argument then raises `TypeError`, which your `except` clause must catch too. Catch `Exception`, not everything: Ctrl-C should still stop the program. Put the exception's type in the message (`FileNotFoundError: ...`), because the model reads it.",
    ('s00', 2): 'The block has `call.id`, `call.name` and `call.input`. The answer is a plain dict with four keys: `"type": "tool_result"`, `"tool_use_id"` (the id of the call, which is what ties the two together), `"content"` (the text) and `"is_error"`.',
    ('s01', 1): '`reply.content` is a list of blocks, and every block has a `.type`: `"text"` or `"tool_use"`. Keep the order: the results go back in the same order as the calls.',
    ('s01', 2): "Start from s00's `run()`; the five steps are the same. Use `while True:` and leave it with `break` when `tool_calls(reply)` is empty. Record the reply in `messages` before you check for calls. Put all the results of one reply in a single user message. Add `reply.usage` after every call, including the last one, or the token count at the end will be short.",
    ('s02', 1): 'Three things change and one is returned. Set `state.transition_reason` to `"tool_results_written"`, append the same value to `state.transitions`, and call `trace("transition", ...)` with it, which prints the `↻ continue:` line. Then return `True`. Appending to the list matters as much as setting the field: the field keeps only the last reason, and the tests compare the whole sequence.',
    ('s02', 2): 'One `while` statement is enough: `take_turn()` does the work and returns whether to go on, so the body of the loop has nothing left to do (`pass`). Pass it the same `state`, `client`, `model`, `workspace` and `trace` on every call: the state is what carries the run from one turn to the next.',
    ('s02', 3): "Collect the `tool_use` blocks of the last message. With none, raise `course.CourseError` with a line that says the run ended with the model's own reply, and leave the history as it was. Otherwise append one user message with one `tool_result` per call: its `tool_use_id`, `INTERRUPTED` as its content, and `is_error` set. Never call the tool: it may already have written its file. The API wants a result for every `tool_use` id, in the message right after, or it refuses the next request.",
    ('s03', 1): 'The turn limit compares `state.turn_count` with `limits.max_turns`; the budget compares the sum of `state.usage["input_tokens"]` and `state.usage["output_tokens"]` with `limits.token_budget`. Use `>=`: the function runs *before* a call, so a run with `max_turns=5` makes five calls and is stopped before the sixth. Check the turn limit first. Put the numbers in the explanation (turns taken and the limit, tokens used and the budget), and the flag to raise.',
    ('s03', 2): 'Everything you need is in the history. The calls are the `tool_use` blocks of the assistant messages, in order; make each one a pair of its name and `json.dumps(block["input"], sort_keys=True, ensure_ascii=False)`, so that the order of the arguments does not matter (and the explanation shows Japanese as it was written, not as `\\u` escapes). Take the last `max_repeats` pairs: there must be exactly that many, and `set()` of them must hold one element. For the errors, `tool_results_in(messages)` gives the results in order; look at their `is_error` flags. Mind a history with fewer calls than the limit: it is not stuck yet.',
    ('s04', 1): '`difflib.get_close_matches(name, TOOL_FUNCTIONS, n=1, cutoff=0)` finds the closest name; with `cutoff=0` it finds one even for an empty name. For the arguments, `course.argument_errors(SCHEMAS[name], arguments)` returns a list of sentences, empty when the arguments are valid, and `course.describe_parameters(SCHEMAS[name])` describes what the tool takes, in one line, for the hint. Check the name first: an unknown tool has no schema to check against.',
    ('s04', 2): 'For `read_file`, the way on is another call with a larger `offset`: the one this call used (`arguments.get("offset", 0)`) plus the characters shown. For the other tools, the way on is a narrower request. Put the marker on a line of its own, in brackets, so that it cannot be mistaken for the file\'s content.',
    ('s05', 1): '`tool_results_in(messages)` already returns every `tool_result` block in order. They are the dicts inside the history, so assigning to `block["content"]` changes the history itself. To name the call, build a dict from `tool_use` id to `tool_use` block over the assistant messages first. Change only `"content"`: keep the block, its `tool_use_id` and its `is_error`. Start every placeholder with the same marker (`[masked`) and skip a block whose content already starts with it. Careful with `results[:-keep]`: it is wrong when `keep` is 0 and when there are fewer results than `keep`. Collect the blocks to mask first, add up `estimate_tokens(block["content"])` over them, and return 0 before changing anything if the sum is under `at_least`.',
    ('s05', 2): 'A turn starts at an assistant message: collect their indexes. With fewer than `2 * KEEP_TURNS` of them, return `False`. Otherwise cut at `turn_starts[-KEEP_TURNS]`. Everything from the cut on stays, so the kept part starts with an assistant message whose calls are answered right after it. Keep the task: it is the text of the first message, before `SUMMARY_HEADING` if an earlier summary is there (`str.partition` splits it). `transcript(messages[1:cut])` turns the old turns into text for the request. Send the request with `client.messages.create(model=..., max_tokens=..., messages=[...])` and no tools, and pass `reply.usage` to `add_usage` before anything else. If `reply.stop_reason` is not `"end_turn"`, return `False` and leave the history alone. Replace the list\'s contents with `messages[:] = ...`, not `state.messages = ...`.',
    ('s06', 1): 'Two loops, in this order: `for kind in ("deny", "ask")` around `for rule in rules`, returning at the first match; then `for subject in call.acts_on`, keeping an allow verdict for each and returning the default at the first entry nothing allows (unless that default is itself allow). Return the first allow verdict at the end. Try your function on `gate.read_call(workspace, tool, arguments)`.',
    ('s06', 2): 'An approval is never a pattern: store the exact pairs, and let `decide()` compare them with `==` (a set lookup). A command is stored as sh reads it (`call.acts_on[0]`, already normalised by the reader), so `" ls\\n"` and `"ls"` are one approval, and `"ls\\v"` is another.',
}


# ---------------------------------------------------------------- the same texts in Japanese

@dataclass(frozen=True)
class Ja:
    """An exercise's text for the Japanese chapter: the title, what to build, every contract item (one for
    each English item, in the same order) and the hint, if the English has one. The names in backticks
    and the values the grader compares are the code's, as in the English."""

    title: str
    what: str
    contract: tuple
    hint: str = ""


JAPANESE: dict[tuple[str, int], Ja] = {
    ("s00", 1): Ja("名前でツール呼び出しを振り分ける",
                   "TOOL_FUNCTIONS からツールを名前で引き、呼び出しの引数を渡して実行します。",
                   ("(text, is_error) を返します。ツールが動いたときは、ツール自身のテキストと False です。",
                    "知らないツールは（そのツールの名前を含むテキスト, True）です。例外にはしません。",
                    "例外を投げたツール（存在しないファイル、受け付けない引数）は（例外のメッセージを含むテキスト, "
                    "True）です。何も外へ漏らしません。",
                    "ツールは本当に動きます。write_file の呼び出しはそのファイルを書きます。"),
                   "`TOOL_FUNCTIONS.get(name)` は、表にない名前に `None` を返します。引数は dict で届くので、"
                   "`function(workspace, **arguments)` でキーワード引数として渡せます。引数が足りない、または余計な"
                   "ときは `TypeError` になるので、`except` 節はそれも捕まえる必要があります。捕まえるのは `Exception` "
                   "で、すべてではありません。Ctrl-C でプログラムが止まるようにしておきます。モデルが読むので、"
                   "メッセージには例外の型を入れます（`FileNotFoundError: ...`）。"),
    ("s00", 2): Ja("tool_use に tool_result で答える",
                   "呼び出しを run_tool で実行し、返ってきたものを、その呼び出しに答えるブロックに包みます。",
                   ("キーがちょうど type（'tool_result'）、tool_use_id（呼び出しの id）、content（テキスト）、"
                    "is_error（run_tool が返したフラグ）の四つのものを返します。",),
                   "ブロックには `call.id`、`call.name`、`call.input` があります。答えは四つのキーを持つただの dict "
                   "です。`\"type\": \"tool_result\"`、`\"tool_use_id\"`（呼び出しの id。二つを結びつけるのはこれです）、"
                   "`\"content\"`（テキスト）、`\"is_error\"` です。"),
    ("s01", 1): Ja("返答の中のツール呼び出しを見つける",
                   "返答から tool_use ブロックを取り出します。",
                   ("返答の tool_use ブロックを、その順に、それだけを返します（text ブロックは含めません）。",
                    "tool_use のない返答では空のリストです。"),
                   "`reply.content` はブロックのリストで、どのブロックにも `.type` があります（`\"text\"` か "
                   "`\"tool_use\"`）。順序は保ちます。結果は呼び出しと同じ順に返します。"),
    ("s01", 2): Ja("ループを閉じる",
                   "ループを閉じます。モデルに尋ね、記録し、呼び出しを探し、すべての呼び出しを実行し、すべての結果を"
                   "書き戻します。ツールを求めない返答が来たら止まります。",
                   ("どの返答も assistant メッセージとして messages に入り、どの呼び出しの結果も次の user メッセージに"
                    "入ります（API と同じく、オフラインモデルもペアが壊れた履歴を拒みます）。",
                    "tool_use のない最初の返答で実行は終わります。turns はモデル呼び出しの回数です。",
                    "answer はその返答のテキスト、stop_reason はその返答の stop_reason です。"),
                   "s00 の `run()` から始めます。五つの手順は同じです。`while True:` を使い、`tool_calls(reply)` が空"
                   "になったら `break` で抜けます。呼び出しを調べる前に、返答を `messages` に記録します。一つの返答の"
                   "結果はすべて一つの user メッセージに入れます。最後の呼び出しも含め、呼び出しのたびに "
                   "`reply.usage` を足します。そうしないと、最後のトークン数が足りなくなります。"),
    ("s02", 1): Ja("ループが続く理由を記録する",
                   "ループが続く理由を記録して、続けます。",
                   ("state.transition_reason に reason を設定し、state.transitions に一回の呼び出しにつき一度追加します。",
                    "trace('transition', reason) を呼びます。",
                    "True を返します。"),
                   "変わるものが三つ、返すものが一つです。`state.transition_reason` を `\"tool_results_written\"` に"
                   "し、同じ値を `state.transitions` に追加し、その値で `trace(\"transition\", ...)` を呼びます"
                   "（これが `↻ continue:` の行を出します）。そして `True` を返します。リストへの追加はフィールドの設定"
                   "と同じくらい大事です。フィールドは最後の理由しか残さず、テストは並び全体を比べます。"),
    ("s02", 2): Ja("止まると言うまでターンを続ける",
                   "止まると言うターンが来るまでターンを続け、進むたびに状態を保存します。",
                   ("take_turn は False を返すまで呼ばれます。",
                    "状態は、続くターンのたびに保存され、止まったあとにもう一度保存されます。そのため、"
                    "トランスクリプトの最後の行に停止理由が入ります。"),
                   "`while` 文が一つあれば足ります。仕事は `take_turn()` がして、続けるかどうかを返すので、ループの"
                   "本体にはすることが残りません（`pass`）。どの呼び出しにも同じ `state`、`client`、`model`、"
                   "`workspace`、`trace` を渡します。実行をターンからターンへ運ぶのは状態です。"),
    ("s02", 3): Ja("止められた実行が結果なしで残した呼び出しに答える",
                   "呼び出しの実行中に止められた実行は、その呼び出しに答えてから再開します。呼び出しをもう一度実行"
                   "することはしません。",
                   ("最後のメッセージの tool_use ごとに、順に tool_result を一つずつ持つ user メッセージを一つ追加し"
                    "ます。どれも is_error は True、content は INTERRUPTED です（関数の上の定数。その文言が学ぶ点"
                    "で、呼び出しが起きたかどうか分からないことをモデルに伝えます）。",
                    "最後のメッセージに tool_use がなければ course.CourseError を投げます。続けるものがありません。"),
                   "最後のメッセージの `tool_use` ブロックを集めます。一つもなければ、実行がモデル自身の返答で終わった"
                   "と言う一行で `course.CourseError` を投げ、履歴はそのままにします。あれば、呼び出しごとに一つの `tool_result` を持つ "
                   "user メッセージを一つ追加します。その `tool_use_id`、content に `INTERRUPTED`、`is_error` を設定し"
                   "ます。ツールは呼びません。すでにファイルを書いたかもしれないからです。API は、すべての `tool_use` "
                   "の id に、すぐ次のメッセージで結果を求めます。そうでなければ次のリクエストを拒みます。"),
    ("s03", 1): Ja("上限を超える前に止まる",
                   "各呼び出しの前に、ターン上限とトークン予算を調べます。",
                   ("state.turn_count が limits.max_turns に達したら ('max_turns', 説明) です。",
                    "入力と出力のトークン（state.usage）の合計が limits.token_budget に達したら ('token_budget', 説明) "
                    "です。",
                    "ターン上限を先に調べます。どちらにも達していなければ None です。",
                    "説明には数字を入れます。使ったターン数と上限、または使ったトークン数と予算です（文言は自由）。",
                    "上限は実行ごとに違います。どんな値も決め打ちにはできません。"),
                   "ターン上限は `state.turn_count` と `limits.max_turns` を比べ、予算は `state.usage[\"input_tokens\"]` "
                   "と `state.usage[\"output_tokens\"]` の合計と `limits.token_budget` を比べます。`>=` を使います。"
                   "この関数は呼び出しの**前**に動くので、`max_turns=5` の実行は五回呼び出し、六回目の前に止められます。"
                   "ターン上限を先に調べます。説明には数字（使ったターン数と上限、使ったトークン数と予算）と、上げる"
                   "ためのオプションを入れます。"),
    ("s03", 2): Ja("進んでいないことを見つける",
                   "実行が行き詰まっているかどうかを、履歴から読み取ります。",
                   ("直近の limits.max_repeats 回の呼び出しが一つの呼び出し（同じ名前、同じ引数）のとき、テキスト"
                    "（文言は自由）を返します。その呼び出しを名指しします。",
                    "直近の limits.max_consecutive_errors 個のツール結果がすべて is_error のとき、テキストを返します。"
                    "数えるのは連続したものだけで、間に成功が一つあれば数え直しです。",
                    "それ以外は None です。"),
                   "必要なものはすべて履歴にあります。呼び出しは assistant メッセージの `tool_use` ブロックで、順に"
                   "並んでいます。それぞれを、名前と `json.dumps(block[\"input\"], sort_keys=True, ensure_ascii=False)` の組に"
                   "します。こうすれば引数の順序は関係なく、説明には日本語が `\\u` のエスケープではなく書いたとおりに出ます。最後の `max_repeats` 組を取ります。ちょうどその数だけあり、"
                   "その `set()` の要素が一つでなければなりません。エラーについては、`tool_results_in(messages)` が"
                   "結果を順に返すので、その `is_error` フラグを見ます。呼び出しが上限より少ない履歴に注意します。"
                   "それはまだ行き詰まっていません。"),
    ("s04", 1): Ja("知らないツールや誤った引数を拒み、呼び出しの直し方を伝える",
                   "ツールが動く前に、名前を、次に引数を調べます。",
                   ("知らない名前は ToolError('unknown_tool', ...) を投げます。その hint はすべてのツールを挙げ、"
                    "近いものがあれば（difflib）いちばん近いものを名指しします。",
                    "スキーマが拒む引数は ToolError('invalid_arguments', ...) を投げます。その hint はツールの"
                    "パラメータを挙げます（course.argument_errors と course.describe_parameters がスキーマを読みます）。",
                    "正しい呼び出しは動き、その出力が返ります。"),
                   "`difflib.get_close_matches(name, TOOL_FUNCTIONS, n=1, cutoff=0)` がいちばん近い名前を見つけます。"
                   "`cutoff=0` なら空の名前にも一つ見つけます。引数については、"
                   "`course.argument_errors(SCHEMAS[name], arguments)` が文のリストを返し（引数が正しければ空）、"
                   "`course.describe_parameters(SCHEMAS[name])` がツールの受け取るものを hint 用に一行で説明します。"
                   "名前を先に調べます。知らないツールには照らし合わせるスキーマがありません。"),
    ("s04", 2): Ja("長い結果を、残りの見方を伝える目印つきで切る",
                   "長い結果を小さく保ち、残りの見方を伝えます。",
                   ("MAX_RESULT_CHARS 文字以下の出力はそのまま返ります。",
                    "それより長いものは、ちょうど最初の MAX_RESULT_CHARS 文字を残し、そのあとに一行の目印を付けます。"
                    "目印は、見せなかった文字数と全体の文字数を伝えます（文言は自由）。",
                    "read_file では、目印が続きを読むオフセット（呼び出しのオフセット + MAX_RESULT_CHARS）を伝えます。"
                    "ほかのツールでは、求める量を減らすように伝えます。"),
                   "`read_file` の続きは、より大きな `offset` でのもう一回の呼び出しです。この呼び出しが使ったもの"
                   "（`arguments.get(\"offset\", 0)`）に、見せた文字数を足します。ほかのツールの続きは、もっと狭い"
                   "リクエストです。目印はファイルの中身と取り違えられないよう、括弧に入れて一行にします。"),
    ("s05", 1): Ja("古いツール結果をまとめてマスクし、ペアはすべて保つ",
                   "最後の keep 個を除くツール結果を一度にまとめてマスクするか、一つもマスクしません。",
                   ("最後の keep 個を除くどの結果も、まだマスクされていなければ、もっと短いテキストの content に"
                    "なります。その数を返します。",
                    "tool_result ブロックはすべて、その tool_use_id とともに残ります。assistant メッセージは変わり"
                    "ません。",
                    "古い結果の見積もりトークン（estimate_tokens）が at_least より少ないときは、何も変えずに 0 を"
                    "返します。キャッシュのほうが価値があります。"),
                   "`tool_results_in(messages)` は、すでにすべての `tool_result` ブロックを順に返します。それらは履歴"
                   "の中の dict そのものなので、`block[\"content\"]` への代入は履歴そのものを変えます。呼び出しを名指し"
                   "するには、まず assistant メッセージから、`tool_use` の id から `tool_use` ブロックへの dict を作り"
                   "ます。変えるのは `\"content\"` だけです。ブロック、その `tool_use_id`、その `is_error` は保ちます。"
                   "どのプレースホルダーも同じ目印（`[masked`）で始め、content がすでにそれで始まるブロックは飛ばし"
                   "ます。`results[:-keep]` には注意します。`keep` が 0 のときと、結果が `keep` より少ないときに誤り"
                   "ます。マスクするブロックを先に集め、それらの `estimate_tokens(block[\"content\"])` を足し、合計が "
                   "`at_least` 未満なら、何かを変える前に 0 を返します。"),
    ("s05", 2): Ja("tool_use と tool_result のペアを壊さずに、古いターンを要約にまとめる",
                   "最後の KEEP_TURNS 個を除くすべてのターンを、モデルが書く要約にまとめます。",
                   ("ターンが 2 × KEEP_TURNS 未満なら、False を返し、何も変えません。",
                    "end_turn で終わらない要約（max_tokens で切れたもの）は何も変えません。False です。",
                    "それ以外では、履歴は、タスクと要約のテキストを持つ一つの user メッセージと、そのあとに続く最後の "
                    "KEEP_TURNS 個のターンそのまま（どの tool_use もその tool_result とともに）になります。True を"
                    "返します。"),
                   "ターンは assistant メッセージで始まります。その位置を集めます。それが `2 * KEEP_TURNS` 個より"
                   "少なければ `False` を返します。そうでなければ `turn_starts[-KEEP_TURNS]` で切ります。切れ目から"
                   "あとはすべて残るので、残る部分は、その呼び出しにすぐあとで答えが付いた assistant メッセージで始まり"
                   "ます。タスクは残します。それは最初のメッセージのテキストで、前の要約があればその "
                   "`SUMMARY_HEADING` より前です（`str.partition` で分けられます）。`transcript(messages[1:cut])` が"
                   "古いターンをリクエスト用のテキストにします。リクエストは `client.messages.create(model=..., "
                   "max_tokens=..., messages=[...])` でツールなしに送り、何よりも先に `reply.usage` を `add_usage` に"
                   "渡します。`reply.stop_reason` が `\"end_turn\"` でなければ、`False` を返して履歴はそのままにします。"
                   "リストの中身は `state.messages = ...` ではなく `messages[:] = ...` で置き換えます。"),
    ("s06", 1): Ja("決める: 拒否、次に確認、次に許可、最後に既定",
                   "拒否、次に確認、次に許可、最後にリスク区分の既定の順に決めます。",
                   ("リストのどこかにある deny ルールは何よりも優先します。次に ask ルールです。次に、呼び出しが作用"
                    "する項目ごとに、人による呼び出し全体の承認、allow ルール、コマンドなら安全リスト、またはその"
                    "リスク区分の既定です。",
                    "調べるのは判定の decision と decided_by（'rule'、'person'、'safe list'、'default'）で、文言では"
                    "ありません。ルールとファイル名は実行ごとに違います。"),
                   "二つのループを、この順に書きます。`for rule in rules` を `for kind in (\"deny\", \"ask\")` で囲み、"
                   "最初に合ったもので返します。次に `for subject in call.acts_on` で、項目ごとに許可の判定を取っておき、"
                   "何も許可しない最初の項目で既定を返します（その既定自体が許可でなければ）。最後に最初の許可の判定を"
                   "返します。`gate.read_call(workspace, tool, arguments)` で関数を試してください。"),
    ("s06", 2): Ja("ちょうど一つのことを人に尋ねる",
                   "ちょうどこの呼び出しを人に尋ねます。",
                   ("承認する人がいなければ拒否します。decided_by は 'no terminal' です。",
                    "承認する人には一度だけ、ツールと引数を添えて尋ねます。",
                    "'allow once' と 'allow always' は許可します（decided_by は 'person'）。'allow always' だけが呼び出し"
                    "の approval() を gate.approved に加え、decide が同じ呼び出しをまた許可するようにします。",
                    "それ以外は拒否し、判定の why はその人の理由を伝えます。"),
                   "承認はパターンではありません。正確な組を保存し、`decide()` に `==` で比べさせます（集合の検索）。"
                   "コマンドは sh が読むとおりに保存される（`call.acts_on[0]`、読み手がすでに正規化したもの）ので、"
                   "`\" ls\\n\"` と `\"ls\"` は一つの承認で、`\"ls\\v\"` は別の承認です。"),
}

EXTENSIONS_JA: dict[str, Ja] = {
    "s00": Ja("一つの返答のすべてのツール呼び出しに答える",
              "モデルは一つの返答で複数のツールを求めることがあります。s00 は一つに答えます。すべてに答えてください。",
              ("content は返答のブロックで、dict です。text ブロックは飛ばします。",
               "run(name, input) は (text, is_error) を返すか、例外を投げます。",
               "tool_use ごとに一つのブロックを順に返します。type は 'tool_result'、その tool_use_id、content に"
               "テキスト、is_error は run が言ったとおりです。",
               "run が例外を投げたら、その呼び出しのブロックは is_error が True で、content に例外のメッセージが"
               "入ります。answer_all 自身は例外を投げません。")),
    "s01": Ja("履歴が答えずに残した呼び出しを見つける",
              "ループの約束は、どの tool_use にも答えることです。レビューする人が走らせるチェックを書いてください。",
              ("messages は履歴で、dict です（文字列の content にはブロックがありません）。",
               "tool_use に答えたことになるのは、そのメッセージのすぐ次の user メッセージにある、その id を持つ "
               "tool_result だけです（その中では順不同）。",
               "答えのない id を、呼び出しが行われた順に返します。")),
    "s02": Ja("トランスクリプトから履歴を組み立て直す",
              "トランスクリプトの行は、そのメッセージがどこに入るか（'from'）を言います。後のステージが履歴を"
              "書き換えるからです。resume と同じように組み立て直してください。",
              ("records はトランスクリプトの行で、順に並び、それぞれ 'from'（位置）と 'messages' を持ちます。",
               "各行の messages は、履歴のその 'from' から先を置き換えます。",
               "最後の行のあとの履歴を返します。")),
    "s03": Ja("呼び出しが輪になって回ったら止める",
              "no_progress は同じ呼び出しの繰り返しを捕まえます。モデルは二つや三つの呼び出しを永遠に行き来する"
              "こともあります。それを見つけてください。",
              ("calls は（名前, JSON テキストの引数）の組で、古いものが先です。",
               "2 以上のある長さ p について、直近の p × rounds 個の呼び出しが同じ p 個の呼び出しの rounds 回の"
               "繰り返しで、その p 個がすべて同じ呼び出しではないとき True です。",
               "それ以外は False です。回数が足りない、最後の一周が崩れている、一つの呼び出しの繰り返し（それは "
               "no_progress の仕事）、呼び出しがない、のどれもです。")),
    "s04": Ja("JSON 文字列で送られた引数を受け入れる",
              "小さなモデルは、ツールの引数を JSON の文字列で、ときにはコードフェンスに入れて送ります。s04 はそれを"
              "拒みます。代わりに取り戻し、取り戻せないものははっきり拒んでください。",
              ("dict はそのまま返ります。",
               "JSON オブジェクトを持つ文字列（前後の空白や、json と書いた Markdown のコードフェンスの中も可）は、"
               "解析して返ります。",
               "それ以外は ValueError を投げ、そのメッセージはオブジェクトを期待したことを言い、受け取ったものの型を"
               "名指しし、ほかの型は名指ししません。JSON のテキストなら、それが持つ値の型です（JSON のリストは list、"
               "`null` は None）。型は list、int、float、bool、None で、str をあわせて名指しするのはかまいません。")),
    "s05": Ja("履歴がすべてのペアを保っているか調べる",
              "プルーニングは tool_use と tool_result のペアを決して壊してはいけません。それを証明するチェッカーを"
              "書いてください。",
              ("メッセージの content はテキストか、ブロックのリストです。text ブロックはその中のどこにあってもかまいません。",
               "tool_use がペアになっているのは、そのメッセージのすぐ次の user メッセージに、その id を持つ "
               "tool_result があるときです。",
               "tool_result がペアになっているのは、そのメッセージのすぐ前の assistant メッセージに、その id を"
               "持つ tool_use があるときです。",
               "ペアのないブロック（どちらの種類も）の id を、それぞれ一度ずつ返します。並べ替えは採点側がします。")),
    "s06": Ja("中と隣を見分ける",
              "テキストの前方一致で比べるパスのチェックは、/srv/work-evil を /srv/work として通してしまいます。"
              "この章が扱う CVE の類です。文字列ではなくパスを比べてください。",
              ("folder と path は絶対 POSIX パスです。ディスクからは何も読みません。",
               "'.'、'..'、重なったスラッシュと末尾のスラッシュは、先にテキストとして解決します。",
               "そう解決した path が folder そのもの、またはその中なら True です（'..' で外へ出て戻ってくるものは"
               "中で終わります）。名前の始まりが同じ隣のもの、親、外へ出る '..' には False です。")),
}

# Each text holds its Japanese beside its English (tests/test_site_in_japanese.py requires both for every exercise).
REBUILD = {key: replace(entry, ja=JAPANESE.get(key)) for key, entry in REBUILD.items()}
EXTENSIONS = {stage: replace(entry, ja=EXTENSIONS_JA.get(stage)) for stage, entry in EXTENSIONS.items()}


def text(stage: str, number: int) -> Text | None:
    return REBUILD.get((stage, number))


def extension(stage: str) -> Extension | None:
    return EXTENSIONS.get(stage)


def extension_template(stage: str) -> str:
    """extension.py of a student copy: the function, its region stubbed, its contract as the docstring."""
    ext = EXTENSIONS[stage]
    contract = "\n".join(f"    - {item}" for item in ext.contract)
    message = f"exercise {ext.number}: {ext.title} — see the {stage} chapter"
    return (f'"""The extension exercise of {stage}: {ext.title}.\n\n{ext.what}\nNo solution of it is in the course: the '
            f'grader checks what the docstring says.\n"""\n\nfrom __future__ import annotations\n\n{ext.imports}\n\n'
            f'{ext.signature}\n    """{ext.docstring}\n\n{contract}\n    """\n'
            f"    # >>> exercise {ext.number}: {ext.title}\n    raise NotImplementedError({message!r})\n"
            f"    # <<< exercise {ext.number}\n")


# What an exercise region may not use, and why: said in each chapter's exercises section and at the top of
# each file of a copy, so that a student meets the rule before a check refuses a region for it. The grader's
# own lists (course/grading/grade.py: BANNED_CALLS, BANNED_MODULES) hold more; a test checks that each thing
# named here is refused.
REGION_RULES_NAMED = ("import", "open", "eval", "exec", "getattr", "setattr", "globals", "sys", "os", "__")
REGION_RULES = (
    "A region may not import, nor use `open`, `eval`, `exec`, `compile`, `getattr`, `setattr`, `globals`, `vars`, "
    "the modules `sys`, `os`, `subprocess` and the like, or any name or string that begins with `__`: the region "
    "is graded with the rest of the stage as the course wrote it, and these are the ways a region could read the "
    "course's own answers or change what the grader sees. Use the names the module already has.")
REGION_RULES_JA = (
    "演習の部分では、import も、`open`、`eval`、`exec`、`compile`、`getattr`、`setattr`、`globals`、`vars` も、"
    "`sys`、`os`、`subprocess` などのモジュールも、`__` で始まる名前や文字列も使えません。演習の部分はステージの"
    "ほかの部分をコースが書いたままにして採点するので、これらはコース自身の答えを読んだり、採点プログラムが見るものを"
    "変えたりする道になるからです。モジュールにすでにある名前を使ってください。")


def copy_header(stage: str) -> str:
    """The comment at the top of each file of a student copy that has exercise regions."""
    words, lines, line = REGION_RULES.replace("`", "").split(), [], "#"
    for word in words:
        if len(line) + 1 + len(word) > 100:
            lines.append(line)
            line = "#"
        line += " " + word
    lines.append(line)
    return (f"# A student copy of {stage}: write only between the '# >>> exercise' and '# <<< exercise' markers.\n"
            + "\n".join(lines) + "\n")


def section(stage: str, regions: list, language: str = "en") -> str:
    """The chapter's exercise section, as Markdown: how to get and check a copy, then each exercise
    (``language`` "ja": the Japanese chapter's, from each text's ``ja``)."""
    if language == "ja":
        return section_in_japanese(stage, regions)
    command = course_command()
    lines = [
        "Get a copy with the exercises stubbed, and check it as often as you like:",
        "",
        "```bash",
        f"{command} exercise {stage} my-{stage}      # agent.py and extension.py, regions stubbed",
        f"{command} check {stage} my-{stage}         # a scorecard: each exercise, its cases, why one failed",
        "```",
        "",
        "Write only between an exercise's markers: the grader refuses a copy that changed anything else. "
        "Each exercise is graded alone, with the rest of the stage as the course wrote it, on values drawn "
        "anew at each check (the scorecard prints the number they were drawn from; `--seed N` draws the same again).",
        "",
        REGION_RULES,
        "",
    ]
    for region in regions:
        entry = REBUILD.get((stage, region.number))
        if entry is None:
            raise KeyError(f"no text for {stage} exercise {region.number} in course/grading/exercise_text.py")
        lines += [f"### Exercise {region.number}: {region.title}", "",
                  f"In `{stage}/{region.file}`, `{entry.where}`. {entry.what}", "", "The grader checks that:", ""]
        lines += [f"- {item}" for item in entry.contract] + [""]
        if (stage, region.number) in HINTS:
            lines += ["??? hint", f"    {HINTS[stage, region.number]}", ""]
    ext = EXTENSIONS.get(stage)
    if ext:
        lines += [f"### Exercise {ext.number} (extension): {ext.title}", "",
                  f"In `extension.py` of your copy, `{ext.signature.removeprefix('def ').removesuffix(':')}`. {ext.what} "
                  "The course does not do this: there is no answer to look up.", "", "The grader checks that:", ""]
        lines += [f"- {item}" for item in ext.contract] + [""]
    return "\n".join(lines)


def section_in_japanese(stage: str, regions: list) -> str:
    """The exercise section of a Japanese chapter: the same exercises, commands and contracts, in Japanese.
    The scorecard a check prints stays English (it is the command line's output)."""
    command = course_command()
    lines = [
        "演習の部分を空にしたコピーを作り、何度でもチェックできます。",
        "",
        "```bash",
        f"{command} exercise {stage} my-{stage}      # agent.py と extension.py（演習の部分は空）",
        f"{command} check {stage} my-{stage}         # スコアカード: 演習ごとのケースと、失敗した理由",
        "```",
        "",
        "書くのは演習の目印の間だけです。それ以外を変えたコピーは、採点が受け付けません。演習は一つずつ、"
        "ステージのほかの部分はコースが書いたままの状態で採点されます。値はチェックのたびに新しく選ばれます"
        "（スコアカードが選んだ元の数を表示し、`--seed N` で同じ値をもう一度選べます）。",
        "",
        REGION_RULES_JA,
        "",
    ]
    for region in regions:
        entry = REBUILD.get((stage, region.number))
        if entry is None or entry.ja is None:
            raise KeyError(f"no Japanese text for {stage} exercise {region.number} in course/grading/exercise_text.py")
        lines += [f"### 演習 {region.number}: {entry.ja.title}", "",
                  f"`{stage}/{region.file}` の `{entry.where}` です。{entry.ja.what}", "", "採点で調べること:", ""]
        lines += [f"- {item}" for item in entry.ja.contract] + [""]
        if entry.ja.hint:
            lines += ["??? hint \"ヒント\"", f"    {entry.ja.hint}", ""]
    ext = EXTENSIONS.get(stage)
    if ext:
        if ext.ja is None:
            raise KeyError(f"no Japanese text for {stage}'s extension in course/grading/exercise_text.py")
        lines += [f"### 演習 {ext.number}（発展）: {ext.ja.title}", "",
                  f"コピーの `extension.py` の `{ext.signature.removeprefix('def ').removesuffix(':')}` です。"
                  f"{ext.ja.what}コースはこれを作らないので、調べて見つかる答えはありません。", "",
                  "採点で調べること:", ""]
        lines += [f"- {item}" for item in ext.ja.contract] + [""]
    return "\n".join(lines)
