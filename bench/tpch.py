"""TPC-H ``lineitem`` tables of an exact row count, for the benchmarks (cached in ``bench/work/``).

    python bench/tpch.py --rows 1000000 [--formats parquet,csv] [--work bench/work]

``tpchgen-cli`` (``pip install tpchgen-cli``; the ``dev`` extra has it) generates ``lineitem``
at scale factor ``rows / 6,001,215`` rounded *up* (plus 2%, to 4 decimals), so it has at least
``rows`` rows; the first ``rows`` rows (ordered by ``l_orderkey``, as generated) are kept:

* ``lineitem_<rows>.parquet``: tpchgen's typed columns (``int64``, ``decimal128(15,2)``,
  ``date32``, strings), sliced with pyarrow and rewritten (Snappy);
* ``lineitem_<rows>.csv``: tpchgen's CSV (header, ``,``, ``l_comment`` quoted), its first
  ``rows + 1`` lines. Both hold the same rows in the same order.

``prefix(path, rows, out)`` cuts the first ``rows`` rows of a Parquet or CSV file (one record per
line; checked) into ``out``: smaller tables of the *same* data, e.g. for a scale ladder.
The raw tpchgen output is deleted once the prefixes exist. Each file is written under a
temporary name and renamed, so an interrupted run never leaves a short file behind.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LINEITEM_SF1_ROWS = 6_001_215  # lineitem rows at scale factor 1


def tpchgen_exe() -> str:
    exe = Path(sys.executable).parent / "tpchgen-cli"
    if exe.exists() and os.access(exe, os.X_OK):
        return str(exe)
    found = shutil.which("tpchgen-cli")
    if found:
        return found
    raise SystemExit(
        "tpchgen-cli not found: `.venv/bin/pip install tpchgen-cli` (or `pip install -e .[dev]`)"
    )


def scale_factor(rows: int) -> float:
    """Smallest 4-decimal scale factor >= 1.02 * rows / 6,001,215 (lineitem is ~4 lines per
    order with some spread, so the 2% margin makes ``rows`` rows all but certain)."""
    return max(0.0001, math.ceil(rows / LINEITEM_SF1_ROWS * 1.02 * 10_000) / 10_000)


def _tmp_name(out: Path) -> Path:
    return out.with_name(f".{out.name}.tmp{os.getpid()}")


def prefix(path: str | os.PathLike, rows: int, out: str | os.PathLike) -> Path:
    """First ``rows`` data rows of ``path`` (.parquet or .csv with a header) into ``out``."""
    path, out = Path(path), Path(out)
    tmp = _tmp_name(out)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)
        if pf.metadata.num_rows < rows:
            raise ValueError(f"{path} has {pf.metadata.num_rows:,} rows, fewer than {rows:,}")
        writer, left = None, rows
        try:
            for batch in pf.iter_batches(batch_size=1 << 16):
                if left <= 0:
                    break
                batch = batch.slice(0, min(left, batch.num_rows))
                left -= batch.num_rows
                if writer is None:
                    writer = pq.ParquetWriter(tmp, batch.schema, compression="snappy")
                writer.write_batch(batch)
        finally:
            if writer is not None:
                writer.close()
    elif path.suffix == ".csv":
        with open(path, "rb") as src, open(tmp, "wb") as dst:
            n = 0
            for line in itertools.islice(src, rows + 1):  # header + rows
                dst.write(line)
                n += 1
        if n <= rows:
            tmp.unlink(missing_ok=True)
            raise ValueError(f"{path} has {max(n - 1, 0):,} data rows, fewer than {rows:,}")
        _check_csv_rows(tmp, rows)
    else:
        raise ValueError(f"prefix: .parquet or .csv expected, got {path}")
    tmp.replace(out)
    return out


def _check_csv_rows(path: Path, rows: int) -> None:
    """A record spanning lines (quoted newline) would make a line prefix wrong: count records."""
    import csv

    import pyarrow as pa
    import pyarrow.csv as pacsv

    with open(path, newline="") as f:
        names = next(csv.reader(f))
    opts = pacsv.ConvertOptions(column_types={n: pa.string() for n in names})
    read = pacsv.ReadOptions(block_size=1 << 24)
    parse = pacsv.ParseOptions(newlines_in_values=True)
    reader = pacsv.open_csv(path, read_options=read, parse_options=parse, convert_options=opts)
    n = sum(b.num_rows for b in reader)
    if n != rows:
        path.unlink(missing_ok=True)
        raise ValueError(f"{path}: {n:,} CSV records in the first {rows:,} data lines")


def lineitem(
    rows: int, work: str | os.PathLike | None = None, formats: tuple[str, ...] = ("parquet", "csv")
) -> dict[str, Path]:
    """Paths of ``lineitem_<rows>.<fmt>`` for each format, generated once and cached."""
    work = Path(work) if work else REPO / "bench" / "work"
    work.mkdir(parents=True, exist_ok=True)
    paths = {fmt: work / f"lineitem_{rows}.{fmt}" for fmt in formats}
    missing = [fmt for fmt, p in paths.items() if not p.exists()]
    if not missing:
        return paths
    sf = scale_factor(rows)
    with tempfile.TemporaryDirectory(prefix="tpchgen-", dir=work) as raw:
        for fmt in missing:
            cmd = [tpchgen_exe(), fmt, "-s", f"{sf:g}", "-T", "lineitem", "-o", raw, "--quiet"]
            print(f"generating lineitem ({fmt}, scale factor {sf:g}) ...", file=sys.stderr)
            subprocess.run(cmd, check=True)
            prefix(Path(raw) / f"lineitem.{fmt}", rows, paths[fmt])
            (Path(raw) / f"lineitem.{fmt}").unlink()
    return paths


def lineitem_with_customer(rows: int, work: str | os.PathLike | None = None) -> Path:
    """``lineitem_cust_<rows>.parquet``: ``lineitem_<rows>.parquet``'s rows, in its order, plus
    ``l_custkey`` (int64): the ``o_custkey`` of the line's order (TPC-H ``orders`` generated by
    ``tpchgen-cli`` at the same scale factor), for the paper's customer/supplier DC (phi10)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    work = Path(work) if work else REPO / "bench" / "work"
    out = work / f"lineitem_cust_{rows}.parquet"
    if out.exists():
        return out
    items = pq.read_table(lineitem(rows, work, ("parquet",))["parquet"])
    sf = scale_factor(rows)
    with tempfile.TemporaryDirectory(prefix="tpchgen-", dir=work) as raw:
        cmd = [tpchgen_exe(), "parquet", "-s", f"{sf:g}", "-T", "orders", "-o", raw, "--quiet"]
        print(f"generating orders (scale factor {sf:g}) ...", file=sys.stderr)
        subprocess.run(cmd, check=True)
        orders = pq.read_table(Path(raw) / "orders.parquet", columns=["o_orderkey", "o_custkey"])
    at = pc.index_in(items.column("l_orderkey"), value_set=orders.column("o_orderkey"))
    if at.null_count:
        raise SystemExit(f"{at.null_count} lineitem rows have no order at scale factor {sf:g}")
    cust = pc.take(orders.column("o_custkey"), at).cast(pa.int64())
    tmp = _tmp_name(out)
    pq.write_table(items.append_column("l_custkey", cust), tmp)
    os.replace(tmp, out)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--formats", default="parquet,csv")
    ap.add_argument("--work", default=str(REPO / "bench" / "work"))
    ap.add_argument(
        "--customer",
        action="store_true",
        help="also lineitem_cust_<rows>.parquet (l_custkey from orders)",
    )
    args = ap.parse_args(argv)
    formats = tuple(f.strip() for f in args.formats.split(",") if f.strip())
    if not set(formats) <= {"parquet", "csv"}:
        ap.error("--formats: parquet and/or csv")
    for fmt, p in lineitem(args.rows, args.work, formats).items():
        print(f"{fmt}: {p} ({p.stat().st_size:,} bytes)")
    if args.customer:
        p = lineitem_with_customer(args.rows, args.work)
        print(f"with l_custkey: {p} ({p.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
