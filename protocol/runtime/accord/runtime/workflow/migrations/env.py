"""Alembic environment of this migration history (run by accord.protocol.storage.migrate)."""

from accord.protocol.storage.migrate import run_environment

run_environment()
