"""What `accord contract-test` with no URL checks: an application's services, as its app file
says (accord.protocol.app_file), with its probes, tool contracts, skips and the kit's token."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import typer

from accord.contracts.errors import AccordError
from accord.protocol.app_file import App, load_app, project_app_file
from accord.protocol.settings import APP_FILE, DEFAULT_HOST, given_service_url

KIT_SERVICE = "kit"  # the trust table's name for the kit on this machine
OTHER_SUBJECT = "contract-test-other"  # the kit's second person: owns nothing the kit made


@dataclass(frozen=True)
class AppTargets:
    app: App
    urls: tuple[str, ...]
    probes: Path | None
    contracts: tuple[Path, ...]
    skip: tuple[str, ...]

    def token(self) -> str:
        """A token signed by the kit's own key (made on first use in development), asking for
        the scopes the app file names; the services' trust table caps them."""
        from accord.protocol.auth import service_token

        return service_token(KIT_SERVICE, scopes=self.app.spec.contract_test.scopes)

    def other_token(self) -> str:
        """A development token of another person, in the roles the app file names ("" when it
        names none)."""
        roles = self.app.spec.contract_test.other_roles
        if not roles:
            return ""
        from accord.protocol.auth import mint_token

        return mint_token(OTHER_SUBJECT, list(roles), ttl_s=600)


def app_targets(given: Path | None) -> AppTargets:
    path = given if given is not None else project_app_file()
    if path is None:
        raise typer.BadParameter(
            f"give URLs, or run it in an application's folder ({APP_FILE} here or above)"
        )
    try:
        app = load_app(path)
        urls = tuple(_url(app, name) for name in app.service_names)
    except AccordError as error:
        raise typer.BadParameter(error.message, param_hint="--app") from None
    section = app.spec.contract_test
    contracts: list[Path] = []
    for entry in section.contracts:
        where = app.resolve(entry)
        contracts += sorted(where.glob("*.yaml")) if where.is_dir() else [where]
    return AppTargets(
        app=app,
        urls=urls,
        probes=app.resolve(section.probes) if section.probes else None,
        contracts=tuple(contracts),
        skip=section.skip,
    )


def _url(app: App, name: str) -> str:
    """Where the service is: ACCORD_<NAME>_URL, else its port in the app file (MCP at /mcp)."""
    spec = app.service(name)
    base = given_service_url(name) or f"http://{DEFAULT_HOST}:{app.port(name, spec)}"
    return base + "/mcp" if spec is not None and spec.protocol == "mcp" else base
