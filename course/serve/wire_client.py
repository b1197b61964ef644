"""A client that sends the Messages API's requests to a server of another format, for ``course doctor``.

``client.messages.create(**request)`` takes a Messages request, sends it to an OpenAI Chat
Completions server (``/chat/completions`` under its base URL) or to an Ollama server (``/api/chat``),
and returns the reply as an ``anthropic.types.Message``, so the doctor's probes and judgements stay
the same whichever format the server speaks. A call whose arguments are not JSON keeps them as text
(the doctor judges it as a call with no arguments); an HTTP error is an ``anthropic.APIStatusError``.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import anthropic
import httpx2

API_FORMATS = ("openai", "ollama")
STOP_REASONS = {"tool_calls": "tool_use", "stop": "end_turn", "length": "max_tokens", "content_filter": "refusal"}


def chat_messages(body: dict) -> list[dict]:
    """The Messages request's system prompt and history, as OpenAI's (and Ollama's) chat messages."""
    messages = [{"role": "system", "content": body["system"]}] if body.get("system") else []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            messages.append({"role": message["role"], "content": content})
            continue
        text = "".join(block.get("text", "") for block in content if block["type"] == "text")
        if message["role"] == "assistant":
            calls = [{"id": block["id"], "type": "function",
                      "function": {"name": block["name"], "arguments": json.dumps(block["input"])}}
                     for block in content if block["type"] == "tool_use"]
            messages.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
            continue
        for block in content:
            if block["type"] == "tool_result":
                result = block.get("content", "")
                result = result if isinstance(result, str) else "".join(part.get("text", "") for part in result)
                messages.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": result})
        if text:
            messages.append({"role": "user", "content": text})
    return messages


def function_tools(body: dict) -> list[dict]:
    return [{"type": "function", "function": {"name": tool["name"], "description": tool.get("description", ""),
                                              "parameters": tool["input_schema"]}} for tool in body.get("tools", [])]


class WireClient:
    def __init__(self, api: str, base_url: str, api_key: str | None = None, timeout: float = 600):
        if api not in API_FORMATS:
            raise ValueError(f"api must be one of {', '.join(API_FORMATS)}, not {api!r}")
        self.api, self.base_url, self.api_key, self.timeout = api, base_url.rstrip("/"), api_key, timeout
        self.messages = self

    def create(self, **body) -> anthropic.types.Message:
        if self.api == "openai":
            url = self.base_url + "/chat/completions"
            sent = {"model": body["model"], "messages": chat_messages(body), "max_completion_tokens": body["max_tokens"],
                    **({"tools": function_tools(body)} if body.get("tools") else {})}
        else:
            url = self.base_url + "/api/chat"
            messages = [{key: value for key, value in message.items() if key != "tool_call_id"}
                        for message in chat_messages(body)]
            for message in messages:   # Ollama's calls carry their arguments as objects, and no ids
                for call in message.get("tool_calls", []):
                    call.pop("id", None), call.pop("type", None)
                    call["function"]["arguments"] = json.loads(call["function"]["arguments"])
            sent = {"model": body["model"], "messages": messages, "stream": False,
                    "options": {"num_predict": body["max_tokens"]},
                    **({"tools": function_tools(body)} if body.get("tools") else {})}
        reply = self._post(url, sent)
        return anthropic.types.Message.model_validate(
            self._from_openai(reply, body["model"]) if self.api == "openai" else self._from_ollama(reply, body["model"]))

    def _post(self, url: str, sent: dict) -> dict:
        headers = {"content-type": "application/json",
                   **({"authorization": f"Bearer {self.api_key}"} if self.api_key else {})}
        request = urllib.request.Request(url, data=json.dumps(sent).encode(), headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            text = error.read().decode("utf-8", errors="replace")
            try:
                error_body = json.loads(text)
            except ValueError:
                error_body = {"error": text}
            detail = error_body.get("error") if isinstance(error_body, dict) else text
            message = detail.get("message") if isinstance(detail, dict) else str(detail)
            raise anthropic.APIStatusError(message, response=httpx2.Response(error.code, request=httpx2.Request("POST", url)),
                                           body={"error": {"message": message}}) from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            raise anthropic.APIConnectionError(message=f"{url}: {error}", request=httpx2.Request("POST", url)) from None

    @staticmethod
    def _arguments(text):
        try:
            return json.loads(text or "{}")
        except ValueError:
            return text

    def _from_openai(self, reply: dict, model: str) -> dict:
        choice = reply["choices"][0]
        message = choice["message"]
        blocks = [{"type": "text", "text": message["content"]}] if message.get("content") else []
        blocks += [{"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                    "input": self._arguments(call["function"].get("arguments"))} for call in message.get("tool_calls") or []]
        usage = reply.get("usage") or {}
        return {"id": reply.get("id", "msg"), "type": "message", "role": "assistant", "model": model, "content": blocks,
                "stop_reason": STOP_REASONS.get(choice.get("finish_reason"), "end_turn"), "stop_sequence": None,
                "usage": {"input_tokens": usage.get("prompt_tokens", 0), "output_tokens": usage.get("completion_tokens", 0)}}

    def _from_ollama(self, reply: dict, model: str) -> dict:
        message = reply["message"]
        blocks = [{"type": "text", "text": message["content"]}] if message.get("content") else []
        calls = message.get("tool_calls") or []
        blocks += [{"type": "tool_use", "id": f"toolu_ollama_{index:02d}", "name": call["function"]["name"],
                    "input": call["function"].get("arguments")} for index, call in enumerate(calls)]
        stop = "max_tokens" if reply.get("done_reason") == "length" else "tool_use" if calls else "end_turn"
        return {"id": "msg_ollama", "type": "message", "role": "assistant", "model": model, "content": blocks,
                "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": reply.get("prompt_eval_count", 0), "output_tokens": reply.get("eval_count", 0)}}
