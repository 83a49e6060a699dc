"""How a service makes itself startable by `accord serve NAME` and `accord up`.

Each distribution registers a :class:`ServiceSpec` under the ``accord.services`` entry-point
group, so the CLI (in accord.agents) starts tool servers without importing accord.tools.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from accord.protocol.settings import DEFAULT_PORTS, ServeOptions
from accord.protocol.storage.schema import StoreRef

AsgiApp = Callable[..., Any]


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

    @property
    def default_port(self) -> int:
        return DEFAULT_PORTS[self.name]


def discover_services() -> dict[str, ServiceSpec]:
    """Every installed service, by name."""
    found: dict[str, ServiceSpec] = {}
    for ep in entry_points(group="accord.services"):
        spec = ep.load()
        if isinstance(spec, ServiceSpec):
            found[spec.name] = spec
    return found
