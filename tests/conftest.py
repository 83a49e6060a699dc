"""Session fixtures shared by every test package."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support import postgres
from tests.support.service_keys import write_session_trust
from tests.support.slow_modules import SLOW_MODULES

# Hypothesis times each example (200 ms deadline, a "too slow" health check): on two cores
# shared by parallel test workers and service processes that measures the machine's load, not
# the code, and fails at random. The properties are what these tests check; time is not.
settings.register_profile("accord", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("accord")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``run_summary`` report on the whole run: after the (shuffled) rest. The
    slowest modules go first (in their shuffled order; the rest keep theirs): xdist hands out
    modules in this order (``--dist loadfile``), and a long module dealt last is a tail that
    one worker runs while the others are idle."""
    items.sort(
        key=lambda item: (
            item.get_closest_marker("run_summary") is not None,
            -SLOW_MODULES.get(item.nodeid.split("::", 1)[0], 0),
        )
    )


@pytest.fixture(scope="session", autouse=True)
def service_keys_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Every service a test starts, and the test process, share one keys directory and a trust
    table that also trusts the service ``tests`` (tests/support/service_keys.py): a test signs
    as a service with that service's own key, as services do (issue #30)."""
    env = write_session_trust(tmp_path_factory.mktemp("service-keys"))
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    yield env
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """A private PostgreSQL cluster for the whole session (CI installs the server)."""
    if not postgres.available():
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL must be installed on CI (.ci/run installs it)")
        pytest.skip("PostgreSQL not installed; run `make pg` or .ci/run")
    with postgres.private_cluster() as url:
        yield url


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    d = tmp_path / "logs"
    d.mkdir()
    return d


@pytest.fixture
def postgres_url(postgres_server_url: str) -> str:
    """An empty database of its own for one test."""
    return postgres.fresh_database(postgres_server_url)
