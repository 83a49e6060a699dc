"""Tests of accord.protocol."""
