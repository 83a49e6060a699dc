"""Commerce as a real process, with the payments server it reads refunds from.

Commerce keeps no refunds (the payments ledger is the one record of money, issue 13): its
``orders.lookup`` and ``customers.history`` read ``refunds.list`` from payments, so a test that
runs commerce runs payments too and points commerce at it (never at a default port, where
another mesh may be listening).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from tests.support.processes import Service, run_service


@contextmanager
def run_commerce(
    env: Mapping[str, str],
    log_dir: Path,
    *,
    deadline_s: float = 90.0,
    commerce_env: Mapping[str, str] | None = None,
) -> Iterator[tuple[Service, Service]]:
    """(commerce, payments), both serving, commerce ready (its ledger connected)."""
    with (
        run_service(
            "payments", ["serve", "payments"], env=env, log_dir=log_dir, deadline_s=deadline_s
        ) as payments,
        run_service(
            "commerce",
            ["serve", "commerce"],
            env={**env, **(commerce_env or {}), "ACCORD_PAYMENTS_URL": payments.url},
            log_dir=log_dir,
            health_path="/readyz",
            deadline_s=deadline_s,
        ) as commerce,
    ):
        yield commerce, payments
