"""Names that appear on the wire: extension URIs, metadata keys, header names.

Spelled once here; every service, client and test imports them. The values are part of the
contract (other languages read them from ``accord contracts export``): changing one breaks
every peer, so a test pins them.
"""

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

CONTRACT_VERSION: Final = "2.0.0"
"""Version of the Accord contract (statuses, registry, envelope, contract file formats)."""

# -- A2A extensions ---------------------------------------------------------------------------

CONTRACT_EXTENSION_URI: Final = "https://accord.dev/a2a/ext/contract/v1"
"""A2A extension an agent declares in its card to say it follows the Accord contract."""

DELEGATION_EXTENSION_URI: Final = "https://accord.dev/a2a/ext/delegation/v1"
"""A2A extension that carries the delegation envelope; the envelope sits in message
metadata under this same URI as key."""

IDEMPOTENT_SEND_EXTENSION_URI: Final = "https://accord.dev/a2a/ext/idempotent-send/v1"
"""A2A extension an agent declares in its card to say a send is keyed by (principal,
messageId): a resend of the same message returns what the first made, another message under
the same id is IDEMPOTENCY_CONFLICT (docs/a2a-server.md)."""

# -- A2A metadata -----------------------------------------------------------------------------

STATUS_META_KEY: Final = "dev.accord/status"
"""Status metadata: {"status", "waitingReason", "error": {...}, "node"}, in the metadata of each
TaskStatusUpdateEvent and of the Task (its current status), and of a status message that has
parts (the status it was sent with; 0.1 and 0.2 wrote it there only)."""

WAITING_REASON_KEY: Final = "waitingReason"
"""Key of the waiting reason inside :data:`STATUS_META_KEY` (lowerCamelCase, as A2A's JSON)."""

# compat.STATUS_SNAKE_CASE_WAITING_REASON
WAITING_REASON_KEY_DEPRECATED: Final = "waiting_reason"
"""The same, as contract 1.0 spelled it. Contract 2.0 no longer writes it (agents write camelCase
only); readers still take it when the new key is absent, for peers of 0.1 and 0.2, until 0.4.0."""

ERROR_INFO_CODE_KEY: Final = "accordCode"
"""`google.rpc.ErrorInfo.metadata` key that carries the contract code in an ErrorInfo of
A2A's domain (AIP-193 metadata keys are lowerCamelCase, no dots)."""

RESULT_ARTIFACT_NAME: Final = "result"
"""Name of the artifact whose one DataPart is a completed task's result (the skill's output
schema). Other artifacts (text, files, more data: contract 1.2) have other names."""

RECEIPT_ARTIFACT_NAME: Final = "receipt"
"""Name of a text artifact beside ``result`` that a person reads (a receipt of what was done),
in the requester's language; an agent's contract says when it sends one."""

ERROR_DATA_KIND: Final = "dev.accord/error"
"""`kind` field of the DataPart that repeats a failed task's error for every client."""

SKILL_META_KEY: Final = "skill"
"""Message metadata: the id of the skill the caller asks for (default: the first skill)."""

STATE_META_KEY: Final = "dev.accord/state"
"""Task metadata: the agent's per-task scratch that survives between turns."""

ENVELOPE_META_KEY: Final = "dev.accord/envelope"
"""Task metadata: the delegation envelope of the first turn (a continuation may omit it)."""

SPENT_META_KEY: Final = "dev.accord/spent"
"""Task metadata: budget units spent by earlier turns of this task (for a task that
delegates: by the whole request tree)."""

TOOL_CALLS_SPENT_META_KEY: Final = "dev.accord/toolCallsSpent"
"""Task metadata: tool calls of the envelope spent by the turns of this task (its tree)."""

REMAINING_META_KEY: Final = "dev.accord/remaining"
"""Task metadata: what is left of the envelope's budget, ``{"units": n, "tool_calls": n}``."""

CONTRACT_VERSION_META_KEY: Final = "dev.accord/contractVersion"
"""Message metadata of a first turn: the agent contract version the caller speaks (one the card
lists, or one of its major); task metadata: the version the agent answers in. Absent: the
agent's newest (accord.contracts.served)."""

SKILL_TASK_META_KEY: Final = "dev.accord/skill"
"""Task metadata: the skill the task's first turn asked for (a continuation keeps it)."""

CARD_WIRE_VERSION_PARAM: Final = "contractVersion"
"""Param of both extensions in an Agent Card: the Accord contract (:data:`CONTRACT_VERSION`)."""

CARD_CONTRACT_VERSION_PARAM: Final = "agentContractVersion"
"""Param of the contract extension in an Agent Card: the agent contract's own version."""

CARD_CONTRACT_VERSIONS_PARAM: Final = "agentContractVersions"
"""Param of the contract extension in an Agent Card: the agent contract versions it serves (its
own first, then ``also_serves``); :data:`CARD_CONTRACT_VERSION_PARAM` (one) is kept for older
readers (compat.CARD_ONE_CONTRACT_VERSION)."""

