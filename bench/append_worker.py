"""One timed ``Detector.append`` in its own process (``bench/scoped.py``).

    python bench/append_worker.py BASE BATCH DC [encode-all]

Builds ``facet.Detector(BASE, dcs=[DC])`` (untimed: the base table's own run), then
appends BATCH and prints one JSON line: the append's DC ``seconds`` (typing and encoding
the batch and extending the table's encoding -- or, with ``encode-all``, typing and
encoding the whole table again as before facet/encoding_append.py --, the scope,
planning, execution), its wall time (loading the batch included), the violations and the
rows after it.
"""

from __future__ import annotations

import json
import sys
import time

import facet


def main() -> None:
    base, batch, dc = sys.argv[1:4]
    config = facet.Config(append_extends=sys.argv[4:] != ["encode-all"])
    det = facet.Detector(base, dcs=[dc], config=config)
    base_rows = det.rows
    start = time.perf_counter()
    res = det.append(batch)
    wall = time.perf_counter() - start
    d = res.dcs[0]
    doc = {"seconds": d.seconds, "append_wall": wall, "violations": d.violations,
           "rows": det.rows, "base_rows": base_rows, "base_violations": det.initial.dcs[0].violations}  # fmt: skip
    print(json.dumps(doc))


if __name__ == "__main__":
    main()
