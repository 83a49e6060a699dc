"""The suite's slowest modules and their test-seconds, for the order xdist deals them in.

Measured with ``pytest --junitxml`` (test-seconds summed per module; this machine, the suite
of 2026-12-01 before its commands were forks; the modules those forks made fast are left
out). Only the order matters: a module dealt last
runs while the other workers are idle, so the longest go first (tests/conftest.py). A module
not listed counts 0; a stale figure costs some wall time, never a failure.
"""

from __future__ import annotations

from typing import Final

SLOW_MODULES: Final[dict[str, float]] = {
    "tests/hostile/test_fuzz.py": 12,  # 259 when each case parsed every contract file
    "tests/mesh/test_chaos.py": 48,  # alone, 2026-12-02: its kill -9 run is 20 s (was 45)
    "tests/mesh/test_replicas.py": 21,  # alone, 2026-12-02: no minute waited out
    "tests/mesh/test_cli.py": 65,
    "tests/kit/test_plugin.py": 48,
    "tests/agents/workflow/test_crash_recovery.py": 44,
    "tests/agents/runner/test_runner.py": 35,
    "tests/interop/test_mcp_conformance.py": 31,
    "tests/mesh/test_kit_repeatable.py": 27,
    "tests/mesh/test_contract_versions.py": 24,
    "tests/kit/test_broken.py": 24,
    "tests/security/test_approval_scope.py": 22,
    "tests/agents/runner/test_tool_retries.py": 22,
}
