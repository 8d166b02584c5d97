"""Loading Parquet / CSV files, directories and globs; in-memory objects; the
TPC-H data cache (tpchgen-cli)."""

from __future__ import annotations

import gzip
import os
import sys
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import glint
from glint.errors import GlintError, GlintIOError
from glint.io.arrow_objects import to_arrow_table
from glint.io.csv_files import load_csv, sniff_delimiter
from glint.io.file_lists import tables_in_directory
from glint.io.parquet_source import load_parquet


def _t(start: int, n: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "price": pa.array([Decimal(f"{i}.25") for i in range(start, start + n)], pa.decimal128(15, 2)),
            "name": pa.array([f"n{i}" for i in range(start, start + n)], pa.string()),
        }
    )


def _raises_io(match_path, fn, *args, **kwargs) -> str:
    with pytest.raises(GlintIOError) as ei:
        fn(*args, **kwargs)
    msg = str(ei.value)
    assert str(match_path) in msg, msg
    return msg


# ------------------------------------------------------------------ Parquet
def test_parquet_file(tmp_path):
    p = tmp_path / "t.parquet"
    pq.write_table(_t(0, 5), p)
    t = load_parquet(str(p))
    assert t.num_rows == 5 and t.schema.names == ["id", "price", "name"]
    assert t.column("price").type == pa.decimal128(15, 2)
    assert load_parquet(p, columns=["name"]).schema.names == ["name"]


def test_parquet_directory_recursive_sorted(tmp_path):
    d = tmp_path / "lineitem"
    (d / "sub").mkdir(parents=True)
    # written out of order: reading must follow the sorted paths
    pq.write_table(_t(20, 5), d / "sub" / "part-0.parquet")
    pq.write_table(_t(10, 10), d / "lineitem.2.parquet")
    pq.write_table(_t(0, 10), d / "lineitem.1.parquet")
    (d / "_SUCCESS").write_text("")
    (d / ".hidden.parquet").write_text("not parquet")
    (d / "notes.txt").write_text("ignored")
    t = load_parquet(str(d))
    assert t.column("id").to_pylist() == list(range(25))
    assert load_parquet(str(d), progress=True).num_rows == 25  # the bar must not break anything


def test_parquet_glob(tmp_path):
    for i in range(3):
        pq.write_table(_t(i * 4, 4), tmp_path / f"f{i}.parquet")
    pq.write_table(_t(100, 4), tmp_path / "other.parquet")
    t = load_parquet(str(tmp_path / "f*.parquet"))
    assert t.column("id").to_pylist() == list(range(12))
    (tmp_path / "nested" / "x").mkdir(parents=True)
    pq.write_table(_t(50, 2), tmp_path / "nested" / "x" / "g.parquet")
    assert load_parquet(str(tmp_path / "nested" / "**" / "*.parquet")).num_rows == 2


def test_parquet_mixed_int_widths_are_unified(tmp_path):
    pq.write_table(pa.table({"a": pa.array([1], pa.int64())}), tmp_path / "a.parquet")
    pq.write_table(pa.table({"a": pa.array([2], pa.int32())}), tmp_path / "b.parquet")
    t = load_parquet(str(tmp_path))
    assert t.column("a").to_pylist() == [1, 2] and t.column("a").type == pa.int64()


def test_parquet_missing_path(tmp_path):
    p = tmp_path / "nope.parquet"
    msg = _raises_io(p, load_parquet, str(p))
    assert "No such file" in msg


def test_parquet_empty_directory(tmp_path):
    d = tmp_path / "empty"
    d.mkdir()
    (d / "readme.txt").write_text("x")
    msg = _raises_io(d, load_parquet, str(d))
    assert "No Parquet files" in msg


def test_parquet_glob_no_match(tmp_path):
    pattern = str(tmp_path / "zz*.parquet")
    msg = _raises_io(pattern, load_parquet, pattern)
    assert "match" in msg


def test_parquet_not_parquet(tmp_path):
    p = tmp_path / "bad.parquet"
    p.write_text("hello, this is not a parquet file at all\n" * 10)
    msg = _raises_io(p, load_parquet, str(p))
    assert "not a Parquet file" in msg


def test_parquet_empty_file(tmp_path):
    p = tmp_path / "zero.parquet"
    p.write_bytes(b"")
    _raises_io(p, load_parquet, str(p))


