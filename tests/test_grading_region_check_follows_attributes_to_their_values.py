"""The region check decides an attribute chain by what it reaches, not by its names alone: a chain that starts
at a name the stage's file imports is followed on the real modules of the grading process (plain lookups,
no code of the copy run), and a step that is a module the file does not import, or the builtins module, is
refused. A class in a region derives from builtin classes only, and annotations name builtin types only.

The bypasses these pin: ``re.enum.bltns`` is the builtins module (enum imports it under that name), and
``bltns.getattr`` is no name the list refuses; a class deriving ``anthropic.BaseModel`` with a string
annotation had pydantic evaluate that string in the module's globals, ``sys`` included.
"""

from __future__ import annotations

import textwrap

import pytest

from course.grading import grade as grading

pytestmark = pytest.mark.stage()  # the grader's region check: no stage

GETATTR_THROUGH_ENUM = """
run_it = re.enum.bltns.getattr(re.enum.bltns, "ex" + "ec")
run_it("print('ran')", {})
return False
"""

PYDANTIC_EVALUATES = """
class Sneak(anthropic.BaseModel):
    a: "(print('ran', sys.modules['os'].getpid()), int)[1]"
Sneak.model_rebuild()
return None
"""


def problems(text: str, stage: str = "s03", number: int = 3, file: str = "extension.py") -> list[str]:
    body = grading.Body(number, file, 1, textwrap.indent(textwrap.dedent(text).strip("\n") + "\n", "    "), False)
    return grading.region_problems(body, stage)


def test_a_chain_to_builtins_through_a_module_the_file_imports_is_refused():
    found = problems(GETATTR_THROUGH_ENUM)
    assert found and "'re.enum' is the module enum, which the file does not import" in found[0], found


def test_the_builtins_module_is_refused_even_where_its_way_there_is_allowed(monkeypatch):
    monkeypatch.setattr(grading, "REACHABLE_MODULES", {"enum"})  # were enum allowed, bltns still is builtins
    found = problems(GETATTR_THROUGH_ENUM)
    assert found and "'re.enum.bltns' is the builtins module" in found[0], found


def test_a_module_no_name_of_the_list_refuses_is_refused_by_what_it_is():
    found = problems("return json.codecs.lookup('utf-8').name")  # codecs is on no list
    assert found and "'json.codecs' is the module codecs" in found[0], found
    found = problems("handle = [re][0]\nreturn handle.enum")  # a module as a value hides where it goes
    assert found and "the module 're' is for its attributes only" in found[0], found


def test_what_the_file_imports_stays_usable():
    assert problems("return bool(re.fullmatch(r'a+', json.dumps('aa')[1:-1]))") == []
    assert problems("return anthropic.types.Message", stage="s03", number=1, file="agent.py") == []


def test_a_class_on_a_librarys_base_with_a_string_annotation_is_refused():
    found = problems(PYDANTIC_EVALUATES, number=1, file="agent.py")
    assert any("derives from builtin classes only (not 'anthropic.BaseModel')" in problem for problem in found), found
    assert any("a string annotation is code a library may run later" in problem for problem in found), found


@pytest.mark.parametrize("text, said", [
    ("@dataclass\nclass Point:\n    x: int\nreturn None", "no decorator, metaclass or keyword"),
    ("def helper(value: Path) -> bool:\n    return True\nreturn None", "the annotation 'Path' is not a builtin type"),
    ("count: 'sys.modules' = 0\nreturn None", "a string annotation"),
])
def test_decorators_and_annotations_that_are_not_builtin_types_are_refused(text, said):
    found = problems(text, number=1, file="agent.py")
    assert any(said in problem for problem in found), found


def test_a_class_on_a_builtin_class_with_builtin_annotations_passes():
    assert problems("class Stop(Exception):\n    code: int | None = None\nreturn None", number=1, file="agent.py") == []


# dataclass() compiles code from the field names of the class it is given, and a class made by type() has
# field names of the region's choosing, built at run time: the code it compiled ran with os and socket.
DATACLASS_COMPILES = """
key = "x=0, *, y=ex" + "ec(" + repr("print('ran')") + ", {})"
namespace = {"_" * 2 + "annotations" + "_" * 2: {key: int}, key: field(init=False)}
dataclass(init=True)(type("K", (), namespace))
return Verdict("deny", "probe", "rule")
"""


def test_a_class_made_by_type_and_handed_to_dataclass_is_refused():
    found = problems(DATACLASS_COMPILES, stage="s06", number=1, file="permissions.py")
    assert any("'dataclass' is not for an exercise region" in problem for problem in found), found
    assert any("type() with a class's name, bases and namespace" in problem for problem in found), found


def test_type_of_one_value_stays_usable():
    assert problems("return type(error).__name__ == 'ValueError'", stage="s06", number=1, file="permissions.py") == []
