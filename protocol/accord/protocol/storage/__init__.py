"""The storage layer every store stands on: URLs, column types, schemas and their migrations.

See docs/storage.md.
"""
