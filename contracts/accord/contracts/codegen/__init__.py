"""Contract packages for other languages, generated from the language-neutral export.

:mod:`.model` reads what ``accord contracts export`` writes (accord.contracts.export) into a
model of enums, records, constants and JSON Schemas that names nothing of any one language; a
renderer per language (:mod:`.ts`) turns the model into source files. ``python -m
accord.contracts.codegen LANGUAGE OUT [--check]`` writes them (docs/contracts-ts.md).
"""
