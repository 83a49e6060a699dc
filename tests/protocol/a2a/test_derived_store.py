"""DerivedTaskStore over a TaskSource: reads are the source's, writes mean what they say, and a
hostile page token is a typed error (the mesh tests run it over the real workflow log)."""

from __future__ import annotations

import base64
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.types import ListTasksRequest, Task, TaskState, TaskStatus
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import MessageToDict

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.keys import STATUS_META_KEY
from accord.contracts.status import ContractState, Status
from accord.protocol.a2a.server.derived_store import (
    DerivedTaskStore,
    decode_page_token,
    encode_page_token,
    task_of,
)
from accord.protocol.a2a.server.task_view import ServerTaskView, ViewMessage, ViewPage, ViewQuery
from accord.protocol.a2a.wire import failed_status, read_contract_state

AT = datetime(2026, 12, 1, tzinfo=UTC)


class Owner(User):
    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self._name


def ctx(owner: str) -> ServerCallContext:
    return ServerCallContext(user=Owner(owner))


class Source:
    """An in-memory record of views, by scope."""

    def __init__(self) -> None:
        self.views: dict[str, tuple[str, ServerTaskView]] = {}
        self.refused: list[ServerTaskView] = []
        self.views_built = 0

    async def get_view(self, task_id: str, scope: str) -> ServerTaskView | None:
        self.views_built += 1
        found = self.views.get(task_id)
        return found[1] if found is not None and found[0] == scope else None

    async def has_task(self, task_id: str, scope: str) -> bool:
        found = self.views.get(task_id)
        return found is not None and found[0] == scope

    async def list_views(self, scope: str, query: ViewQuery) -> ViewPage:
        mine = sorted(
            (v for s, v in self.views.values() if s == scope), key=lambda v: v.order, reverse=True
        )
        if query.after is not None:
            mine = [v for v in mine if v.order < query.after]
        return ViewPage(views=mine[: query.limit], total=len(mine))

    async def cancel(self, task_id: str, scope: str) -> ServerTaskView | None:
        view = await self.get_view(task_id, scope)
        if view is None:
            return None
        error = AccordError(ErrorCode.CANCELED, "the task was canceled by its caller")
        state = ContractState(status=Status.FAILED, error_code=ErrorCode.CANCELED)
        done = replace(
            view,
            state=state,
            status_message=ViewMessage(
                "m-cancel", "agent", error.message, state=state, error=error
            ),
        )
        self.views[task_id] = (scope, done)
        return done

    async def record_refused(self, view: ServerTaskView, scope: str) -> None:
        self.refused.append(view)
        self.views[view.task_id] = (scope, view)


def running(task_id: str, at: float = 0.0) -> ServerTaskView:
    return ServerTaskView(
        task_id=task_id,
        context_id="c",
        state=ContractState(status=Status.RUNNING),
        updated_at=AT,
        sort_key=AT.timestamp() + at,
    )


def holding(task_id: str, owner: str = "app/C-01") -> tuple[Source, DerivedTaskStore]:
    """A store over a source that holds one running task of ``owner``."""
    source = Source()
    source.views[task_id] = (owner, running(task_id))
    return source, DerivedTaskStore(source)


def task_in(task_id: str, state: TaskState.ValueType) -> Task:
    return Task(id=task_id, context_id="c", status=TaskStatus(state=state))


async def test_reads_come_from_the_source_and_are_scoped() -> None:
    _, store = holding("t1")
    found = await store.get("t1", ctx("app/C-01"))
    assert found is not None
    assert found.status.state == TaskState.TASK_STATE_WORKING
    assert await store.get("t1", ctx("app/C-02")) is None  # another owner's does not exist


async def test_a_cancel_write_cancels_the_record_and_answers_with_its_status() -> None:
    _, store = holding("t1")
    given = task_in("t1", TaskState.TASK_STATE_CANCELED)
    await store.save(given, ctx("app/C-01"))
    state, error = read_contract_state(given.status)  # the object the SDK answers with
    assert state.status is Status.FAILED
    assert error is not None
    assert error.code is ErrorCode.CANCELED


async def test_progress_is_not_stored_twice_and_a_refusal_is_recorded() -> None:
    source = Source()
    store = DerivedTaskStore(source)
    await store.save(task_in("t2", TaskState.TASK_STATE_WORKING), ctx("app/C-01"))
    assert source.views == {}
    refusal = AccordError(ErrorCode.INVALID_INPUT, "bad order id", {"field": "order_id"})
    failed = Task(
        id="t2", context_id="c", status=failed_status(refusal, task_id="t2", context_id="c")
    )
    await store.save(failed, ctx("app/C-01"))
    assert [v.task_id for v in source.refused] == ["t2"]
    assert source.refused[0].state.error_code is ErrorCode.INVALID_INPUT


