"""Engines: run plans over encoded tables (local now; Spark reuses the local pipeline per task)."""
