"""The framework's model layer, used by an application of its own (no refund types)."""
