"""Graph validation: each rule fails with INVALID_INPUT naming the rule."""

from __future__ import annotations

from typing import Any

import pytest

from accord.contracts.errors import AccordError, ErrorCode
from accord.runtime.workflow import Graph, NodeContext


async def noop(ctx: NodeContext) -> Any:
    return None


def rule_of(graph: Graph) -> str:
    with pytest.raises(AccordError) as caught:
        graph.validate()
    assert caught.value.code is ErrorCode.INVALID_INPUT
    return str(caught.value.details["rule"])


def test_a_valid_graph_passes() -> None:
    g = Graph("ok", "1").node("a", noop).node("b", noop).node("c", noop).node("d", noop)
    g.edge("a", "b", "c").join(["b", "c"], "d")
    assert g.validate() is g
    assert g.edge_predecessors("d") == {"b", "c"}


def test_duplicate_names() -> None:
    g = Graph("g", "1").node("a", noop).node("a", noop)
    assert rule_of(g) == "unique-names"


def test_empty_graph_has_no_start() -> None:
    assert rule_of(Graph("g", "1")) == "start"


def test_edge_to_unknown_node() -> None:
    g = Graph("g", "1").node("a", noop).edge("a", "ghost")
    assert rule_of(g) == "edge-endpoints"


def test_join_predecessors_must_exist() -> None:
    g = Graph("g", "1").node("a", noop).node("b", noop).edge("a", "b").join(["a", "ghost"], "b")
    assert rule_of(g) == "join-predecessors"


def test_unreachable_node() -> None:
    g = Graph("g", "1").node("a", noop).node("b", noop).node("island", noop).edge("a", "b")
    with pytest.raises(AccordError) as caught:
        g.validate()
    assert caught.value.details == {"rule": "reachable", "graph": "g@1", "nodes": ["island"]}


def test_unconditional_cycle() -> None:
    g = Graph("g", "1").node("a", noop).node("b", noop).node("c", noop)
    g.edge("a", "b").edge("b", "c").edge("c", "b")
    assert rule_of(g) == "no-unconditional-cycles"


def test_a_cycle_through_a_route_is_allowed() -> None:
    g = Graph("g", "1").node("ask", noop).node("check", noop).node("done", noop)
    g.edge("ask", "check").route("check", {"again": "ask"}, default="done")
    g.validate()


def test_route_needs_a_default() -> None:
    g = Graph("g", "1").node("a", noop).node("b", noop)
    g.route("a", {"x": "b"}, default="")
    assert rule_of(g) == "route-default"


def test_route_target_must_exist() -> None:
    g = Graph("g", "1").node("a", noop).node("b", noop)
    g.route("a", {"x": "ghost"}, default="b")
    assert rule_of(g) == "route-targets"


def test_error_path_must_exist() -> None:
    g = Graph("g", "1").node("a", noop, on_error="ghost")
    assert rule_of(g) == "error-path"


def test_timeout_must_be_positive() -> None:
    g = Graph("g", "1").node("a", noop, timeout_s=0)
    assert rule_of(g) == "timeout"


def test_register_validates() -> None:
    from accord.runtime.workflow import Runtime

    runtime = Runtime("sqlite:///:memory:")
    with pytest.raises(AccordError) as caught:
        runtime.register(Graph("g", "1").node("a", noop).node("a", noop))
    assert caught.value.details["rule"] == "unique-names"


def test_bad_event_log_url() -> None:
    from accord.runtime.workflow import open_event_log

    with pytest.raises(AccordError) as caught:
        open_event_log("mysql://nope")
    assert caught.value.code is ErrorCode.INVALID_INPUT
