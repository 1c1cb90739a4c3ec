"""The robustness suite: bad rules, bad data, bad paths (docs/semantics.md §5, §9).

Every case runs through the ``facet`` command in a subprocess and through
``facet.detect``; see :mod:`tests.robustness.harness` for what each run must satisfy.
"""
