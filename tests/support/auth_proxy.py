"""A credential-adding reverse proxy, for external clients that cannot send one.

The MCP conformance suite (``conformance server --url``) has no option for a header, and Accord's
tool servers refuse requests without a credential. This proxy stands where a gateway would: it
forwards every request unchanged (method, path, query, body and Host header, so DNS-rebinding
checks still see what the client sent) and sets ``Authorization: Bearer <token>``::

    AUTH_PROXY_TOKEN=T python -m tests.support.auth_proxy --port P --upstream http://127.0.0.1:8710

Test-only code: nothing in the product imports it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from tests.support.processes import Service, free_port, wait_healthy

TOKEN_ENV = "AUTH_PROXY_TOKEN"
HOP_BY_HOP = frozenset(
    {"authorization", "connection", "content-length", "transfer-encoding", "keep-alive"}
)


def build_app(upstream: str, token: str) -> Starlette:
    client = httpx.AsyncClient(base_url=upstream, timeout=60.0)

    async def forward(request: Request) -> Response:
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP]
        headers.append(("authorization", f"Bearer {token}"))
        sent = client.build_request(
            request.method,
            request.url.path + (f"?{request.url.query}" if request.url.query else ""),
            headers=headers,
            content=await request.body(),
        )
        answer = await client.send(sent, stream=True)
        kept = {k: v for k, v in answer.headers.items() if k.lower() not in HOP_BY_HOP}

        async def body() -> AsyncIterator[bytes]:
            try:
                async for chunk in answer.aiter_raw():
                    yield chunk
            finally:
                await answer.aclose()

        return StreamingResponse(body(), status_code=answer.status_code, headers=kept)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await client.aclose()

    methods = ["GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD"]
    return Starlette(routes=[Route("/{path:path}", forward, methods=methods)], lifespan=lifespan)


@contextmanager
def running_proxy(upstream: str, token: str, log_dir: Path) -> Iterator[Service]:
    """The proxy as its own process, healthy (its /healthz is the upstream's) until the block
    ends."""
    import subprocess
    import sys

    port = free_port()
    log_path = log_dir / f"auth-proxy-{port}.log"
    cmd = [sys.executable, "-m", "tests.support.auth_proxy", "--port", str(port)]
    cmd += ["--upstream", upstream]
    env = {**os.environ, TOKEN_ENV: token}  # not on the command line, where ps shows it
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    service = Service(name="auth-proxy", port=port, process=proc, log_path=log_path)
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
    with contextlib.suppress(KeyboardInterrupt):
        app = build_app(args.upstream, os.environ[TOKEN_ENV])
        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
