"""Workflow graphs: nodes, edges, fan-out, joins, routes by label, retry and timeout per node.

    g = Graph("review", version="1")
    g.node("intake", intake)
    g.node("fetch", fetch).node("lint", lint).node("scan", scan)
    g.node("decide", decide).node("publish", publish).node("explain", explain)
    g.edge("intake", "fetch", "lint", "scan")           # fan-out
    g.join(["fetch", "lint", "scan"], "decide")         # runs when ALL three finished
    g.route("decide", {"publish": "publish"}, default="explain")

A node reached by edges from several nodes is a join: it runs once every one of them has
finished. A node picked by a route (or an `on_error` path) runs as soon as it is picked.
`validate()` checks the rules below and raises INVALID_INPUT naming the broken rule.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.retry import NO_RETRY, RetryPolicy

if TYPE_CHECKING:
    from accord.runtime.workflow.context import NodeContext

NodeFn = Callable[["NodeContext"], Awaitable[Any]]
CancelHook = Callable[["NodeContext"], Awaitable[None]]
# The workflow's input -> its request's deadline (seconds since the epoch, the clock's time) or
# None: what a node retry policy without an attempt limit retries until.
DeadlineOf = Callable[[Any], float | None]


@dataclass(frozen=True, slots=True)
class Route:
    """What a routing node returns: the label that picks the next node, and its output."""

    label: str
    output: Any = None


@dataclass(frozen=True, slots=True)
class NodeSpec:
    name: str
    fn: NodeFn
    retry: RetryPolicy = NO_RETRY
    timeout_s: float | None = None
    on_error: str | None = None  # node to run when this one fails for good (else: fail)
    on_cancel: CancelHook | None = None  # called when the workflow is canceled mid-node


@dataclass(frozen=True, slots=True)
class RouteSpec:
    routes: Mapping[str, str]
    default: str


@dataclass
class Graph:
    name: str
    version: str
    start: str | None = None
    nodes: dict[str, NodeSpec] = field(default_factory=dict)
    edges: dict[str, list[str]] = field(default_factory=dict)  # source -> targets
    routes: dict[str, RouteSpec] = field(default_factory=dict)
    deadline_of: DeadlineOf | None = None
    _problems: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list, repr=False)
    _preds: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)
    _validated: bool = field(default=False, repr=False)

    # -- building ---------------------------------------------------------------------------
    def node(
        self,
        name: str,
        fn: NodeFn,
        *,
        retry: RetryPolicy | None = None,
        timeout_s: float | None = None,
        on_error: str | None = None,
        on_cancel: CancelHook | None = None,
    ) -> Graph:
        if name in self.nodes or not name:
            self._problems.append(
                ("unique-names", "node names must be unique and non-empty", {"node": name})
            )
            return self
        self.nodes[name] = NodeSpec(name, fn, retry or NO_RETRY, timeout_s, on_error, on_cancel)
        if self.start is None:
            self.start = name
        return self

    def edge(self, source: str, *targets: str) -> Graph:
        """Unconditional edges; several targets fan out and run in parallel."""
        self.edges.setdefault(source, []).extend(
            t for t in targets if t not in self.edges.get(source, [])
        )
        return self

    def join(self, sources: Sequence[str], target: str) -> Graph:
        """``target`` runs when every one of ``sources`` has finished."""
        for source in sources:
            if source not in self.nodes:
                self._problems.append(
                    (
                        "join-predecessors",
                        "a join waits for an unknown node",
                        {"node": target, "predecessor": source},
                    )
                )
            self.edge(source, target)
        return self

    def route(self, source: str, routes: Mapping[str, str], *, default: str) -> Graph:
        """After ``source``, run the node its label maps to, or ``default``."""
        if source in self.routes:
            self._problems.append(
                ("one-route-table", "a node has one route table", {"node": source})
            )
        self.routes[source] = RouteSpec(dict(routes), default)
        return self

    # -- reading ----------------------------------------------------------------------------
    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"

    def edge_predecessors(self, target: str) -> frozenset[str]:
        cached = self._preds.get(target)
        if cached is None:
            cached = frozenset(s for s, targets in self.edges.items() if target in targets)
            if self._validated:
                self._preds[target] = cached
        return cached

    def successors(self, source: str, label: str | None) -> tuple[list[str], str | None]:
        """(edge targets, route target) after ``source`` finished with ``label``."""
        spec = self.routes.get(source)
        routed = None
        if spec is not None:
            routed = spec.routes.get(label, spec.default) if label is not None else spec.default
        return self.edges.get(source, []), routed

    def is_sink(self, name: str) -> bool:
        return not self.edges.get(name) and name not in self.routes

    def describe(self) -> dict[str, Any]:
        """The graph's shape as JSON (no functions): what a picture of the workflow needs.

        ``nodes`` in the order they were added, each ``{name, join, retries, timeout_s,
        sink}`` (``join``: it waits for every edge predecessor); ``edges`` as ``{source,
        target, kind, label}`` with ``kind`` one of ``edge`` (unconditional, fan-out),
        ``route`` (picked by ``label``; ``label`` None is the route's default) and ``error``
        (the ``on_error`` path). Any application's graph describes itself the same way, so a
        viewer (the web console) draws every workflow without knowing its words.
        """
        edges: list[dict[str, Any]] = []
        for source, targets in self.edges.items():
            edges.extend(
                {"source": source, "target": t, "kind": "edge", "label": None} for t in targets
            )
        for source, spec in self.routes.items():
            for label, target in spec.routes.items():
                edges.append({"source": source, "target": target, "kind": "route", "label": label})
            edges.append({"source": source, "target": spec.default, "kind": "route", "label": None})
        for spec_ in self.nodes.values():
            if spec_.on_error is not None:
                edges.append(
                    {"source": spec_.name, "target": spec_.on_error, "kind": "error", "label": None}
                )
        return {
            "name": self.name,
            "version": self.version,
            "start": self.start,
            "nodes": [
                {
                    "name": name,
                    "join": len(self.edge_predecessors(name)) > 1,
                    "retries": spec_.retry is not NO_RETRY,
                    "timeout_s": spec_.timeout_s,
                    "sink": self.is_sink(name),
                }
                for name, spec_ in self.nodes.items()
            ],
            "edges": edges,
        }

    # -- validation -------------------------------------------------------------------------
    def validate(self) -> Graph:
        """Raise INVALID_INPUT (details.rule names the rule) unless the graph can run."""
        for rule, message, details in self._problems:
            raise _invalid(self, rule, message, details)
        if not self.start or self.start not in self.nodes:
            raise _invalid(self, "start", "the start node must exist", {"node": self.start})
        for source, targets in self.edges.items():
            for name in (source, *targets):
                if name not in self.nodes:
                    raise _invalid(
                        self, "edge-endpoints", "an edge names an unknown node", {"node": name}
                    )
        for source, spec in self.routes.items():
            if source not in self.nodes:
                raise _invalid(
                    self, "edge-endpoints", "a route starts at an unknown node", {"node": source}
                )
            if not spec.default:
                raise _invalid(
                    self, "route-default", "every route table needs a default", {"node": source}
                )
            for label, target in (*spec.routes.items(), ("default", spec.default)):
                if target not in self.nodes:
                    raise _invalid(
                        self,
                        "route-targets",
                        "a route names an unknown node",
                        {"node": source, "label": label, "target": target},
                    )
        for spec_ in self.nodes.values():
            if spec_.on_error is not None and spec_.on_error not in self.nodes:
                raise _invalid(
                    self,
                    "error-path",
                    "on_error names an unknown node",
                    {"node": spec_.name, "target": spec_.on_error},
                )
            if spec_.timeout_s is not None and spec_.timeout_s <= 0:
                raise _invalid(self, "timeout", "a timeout must be positive", {"node": spec_.name})
        self._check_reachable()
        self._check_acyclic_edges()
        self._validated = True  # from here on the graph is read, never changed
        self._preds.clear()
        return self

    def _check_reachable(self) -> None:
        seen: set[str] = set()
        todo = [self.start or ""]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo.extend(self.edges.get(name, []))
            spec = self.routes.get(name)
            if spec is not None:
                todo.extend([*spec.routes.values(), spec.default])
            on_error = self.nodes[name].on_error
            if on_error:
                todo.append(on_error)
        unreachable = sorted(set(self.nodes) - seen)
        if unreachable:
            raise _invalid(
                self,
                "reachable",
                "every node must be reachable from the start",
                {"nodes": unreachable},
            )

    def _check_acyclic_edges(self) -> None:
        # Only unconditional edges can loop forever; a loop through a route ends when the
        # route picks another label.
        white, grey, black = 0, 1, 2
        color = dict.fromkeys(self.nodes, white)

        def visit(name: str, path: list[str]) -> None:
            color[name] = grey
            for target in self.edges.get(name, []):
                if color[target] == grey:
                    cycle = [*path[path.index(target) :], target] if target in path else [target]
                    raise _invalid(
                        self,
                        "no-unconditional-cycles",
                        "unconditional edges form a cycle",
                        {"cycle": cycle},
                    )
                if color[target] == white:
                    visit(target, [*path, target])
            color[name] = black

        for name in self.nodes:
            if color[name] == white:
                visit(name, [name])


def _invalid(graph: Graph, rule: str, message: str, details: dict[str, Any]) -> AccordError:
    return AccordError(
        ErrorCode.INVALID_INPUT,
        f"workflow graph {graph.key}: {message}",
        {"rule": rule, "graph": graph.key, **details},
    )
