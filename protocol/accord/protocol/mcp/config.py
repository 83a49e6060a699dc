"""Which MCP tool servers the client connects to, and which contracts their tools follow.

One YAML file lists the servers; plugging in a third-party MCP server is one entry::

    timeout_s: 10                  # per call attempt
    retry: {max_attempts: 4}       # accord.contracts.retry.RetryPolicy
    servers:
      - name: notes
        transport: http
        url: ${service_url:notes}/mcp
        tools: [notes.search, notes.get]                    # contract names
      - name: weather
        transport: stdio
        command: weather-mcp
        args: [--offline]
        env: {WEATHER_UNITS: metric}
        tools: [contracts/weather.forecast.yaml]            # contract files, relative to this file

Placeholders: ``${service_url:NAME}`` is :func:`accord.protocol.settings.service_url` (so
``ACCORD_NOTES_URL`` overrides the port the service declares), ``${env:VAR}`` an environment
variable. The file is chosen by an explicit path, else ``ACCORD_TOOLS_CONFIG``, else the
application's own (its agents pass theirs as ``default``). A malformed file fails with one
:class:`ContractFileError` naming the file, the field and the rule.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.loading import ContractFileError, read_yaml, validate_model
from accord.contracts.retry import RetryPolicy
from accord.contracts.tools import ToolContract, load_tool_contract, shipped_tool_contracts
from accord.protocol.settings import SettingsError, current, service_url

DEFAULT_TIMEOUT_S: Final = 10.0
_PLACEHOLDER: Final = re.compile(r"\$\{(service_url|env):([^}]*)\}")


class ServerEntry(BaseModel):
    """One tool server as written in the configuration file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]*$", max_length=64)
    transport: Literal["http", "stdio"]
    url: str | None = Field(default=None, min_length=1)
    command: str | None = Field(default=None, min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = Field(default=None, min_length=1)
    tools: list[str] = Field(min_length=1)
    timeout_s: float | None = Field(default=None, gt=0, le=600)

    @model_validator(mode="after")
    def _transport_fields(self) -> ServerEntry:
        if self.transport == "http":
            if self.url is None:
                raise ValueError("an http server needs a url")
            if self.command is not None or self.args or self.env or self.cwd:
                raise ValueError("an http server takes no command, args, env or cwd")
        else:
            if self.command is None:
                raise ValueError("a stdio server needs a command")
            if self.url is not None:
                raise ValueError("a stdio server takes no url")
        if len(set(self.tools)) != len(self.tools):
            raise ValueError("tools must not repeat an entry")
        return self


class ToolsConfigFile(BaseModel):
    """The whole configuration file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=600)
    connect_timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=600)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    servers: list[ServerEntry] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> ToolsConfigFile:
        names = [s.name for s in self.servers]
        if len(set(names)) != len(names):
            raise ValueError("server names must be unique")
        return self


@dataclass(frozen=True)
class ServerSpec:
    """A tool server ready to connect to: transport details and the contracts of its tools."""

    name: str
    transport: Literal["http", "stdio"]
    contracts: tuple[ToolContract, ...]
    url: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    timeout_s: float | None = None

    @classmethod
    def http(
        cls,
        name: str,
        url: str,
        contracts: list[ToolContract] | tuple[ToolContract, ...],
        *,
        timeout_s: float | None = None,
    ) -> ServerSpec:
        return cls(
            name=name, transport="http", url=url, contracts=tuple(contracts), timeout_s=timeout_s
        )

    @classmethod
    def stdio(
        cls,
        name: str,
        command: str,
        args: list[str] | tuple[str, ...],
        contracts: list[ToolContract] | tuple[ToolContract, ...],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        timeout_s: float | None = None,
    ) -> ServerSpec:
        return cls(
            name=name,
            transport="stdio",
            command=command,
            args=tuple(args),
            env=dict(env or {}),
            cwd=cwd,
            contracts=tuple(contracts),
            timeout_s=timeout_s,
        )

    @property
    def target(self) -> str:
        """Where the server is, for people: its URL or its command line."""
        if self.url is not None:
            return self.url
        return " ".join([self.command or "", *self.args])


@dataclass(frozen=True)
class ToolsConfig:
    """A loaded, resolved configuration: every contract read and every placeholder filled."""

    servers: tuple[ServerSpec, ...]
    timeout_s: float = DEFAULT_TIMEOUT_S
    connect_timeout_s: float = DEFAULT_TIMEOUT_S
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    source: str = "<code>"

    def serving(self, *tool_names: str) -> ToolsConfig:
        """The same configuration with only the servers that offer any of ``tool_names``: an
        agent that needs one server's tools does not connect to (or wait for) the others."""
        wanted = set(tool_names)
        servers = tuple(s for s in self.servers if any(c.name in wanted for c in s.contracts))
        return replace(self, servers=servers)


def config_path(explicit: Path | str | None = None, default: Path | None = None) -> Path:
    """The file to read: the explicit one, else ``ACCORD_TOOLS_CONFIG``, else the application's
    ``default`` (the framework ships none: which tool servers there are is the application's)."""
    if explicit is not None:
        return Path(explicit)
    chosen = current().tools_config or default
    if chosen is None:
        raise AccordError(
            ErrorCode.INVALID_INPUT,
            "no tools configuration: set ACCORD_TOOLS_CONFIG (docs/mcp-client.md)",
        )
    return chosen


def load_config(path: Path | str | None = None, *, default: Path | None = None) -> ToolsConfig:
    """Read and resolve a tools configuration (see the module docstring for the format):
    ``path``, else ``ACCORD_TOOLS_CONFIG``, else ``default``."""
    p = config_path(path, default)
    raw = validate_model(ToolsConfigFile, read_yaml(p), p)
    shipped = shipped_tool_contracts()
    servers: list[ServerSpec] = []
    owner: dict[str, str] = {}
    for i, entry in enumerate(raw.servers):
        where = f"servers.{i}"
        contracts: list[ToolContract] = []
        for j, ref in enumerate(entry.tools):
            contract = resolve_contract(ref, shipped, p, f"{where}.tools.{j}")
            if contract.name in owner:
                raise ContractFileError(
                    p,
                    f"{where}.tools.{j}",
                    f"tool {contract.name!r} is already served by {owner[contract.name]!r}",
                )
            owner[contract.name] = entry.name
            contracts.append(contract)
        servers.append(
            ServerSpec(
                name=entry.name,
                transport=entry.transport,
                url=_url(entry.url, p, f"{where}.url") if entry.url else None,
                command=_fill(entry.command, p, f"{where}.command") if entry.command else None,
                args=tuple(_fill(a, p, f"{where}.args.{k}") for k, a in enumerate(entry.args)),
                env={k: _fill(v, p, f"{where}.env.{k}") for k, v in entry.env.items()},
                cwd=str(p.parent / entry.cwd) if entry.cwd else None,
                contracts=tuple(contracts),
                timeout_s=entry.timeout_s,
            )
        )
    return ToolsConfig(
        servers=tuple(servers),
        timeout_s=raw.timeout_s,
        connect_timeout_s=raw.connect_timeout_s,
        retry=raw.retry,
        source=str(p),
    )


def resolve_contract(
    ref: str, shipped: dict[str, ToolContract], path: Path, where: str
) -> ToolContract:
    """A shipped contract by tool name, or a contract file (relative to the config file)."""
    if ref.endswith((".yaml", ".yml")) or "/" in ref:
        file = Path(ref).expanduser()
        if not file.is_absolute():
            file = path.parent / file
        if not file.is_file():
            raise ContractFileError(path, where, f"contract file {str(file)!r} does not exist")
        return load_tool_contract(file)
    if ref not in shipped:
        known = ", ".join(sorted(shipped))
        raise ContractFileError(
            path,
            where,
            f"{ref!r} is not a shipped tool contract "
            f"(known: {known}); give a contract file path instead",
        )
    return shipped[ref]


def _url(value: str, path: Path, where: str) -> str:
    url = _fill(value, path, where)
    if not re.match(r"^https?://[^/\s]+", url):
        raise ContractFileError(path, where, f"{url!r} is not an http(s) URL")
    return url


def _fill(value: str, path: Path, where: str) -> str:
    def one(match: re.Match[str]) -> str:
        kind, arg = match.group(1), match.group(2).strip()
        if kind == "service_url":
            try:
                return service_url(arg)
            except SettingsError as unknown:
                raise ContractFileError(path, where, str(unknown)) from None
        # ``${env:VAR}``: a variable the operator's file names, not one of Accord's settings.
        found = os.environ.get(arg)
        if found is None:
            raise ContractFileError(path, where, f"environment variable {arg!r} is not set")
        return found

    return _PLACEHOLDER.sub(one, value)


def describe(config: ToolsConfig) -> list[dict[str, Any]]:
    """A plain summary of the configured servers (for `accord tools list` and logs)."""
    return [
        {
            "server": s.name,
            "transport": s.transport,
            "target": s.target,
            "tools": [c.name for c in s.contracts],
        }
        for s in config.servers
    ]
