"""A2A push notifications for Accord agents (docs/push-notifications.md).

policy.py    where a notification may go (https, allow-list, public addresses)
signing.py   Accord's HMAC signature (a config with a long token), and its check for receivers
secrets.py   the callers' credentials (token, authentication) encrypted at rest
tables.py    the configs and the outbox (one migration history per service)
store.py     a2a-sdk's PushNotificationConfigStore, owner-scoped, plus the outbox
delivery.py  from a state change to a POST (Authorization, signature): durable, retried
owners.py    the task's owner as delivery reads it (no caller in a background send)

The package imports none of them: production.py reads secrets.py before a service has
quieted a2a-sdk's tracing wrappers (telemetry/sdk_wrappers.py), and delivery.py imports the
SDK, so each is imported by its own name.
"""
