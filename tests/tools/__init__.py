"""Tests of the MCP tool servers (accord.tools) and the MCP server helpers."""
