"""pytest plugin ``accord_contract``: the kit's checks as test cases in a team's own suite.

Registered as a ``pytest11`` entry point, so it loads in every pytest run of an environment that
has accord-kit installed. It is inert until used: it adds ``--accord-*`` options and two
fixtures, and imports the kit (and the A2A and MCP SDKs) only when a test asks for them.

One test case per check and target (``--accord-target URL``, repeatable)::

    from accord.kit.pytest_plugin import assert_contract

    def test_contract(accord_check):          # parametrized: one case per (target, check)
        assert_contract(accord_check)         # fails with the violation, skips with the reason

Or drive the kit yourself, e.g. against a service your own fixture started::

    def test_my_agent(my_agent_url, accord_contract_kit):
        report = accord_contract_kit.run(my_agent_url)
        assert report.ok, "\\n\\n".join(r.failure_message() for r in report.failures)
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from accord.kit.model import CheckResult, Report
    from accord.kit.options import KitOptions

CHECK_FIXTURE = "accord_check"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("accord", "Accord contract test kit")
    group.addoption(
        "--accord-target",
        action="append",
        default=[],
        metavar="URL",
        help="A2A agent or MCP server to check (repeatable)",
    )
    group.addoption("--accord-token", default=None, help="bearer token for the kit")
    group.addoption("--accord-api-key", default=None, help="API key for the kit")
    group.addoption(
        "--accord-other-token", default=None, help="a second tenant's token (cross-tenant check)"
    )
    group.addoption(
        "--accord-skip",
        action="append",
        default=[],
        metavar="REQ-ID",
        help="requirement ID not claimed by the implementation (repeatable)",
    )
    group.addoption("--accord-probe", default=None, metavar="FILE", help="probe JSON file")
    group.addoption("--accord-timeout", type=float, default=10.0, help="seconds per call")


class ContractKit:
    """The kit configured from the command line; results are computed once per target."""

    def __init__(self, options: KitOptions, targets: list[str]) -> None:
        self.options = options
        self.targets = targets
        self._reports: dict[str, Report] = {}

    async def run_async(self, url: str) -> Report:
        from accord.kit.run_checks import run_kit

        if url not in self._reports:
            self._reports[url] = await run_kit([url], self.options)
        return self._reports[url]

    def run(self, url: str) -> Report:
        """Every check against ``url`` (sync tests; use ``run_async`` inside an event loop)."""
        if url not in self._reports:
            self._reports[url] = asyncio.run(self.run_async(url))
        return self._reports[url]

    def result(self, url: str, check_id: str) -> CheckResult:
        for r in self.run(url).results:
            if r.name == check_id:
                return r
        raise KeyError(f"{url}: no result for {check_id!r}")


def _options(config: pytest.Config) -> KitOptions:
    from accord.kit.options import Credential, KitOptions
    from accord.kit.probes import load_probes

    get = config.getoption
    return KitOptions(
        credential=Credential(token=get("accord_token"), api_key=get("accord_api_key")),
        other=Credential(token=get("accord_other_token")),
        skip=frozenset(get("accord_skip") or ()),
        timeout_s=float(get("accord_timeout")),
        probes=load_probes(get("accord_probe")),
    )


@pytest.fixture(scope="session")
def accord_contract_kit(pytestconfig: pytest.Config) -> ContractKit:
    """The kit, configured from the ``--accord-*`` options."""
    return ContractKit(_options(pytestconfig), list(pytestconfig.getoption("accord_target")))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if CHECK_FIXTURE not in metafunc.fixturenames:
        return
    targets: list[str] = list(metafunc.config.getoption("accord_target") or [])
    if not targets:
        metafunc.parametrize(
            CHECK_FIXTURE,
            [pytest.param(None, marks=pytest.mark.skip(reason="no --accord-target given"))],
            indirect=True,
        )
        return
    from accord.kit.run_checks import checks_for, detect

    options = _options(metafunc.config)
    params: list[Any] = []
    for url in targets:
        kind = asyncio.run(detect(url, options))
        if kind is None:
            params.append(pytest.param((url, None), id=f"{url}::reachable"))
            continue
        params += [pytest.param((url, c.id), id=f"{url}::{c.id}") for c in checks_for(kind)]
    metafunc.parametrize(CHECK_FIXTURE, params, indirect=True)


@pytest.fixture
def accord_check(request: pytest.FixtureRequest, accord_contract_kit: ContractKit) -> CheckResult:
    """The result of one check against one target (parametrized by the plugin)."""
    param = getattr(request, "param", None)
    if param is None:
        pytest.skip("no --accord-target given")
    url, check_id = param
    if check_id is None:
        return accord_contract_kit.run(url).results[0]  # the "unreachable" finding
    return accord_contract_kit.result(url, check_id)


def assert_contract(result: CheckResult) -> None:
    """Fail with the violation, skip with the reason, pass otherwise."""
    from accord.kit.model import Verdict

    if result.outcome is Verdict.FAIL:
        pytest.fail(result.failure_message(), pytrace=False)
    if result.outcome is Verdict.SKIP:
        pytest.skip(result.detail)
