"""Hypothesis fuzzing of the DC parser, the CSV loader and typed (Parquet) inputs; see
docs/fuzzing.md for the default (fast) run and the long run (``FACET_FUZZ_SECONDS``)."""
