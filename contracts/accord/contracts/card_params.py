"""The params of Accord's card extensions, written and read by their name and, while the
contract's major is 1, by the snake_case name contract 1.0 gave them
(:data:`accord.contracts.keys.DEPRECATED_CARD_PARAMS`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accord.contracts import compat
from accord.contracts.keys import DEPRECATED_CARD_PARAMS


@compat.kept_for(compat.CARD_SNAKE_CASE_PARAMS)
def card_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with each renamed param also under its old name, for readers of contract 1.0."""
    written = dict(params)
    for name, old in DEPRECATED_CARD_PARAMS.items():
        if name in params:
            written[old] = params[name]
    return written


def card_param(params: Mapping[str, Any], name: str) -> Any:
    """The param ``name`` of a card extension: by its name, else by its old one (None: absent)."""
    if name in params:
        return params[name]
    old = DEPRECATED_CARD_PARAMS.get(name)  # compat.CARD_SNAKE_CASE_PARAMS
    return params.get(old) if old is not None else None
