"""s04's exercises: the cases drawn for each, what the child runs for one, and how its answer is judged."""

from __future__ import annotations

import random

from course.grading.cases.common import *  # noqa: F403


def misspell(rng: random.Random, name: str) -> str:
    index = rng.randrange(1, len(name) - 1)
    return rng.choice([name[:index] + name[index + 1:], name[:index] + name[index + 1] + name[index] + name[index + 2:]])


# The good call is judged with the bad ones: a region that checks nothing must not earn its share.
@probe("s04", 1, groups=("unknown tool", "arguments"))
class S04Refuse:
    def cases(rng):
        files = {filename(rng): text(rng) for _ in range(2)}
        name = list(files)[0]
        tools = ["read_file", "write_file", "list_files", "search_files"]
        rng.shuffle(tools)
        return [
            Case(f"unknown tool {(ghost := 'zz' + word(rng))!r}", "unknown tool", {"files": files, "name": ghost, "arguments": {}}),
            *[Case(f"misspelt {(typo := misspell(rng, tool))!r}", "unknown tool", {"files": files, "name": typo, "arguments": {}})
              for tool in tools[:3]],
            Case(f"read_file without its path ({word(rng)})", "arguments", {"files": files, "name": "read_file",
                                                                                "arguments": {"file": name}}),
            Case("write_file with content a number", "arguments", {"files": files, "name": "write_file",
                                                                      "arguments": {"path": filename(rng), "content": rng.randint(1, 999)}}),
            Case(f"read_file {name!r}", "arguments", {"files": files, "name": "read_file", "arguments": {"path": name}}),
        ]

    def drive(module, params, work):
        workspace = make_workspace(work, params["files"])
        try:
            output = module.call_tool(workspace, params["name"], params["arguments"])
        except module.ToolError as error:
            return {"kind": error.kind, "message": str(error.message), "hint": str(error.hint),
                    "tools": list(module.TOOL_FUNCTIONS),
                    "parameters": sorted(module.SCHEMAS.get(params["name"], {}).get("properties", {}))}
        except BaseException as error:
            return raised(error)
        return {"output": output}

    def judge(case, got, want):
        if problem := observed_error(got):
            return f"{problem} (a refused call raises ToolError)"
        if "output" in want:
            return same(got.get("output"), want["output"]) if isinstance(got, dict) else same(got, want)
        if not isinstance(got, dict) or got.get("kind") != want["kind"]:
            return f"expected a ToolError of kind {want['kind']!r}, got {shown(got)}"
        hint = got["hint"] + " " + got["message"]
        if want["kind"] == "unknown_tool":
            missing = [tool for tool in want["tools"] if tool not in hint]
            if missing:
                return f"the hint should list the tools ({', '.join(missing)} missing): got {shown(got['hint'])}"
            closest = want["hint"].rpartition("the closest is ")[2] if "the closest is " in want["hint"] else ""
            # Named as the closest: once more than the listing names every tool, so that a listing alone
            # (however it is joined) or a fixed name does not pass.
            if closest and hint.count(closest) <= max(hint.count(tool) for tool in want["tools"] if tool != closest):
                return f"the hint should say the closest tool is {closest}: got {shown(got['hint'])}"
        else:
            missing = [parameter for parameter in want["parameters"] if parameter not in hint]
            if missing:
                return f"the hint should describe the parameters ({', '.join(missing)} missing): got {shown(got['hint'])}"
        return None


# A group per tool, each with results under the limit and over it: "leave it whole" passes no group.
@probe("s04", 2, groups=("read_file", "search_files"))
class S04Cut:
    def cases(rng):
        cases = []
        for extra in (0, -rng.randint(1, 50), rng.randint(1, 9), rng.randint(500, 20_000)):
            for tool in (("read_file", "search_files") if extra else ("read_file",)):
                # Just over the limit, a read always starts at an offset: the marker must count from there; far
                # over it, a read never names one: the marker counts from the start.
                offset = rng.randint(1, 30) * 100 if 0 < extra < 10 else 0 if extra >= 500 else rng.choice([0, rng.randint(1, 30) * 100])
                arguments = {"path": filename(rng)} | ({"offset": offset} if offset and tool == "read_file" else {})
                if tool == "search_files":
                    arguments = {"text": word(rng)}
                cases.append(Case(f"{tool}: {extra:+d} characters around the limit", tool,
                                  {"extra": extra, "tool": tool, "arguments": arguments, "seed": rng.randint(0, 10**9)}))
        return cases

    def drive(module, params, work):
        limit = module.MAX_RESULT_CHARS
        filler = random.Random(params["seed"])
        output = "".join(filler.choice(string.ascii_lowercase + " \n") for _ in range(limit + params["extra"]))
        try:
            cut = module.cut_to_fit(output, params["tool"], params["arguments"])
        except BaseException as error:
            return raised(error)
        return {"cut": cut, "limit": limit, "length": len(output)}

    def judge(case, got, want):
        if problem := observed_error(got):
            return problem
        cut, limit, length = got.get("cut"), want["limit"], want["length"]
        if not isinstance(cut, str):
            return f"expected a text, got {shown(cut)}"
        if length <= limit:
            return None if cut == want["cut"] else f"a result of {length} characters (the limit is {limit}) must be left whole"
        if cut[:limit] != want["cut"][:limit]:
            return f"the first {limit} characters must be kept as they are"
        marker = cut[limit:]
        numbers = [length - limit, length]
        if case.params["tool"] == "read_file":
            numbers.append(case.params["arguments"].get("offset", 0) + limit)
        missing = [n for n in numbers if not re.search(rf"(?<![0-9]){n}(?![0-9])", marker)]  # a number, not a part of one
        if missing:
            return f"the marker after the kept text should give {', '.join(map(str, numbers))}: got {shown(marker)}"
        if len(marker) > 400:
            return f"the marker is {len(marker)} characters: keep it to a line"
        return None