def test_parquet_bad_file_inside_directory(tmp_path):
    pq.write_table(_t(0, 2), tmp_path / "a.parquet")
    bad = tmp_path / "b.parquet"
    bad.write_bytes(b"PAR1garbage")
    _raises_io(bad, load_parquet, str(tmp_path))


def test_parquet_schema_mismatch_names_file(tmp_path):
    pq.write_table(_t(0, 2), tmp_path / "a.parquet")
    pq.write_table(pa.table({"other": [1]}), tmp_path / "b.parquet")
    msg = _raises_io(tmp_path / "b.parquet", load_parquet, str(tmp_path))
    assert "columns" in msg


def test_parquet_unknown_column(tmp_path):
    p = tmp_path / "t.parquet"
    pq.write_table(_t(0, 2), p)
    _raises_io(p, load_parquet, str(p), columns=["nope"])


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads unreadable files")
def test_parquet_unreadable(tmp_path):
    p = tmp_path / "t.parquet"
    pq.write_table(_t(0, 2), p)
    p.chmod(0)
    try:
        _raises_io(p, load_parquet, str(p))
    finally:
        p.chmod(0o644)


# ------------------------------------------------------------------ CSV
@pytest.mark.parametrize("delim", [",", "|", "\t", ";"])
def test_csv_sniffing(tmp_path, delim):
    p = tmp_path / "t.csv"
    rows = [["id", "name", "price", "day"], ["1", "a b", "2.50", "1995-03-11"], ["2", "c", "3.75", "1996-01-01"]]
    p.write_text("\n".join(delim.join(r) for r in rows) + "\n")
    t = load_csv(str(p))
    assert t.schema.names == ["id", "name", "price", "day"]
    assert t.column("id").to_pylist() == [1, 2]
    assert t.column("name").to_pylist() == ["a b", "c"]
    assert t.column("day").type == pa.date32()


def test_sniff_prefers_consistent_delimiter():
    # commas inside a field of a pipe file
    assert sniff_delimiter("a|b\nx, y|1\nz|2\n") == "|"
    assert sniff_delimiter('a,b\n"x;y",1\n"z;w",2\n') == ","
    assert sniff_delimiter("single\ncolumn\n") == ","


def test_csv_explicit_delimiter_and_no_header(tmp_path):
    p = tmp_path / "t.txt"
    p.write_text("1;x\n2;y\n")
    t = load_csv(str(p), header=False, delimiter=";")
    assert t.schema.names == ["column0", "column1"]
    assert t.column("column1").to_pylist() == ["x", "y"]


def test_csv_dbgen_tbl_trailing_delimiter(tmp_path):
    p = tmp_path / "region.tbl"
    p.write_text("0|AFRICA|lar deposits|\n1|AMERICA|hs use ironic|\n")
    t = load_csv(str(p), header=False)
    assert t.num_columns == 3
    assert t.column("column1").to_pylist() == ["AFRICA", "AMERICA"]


