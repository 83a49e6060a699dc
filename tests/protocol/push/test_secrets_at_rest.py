"""The callers' push credentials are secrets at rest (issue #32): sealed in the row, never in
a create/get/list answer nor in a log line; rows of the previous release (in clear) still
deliver; a store with another key sends nothing rather than send without them."""

from __future__ import annotations

import asyncio
import io
import logging
import sqlite3
from pathlib import Path
from typing import Final

import pytest
from a2a.types import Task, TaskPushNotificationConfig, TaskState, TaskStatus

from accord.protocol.push.delivery import PushNotifications
from accord.protocol.push.owners import owner_context
from accord.protocol.push.secrets import (
    Credentials,
    PushSecrets,
    PushSecretsError,
    decode_key,
    key_problem,
)
from accord.protocol.telemetry.redaction import RedactingFilter
from tests.protocol.push.store_support import KEY, TABLE, make_store
from tests.protocol.push.test_a2a_auth import capturing

TOKEN: Final = "caller-token-7f3a9c2e5b1d4086"
CREDENTIAL: Final = "receiver-credential-91b0c7d2e4f6"


def _config(url: str = "http://127.0.0.1:9/hook") -> TaskPushNotificationConfig:
    config = TaskPushNotificationConfig(id="cfg", url=url, token=TOKEN)
    config.authentication.scheme = "Bearer"
    config.authentication.credentials = CREDENTIAL
    return config


def _completed() -> Task:
    task = Task(id="t-1", context_id="c-1", status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED))
    task.status.timestamp.FromSeconds(1_700_000_000)
    return task


async def _no_reader(task_id: str, owner: str) -> Task | None:
    del task_id, owner
    return None


def _raw_rows(tmp_path: Path) -> list[tuple[bytes, bytes | None]]:
    with sqlite3.connect(tmp_path / "push.db") as conn:
        return [(bytes(b), s) for b, s in conn.execute(f"SELECT blob, secrets FROM {TABLE}")]


def _no_secret_in(data: bytes | str) -> None:
    text = data.decode("latin-1") if isinstance(data, bytes) else data
    assert TOKEN not in text
    assert CREDENTIAL not in text


async def test_the_row_holds_ciphertext_only(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    await store.set_info("t-1", _config(), owner_context("accord/C-01"))
    await store.close()
    [(blob, sealed)] = _raw_rows(tmp_path)
    _no_secret_in(blob)
    assert sealed is not None
    _no_secret_in(sealed)
    kept = TaskPushNotificationConfig.FromString(blob)
    assert kept.url == "http://127.0.0.1:9/hook"
    assert kept.authentication.scheme == "Bearer"  # the scheme is not a secret
    row = f"{TABLE}\x1faccord/C-01\x1ft-1\x1fcfg"
    assert PushSecrets(KEY).open(sealed, row) == Credentials(TOKEN, CREDENTIAL)


async def test_no_answer_carries_the_credentials(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    mine = owner_context("accord/C-01")
    created = await store.set_info("t-1", _config(), mine)
    listed = await store.get_info("t-1", mine)
    await store.close()
    for answer in (created, *listed):
        assert answer.id == "cfg"
        assert answer.token == ""
        assert answer.authentication.scheme == "Bearer"
        assert answer.authentication.credentials == ""
        _no_secret_in(answer.SerializeToString())


async def test_delivery_opens_them_and_no_log_line_holds_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    caplog.set_level(logging.DEBUG)  # the SDKs' DEBUG lines too (httpx prints headers)
    try:
        async with capturing() as (url, got):
            store = make_store(tmp_path)
            await store.set_info("t-1", _config(url), owner_context("accord/C-01"))
            push = PushNotifications(store, _no_reader)
            await push.send_notification("t-1", _completed())
            async with asyncio.timeout(20):
                await push.deliver_due()
            await store.close()
    finally:
        root.removeHandler(handler)
    [(headers, _)] = got
    assert headers["authorization"] == f"Bearer {CREDENTIAL}"
    assert headers["x-a2a-notification-token"] == TOKEN
    _no_secret_in(stream.getvalue())  # what the service's log handler writes
    for record in caplog.records:
        if record.name.startswith("accord"):  # and ours never even hand them to a logger
            _no_secret_in(record.getMessage())


async def test_a_row_of_the_previous_release_still_delivers(tmp_path: Path) -> None:
    """Written before migration 0002 (or by an older replica meanwhile): in clear, no
    ``secrets``. It is delivered with them, and still never answered with them."""
    async with capturing() as (url, got):
        store = make_store(tmp_path)
        mine = owner_context("accord/C-01")
        await store.set_info("t-1", TaskPushNotificationConfig(id="cfg", url=url), mine)
        with sqlite3.connect(tmp_path / "push.db") as conn:
            conn.execute(
                f"UPDATE {TABLE} SET blob = ?, secrets = NULL",
                (_config(url).SerializeToString(),),
            )
        [answer] = await store.get_info("t-1", mine)
        assert (answer.token, answer.authentication.credentials) == ("", "")
        push = PushNotifications(store, _no_reader)
        await push.send_notification("t-1", _completed())
        async with asyncio.timeout(20):
            await push.deliver_due()
        await store.close()
    [(headers, _)] = got
    assert headers["authorization"] == f"Bearer {CREDENTIAL}"
    assert headers["x-a2a-notification-token"] == TOKEN


async def test_another_key_sends_nothing_and_keeps_the_notification(tmp_path: Path) -> None:
    async with capturing() as (url, got):
        store = make_store(tmp_path)
        await store.set_info("t-1", _config(url), owner_context("accord/C-01"))
        await store.close()
        other = make_store(tmp_path, key=bytes(32))
        push = PushNotifications(other, _no_reader)
        await push.send_notification("t-1", _completed())
        await push.deliver_due()
        assert await other.next_due() is not None  # kept for when the key is put right
        await other.close()
    assert got == []


def test_a_sealed_value_opens_only_on_its_own_row() -> None:
    secrets = PushSecrets(KEY)
    sealed = secrets.seal(Credentials(TOKEN, CREDENTIAL), "t\x1fa/x\x1ft-1\x1fcfg")
    with pytest.raises(PushSecretsError):
        secrets.open(sealed, "t\x1fa/y\x1ft-1\x1fcfg")


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", True),  # standard base64
        ("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", True),  # URL-safe, unpadded
        ("too-short", False),
        ("REPLACE_ME_WITH_openssl_rand_base64_32", False),
    ],
)
def test_the_key_setting_is_32_bytes_of_base64(value: str, ok: bool) -> None:
    assert (key_problem(value) is None) is ok
    if ok:
        assert decode_key(value) == KEY
