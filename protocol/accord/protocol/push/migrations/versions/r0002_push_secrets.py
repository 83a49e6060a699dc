"""The callers' push credentials, encrypted: a ``secrets`` column beside the config's blob.

A config written from now on keeps its token and authentication credentials sealed in
``secrets`` (push/secrets.py) and no longer in ``blob``. Rows written before (and, during a
rolling upgrade, by a replica of the previous release) have them in the blob and no
``secrets``; the store reads both, so they still deliver. Nullable and added, not rewritten:
a replica of the previous release keeps reading and writing the table meanwhile.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from accord.protocol.storage.migrate import option
from accord.protocol.storage.types import BYTES

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(option("table"), sa.Column("secrets", BYTES, nullable=True))


def downgrade() -> None:
    op.drop_column(option("table"), "secrets")
