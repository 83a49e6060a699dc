"""The web console (`accord console`): pages for approvers and customers (docs/console.md).

The console server only serves pages and static files. Every call the pages make goes from the
browser straight to the orchestrator's public API (A2A JSON-RPC and ``GET /approvals``) with the
token the user signed in with; the console server never sees a token and has no endpoint of its
own that does anything. See app.py for why.
"""
