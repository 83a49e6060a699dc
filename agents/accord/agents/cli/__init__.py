"""The accord command line."""
