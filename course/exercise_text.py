"""The text of every exercise, in one place: what to build and every contract the grader checks.

A chapter's exercise section is rendered from here (``<!-- exercise-section sNN -->``, by
``course/site.py``), and so is the extension file a student copy gets (``extension_template``).
``tests/test_grading.py`` checks that every region of every stage has a text here under the title
its marker gives, and that each contract the cases of ``course/grading_probes.py`` check is stated.
Exact wording is asked for only where the wording is the lesson; elsewhere the grader checks meaning
(a number given, a name named), never phrasing. No text here shows a solution.
"""

from __future__ import annotations

from dataclasses import dataclass

from .commands import course_command


@dataclass(frozen=True)
class Text:
    where: str              # the function to complete
    what: str               # what to build, in a sentence or two
    contract: tuple         # what the grader checks, one item each


@dataclass(frozen=True)
class Extension:
    number: int
    title: str
    signature: str          # the def line
    docstring: str
    what: str
    contract: tuple
    imports: str = "import json\nimport re\n"


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
                     "A model may ask for several tools in one reply; s00 answers one. Answer them all.",
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
                      "type received (list, str, int...).")),
    "s05": Extension(3, "Check that a history keeps every pair", "def broken_pairs(messages: list) -> list:",
                     "The ids a pruning broke: calls with no result after them, results with no call before them.",
                     "Pruning must never break a tool_use/tool_result pair. Write the checker that proves it.",
                     ("a tool_use is paired when the user message right after its message has a tool_result with "
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
                      "True when path is folder or inside it; False for a sibling whose name starts the same, for "
                      "the parent, and for a '..' that leads out."),
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
    ('s02', 3): "Collect the `tool_use` blocks of the last message. With none, raise `course.CourseError` with a line that says the run ended with the model's own reply. Otherwise append one user message with one `tool_result` per call: its `tool_use_id`, `INTERRUPTED` as its content, and `is_error` set. Never call the tool: it may already have written its file. The API wants a result for every `tool_use` id, in the message right after, or it refuses the next request.",
    ('s03', 1): 'The turn limit compares `state.turn_count` with `limits.max_turns`; the budget compares the sum of `state.usage["input_tokens"]` and `state.usage["output_tokens"]` with `limits.token_budget`. Use `>=`: the function runs *before* a call, so a run with `max_turns=5` makes five calls and is stopped before the sixth. Check the turn limit first. Put the numbers in the explanation (turns taken and the limit, tokens used and the budget), and the flag to raise.',
    ('s03', 2): 'Everything you need is in the history. The calls are the `tool_use` blocks of the assistant messages, in order; make each one a pair of its name and `json.dumps(block["input"], sort_keys=True)`, so that the order of the arguments does not matter. Take the last `max_repeats` pairs: there must be exactly that many, and `set()` of them must hold one element. For the errors, `tool_results_in(messages)` gives the results in order; look at their `is_error` flags. Mind a history with fewer calls than the limit: it is not stuck yet.',
    ('s04', 1): '`difflib.get_close_matches(name, TOOL_FUNCTIONS, n=1, cutoff=0)` finds the closest name; with `cutoff=0` it finds one even for an empty name. For the arguments, `course.argument_errors(SCHEMAS[name], arguments)` returns a list of sentences, empty when the arguments are valid, and `course.describe_parameters(SCHEMAS[name])` describes what the tool takes, in one line, for the hint. Check the name first: an unknown tool has no schema to check against.',
    ('s04', 2): 'For `read_file`, the way on is another call with a larger `offset`: the one this call used (`arguments.get("offset", 0)`) plus the characters shown. For the other tools, the way on is a narrower request. Put the marker on a line of its own, in brackets, so that it cannot be mistaken for the file\'s content.',
    ('s05', 1): '`tool_results_in(messages)` already returns every `tool_result` block in order. They are the dicts inside the history, so assigning to `block["content"]` changes the history itself. To name the call, build a dict from `tool_use` id to `tool_use` block over the assistant messages first. Change only `"content"`: keep the block, its `tool_use_id` and its `is_error`. Start every placeholder with the same marker (`[masked`) and skip a block whose content already starts with it. Careful with `results[:-keep]`: it is wrong when `keep` is 0 and when there are fewer results than `keep`. Collect the blocks to mask first, add up `estimate_tokens(block["content"])` over them, and return 0 before changing anything if the sum is under `at_least`.',
    ('s05', 2): 'A turn starts at an assistant message: collect their indexes. With fewer than `2 * KEEP_TURNS` of them, return `False`. Otherwise cut at `turn_starts[-KEEP_TURNS]`. Everything from the cut on stays, so the kept part starts with an assistant message whose calls are answered right after it. Keep the task: it is the text of the first message, before `SUMMARY_HEADING` if an earlier summary is there (`str.partition` splits it). `transcript(messages[1:cut])` turns the old turns into text for the request. Send the request with `client.messages.create(model=..., max_tokens=..., messages=[...])` and no tools, and pass `reply.usage` to `add_usage` before anything else. If `reply.stop_reason` is not `"end_turn"`, return `False` and leave the history alone. Replace the list\'s contents with `messages[:] = ...`, not `state.messages = ...`.',
    ('s06', 1): 'Two loops, in this order: `for kind in ("deny", "ask")` around `for rule in rules`, returning at the first match; then `for subject in call.acts_on`, keeping an allow verdict for each and returning the default at the first entry nothing allows (unless that default is itself allow). Return the first allow verdict at the end. Try your function on `gate.read_call(workspace, tool, arguments)`.',
    ('s06', 2): 'An approval is never a pattern: store the exact pairs, and let `decide()` compare them with `==` (a set lookup). A command is stored as sh reads it (`call.acts_on[0]`, already normalised by the reader), so `" ls\\n"` and `"ls"` are one approval, and `"ls\\v"` is another.',
}


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


def section(stage: str, regions: list) -> str:
    """The chapter's exercise section, as Markdown: how to get and check a copy, then each exercise."""
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
    ]
    for region in regions:
        entry = REBUILD.get((stage, region.number))
        if entry is None:
            raise KeyError(f"no text for {stage} exercise {region.number} in course/exercise_text.py")
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
