"""The signature a receiver checks: body, notification id and time, keyed by the token."""

from __future__ import annotations

from accord.protocol.push.signing import sign, verify

TOKEN = "a-receivers-token-0123456789"
BODY = b'{"task":{"id":"t-1"}}'


def test_a_signature_verifies_with_the_same_token_body_and_id() -> None:
    header = sign(TOKEN, "n-1", BODY, now=1_000_000)
    assert verify(TOKEN, "n-1", BODY, header, now=1_000_010)


def test_anything_changed_fails() -> None:
    header = sign(TOKEN, "n-1", BODY, now=1_000_000)
    assert not verify("another-token-0123456789", "n-1", BODY, header, now=1_000_000)
    assert not verify(TOKEN, "n-2", BODY, header, now=1_000_000)
    assert not verify(TOKEN, "n-1", BODY + b" ", header, now=1_000_000)
    assert not verify(TOKEN, "n-1", BODY, header.replace("t=1000000", "t=1000001"), now=1_000_000)
    assert not verify(TOKEN, "n-1", BODY, "", now=1_000_000)
    assert not verify(TOKEN, "n-1", BODY, "t=x,v1=00", now=1_000_000)


def test_a_stale_signature_fails() -> None:
    header = sign(TOKEN, "n-1", BODY, now=1_000_000)
    assert not verify(TOKEN, "n-1", BODY, header, now=1_000_000 + 301)
    assert verify(TOKEN, "n-1", BODY, header, now=1_000_000 + 301, tolerance_s=600)
