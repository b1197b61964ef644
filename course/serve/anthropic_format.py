"""The Messages API as it is: requests go to the offline model's transport unchanged.

The transport is the same request -> reply function the course's in-process client calls, so every
rule it enforces (and streaming, where it streams) reaches HTTP clients as it reaches the SDK.
"""

from __future__ import annotations

import httpx2

from course.offline import ApiError, known_models

PATHS = {"/v1/messages": "POST", "/v1/messages/count_tokens": "POST", "/v1/models": "GET"}


def error(status: int, error_type: str, message: str) -> tuple[int, dict]:
    return status, ApiError(status, error_type, message).body()


def models_page() -> dict:
    # The offline models, listed as the Models API lists Claude's; a family appears under its pattern.
    data = [{"type": "model", "id": model_id, "display_name": model_id, "created_at": "2026-01-01T00:00:00Z"}
            for model_id in known_models()]
    return {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}


def forward(answer, method: str, path: str, headers: dict, content: bytes) -> httpx2.Response | tuple[int, dict]:
    """The transport's own response to the request, or (status, body) for what it does not serve."""
    if path == "/v1/models" and method == "GET":
        return 200, models_page()
    request = httpx2.Request(method, "http://offline.invalid" + path, headers=headers, content=content)
    return answer(request)