# Each group holds values to accept and values to refuse: an answer that always refuses (or always
# accepts) passes no group. The values refused are of each type the exercise names (list, str, int) and
# of others drawn from the seed (float, bool, None, as JSON text or as they are), and a refusal must name
# the type received and no other: a message that names every type names none of them.
REFUSED_TYPES = ("list", "int", "float", "bool", "NoneType")  # str may be named anywhere: what came was text
# How a message may name a type, each as a word of its own (its __name__, or as people write it): a type's
# name inside a longer word names nothing ("listing", "integers"), or one message could hold every type.
NAMED = {"NoneType": ("NoneType", "None", "null"), "int": ("int", "integer"), "bool": ("bool", "boolean"),
         "str": ("str", "string")}


def names_type(message: str, name: str) -> bool:
    return any(re.search(rf"\b{spelling}\b", message) for spelling in NAMED.get(name, (name,)))


def json_scalar(rng: random.Random) -> tuple[str, str]:
    """(JSON text of a value that is no object, its type's name)."""
    return rng.choice([(str(rng.randint(1, 99)), "int"), (f"{rng.randint(1, 99)}.{rng.randint(1, 9)}", "float"),
                       ("true", "bool"), ("false", "bool"), ("null", "NoneType")])


def python_value(rng: random.Random):
    """A value that is neither an object nor text, and its type's name."""
    return rng.choice([(rng.randint(1, 99) / 4, "float"), (rng.choice([True, False]), "bool"), (None, "NoneType"),
                       ([word(rng), word(rng)], "list")])


@probe("s04", 3, uses_reference=False, module="extension", groups=("JSON text", "other values"))
class S04Arguments:
    def cases(rng):
        values = {word(rng): rng.choice([text(rng, 2), rng.randint(0, 999), True]) for _ in range(rng.randint(1, 3))}
        encoded = json.dumps(values)
        scalar, scalar_type = json_scalar(rng)
        value, value_type = python_value(rng)
        return [
            Case("an object", "other values", {"arguments": values}, values),
            Case("the object as JSON text", "JSON text", {"arguments": encoded}, values),
            Case("the JSON text with spaces around", "JSON text", {"arguments": f"  \n{encoded} "}, values),
            Case("the JSON text in a ```json fence", "other values", {"arguments": f"```json\n{encoded}\n```"}, values),
            Case("a JSON list", "JSON text", {"arguments": json.dumps(list(values))}, "list"),
            Case("text that is not JSON", "JSON text", {"arguments": f"path={word(rng)}"}, "str"),
            Case(f"the JSON text {scalar}", "JSON text", {"arguments": scalar}, scalar_type),
            Case("a number", "other values", {"arguments": rng.randint(1, 99)}, "int"),
            Case(f"a {value_type} value", "other values", {"arguments": value}, value_type),
        ]

    def drive(module, params, work):
        try:
            return {"value": module.arguments_object(params["arguments"])}
        except ValueError as error:
            return {"refused": str(error)}
        except BaseException as error:
            return raised(error)

    def judge(case, got, want):
        if problem := observed_error(got):
            return problem
        if isinstance(case.expected, dict):  # a value to accept
            return same(got.get("value", got), case.expected)
        if "refused" not in got:
            return f"expected a ValueError, got {shown(got)}"
        message = got["refused"]
        others = [name for name in REFUSED_TYPES if name != case.expected and names_type(message, name)]
        if not names_type(message, case.expected) or "object" not in message or others:
            return (f"the ValueError should say an object was expected and name the type received ({case.expected}), "
                    f"and no other: got {shown(message)}")
        return None
