"""The tenant's app reaches orders and money (issue #30, finding 4).

Found against `accord up`: a token ``sub=C-01, app=shop`` read app ``accord``'s C-01 orders and
history on commerce, and got a refund of accord's order paid (approved by app shop's approver):
commerce and payments knew only ``customer_id``. The rule now (docs/security.md): orders,
customers and money are kept per (app, customer); the app is the verified one (the credential's,
or the app a service's verified delegation names), never an argument; another app's order is
NOT_FOUND exactly like no order; and a tool server acts only for the apps its configuration
allows (``ACCORD_TENANT_APPS``, the demo app by default): any other is PERMISSION_DENIED before
data is read.

Real processes: a mesh whose tool servers serve both apps, and a commerce/payments pair with the
default configuration.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest

from accord.contracts.envelope import Tenant
from accord.contracts.errors import ErrorCode
from accord.contracts.status import Status
from accord.contracts.tool_access import ToolDelegation
from accord.protocol.a2a.client import A2AClient
from accord.protocol.auth import ROLE_CUSTOMER, mint_token
from tests.mesh.support import SECRET, Mesh, running_mesh
from tests.security.tool_servers import ToolServers, call, code, tool_servers
from tests.support import tool_auth
from tests.support.service_keys import TEST_SERVICE, sign_as
from tests.tools.helpers import error_of, output_of

pytestmark = pytest.mark.timeout(300)

SHOP: Final = "shop"
BOTH_APPS: Final = {"ACCORD_TENANT_APPS": f"accord,{SHOP}"}


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    """The five services; commerce and payments serve app ``accord`` and app ``shop``."""
    with running_mesh(
        tmp_path_factory.mktemp("tenant-app"),
        service_env={"commerce": BOTH_APPS, "payments": BOTH_APPS},
    ) as started:
        yield started


@pytest.fixture(scope="module")
def default_tools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ToolServers]:
    """Commerce and payments as configured by default: the demo app only."""
    with tool_servers(tmp_path_factory.mktemp("tenant-default")) as servers:
        yield servers


def _customer(subject: str, app: str, secret: str = SECRET) -> str:
    return mint_token(subject, [ROLE_CUSTOMER], app=app, secret=secret)


def _service(secret: str, *grants: str) -> str:
    del secret  # a service token is signed by the service's own key (issue #30, finding 8)
    return sign_as(TEST_SERVICE, scopes=grants)


def _acting_for(app: str, customer: str = "C-01") -> dict[str, Any]:
    return ToolDelegation(tenant=Tenant(app=app, user=customer, session="tests")).to_meta()


def _ledger_rows(data_dir: Path, order_id: str) -> int:
    with sqlite3.connect(data_dir / "payments.db") as conn:
        found = conn.execute(
            "SELECT count(*) FROM payments_refunds WHERE order_id = ?", (order_id,)
        ).fetchone()
    return int(found[0])


async def test_another_apps_customer_reads_none_of_the_demo_apps_orders(mesh: Mesh) -> None:
    commerce = mesh.url("commerce") + "/mcp"
    shop = _customer("C-01", SHOP)
    for tool, args in (
        ("orders.lookup", {"order_id": "O-1005", "customer_id": "C-01"}),
        ("orders.customer_history", {"order_id": "O-1005", "customer_id": "C-01"}),
        ("customers.history", {"customer_id": "C-01"}),
    ):
        answer = await call(commerce, tool, args, token=shop)
        assert code(answer) is ErrorCode.NOT_FOUND, tool
        assert "Ceramic mug" not in str(answer.content), tool
    # The demo app's C-01 reads their own order as before.
    own = await call(
        commerce,
        "orders.lookup",
        {"order_id": "O-1005", "customer_id": "C-01"},
        token=_customer("C-01", "accord"),
    )
    assert output_of(own)["items"][0]["name"] == "Ceramic mug"


async def test_another_apps_refund_request_pays_nothing_of_the_demo_apps_order(
    mesh: Mesh,
) -> None:
    before = _ledger_rows(mesh.data_dir, "O-1001")
    async with await A2AClient.connect(mesh.orchestrator, token=_customer("C-01", SHOP)) as c:
        view = await c.send(
            text="I changed my mind, please refund order O-1001", skill="refund.request"
        )
    # No such order for app shop's C-01: answered as not found, nothing paid.
    assert view.status is Status.COMPLETED, view.error
    assert (view.data or {})["decision"] == "not_eligible"
    assert (view.data or {})["rule"] == "order_not_found"
    assert _ledger_rows(mesh.data_dir, "O-1001") == before


async def test_a_service_acting_for_another_apps_customer_gets_no_money(mesh: Mesh) -> None:
    payments = mesh.url("payments") + "/mcp"
    granted = _service(SECRET, "refunds.issue", "refunds.list", "refunds.get")
    shop = _acting_for(SHOP)
    issued = await call(
        payments,
        "refunds.issue",
        {
            "idempotency_key": "tenant:shop:1",
            "order_id": "O-1005",
            "customer_id": "C-01",
            "amount_cents": 100,
            "reason": "arrived broken",
        },
        token=granted,
        meta=shop,
    )
    assert code(issued) is ErrorCode.NOT_FOUND
    assert _ledger_rows(mesh.data_dir, "O-1005") == 0
    listed = await call(
        payments,
        "refunds.list",
        {"customer_id": "C-04"},
        token=granted,
        meta=_acting_for(SHOP, "C-04"),
    )
    # The demo app's C-04 has five refunds; app shop's C-04 has none.
    assert output_of(listed) == {"count": 0, "total_cents": 0, "refunds": []}
    seeded = await call(
        payments,
        "refunds.get",
        {"idempotency_key": "seed:R-SEED-2001", "customer_id": "C-04"},
        token=granted,
        meta=_acting_for(SHOP, "C-04"),
    )
    assert output_of(seeded) == {"found": False, "receipt": None}


async def test_tool_servers_act_only_for_the_apps_they_are_configured_for(
    default_tools: ToolServers,
) -> None:
    secret = tool_auth.SECRET
    # A customer of app shop, on commerce that serves the demo app only.
    answer = await call(
        default_tools.mcp("commerce"),
        "orders.lookup",
        {"order_id": "O-1005", "customer_id": "C-01"},
        token=_customer("C-01", SHOP, secret),
    )
    refused = error_of(answer)
    assert refused.code is ErrorCode.PERMISSION_DENIED
    assert refused.details == {"field": "credential.app"}
    assert SHOP not in refused.message
    # A service naming app shop in its delegation, on payments.
    before = default_tools.ledger_rows()
    issued = await call(
        default_tools.mcp("payments"),
        "refunds.issue",
        {
            "idempotency_key": "tenant:shop:2",
            "order_id": "O-1005",
            "customer_id": "C-01",
            "amount_cents": 100,
            "reason": "arrived broken",
        },
        token=_service(secret, "refunds.issue"),
        meta=_acting_for(SHOP),
    )
    refused = error_of(issued)
    assert refused.code is ErrorCode.PERMISSION_DENIED
    assert refused.details["field"].endswith(".tenant.app")
    assert default_tools.ledger_rows() == before
    # The demo app is served as before.
    own = await call(
        default_tools.mcp("commerce"),
        "orders.lookup",
        {"order_id": "O-1005", "customer_id": "C-01"},
        token=_customer("C-01", "accord", secret),
    )
    assert output_of(own)["order_id"] == "O-1005"
