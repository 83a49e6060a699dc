"""The names a credential carries (tenant app, roles): constants with no imports, so that a
command line that only shows its options (`accord token --help`) does not load PyJWT and the
settings model to print a default (#16). accord.protocol.auth re-exports them."""

from __future__ import annotations

from typing import Final

DEFAULT_APP: Final = "accord"
ROLE_SERVICE: Final = "service"
ROLE_CUSTOMER: Final = "customer"
ROLE_APPROVER: Final = "approver"
