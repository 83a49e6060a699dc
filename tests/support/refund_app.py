"""The refund assistant's services and their ports, as the application declares them: its app
file lists the services, each installed service its port (``ServiceSpec.port``)."""

from __future__ import annotations

from typing import Final

from accord.agents.cli.commands import REFUND_APP_FILE as REFUND_APP
from accord.protocol.app_file import load_app


def _ports() -> dict[str, int]:
    app = load_app(REFUND_APP)
    return {name: app.port(name, app.service(name)) for name in app.service_names}


REFUND_PORTS: Final = _ports()
