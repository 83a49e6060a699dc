"""What a node sees while it runs, and how it asks a person for input or approval."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.status import WaitingReason
from accord.runtime.workflow.spending import Tally, add_into


@dataclass(frozen=True, slots=True)
class Answer:
    """The value given to `Runtime.resume`, and the principal who gave it."""

    value: Any
    principal: str | None


class InterruptSignal(BaseException):
    """Raised by `NodeContext.interrupt` to unwind the node until an answer comes.

    A BaseException so that a node's ``except Exception`` cannot swallow it by accident.
    """

    def __init__(
        self, index: int, reason: WaitingReason, payload: Any, timeout_s: float | None
    ) -> None:
        super().__init__(reason.value)
        self.index = index
        self.reason = reason
        self.payload = payload
        self.timeout_s = timeout_s


async def _open_here() -> None:
    """A context with no log behind it (a node test's): nothing can end it elsewhere."""


@dataclass
class NodeContext:
    """One run (attempt) of one node.

    ``inputs`` holds the outputs of the predecessors that triggered this node; ``outputs``
    the latest output of every node that has finished so far. ``state`` is a scratch dict
    kept in memory for this attempt only, e.g. the id of a child task the cancel hook must
    cancel; it is not durable.
    """

    workflow_id: str
    node: str
    input: Any
    inputs: Mapping[str, Any]
    outputs: Mapping[str, Any]
    attempt: int
    answers: Mapping[int, Answer] = field(default_factory=dict)
    timed_out: frozenset[int] = frozenset()
    error: AccordError | None = None  # set on an on_error node: the failure that led here
    state: dict[str, Any] = field(default_factory=dict)
    waiting_on: Any = None  # for a cancel hook of a waiting node: its interrupt's payload
    # The workflow's spending (shared by its running attempts) and this attempt's, recorded
    # with the event that ends the attempt (spending.py).
    tally: Tally = field(default_factory=Tally)
    spent: dict[str, int] = field(default_factory=dict)
    # Raises CANCELED if the log says the workflow has ended (canceled through another
    # replica): the runner learns it only at its next append, too late for a write made before.
    ensure_open: Callable[[], Awaitable[None]] = _open_here
    _asked: int = 0

    def spend(self, kind: str, amount: int) -> None:
        """Record that this attempt spent ``amount`` of ``kind`` (negative: gave back part of
        a reservation). The caller checks its limit first, against ``tally.total(kind)``."""
        if amount:
            add_into(self.spent, {kind: amount})
            add_into(self.tally.running, {kind: amount})

    @property
    def resume(self) -> Answer | None:
        """The latest answer this node has received (None before any interrupt)."""
        return self.answers[max(self.answers)] if self.answers else None

    def interrupt(
        self, reason: WaitingReason, payload: Any = None, timeout_s: float | None = None
    ) -> Answer:
        """Wait for input or approval; returns the answer when the node runs again.

        The first time, this unwinds the node and the workflow waits (holding no memory).
        `Runtime.resume(workflow_id, interrupt_id, value, principal)` then runs the node
        again from the top, and this same call returns the answer. Several calls in one node
        are matched by their order. If ``timeout_s`` passes first, the call raises
        RETRYABLE_TIMEOUT instead (catch it to route, or let the retry policy ask again).
        """
        index = self._asked
        self._asked += 1
        answer = self.answers.get(index)
        if answer is not None:
            return answer
        if index in self.timed_out:
            raise AccordError(
                ErrorCode.RETRYABLE_TIMEOUT,
                "no answer came before the deadline",
                {"node": self.node, "reason": reason.value},
            )
        raise InterruptSignal(index, reason, payload, timeout_s)
