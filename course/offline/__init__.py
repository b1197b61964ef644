"""The offline model: the Messages API, in process, for learning and testing with no API key.

See ``transport.py`` for what it does and in which order, ``validation.py`` for the API rules it
enforces, ``tokens.py`` for its token estimate, ``cache.py`` for its prompt caching, and ``tutor.py`` / ``misbehaving.py`` for the
behaviours selected by model id.
"""

from .behaviours import Reply, UnknownBehaviour, behaviour, behaviour_family, behaviour_for, known_models
from .conversation import Call, Conversation
from .transport import DEFAULT_CONTEXT_WINDOW, Faults, OfflineTransport
from .validation import ApiError, validate_request

__all__ = [
    "ApiError", "Call", "Conversation", "DEFAULT_CONTEXT_WINDOW", "Faults", "OfflineTransport", "Reply",
    "UnknownBehaviour", "behaviour", "behaviour_family", "behaviour_for", "known_models", "validate_request",
]
