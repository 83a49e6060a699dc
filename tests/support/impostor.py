"""A program on a port that answers ``/healthz`` as some other service (a port collision)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def impostor(port: int, service: str) -> Iterator[None]:
    """Serve ``{"status": "ok", "service": service}`` on 127.0.0.1:``port`` until the block ends."""
    body = json.dumps({"status": "ok", "service": service}).encode()

    class Answer(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return None  # quiet

    server = ThreadingHTTPServer(("127.0.0.1", port), Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
