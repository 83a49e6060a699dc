"""Compatibility code, one table: what an older release (or an older peer) needs from this one,
and the release it goes away in.

Each item names a surface, what it accepts or writes, why, and the release that removes it.
The code that keeps an item references its constant: a function that is all compatibility with
``@kept_for(ITEM)``, a branch inside other code with a comment naming ``compat.ITEM``; so
``grep -rn "compat\\.ITEM"`` finds every place to delete. tests/workspace/test_compat.py fails
once the working version reaches an item's removal release (delete the item and its code), when
an item is referenced nowhere (a stale entry) or a reference names no item, and keeps the table
of docs/contract-evolution.md ("Compatibility code") in step with this one.

This module imports nothing of ours, so every distribution can mark its code with it. An
application lists its own items in a module of its own (registered under ``accord.compat``,
as the demo application's contract distribution does), so the framework's table names no
application. Storage
migrations are not listed: they are the storage layer's own upgrade path and stay.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Final, TypeVar

_F = TypeVar("_F", bound=Callable[..., object])


class Surface(StrEnum):
    """Where an older release meets this one."""

    A2A_WIRE = "A2A wire"
    CONTRACTS = "contracts"
    AUTH = "tokens and auth"
    SETTINGS = "settings"
    WORKFLOW_LOG = "workflow log"
    CLI = "command line"


@dataclass(frozen=True)
class CompatItem:
    """One piece of compatibility: ``removed_in`` is the release whose code no longer has it."""

    id: str
    surface: Surface
    accepts: str
    why: str
    removed_in: str


# -- A2A wire ---------------------------------------------------------------------------------

CARD_SNAKE_CASE_PARAMS: Final = CompatItem(
    id="card-snake-case-params",
    surface=Surface.A2A_WIRE,
    accepts="card extension params also written, and read, under contract 1.0's snake_case "
    "names (`agent_contract_version`, `waiting_reasons`, ...; keys.DEPRECATED_CARD_PARAMS)",
    why="readers of 0.1 know only the snake_case names; removing them is mesh contract 2.0",
    removed_in="0.4.0",
)
STATUS_SNAKE_CASE_WAITING_REASON: Final = CompatItem(
    id="status-snake-case-waiting-reason",
    surface=Surface.A2A_WIRE,
    accepts="readers take `waiting_reason` (contract 1.0's spelling of `waitingReason`) from "
    "status metadata when the new key is absent; agents no longer write it (mesh contract 2.0)",
    why="agents of 0.1 and 0.2 write both keys, and a rolling upgrade runs them beside 0.3",
    removed_in="0.4.0",
)
STATUS_REJECTED_IN_METADATA: Final = CompatItem(
    id="status-rejected-in-metadata",
    surface=Surface.A2A_WIRE,
    accepts="status metadata whose `status` is `rejected` (contract 1.2's sixth status) is read "
    "as `failed` and declined",
    why="agents of 0.2 write `rejected` for a decline; mesh contract 2.0 has five statuses",
    removed_in="0.4.0",
)
STATUS_META_IN_MESSAGE: Final = CompatItem(
    id="status-meta-in-message",
    surface=Surface.A2A_WIRE,
    accepts="readers take the status metadata (`dev.accord/status`) from the status message's "
    "metadata when the task's (or the status update's) metadata has none",
    why="agents of 0.1 and 0.2 write it only in the status message, which 0.3 sends only when "
    "it has a part to send (A2A 1.0 requires one)",
    removed_in="0.4.0",
)
CARD_ONE_CONTRACT_VERSION: Final = CompatItem(
    id="card-one-contract-version",
    surface=Surface.A2A_WIRE,
    accepts="cards still state `agentContractVersion` (one version) beside "
    "`agentContractVersions`; clients and the kit read a card that states only the one",
    why="agents and clients of 0.1 know one version per card",
    removed_in="0.4.0",
)


# -- tokens and auth --------------------------------------------------------------------------

SHARED_SECRET_SERVICE_TOKENS: Final = CompatItem(
    id="shared-secret-service-tokens",
    surface=Surface.AUTH,
    accepts="a trust-table entry's `shared_secret_until`: that service's HS256 tokens signed "
    "with the shared secret, for at most 7 days, each one logged",
    why="0.2 services sign with the shared secret: a rolling upgrade from 0.2 runs both",
    removed_in="0.4.0",
)

# -- settings ---------------------------------------------------------------------------------

JWT_PUBLIC_KEY_SETTING: Final = CompatItem(
    id="jwt-public-key-setting",
    surface=Surface.SETTINGS,
    accepts="`ACCORD_JWT_PUBLIC_KEY` (one PEM key, matching any `kid`) beside `ACCORD_JWKS`",
    why="deployments configured before `ACCORD_JWKS` existed name one key",
    removed_in="0.4.0",
)


# -- command line -----------------------------------------------------------------------------

TOKEN_REVOKE_FLAG: Final = CompatItem(
    id="token-revoke-flag",
    surface=Surface.CLI,
    accepts="`accord token --revoke JTI`, the older spelling of `accord token revoke --jti JTI`",
    why="scripts written for 0.1 and 0.2",
    removed_in="0.4.0",
)

COMPAT_GROUP: Final = "accord.compat"  # entry points: NAME = an application's compat module


def _items_of(namespace: Mapping[str, object]) -> dict[str, CompatItem]:
    return {name: value for name, value in namespace.items() if isinstance(value, CompatItem)}


@cache
def items() -> Mapping[str, CompatItem]:
    """Every item by its constant's name (what code references as ``compat.NAME``): the
    framework's, then each application's compat module registered under ``accord.compat``
    (its items live with the application; the table is still one)."""
    found = _items_of(globals())
    for ep in sorted(entry_points(group=COMPAT_GROUP), key=lambda e: e.name):
        for name, item in _items_of(vars(ep.load())).items():
            if found.get(name, item) is not item:
                raise ValueError(f"compat item {name} is defined twice (again in {ep.value})")
            found[name] = item
    return dict(sorted(found.items()))


def kept_for(*items: CompatItem) -> Callable[[_F], _F]:
    """Mark a function that is all compatibility: it goes when ``items`` go. Changes nothing."""

    def mark(function: _F) -> _F:
        return function

    return mark


def items_markdown() -> str:
    """The table of docs/contract-evolution.md, "Compatibility code" (a test keeps it in step)."""
    lines = ["| surface | item | accepts | goes away in |", "|---|---|---|---|"]
    for item in sorted(items().values(), key=lambda i: (list(Surface).index(i.surface), i.id)):
        accepts = item.accepts.replace("|", "\\|")
        lines.append(f"| {item.surface.value} | `{item.id}` | {accepts} | {item.removed_in} |")
    return "\n".join(lines) + "\n"


ITEMS_BEGIN: Final = "<!-- compat:begin (generated) -->\n"
ITEMS_END: Final = "<!-- compat:end -->"


def refresh_page(page: str) -> str:
    """``page`` with the generated table between its markers replaced by the current one."""
    head, rest = page.split(ITEMS_BEGIN, 1)
    _, tail = rest.split(ITEMS_END, 1)
    return head + ITEMS_BEGIN + items_markdown() + ITEMS_END + tail


if __name__ == "__main__":  # `make docs`: python -m accord.contracts.compat PAGE
    # The package's module, not this __main__ copy: an application's items are instances of
    # the package's CompatItem.
    from accord.contracts.compat import refresh_page as package_refresh_page

    target = Path(sys.argv[1])
    target.write_text(package_refresh_page(target.read_text(encoding="utf-8")), encoding="utf-8")
