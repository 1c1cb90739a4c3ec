"""Sinks: where violations go (counts, pairs, blocks) and the files they are written to."""
