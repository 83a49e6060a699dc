"""Contract evolution: is a change of an agent or tool contract compatible for its callers?

``accord contracts diff OLD NEW`` is built from these parts: sources (files, folders, git
revisions) -> diff (contract_diff, schema_diff, registry_snapshot) -> findings judged by one
rules table -> the reviewed list of intended breaks. docs/contract-evolution.md explains it.
Import the parts from their modules: this package runs registry_snapshot as a script.
"""
