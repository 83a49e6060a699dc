"""A member's own kit script (scripts/kit.sh: what `make ts-member`, `make go-member`, ... run),
run with ``--junit`` and read back: which of the kit's checks passed, were skipped or failed.
Every member test in another language judges its member from this."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class KitRun:
    passed: frozenset[str]
    skipped: frozenset[str]
    failed: tuple[str, ...]
    done: subprocess.CompletedProcess[str]

    def assert_clean(self, expected_skips: frozenset[str] | set[str] = frozenset()) -> None:
        """No failure, exactly the listed skips, and the script's own exit status 0."""
        assert self.failed == (), self.done.stdout[-6000:]
        assert self.skipped == expected_skips, sorted(self.skipped ^ set(expected_skips))
        assert self.done.returncode == 0, self.done.stderr[-3000:]


def run_member_kit(script: Path, env: Mapping[str, str], junit: Path, timeout_s: float) -> KitRun:
    done = subprocess.run(
        [str(script), "--junit", str(junit)],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    assert junit.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    passed, skipped, failed = set(), set(), []
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("name", "")
        if case.find("failure") is not None:
            failed.append(name)
        elif case.find("skipped") is not None:
            skipped.add(name)
        else:
            passed.add(name)
    return KitRun(frozenset(passed), frozenset(skipped), tuple(failed), done)
