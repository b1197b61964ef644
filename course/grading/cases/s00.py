"""s00's exercises: the cases drawn for each, what the child runs for one, and how its answer is judged."""

from __future__ import annotations

import random

from course.grading.cases.common import *  # noqa: F403


# Each group holds both answers (a call that works, one that fails): an answer that is always the same
# passes no group, so it earns no part of the points.
@probe("s00", 1, groups=("read_file", "other tools"))
class S00Dispatch:
    def cases(rng):
        files = {filename(rng): text(rng) for _ in range(3)}
        name, other = list(files)[:2]
        new = filename(rng)
        a, b = rng.randint(100, 9999), rng.randint(2, 99)
        ghost = f"{rng.choice(['fetch', 'delete', 'open'])}_{word(rng)}"
        return [
            Case(f"read_file {name!r}", "read_file", {"files": files, "name": "read_file", "arguments": {"path": name}}),
            Case(f"write_file {new!r}", "other tools", {"files": files, "name": "write_file",
                                                       "arguments": {"path": new, "content": text(rng)}}),
            Case(f"calculate '{a} * {b}'", "other tools", {"files": files, "name": "calculate",
                                                          "arguments": {"expression": f"{a} * {b}"}}),
            Case(f"unknown tool {ghost!r}", "other tools", {"files": files, "name": ghost, "arguments": {}}, ghost),
            Case(f"read_file of a missing {new!r}", "read_file",
                 {"files": files, "name": "read_file", "arguments": {"path": new}}, new),
            Case(f"read_file with a misspelt argument ({other!r})", "read_file",
                 {"files": files, "name": "read_file", "arguments": {"paht": other}}, "paht"),
        ]

    def drive(module, params, work):
        workspace = make_workspace(work, params["files"])
        try:
            answer, is_error = module.run_tool(workspace, params["name"], params["arguments"])
        except BaseException as error:
            return raised(error)
        return {"text": answer if isinstance(answer, str) else repr(answer), "is_error": is_error,
                "files": listing(workspace)}

    def judge(case, got, want):
        if problem := observed_error(got):
            return f"{problem} (a failed call must come back as (text, True), never raise)"
        if not isinstance(got, dict) or got.get("is_error") is not want["is_error"]:
            return f"is_error should be {want['is_error']}, got {shown(got.get('is_error') if isinstance(got, dict) else got)}"
        if not want["is_error"]:
            return same(got["text"], want["text"]) or (None if got["files"] == want["files"] else
                                                      "the tool did not do its work in the workspace")
        if case.expected not in got["text"]:
            return f"the error text should name {case.expected!r}: got {shown(got['text'])}"
        return None


@probe("s00", 2)
class S00ToolResult:
    def cases(rng):
        files = {filename(rng): text(rng) for _ in range(2)}
        return [Case(f"answer read_file {path!r} (id {ident[-6:]})", "answers", {"files": files, "id": ident,
                     "name": "read_file", "input": {"path": path}})
                for path, ident in ((name, tool_id(rng)) for name in files)] + [
            Case("answer an unknown tool", "answers", {"files": files, "id": tool_id(rng), "name": f"go_{word(rng)}",
                                                       "input": {}})]

    def drive(module, params, work):
        workspace = make_workspace(work, params["files"])
        call = types.SimpleNamespace(id=params["id"], name=params["name"], input=params["input"], type="tool_use")
        try:
            block = module.tool_result(workspace, call)
        except BaseException as error:
            return raised(error)
        return block if isinstance(block, dict) else repr(block)

    def judge(case, got, want):
        return observed_error(got) or same(got, want)


@probe("s00", 3, uses_reference=False, module="extension", groups=("answers every call", "survives a tool that raises"))
class S00AnswerAll:
    def cases(rng):
        cases = []
        for index in range(4):
            blocks, expected = [], []
            for _ in range(rng.randint(0, 4)):
                if rng.random() < 0.3:
                    blocks.append({"type": "text", "text": text(rng, 3)})
                    continue
                ident, name = tool_id(rng), word(rng)
                fails = index == 3 and not expected
                output = text(rng, 2)
                blocks.append({"type": "tool_use", "id": ident, "name": name, "input": {"n": rng.randint(1, 99)}})
                expected.append((ident, output, fails))
            if not expected:  # every reply makes a call: an answer of no results must fail every case
                ident = tool_id(rng)
                blocks.insert(rng.randint(0, len(blocks)), {"type": "tool_use", "id": ident, "name": word(rng),
                                                             "input": {"n": rng.randint(1, 99)}})
                expected.append((ident, text(rng, 2), index == 3))
            group = "survives a tool that raises" if index == 3 else "answers every call"
            cases.append(Case(f"a reply of {len(blocks)} blocks, {len(expected)} calls", group,
                              {"blocks": blocks, "outputs": {ident: [out, fails] for ident, out, fails in expected}},
                              expected))
        return cases

    def drive(module, params, work):
        outputs = {block["id"]: params["outputs"][block["id"]] for block in params["blocks"] if block["type"] == "tool_use"}
        by_input = {json.dumps([b["name"], b["input"]], sort_keys=True): b["id"] for b in params["blocks"] if b["type"] == "tool_use"}

        def run(name, arguments):
            ident = by_input[json.dumps([name, arguments], sort_keys=True)]
            output, fails = outputs[ident]
            if fails:
                raise RuntimeError(output)
            return output, False
        try:
            return module.answer_all(params["blocks"], run)
        except BaseException as error:
            return raised(error)

    def judge(case, got, want):
        if problem := observed_error(got):
            return f"{problem} (answer_all must never raise)"
        if not isinstance(got, list) or len(got) != len(case.expected):
            return f"expected {len(case.expected)} tool_result blocks, got {shown(got)}"
        for block, (ident, output, fails) in zip(got, case.expected):
            if not isinstance(block, dict) or block.get("type") != "tool_result" or block.get("tool_use_id") != ident:
                return f"expected the tool_result of {ident} here, got {shown(block)}"
            if bool(block.get("is_error")) is not fails:
                return f"the result of {ident} should have is_error {fails}"
            if output not in str(block.get("content")):
                return f"the result of {ident} should hold {output!r}, got {shown(block.get('content'))}"
        return None
