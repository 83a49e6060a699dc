"""The package's public names: sorted, and each one importable from it."""

from __future__ import annotations

import accord.runtime.workflow as workflow


def test_all_is_sorted_and_complete() -> None:
    assert workflow.__all__ == sorted(workflow.__all__)
    for name in workflow.__all__:
        assert getattr(workflow, name) is not None
