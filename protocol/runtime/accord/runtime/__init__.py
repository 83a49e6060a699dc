"""accord.runtime: the framework's runtime for the agents an application builds on Accord.

``workflow``: the durable workflow runtime (graphs of nodes on an append-only event log, with
timers, interrupts for a person's answer, leases for replicas, retention and its migrations).
It imports the contract and the protocol plumbing (storage, telemetry), never an application.
"""
