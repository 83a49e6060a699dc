"""The refund assistant's contracts: its agent and tool specs (``specs/``) and the refund
domain's vocabulary read from them (:mod:`.domain`, :mod:`.orders`).

The framework (accord-contracts) finds ``specs/`` through this distribution's
``accord.contracts`` entry point (accord.contracts.spec_folders).
"""
