"""The names on the wire are part of the contract: pinned here, spelled once in production."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from accord.contracts import keys
from accord.contracts.export import keys_document

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (
    "contracts",
    "contracts/refund",
    "protocol",
    "protocol/kit",
    "protocol/runtime",
    "protocol/cli",
    "tools",
    "agents",
)

# Changing one of these breaks every peer in every language: it is a contract version bump.
WIRE_VALUES = {
    "CONTRACT_EXTENSION_URI": "https://accord.dev/a2a/ext/contract/v1",
    "DELEGATION_EXTENSION_URI": "https://accord.dev/a2a/ext/delegation/v1",
    "IDEMPOTENT_SEND_EXTENSION_URI": "https://accord.dev/a2a/ext/idempotent-send/v1",
    "STATUS_META_KEY": "dev.accord/status",
    "ERROR_INFO_CODE_KEY": "accordCode",
    "WAITING_REASON_KEY": "waitingReason",
    "WAITING_REASON_KEY_DEPRECATED": "waiting_reason",  # read, no longer written, until 0.4.0
    "ERROR_DATA_KIND": "dev.accord/error",
    "RESULT_ARTIFACT_NAME": "result",
    "RECEIPT_ARTIFACT_NAME": "receipt",
    "SKILL_META_KEY": "skill",
    "STATE_META_KEY": "dev.accord/state",
    "ENVELOPE_META_KEY": "dev.accord/envelope",
    "SPENT_META_KEY": "dev.accord/spent",
    "TOOL_CALLS_SPENT_META_KEY": "dev.accord/toolCallsSpent",
    "REMAINING_META_KEY": "dev.accord/remaining",
    "SKILL_TASK_META_KEY": "dev.accord/skill",
    "CONTRACT_VERSION_META_KEY": "dev.accord/contractVersion",
    "MCP_ERROR_META_KEY": "dev.accord/error",
    "TOOL_DELEGATION_META_KEY": "dev.accord/delegation",
    "CONTRACT_VERSIONS_META_KEY": "dev.accord/contractVersions",
    "CARD_CONTRACT_VERSION_PARAM": "agentContractVersion",
    "CARD_CONTRACT_VERSIONS_PARAM": "agentContractVersions",
    "CARD_WIRE_VERSION_PARAM": "contractVersion",
    "CARD_WAITING_REASONS_PARAM": "waitingReasons",
    "CARD_ERRORS_PARAM": "errors",
    "CARD_METADATA_KEY_PARAM": "metadataKey",
    "CARD_SKILL_SCHEMAS_PARAM": "skillSchemas",
    "SKILL_SCHEMAS_PATH": "/accord/skill-schemas.json",
    "SENT_DETAIL_KEY": "sent",
    "PROTECTED_RESOURCE_PATH": "/.well-known/oauth-protected-resource",
    "TRACEPARENT_KEY": "traceparent",
    "API_KEY_HEADER": "X-API-Key",
    "PUSH_TOKEN_HEADER": "X-A2A-Notification-Token",
    "PUSH_SIGNATURE_HEADER": "X-Accord-Signature",
    "PUSH_ID_HEADER": "X-Accord-Notification-Id",
    "HEALTH_PATH": "/healthz",
    "READY_PATH": "/readyz",
    "SERVICE_JWKS_PATH": "/.well-known/jwks.json",
}


def test_wire_values_are_unchanged_and_all_exported() -> None:
    assert keys_document() == WIRE_VALUES


def _production_sources() -> list[Path]:
    return [
        path
        for package in PACKAGES
        for path in (ROOT / package / "accord").rglob("*.py")
        if path != Path(keys.__file__)
    ]


@pytest.mark.parametrize(
    "value",
    sorted({v for v in WIRE_VALUES.values() if v.startswith(("dev.accord/", "X-", "/"))}),
)
def test_no_production_module_spells_an_accord_key(value: str) -> None:
    """Accord's own names (namespaced or header) are imported, never retyped. Comments and
    docstrings may name them; a string literal in code may not."""
    literal = re.compile(r"""(?<![\w/])["']""" + re.escape(value) + r"""["']""", re.IGNORECASE)
    found = []
    for path in _production_sources():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if literal.search(line) and not line.lstrip().startswith("#"):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "spell it via accord.contracts.keys:\n" + "\n".join(found)


# MCP 2026-07-28 `_meta` key names: an optional prefix of dot-separated labels (a letter first,
# a letter or digit last) ending in "/", then a name; a prefix whose second label is
# `modelcontextprotocol` or `mcp` is MCP's own.
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_MCP_META_KEY = re.compile(rf"(?:{_LABEL}(?:\.{_LABEL})*/)?(?:[A-Za-z0-9](?:[\w.-]*[A-Za-z0-9])?)?")


@pytest.mark.parametrize("name", ["MCP_ERROR_META_KEY", "TOOL_DELEGATION_META_KEY"])
def test_accords_mcp_meta_keys_follow_the_mcp_grammar_outside_its_reserved_prefixes(
    name: str,
) -> None:
    key: str = getattr(keys, name)
    assert _MCP_META_KEY.fullmatch(key), key
    prefix = key.partition("/")[0].split(".")
    assert len(prefix) < 2 or prefix[1] not in ("modelcontextprotocol", "mcp"), key
