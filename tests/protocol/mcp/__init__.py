"""Tests of the contract-checked MCP client."""
