"""What a child reports it spent, checked by its caller (ENV-010): unit rules; the mesh test
with a lying peer is tests/security/test_peer_spending.py."""

from __future__ import annotations

from typing import Any

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import SPENT_META_KEY, TOOL_CALLS_SPENT_META_KEY
from accord.protocol.a2a.spent_report import checked_spent

GRANT = (10, 5)


def _report(units: Any, calls: Any = 0) -> dict[str, Any]:
    return {SPENT_META_KEY: units, TOOL_CALLS_SPENT_META_KEY: calls}


@pytest.mark.parametrize(
    ("units", "calls", "expected"), [(0, 0, (0, 0)), (3, 2, (3, 2)), (10.0, 5.0, (10, 5))]
)
def test_a_report_within_the_grant_counts(
    units: Any, calls: Any, expected: tuple[int, int]
) -> None:
    assert checked_spent(_report(units, calls), grant=GRANT, agent="peer") == expected


@pytest.mark.parametrize(
    "report",
    [
        _report(-100000),
        _report(11),
        _report(2.5),
        _report("3"),
        _report(True),
        _report(float("nan")),
        _report(1, -1),
        _report(1, 6),
        {TOOL_CALLS_SPENT_META_KEY: 0},  # a task that worked says what it spent
    ],
)
def test_a_report_outside_the_rules_is_a_contract_violation(report: dict[str, Any]) -> None:
    with pytest.raises(AccordError) as broken:
        checked_spent(report, grant=GRANT, agent="peer")
    assert broken.value.code is ErrorCode.CONTRACT_VIOLATION
    assert broken.value.details["requirement"] == "ENV-010"
    assert broken.value.details["agent"] == "peer"


def test_spending_is_never_undone_across_turns() -> None:
    with pytest.raises(AccordError):
        checked_spent(_report(2, 1), grant=GRANT, agent="peer", before=(3, 1))
    assert checked_spent(_report(4, 1), grant=GRANT, agent="peer", before=(3, 1)) == (4, 1)


def test_a_task_that_did_no_work_may_say_nothing() -> None:
    assert checked_spent({}, grant=GRANT, agent="peer", worked=False) == (0, 0)
