"""CSV outputs are safe to open in a spreadsheet (docs/outputs.md, "CSV files and
spreadsheets"): a text field that starts with = + - @, a tab or a carriage return --
a column name in ``cells`` and ``suspects``, a DC's name or text in the counts -- gets
a ``'`` first and is quoted (OWASP's CSV injection rule), numbers stay numbers, and the
Parquet and Arrow outputs of the same run keep the text as it is."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq

from facet.cli import main
from facet.sinks.files import TableWriter

FORMULA = ("=", "+", "-", "@", "\t", "\r")
#: column names a spreadsheet would evaluate, and one it would not
NAMES = ["=SUM(1,2)", "+b", "-c", "@d", "\tt", "\rr", "ok"]
OUTPUTS = ("count", "pairs", "blocks", "tuples", "cells", "components", "suspects")


def _data(tmp: Path) -> tuple[Path, list[str]]:
    table = pa.table({
        NAMES[0]: [1, 1, 2, 2, 3, 3], NAMES[1]: ["=x", "+y", "-z", "-z", "@w", "@v"],
        NAMES[2]: [-1, -1, -2, -2, 0, 0], NAMES[3]: ["=1", "=2", "a", "a", "b", "c"],
        NAMES[4]: ["\tA", "\tA", "x", "x", "\rq", "\rq"], NAMES[5]: ["1", "2", "3", "3", "-4", "+5"],
        NAMES[6]: [-5, 6, -5, 7, 8, 8],
    })  # fmt: skip
    path = tmp / "hostile.parquet"
    pq.write_table(table, path)
    rules = tmp / "hostile.rules"
    rules.write_text(
        "`=HYPERLINK(\"x\")`: not(t.`=SUM(1,2)` = t'.`=SUM(1,2)` and t.`+b` != t'.`+b`)\n"
        "-neg: not(t.`-c` = t'.`-c` and t.`@d` != t'.`@d`)\n"
        "not(t.ok = t'.ok and t.`@d` != t'.`@d`)\n"
    )
    dcs = [
        "--rules", str(rules),
        "--dc", "`@tab`: not(t.`\tt` = t'.`\tt` and t.`\rr` != t'.`\rr`)",
        "--dc", "`+cr\r`: not(t.`-c` = t'.`-c` and t.`\rr` > t'.`\rr`)",
    ]  # fmt: skip
    return path, dcs


def _read_csv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def _safe(text: str) -> str:
    return "'" + text if text[:1] in FORMULA and text else text


def test_every_csv_output_neutralizes_formulas_and_keeps_numbers(tmp_path, capsys):
    data, dcs = _data(tmp_path)
    texts_seen = set()
    for output in OUTPUTS:
        outs = {}
        for ext in ("csv", "parquet", "arrow"):
            outs[ext] = tmp_path / f"{output}.{ext}"
            code = main(["detect", str(data), *dcs, "--output", output, "--sort",
                         "--out", str(outs[ext]), "--exit-zero"])  # fmt: skip
            assert code == 0, capsys.readouterr().err
        capsys.readouterr()
        rows = _read_csv(outs["csv"])
        for row in rows:
            for field in row:
                assert field[:1] not in FORMULA or not field, (output, row)
        typed = pq.read_table(outs["parquet"])
        timeless = [c for c in typed.column_names if c != "seconds"]
        assert feather.read_table(outs["arrow"]).select(timeless).equals(typed.select(timeless))
        assert rows[0] == typed.column_names
        assert len(rows) - 1 == typed.num_rows > 0, output
        raw = outs["csv"].read_bytes().decode("utf-8")
        for j, field in enumerate(typed.schema):
            values = typed.column(j).to_pylist()
            shown = [r[j] for r in rows[1:]]
            if pa.types.is_string(field.type):
                assert shown == [_safe(v) if v is not None else "" for v in values], output
                for v in values:
                    if v and v[0] in FORMULA:  # Parquet and Arrow keep the text
                        texts_seen.add(v[0])
                        assert '"' + _safe(v).replace('"', '""') + '"' in raw  # quoted
            elif pa.types.is_integer(field.type):
                assert [int(x) for x in shown] == values, output  # numbers, no quote
            elif pa.types.is_floating(field.type):
                assert all(float(x) >= 0 for x in shown)
            else:  # blocks' tid lists: space-separated tids
                assert shown == [" ".join(map(str, v)) for v in values], output
    assert texts_seen == set(FORMULA)  # each formula character reached an output


def test_the_printed_listing_neutralizes_formulas_too(tmp_path, capsys):
    """``--output cells`` (suspects) without ``--out`` prints the rows as CSV after the
    table: the same fields as a CSV file holds."""
    data, dcs = _data(tmp_path)
    for output in ("cells", "suspects"):
        assert main(["detect", str(data), *dcs, "--output", output, "--exit-zero"]) == 0
        text = capsys.readouterr().out
        out = tmp_path / f"{output}.parquet"
        assert main(["detect", str(data), *dcs, "--output", output, "--out", str(out),
                     "--exit-zero"]) == 0  # fmt: skip
        capsys.readouterr()
        typed = pq.read_table(out)
        header = ",".join(typed.column_names)
        rows = list(csv.reader(io.StringIO(text[text.index(header) :], newline="")))
        want = [[_safe(v) if isinstance(v, str) else str(v) for v in r.values()]
                for r in typed.to_pylist()]  # fmt: skip
        assert rows[1:] == want and len(want) > 1
        assert {r[1] for r in rows[1:]} <= {_safe(n) for n in NAMES}
        for row in rows:
            assert all(f[:1] not in FORMULA for f in row if f), row
    assert {r[1] for r in rows[1:]} > {"'\rr"}  # (a CR in a field stays in its field)


def test_only_text_is_neutralized(tmp_path):
    """A negative number is no formula: numeric columns stay numbers; text that only
    holds a formula character later, or an empty text, stays as it is."""
    schema = pa.schema([("n", pa.int64()), ("x", pa.float64()), ("s", pa.string())])
    batch = pa.record_batch([pa.array([-5, 7, -1, 0]), pa.array([-1.5, 2.0, None, 0.5]),
                             pa.array(["-5", "a=b", None, ""])], schema=schema)  # fmt: skip
    w = TableWriter(str(tmp_path / "t.csv"), schema)
    w.write(batch)
    w.close()
    text = (tmp_path / "t.csv").read_text()
    assert text.splitlines() == ['"n","x","s"', '-5,-1.5,"\'-5"', '7,2,"a=b"', "-1,,", '0,0.5,""']
