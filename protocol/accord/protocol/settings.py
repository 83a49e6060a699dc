"""Every ``ACCORD_*`` setting, in one model: :class:`AccordSettings`.

Read from the environment so that containers, `accord up` and the CLI configure a process the
same way; :func:`current` is the one reader, and docs/configuration.md is generated from the
model (``make docs``). Defaults are the documented ones; users script against them, keep them
stable. A bad value is a :class:`SettingsError` that names the variable; the CLI checks the
environment before it starts anything (``accord serve`` exits 2 with one line).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, TypeVar, cast

from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from accord.contracts.envelope import Identifier
from accord.protocol.auth.names import DEFAULT_APP
from accord.protocol.dev.faults import parse_faults
from accord.protocol.private_files import private_dir

if TYPE_CHECKING:  # a leaf (httpx2 only), not imported at run time: settings load fast
    from accord.protocol.in_process import InProcessServers

ENV_PREFIX: Final = "ACCORD_"
DEFAULT_HOST: Final = "127.0.0.1"
CONSOLE_PORT: Final = 8720  # the web console (docs/console.md): not an A2A or MCP service
DEFAULT_PAUSE_S: Final = 60.0
DEV_FLAG: Final = "ACCORD_DEV"
APP_FILE: Final = "accord.yaml"  # an application's file: the root of its project (app_file.py)
DATA_DIR_NAME: Final = ".accord"  # a project's data directory, next to its app file

# Sections of docs/configuration.md, in order; every field names one.
GROUPS: Final = {
    "storage": "Data and databases",
    "mesh": "Finding the other services",
    "auth": "Authentication (services)",
    "client": "Credentials (command line)",
    "limits": "Limits per caller",
    "agents": "Agents and workflows",
    "telemetry": "Logs, traces and metrics",
    "development": "Development and tests only",
}


def env_name(field_name: str) -> str:
    """The variable a field is read from: ``lease_ttl_s`` -> ``ACCORD_LEASE_TTL_S``."""
    return ENV_PREFIX + field_name.upper()


def _in(
    group: str, shown_default: str | None = None, *, shown_type: str | None = None
) -> dict[str, Any]:
    """Field metadata for docs/configuration.md: the section, and (where the Python value would
    not say it well) the default and the type written for people."""
    extra: dict[str, Any] = {"group": group}
    if shown_default is not None:
        extra["shown_default"] = shown_default
    if shown_type is not None:
        extra["shown_type"] = shown_type
    return extra


Seconds = Annotated[float, Field(gt=0)]
_ORIGIN: Final = re.compile(r"https?://(\[[0-9A-Fa-f:.]+\]|[^/\s:?#@\[\]]+)(:\d{1,5})?/?", re.I)


class AccordSettings(BaseSettings):
    """The ``ACCORD_*`` environment of a process. Unset or empty variables take the default."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_ignore_empty=True,
        extra="ignore",
        frozen=True,
        validate_default=False,  # the defaults are ours, and valid
    )

    # -- storage ---------------------------------------------------------------------------
    data_dir: Path = Field(
        default=Path(DATA_DIR_NAME),
        description=(
            "SQLite files, the development JWT secret, the deny list and `accord up`'s logs. "
            "Created 0700 on first use (its files 0600). Unset, every command finds its "
            "project's, as git finds `.git`: the `.accord` of the nearest folder, from the "
            "current one up, that has an `accord.yaml` or a `.accord`; else `./.accord`."
        ),
        json_schema_extra=_in(
            "storage", "the project's `.accord`, else `./.accord` (image: `/data`)"
        ),
    )
    database_url: str | None = Field(
        default=None,
        pattern=r"^(postgres(ql)?|sqlite)(\+\w+)?://",
        description=(
            "A `postgresql://` URL: every service keeps its tables in this database instead of "
            "its own SQLite file. Required for more than one replica."
        ),
        json_schema_extra=_in(
            "storage", "unset: SQLite files in the data directory", shown_type="URL"
        ),
    )

    # -- mesh ------------------------------------------------------------------------------
    trusted_origins: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description=(
            "Comma-separated origins (`https://host[:port]`) an Agent Card may point its "
            "interfaces at besides its own; A2A clients send credentials there too "
            "(docs/security-a2a.md). Anything else is refused before a credential leaves."
        ),
        json_schema_extra=_in("mesh", "unset: a card's own origin only", shown_type="origins"),
    )
    console_url: str = Field(
        default=f"http://{DEFAULT_HOST}:{CONSOLE_PORT}",
        description=(
            "Origin of the web console (`accord console` binds its host and port): the one "
            "origin an agent lets a browser call it from (CORS, bearer tokens only; "
            "docs/console.md)."
        ),
        json_schema_extra=_in("mesh", shown_type="origin"),
    )

    # -- auth ------------------------------------------------------------------------------
    jwt_secret: SecretStr | None = Field(
        default=None,
        description="Shared HS256 secret for tokens; every service must have the same one.",
        json_schema_extra=_in("auth", "unset: a random secret created in the data directory"),
    )
    push_secrets_key: SecretStr | None = Field(
        default=None,
        description=(
            "A2A agents: the AES-256 key (32 random bytes, base64, e.g. `openssl rand -base64 "
            "32`) that encrypts callers' push notification credentials (their `token` and "
            "`authentication.credentials`) in the database; every replica of an agent must "
            "have the same one. Required in production (docs/push-notifications.md)."
        ),
        json_schema_extra=_in(
            "auth", "unset: a random key created in the data directory (`push-secrets-key`)"
        ),
    )
    jwt_public_key: str | None = Field(  # compat.JWT_PUBLIC_KEY_SETTING
        default=None,
        description="PEM text or a path to a PEM file: also accept RS256/ES256 tokens.",
        json_schema_extra=_in("auth"),
    )
    api_keys: Path | None = Field(
        default=None,
        description="A YAML file of static API keys (docs/auth.md).",
        json_schema_extra=_in("auth", "unset: no API keys"),
    )
    revoked_file: Path | None = Field(
        default=None,
        description=(
            "Deny list: a credential id (JWT `jti` or API key id), or `subject APP/SUB TIME`, "
            "a line (`accord token revoke`)."
        ),
        json_schema_extra=_in("auth", "`revoked` in the data directory"),
    )
    mode: Literal["development", "production"] = Field(
        default="development",
        description=(
            "`production`: a service refuses to start with a missing, short or placeholder "
            "secret, development options or fault injection, and never creates a secret of "
            "its own (docs/security-tokens.md)."
        ),
        json_schema_extra=_in("auth"),
    )
    jwks: str | None = Field(
        default=None,
        description=(
            "The identity provider's signing keys: an `https://` JWKS URL (cached, fetched "
            "again for an unknown `kid`) or a JWKS JSON file (read again when it changes). "
            "RS256/ES256 tokens are verified with them."
        ),
        json_schema_extra=_in("auth", "unset: no JWKS", shown_type="URL or path"),
    )
    jwt_issuers: Annotated[tuple[str, ...], NoDecode] = Field(
        default=("accord",),
        min_length=1,
        description=(
            "Comma-separated `iss` values a token may carry (`accord`: the tokens Accord "
            "mints itself)."
        ),
        json_schema_extra=_in("auth", "`accord`", shown_type="list"),
    )
    jwt_audience: str = Field(
        default="accord",
        min_length=1,
        description="The `aud` every token must name (minted tokens carry it).",
        json_schema_extra=_in("auth"),
    )
    token_max_ttl_s: int = Field(
        default=86_400,
        gt=0,
        description="Longest lifetime (`exp - iat`) of a person's token (customer, approver).",
        json_schema_extra=_in("auth"),
    )
    service_token_max_ttl_s: int = Field(
        default=3_600,
        gt=0,
        description="Longest lifetime of a token with the `service` role.",
        json_schema_extra=_in("auth"),
    )
    service_token_file: Path | None = Field(
        default=None,
        description=(
            "A file holding this service's bearer token for calls to other services (e.g. a "
            "Kubernetes projected token), read again when it changes; unset: services mint "
            "their own with the shared secret."
        ),
        json_schema_extra=_in("auth", "unset: minted with the secret"),
    )
    keys_dir: Path | None = Field(
        default=None,
        description=(
            "This service's own signing keys: a folder per service (`NAME/keyring.json`, "
            "0600) whose newest key signs the tokens it sends (ES256). Made on first start in "
            "development; provisioned in production (`accord keys`, docs/service-keys.md)."
        ),
        json_schema_extra=_in("auth", "`keys` in the data directory"),
    )
    service_trust: Path | None = Field(
        default=None,
        description=(
            "The trust table: which services this one accepts tokens from, under which keys "
            "(a JWKS URL or file each), with which grants and for which tenant apps "
            "(docs/service-keys.md). Required in production."
        ),
        json_schema_extra=_in(
            "auth",
            "unset: the app file's `service_trust` (keys in ACCORD_KEYS_DIR), else none",
        ),
    )
    service_jwks_ttl_s: Seconds = Field(
        default=30.0,
        description=(
            "How long a service's JWKS fetched from a URL is kept: the longest a revoked "
            "service key can still be accepted by a verifier that does not share the deny list."
        ),
        json_schema_extra=_in("auth"),
    )
    allowed_hosts: Annotated[tuple[str, ...] | None, NoDecode] = Field(
        default=None,
        description=(
            "MCP servers: comma-separated `host[:port]` patterns the `Host` header must match "
            "(DNS-rebinding protection); `*` alone switches the check off."
        ),
        json_schema_extra=_in(
            "auth", "unset: loopback names on a loopback bind, no check on other binds"
        ),
    )
    push_allowed_hosts: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description=(
            "A2A agents: comma-separated host names (or `*.example.com`) a push notification "
            "may be sent to, over https only; a host resolving to a private or loopback "
            "address is refused unless `ACCORD_DEV=1` (docs/push-notifications.md)."
        ),
        json_schema_extra=_in("auth", "unset: none (with ACCORD_DEV=1: loopback only)"),
    )
    tenant_apps: Annotated[tuple[Identifier, ...], NoDecode] = Field(
        default=(DEFAULT_APP,),
        min_length=1,
        description=(
            "Comma-separated tenant apps this service acts for. A tool server answers a call "
            "only for a tenant of one of them (the caller's own app, or the app a service's "
            "verified delegation names); any other is PERMISSION_DENIED before data is read "
            "(docs/security.md)."
        ),
        json_schema_extra=_in("auth", f"`{DEFAULT_APP}` (the demo app)", shown_type="list"),
    )
    authorization_servers: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description=(
            "MCP servers: comma-separated URLs of the authorization servers (token issuers) "
            "named in `/.well-known/oauth-protected-resource` (RFC 9728), where an MCP client "
            "learns who issues tokens for it."
        ),
        json_schema_extra=_in(
            "auth", "unset: the tool server's own origin (development tokens: `accord token`)"
        ),
    )

    # -- limits ----------------------------------------------------------------------------
    rate_limit_per_s: float = Field(
        default=50.0,
        ge=0,
        description=(
            "Requests per second one person (customer, approver) may make to one service "
            "process, with bursts up to `ACCORD_RATE_LIMIT_BURST`; more are RATE_LIMITED with "
            "`Retry-After`. 0: no limit."
        ),
        json_schema_extra=_in("limits"),
    )
    rate_limit_burst: int = Field(
        default=100,
        ge=1,
        description="Requests a caller may make at once before the per-second rate applies.",
        json_schema_extra=_in("limits"),
    )
    service_rate_limit_per_s: float = Field(
        default=2000.0,
        ge=0,
        description=(
            "The same for service principals (they carry every customer's traffic) and for "
            "the anonymous caller of an agent served with --auth none (every client at once); "
            "burst: twice this. 0: no limit."
        ),
        json_schema_extra=_in("limits"),
    )
    max_streams_per_principal: int = Field(
        default=16,
        ge=1,
        description=(
            "Event streams (streaming sends, subscriptions) one caller may hold open on one "
            "service process; one more is RATE_LIMITED."
        ),
        json_schema_extra=_in("limits"),
    )
    max_message_bytes: int = Field(
        default=64 * 1024,
        ge=1024,
        le=1024 * 1024,
        description=(
            "Content of one A2A message (its parts' text, data and files): more is "
            "PAYLOAD_TOO_LARGE, before a task is created. It bounds what one message can make "
            "a service write (a task and its history keep a few copies of it)."
        ),
        json_schema_extra=_in("limits", "65536 (64 KiB)"),
    )
    task_retention_s: Seconds = Field(
        default=30 * 86_400.0,
        description=(
            "Finished tasks (completed, failed, canceled, rejected) are deleted this long after "
            "their last change: an agent's task store and a workflow runtime's closed workflows. "
            "Tasks still running or waiting are kept however old."
        ),
        json_schema_extra=_in("limits", "2592000 (30 days)"),
    )
    task_history_limit: int = Field(
        default=100,
        ge=1,
        description="Messages of history an agent's task store keeps per task (the newest).",
        json_schema_extra=_in("limits"),
    )
    stream_idle_s: Seconds = Field(
        default=300.0,
        description=(
            "A stream that sent no event for this long is ended by the server (keep-alive "
            "pings do not count); the client subscribes again if it still cares."
        ),
        json_schema_extra=_in("limits"),
    )

    # -- client ----------------------------------------------------------------------------
    token: SecretStr | None = Field(
        default=None,
        description="Bearer token the CLI sends (`--token`).",
        json_schema_extra=_in("client", "unset: a development token minted with the local secret"),
    )
    api_key: SecretStr | None = Field(
        default=None,
        description="API key `accord call` sends (`--api-key`).",
        json_schema_extra=_in("client"),
    )

    # -- agents ----------------------------------------------------------------------------
    tools_config: Path | None = Field(
        default=None,
        description=(
            "The MCP tool servers an agent's tool clients connect to (docs/mcp-client.md)."
        ),
        json_schema_extra=_in("agents", "unset: the application's own file"),
    )
    models_config: Path | None = Field(
        default=None,
        description=(
            "A YAML file of model tiers, costs and cache (docs/models.md); `MODEL_FAST` and "
            "`MODEL_DEEP` override its tiers."
        ),
        json_schema_extra=_in("agents", "unset: the offline model on both tiers"),
    )
    contracts_dir: Path | None = Field(
        default=None,
        description=(
            "A folder of agent contract files an agent serves "
            "instead of its shipped one: every file of its name, one per major version, side "
            "by side during a migration (docs/contract-evolution.md)."
        ),
        json_schema_extra=_in("agents", "unset: the shipped contract"),
    )
    workflow_lease_ttl_s: Seconds = Field(
        default=15.0,
        description="Lease of a replica on its running workflows (docs/replicas.md).",
        json_schema_extra=_in("agents"),
    )
    shutdown_grace_s: Seconds = Field(
        default=20.0,
        description=(
            "On SIGTERM a service stops accepting connections and gives the requests in flight "
            "this long to finish before it exits (a workflow still running is handed over: "
            "recovery resumes it). Keep it below the pod's terminationGracePeriodSeconds minus "
            "its preStop pause (docs/restarts.md)."
        ),
        json_schema_extra=_in("mesh"),
    )
    turn_deadline_s: Seconds = Field(
        default=300.0,
        description="Deadline of one turn of a request that brings no envelope.",
        json_schema_extra=_in("agents"),
    )
    task_worker_ttl_s: Seconds = Field(
        default=15.0,
        description=(
            "How long an agent process counts as alive after its last heartbeat (renewed every "
            "third of it): then another replica fails the tasks it left running "
            "(docs/replicas.md)."
        ),
        json_schema_extra=_in("agents"),
    )

    # -- telemetry -------------------------------------------------------------------------
    log_format: Literal["text", "json"] = Field(
        default="text",
        description="`json`: one JSON object a line on stderr.",
        json_schema_extra=_in("telemetry"),
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = Field(
        default="WARNING",
        description="Level of the root logger.",
        json_schema_extra=_in("telemetry"),
    )
    trace_file: str | None = Field(
        default=None,
        description=(
            "Also write every finished span as a JSON line to this file; `{service}` in the "
            "path is replaced by the service name."
        ),
        json_schema_extra=_in("telemetry"),
    )
    metrics_file: str | None = Field(
        default=None,
        description="The same for metric collections.",
        json_schema_extra=_in("telemetry"),
    )
    otel_library_spans: bool = Field(
        default=False,
        description="Keep the a2a-sdk's and the MCP SDK's own spans.",
        json_schema_extra=_in("telemetry"),
    )

    # -- development -----------------------------------------------------------------------
    dev: bool = Field(
        default=False,
        description=(
            "Development mode: allows `ACCORD_FAULTS` and `ACCORD_TEST_PAUSE`, which are "
            "refused at start without it."
        ),
        json_schema_extra=_in("development"),
    )
    faults: str = Field(
        default="",
        description=(
            "Fault injection in tool servers: `TOOL=CODE:N[:after]` or `TOOL=latency:MS`, "
            "comma-separated (docs/tools.md). Needs `ACCORD_DEV=1`."
        ),
        json_schema_extra=_in("development", "unset", shown_type="fault plan"),
    )
    demo_data: bool | None = Field(
        default=None,
        description=(
            "Seed the tool servers' demo data (an application's sample records) at start, "
            "idempotently. Unset: in development mode only, never in "
            "production mode, where the stores hold the operator's own data; compose.yaml sets "
            "it, being a demo on one machine."
        ),
        json_schema_extra=_in("development", "unset: on in development, off in production"),
    )
    test_pause: Annotated[dict[str, float], NoDecode] = Field(
        default_factory=dict,
        description=(
            "Pause points for crash tests: `POINT[@ORDER][:SECONDS]`, comma-separated "
            f"(an application's crash-test points, docs/testing.md; {DEFAULT_PAUSE_S:g} s by "
            "default). "
            "Needs `ACCORD_DEV=1`."
        ),
        json_schema_extra=_in("development", "unset", shown_type="pause plan"),
    )

    @property
    def seeds_demo_data(self) -> bool:
        """Whether tool servers seed the demo data (``ACCORD_DEMO_DATA``, else by mode)."""
        return self.demo_data if self.demo_data is not None else self.mode != "production"

    @field_validator("*", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object, info: ValidationInfo) -> object:
        if isinstance(value, str):
            value = value.strip()
            if not value:  # only blanks: as if unset (an empty value never gets here)
                assert info.field_name is not None
                return cls.model_fields[info.field_name].get_default(call_default_factory=True)
        return value

    @field_validator(
        "data_dir",
        "api_keys",
        "revoked_file",
        "service_token_file",
        "keys_dir",
        "service_trust",
        "tools_config",
        "models_config",
        "contracts_dir",
    )
    @classmethod
    def _home(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None

    @field_validator("jwks")
    @classmethod
    def _jwks_source(cls, value: str | None) -> str | None:
        if value is not None and "://" in value and not value.startswith(("https://", "http://")):
            raise ValueError("a JWKS is an https:// URL or a file path")
        return value

    @field_validator(
        "allowed_hosts",
        "trusted_origins",
        "authorization_servers",
        "jwt_issuers",
        "push_allowed_hosts",
        "tenant_apps",
        mode="before",
    )
    @classmethod
    def _comma_list(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(h.strip() for h in value.split(",") if h.strip())
        return value

    @field_validator("trusted_origins")
    @classmethod
    def _origins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for origin in value:
            if not _ORIGIN.fullmatch(origin):
                raise ValueError(f"{origin!r} is not an origin (scheme://host[:port], no path)")
        return value

    @field_validator("console_url")
    @classmethod
    def _console_origin(cls, value: str) -> str:
        if not _ORIGIN.fullmatch(value):
            raise ValueError(f"{value!r} is not an origin (scheme://host[:port], no path)")
        return value.rstrip("/")

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("log_format", "mode", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @field_validator("faults")
    @classmethod
    def _fault_grammar(cls, value: str) -> str:
        parse_faults(value)  # a ValueError names the bad rule
        return value

    @field_validator("test_pause", mode="before")
    @classmethod
    def _pause_grammar(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        plan: dict[str, float] = {}
        for raw in value.split(","):
            point, _, seconds = raw.strip().partition(":")
            if point:
                plan[point] = float(seconds) if seconds.strip() else DEFAULT_PAUSE_S
        return plan

    @model_validator(mode="after")
    def _test_only_needs_dev(self) -> AccordSettings:
        if not self.dev:
            for name in ("faults", "test_pause"):
                if getattr(self, name):
                    raise ValueError(
                        f"{env_name(name)} is for tests and development only: "
                        f"set {DEV_FLAG}=1 to allow it"
                    )
        return self


class SettingsError(ValueError):
    """An ``ACCORD_*`` variable holds a value the model refuses; the message names it."""


def describe(error: ValidationError) -> str:
    """One line: ``ACCORD_X: why (got 'value')`` for each problem."""
    parts: list[str] = []
    for problem in error.errors(include_url=False):
        cause = problem.get("ctx", {}).get("error")
        message = str(cause) if cause is not None else problem["msg"]
        if not problem["loc"]:  # a rule across fields: its message names the variables
            parts.append(message)
            continue
        got = problem.get("input")
        shown = f" (got {got!r})" if isinstance(got, str) else ""
        parts.append(f"{env_name(str(problem['loc'][0]))}: {message}{shown}")
    return "; ".join(parts)


_cached: tuple[tuple[tuple[str, str], ...], AccordSettings] | None = None


def current() -> AccordSettings:
    """The settings of the environment as it is now.

    Read again only when an ``ACCORD_*`` variable changed (tests and `accord demo` set some),
    so a caller on a hot path pays for one scan of the environment, not for validation.
    """
    global _cached
    # Environment order is stable, so the plain scan is the key (no sort, no case folding:
    # pydantic-settings matches names case-insensitively, but nobody writes accord_data_dir).
    # Keys first: decoding only our values makes the scan three times cheaper.
    snapshot = _snapshot()
    cached = _cached
    if cached is not None and cached[0] == snapshot:
        return cached[1]
    try:
        settings = AccordSettings()
    except ValidationError as error:
        raise SettingsError(describe(error)) from None
    for variable, _value in snapshot:  # services' URLs are no fields, and checked as early
        if variable.endswith("_URL") and variable not in _FIELD_VARIABLES:
            given_service_url(variable[len(ENV_PREFIX) : -len("_URL")].lower())
    _cached = (snapshot, settings)
    return settings


def _snapshot() -> tuple[tuple[str, str], ...]:
    return tuple((k, os.environ[k]) for k in os.environ if k.startswith(ENV_PREFIX))


AppSettingsT = TypeVar("AppSettingsT", bound=BaseSettings)
APP_SETTINGS_GROUP: Final = "accord.settings"  # entry points: NAME = module:Model (docs, checks)
_app_cached: dict[type[BaseSettings], tuple[tuple[tuple[str, str], ...], BaseSettings]] = {}


def app_settings(model: type[AppSettingsT]) -> AppSettingsT:
    """An application's own ``ACCORD_*`` settings, read as :func:`current` reads the
    framework's: the same environment, the same errors (SettingsError naming the variable),
    read again only when a variable changed.

    Why a second model and not fields here: the framework knows no application's rules; their
    numbers are the application's. An application declares a
    ``BaseSettings`` with ``env_prefix="ACCORD_"`` (:func:`app_settings_config`) and registers
    it under the ``accord.settings`` entry points, so docs/configuration.md lists it and a
    service refuses to start with a bad value of it, as with the framework's
    (docs/configuration.md "An application's settings")."""
    snapshot = _snapshot()
    cached = _app_cached.get(model)
    if cached is not None and cached[0] == snapshot:
        return cast(AppSettingsT, cached[1])
    given = dict(snapshot)
    blank = {  # only blanks: as if unset, as the framework's validator does for its own
        name: info.get_default(call_default_factory=True)
        for name, info in model.model_fields.items()
        if env_name(name) in given and not given[env_name(name)].strip()
    }
    try:
        settings = model(**blank)
    except ValidationError as error:
        raise SettingsError(describe(error)) from None
    _app_cached[model] = (snapshot, settings)
    return settings


def app_settings_config() -> SettingsConfigDict:
    """The model config of an application's settings: the framework's prefix and reading."""
    return SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_ignore_empty=True, extra="ignore", frozen=True
    )


def installed_app_settings() -> dict[str, type[BaseSettings]]:
    """Every registered application settings model (group ``accord.settings``), by name."""
    from importlib.metadata import entry_points  # a start-time cost only where it is needed

    found: dict[str, type[BaseSettings]] = {}
    for ep in entry_points(group=APP_SETTINGS_GROUP):
        model = ep.load()
        if isinstance(model, type) and issubclass(model, BaseSettings):
            found[ep.name] = model
    return found


_found: tuple[AccordSettings, Path, Path] | None = None


def data_dir_path() -> Path:
    """The data directory in use (absolute, not created): ``ACCORD_DATA_DIR`` when set; else the
    project's, found from the current directory up as git finds ``.git``: the ``.accord`` of the
    nearest folder that has an app file or a ``.accord``; else ``./.accord``.

    Why a walk: a command run from a subfolder of a project (an example's folder, a test's)
    must use the project's development secret, not make a new one that the mesh refuses
    (issue #36). Why ``./.accord`` when no project is found, not a per-user folder: it is the
    documented default (the first `accord up` anywhere makes the project's ``.accord``), and
    one per-user secret would join unrelated projects' meshes and mix their databases.
    """
    global _found
    settings = current()
    if "data_dir" in settings.model_fields_set:
        return settings.data_dir.absolute()
    here = Path.cwd()
    found = _found
    if found is not None and found[0] is settings and found[1] == here:
        return found[2]  # one walk per process and folder: a service asks on every request
    chosen = (project_folder(here) or here) / DATA_DIR_NAME
    _found = (settings, here, chosen)
    return chosen


def project_folder(here: Path) -> Path | None:
    """The project ``here`` is in, found as git finds ``.git``: the nearest folder, from
    ``here`` up, that has an app file or a ``.accord``; None when no folder has either. Its
    ``.accord`` is the data directory (:func:`data_dir_path`), its app file the application
    `accord up` and `accord contract-test` run (accord.protocol.app_file.project_app_file)."""
    for folder in (here, *here.parents):
        if (folder / DATA_DIR_NAME).is_dir() or (folder / APP_FILE).is_file():
            return folder
    return None


def data_dir() -> Path:
    """The data directory (:func:`data_dir_path`). Created 0700 on first use."""
    return private_dir(data_dir_path())


def database_url(service: str) -> str:
    """The service's database: ``ACCORD_DATABASE_URL`` (PostgreSQL) or a SQLite file.

    One PostgreSQL URL serves every service (each keeps its own tables); SQLite files are one
    per service so that `accord up` needs no server.
    """
    url = current().database_url
    if url:
        return url
    return f"sqlite:///{data_dir() / f'{service}.db'}"


_URL: Final = re.compile(r"^https?://\S+$")
_FIELD_VARIABLES: Final = frozenset(env_name(name) for name in AccordSettings.model_fields)


def service_url_env(name: str) -> str:
    """The variable a service's base URL is read from: ``desk`` -> ``ACCORD_DESK_URL``,
    ``hello-desk`` -> ``ACCORD_HELLO_DESK_URL``."""
    return env_name(f"{name.replace('-', '_').replace('.', '_')}_url")


def given_service_url(name: str) -> str | None:
    """``ACCORD_<NAME>_URL`` (no trailing slash) when it is set, else None; SettingsError when
    it is not an http(s) URL.

    Services' URLs are no fields of :class:`AccordSettings`: the framework knows no service by
    name. An application's services are named by its app file (docs/apps.md); `accord up` and
    `accord serve --app` set these variables from it, and they are read and checked here, the
    one reader of the environment."""
    variable = service_url_env(name)
    found = os.environ.get(variable, "").strip()
    if not found:
        return None
    if _URL.fullmatch(found) is None:
        raise SettingsError(f"{variable}: not an http(s) URL (got {found!r})")
    return found.rstrip("/")


def service_url(name: str) -> str:
    """Base URL of a mesh service: ``ACCORD_<NAME>_URL``, else the port the installed service
    of that name declares (``ServiceSpec.port``) on 127.0.0.1; SettingsError when neither."""
    given = given_service_url(name)
    if given is not None:
        return given
    port = _declared_port(name)
    if not port:
        variable = service_url_env(name)
        raise SettingsError(f"{variable} is not set: the URL of service {name!r} is not known")
    return f"http://{DEFAULT_HOST}:{port}"


_ports: dict[str, int] = {}


def _declared_port(name: str) -> int:
    """The port of the installed service ``name`` (0: none, or it declares none). Looked up
    once per process: the service's module is imported to read it."""
    if name not in _ports:
        from accord.protocol.service import find_service  # it imports this module

        spec = find_service(name)
        _ports[name] = spec.port if spec is not None else 0
    return _ports[name]


@dataclass(frozen=True)
class ServeOptions:
    host: str = DEFAULT_HOST
    port: int = 0
    database_url: str | None = None
    # `accord serve --auth none` (development, loopback only): callers without a credential
    # are served as the anonymous principal (accord.protocol.auth.anonymous).
    auth_none: bool = False
    # `accord serve --public-url`: the URL clients reach the service at when it is not the one
    # it binds (a replica behind a load balancer: `accord cluster`); its Agent Card names it.
    public_url: str | None = None
    # The tool servers served in the same process, for the tool clients the service builds:
    # set by the in-process Runner (accord.agents.runner.inprocess); a served service has none.
    in_process: InProcessServers | None = None
