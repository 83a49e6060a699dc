"""Run fuzzed requests against one live service over one keep-alive connection."""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from tests.hostile.fuzz.mutate import deck
from tests.hostile.fuzz.oracle import problem
from tests.hostile.fuzz.targets import MCP_PROTOCOL_VERSION, Seed, health_check

CHECK_EVERY = 100
# The short run in the test command: up to 27 shuffled rounds of the 11 mutations (each kind
# >= 27 times per service) and a correct request every hundred cases. The 60 s box only ends
# it on a loaded machine: a 20 s box let a fresh-clone CI at load ~15 send 24 cases, under the
# test's floor of 50 (>= 4 rounds, so every kind is used a few times per service in any
# passing run).
SHORT_CASES = 300
SHORT_SECONDS = 60.0


@dataclass
class Report:
    sent: int = 0
    failures: list[str] = field(default_factory=list)
    by_status: dict[int, int] = field(default_factory=dict)


def budget() -> tuple[int, float]:
    """Cases and seconds per service (``ACCORD_FUZZ_CASES``, ``ACCORD_FUZZ_SECONDS``).

    The suite's default is the short run (docs/limits.md says why 300 within 60 s); ``make fuzz``
    runs 10,000."""
    return int(os.environ.get("ACCORD_FUZZ_CASES", str(SHORT_CASES))), float(
        os.environ.get("ACCORD_FUZZ_SECONDS", str(SHORT_SECONDS))
    )


def _headers(wire: str, credential: str) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {credential}", "Content-Type": "application/json"}
    if wire == "mcp":
        headers["Accept"] = "application/json, text/event-stream"
        headers["MCP-Protocol-Version"] = MCP_PROTOCOL_VERSION
    else:
        headers["A2A-Version"] = "1.0"
    return headers


def _send(http: httpx.Client, seed: Seed, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return http.request(seed.method, seed.path, content=body, headers=headers)


def run(
    base_url: str,
    make_seed: Callable[[random.Random], Seed],
    credential: str,
    seed: int,
) -> Report:
    cases, seconds = budget()
    rnd = random.Random(seed)
    report = Report()
    mutations = deck(rnd)
    deadline = time.monotonic() + seconds
    with httpx.Client(base_url=base_url, timeout=30) as http:
        while report.sent < cases and time.monotonic() < deadline:
            valid = make_seed(rnd)
            name, body, extra = next(mutations)(valid.body, rnd)
            headers = {**_headers(valid.wire, credential), **extra}
            response = _send(http, valid, body, headers)
            report.sent += 1
            report.by_status[response.status_code] = (
                report.by_status.get(response.status_code, 0) + 1
            )
            found = problem(response)
            if found is not None:
                report.failures.append(
                    f"{name} on {valid.wire} {valid.path}: {found}: {response.text[:200]!r}"
                )
            if report.sent % CHECK_EVERY == 0 or report.sent == cases:
                check = health_check(valid.wire)
                answer = _send(
                    http, check, json.dumps(check.body).encode(), _headers(check.wire, credential)
                )
                if answer.status_code != 200 or '"error"' in answer.text[:200]:
                    report.failures.append(
                        f"a correct request failed after {name}: {answer.text[:200]!r}"
                    )
        if http.get("/healthz").status_code != 200:
            report.failures.append("the service is not healthy afterwards")
    return report
