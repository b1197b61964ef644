"""The support package's layers: no module imports one that imports it back (an import deferred into a
function counts: it is the same dependency, paid later), and `import course`, the first line of every stage,
loads what s00 needs and nothing of the sandbox, grading, the site, the viewer or the offline model, and
registers nothing on the import system."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "course"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The course modules ``name`` imports anywhere in its file (at the top or inside a function), a
    ``from PACKAGE import NAME`` counted as the module PACKAGE.NAME when there is one. What only a type
    checker reads (``if TYPE_CHECKING:``) is not an import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _is_type_checking(node):
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    edges = set()
    for target in found:  # `import course.sandbox.paths` is course.sandbox.paths; `import course.offline.x` is that module
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            edges.add(target)
    return edges


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_the_graph_sees_an_import_deferred_into_a_function():
    graph = import_graph()
    assert "course.sandbox.isolated" in graph["course.sandbox.shell_reading"]  # at the top
    assert "course.site.runs" in graph["course.site.questions"]  # inside three_questions()


def test_the_cycle_finder_finds_a_circle_of_two_and_of_three():
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_support_package_imports_one_that_imports_it_back():
    assert cycles(import_graph()) == []


# What s00 does not need: `import course` must not load any of them (the stages that do import them by name).
NOT_FOR_S00 = ("course.sandbox.paths", "course.sandbox.confinement", "course.sandbox.kernel", "course.sandbox.shell_reading", "course.sandbox.isolated",
               "course.sandbox.approval", "course.sandbox.redaction", "course.grading.grade", "course.grading.probes", "course.grading.jail",
               "course.grading.cli", "course.grading.exercises", "course.grading.exercise_text", "course.grading.scorecard_plugin",
               "course.site.pages", "course.site.runs", "course.site.questions", "course.site.code", "course.viewer.markdown",
               "course.lab.svgplot", "course.viewer.pages", "course.offline", "course.lab.ladder", "course.lab.bench", "course.lab.doctor")

PROBE = """
import json, sys
finders = list(sys.meta_path)
import course
print(json.dumps({"modules": sorted(name for name in sys.modules if name == "course" or name.startswith("course.")),
                  "finders_added": [repr(f) for f in sys.meta_path if f not in finders]}))
"""


def fresh_import(probe: str) -> dict:
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          cwd=PACKAGE.parent)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_import_course_loads_nothing_s00_does_not_need_and_registers_nothing():
    seen = fresh_import(PROBE)
    assert "course.runtime.workspace" in seen["modules"] and "course.runtime.trace" in seen["modules"]  # what s00 does need
    assert [name for name in NOT_FOR_S00 if name in seen["modules"]] == []
    assert seen["finders_added"] == []


def test_importing_any_module_of_the_package_registers_no_finder():
    """The recorder of missed imports (s06's rules) goes on sys.meta_path when a rule first asks, not on import.
    (A dependency may add its own: six does, imported by what the site imports.)"""
    names = [name for name in modules() if not name.endswith("__main__")]
    probe = ("import importlib, json, sys\nfinders = list(sys.meta_path)\n"
             f"for name in {names!r}:\n    importlib.import_module(name)\n"
             "print(json.dumps({'finders_added': [repr(f) for f in sys.meta_path if f not in finders\n"
             "                                      and type(f).__module__.startswith('course')]}))")
    assert fresh_import(probe)["finders_added"] == []


# ---------------------------------------------------------------- the layers

# Each sub-package, lowest first: a module may import from its own package and from those before it, and the
# top package `course` (light: it loads the runtime and the helpers) from anywhere. Each package's docstring
# says the same.
LAYERS = ("runtime", "helpers", "offline", "serve", "viewer", "running", "sandbox", "lab", "grading", "site")
TOP_LEVEL = {"course", "course.__main__", "course.changes"}  # the re-exports, the command line, the declared changes


def layer_of(name: str) -> int | None:
    parts = name.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def test_every_module_lives_in_a_sub_package_of_its_concern():
    stray = [name for name in modules() if name not in TOP_LEVEL and layer_of(name) is None]
    assert stray == [], f"place these in one of {LAYERS}: {stray}"


def test_every_sub_package_says_what_it_is_for_and_what_it_may_import():
    for layer in LAYERS:
        text = ast.get_docstring(ast.parse((PACKAGE / layer / "__init__.py").read_text(encoding="utf-8")))
        assert text and "import" in text, layer


def test_a_module_imports_only_its_own_layer_and_the_layers_below():
    upward = []
    for name, targets in import_graph().items():
        mine = layer_of(name)
        if mine is None:
            continue
        for target in targets:
            theirs = layer_of(target)
            if target == "course" or target == "course.changes" or (theirs is not None and theirs <= mine):
                continue
            upward.append(f"{name} -> {target}")
    assert upward == []


def test_the_layer_check_sees_an_import_upward():
    assert layer_of("course.sandbox.paths") < layer_of("course.grading.jail")
    assert layer_of("course.runtime.workspace") == 0 and layer_of("course.__main__") is None
