"""The in-process Runner: `run()` returns the answer, `run_async()` yields events.

    runner.py     Runner: sessions, the refund workflow in this process, the event stream
    events.py     Event, Content, Part (text, thought, function_call, function_response, data)
    sessions.py   sessions isolated by (app, user, session)
    history.py    a session read back from the log: events and state (get_session, list_sessions)
    observe.py    tool, agent and model calls as events
    inprocess.py  the mesh's services inside this process (tests, embedding), no ports

See docs/runner.md.
"""

from accord.agents.runner.events import (
    Content,
    Event,
    FunctionCall,
    FunctionResponse,
    Part,
    PartKind,
    Usage,
)
from accord.agents.runner.history import Session, SessionService
from accord.agents.runner.inprocess import InProcessMesh
from accord.agents.runner.runner import Runner
from accord.agents.runner.sessions import SessionKey

__all__ = [
    "Content",
    "Event",
    "FunctionCall",
    "FunctionResponse",
    "InProcessMesh",
    "Part",
    "PartKind",
    "Runner",
    "Session",
    "SessionKey",
    "SessionService",
    "Usage",
]
