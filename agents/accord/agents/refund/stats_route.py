"""GET /stats: the orchestrator's model metrics (``accord stats`` prints them).

Behind the gate like every non-public route (a verified credential, ``A2A-Version: 1.0``), and
then for a principal with the ``approver`` or the ``service`` role only: the figures describe
every customer's runs, which no single customer may read. The body is the router's
``metrics.snapshot()`` (definitions in docs/models.md): success rate with budget-exhausted runs
in the denominator, nearest-rank P95 latency, units and calls, by route and status, each with
its sample count and window.
"""

from __future__ import annotations

from typing import Any, Final

from accord.agents.permissions import Operation, require
from accord.agents.refund.config import SERVICE_NAME
from accord.protocol.a2a.server.principal_routes import PrincipalHandler
from accord.protocol.auth import Principal
from accord.runtime.models import Metrics

STATS_PATH: Final = "/stats"


def stats_handler(metrics: Metrics) -> PrincipalHandler:
    async def stats(principal: Principal) -> dict[str, Any]:
        require(principal, Operation.READ_STATS)  # approvers and services (permissions.py)
        return {"service": SERVICE_NAME, "models": metrics.snapshot()}

    return stats
