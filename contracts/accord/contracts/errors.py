"""The error registry: one table of contract codes and their wire forms.

Every error that crosses a process boundary is an :class:`AccordError` carrying a code from
:data:`REGISTRY`. The registry says what the code means for the caller (its retry class) and
how it is spelled on every wire we speak:

    ErrorCode ──┬── A2A JSON-RPC   error.code + error.data[one ErrorInfo]
                ├── A2A REST       HTTP status + google.rpc status + details[one ErrorInfo]
                ├── MCP tool result isError=true + _meta[MCP_ERROR_META_KEY] + JSON text block
                └── plain HTTP     status + {"error": {...}} (health, admin endpoints)

Nobody guesses a retry from an error message: the class is in the table. A new error is one row.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from accord.contracts.keys import ERROR_INFO_CODE_KEY, MCP_ERROR_META_KEY

ERROR_DOMAIN: Final = "accord.dev"
"""`google.rpc.ErrorInfo.domain` of an error A2A has no name for (``POLICY_DENIED``...): its
``reason`` is the contract code."""

A2A_ERROR_DOMAIN: Final = "a2a-protocol.org"
"""`google.rpc.ErrorInfo.domain` of an error A2A 1.0 names (sections 9.5, 11.6): its ``reason``
is A2A's (``TASK_NOT_FOUND``) and the contract code travels in its metadata."""

# A2A 1.0's ErrorInfo reason of each JSON-RPC code it defines (the error's name in upper snake
# case without "Error"; a2a-sdk's A2A_ERROR_MAPPING spells the same, which a protocol test
# checks). -32700 has no row in the SDK's table; its REST binding answers a parse failure as
# INVALID_REQUEST, and so do we.
A2A_REASON_OF_JSONRPC: Final[Mapping[int, str]] = {
    -32001: "TASK_NOT_FOUND",
    -32002: "TASK_NOT_CANCELABLE",
    -32003: "PUSH_NOTIFICATION_NOT_SUPPORTED",
    -32004: "UNSUPPORTED_OPERATION",
    -32005: "CONTENT_TYPE_NOT_SUPPORTED",
    -32006: "INVALID_AGENT_RESPONSE",
    -32007: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    -32008: "EXTENSION_SUPPORT_REQUIRED",
    -32009: "VERSION_NOT_SUPPORTED",
    -32700: "INVALID_REQUEST",
    -32600: "INVALID_REQUEST",
    -32601: "METHOD_NOT_FOUND",
    -32602: "INVALID_PARAMS",
    -32603: "INTERNAL_ERROR",
}

ERROR_INFO_TYPE: Final = "type.googleapis.com/google.rpc.ErrorInfo"


class RetryClass(StrEnum):
    """What a caller does with an error."""

    RETRY = "retry"  # back off exponentially with jitter, bounded attempts and deadline
    REPLAN = "replan"  # go back to planning and look for an alternative
    STOP = "stop"  # give up; retrying cannot help


class ErrorCode(StrEnum):
    RETRYABLE_TIMEOUT = "RETRYABLE_TIMEOUT"
    UNAVAILABLE = "UNAVAILABLE"
    RATE_LIMITED = "RATE_LIMITED"
    OUT_OF_STOCK = "OUT_OF_STOCK"
    POLICY_DENIED = "POLICY_DENIED"
    BUDGET_EXHAUSTED = "BUDGET_EXHAUSTED"
    INVALID_INPUT = "INVALID_INPUT"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    NOT_FOUND = "NOT_FOUND"
    IDEMPOTENCY_CONFLICT = "IDEMPOTENCY_CONFLICT"
    CANCELED = "CANCELED"
    TASK_NOT_CANCELABLE = "TASK_NOT_CANCELABLE"
    UNSUPPORTED_OPERATION = "UNSUPPORTED_OPERATION"
    CONTENT_TYPE_NOT_SUPPORTED = "CONTENT_TYPE_NOT_SUPPORTED"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    CONTRACT_VIOLATION = "CONTRACT_VIOLATION"
    VERSION_UNSUPPORTED = "VERSION_UNSUPPORTED"
    INTERNAL = "INTERNAL"


class ErrorSpec(BaseModel):
    """One row of the registry."""

    model_config = ConfigDict(frozen=True)

    code: ErrorCode
    retry: RetryClass
    meaning: str
    jsonrpc_code: int
    rest_status: int
    rest_reason: str  # google.rpc.Code name used by A2A's HTTP+JSON binding
    http_status: int  # plain HTTP endpoints (health, admin, tool server side doors)


