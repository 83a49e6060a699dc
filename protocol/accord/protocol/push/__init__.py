"""A2A push notifications for Accord agents (docs/push-notifications.md).

policy.py    where a notification may go (https, allow-list, public addresses)
signing.py   Accord's HMAC signature (a config with a long token), and its check for receivers
secrets.py   the callers' credentials (token, authentication) encrypted at rest
tables.py    the configs and the outbox (one migration history per service)
store.py     a2a-sdk's PushNotificationConfigStore, owner-scoped, plus the outbox
delivery.py  from a state change to a POST (Authorization, signature): durable, retried
owners.py    the task's owner as delivery reads it (no caller in a background send)
"""

from __future__ import annotations

from accord.protocol.push.delivery import PushNotifications, TaskReader
from accord.protocol.push.owners import owner_context, reader_of
from accord.protocol.push.policy import PushUrlPolicy, PushUrlRefusedError
from accord.protocol.push.signing import sign, verify
from accord.protocol.push.store import PushStore
from accord.protocol.push.tables import push_schema, push_table_name, push_tables

__all__ = [
    "PushNotifications",
    "PushStore",
    "PushUrlPolicy",
    "PushUrlRefusedError",
    "TaskReader",
    "owner_context",
    "push_schema",
    "push_table_name",
    "push_tables",
    "reader_of",
    "sign",
    "verify",
]
