"""Development aids' grammars (``ACCORD_FAULTS``), which the settings validate.

Only what the settings may import lives here: plain parsers over the contracts, nothing that
serves or calls. The aids themselves are applied where a process is assembled, and only in
development mode (``ACCORD_DEV=1``): tool servers wrap their handlers
(accord.protocol.mcp.fault_injection), and an application may wrap its own paths the same way.
Production code has no branch on them.
"""
