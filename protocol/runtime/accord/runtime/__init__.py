"""accord.runtime: the framework's runtime for the agents an application builds on Accord.

``workflow``: the durable workflow runtime (graphs of nodes on an append-only event log, with
timers, interrupts for a person's answer, leases for replicas, retention and its migrations).
``models``: the model layer under an application's own calls (the completion level, an
OpenAI-compatible provider, call budgets, a tenant-scoped answer cache, run metrics).
Both import the contract and the protocol plumbing (storage, telemetry), never an application.
"""