async def test_a_finished_task_the_record_holds_is_neither_viewed_nor_recorded() -> None:
    """The SDK saves every task that ends; the record already has it (its own outcome)."""
    source, store = holding("t3")
    await store.save(task_in("t3", TaskState.TASK_STATE_COMPLETED), ctx("app/C-01"))
    assert source.views_built == 0
    assert source.refused == []


class ViewsOnly:
    """A TaskSource with the four methods it must have and not the optional has_task."""

    def __init__(self, inner: Source) -> None:
        self.inner = inner

    async def get_view(self, task_id: str, scope: str) -> ServerTaskView | None:
        return await self.inner.get_view(task_id, scope)

    async def list_views(self, scope: str, query: ViewQuery) -> ViewPage:
        return await self.inner.list_views(scope, query)

    async def cancel(self, task_id: str, scope: str) -> ServerTaskView | None:
        return await self.inner.cancel(task_id, scope)

    async def record_refused(self, view: ServerTaskView, scope: str) -> None:
        await self.inner.record_refused(view, scope)


async def test_a_source_without_has_task_is_asked_for_the_view() -> None:
    inner, _ = holding("held")
    store = DerivedTaskStore(ViewsOnly(inner))
    for task_id in ("held", "new"):
        await store.save(task_in(task_id, TaskState.TASK_STATE_COMPLETED), ctx("app/C-01"))
    assert inner.views_built == 2
    assert [v.task_id for v in inner.refused] == ["new"]  # the one the record did not have


async def test_pages_neither_repeat_nor_skip_tasks_of_one_commit_time() -> None:
    source = Source()
    for i in range(5):
        source.views[f"t{i}"] = ("o", running(f"t{i}", at=0.1 if i < 3 else 0.2))
    store = DerivedTaskStore(source)
    seen: list[str] = []
    token = ""
    while True:
        page = await store.list(ListTasksRequest(page_size=2, page_token=token), ctx("o"))
        seen += [t.id for t in page.tasks]
        token = page.next_page_token
        if not token:
            break
    assert sorted(seen) == [f"t{i}" for i in range(5)]
    assert len(seen) == 5


@pytest.mark.parametrize(
    "token",
    [
        "not base64 !",
        base64.urlsafe_b64encode(b'[1e999, "t"]').decode(),  # infinite time
        base64.urlsafe_b64encode(b'{"ts": 1}').decode(),
        base64.urlsafe_b64encode(b'["now", "t"]').decode(),
        base64.urlsafe_b64encode(b"\xff\xfe\xfd").decode(),
    ],
)
async def test_a_hostile_page_token_is_invalid_params(token: str) -> None:
    with pytest.raises(InvalidParamsError):
        decode_page_token(token)
    with pytest.raises(InvalidParamsError):
        await DerivedTaskStore(Source()).list(ListTasksRequest(page_token=token), ctx("o"))


def test_a_page_token_round_trips_the_exact_order() -> None:
    order = (1764576000.123456789, "task-9")
    assert decode_page_token(encode_page_token(order)) == order


def test_a_task_carries_its_status_in_its_metadata_and_no_message_without_a_part() -> None:
    """A2A 1.0 requires a part in every message (#32): a view's message with nothing to say is
    left out, and the contract status is in the task's metadata, where readers look first."""
    working = ContractState(status=Status.RUNNING)
    view = replace(
        running("t5"),
        status_message=ViewMessage("m-2", "agent", state=working, node="policy"),
        history=[
            ViewMessage("m-0", "user", "refund O-1"),
            ViewMessage("m-1", "agent", "checking the order", state=working, node="lookup"),
        ],
    )
    task = task_of(view)
    assert not task.status.HasField("message")
    assert [m.message_id for m in task.history] == ["m-0", "m-1"]
    assert all(m.parts for m in task.history)
    meta = MessageToDict(task.metadata)[STATUS_META_KEY]
    assert meta["status"] == "running"
    assert meta["node"] == "policy"
    failed = replace(
        view, state=ContractState(status=Status.FAILED, error_code=ErrorCode.NOT_FOUND)
    )
    state, error = read_contract_state(task_of(failed).status, task_of(failed).metadata)
    assert state.error_code is ErrorCode.NOT_FOUND  # a failure without a message keeps its code
    assert error is not None
