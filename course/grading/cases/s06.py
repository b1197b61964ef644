"""s06's exercises: the cases drawn for each, what the child runs for one, and how its answer is judged."""

from __future__ import annotations

import random

from course.grading.cases.common import *  # noqa: F403


# Each group holds calls with different right verdicts: one verdict for every call passes no group. Every draw
# holds each clause of the contract: an allow-all listed before a deny or an ask rule, a call both a deny and an
# ask rule match, a person's "always" facing a deny rule, an ask rule, and a command "always" may not cover,
# defaults that are not allow, and a call on two entries of which only one is allowed.
@probe("s06", 1, module="permissions", groups=("deny first", "ask and allow", "defaults"))
class S06Decide:
    def cases(rng):
        secret, note, folder, moved = word(rng), filename(rng), word(rng), filename(rng)
        script = f"{word(rng)}.py"
        files = {note: text(rng), f"{folder}/{filename(rng)}": text(rng), f"{secret}.key": "k", script: "print(1)\n"}
        other = filename(rng)
        deny, ask = ["deny", "*", f"{secret}.key"], ["ask", "write_file", f"{folder}/*"]
        rules = [deny, ask, ["allow", "write_file", note]]
        rng.shuffle(rules)
        allow_all = ["allow", "*", "*"]

        def first(*extra):  # the given rules before the others, so that the first match in list order is wrong
            return [*extra, *rules]

        both = [["ask", "*", f"{secret}.key"], deny]
        rng.shuffle(both)
        c = [
            ("deny first", "read_file", {"path": f"{secret}.key"}, rules, []),
            ("deny first", "write_file", {"path": f"{secret}.key", "content": "x"}, first(allow_all), []),
            ("deny first", "read_file", {"path": f"{secret}.key"}, [allow_all, *both], []),
            ("deny first", "read_file", {"path": f"{secret}.key"}, rules, [["read_file", [f"{secret}.key"]]]),
            ("deny first", "write_file", {"path": other, "content": "x"}, first(allow_all), []),
            ("ask and allow", "write_file", {"path": f"{folder}/{other}", "content": "x"}, rules, []),
            ("ask and allow", "write_file", {"path": f"{folder}/{other}", "content": "x"}, first(allow_all), []),
            ("ask and allow", "write_file", {"path": f"{folder}/{other}", "content": "x"}, rules,
             [["write_file", [f"{folder}/{other}"]]]),
            ("ask and allow", "write_file", {"path": note, "content": "x"}, rules, []),
            ("ask and allow", "write_file", {"path": note, "content": "x"}, [r for r in rules if r[0] != "allow"],
             [["write_file", [note]]]),
            ("ask and allow", "run_command", {"command": f"python3 {script}"}, rules, [["run_command", [f"python3 {script}"]]]),
            ("ask and allow", "move_file", {"source": note, "destination": moved},
             rules + [["allow", "move_file", note], ["allow", "move_file", moved]], []),
            ("defaults", "read_file", {"path": note}, rules, []),
            ("defaults", "write_file", {"path": other, "content": "x"}, rules, []),
            ("defaults", "write_file", {"path": note, "content": "x"}, [r for r in rules if r[0] != "allow"], []),
            ("defaults", "delete_file", {"path": note}, rules, []),
            ("defaults", "move_file", {"source": note, "destination": moved}, rules + [["allow", "move_file", note]], []),
            ("defaults", "run_command", {"command": f"ls {folder}"}, rules, []),
            ("defaults", "run_command", {"command": f"cat {secret}.key"}, rules, []),
        ]
        return [Case(f"{tool} {json.dumps(arguments)[:60]} with {len(rules_)} rules"
                     + (f", {len(approved)} approved always" if approved else ""), group,
                    {"files": files, "tool": tool, "arguments": arguments, "rules": rules_, "approved": approved})
                for group, tool, arguments, rules_, approved in c]

    def drive(module, params, work):
        workspace = make_workspace(work, params["files"])
        rules = [module.Rule(*rule) for rule in params["rules"]]
        gate = module.Gate(rules=rules, audit_log=False)
        try:
            call = gate.read_call(workspace, params["tool"], params["arguments"])
            approved = {module.approval(tool, subjects if isinstance(subjects, list) else [subjects])
                        for tool, subjects in params["approved"]}
            verdict = module.decide(call, rules, approved)
        except BaseException as error:
            return raised(error)
        return [verdict.decision, verdict.decided_by]

    def judge(case, got, want):
        return observed_error(got) or same(got, want)


