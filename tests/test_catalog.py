"""One catalog of offline models: every id is in it, answers through the client, and is listed by
`python -m course models`; course/offline imports have no cycle; outside course/offline, code
uses only the package's public face."""

from __future__ import annotations

import ast

import pytest

import course
from course.__main__ import main
from course.offline import MODELS, behaviour_for, describe, known_models
from helpers import ROOT

OFFLINE = ROOT / "course" / "offline"


def example_id(model) -> str:
    return f"{model.prefix}3" if model.prefix else model.id


# ---------------------------------------------------------------- the catalog

@pytest.mark.parametrize("model", MODELS, ids=[model.id for model in MODELS])
def test_every_catalogued_model_answers_a_request_through_the_client(model):
    model_id = example_id(model)
    reply = course.make_client(model_id).messages.create(
        model=model_id, max_tokens=512, messages=[{"role": "user", "content": "List the files"}])
    assert reply.model == model_id and reply.content


def test_a_family_takes_a_whole_number_above_zero_and_nothing_else():
    family = next(model for model in MODELS if model.id == "offline-long-N")
    assert callable(behaviour_for("offline-long-12")) and describe("offline-long-12") == family.description
    for wrong in ("offline-long-0", "offline-long-N", "offline-long-", "offline-long-x"):
        with pytest.raises(course.CourseError, match="known: offline, "):
            course.make_client(wrong)


def test_the_catalog_lists_each_id_once_with_a_one_line_description():
    assert len(set(known_models())) == len(MODELS)
    assert all(model.description and "\n" not in model.description for model in MODELS)


def test_course_models_prints_the_catalog_in_plain_text_within_100_columns(capsys):
    assert main(["models"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for model in MODELS:
        [line] = [line for line in lines if line.split(" ", 1)[0] == model.id]
        assert line.endswith(model.description)
    assert all(len(line) <= 100 and "``" not in line for line in lines)


# ---------------------------------------------------------------- the imports of course/offline

def offline_imports() -> dict[str, set[str]]:
    """{module: the course/offline modules it imports}, read from the source (lazy imports included)."""
    modules = {path.stem for path in OFFLINE.glob("*.py")}
    graph = {}
    for path in OFFLINE.glob("*.py"):
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:  # from .tutor import tutor
                    edges.add(node.module.split(".")[0])
                else:             # from . import tutor, misbehaving (or a name of __init__)
                    edges |= {alias.name if alias.name in modules else "__init__" for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module == "course.offline":  # from course.offline import tutor
                edges |= {alias.name if alias.name in modules else "__init__" for alias in node.names}
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                edges |= {name.split(".")[2] for name in names
                          if name and name.startswith("course.offline.") and name.split(".")[2] in modules}
        graph[path.stem] = edges
    return graph


def a_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of the graph, as a path that ends where it starts, or [] if there is none."""
    done, path = set(), []

    def visit(module: str) -> list[str]:
        if module in path:
            return path[path.index(module):] + [module]
        if module in done:
            return []
        path.append(module)
        for imported in sorted(graph.get(module, ())):
            cycle = visit(imported)
            if cycle:
                return cycle
        path.pop()
        done.add(module)
        return []

    for module in sorted(graph):
        cycle = visit(module)
        if cycle:
            return cycle
    return []


def test_the_cycle_finder_finds_a_cycle_and_only_a_cycle():
    assert a_cycle({"catalog": {"tutor"}, "tutor": {"behaviours"}, "behaviours": set()}) == []
    assert a_cycle({"behaviours": {"tutor"}, "tutor": {"behaviours"}}) == ["behaviours", "tutor", "behaviours"]


def test_course_offline_has_no_import_cycle():
    graph = offline_imports()
    assert graph["catalog"] >= {"tutor", "flood", "reckless"}  # the walk sees the imports it must
    assert a_cycle(graph) == [], "import cycle: " + " -> ".join(a_cycle(graph))


def test_no_behaviour_imports_the_catalog_back():
    graph = offline_imports()
    behaviours = {model.behaviour.__module__.rsplit(".", 1)[1] for model in MODELS}
    assert {module for module in behaviours if "catalog" in graph[module]} == set()


def test_outside_course_offline_code_imports_only_the_package():
    """The benchmark, the ladder, the docs and the stages use course.offline's public face, never a
    behaviour's internals (tests of a behaviour may)."""
    places = [*(ROOT / "course").glob("*.py"), *ROOT.glob("s[0-9][0-9]/*.py"), ROOT / "docs" / "hooks" / "generate.py"]
    reaching_in = []
    for path in places:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom) else
                     [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            relative = isinstance(node, ast.ImportFrom) and node.level > 0
            for name in names:
                inside = name.startswith("offline.") if relative else name.startswith("course.offline.")
                if inside:
                    reaching_in.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
    assert reaching_in == []
