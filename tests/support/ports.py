"""Ports for the services tests start: never the same twice in a run, never the kernel's.

``bind(("127.0.0.1", 0))`` then ``close()`` hands back a port the kernel may hand out again at
once: a mesh once got the same port for its policy agent and its orchestrator (the
orchestrator could not bind, the policy agent answered its health check, and the test waited
for an orchestrator that was not there). Here each pytest process takes ports from its own
slot of a range below the kernel's ephemeral range (32768-60999 here: ``bind(0)`` and outgoing
connections only use that), in order from a random start, skipping any port something holds,
and never hands one out twice (until its slot is used up, which a run does not reach).
"""

from __future__ import annotations

import os
import random
import socket
import threading
from typing import Final

BASE: Final = 12_000
SLOT: Final = 2_000  # ports per pytest process; ten workers fit below 32768
SLOTS: Final = 10

_lock = threading.Lock()
_given: set[int] = set()


def _slot() -> int:
    """This process's slot: its pytest-xdist worker number (``gw3`` -> 3), else 0."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    digits = worker.removeprefix("gw")
    return int(digits) % SLOTS if digits.isdigit() else 0


_first: Final = BASE + _slot() * SLOT
_next = random.randrange(SLOT)  # another run on this machine starts elsewhere in the slot


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port() -> int:
    """A port nothing on this machine holds now, not given to anyone in this run before."""
    global _next
    with _lock:
        for _ in range(SLOT):
            port = _first + _next % SLOT
            _next += 1
            if port not in _given and _bindable(port):
                _given.add(port)
                return port
        _given.clear()  # the slot went round once: the services of its first ports are gone
    return free_port()
