"""A push store for unit tests: a SQLite file under the test's directory, the development URL
policy (loopback receivers), and a fixed key for the callers' secrets (never the data
directory's: a unit test must not make a key where a developer's services keep theirs)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from accord.protocol.push.policy import PushUrlPolicy
from accord.protocol.push.secrets import PushSecrets
from accord.protocol.push.store import PushStore

DEV: Final = PushUrlPolicy(development=True)
KEY: Final = bytes(range(32))
TABLE: Final = "a2a_push_test"


def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'push.db'}"


def make_store(tmp_path: Path, *, key: bytes = KEY) -> PushStore:
    return PushStore(db_url(tmp_path), table=TABLE, policy=DEV, secrets=PushSecrets(key))
