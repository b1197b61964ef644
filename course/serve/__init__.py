"""``course serve``: the offline model over real HTTP, in three wire formats.

One server on the loopback answers the Anthropic Messages API (``/v1/messages``), OpenAI's Chat
Completions (``/v1/chat/completions``) and Ollama's chat (``/api/chat``). Each format is a module of
its own that translates its requests to the Messages API's shape and the replies back
(``anthropic_format.py``, ``openai_format.py``, ``ollama_format.py``); every request is answered by the
same in-process model the course's client uses (``course.offline.OfflineTransport``), so the same
behaviours, chosen by model id, and the same validation stand behind all three.

In the support package's layers it comes after course.offline, and imports nothing else of the course
but the runtime, the helpers and the offline model.
"""

from course.serve.server import CourseServer, start

__all__ = ["CourseServer", "start"]
