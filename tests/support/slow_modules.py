"""The suite's slowest modules and their test-seconds, for the order xdist deals them in.

Measured with ``pytest --junitxml`` (test-seconds summed per module, setup and teardown
included; this machine, the suite of 2026-12-02: 1,286 test-seconds on 4 workers, 357 s of
wall time). Only the order matters: a module dealt last
runs while the other workers are idle, so the longest go first (tests/conftest.py). A module
not listed counts 0; a stale figure costs some wall time, never a failure.
"""

from __future__ import annotations

from typing import Final

SLOW_MODULES: Final[dict[str, float]] = {
    "tests/runtime/workflow/test_crash_recovery.py": 71,
    "tests/protocol/mcp/test_tools_cli.py": 59,
    "tests/mesh/test_chaos.py": 50,
    "tests/mesh/test_cli.py": 49,
    "tests/kit/test_plugin.py": 46,
    "tests/console/test_console_browser.py": 33,
    "tests/kit/test_broken.py": 32,
    "tests/kit/test_cli.py": 29,
    "tests/telemetry/test_sdk_wrappers.py": 24,
    "tests/tools/test_payments.py": 23,
    "tests/mesh/test_replicas.py": 23,
    "tests/storage/test_rolling_upgrade.py": 28,  # alone, the release's environment cached
    "tests/storage/test_upgrade_mesh.py": 28,  # four meshes: every release on both databases
    "tests/interop/test_mcp_conformance.py": 21,
    "tests/mesh/test_crash.py": 20,
    "tests/workspace/test_service_ports.py": 20,
    "tests/mesh/test_contract_versions.py": 20,
    "tests/mesh/test_kit_repeatable.py": 20,
    "tests/protocol/a2a/test_restart.py": 19,
    "tests/agents/runner/test_runner.py": 18,
    "tests/hostile/test_fuzz.py": 12,
}