CARD_WAITING_REASONS_PARAM: Final = "waitingReasons"
"""Param of the contract extension in an Agent Card: the waiting reasons the agent may use."""

CARD_ERRORS_PARAM: Final = "errors"
"""Param of the contract extension in an Agent Card: the error codes the agent may answer."""

CARD_METADATA_KEY_PARAM: Final = "metadataKey"
"""Param of the delegation extension in an Agent Card: the message metadata key of the envelope."""

# compat.CARD_SNAKE_CASE_PARAMS
DEPRECATED_CARD_PARAMS: Final[Mapping[str, str]] = MappingProxyType(
    {
        CARD_WIRE_VERSION_PARAM: "contract_version",
        CARD_CONTRACT_VERSION_PARAM: "agent_contract_version",
        CARD_CONTRACT_VERSIONS_PARAM: "agent_contract_versions",
        CARD_WAITING_REASONS_PARAM: "waiting_reasons",
        CARD_METADATA_KEY_PARAM: "metadata_key",
    }
)
"""Card params as contract 1.0 spelled them (snake_case), by their lowerCamelCase name (A2A's
JSON): cards carry both while the contract's major is 1, and readers take the new name, else
the old (accord.contracts.card_params)."""

CARD_SKILL_SCHEMAS_PARAM: Final = "skillSchemas"
"""Param of the contract extension in an Agent Card: ``{"url", "sha256"}`` of the agent's skill
schema document (:data:`SKILL_SCHEMAS_PATH`), so a client in any language finds each skill's
input and output JSON Schema from the card alone, and knows from the digest when they change."""

SKILL_SCHEMAS_PATH: Final = "/accord/skill-schemas.json"
"""GET (public, like the card; ETag and Cache-Control): the agent's skill schema document,
``{"agent", "version", "contractVersion", "skills": {id: {"input", "output"}}, "schemas":
{"error", "status"}}`` (docs/a2a-server.md)."""

# -- MCP --------------------------------------------------------------------------------------

MCP_ERROR_META_KEY: Final = ERROR_DATA_KIND
"""Namespaced `_meta` key that carries the contract error in an MCP tool result (the same
name that marks the error DataPart on A2A: one name for "the Accord error" on both wires)."""

TOOL_DELEGATION_META_KEY: Final = "dev.accord/delegation"
"""MCP `params._meta` key of a tools/call: the delegation a service acts under
({"tenant": {"app", "user", "session"}, "approved_by"}), accord.contracts.tool_access."""

CONTRACT_VERSIONS_META_KEY: Final = "dev.accord/contractVersions"
"""`_meta` key of a tool in MCP ``tools/list``: the contract versions the tool serves (its own
first, then ``also_serves``), so a client can refuse a tool of a major it was not built for."""

PROTECTED_RESOURCE_PATH: Final = "/.well-known/oauth-protected-resource"
"""GET (public): OAuth 2.0 Protected Resource Metadata (RFC 9728) of a tool server; the MCP
endpoint's own document is this path followed by the endpoint's path (``.../mcp``)."""

# -- both protocols ---------------------------------------------------------------------------

TRACEPARENT_KEY: Final = "traceparent"
"""W3C trace context: the HTTP header, the MCP `params._meta` key (SEP-414) and the A2A
message metadata key."""

API_KEY_HEADER: Final = "X-API-Key"
"""HTTP header that carries an API key (the card's apiKey security scheme names it)."""

# -- A2A push notifications (docs/push-notifications.md) ---------------------------------------

PUSH_TOKEN_HEADER: Final = "X-A2A-Notification-Token"
"""A2A 1.0: the push config's token, sent back with every notification of that config."""

PUSH_SIGNATURE_HEADER: Final = "X-Accord-Signature"
"""``t=<unix seconds>,v1=<hex HMAC-SHA256>`` of ``t + "." + id + "." + body`` keyed by the
config's token: a receiver checks the body was not changed and is recent."""

PUSH_ID_HEADER: Final = "X-Accord-Notification-Id"
"""One id per notification, the same on every retry: a receiver drops repeats by it."""

SENT_DETAIL_KEY: Final = "sent"
"""An error's ``details``: ``False`` when the request provably never left the caller (the
connection was refused, the circuit breaker was open, the session could not be opened), so
nothing can have happened at the server and nothing was spent there. Absent otherwise: a
request that may have been sent may have been done."""

# -- every service ----------------------------------------------------------------------------

HEALTH_PATH: Final = "/healthz"
"""GET: the process is alive (public)."""

READY_PATH: Final = "/readyz"
"""GET: the process and its dependencies (store, tool servers, peers) are reachable (public)."""

SERVICE_JWKS_PATH: Final = "/.well-known/jwks.json"
"""GET (public): the service's own signing keys (a JWKS: ES256, each with its ``kid``). Every
token a service sends is signed by one of them; a verifier accepts it only under the keys of
the service its ``sub`` (``svc:NAME``) names, with the grants of its own trust table
(docs/service-keys.md)."""
