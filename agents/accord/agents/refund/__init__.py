"""The refund assistant (orchestrator, port 8700): a durable workflow behind an A2A agent.

    graph.py        the workflow graph "refund" and its nodes' wiring
    nodes_*.py      intake, the three checks, the decision and its outcomes
    conversation.py what a customer's message does to its workflow (A2A executor and Runner)
    executor.py     the A2A side: one task = one workflow
    approvals.py    refund.approve (an "approval" workflow) and GET /approvals
    task_views.py   the A2A tasks, derived from the workflow log (their only record)
    service.py      `accord serve orchestrator`

See docs/refund-assistant.md.
"""
