"""A rolling upgrade of the orchestrator on one PostgreSQL database: a replica of the last
release (tests/storage/releases.py) and a replica of the working tree, side by side.

The four other services run from the working tree (tests/mesh/support.py ``running_mesh``
without its orchestrator). The old replica starts first, on a fresh database: the
orchestrator's schemas are created at the release's revisions. The new replica is the mesh's
own ``orchestrator``, started later (``start_new``): it migrates them forward while the old
one serves. ``Rolling`` is a ``Replicas`` (tests/mesh/replica_support.py) whose replica A is the
new one and B the old one, so the replica tests' readers of the shared database apply.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

import asyncpg
from alembic.script import ScriptDirectory

from accord.protocol.push.tables import push_schema, push_table_name
from accord.protocol.storage.schema import Schema
from tests.mesh.replica_support import REPLICA_ENV, Replicas, start_replica
from tests.mesh.support import SERVICES, Mesh, running_mesh
from tests.storage import schemas
from tests.storage.releases import REPO, ReleaseEnv
from tests.support.processes import Service
from tests.support.service_keys import trust_document, write_trust

PEERS: Final = tuple(name for name in SERVICES if name != "orchestrator")
AGENTS: Final = ("orchestrator", "policy", "risk")
# Every schema the services keep now (the retired v0.1 task table aside), push included.
KEPT: Final[tuple[Schema, ...]] = (
    *schemas.LIVE,
    *(push_schema(push_table_name(agent)) for agent in AGENTS),
)
# A migration history that moved: its folder now -> where releases before the move kept it
# (the workflow runtime left accord-agents for accord-runtime in 0.3, issue #31).
MOVED: Final[dict[str, str]] = {
    "protocol/runtime/accord/runtime/workflow/migrations": (
        "agents/accord/agents/workflow/migrations"
    ),
}


@dataclass
class Rolling(Replicas):
    release: ReleaseEnv

    @property
    def old(self) -> Mesh:
        """The mesh as a client sees it when its requests land on the old release's replica."""
        return self.via("b")

    @property
    def new(self) -> Mesh:
        return self.via("a")

    @property
    def old_service(self) -> Service:
        return self.b

    def start_new(self) -> Service:
        """The working tree's replica (it upgrades the schemas as it starts)."""
        return self.mesh.start("orchestrator", self.a_env)

    async def revisions(self) -> dict[str, str]:
        """version table -> the revision the shared database is at."""
        conn = await asyncpg.connect(self.database_url)
        try:
            tables = await conn.fetch(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' AND table_name LIKE 'alembic_version_%'"
            )
            found = {}
            for row in tables:
                name = str(row["table_name"])
                version = await conn.fetchval(f'SELECT version_num FROM "{name}"')
                found[name] = str(version)
            return found
        finally:
            await conn.close()

    async def refunds(self) -> dict[str, tuple[str, int]]:
        """The workflows' refunds in the payments ledger: idempotency key (``refund:<order>:
        <task>``) -> (order, cents). The seeded history (``R-SEED-*``) is left out."""
        conn = await asyncpg.connect(self.database_url)
        try:
            rows = await conn.fetch(
                "SELECT idempotency_key, order_id, amount_cents FROM payments_refunds "
                "WHERE idempotency_key LIKE 'refund:%'"
            )
        finally:
            await conn.close()
        return {
            str(r["idempotency_key"]): (str(r["order_id"]), int(r["amount_cents"])) for r in rows
        }

    async def refund_count(self, key: str) -> int:
        """Rows of the ledger with ``key`` (its unique key makes this 0 or 1; counted all the
        same, so that a second row under another spelling would not hide)."""
        conn = await asyncpg.connect(self.database_url)
        try:
            return int(
                await conn.fetchval(
                    "SELECT count(*) FROM payments_refunds WHERE idempotency_key = $1", key
                )
            )
        finally:
            await conn.close()


def release_heads(release: ReleaseEnv) -> dict[str, str]:
    """version table -> the head revision of that schema in the release's own tree (schemas it
    did not have yet are left out)."""
    heads = {}
    for schema in KEPT:
        here = str(schema.migrations.relative_to(REPO))
        folder = release.root / here
        if not folder.is_dir() and here in MOVED:
            folder = release.root / MOVED[here]
        if folder.is_dir():
            found = ScriptDirectory(str(folder)).get_heads()
            assert len(found) == 1, (schema.name, found)
            heads[schema.version_table] = found[0]
    return heads


def upgrade_trust(path: Path, window: timedelta = timedelta(hours=1)) -> Path:
    """The session's trust table with the orchestrator's upgrade window open for ``window``."""
    shipped = trust_document()["services"]["orchestrator"]  # type: ignore[index]
    until = (datetime.now(UTC) + window).isoformat()
    return write_trust(path, {"orchestrator": {**shipped, "shared_secret_until": until}})


@contextmanager
def rolling_mesh(
    base: Path, database_url: str, release: ReleaseEnv, old_env: dict[str, str] | None = None
) -> Iterator[Rolling]:
    """The four peer services from the working tree and the release's orchestrator replica, on
    ``database_url``; the working tree's replica is not started (``Rolling.start_new``). All
    five start at once (the orchestrator waits for no peer to be ready)."""
    with running_mesh(base, database_url=database_url, services=()) as mesh:
        # The release signs service tokens with the shared secret: the working tree's services
        # accept the orchestrator's for the upgrade (docs/service-keys.md, "Upgrading from 0.2").
        mesh.env["ACCORD_SERVICE_TRUST"] = str(upgrade_trust(base / "trust.yaml"))
        with ThreadPoolExecutor(2) as pool:
            peers = pool.submit(mesh.start_all, {}, PEERS)
            starting = pool.submit(
                start_replica,
                mesh,
                base / "replica-old",
                f"orchestrator-{release.release.tag}",
                {**release.env(), **(old_env or {})},
                python=str(release.python),
                cwd=release.root,
            )
            peers.result()
            old = starting.result()
        yield Rolling(
            mesh=mesh, database_url=database_url, b=old, a_env=dict(REPLICA_ENV), release=release
        )
