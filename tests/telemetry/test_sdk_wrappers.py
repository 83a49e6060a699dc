"""a2a-sdk's tracing wrappers are switched off when a service is loaded with library spans off
(the SDK reads its switch once, at import, so each case is a fresh interpreter)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from accord.protocol.telemetry.sdk_wrappers import A2A_SDK_TRACING, quiet_a2a_sdk_wrappers

# What `accord serve policy` does before uvicorn starts: load the service's module, which
# imports a2a-sdk; then report which tracer the SDK's wrappers were bound to.
_PROBE = (
    "from accord.protocol.service import find_service\n"
    "assert find_service('policy') is not None\n"
    "import a2a.utils.telemetry as t\n"
    "print(t.otel_enabled)\n"
)


def _sdk_tracing_after_loading_a_service(**env: str) -> bool:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in (A2A_SDK_TRACING, "ACCORD_OTEL_LIBRARY_SPANS")
    }
    out = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return {"True": True, "False": False}[out.stdout.strip()]


def test_a_loaded_service_binds_the_sdk_wrappers_to_nothing_by_default() -> None:
    assert _sdk_tracing_after_loading_a_service() is False


def test_library_spans_keep_the_sdk_wrappers() -> None:
    assert _sdk_tracing_after_loading_a_service(ACCORD_OTEL_LIBRARY_SPANS="true") is True


def test_an_explicit_sdk_switch_wins() -> None:
    assert _sdk_tracing_after_loading_a_service(**{A2A_SDK_TRACING: "true"}) is True


@pytest.mark.parametrize(("library_spans", "expected"), [(False, "false"), (True, None)])
def test_the_switch_is_set_only_when_library_spans_are_off(
    library_spans: bool, expected: str | None
) -> None:
    env: dict[str, str] = {}
    quiet_a2a_sdk_wrappers(library_spans, env)
    assert env.get(A2A_SDK_TRACING) == expected
