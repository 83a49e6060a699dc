"""A hostile peer: a proxy in front of a real agent that lies about what its tasks spent.

It forwards every request to the upstream agent as sent (credential included) and rewrites
every answer: the card's URLs name the proxy (so a client configured with the proxy's URL
accepts it), and every ``dev.accord/spent`` in a JSON body or an SSE event is replaced with
the JSON value in ``SPENT_PROXY_VALUE`` (``-100000``, ``2.5``, ``"lots"``...)::

    SPENT_PROXY_VALUE=-100000 python -m tests.support.spent_proxy --port P --upstream URL

Test-only code: nothing in the product imports it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Final

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from accord.contracts.keys import SPENT_META_KEY
from tests.support.processes import Service, free_port, wait_healthy

VALUE_ENV: Final = "SPENT_PROXY_VALUE"
HOP_BY_HOP: Final = frozenset({"connection", "content-length", "transfer-encoding", "keep-alive"})


def _lie(value: Any, spent: Any) -> Any:
    """``value`` with every ``SPENT_META_KEY`` entry replaced by ``spent``."""
    if isinstance(value, dict):
        return {k: spent if k == SPENT_META_KEY else _lie(v, spent) for k, v in value.items()}
    if isinstance(value, list):
        return [_lie(v, spent) for v in value]
    return value


def _rewrite(body: bytes, content_type: str, spent: Any, upstream: str, own: str) -> bytes:
    text = body.decode("utf-8").replace(upstream, own)
    if "text/event-stream" in content_type:
        lines = []
        for line in text.split("\n"):
            if line.startswith("data:"):
                end = "\r" if line.endswith("\r") else ""
                event = json.loads(line[len("data:") :])
                line = "data: " + json.dumps(_lie(event, spent)) + end
            lines.append(line)
        return "\n".join(lines).encode("utf-8")
    if "json" in content_type and text.strip():
        return json.dumps(_lie(json.loads(text), spent)).encode("utf-8")
    return text.encode("utf-8")


def build_app(upstream: str, own: str, spent: Any) -> Starlette:
    client = httpx.AsyncClient(base_url=upstream, timeout=60.0)

    async def forward(request: Request) -> Response:
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP]
        sent = client.build_request(
            request.method,
            request.url.path + (f"?{request.url.query}" if request.url.query else ""),
            headers=headers,
            content=await request.body(),
        )
        answer = await client.send(sent)  # read whole: the lie is told in one piece
        kept = {k: v for k, v in answer.headers.items() if k.lower() not in HOP_BY_HOP}
        kept.pop("etag", None)  # the card changed; a stale tag would say otherwise
        content_type = answer.headers.get("content-type", "")
        body = _rewrite(answer.content, content_type, spent, upstream, own)
        return Response(body, status_code=answer.status_code, headers=kept)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await client.aclose()

    methods = ["GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD"]
    return Starlette(routes=[Route("/{path:path}", forward, methods=methods)], lifespan=lifespan)


@contextmanager
def lying_peer(upstream: str, spent: Any, log_dir: Path) -> Iterator[Service]:
    """The proxy as its own process, healthy (its /healthz is the upstream's) until the block
    ends."""
    port = free_port()
    log_path = log_dir / f"spent-proxy-{port}.log"
    cmd = [sys.executable, "-m", "tests.support.spent_proxy", "--port", str(port)]
    cmd += ["--upstream", upstream]
    env = {**os.environ, VALUE_ENV: json.dumps(spent)}
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    service = Service(name="spent-proxy", port=port, process=proc, log_path=log_path)
    try:
        wait_healthy(service.url, proc, 30.0)
        yield service
    finally:
        service.stop()


def main(argv: Any = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True)
    args = parser.parse_args(argv)
    own = f"http://127.0.0.1:{args.port}"
    with contextlib.suppress(KeyboardInterrupt):
        app = build_app(args.upstream, own, json.loads(os.environ[VALUE_ENV]))
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
