"""Commerce's view of refunds against the payments ledger, read from a running mesh.

The ledger's rows are read from its own database (SQLite meshes); commerce's view through its
tools, called as each customer (a customer token signed with the mesh's secret).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from mcp import Client

from accord.protocol.auth import ROLE_CUSTOMER, mint_token
from accord.tools import seed
from tests.mesh.mesh_support import Mesh, endpoint
from tests.mesh.support import SECRET
from tests.support.tool_auth import transport
from tests.tools.helpers import output_of


def ledger_sums(mesh: Mesh) -> dict[str, tuple[int, int]]:
    """order id -> (refunds, cents refunded) in the payments ledger, every key."""
    with sqlite3.connect(mesh.data_dir / "payments.db") as conn:
        rows = conn.execute(
            "SELECT order_id, count(*), sum(amount_cents) FROM payments_refunds GROUP BY order_id"
        ).fetchall()
    return {str(order): (int(n), int(total)) for order, n, total in rows}


async def commerce_view(mesh: Mesh, customer_id: str, order_id: str) -> dict[str, Any]:
    return await call_commerce(
        mesh, customer_id, "orders.lookup", {"order_id": order_id, "customer_id": customer_id}
    )


async def history(mesh: Mesh, customer_id: str) -> dict[str, Any]:
    return await call_commerce(mesh, customer_id, "customers.history", {"customer_id": customer_id})


async def call_commerce(
    mesh: Mesh, customer_id: str, tool: str, args: dict[str, Any]
) -> dict[str, Any]:
    token = mint_token(customer_id, [ROLE_CUSTOMER], secret=SECRET)
    async with Client(transport(endpoint(mesh, "commerce"), token)) as client:
        return output_of(await client.call_tool(tool, args))


async def assert_views_agree(mesh: Mesh) -> None:
    """Every seeded order: commerce's refunded, refundable and history equal the ledger's."""
    ledger = ledger_sums(mesh)
    for order in seed.ORDERS:
        view = await commerce_view(mesh, order.customer_id, order.order_id)
        count, cents = ledger.get(order.order_id, (0, 0))
        assert view["refunded_cents"] == cents, order.order_id
        assert view["refundable_cents"] == order.total_cents - cents, order.order_id
        assert len(view["refunds"]) == count, order.order_id
        assert sum(r["amount_cents"] for r in view["refunds"]) == cents, order.order_id
