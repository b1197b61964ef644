"""The offline model: the Messages API, in process, for learning and testing with no API key.

See ``transport.py`` for what it does and in which order, ``validation.py`` and ``rules.py`` (one row per
rule, rendered on the site as "What the offline model checks") for the API rules it enforces and honours, ``tokens.py`` for its token estimate, ``cache.py`` for its prompt caching, and ``catalog.py``
for the behaviours selected by model id (each in a module of its own: ``tutor.py``, ``misbehaving.py``...).

The flood task's workspace and its truth are public here, for the benchmark and the ladder:
``FLOOD_TASK``, ``write_flood_logs(workspace, count)`` and ``flood_error_total(snapshot)``.

In the support package's layers it comes after course.runtime and course.helpers, and imports nothing
else of the course.
"""

from course.offline.behaviours import Behaviour, Reply
from course.offline.catalog import MODELS, Model, UnknownBehaviour, behaviour_for, describe, known_models
from course.offline.context_management import BETA_OF as CONTEXT_MANAGEMENT_BETAS
from course.offline.conversation import Call, Conversation
from course.offline.flood import COUNT_TASK as FLOOD_TASK, error_total as flood_error_total, logs as write_flood_logs
from course.offline.transport import DEFAULT_CONTEXT_WINDOW, Faults, OfflineTransport, Script
from course.offline.validation import ApiError, validate_request

__all__ = [
    "ApiError", "Behaviour", "CONTEXT_MANAGEMENT_BETAS", "Call", "Conversation", "DEFAULT_CONTEXT_WINDOW", "FLOOD_TASK", "Faults", "MODELS",
    "Model", "OfflineTransport", "Reply", "Script", "UnknownBehaviour", "behaviour_for", "describe",
    "flood_error_total", "known_models", "validate_request", "write_flood_logs",
]
