"""build_console_app: the web console's Starlette app (pages, static files, health).

Why the browser calls the orchestrator itself, and the console server is only a file server:

- No backdoor by construction. The console server has no route that reads or changes a task;
  the pages call the orchestrator's public API (JSON-RPC ``SendStreamingMessage``, ``GetTask``,
  ``ListTasks``, ``SendMessage`` with skill ``refund.approve``, ``GET /approvals``) exactly as
  `accord refund`, `accord approve` and `accord tasks` do, with the user's own token: the same
  roles, tenancy, rate limits and refusals apply, and nothing the console ships can widen them.
- No token on the console server. The token lives in the tab's ``sessionStorage`` and goes in
  an ``Authorization`` header to the orchestrator only (the CSP's ``connect-src`` names no other
  origin). A proxy would have to hold and forward every user's token, and stream SSE through.
- CSRF-safe. Nothing is authorised by a cookie: the only cookie is the language. A forged
  cross-site request carries no bearer token, so the orchestrator refuses it; the console's own
  routes are all ``GET`` and change nothing.

The orchestrator lets exactly the console's origin (``ACCORD_CONSOLE_URL``) call it from a
browser (CORS without credentials: accord.protocol.a2a.server.cors).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from accord.agents.console.language import (
    LANGUAGE_COOKIE,
    LANGUAGE_QUERY,
    LANGUAGES,
    choose,
    words,
)
from accord.agents.console.security_headers import PAGE_CACHE, SecurityHeaders
from accord.agents.console.workflows import refund_graph
from accord.contracts.keys import HEALTH_PATH
from accord.protocol.a2a.origins import origin_of
from accord.runtime.workflow import Graph

HERE: Final = Path(__file__).parent
POLL_INTERVAL_MS: Final = 2000
"""How often the approver page asks ``GET /approvals`` (and a customer's page, a task waiting
for an approver, ``GetTask``): the public API has no event stream over a list, so the pages
poll, and say so. One approver tab makes 0.5 requests/s, far under the per-person rate limit."""
LANGUAGE_COOKIE_AGE_S: Final = 365 * 86400
PAGES: Final = {  # path -> (template, its one script)
    "/": ("signin.html", "signin.js"),
    "/customer": ("customer.html", "customer.js"),
    "/approver": ("approver.html", "approver.js"),
    "/workflow": ("workflow.html", "workflow.js"),
}


@dataclass(frozen=True, slots=True)
class ConsoleConfig:
    orchestrator_url: str  # as the user's browser reaches it
    # The workflow drawn for a request (the approver's case, the workflow page): the runtime's
    # own graph; None is the refund assistant's current one (workflows.py).
    workflow: Graph | None = None


def _json_block(value: Any) -> str:
    """JSON for a ``<script type="application/json">`` block: read by a script, never run (so
    the CSP allows it); "<" escaped so no text can close the block."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")


def build_console_app(config: ConsoleConfig) -> Starlette:
    templates = Jinja2Templates(directory=HERE / "templates")  # autoescapes .html
    api = config.orchestrator_url.rstrip("/")
    api_origin = str(origin_of(api))
    workflow_json = _json_block((config.workflow or refund_graph()).describe())

    async def page(request: Request) -> Response:
        query = request.query_params.get(LANGUAGE_QUERY)
        language = choose(
            query, request.cookies.get(LANGUAGE_COOKIE), request.headers.get("accept-language")
        )
        table = words(language)
        context: dict[str, Any] = {
            "lang": language,
            "other_lang": next(x for x in LANGUAGES if x != language),
            "t": table,
            "words_json": _json_block(table),
            "workflow_json": workflow_json,
            "script": PAGES[request.url.path][1],
            "orchestrator": api,
            "poll_ms": POLL_INTERVAL_MS,
            "path": request.url.path,
        }
        response = templates.TemplateResponse(request, PAGES[request.url.path][0], context)
        response.headers["Cache-Control"] = PAGE_CACHE
        response.headers["Content-Language"] = language
        if query in LANGUAGES:
            response.set_cookie(
                LANGUAGE_COOKIE,
                language,
                max_age=LANGUAGE_COOKIE_AGE_S,
                httponly=True,
                samesite="strict",
            )
        return response

    async def healthz(_: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "service": "console"})

    routes = [
        *(Route(path, page, methods=["GET"]) for path in PAGES),
        Route(HEALTH_PATH, healthz, methods=["GET"]),
        Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"),
    ]
    return Starlette(routes=routes, middleware=[Middleware(SecurityHeaders, api_origin=api_origin)])
