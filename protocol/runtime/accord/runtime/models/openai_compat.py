"""A model behind any OpenAI-compatible ``POST {base}/chat/completions`` endpoint.

Failures are mapped to contract codes at this one boundary (nobody reads a provider's error
text to decide a retry):

    httpx timeout            -> RETRYABLE_TIMEOUT
    connection refused, etc. -> UNAVAILABLE
    an HTTP error status     -> the contract's one reading of a bare status
                                (accord.contracts.errors.HTTP_STATUS_TO_CODE: 401 UNAUTHENTICATED,
                                404 NOT_FOUND (model or base URL), 429 RATE_LIMITED,
                                500/502/503 UNAVAILABLE, 504 RETRYABLE_TIMEOUT, ...)
    an answer that is not the JSON we asked for      -> CONTRACT_VIOLATION

The API key is sent as a bearer token and never appears in errors, metrics or ``repr``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

import httpx
import jsonschema

from accord.contracts.errors import AccordError, ErrorCode, code_for_http_status
from accord.runtime.models.completion import (
    CompletionModel,
    CompletionRequest,
    CompletionResponse,
    TokenUsage,
)


class JsonMode(StrEnum):
    """How to ask for JSON: a strict schema (OpenAI, vLLM, ...) or any JSON object (older)."""

    SCHEMA = "json_schema"
    OBJECT = "json_object"


class OpenAICompatModel(CompletionModel):
    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        json_mode: JsonMode = JsonMode.SCHEMA,
        provider: str = "openai",
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.json_mode = json_mode
        self._provider = provider
        self._api_key = api_key
        self._client = client
        self._owns_client = client is None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.base_url!r})"

    @property
    def name(self) -> str:
        return f"{self._provider}:{self.model}"

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.model_dump(mode="json") for m in request.messages],
            "temperature": request.temperature,
        }
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.output is not None:
            if self.json_mode is JsonMode.SCHEMA:
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": request.output.name,
                        "schema": request.output.json_schema,
                        "strict": True,
                    },
                }
            else:
                body["response_format"] = {"type": "json_object"}
        headers = self.auth_headers()
        try:
            reply = await self._http().post(
                f"{self.base_url}/chat/completions",
                json=body,
                headers=headers,
                timeout=self.timeout_s,
            )
        except httpx.TimeoutException:
            raise self._error(
                ErrorCode.RETRYABLE_TIMEOUT,
                "the model did not answer in time",
                {"timeout_s": self.timeout_s},
            ) from None
        except httpx.HTTPError:
            raise self._error(ErrorCode.UNAVAILABLE, "the model endpoint is unreachable") from None
        if reply.status_code >= 400:
            raise self._status_error(reply)
        return self._read(reply, request)

    def auth_headers(self) -> dict[str, str]:
        """The headers that carry the API key (none without one); never logged."""
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    async def aclose(self) -> None:
        if self._client is not None and self._owns_client:
            await self._client.aclose()
            self._client = None

    # -- internals -----------------------------------------------------------------------------

    def _http(self) -> httpx.AsyncClient:
        # A client belongs to the event loop it was first used on; a new loop gets a new one.
        loop = asyncio.get_running_loop()
        if self._client is None or (self._owns_client and self._loop is not loop):
            self._client = httpx.AsyncClient(timeout=self.timeout_s)
            self._loop = loop
        return self._client

    def _error(
        self, code: ErrorCode, message: str, details: Mapping[str, Any] | None = None
    ) -> AccordError:
        return AccordError(code, message, {"model": self.name, **(details or {})})

    def _status_error(self, reply: httpx.Response) -> AccordError:
        details: dict[str, Any] = {"http_status": reply.status_code}
        retry_after = reply.headers.get("retry-after")
        if retry_after is not None and retry_after.strip().isdigit():
            details["retry_after_s"] = int(retry_after.strip())
        # The provider's error type is a short machine word; its message stays out of ours.
        try:
            err = reply.json().get("error")
            kind = err.get("code") or err.get("type") if isinstance(err, dict) else None
            if isinstance(kind, str) and kind.replace("_", "").isalnum() and len(kind) <= 64:
                details["provider_code"] = kind
        except (ValueError, AttributeError):
            pass
        return self._error(
            code_for_http_status(reply.status_code),
            f"the model endpoint answered HTTP {reply.status_code}",
            details,
        )

    def _read(self, reply: httpx.Response, request: CompletionRequest) -> CompletionResponse:
        try:
            doc = reply.json()
            message = doc["choices"][0]["message"]
            text = message["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise self._error(
                ErrorCode.CONTRACT_VIOLATION, "the model endpoint's answer is not a chat completion"
            ) from None
        if not isinstance(text, str):
            raise self._error(ErrorCode.CONTRACT_VIOLATION, "the model's answer has no text")
        data: dict[str, Any] | None = None
        if request.output is not None:
            try:
                parsed = json.loads(_strip_fence(text))
                jsonschema.validate(parsed, request.output.json_schema)
            except ValueError:
                raise self._error(
                    ErrorCode.CONTRACT_VIOLATION, "the model did not answer with JSON"
                ) from None
            except jsonschema.ValidationError:
                raise self._error(
                    ErrorCode.CONTRACT_VIOLATION,
                    "the model's JSON does not match the requested schema",
                ) from None
            if not isinstance(parsed, dict):
                raise self._error(ErrorCode.CONTRACT_VIOLATION, "the model's JSON is not an object")
            data = parsed
        usage = doc.get("usage") if isinstance(doc, dict) else None
        return CompletionResponse(
            text=text,
            data=data,
            model=str(doc.get("model") or self.model),
            usage=TokenUsage(
                input_tokens=_int(usage, "prompt_tokens"),
                output_tokens=_int(usage, "completion_tokens"),
            ),
        )


def _strip_fence(text: str) -> str:
    """Some compatible servers wrap JSON in a Markdown fence even in JSON mode."""
    body = text.strip()
    if body.startswith("```") and body.endswith("```"):
        body = body[3:-3]
        if body.startswith("json"):
            body = body[4:]
    return body


def _int(container: object, key: str) -> int | None:
    if isinstance(container, dict):
        value = container.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None
