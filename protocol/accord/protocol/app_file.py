"""An application's file (``accord.yaml``): its services, their ports, its settings.

A mesh built with Accord is a folder with this file at its root (`accord new NAME` writes one;
docs/apps.md is the format). `accord up` starts the services it lists, in order, with the
settings it gives; `accord serve NAME --app FILE` starts one of them; `accord contract-test`
with no URL checks them all with the probes and contracts it names. An application built into
the ``accord`` command may ship its file as the default for a folder that has none.

A service is named by ``serve: module:attribute`` (a :class:`ServiceSpec`; the file's folder is
put first on the import path, so an application need not be installed), or, without ``serve``,
by the name it is installed under (entry point group ``accord.services``).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from accord.contracts.loading import ContractFileError, load_model
from accord.protocol.service import ServiceSpec, find_service
from accord.protocol.settings import (
    APP_FILE,
    DEFAULT_HOST,
    AccordSettings,
    env_name,
    project_folder,
    service_url_env,
)

ServiceName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,39}$")]
Target = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")]


class AppService(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: ServiceName
    serve: Target | None = None  # module:attribute of its ServiceSpec; None: installed by name
    port: int | None = Field(default=None, ge=1, le=65535)
    what: str = ""  # one line for `accord up`'s table


class ContractTest(BaseModel):
    """What `accord contract-test` with no URL passes the kit (paths relative to the file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    probes: str | None = None
    contracts: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()  # requirement IDs the application does not claim, each a reason
    scopes: tuple[str, ...] = ()  # what the kit's token asks for (`accord keys token kit`)
    # The roles of the kit's second credential (`--other-token`): another person, whom no skill
    # admits, for the cross-tenant and access checks. Empty: none, those checks skip.
    other_roles: tuple[str, ...] = ()


class AppFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: ServiceName
    description: str = ""
    services: tuple[AppService, ...] = Field(min_length=1)
    # ACCORD_* settings every service of the app is started with, by field name (tools_config,
    # service_trust, ...); a path is relative to this file's folder.
    settings: dict[str, str | int | float | bool] = Field(default_factory=dict)
    console: bool = False  # `accord up` starts the web console (`accord console`) too
    contract_test: ContractTest = Field(default_factory=ContractTest)

    @model_validator(mode="after")
    def _checked(self) -> AppFile:
        names = [s.name for s in self.services]
        if len(set(names)) != len(names):
            raise ValueError("service names must be unique")
        ports = [s.port for s in self.services if s.port is not None]
        if len(set(ports)) != len(ports):
            raise ValueError("two services on one port")
        for key in self.settings:
            if key not in AccordSettings.model_fields or key.endswith("_url"):
                raise ValueError(f"settings: {key!r} is not an ACCORD_* setting an app may fix")
        return self


class App:
    """An application file, read and checked, with its folder."""

    def __init__(self, path: Path, spec: AppFile) -> None:
        self.path = path
        self.folder = path.parent
        self.spec = spec

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def service_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.spec.services)

    def entry(self, name: str) -> AppService | None:
        return next((s for s in self.spec.services if s.name == name), None)

    def resolve(self, path: str) -> Path:
        return (self.folder / path).resolve()

    def service(self, name: str) -> ServiceSpec | None:
        """The ServiceSpec ``name`` stands for: its ``serve`` target imported (this folder on
        the import path), or the installed service of that name."""
        entry = self.entry(name)
        if entry is None:
            return None
        if entry.serve is None:
            return find_service(name)
        module_name, attribute = entry.serve.split(":")
        folder = str(self.folder)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        try:
            found: Any = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as error:
            raise ContractFileError(self.path, f"services.{name}.serve", str(error)) from None
        if not isinstance(found, ServiceSpec) or found.name != name:
            raise ContractFileError(
                self.path, f"services.{name}.serve", f"is not the ServiceSpec of {name!r}"
            )
        return found

    def port(self, name: str, spec: ServiceSpec | None = None) -> int:
        entry = self.entry(name)
        if entry is not None and entry.port is not None:
            return entry.port
        return spec.default_port if spec is not None else 0

    def env(self, ports: dict[str, int]) -> dict[str, str]:
        """The environment the app's services run in: its settings (paths made absolute) and
        each service's URL (``ACCORD_<NAME>_URL``), so that they find each other."""
        out: dict[str, str] = {}
        for key, value in self.spec.settings.items():
            if AccordSettings.model_fields[key].annotation in (Path, Path | None):
                value = str(self.resolve(str(value)))
            out[env_name(key)] = str(value).lower() if isinstance(value, bool) else str(value)
        for name, port in ports.items():
            out[service_url_env(name)] = f"http://{DEFAULT_HOST}:{port}"
        return out


def load_app(path: Path) -> App:
    """Read ``path`` (ContractFileError naming the field and rule when it is not an app file)."""
    path = path.expanduser().resolve()
    return App(path, load_model(AppFile, path))


def project_app_file(here: Path | None = None) -> Path | None:
    """The app file of the project ``here`` (default: the current folder) is in: found from
    there up as the data directory is (settings.project_folder), so a command run from a
    subfolder of an application runs that application, with that application's ``.accord``."""
    project = project_folder(here or Path.cwd())
    if project is None or not (project / APP_FILE).is_file():
        return None
    return project / APP_FILE


def find_app(given: Path | None, default: Path) -> App:
    """``given``, else the project's app file (:func:`project_app_file`: ./accord.yaml or one
    above), else the caller's ``default``."""
    if given is not None:
        return load_app(given)
    return load_app(project_app_file() or default)


_defaults: dict[tuple[Path, str], Path | None] = {}


def app_default_path(key: str) -> Path | None:
    """A path setting (``service_trust``, ``tools_config``) as the application's file gives it
    when its variable is unset: the project's app file (:func:`project_app_file`), else the
    installed application's (entry points ``accord.apps``); resolved against the file's folder.
    None when neither file sets it. Looked up once per process and folder."""
    here = Path.cwd()
    if (here, key) not in _defaults:
        _defaults[(here, key)] = _app_path(key, project_app_file(here) or _installed_app_file())
    return _defaults[(here, key)]


def _app_path(key: str, file: Path | None) -> Path | None:
    if file is None:
        return None
    app = load_app(file)
    value = app.spec.settings.get(key)
    return app.resolve(str(value)) if isinstance(value, str) else None


def _installed_app_file() -> Path | None:
    from accord.protocol.plugins import installed_app  # imports the app's commands module

    app = installed_app()
    return app.path if app is not None else None
