"""Where a push notification may go: https, the allow-list, public addresses; development
mode's loopback exception, which production mode never grants."""

from __future__ import annotations

import pytest

from accord.protocol.push.policy import PushUrlPolicy, PushUrlRefusedError
from accord.protocol.settings import AccordSettings

PROD = PushUrlPolicy(allowed_hosts=("hooks.example.com", "*.example.org", "10.1.2.3", "localhost"))
DEV = PushUrlPolicy(allowed_hosts=PROD.allowed_hosts, development=True)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://hooks.example.com/x", "https"),  # not https, even when listed
        ("ftp://hooks.example.com/x", "https"),
        ("https://other.example.com/x", "not on ACCORD_PUSH_ALLOWED_HOSTS"),
        ("https://example.org/x", "not on ACCORD_PUSH_ALLOWED_HOSTS"),  # *.x is not x
        ("https://10.1.2.3/x", "private"),  # listed, but a private address
        ("https://localhost/x", "private or loopback"),  # a name resolving to loopback
        ("https://127.0.0.1:8443/x", "not on ACCORD_PUSH_ALLOWED_HOSTS"),
        ("http://127.0.0.1:8790/x", "https"),  # loopback needs development mode
        ("https://user:pw@hooks.example.com/x", "credentials"),
        ("https:///x", "no host"),
    ],
)
async def test_production_refuses(url: str, why: str) -> None:
    with pytest.raises(PushUrlRefusedError, match=why):
        await PROD.check(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8790/hook",
        "http://localhost:8790/",
        "https://[::1]:9/",
        "https://10.1.2.3/x",
    ],
)
async def test_development_admits_loopback_and_listed_private_hosts(url: str) -> None:
    assert await DEV.check(url)


async def test_development_still_needs_https_and_the_list_off_loopback() -> None:
    with pytest.raises(PushUrlRefusedError, match="https"):
        await DEV.check("http://10.1.2.3/x")
    with pytest.raises(PushUrlRefusedError, match="ALLOWED_HOSTS"):
        await DEV.check("https://10.9.9.9/x")


async def test_a_listed_public_host_passes_by_literal_address() -> None:
    policy = PushUrlPolicy(allowed_hosts=("93.184.215.14",))
    assert [str(a) for a in await policy.check("https://93.184.215.14/hook")] == ["93.184.215.14"]


def test_development_mode_is_never_granted_in_production() -> None:
    dev = AccordSettings(dev=True)
    assert PushUrlPolicy.from_settings(dev).development
    both = AccordSettings(dev=True, mode="production")
    assert not PushUrlPolicy.from_settings(both).development
    listed = AccordSettings(push_allowed_hosts="a.example.com, *.b.example.com")  # type: ignore[arg-type]
    assert PushUrlPolicy.from_settings(listed).allowed_hosts == ("a.example.com", "*.b.example.com")