def test_csv_types_and_columns(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("id,price,note\n1,2.50,x\n2,3.75,y\n")
    t = load_csv(str(p), types={"price": "DECIMAL(15,2)", "id": pa.int32()}, columns=["price", "id"])
    assert t.schema.names == ["price", "id"]
    assert t.column("price").type == pa.decimal128(15, 2) and t.column("price").to_pylist()[0] == Decimal("2.50")
    assert t.column("id").type == pa.int32()
    _raises_io(p, load_csv, str(p), columns=["nope"])


def test_csv_nulls(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text('a,b\n1,\n,""\n')
    t = load_csv(str(p))
    assert t.column("a").to_pylist() == [1, None]
    assert t.column("b").to_pylist() == [None, ""]


def test_csv_directory_glob_and_gzip(tmp_path):
    d = tmp_path / "parts"
    d.mkdir()
    (d / "b.csv").write_text("id,v\n3,\n4,x\n")  # all-empty column in one file must not change its type
    (d / "a.csv").write_text("id,v\n1,p\n2,q\n")
    with gzip.open(d / "c.csv.gz", "wt") as f:
        f.write("id,v\n5,z\n")
    t = load_csv(str(d))
    assert t.column("id").to_pylist() == [1, 2, 3, 4, 5]
    assert t.column("v").to_pylist() == ["p", "q", None, "x", "z"]
    assert load_csv(str(d / "[ab].csv")).num_rows == 4


def test_csv_missing_file(tmp_path):
    p = tmp_path / "missing.csv"
    _raises_io(p, load_csv, str(p))


def test_csv_empty_dir(tmp_path):
    _raises_io(tmp_path, load_csv, str(tmp_path))


def test_csv_malformed(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("a,b,c\n1,2,3\n4,5\n")
    msg = _raises_io(p, load_csv, str(p))
    assert "Cannot read CSV" in msg


def test_csv_empty_file(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text("")
    _raises_io(p, load_csv, str(p))


def test_csv_columns_mismatch_between_files(tmp_path):
    (tmp_path / "a.csv").write_text("x,y\n1,2\n")
    (tmp_path / "b.csv").write_text("x,z\n1,2\n")
    _raises_io(tmp_path / "b.csv", load_csv, str(tmp_path))


# ------------------------------------------------------------------ in-memory objects
def test_to_arrow_table_kinds():
    import pandas as pd

    t = pa.table({"a": [1, 2]})
    assert to_arrow_table(t) is t
    assert to_arrow_table(t.to_batches()[0]).num_rows == 2
    assert to_arrow_table(pa.RecordBatchReader.from_batches(t.schema, t.to_batches())).num_rows == 2
    df = pd.DataFrame({"a": [1, 2], "s": ["x", None]}, index=[10, 20])
    got = to_arrow_table(df)
    assert got.schema.names == ["a", "s"] and got.column("s").to_pylist() == ["x", None]
    assert to_arrow_table({"a": [1], "b": ["x"]}).schema.names == ["a", "b"]
    assert to_arrow_table([{"a": 1}, {"a": 2}]).num_rows == 2


def test_to_arrow_table_polars():
    pl = pytest.importorskip("polars")
    assert to_arrow_table(pl.DataFrame({"a": [1, 2]})).column("a").to_pylist() == [1, 2]


def test_to_arrow_table_errors():
    with pytest.raises(GlintError, match="set"):
        to_arrow_table({1, 2})
    with pytest.raises(GlintError):
        to_arrow_table({"a": [1, 2], "b": [1]})


# ------------------------------------------------------------------ directories of tables
def test_tables_in_directory(tmp_path):
    pq.write_table(_t(0, 2), tmp_path / "orders.parquet")
    (tmp_path / "lineitem").mkdir()
    pq.write_table(_t(0, 2), tmp_path / "lineitem" / "lineitem.1.parquet")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.txt").write_text("")
    (tmp_path / ".cache.parquet").write_text("")
    found = tables_in_directory(str(tmp_path))
    assert found == {"lineitem": str(tmp_path / "lineitem"), "orders": str(tmp_path / "orders.parquet")}
    assert load_parquet(found["lineitem"]).num_rows == 2


def test_tables_in_directory_errors(tmp_path):
    _raises_io(tmp_path / "nope", tables_in_directory, str(tmp_path / "nope"))
    _raises_io(tmp_path, tables_in_directory, str(tmp_path))
    pq.write_table(_t(0, 1), tmp_path / "t.parquet")
    (tmp_path / "t").mkdir()
    pq.write_table(_t(0, 1), tmp_path / "t" / "p.parquet")
    msg = _raises_io(tmp_path, tables_in_directory, str(tmp_path))
    assert "'t'" in msg
    f = tmp_path / "t.parquet"
    _raises_io(f, tables_in_directory, str(f))


# ------------------------------------------------------------------ TPC-H data (tpchgen-cli)
def _tpchgen_or_skip():
    from glint.workloads import tpch

    try:
        return tpch.find_tpchgen()
    except GlintError:
        pytest.skip("tpchgen-cli is not installed")


def test_ensure_tpch_data(tmp_path, monkeypatch):
    from glint.workloads import tpch

    _tpchgen_or_skip()
    monkeypatch.setenv("GLINT_DATA", str(tmp_path))
    d = tpch.ensure_tpch_data(0.01, progress=True)
    assert d == tmp_path / "tpch" / "sf0.01"
    found = tables_in_directory(d)
    assert sorted(found) == sorted(tpch.tpch_tables)
    assert os.listdir(d.parent) == ["sf0.01"]  # no temporary directory left behind
    assert load_parquet(found["region"]).num_rows == 5
    assert load_parquet(found["lineitem"]).num_rows == 60175
    mtime = os.stat(found["lineitem"]).st_mtime_ns
    assert tpch.ensure_tpch_data(0.01) == d  # cached: not generated again
    assert os.stat(found["lineitem"]).st_mtime_ns == mtime


def test_ensure_tpch_data_parts_layout(tmp_path, monkeypatch):
    from glint.workloads import tpch

    _tpchgen_or_skip()
    monkeypatch.setenv("GLINT_DATA", str(tmp_path))
    d = tpch.ensure_tpch_data(0.01, progress=False, parts=2)
    found = tables_in_directory(d)
    assert Path(found["lineitem"]).is_dir()
    assert len(list(Path(found["lineitem"]).glob("*.parquet"))) == 2
    assert load_parquet(found["lineitem"]).num_rows == 60175


def test_ensure_tpch_data_refuses_incomplete_cache(tmp_path, monkeypatch):
    from glint.workloads import tpch

    monkeypatch.setenv("GLINT_DATA", str(tmp_path))
    target = tpch.data_dir(0.5)
    target.mkdir(parents=True)
    pq.write_table(_t(0, 1), target / "region.parquet")
    msg = _raises_io(target, tpch.ensure_tpch_data, 0.5, progress=False)
    assert "8 TPC-H tables" in msg


def test_ensure_tpch_data_without_tpchgen(tmp_path, monkeypatch):
    from glint.workloads import tpch

    monkeypatch.setenv("GLINT_DATA", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "nobin" / "python"))
    with pytest.raises(GlintError, match="tpchgen-cli"):
        tpch.ensure_tpch_data(0.01, progress=False)
    assert not (tmp_path / "tpch" / "sf0.01").exists()


def test_ensure_tpch_data_failure_leaves_nothing(tmp_path, monkeypatch):
    from glint.workloads import tpch

    fake = tmp_path / "bin" / "tpchgen-cli"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\nif [ \"$1\" = --help ]; then echo 'Commands:'; exit 0; fi\n"
        "out=''; prev=''\n"
        'for a in "$@"; do if [ "$prev" = --output-dir ]; then out=$a; fi; prev=$a; done\n'
        '[ -d "$out" ] || exit 9\n'
        "echo partial > \"$out/region.parquet\"; echo 'disk full' >&2; exit 3\n"
    )
    fake.chmod(0o755)
    monkeypatch.setattr(tpch, "find_tpchgen", lambda: str(fake))
    monkeypatch.setenv("GLINT_DATA", str(tmp_path / "data"))
    with pytest.raises(GlintError, match="disk full"):
        tpch.ensure_tpch_data(0.01, progress=False)
    assert os.listdir(tmp_path / "data" / "tpch") == []


def test_data_dir_default(monkeypatch, tmp_path):
    from glint.workloads import tpch

    monkeypatch.delenv("GLINT_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tpch.data_dir(10) == tmp_path / "glint" / "tpch" / "sf10"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert tpch.data_dir(0.1) == Path("~/.cache/glint/tpch/sf0.1").expanduser()


def test_tpch_queries_are_packaged():
    from glint.workloads import tpch

    qs = tpch.tpch_queries()
    assert sorted(qs) == list(range(1, 23))
    assert all(q.lstrip().upper().startswith(("SELECT", "WITH")) and not q.rstrip().endswith(";") for q in qs.values())
    assert "l_returnflag" in qs[1]
    with pytest.raises(GlintError, match="23"):
        tpch.tpch_query(23)


class _RecordingCon:
    def __init__(self):
        self.calls = []

    def read_parquet(self, path, name):
        self.calls.append((name, path))


def test_load_tpch_registers_all_tables(tmp_path):
    from glint.workloads import tpch

    for t in tpch.tpch_tables:
        pq.write_table(_t(0, 1), tmp_path / f"{t}.parquet")
    con = _RecordingCon()
    assert tpch.load_tpch(con, directory=tmp_path, progress=False) == tmp_path
    assert [n for n, _ in con.calls] == tpch.tpch_tables
    os.remove(tmp_path / "nation.parquet")
    with pytest.raises(GlintIOError, match="nation"):
        tpch.load_tpch(_RecordingCon(), directory=tmp_path)


def test_duckdb_connection_on_tpchgen_data_matches_answers(tmp_path, monkeypatch):
    """DuckDB on tpchgen-cli's Parquet files agrees with tpch_answers() (without
    the random-text columns, which DuckDB's dbgen generates differently)."""
    pytest.importorskip("duckdb")
    from glint.testing.compare import compare_query_result
    from glint.workloads import tpch

    _tpchgen_or_skip()
    try:
        tpch.tpch_extension_path()
    except GlintError:
        pytest.skip("duckdb-ext-tpch is not installed")
    monkeypatch.setenv("GLINT_DATA", str(tmp_path))
    con = tpch.duckdb_tpch_connection(tpch.ensure_tpch_data(0.01, progress=False))
    for n in range(1, 23):
        q = tpch.tpch_query(n)
        answer = tpch.official_answer(n, 0.01)
        cols = tpch.answer_columns_for_tpchgen(n, answer.schema.names)
        if cols is None:
            continue
        got = tpch.duckdb_arrow(con, q)
        assert compare_query_result(q, got.select(cols), answer.select(cols)) == [], n


def test_read_parquet_tables_reads_footers_side_by_side(tmp_path):
    """Connection.read_parquet_tables: several tables registered at once
    (their footers read on threads), each as read_parquet registers it; an
    unreadable file raises naming it and registers none of them."""
    for i in range(3):
        pq.write_table(
            pa.table({"k": list(range(i * 10, i * 10 + 10)), "v": [f"s{i}"] * 10}),
            tmp_path / f"t{i}.parquet",
            row_group_size=4,
        )
    con = glint.connect()
    con.read_parquet_tables({f"t{i}": str(tmp_path / f"t{i}.parquet") for i in range(3)})
    got = (
        con.sql(
            "SELECT sum(t0.k) AS s, min(t1.v) AS v, max(t2.v) AS w, count(*) AS n FROM t0 "
            "JOIN t1 ON t1.k = t0.k + 10 JOIN t2 ON t2.k = t1.k + 10"
        )
        .arrow()
        .to_pylist()
    )
    assert got == [{"s": 45, "v": "s1", "w": "s2", "n": 10}]
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    con2 = glint.connect()
    with pytest.raises(GlintIOError, match="bad.parquet"):
        con2.read_parquet_tables({"good": str(tmp_path / "t0.parquet"), "bad": str(tmp_path / "bad.parquet")})
    with pytest.raises(Exception, match="good"):
        con2.sql("SELECT * FROM good").arrow()


def test_parquet_bounds_as_stored_equal_logical(tmp_path, monkeypatch):
    """ParquetSource.column_stats takes a DATE's and an integer-stored
    DECIMAL's min/max as stored (min_raw: no date or Decimal built) when
    they are glint's values; the same bounds as through pyarrow's logical
    values, for INT32 and INT64 decimals with negatives, and a wide
    (fixed-length) decimal left to the logical path."""
    import datetime
    import decimal

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from glint.io.parquet_source import ParquetSource

    rng = np.random.default_rng(3)
    n = 600
    days = rng.integers(-800, 20000, n)
    t = pa.table(
        {
            "d": pa.array([datetime.date(1970, 1, 1) + datetime.timedelta(days=int(x)) for x in days], pa.date32()),
            "p": pa.array(
                [decimal.Decimal(int(x)).scaleb(-2) for x in rng.integers(-(10**8), 10**8, n)], pa.decimal128(9, 2)
            ),
            "q": pa.array(
                [decimal.Decimal(int(x)).scaleb(-3) for x in rng.integers(-(10**13), 10**13, n)], pa.decimal128(15, 3)
            ),
            "w": pa.array(
                [decimal.Decimal(int(x)).scaleb(-4) for x in rng.integers(-(10**15), 10**15, n)], pa.decimal128(30, 4)
            ),
        }
    )
    path = str(tmp_path / "b.parquet")
    pq.write_table(t, path, row_group_size=100, store_decimal_as_integer=True)
    meta = pq.read_metadata(path)
    assert [meta.schema.column(i).physical_type for i in range(4)] == [
        "INT32",
        "INT32",
        "INT64",
        "FIXED_LEN_BYTE_ARRAY",
    ]
    fast, slow = ParquetSource(path), ParquetSource(path)
    monkeypatch.setattr(slow, "_raw_bounds", lambda *a: False)
    for name in ("d", "p", "q", "w"):
        got = [fast.column_stats(i, name) for i in range(6)]
        assert got == [slow.column_stats(i, name) for i in range(6)], name
        assert all(g is not None for g in got)
    assert [fast._raw_bounds(0, c, fast._types[c]) for c in "dpqw"] == [True, True, True, False]
    lo = min(fast.column_stats(i, "d")[0] for i in range(6))
    assert lo == int(days.min())
