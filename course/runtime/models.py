"""The one place where model ids are decided.

Retired, hard-coded model ids are the most common complaint about agent courses, so no stage
names a model: they all ask ``resolve_model``.
"""

from __future__ import annotations

import os

OFFLINE = "offline"
# The current Claude model used when an API key is set and no model is named.
# Claude model ids: https://platform.claude.com/docs/en/about-claude/models/model-ids-and-versions
DEFAULT_CLAUDE_MODEL = "claude-sonnet-5-5"


# The Claude 5 generation thinks adaptively and refuses a manual thinking budget with a 400: Sonnet 5
# and Sonnet 5.5 ("manual extended thinking returns a 400", with sampling parameters set to other than
# their defaults, and forced tool use on 5.5), Opus 5.5 and Fable 5.x (thinking always on), Haiku 5.5
# (adaptive thinking with effort). Sources: each model's overview and migration guide under
# https://platform.claude.com/docs/en/models/. A request to them asks for {"type": "adaptive"}.
ADAPTIVE_ONLY_FAMILIES = ("claude-sonnet-5", "claude-opus-5", "claude-haiku-5", "claude-fable-5", "claude-mythos-5")


def refuses_thinking_budget(model_id: str) -> bool:
    return any(model_id == family or model_id.startswith(family + "-") for family in ADAPTIVE_ONLY_FAMILIES)


class CourseError(Exception):
    """A problem the user can fix, said in one line (the command line prints it, no traceback)."""


def is_offline(model_id: str) -> bool:
    return model_id.startswith(OFFLINE)


def resolve_model(model_id: str | None = None) -> str:
    """The argument, else $MODEL_ID, else `offline` without an API key and Claude with one."""
    if model_id:
        return model_id
    if os.environ.get("MODEL_ID"):
        return os.environ["MODEL_ID"]
    if os.environ.get("ANTHROPIC_BASE_URL"):
        # A local server's models have names of their own: guessing one would be wrong.
        raise CourseError("ANTHROPIC_BASE_URL is set: name the local model with --model or MODEL_ID "
                          "(e.g. --model qwen3-coder), or unset it to run offline")
    return DEFAULT_CLAUDE_MODEL if os.environ.get("ANTHROPIC_API_KEY") else OFFLINE
