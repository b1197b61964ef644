"""Tool arguments checked against the tool's JSON Schema, with messages a model can act on.

Stage s04 validates every call before running it. The checking itself is the `jsonschema`
library's (a well-kept implementation of the standard); this module only turns its findings
into one short sentence per problem, naming the field and what was expected.
"""

from __future__ import annotations

import sys

# jsonschema checks the "iri" format with rfc3987-syntax whenever that is installed (Jupyter brings it
# in, through jupyter-events), and rfc3987-syntax builds its grammar when imported: 1.1 s at the
# start of every process that imports the course (measured with python -X importtime), paid by every
# stage run, notebook kernel and graded copy. The course checks no formats, so it is not imported.
sys.modules.setdefault("rfc3987_syntax", None)

from jsonschema import Draft202012Validator  # noqa: E402
from jsonschema.exceptions import best_match  # noqa: E402

JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer", float: "number",
              type(None): "null"}


def json_type(value) -> str:
    return JSON_TYPES.get(type(value), type(value).__name__)


def argument_errors(schema: dict, arguments) -> list[str]:
    """What is wrong with ``arguments`` for ``schema``; empty when they are valid.

    Unknown fields are refused (``additionalProperties: false``): a field the tool does not
    take means the model has the wrong idea of the tool, and silently dropping it would hide that.
    """
    if not isinstance(arguments, dict):
        return [f"the arguments must be a JSON object, got {json_type(arguments)} {_show(arguments)}"]
    strict = {**schema, "additionalProperties": False}
    errors = sorted(Draft202012Validator(strict).iter_errors(arguments), key=lambda e: (list(e.path), e.validator))
    return [_describe(error) for error in errors]


def _describe(error) -> str:
    if error.validator == "required":
        missing = error.message.split("'")[1]
        return f"missing required field '{missing}'"
    if error.validator == "additionalProperties":
        unexpected = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        # Each name as repr shows it (a lone surrogate as \ud800, which JSON can carry), and at most
        # five of them: 20,000 unknown fields once made one answer 200 KB long.
        named = ", ".join(_show(name) for name in unexpected[:5])
        return f"unknown field {named}" + (f" (and {len(unexpected) - 5} more)" if len(unexpected) > 5 else "")
    field = ".".join(str(part) for part in error.path) or "(arguments)"
    if error.validator == "type":
        return f"field '{field}': expected {error.validator_value}, got {json_type(error.instance)} {_show(error.instance)}"
    return f"field '{field}': {error.message}"


def first_problem(schema: dict, value) -> str:
    """The most telling way ``value`` fails ``schema``, in one line naming where ("content/0: 'type' is
    a required property"); empty when it fits."""
    problem = best_match(Draft202012Validator(schema).iter_errors(value))
    if problem is None:
        return ""
    where = "/".join(str(part) for part in problem.absolute_path) or "the whole"
    return f"{where}: {_show(problem.message) if len(problem.message) > 100 else problem.message}"


def describe_parameters(schema: dict) -> str:
    """The parameters of a tool in one line, e.g. "path (string, required), offset (integer)"."""
    required = set(schema.get("required", []))
    parts = [f"{name} ({spec.get('type', 'any')}{', required' if name in required else ''})"
             for name, spec in schema.get("properties", {}).items()]
    return ", ".join(parts) or "no arguments"


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
