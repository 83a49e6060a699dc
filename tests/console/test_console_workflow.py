"""The workflow the console draws is the runtime's own graph definition (Graph.describe()), for
any application's graph; and every status, outcome and step the pages show has its words in
both languages (no English label inside the Chinese page)."""

from __future__ import annotations

import json
import re

import httpx

from accord.agents.console.app import ConsoleConfig, build_console_app
from accord.agents.console.language import WORDS
from accord.agents.console.workflows import refund_graph
from accord.agents.models.base import Outcome
from accord.contracts.status import Status, WaitingReason
from accord.runtime.workflow import Graph, Route

ORCHESTRATOR = "http://127.0.0.1:8700"


async def _noop(ctx: object) -> None:
    return None


async def _pick(ctx: object) -> Route:
    return Route("left")


def _review_graph() -> Graph:
    """Not the refund's: a fan-out, a join, a route with a default, an error path."""
    graph = Graph("review", version="7")
    for name in ("fetch", "lint", "scan", "publish", "explain", "alarm"):
        graph.node(name, _noop)
    graph.node("start", _noop).node("decide", _pick, on_error="alarm")
    graph.start = "start"
    graph.edge("start", "fetch", "lint", "scan")
    graph.join(["fetch", "lint", "scan"], "decide")
    graph.route("decide", {"left": "publish"}, default="explain")
    return graph.validate()


def test_a_graph_describes_its_nodes_and_edges() -> None:
    shape = _review_graph().describe()
    assert (shape["name"], shape["version"], shape["start"]) == ("review", "7", "start")
    nodes = {n["name"]: n for n in shape["nodes"]}
    assert set(nodes) == {"start", "fetch", "lint", "scan", "decide", "publish", "explain", "alarm"}
    assert nodes["decide"]["join"] is True
    assert nodes["fetch"]["join"] is False
    assert nodes["publish"]["sink"] is True
    assert nodes["decide"]["sink"] is False
    edges = {(e["source"], e["target"], e["kind"], e["label"]) for e in shape["edges"]}
    assert ("start", "lint", "edge", None) in edges
    assert ("scan", "decide", "edge", None) in edges
    assert ("decide", "publish", "route", "left") in edges
    assert ("decide", "explain", "route", None) in edges  # the route's default
    assert ("decide", "alarm", "error", None) in edges
    json.dumps(shape)  # JSON as it is: no functions, no policies


async def test_the_page_carries_the_graph_it_is_given() -> None:
    review = _review_graph()
    app = build_console_app(ConsoleConfig(orchestrator_url=ORCHESTRATOR, workflow=review))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://console"
    ) as client:
        page = await client.get("/workflow")
    block = re.search(r'<script type="application/json" id="workflow">(.*?)</script>', page.text)
    assert block is not None
    assert json.loads(block.group(1)) == review.describe()


async def test_by_default_the_console_draws_the_refund_graph_the_runtime_runs() -> None:
    app = build_console_app(ConsoleConfig(orchestrator_url=ORCHESTRATOR))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://console"
    ) as client:
        page = await client.get("/approver")
    block = re.search(r'<script type="application/json" id="workflow">(.*?)</script>', page.text)
    assert block is not None
    assert json.loads(block.group(1)) == refund_graph().describe()


def test_every_label_the_pages_show_has_words_in_both_languages() -> None:
    keys = [f"status_{s.value}" for s in Status]
    keys += [f"reason_{r.value}" for r in WaitingReason]
    keys += [f"outcome_{o.value}" for o in Outcome]
    keys += [f"state_{s}" for s in ("pending", "running", "done", "failed", "waiting")]
    for node in refund_graph().describe()["nodes"]:
        keys.append(f"node_{node['name']}")
    missing = [key for key in keys if key not in WORDS]
    assert not missing, missing
    for key, (en, zh) in WORDS.items():
        assert en.strip(), key
        assert zh.strip(), key
    # A customer sees a step for every node that does work they would recognise.
    for node in ("intake", "order", "policy", "risk", "decide", "approval", "refund"):
        assert f"step_{node}" in WORDS, node
