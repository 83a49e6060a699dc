"""A private event loop on a daemon thread, for the Runner's synchronous ``run()``.

The durable runtime, the tool sessions and the HTTP pools belong to one event loop; a sync
caller gets one loop for the Runner's whole life (not ``asyncio.run`` per call, which would
tear them down every time).

Stopping does what ``asyncio.run`` does at its end: cancel the tasks still pending (a library
may leave a watcher running: sse-starlette's shutdown watcher polls until its process-wide
flag is set), let them finish, close async generators, then close the loop. Without it the
interpreter destroys them at exit and prints "Task was destroyed but it is pending!".
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures.thread  # noqa: F401  (its exit hook must be registered before ours)
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Portal:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="accord-runner", daemon=True
        )
        self._thread.start()

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.call(_cancel_pending())
        self.call(self.loop.shutdown_asyncgens())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


async def _cancel_pending() -> None:
    current = asyncio.current_task()
    pending = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


def at_interpreter_exit(callback: Callable[[], None]) -> None:
    """Run ``callback`` when the main thread finishes, BEFORE the interpreter shuts down the
    thread pools: closing a Runner runs its services' lifespans, which use
    ``asyncio.to_thread`` (SQLite), and a plain ``atexit`` hook runs after
    ``concurrent.futures`` refuses new work ("cannot schedule new futures after interpreter
    shutdown"). ``threading._register_atexit`` is the hook concurrent.futures itself uses
    (Python 3.9+); hooks run newest first, and concurrent.futures.thread (imported above, it
    registers at import) is older, so this one runs before the pools are shut."""
    register = getattr(threading, "_register_atexit", None)
    if register is None:  # another interpreter: the closest public hook
        atexit.register(callback)
        return
    register(callback)
