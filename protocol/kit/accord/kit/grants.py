"""A target that refuses the kit's own credential (PERMISSION_DENIED) for a probe the kit sends
as itself: the credential lacks a grant, which is the run's problem, not a violation of the
target. The check is skipped with the grant it needs and how to mint a credential carrying it.

Checks that *expect* a refusal (AGENT-009, TOOL-011, TOOL-012) send with another credential or
another delegation, so this never hides the answer they judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from accord.contracts.tool_access import CallerRole
from accord.kit.model import Skipped
from accord.kit.options import Credential

KIT_SERVICE: Final = "kit"  # the development trust table's name for the kit (docs/service-keys.md)
SERVICE_SUBJECT_PREFIX: Final = "svc:"


def lacks_grant(credential: Credential, what: str, grants: Sequence[str]) -> Skipped:
    """The skip for ``what`` (a tool or skill) refused to the kit's credential; ``grants`` are
    those the target's contract admits a service with (empty when it names none)."""
    claims = credential.claims()
    subject = claims.get("sub")
    roles = [str(r) for r in claims.get("roles") or []]
    is_service = CallerRole.SERVICE.value in roles
    service = (
        subject.removeprefix(SERVICE_SUBJECT_PREFIX)
        if is_service and isinstance(subject, str)
        else KIT_SERVICE
    )
    if grants:
        need = "the grant " + " or ".join(grants)
        scopes = " ".join(f"--scope {g}" for g in grants[:1])
        mint = (
            f"mint one that carries it: `accord keys token {service} {scopes}` (on an Accord "
            f"mesh the verifier's trust table must grant {service} {grants[0]} too: "
            "docs/service-keys.md), or pass a credential the target admits"
        )
    else:
        need = "a grant or role the target requires (its contract names no access)"
        mint = "pass a credential the target admits for it"
    carried = ""
    if "scope" in claims:
        carried = f"; the token asks for scope [{claims.get('scope')}]"
    elif is_service:
        carried = f"; the token asks for no scope: it has what the verifier grants svc:{service}"
    return Skipped(
        f"{what}: the target refused the kit's credential (PERMISSION_DENIED){carried}. "
        f"The probe needs {need}: {mint}"
    )
