"""Which tenants a service acts for: the apps of ``ACCORD_TENANT_APPS`` (default: the demo app).

A tenant is (app, user). The app of a call is the verified one: an end user's credential's, or
the app a service's verified delegation names (only a service may name another tenant: the
acting-on-behalf rule, accord.protocol.on_behalf). A service configured for some apps answers
no other: one deployment of the tool servers cannot be made to read or pay for another app's
customers by a caller who simply names that app. Tool servers apply it to every call
(accord.protocol.mcp.access), before any data is read.
"""

from __future__ import annotations

from accord.contracts.errors import AccordError, ErrorCode
from accord.protocol.settings import current


def serves_app(app: str) -> bool:
    """True when this service is configured to act for tenants of ``app``."""
    return app in current().tenant_apps


def check_tenant_app(app: str, *, field: str) -> None:
    """PERMISSION_DENIED (details: the ``field`` the app came from) unless this service acts
    for ``app``. The answer never lists the apps it does serve."""
    if not serves_app(app):
        raise AccordError(
            ErrorCode.PERMISSION_DENIED,
            "this service does not act for the caller's app",
            {"field": field},
        )
