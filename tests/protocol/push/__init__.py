"""Tests of accord.protocol.push."""
