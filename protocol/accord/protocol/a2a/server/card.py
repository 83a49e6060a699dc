"""The Agent Card, generated from an AgentContract: one source of truth for what an agent does.

The card declares three A2A extensions: the contract extension (statuses, error registry, status
metadata, and where each skill's input and output JSON Schema is served: card_schemas.py), the
delegation extension (the envelope in message metadata; required for service callers) and the
idempotent-send extension (a send is keyed by the caller and its messageId: send_claim.py).
Security: bearer JWT or an API key, either one suffices.
"""

from __future__ import annotations

from typing import Final

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_1_0, TransportProtocol

from accord.contracts.agents import AgentContract
from accord.contracts.card_params import card_params
from accord.contracts.keys import (
    API_KEY_HEADER,
    CARD_CONTRACT_VERSION_PARAM,
    CARD_CONTRACT_VERSIONS_PARAM,
    CARD_ERRORS_PARAM,
    CARD_METADATA_KEY_PARAM,
    CARD_SKILL_SCHEMAS_PARAM,
    CARD_WAITING_REASONS_PARAM,
    CARD_WIRE_VERSION_PARAM,
    CONTRACT_EXTENSION_URI,
    CONTRACT_VERSION,
    DELEGATION_EXTENSION_URI,
    IDEMPOTENT_SEND_EXTENSION_URI,
    SKILL_SCHEMAS_PATH,
    STATUS_META_KEY,
)
from accord.protocol.a2a.server.card_schemas import encode_schema_document

BEARER_SCHEME: Final = "bearer"
API_KEY_SCHEME: Final = "apiKey"


def build_agent_card(
    contract: AgentContract, url: str, *, push_notifications: bool = True
) -> AgentCard:
    """The public card of ``contract`` served at base ``url`` (JSON-RPC and HTTP+JSON)."""
    base = url.rstrip("/")
    schemas = encode_schema_document(contract)
    card = AgentCard(
        name=contract.name,
        description=contract.description,
        version=contract.version,
        provider=AgentProvider(organization="Accord", url="https://accord.dev"),
        supported_interfaces=[
            AgentInterface(
                url=base,
                protocol_binding=TransportProtocol.JSONRPC.value,
                protocol_version=PROTOCOL_VERSION_1_0,
            ),
            AgentInterface(
                url=base,
                protocol_binding=TransportProtocol.HTTP_JSON.value,
                protocol_version=PROTOCOL_VERSION_1_0,
            ),
        ],
        capabilities=AgentCapabilities(
            streaming=contract.streaming,
            push_notifications=push_notifications,  # docs/push-notifications.md
            extensions=[
                AgentExtension(
                    uri=CONTRACT_EXTENSION_URI,
                    description="Accord contract: statuses, error registry, the status "
                    f"metadata under {STATUS_META_KEY!r}, and each skill's input and output "
                    f"JSON Schema at {CARD_SKILL_SCHEMAS_PARAM}.url.",
                    required=False,
                    params=card_params(
                        {
                            CARD_WIRE_VERSION_PARAM: CONTRACT_VERSION,
                            # compat.CARD_ONE_CONTRACT_VERSION
                            CARD_CONTRACT_VERSION_PARAM: contract.version,
                            CARD_CONTRACT_VERSIONS_PARAM: contract.served_versions,
                            CARD_WAITING_REASONS_PARAM: [r.value for r in contract.waiting_reasons],
                            CARD_ERRORS_PARAM: [e.value for e in contract.errors],
                            CARD_SKILL_SCHEMAS_PARAM: {
                                "url": base + SKILL_SCHEMAS_PATH,
                                "sha256": schemas.sha256,
                            },
                        }
                    ),
                ),
                AgentExtension(
                    uri=DELEGATION_EXTENSION_URI,
                    description="Delegation envelope (goal, budget, deadline, tenant) in "
                    "message metadata under this URI; required for service callers.",
                    required=False,
                    params=card_params(
                        {
                            CARD_WIRE_VERSION_PARAM: CONTRACT_VERSION,
                            CARD_METADATA_KEY_PARAM: DELEGATION_EXTENSION_URI,
                        }
                    ),
                ),
                AgentExtension(
                    uri=IDEMPOTENT_SEND_EXTENSION_URI,
                    description="A send is keyed by (principal, messageId): the same message "
                    "again (same parts, skill and task) returns the task or reply the first "
                    "made, in its current state; another message under the same messageId is "
                    "IDEMPOTENCY_CONFLICT. Resend with the same messageId when unsure whether "
                    "a send arrived.",
                    required=False,
                    params=card_params({CARD_WIRE_VERSION_PARAM: CONTRACT_VERSION}),
                ),
            ],
        ),
        security_schemes={
            BEARER_SCHEME: SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="Bearer",
                    bearer_format="JWT",
                    description="JWT with sub, roles, app, jti and exp claims",
                )
            ),
            API_KEY_SCHEME: SecurityScheme(
                api_key_security_scheme=APIKeySecurityScheme(
                    location="header",
                    name=API_KEY_HEADER,
                    description="Static API key issued by the operator",
                )
            ),
        },
        # Either scheme alone satisfies the card: two requirements, one scheme each.
        security_requirements=[
            SecurityRequirement(schemes={BEARER_SCHEME: StringList(list=[])}),
            SecurityRequirement(schemes={API_KEY_SCHEME: StringList(list=[])}),
        ],
        default_input_modes=list(contract.input_modes),
        default_output_modes=list(contract.output_modes),
        skills=[
            AgentSkill(
                id=skill.id,
                name=skill.name,
                description=skill.description,
                tags=list(skill.tags),
                examples=list(skill.examples),
                input_modes=list(contract.input_modes),
                output_modes=list(contract.output_modes),
            )
            for skill in contract.skills
        ],
    )
    return card
