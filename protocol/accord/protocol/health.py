"""Who answered a health check: ``GET /healthz`` says ``{"status": "ok", "service": NAME}``.

A 200 alone proves only that *something* listens on the port: when two services were given the
same port, the one that bound it answered the other's health check. Whoever waits for a service
checks the name too.
"""

from __future__ import annotations

import httpx


def served_name(answer: httpx.Response) -> str | None:
    """The service a 200 health answer names (None: not a 200, or not an Accord service)."""
    if answer.status_code != 200:
        return None
    try:
        body = answer.json()
    except ValueError:
        return None
    name = body.get("service") if isinstance(body, dict) else None
    return name if isinstance(name, str) else None
