"""How a service makes itself startable by `accord serve NAME` and `accord up`.

Each distribution registers a :class:`ServiceSpec` under the ``accord.services`` entry-point
group, so the CLI (in accord.agents) starts tool servers without importing accord.tools.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from accord.contracts.errors import AccordError
from accord.protocol.auth import configured_secret, dev_secret_path
from accord.protocol.auth.api_keys import ApiKeys
from accord.protocol.auth.trust import load_trust
from accord.protocol.production import Starting, development_notice, refusals
from accord.protocol.service_keys import ensure_ring
from accord.protocol.settings import (
    ServeOptions,
    SettingsError,
    app_settings,
    current,
    installed_app_settings,
)
from accord.protocol.storage.schema import StoreRef
from accord.protocol.telemetry.redaction import register_secret
from accord.protocol.telemetry.sdk_wrappers import quiet_a2a_sdk_wrappers

logger = logging.getLogger(__name__)

AsgiApp = Callable[..., Any]
SERVICES_GROUP = "accord.services"  # entry points: NAME = module:ServiceSpec (NAME is its name)


@dataclass(frozen=True)
class ServiceSpec:
    name: str
    protocol: str  # "a2a" or "mcp"
    description: str
    build_app: Callable[[ServeOptions], AsgiApp]
    run_stdio: Callable[[ServeOptions], None] | None = None
    # The schemas the service keeps and where (`accord db upgrade` / `current`; the service
    # itself upgrades them when it starts).
    stores: Callable[[ServeOptions], Sequence[StoreRef]] = lambda _options: ()
    # Where it listens when neither `--port` nor its app file says (0: it must be told), and
    # where the others find it when ACCORD_<NAME>_URL does not say (settings.service_url).
    port: int = 0

    @property
    def default_port(self) -> int:
        return self.port


class StartRefusedError(SettingsError):
    """The environment is not fit to start this service in (one line: every reason)."""


def check_startup(spec: ServiceSpec) -> None:
    """Before a service binds a port: refuse what production mode refuses (docs/security-tokens.md),
    refuse a broken API keys file or trust table (any mode), make the service's own signing key
    in development (docs/service-keys.md), and say in development what it is using."""
    settings = current()
    for model in installed_app_settings().values():  # an application's own, as strictly
        app_settings(model)
    # Agents call tool servers and peers; a tool server is taken to call none (one that does,
    # as an application's may, is the exception).
    a2a = spec.protocol == "a2a"
    starting = Starting(spec.name, calls_others=a2a, keeps_push_configs=a2a)
    if settings.mode == "production":
        problems = refusals(settings, starting)
        if problems:
            raise StartRefusedError(
                f"production mode refuses to start {spec.name}: {'; '.join(problems)}"
            )
    try:
        ApiKeys().load()
        load_trust()
    except AccordError as error:
        raise StartRefusedError(error.message) from None
    if settings.mode == "development":
        existed = settings.jwt_secret is not None or dev_secret_path().exists()
        register_secret(configured_secret())  # created now, once; never in a log line
        if settings.service_token_file is None:
            ring, made = ensure_ring(spec.name)  # before the first token it signs or serves
            if made:
                logger.info("made %s's signing key %s", spec.name, ring.signer().kid)
        notice = development_notice(settings, starting, created=not existed)
        if notice is not None:
            logger.warning(notice)


def discover_services() -> dict[str, ServiceSpec]:
    """Every installed service, by name (imports every service's module)."""
    quiet_a2a_sdk_wrappers(current().otel_library_spans)  # before a service imports the SDK
    found: dict[str, ServiceSpec] = {}
    for ep in entry_points(group=SERVICES_GROUP):
        spec = ep.load()
        if isinstance(spec, ServiceSpec):
            found[spec.name] = spec
    return found


def service_names() -> list[str]:
    """The installed services' names, from the entry points alone (nothing imported)."""
    return sorted(ep.name for ep in entry_points(group=SERVICES_GROUP))


def find_service(name: str) -> ServiceSpec | None:
    """The service registered as ``name``, importing its module only: starting one service
    must not pay for importing the four others (a restart's time bounds an outage)."""
    quiet_a2a_sdk_wrappers(current().otel_library_spans)  # before its module imports the SDK
    for ep in entry_points(group=SERVICES_GROUP, name=name):
        spec = ep.load()
        if isinstance(spec, ServiceSpec) and spec.name == name:
            return spec
    return None
