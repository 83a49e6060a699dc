"""MCP plumbing: tool servers declared from contracts (server) and the contract-checking client.

Import the submodule you need (``accord.protocol.mcp.server``); this package stays empty so that
a client never pays for the server's imports and vice versa.
"""
