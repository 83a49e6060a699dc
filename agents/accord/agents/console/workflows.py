"""The workflow the console draws: the runtime's own graph definition (``Graph.describe()``).

The picture is drawn from the same ``Graph`` the orchestrator registers on its runtime, never
from a copy: the console builds the application's current graph and sends its shape (nodes,
edges, routes; no functions) to the page as a JSON data block. The drawing (static/graph.js)
reads only that shape, so any application's workflow draws; an application with another
graph passes its own ``Graph`` to :class:`~accord.agents.console.app.ConsoleConfig`.
"""

from __future__ import annotations

from typing import cast

from accord.agents.refund.graph import build_graph
from accord.agents.refund.node_deps import Deps
from accord.runtime.workflow import Graph


def refund_graph() -> Graph:
    """The refund assistant's current graph (the version new requests run on).

    Its nodes are closures over the orchestrator's dependencies, which only a node's run
    touches: building the graph to read its shape needs none (the console never runs a node).
    """
    return build_graph(cast(Deps, None)).validate()