def _row(
    code: ErrorCode,
    retry: RetryClass,
    meaning: str,
    jsonrpc_code: int,
    rest_status: int,
    rest_reason: str,
    http_status: int | None = None,
) -> tuple[ErrorCode, ErrorSpec]:
    return code, ErrorSpec(
        code=code,
        retry=retry,
        meaning=meaning,
        jsonrpc_code=jsonrpc_code,
        rest_status=rest_status,
        rest_reason=rest_reason,
        http_status=rest_status if http_status is None else http_status,
    )


_R, _P, _S = RetryClass.RETRY, RetryClass.REPLAN, RetryClass.STOP
E = ErrorCode

# JSON-RPC: A2A's own codes where A2A has one (-32001 task not found, -32002 not cancelable,
# -32004 unsupported operation, -32005 content type, -32009 version), JSON-RPC's where it has
# one (-32602, -32603), and the rest in the server-defined range -32050..-32069, one code each
# so the mapping is invertible even when a peer drops error.data.
REGISTRY: Final[Mapping[ErrorCode, ErrorSpec]] = dict(
    [
        _row(
            E.RETRYABLE_TIMEOUT,
            _R,
            "A deadline passed before the work finished; it may succeed if tried again later.",
            -32050,
            504,
            "DEADLINE_EXCEEDED",
        ),
        _row(
            E.UNAVAILABLE,
            _R,
            "The service or a dependency is down or overloaded for now.",
            -32051,
            503,
            "UNAVAILABLE",
        ),
        _row(
            E.RATE_LIMITED,
            _R,
            "Too many requests; slow down and try again.",
            -32052,
            429,
            "RESOURCE_EXHAUSTED",
        ),
        _row(
            E.OUT_OF_STOCK,
            _P,
            "The requested resource cannot be had; plan an alternative.",
            -32053,
            409,
            "FAILED_PRECONDITION",
        ),
        _row(
            E.POLICY_DENIED,
            _S,
            "A business rule forbids this; retrying cannot change it.",
            -32054,
            422,
            "FAILED_PRECONDITION",
        ),
        _row(
            E.BUDGET_EXHAUSTED,
            _S,
            "The delegated budget (units, tool calls) is spent.",
            -32055,
            429,
            "RESOURCE_EXHAUSTED",
            402,
        ),
        _row(
            E.INVALID_INPUT,
            _S,
            "The request is malformed or breaks the declared schema.",
            -32602,
            400,
            "INVALID_ARGUMENT",
        ),
        _row(
            E.UNAUTHENTICATED,
            _S,
            "No valid credential was presented.",
            -32056,
            401,
            "UNAUTHENTICATED",
        ),
        _row(
            E.PERMISSION_DENIED,
            _S,
            "The authenticated principal may not do this.",
            -32057,
            403,
            "PERMISSION_DENIED",
        ),
        _row(
            E.NOT_FOUND,
            _S,
            "No such task, order or resource for this caller (another "
            "tenant's ids are not found either).",
            -32001,
            404,
            "NOT_FOUND",
        ),
        _row(
            E.IDEMPOTENCY_CONFLICT,
            _S,
            "The idempotency key was used before with different arguments.",
            -32058,
            409,
            "ALREADY_EXISTS",
        ),
        _row(E.CANCELED, _S, "The work was canceled by its caller.", -32059, 409, "CANCELLED"),
        _row(
            E.TASK_NOT_CANCELABLE,
            _S,
            "The task is terminal (or otherwise cannot be canceled).",
            -32002,
            409,
            "FAILED_PRECONDITION",
        ),
        _row(
            E.UNSUPPORTED_OPERATION,
            _S,
            "The operation is not supported here, e.g. a message to a terminal task.",
            -32004,
            400,
            "UNIMPLEMENTED",
        ),
        # A2A 1.0.1 section 5.4: ContentTypeNotSupportedError is -32005, INVALID_ARGUMENT, and
        # HTTP 415 on the REST binding (a2a-sdk 1.3.0's own table says 400; the spec wins).
        _row(
            E.CONTENT_TYPE_NOT_SUPPORTED,
            _S,
            "The request's media type (its Content-Type, or a part's) is not one the agent "
            "accepts.",
            -32005,
            415,
            "INVALID_ARGUMENT",
        ),
        _row(
            E.PAYLOAD_TOO_LARGE,
            _S,
            "The request body or a field exceeds its size limit.",
            -32060,
            413,
            "INVALID_ARGUMENT",
        ),
        _row(
            E.CONTRACT_VIOLATION,
            _S,
            "A peer answered outside its declared contract (schema, status, annotation).",
            -32061,
            502,
            "INTERNAL",
        ),
        _row(
            E.VERSION_UNSUPPORTED,
            _S,
            "The protocol or contract version is not supported.",
            -32009,
            400,
            "FAILED_PRECONDITION",
        ),
        _row(
            E.INTERNAL,
            _S,
            "An unexpected fault inside the service; details are not disclosed.",
            -32603,
            500,
            "INTERNAL",
        ),
    ]
)

