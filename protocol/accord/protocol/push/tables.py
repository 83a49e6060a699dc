"""The push notification tables of one agent: its configs and its outbox.

``a2a_push_<service>`` holds the push configs, keyed by ``(owner, task_id, id)``: a config
belongs to the principal (``app/subject``) that created it, like the task it watches.
``a2a_push_<service>_outbox`` holds every notification not yet delivered: written in the same
moment the state change is seen, deleted when the receiver answered 2xx (or gave up on), so a
restart resumes delivery where it stopped. A config remembers the last change recorded for it
(``last_change``), so a state change is one notification per config however often it is seen
(the SDK's event and the record's view of the same change, or the re-check at start);
``dedupe`` is the outbox's own guard against the same row twice. The caller's credentials are
kept encrypted in ``secrets`` (secrets.py), never in the blob.
Each service's tables have their own migration history (``migrations/``, schema option ``table``).
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Column, Index, Integer, MetaData, PrimaryKeyConstraint, Table, Text

from accord.protocol.storage.schema import Schema
from accord.protocol.storage.table_names import checked_table_name, service_table_name
from accord.protocol.storage.types import BYTES, EPOCH_SECONDS

MIGRATIONS = Path(__file__).with_name("migrations")


def push_table_name(service_name: str) -> str:
    return service_table_name("a2a_push_", service_name, room=len("_outbox"))  # its sibling


def push_tables(name: str) -> tuple[Table, Table]:
    """(configs, outbox) of one service."""
    checked_table_name(name, room=7)
    metadata = MetaData()
    configs = Table(
        name,
        metadata,
        Column("owner", Text, nullable=False),
        Column("task_id", Text, nullable=False),
        Column("id", Text, nullable=False),
        # The TaskPushNotificationConfig, serialized, without its caller's secrets (its token
        # and authentication credentials): those are sealed in ``secrets`` (secrets.py). A row
        # written before migration 0002 (or by a replica of that release) has them here, in
        # clear, and no ``secrets``: the store reads both.
        Column("blob", BYTES, nullable=False),
        Column("secrets", BYTES, nullable=True),
        Column("created_at", EPOCH_SECONDS, nullable=False),
        # The last state change recorded for this config (its dedupe key, and its TaskState):
        # a change seen again (another path, or the re-check at start) is not sent twice.
        Column("last_change", Text, nullable=True),
        Column("last_state", Integer, nullable=True),
        PrimaryKeyConstraint("owner", "task_id", "id", name=f"{name}_pkey"),
    )
    Index(f"{name}_task", configs.c.task_id)
    outbox = Table(
        f"{name}_outbox",
        metadata,
        Column("id", Text, nullable=False),
        Column("owner", Text, nullable=False),
        Column("task_id", Text, nullable=False),
        Column("config_id", Text, nullable=False),
        Column("dedupe", Text, nullable=False),
        Column("body", BYTES, nullable=False),  # the JSON StreamResponse, as it is sent
        Column("attempts", Integer, nullable=False),
        Column("due_at", EPOCH_SECONDS, nullable=False),
        Column("created_at", EPOCH_SECONDS, nullable=False),
        PrimaryKeyConstraint("id", name=f"{name}_outbox_pkey"),
    )
    Index(f"{name}_outbox_dedupe", outbox.c.dedupe, unique=True)
    Index(f"{name}_outbox_due", outbox.c.due_at)
    return configs, outbox


def push_schema(name: str) -> Schema:
    configs, _ = push_tables(name)
    return Schema(
        name=name,
        metadata=configs.metadata,
        migrations=MIGRATIONS,
        v0_1_table=name,  # v0.1 had no push tables: never found, so never stamped
        options={"table": name},
    )
