"""Bridges from facet's outputs to the tools that consume them (docs/outputs.md):
:mod:`facet.integrations.raha` feeds Raha/Baran's error correction."""