# No one to ask (deny) is grouped with an allow: "always deny" passes no group.
@probe("s06", 2, module="permissions", groups=("allowed once, or no one to ask", "allowed always, or refused"))
class S06Ask:
    def cases(rng):
        files = {filename(rng): text(rng)}
        name = list(files)[0]
        cases = []
        for answer in ("allow once", "allow always", "deny", None):
            group = "allowed once, or no one to ask" if answer in ("allow once", None) else "allowed always, or refused"
            cases.append(Case(f"a person answers {answer!r} about {name!r}", group,
                              {"files": files, "path": name, "answer": answer, "reason": text(rng, 3)}))
        return cases

    def drive(module, params, work):
        workspace = make_workspace(work, params["files"])
        asked = []

        def approver(tool, arguments, why, covers):
            asked.append([tool, arguments])
            return params["answer"], params["reason"]
        gate = module.Gate(rules=[module.Rule("ask", "write_file", "*")], audit_log=False,
                           approver=approver if params["answer"] else None)
        arguments = {"path": params["path"], "content": "new"}
        try:
            call = gate.read_call(workspace, "write_file", arguments)
            verdict = gate.ask_person(call, arguments, "the rule says ask")
            again = module.decide(call, gate.rules, gate.approved)
        except BaseException as error:
            return raised(error)
        return {"decision": verdict.decision, "by": verdict.decided_by, "asked": asked,
                "approved": sorted(map(repr, gate.approved)), "again": again.decision,
                "reason_given": params["reason"] in verdict.why}

    def judge(case, got, want):
        if problem := observed_error(got):
            return problem
        for key in ("decision", "by", "asked", "approved", "again"):
            if got.get(key) != want[key]:
                return same(got.get(key), want[key], f"[{key!r}]")
        if case.params["answer"] == "deny" and not got.get("reason_given"):
            return "a refusal should pass on the person's reason"
        return None


def loosen(rng: random.Random, path: str, within: int) -> str:
    """``path`` with a repeated slash or a '.' part put after one of its first ``within`` names, and maybe a
    trailing slash: the same path, read as text. Never at its start: POSIX keeps a leading '//' as it is
    (https://docs.python.org/3/library/os.path.html#os.path.normpath)."""
    names = path.split("/")[1:]
    at = rng.randint(1, min(within, len(names) - 1))
    names.insert(at, rng.choice(["", "."]))
    return "/" + "/".join(names) + rng.choice(["", "/"])


# Each group holds paths inside and paths outside, in shapes drawn with the folder's own names: a
# constant answer passes no group, and neither does a check of the text's shape (a prefix, a '..'
# followed by the folder's name, the way a path ends) in place of resolving it.
@probe("s06", 3, uses_reference=False, module="extension", groups=("names, '.' and slashes", "'..' parts"))
class S06Inside:
    def cases(rng):
        names = [word(rng) for _ in range(rng.randint(2, 3))]
        root, name = "/" + "/".join(names), names[-1]
        parent, depth = root.rsplit("/", 1)[0], len(names)

        def beside():  # a name that starts like the folder's
            return f"{name}{rng.choice(['-', '_', '', '.'])}{word(rng)}"

        def below(most=3):
            return "/".join(word(rng) for _ in range(rng.randint(1, most)))

        def other():  # a name none of the folder's: where the case is built to lead elsewhere
            drawn = word(rng)
            return drawn if drawn not in names else other()

        down = rng.randint(1, 3)
        deep = "/".join(word(rng) for _ in range(down))
        plain = [
            ("a path beneath", root, f"{root}/{below()}/{filename(rng)}", True),
            ("a sibling whose name starts the same", root, f"{parent}/{beside()}/{filename(rng)}", False),
            ("the folder itself", root, root, True),
            ("that sibling itself", root, f"{parent}/{beside()}", False),
            ("the folder with a trailing slash", root + "/", f"{root}/{filename(rng)}", True),
            ("the parent", root, parent, False),
            ("the folder, written loosely", loosen(rng, root, depth), f"{root}/{below()}", True),
            ("a sibling, beside a folder written loosely", loosen(rng, root, depth), f"{parent}/{beside()}", False),
            ("a path beneath, written loosely", root, loosen(rng, f"{root}/{below()}", depth), True),
            ("a sibling, written loosely", root, loosen(rng, f"{parent}/{beside()}/{filename(rng)}", depth), False),
            ("a '.' part", root, f"{root}/." + rng.choice(["", "/", f"/{filename(rng)}"]), True),
        ]
        dots = [
            ("out, to another name", root, f"{root}/../{rng.choice([beside(), other()])}/{filename(rng)}", False),
            ("out and back in", root, f"{root}/../{name}/{below()}", True),
            ("down, then out past it", root, f"{root}/{deep}" + "/.." * (down + 1) + f"/{word(rng)}", False),
            ("down and up, still in", root, f"{root}/{deep}" + "/.." * rng.randint(1, down) + f"/{filename(rng)}", True),
            ("a '..' then the folder's name, still in", root, f"{root}/{deep}/../{name}", True),
            ("'..' to the top", root, root + "/.." * depth + f"/{other()}/{below()}", False),
            ("'..' to the top and back down", root, root + "/.." * depth + f"{root}/{filename(rng)}", True),
            ("from beside, in", root, f"{parent}/{word(rng)}/../{name}/{filename(rng)}", True),
            ("from beside, to a sibling", root, f"{parent}/{word(rng)}/../{beside()}", False),
            ("a folder with a '..' of its own", f"{parent}/{word(rng)}/../{name}", f"{root}/{filename(rng)}", True),
            ("up from the folder", root, f"{root}/..", False),
            ("down and up to the folder", root, f"{root}/{word(rng)}/..", True),
        ]
        return [Case(f"{shape}: {path!r} in {folder!r}", group, {"folder": folder, "path": path}, expected)
                for group, drawn in (("names, '.' and slashes", plain), ("'..' parts", dots))
                for shape, folder, path, expected in drawn]

    def drive(module, params, work):
        try:
            return module.inside(params["folder"], params["path"])
        except BaseException as error:
            return raised(error)

    def judge(case, got, want):
        return observed_error(got) or (None if got is case.expected else f"expected {case.expected}, got {shown(got)}")
