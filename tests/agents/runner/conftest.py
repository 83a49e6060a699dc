"""A fresh data directory (ledgers, event log, signing secret) and an in-process Runner."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from accord.agents.runner import Runner

SECRET = "runner-test-secret-0123456789abcdef0123456789abcdef"


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test on its own seeded ledgers; services at their default URLs (in process)."""
    monkeypatch.setenv("ACCORD_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ACCORD_JWT_SECRET", SECRET)
    for name in ("POLICY", "RISK", "COMMERCE", "PAYMENTS", "ORCHESTRATOR"):
        monkeypatch.delenv(f"ACCORD_{name}_URL", raising=False)
    for name in ("ACCORD_TOOLS_CONFIG", "ACCORD_DATABASE_URL", "ACCORD_FAULTS", "MODEL_FAST"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.fixture
async def runner(data_dir: Path) -> AsyncIterator[Runner]:
    async with Runner(in_process=True) as started:
        yield started
