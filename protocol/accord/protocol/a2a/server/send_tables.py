"""The sent-message keys of one agent: ``a2a_sends_<service>``, one row per request.

``(owner, message_id)`` is the key of a request (the verified principal's ``app/subject`` and
the A2A ``messageId``): the primary key is what makes a resend, on any replica, find the
request it repeats instead of starting a second task. A row records the canonical form of what
was asked (``fingerprint``), the task it made or continued (``task_id``), the agent's Message
when it answered with one (``reply``), and while a process works on it, that process
(``worker``) and how long its claim lasts (``lease_until``, by the database's clock, renewed
while the process lives): a row whose claim lapsed and whose task does not exist is taken over
by the next resend. The history is in ``migrations/sends`` (schema option ``table``).
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Column, Index, MetaData, PrimaryKeyConstraint, Table, Text

from accord.protocol.storage.schema import Schema
from accord.protocol.storage.table_names import checked_table_name, service_table_name
from accord.protocol.storage.types import BYTES, EPOCH_SECONDS

MIGRATIONS = Path(__file__).parent.parent / "migrations" / "sends"


def send_table_name(service_name: str) -> str:
    """One table per service, like the task tables (services may share a database)."""
    return service_table_name("a2a_sends_", service_name)


def send_table(name: str) -> Table:
    checked_table_name(name)
    table = Table(
        name,
        MetaData(),
        Column("owner", Text, nullable=False),
        Column("message_id", Text, nullable=False),
        Column("fingerprint", Text, nullable=False),
        Column("task_id", Text, nullable=False),
        Column("reply", BYTES, nullable=True),  # the agent's Message, serialized
        Column("worker", Text, nullable=True),  # the process whose claim it is; NULL: settled
        Column("lease_until", EPOCH_SECONDS, nullable=False),
        Column("created_at", EPOCH_SECONDS, nullable=False),
        PrimaryKeyConstraint("owner", "message_id", name=f"{name}_pkey"),
    )
    Index(f"{name}_created", table.c.created_at)
    return table


def send_schema(table: Table) -> Schema:
    return Schema(
        name=table.name,
        metadata=table.metadata,
        migrations=MIGRATIONS,
        v0_1_table=table.name,  # v0.1 had no such table: never found, so never stamped
        options={"table": table.name},
    )
