"""``Detector.where`` timed in its own process (``bench/scoped.py``).

    python bench/where_worker.py FILE DC COLUMN EXPR [CALLS]

Builds ``facet.Detector(FILE, dcs=[DC], where_columns=[COLUMN])`` (untimed: the table's
own run, its encoding and the counting state kept), then calls ``det.where(EXPR)``
CALLS times (default 4; nothing is cached between calls) and prints one JSON line:
the first call's time (parsing the scope, typing and encoding its columns, evaluating
it, counting), the median of the others, the violations and the scope's rows.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import facet


def main() -> None:
    path, dc, column, expr = sys.argv[1:5]
    calls = int(sys.argv[5]) if len(sys.argv) > 5 else 4
    det = facet.Detector(path, dcs=[dc], where_columns=[column])
    times, res = [], None
    for _ in range(calls):
        start = time.perf_counter()
        res = det.where(expr)
        times.append(time.perf_counter() - start)
    assert res is not None
    doc = {"seconds": times[0], "repeated_seconds": statistics.median(times[1:] or times),
           "violations": res.dcs[0].violations, "scope_rows": res.scope_rows,
           "counted": type(res._session).__name__ == "_ScopedSession"}  # fmt: skip
    print(json.dumps(doc))


if __name__ == "__main__":
    main()
