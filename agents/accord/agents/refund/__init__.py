"""The refund assistant (orchestrator, port 8700): a durable workflow behind an A2A agent.

    graph.py        the workflow graph "refund" and its nodes' wiring
    nodes_*.py      intake, the three checks, the decision and its outcomes
    executor.py     the A2A side: one customer task = one workflow
    approvals.py    refund.approve and GET /approvals
    projection.py   out-of-band outcomes (approval, timeout, recovery) written to the task store
    service.py      `accord serve orchestrator`

See docs/refund-assistant.md.
"""