JSONRPC_TO_CODE: Final[Mapping[int, ErrorCode]] = {
    spec.jsonrpc_code: code for code, spec in REGISTRY.items()
}

# Codes a peer that is not Accord may send (A2A and JSON-RPC standard codes), read as ours.
FOREIGN_JSONRPC_TO_CODE: Final[Mapping[int, ErrorCode]] = {
    -32700: E.INVALID_INPUT,  # parse error
    -32600: E.INVALID_INPUT,  # invalid request
    -32601: E.UNSUPPORTED_OPERATION,  # method not found
    -32003: E.UNSUPPORTED_OPERATION,  # push notifications not supported
    -32006: E.CONTRACT_VIOLATION,  # invalid agent response
    -32007: E.UNSUPPORTED_OPERATION,  # extended card not configured
    -32008: E.INVALID_INPUT,  # extension support required
}


def code_for_jsonrpc(code: int) -> ErrorCode | None:
    """The contract code of a JSON-RPC error code (ours, A2A's or JSON-RPC's), if it has one."""
    return JSONRPC_TO_CODE.get(code) or FOREIGN_JSONRPC_TO_CODE.get(code)


# How an HTTP status WITHOUT a contract body reads (a proxy's answer, a peer that is not Accord,
# an LLM provider). One table for every client; an answer that carries a contract code is read
# by that code, never by its status. Each row is the registry's own status of the code, read
# back, except where the row says why not.
HTTP_STATUS_TO_CODE: Final[Mapping[int, ErrorCode]] = {
    400: E.INVALID_INPUT,  # shared with UNSUPPORTED_OPERATION, VERSION_UNSUPPORTED: the broadest
    401: E.UNAUTHENTICATED,
    402: E.BUDGET_EXHAUSTED,
    403: E.PERMISSION_DENIED,
    404: E.NOT_FOUND,
    405: E.UNSUPPORTED_OPERATION,  # no code of ours is sent with it: method not allowed
    408: E.RETRYABLE_TIMEOUT,  # no code of ours is sent with it: the server gave up waiting
    409: E.IDEMPOTENCY_CONFLICT,  # shared with OUT_OF_STOCK, CANCELED, TASK_NOT_CANCELABLE
    410: E.NOT_FOUND,  # no code of ours is sent with it: gone
    413: E.PAYLOAD_TOO_LARGE,
    415: E.CONTENT_TYPE_NOT_SUPPORTED,
    # POLICY_DENIED is sent with 422, but a bare 422 is a framework's schema error (FastAPI,
    # pydantic): a business rule is never read from a status alone.
    422: E.INVALID_INPUT,
    429: E.RATE_LIMITED,  # shared with BUDGET_EXHAUSTED (REST): a bare one is a rate limit
    # INTERNAL is sent with 500 and its body, and is read by the body. A bare 500 is a foreign
    # server failing without saying why: a bounded retry is what HTTP clients do with it
    # (OpenAI's and Anthropic's SDKs, AWS's), and our writes carry idempotency keys.
    500: E.UNAVAILABLE,
    501: E.UNSUPPORTED_OPERATION,  # no code of ours is sent with it: not implemented
    # CONTRACT_VIOLATION is sent with 502 (with its body); a bare 502 is a gateway whose
    # upstream is down or restarting, which is what UNAVAILABLE means.
    502: E.UNAVAILABLE,
    503: E.UNAVAILABLE,
    504: E.RETRYABLE_TIMEOUT,
    505: E.VERSION_UNSUPPORTED,  # no code of ours is sent with it: HTTP version not supported
}

