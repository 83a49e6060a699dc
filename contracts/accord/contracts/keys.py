"""Names that appear on the wire: extension URIs and namespaced metadata keys.

Spelled once here; every service and client imports them.
"""

from typing import Final

CONTRACT_VERSION: Final = "1.0.0"
"""Version of the Accord contract (statuses, registry, envelope, contract file formats)."""

CONTRACT_EXTENSION_URI: Final = "https://accord.dev/a2a/ext/contract/v1"
"""A2A extension an agent declares in its card to say it follows the Accord contract."""

DELEGATION_EXTENSION_URI: Final = "https://accord.dev/a2a/ext/delegation/v1"
"""A2A extension that carries the delegation envelope; the envelope sits in message
metadata under this same URI as key."""

STATUS_META_KEY: Final = "dev.accord/status"
"""A2A status-message metadata: {"status", "waiting_reason", "error": {...}, "node"}."""

ERROR_DATA_KIND: Final = "dev.accord/error"
"""`kind` field of the DataPart that repeats a failed task's error for every client."""

TRACEPARENT_META_KEY: Final = "traceparent"
"""W3C trace context key in MCP `params._meta` (SEP-414) and A2A message metadata."""
