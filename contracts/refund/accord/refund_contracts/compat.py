"""The refund assistant's compatibility items: what its older releases need from this one.

Items of the framework's one table (accord.contracts.compat, registered under the
``accord.compat`` entry-point group); the refund code marks what keeps them with
``compat.kept_for(compat.NAME)`` or a comment naming ``compat.NAME``, as the framework's does.
"""

from __future__ import annotations

from typing import Final

from accord.contracts.compat import CompatItem, Surface, kept_for

__all__ = [
    "POLICY_ENGLISH_EXPLANATION",
    "REFUND_GRAPH_V1_V2",
    "WORKFLOW_CHILD_GRANT_FROM_ENVELOPE",
    "WORKFLOW_INPUT_AS_RELEASED",
    "WORKFLOW_UNCOUNTED_TOOL_CALLS",
    "kept_for",
]

# -- contracts --------------------------------------------------------------------------------

POLICY_ENGLISH_EXPLANATION: Final = CompatItem(
    id="policy-english-explanation",
    surface=Surface.CONTRACTS,
    accepts="policy-check's answer still carries `explanation` (English) beside its rule "
    "code and `params`; readers tolerate an answer without `params`",
    why="callers of policy-check 1.0 (0.1) show the English sentence",
    removed_in="0.4.0",
)

# -- workflow log -----------------------------------------------------------------------------

WORKFLOW_INPUT_AS_RELEASED: Final = CompatItem(
    id="workflow-input-as-released",
    surface=Surface.WORKFLOW_LOG,
    accepts="a refund's input is logged without the fields newer than v0.2.0 while they hold "
    "their defaults (WorkflowInput.stored)",
    why="in a rolling upgrade 0.2 replicas read the log and refuse a field they do not know",
    removed_in="0.4.0",
)
WORKFLOW_UNCOUNTED_TOOL_CALLS: Final = CompatItem(
    id="workflow-uncounted-tool-calls",
    surface=Surface.WORKFLOW_LOG,
    accepts="a refund logged without `tool_calls`, or without recorded spending (one unit a "
    "turn, as it was)",
    why="workflows started on 0.1, before tool calls and spending were logged",
    removed_in="0.4.0",
)
WORKFLOW_CHILD_GRANT_FROM_ENVELOPE: Final = CompatItem(
    id="workflow-child-grant-from-envelope",
    surface=Surface.WORKFLOW_LOG,
    accepts="a refund waiting on policy-check whose question does not keep the child's grant: "
    "the grant is read from the child's stored envelope",
    why="workflows that waited before the grant was kept with the question",
    removed_in="0.4.0",
)
REFUND_GRAPH_V1_V2: Final = CompatItem(
    id="refund-graph-v1-v2",
    surface=Surface.WORKFLOW_LOG,
    accepts="refund graphs 1 and 2 (and their refund key, the order alone) still registered",
    why="workflows in flight that started on them resume on the graph they started on",
    removed_in="0.4.0",
)