HTTP_CLASS_TO_CODE: Final[Mapping[int, ErrorCode]] = {
    4: E.INVALID_INPUT,  # a client error the table does not name: the request was wrong
    5: E.UNAVAILABLE,  # gateway and infrastructure statuses (507, 52x...): the server is down
}
"""Statuses not in :data:`HTTP_STATUS_TO_CODE`, by class (``status // 100``)."""


def code_for_http_status(status: int) -> ErrorCode:
    """The contract code of an HTTP error status that came without a contract body."""
    found = HTTP_STATUS_TO_CODE.get(status)
    if found is not None:
        return found
    return HTTP_CLASS_TO_CODE.get(status // 100, E.INTERNAL)


def spec(code: ErrorCode | str) -> ErrorSpec:
    """The registry row of a code (raises KeyError for a code that is not in the contract)."""
    return REGISTRY[ErrorCode(code)]


def parse_code(value: object, default: ErrorCode = ErrorCode.INTERNAL) -> ErrorCode:
    """Read a code from a wire value; unknown values become ``default``, never a crash."""
    if isinstance(value, str):
        try:
            return ErrorCode(value)
        except ValueError:
            return default
    return default


class AccordError(Exception):
    """The one error type of the contract: a code from the registry, a message, details.

    ``message`` is for people and is safe to show a remote caller; ``details`` is a small
    JSON object for machines. Neither may contain Python exception text.
    """

    def __init__(
        self,
        code: ErrorCode | str,
        message: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        self.code = ErrorCode(code)
        self.message = message or REGISTRY[self.code].meaning
        self.details: dict[str, Any] = dict(details or {})
        super().__init__(f"{self.code.value}: {self.message}")

    # -- registry facts ---------------------------------------------------------------------
    @property
    def spec(self) -> ErrorSpec:
        return REGISTRY[self.code]

    @property
    def retry_class(self) -> RetryClass:
        return self.spec.retry

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AccordError) and (self.code, self.message, self.details) == (
            other.code,
            other.message,
            other.details,
        )

    def __hash__(self) -> int:
        return hash((self.code, self.message))

    def __repr__(self) -> str:
        return f"AccordError({self.code.value!r}, {self.message!r}, {self.details!r})"

    # -- neutral form (A2A metadata, DataParts, MCP _meta, event logs) ------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code.value,
            "retry": self.retry_class.value,
            "message": self.message,
            "details": self.details,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AccordError:
        details = data.get("details")
        message = data.get("message")
        return cls(
            parse_code(data.get("code")),
            message if isinstance(message, str) else None,
            details if isinstance(details, Mapping) else None,
        )

    def error_info(self, jsonrpc_code: int | None = None) -> dict[str, Any]:
        """The one ``google.rpc.ErrorInfo`` of this error on an A2A wire (AIP-193 allows one).

        An error A2A names gets A2A's domain and reason, with the contract code under
        ``metadata[ERROR_INFO_CODE_KEY]``; any other gets ours, reason = the contract code.
        ``jsonrpc_code`` is the JSON-RPC code actually sent where it is not the registry's
        (the gate answers a parse failure with -32700)."""
        metadata = {"message": self.message}
        if self.details:
            metadata["details"] = json.dumps(self.details, sort_keys=True, ensure_ascii=False)
        a2a_reason = A2A_REASON_OF_JSONRPC.get(
            self.spec.jsonrpc_code if jsonrpc_code is None else jsonrpc_code
        )
        if a2a_reason is None:
            return {
                "@type": ERROR_INFO_TYPE,
                "reason": self.code.value,
                "domain": ERROR_DOMAIN,
                "metadata": metadata,
            }
        return {
            "@type": ERROR_INFO_TYPE,
            "reason": a2a_reason,
            "domain": A2A_ERROR_DOMAIN,
            "metadata": {ERROR_INFO_CODE_KEY: self.code.value, **metadata},
        }

    # -- A2A JSON-RPC ------------------------------------------------------------------------
    def to_jsonrpc_error(self) -> dict[str, Any]:
        """The JSON-RPC `error` object (A2A 1.0: data is a list of ErrorInfo)."""
        return {
            "code": self.spec.jsonrpc_code,
            "message": self.message,
            "data": [self.error_info()],
        }

    @classmethod
    def from_jsonrpc_error(cls, error: Mapping[str, Any]) -> AccordError:
        message = error.get("message")
        msg = message if isinstance(message, str) else None
        found = _from_error_infos(error.get("data"), msg)
        if found is not None:
            return found
        raw = error.get("code")
        code = code_for_jsonrpc(raw) if isinstance(raw, int) else None
        return cls(code or ErrorCode.INTERNAL, msg)

    # -- A2A HTTP+JSON (REST) ----------------------------------------------------------------
    def to_rest(self) -> tuple[int, dict[str, Any]]:
        """HTTP status and body in the google.rpc.Status shape A2A's REST binding uses."""
        status = self.spec.rest_status
        return status, {
            "error": {
                "code": status,
                "status": self.spec.rest_reason,
                "message": self.message,
                "details": [self.error_info()],
            }
        }

    @classmethod
    def from_rest(cls, status: int, body: Mapping[str, Any] | None) -> AccordError:
        error = body.get("error") if isinstance(body, Mapping) else None
        if isinstance(error, Mapping):
            message = error.get("message")
            msg = message if isinstance(message, str) else None
            found = _from_error_infos(error.get("details"), msg)
            if found is not None:
                return found
            return cls(code_for_http_status(status), msg)
        return cls(code_for_http_status(status))

    # -- plain HTTP --------------------------------------------------------------------------
    def to_http(self) -> tuple[int, dict[str, Any]]:
        return self.spec.http_status, {"error": self.to_dict()}

    @classmethod
    def from_http(cls, status: int, body: Mapping[str, Any] | None) -> AccordError:
        error = body.get("error") if isinstance(body, Mapping) else None
        if isinstance(error, Mapping) and "code" in error:
            return cls.from_dict(error)
        return cls(code_for_http_status(status))

    # -- MCP tool result ---------------------------------------------------------------------
    def to_mcp_result(self) -> dict[str, Any]:
        """A `CallToolResult` as wire JSON: isError, a JSON text block, the code in _meta.

        The error is deliberately NOT in structuredContent: MCP clients validate that against
        the tool's outputSchema even when isError is true.
        """
        payload = self.to_dict()
        return {
            "isError": True,
            "content": [
                {"type": "text", "text": json.dumps({"error": payload}, ensure_ascii=False)}
            ],
            "_meta": {MCP_ERROR_META_KEY: payload},
        }

    @classmethod
    def from_mcp_result(cls, result: Mapping[str, Any]) -> AccordError:
        meta = result.get("_meta") or result.get("meta")
        if isinstance(meta, Mapping):
            payload = meta.get(MCP_ERROR_META_KEY)
            if isinstance(payload, Mapping):
                return cls.from_dict(payload)
        # A tool server that is not Accord: its text is all we have, and it proves nothing
        # about retry, so it is read as INTERNAL (stop), never guessed from the wording.
        text = _first_text(result.get("content"))
        return cls(
            ErrorCode.INTERNAL,
            "tool returned an error without a contract code",
            {"text": text[:500]} if text else None,
        )


def error_info_code(info: object) -> ErrorCode | None:
    """The contract code an ErrorInfo carries: ours by its reason, A2A's by the code in its
    metadata (an A2A ErrorInfo without one, from a peer that is not Accord, says nothing here:
    callers read A2A's reason or the JSON-RPC code instead)."""
    if not isinstance(info, Mapping):
        return None
    raw: object = None
    if info.get("domain") == ERROR_DOMAIN:
        raw = info.get("reason")
    elif info.get("domain") == A2A_ERROR_DOMAIN:
        meta = info.get("metadata")
        raw = meta.get(ERROR_INFO_CODE_KEY) if isinstance(meta, Mapping) else None
    if isinstance(raw, str) and raw in ErrorCode.__members__:
        return ErrorCode(raw)
    return None


def _from_error_infos(infos: object, message: str | None) -> AccordError | None:
    if not isinstance(infos, list):
        return None
    for info in infos:
        code = error_info_code(info)
        if code is None:
            continue
        meta = info.get("metadata")
        details: dict[str, Any] | None = None
        if isinstance(meta, Mapping):
            raw = meta.get("details")
            if isinstance(raw, str):
                try:
                    loaded = json.loads(raw)
                except ValueError:
                    loaded = None
                details = loaded if isinstance(loaded, dict) else None
            if message is None and isinstance(meta.get("message"), str):
                message = meta["message"]
        return AccordError(code, message, details)
    return None


def _first_text(content: object) -> str:
    if isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str):
                    return text
    return ""
