"""The last release's environment, built once per session (and kept between sessions, keyed by
its commit: tests/storage/releases.py)."""

from __future__ import annotations

import os

import pytest

from tests.storage import releases


@pytest.fixture(scope="session")
def last_release_env() -> releases.ReleaseEnv:
    """The newest release of contracts/releases/, installed beside the working tree. Its commit
    missing from the clone (a shallow clone) fails on CI, which must run what needs it, and
    skips elsewhere with the reason."""
    release = releases.last_release()
    try:
        return releases.build(release)
    except releases.ReleaseUnavailableError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{exc}: CI must be able to install the last release", pytrace=False)
        pytest.skip(str(exc))
