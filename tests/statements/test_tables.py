"""Tables, writes and files in SQL, where sqllogictest records cannot look:
result types against DuckDB's Arrow types, files written by one engine and
read by the other (byte for byte for CSV), cached device chunks and
statistics after appends, the cache of file tables, row order after DELETE
and UPDATE, large VALUES lists. The records are in tests/sqllogic/tables/."""

import itertools
import time

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import glint
from glint.errors import ConstraintError, GlintError, GlintIOError, NotSupported
from glint.testing.compare import compare_tables


def _norm(t: pa.DataType) -> pa.DataType:
    return pa.string() if pa.types.is_large_string(t) or pa.types.is_string_view(t) else t


def _same(got: pa.Table, want: pa.Table, ordered: bool = False, types: bool = True) -> None:
    diffs = compare_tables(got, want, ordered=ordered)
    assert not diffs, diffs
    if types:
        assert [_norm(t) for t in got.schema.types] == [_norm(t) for t in want.schema.types]


@pytest.fixture
def con(device):
    c = glint.connect(device=device)
    yield c
    c.close()


@pytest.fixture
def duck():
    d = duckdb.connect()
    yield d
    d.close()


VALUES_QUERIES = [
    "SELECT * FROM (VALUES (1, 'a'), (2.5, NULL)) t(x, y)",
    "SELECT * FROM (VALUES (1), (3000000000))",
    "SELECT * FROM (VALUES (1.5), (2.25::DOUBLE), (3))",
    "SELECT * FROM (VALUES (1::INTEGER), (2::BIGINT), (NULL))",
    "SELECT * FROM (VALUES (1.5), (12.125), (-7))",
    "SELECT * FROM (VALUES (1), ('2'), (NULL))",
    "SELECT * FROM (VALUES (true), (1), (7::BIGINT))",
    "SELECT * FROM (VALUES (DATE '2020-01-01', 'x'), ('2021-03-04', NULL))",
    "SELECT * FROM (VALUES (NULL, 1), ('a', 2), ('b', NULL))",
    "SELECT * FROM (VALUES (12345678901234567890.5), (1))",
    "VALUES (1, 2.5, 'x', true, DATE '1999-12-31')",
]


@pytest.mark.parametrize("sql", VALUES_QUERIES)
def test_values_types_match_duckdb(con, duck, sql):
    _same(con.sql(sql).arrow(), duck.execute(sql).arrow().read_all())


VALUE_KINDS = {
    "int": "1",
    "big": "3000000000",
    "dec": "1.5",
    "str_number": "'1'",
    "str_date": "'2020-01-01'",
    "str_bool": "'true'",
    "null": "NULL",
    "bool": "true",
    "date": "DATE '2020-01-01'",
    "integer": "1::INTEGER",
    "bigint": "1::BIGINT",
    "varchar": "'1'::VARCHAR",
    "double": "1.5::DOUBLE",
    "decimal": "1.5::DECIMAL(10,3)",
    "negative": "-1",
    "expression": "1 + 1",
    "concat": "'1' || '2'",
}


def test_values_type_unification_matrix(con, duck):
    """Every pair of kinds of entry in two rows: the same type and values as
    DuckDB, or an error where DuckDB has one."""
    for a, b in itertools.product(VALUE_KINDS.values(), repeat=2):
        sql = f"SELECT * FROM (VALUES ({a}), ({b}))"
        try:
            want = duck.execute(sql).arrow().read_all()
        except duckdb.Error:
            with pytest.raises(GlintError):
                con.sql(sql).arrow()
            continue
        _same(con.sql(sql).arrow(), want, ordered=True)


def test_values_list_of_many_rows(con, duck):
    """A long VALUES list is cast column by column, not row by row."""
    rows = ", ".join(
        f"({i}, {'NULL' if i % 9 == 0 else repr(str(i))}, {i}.5, DATE '2020-01-01' + {i % 300})" for i in range(5000)
    )
    con.sql("CREATE TABLE big (a BIGINT, s VARCHAR, d DECIMAL(10,1), dt DATE)")
    duck.execute("CREATE TABLE big (a BIGINT, s VARCHAR, d DECIMAL(10,1), dt DATE)")
    t0 = time.perf_counter()
    assert con.sql(f"INSERT INTO big VALUES {rows}").fetchall() == [(5000,)]
    assert time.perf_counter() - t0 < 30
    duck.execute(f"INSERT INTO big VALUES {rows}")
    q = "SELECT count(*), count(s), sum(a), sum(d), min(dt), max(dt), count(DISTINCT s) FROM big"
    _same(con.sql(q).arrow(), duck.execute(q).arrow().read_all(), types=False)
    q = f"SELECT * FROM (VALUES {rows}) v(a, s, d, dt) WHERE a % 1000 = 7"
    _same(con.sql(q).arrow(), duck.execute(q).arrow().read_all())


def test_create_table_as_types_match_duckdb(con, duck):
    setup = [
        "CREATE TABLE src AS SELECT * FROM (VALUES (1, 'a', 2.50, 1.5::DOUBLE), (2, 'b', NULL, NULL), "
        "(2, NULL, 1.25, 2.0::DOUBLE)) v(k, s, m, x)",
        "CREATE TABLE agg AS SELECT k, sum(m) AS total, count(*) AS n, avg(m) AS mean, sum(k) AS ks, "
        "max(s) AS top, sum(x) AS sx, NULL AS nothing FROM src GROUP BY k",
    ]
    for sql in setup:
        con.sql(sql)
        duck.execute(sql)
    got = con.sql("DESCRIBE agg").arrow()
    want = duck.execute("SELECT column_name, column_type FROM (DESCRIBE agg)").arrow().read_all()
    assert got.column(0).to_pylist() == want.column(0).to_pylist()
    assert got.column(1).to_pylist() == want.column(1).to_pylist()
    q = "SELECT * FROM agg"
    _same(con.sql(q).arrow(), duck.execute(q).arrow().read_all(), types=False)


def test_statements_answer_with_a_count(con):
    assert con.sql("CREATE TABLE t (a INTEGER)") is None
    r = con.sql("INSERT INTO t VALUES (1), (2), (3)")
    assert r.columns == ["Count"] and r.fetchall() == [(3,)]
    assert con.sql("UPDATE t SET a = a + 1 WHERE a > 1").fetchall() == [(2,)]
    assert con.sql("DELETE FROM t WHERE a = 1").fetchall() == [(1,)]
    assert con.sql("SELECT * FROM t").fetchall() == [(3,), (4,)]
    assert con.sql("CREATE TABLE u AS SELECT a FROM t").fetchall() == [(2,)]
    assert "u" in con.tables()
    with pytest.raises(ConstraintError):
        con.sql("CREATE TABLE n (a INTEGER NOT NULL); INSERT INTO n VALUES (NULL)")
    assert con.sql("SELECT count(*) FROM n").fetchall() == [(0,)]


def test_delete_and_update_keep_the_row_order(con, duck):
    setup = [
        "CREATE TABLE t (id INTEGER, g VARCHAR, v DECIMAL(6,2))",
        "INSERT INTO t SELECT * FROM (VALUES (5, 'x', 1.00), (3, 'y', NULL), (9, 'x', 2.50), (1, NULL, 4.00), "
        "(7, 'y', 0.50), (2, 'x', 3.00))",
        "DELETE FROM t WHERE v < 1 OR g IS NULL",
        "UPDATE t SET v = coalesce(v, 0) + id, g = g || '!' WHERE g = 'x'",
        "INSERT INTO t VALUES (4, 'z', 8.00)",
        "UPDATE t SET id = id * 10 WHERE id IN (SELECT max(id) FROM t)",
    ]
    for sql in setup:
        con.sql(sql)
        duck.execute(sql)
    q = "SELECT * FROM t"
    _same(con.sql(q).arrow(), duck.execute(q).arrow().read_all(), ordered=True)


def test_appends_keep_unchanged_cached_chunks(device):
    con = glint.connect(device=device, chunk_rows=4)
    try:
        con.sql(
            "CREATE TABLE t AS SELECT * FROM (VALUES " + ", ".join(f"({i}, 's{i}')" for i in range(10)) + ") v(a, s)"
        )
        uid = con.table("t").uid
        assert con.sql("SELECT sum(a), count(s) FROM t").fetchall()[0][1] == 10

        def cached():
            return {k[3] for k in con.memory.cache_keys() if k[0] == "table" and k[1] == uid}

        assert cached() == {0, 1, 2}
        con.sql("INSERT INTO t VALUES (10, 's10'), (11, NULL), (12, 's12')")
        assert cached() == {0, 1, 2}  # the first 10 rows' chunks are still right
        assert con.sql("SELECT sum(a), count(s), count(*) FROM t").fetchall() == [(78, 12, 13)]
        assert cached() == {0, 1, 2, 3}
        con.sql("INSERT INTO t VALUES (13, 's13'), (14, 's14')")
        assert cached() == {0, 1, 2}  # the appended chunk grew: dropped, read again
        assert con.sql("SELECT sum(a), count(s), max(s) FROM t").fetchall() == [(105, 14, "s9")]
        res = con.sql("SELECT count(*) FROM t WHERE a >= 13")
        assert res.fetchall() == [(2,)]
    finally:
        con.close()


def test_appends_drop_stale_host_cache_pieces(device):
    """The host tier keeps decoded pieces by fragment: a fragment that an
    append grew (the last appended part takes small appends in) is dropped."""
    con = glint.connect(device=device, chunk_rows=4, host_cache_limit="64MB")
    try:
        con.sql("CREATE TABLE t AS SELECT * FROM (VALUES " + ", ".join(f"({i})" for i in range(10)) + ") v(a)")
        con.sql("INSERT INTO t VALUES (10), (11), (12)")
        uid = con.table("t").uid
        assert con.sql("SELECT sum(a) FROM t").fetchall() == [(78,)]

        def host_fragments():
            return {f for k in con.memory.host._entries if k[1] == uid for f in k[2]}

        assert 1 in host_fragments()
        con.sql("INSERT INTO t VALUES (13), (14)")
        assert 1 not in host_fragments() and 0 in host_fragments()
        con.memory.cache_drop()  # the device tier: read again from the host tier
        assert con.sql("SELECT sum(a), count(*) FROM t").fetchall() == [(105, 15)]
    finally:
        con.close()


def test_statistics_follow_appends(con):
    con.sql("CREATE TABLE t (a INTEGER, s VARCHAR)")
    con.sql("INSERT INTO t VALUES (1, 'x'), (5, NULL)")
    s = con.table("t").stats("a")
    assert (s.min, s.max, s.null_count) == (1, 5, 0)
    con.sql("INSERT INTO t VALUES (-3, 'y'), (NULL, 'z'), (40, 'x')")
    s = con.table("t").stats("a")
    assert (s.min, s.max, s.null_count, s.ndv) == (-3, 40, 1, 4)
    assert con.table("t").stats("s").null_count == 1
    con.sql("DELETE FROM t WHERE a > 4")
    s = con.table("t").stats("a")
    assert (s.min, s.max, s.null_count) == (-3, 1, 1)


def test_statistics_of_many_fragments_from_a_spread_of_them(con, tmp_path):
    """A file of more row groups than STATS_FRAGMENTS: the planner's
    estimates come from an even spread of them, the first and the last
    included (so a sorted column's range is exact), NULLs scaled to the
    table; few row groups: every one."""
    from glint.io import table as T

    n = 700 * 10
    a = list(range(n))
    pq.write_table(
        pa.table({"a": a, "b": [None if i % 10 == 0 else i for i in a]}), tmp_path / "m.parquet", row_group_size=10
    )
    con.read_parquet(str(tmp_path / "m.parquet"), "m")
    assert len(con.table("m").fragments) == 700 > T.STATS_FRAGMENTS
    s = con.table("m").stats("a")
    assert (s.min, s.max, s.null_count) == (0, n - 1, 0)
    assert con.table("m").stats("b").null_count == 700  # 1 in 10, scaled from the spread
    pq.write_table(pa.table({"a": a}), tmp_path / "f.parquet", row_group_size=n // 5)
    con.read_parquet(str(tmp_path / "f.parquet"), "f")
    assert (con.table("f").stats("a").min, con.table("f").stats("a").max) == (0, n - 1)


def test_insert_into_tables_read_from_files(con, tmp_path):
    """A Parquet table (an int8 column is INTEGER in glint) takes rows; the file is left alone."""
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": pa.array([1, 2], pa.int8()), "s": pa.array(["x", "y"]).dictionary_encode()}), path)
    before = path.read_bytes()
    con.read_parquet(str(path), "t")
    con.sql("INSERT INTO t VALUES (1000, 'z'), (NULL, NULL)")
    assert con.sql("SELECT a, s FROM t").fetchall() == [(1, "x"), (2, "y"), (1000, "z"), (None, None)]
    assert con.sql("SELECT s, count(*) FROM t GROUP BY s ORDER BY s").fetchall() == [
        ("x", 1),
        ("y", 1),
        ("z", 1),
        (None, 1),
    ]
    assert path.read_bytes() == before
    con.register("r", pa.table({"k": [3, 1]}))
    con.sql("INSERT INTO r SELECT a FROM t WHERE a < 3")
    con.sql("UPDATE r SET k = k * 100 WHERE k = 1")
    assert con.sql("SELECT k FROM r").fetchall() == [(3,), (100,), (100,), (2,)]


CSV_SETUP = [
    "CREATE TABLE t (i INTEGER, b BIGINT, d DECIMAL(15,2), x DOUBLE, s VARCHAR, dt DATE, f BOOLEAN)",
    "INSERT INTO t VALUES (1, 10000000000, 1234.50, 0.1, 'plain', DATE '2024-02-29', true), "
    "(-2, NULL, -0.05, 1e20, 'with,comma', NULL, false), "
    "(NULL, 3, NULL, NULL, 'with \"quotes\"', DATE '1970-01-01', NULL), "
    "(4, -4, 99999.99, 1e-7, '', DATE '0001-01-01', true), "
    "(5, 5, 0.00, 2.5, NULL, DATE '2000-12-31', false), "
    "(6, 6, 0.01, 123456789.125, 'two\nlines', DATE '2020-05-05', true), "
    "(7, 7, 7.77, -1.5, ' padded ', DATE '2020-05-06', false), "
    "(8, 8, 8.00, 1e15, 'semi;colon|pipe', DATE '2020-05-07', true), "
    "(9, 9, 9.00, 3.0, 'ünïcødé ✓', DATE '2020-05-08', true)",
]


@pytest.mark.parametrize(
    "options", ["", "(HEADER false)", "(DELIMITER '|')", "(DELIMITER ';', NULLSTR 'NA')", "(QUOTE '''')"]
)
def test_csv_written_as_duckdb_writes_it(con, duck, tmp_path, options):
    for sql in CSV_SETUP:
        con.sql(sql)
        duck.execute(sql)
    ours, theirs = tmp_path / "glint.csv", tmp_path / "duckdb.csv"
    con.sql(f"COPY t TO '{ours}' {options}")
    duck.execute(f"COPY t TO '{theirs}' {options}")
    assert ours.read_bytes() == theirs.read_bytes()


def test_files_written_by_each_engine_read_by_the_other(con, duck, tmp_path):
    for sql in CSV_SETUP:
        con.sql(sql)
        duck.execute(sql)
    for ext in ("parquet", "csv"):
        mine, theirs = tmp_path / f"glint.{ext}", tmp_path / f"duckdb.{ext}"
        con.sql(f"COPY (SELECT * FROM t ORDER BY i) TO '{mine}'")
        duck.execute(f"COPY (SELECT * FROM t ORDER BY i) TO '{theirs}'")
        for q in (
            f"SELECT * FROM '{mine}'",
            f"SELECT * FROM '{theirs}'",
            f"SELECT s, count(*), sum(d) FROM '{theirs}' GROUP BY s",
        ):
            _same(con.sql(q).arrow(), duck.execute(q).arrow().read_all(), types=ext == "parquet")
        for engine in (con, duck):
            engine.execute("CREATE OR REPLACE TABLE back AS SELECT * FROM t WHERE false")
            engine.execute(f"COPY back FROM '{theirs}'")
            engine.execute(f"COPY back FROM '{mine}'")
        q = "SELECT * FROM back"
        _same(con.sql(q).arrow(), duck.execute(q).arrow().read_all())
    meta = pq.read_metadata(tmp_path / "glint.parquet")
    assert meta.num_rows == 9 and meta.row_group(0).column(0).compression == "SNAPPY"


def test_csv_files_read_as_duckdb_reads_them(con, duck, tmp_path):
    files = {
        "header.csv": 'id,name,when,amount\n1,x,2024-01-31,2.5\n2,"y,z",,\n3,"",1999-12-31,-1\n',
        "noheader.csv": "1,2\n3,4\n",
        "alltext.csv": "a,b\nc,d\ne,\n",
        "pipes.csv": "k|v\n1|a\n2|b\n",
        "tabs.tsv": "k\tv\n1\t1.5\n2\t\n",
        "dups.csv": "a,a,\n1,2,3\n",
        "empty_col.csv": "a,b\n1,\n2,\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        for q in (f"SELECT * FROM '{tmp_path / name}'", f"SELECT * FROM read_csv('{tmp_path / name}')"):
            got, want = con.sql(q).arrow(), duck.execute(q).arrow().read_all()
            assert got.column_names == want.column_names, name
            _same(got, want, ordered=True)


def test_file_tables_are_cached_until_the_file_changes(con, duck, tmp_path):
    path = tmp_path / "f.parquet"
    duck.execute(f"COPY (SELECT i AS a FROM range(100) t(i)) TO '{path}'")
    q = f"SELECT sum(a) FROM '{path}'"
    assert con.sql(q).fetchall() == [(4950,)]
    warm = con.sql(q)
    assert warm.fetchall() == [(4950,)] and warm.io.cache_hits > 0  # the same table, its chunks cached
    time.sleep(0.01)
    duck.execute(f"COPY (SELECT i * 2 AS a FROM range(10) t(i)) TO '{path}'")
    assert con.sql(q).fetchall() == [(90,)]
    # a glob sees files that appear
    duck.execute(f"COPY (SELECT 1000 AS a) TO '{tmp_path / 'g.parquet'}'")
    assert con.sql(f"SELECT sum(a) FROM '{tmp_path}/*.parquet'").fetchall() == [(1090,)]
    assert not [n for n in con.tables() if n.startswith("__glint")]


def test_file_in_from_skips_row_groups_by_statistics(device, tmp_path):
    path = tmp_path / "groups.parquet"
    con = glint.connect(device=device, chunk_rows=4)
    try:
        con.sql(
            f"COPY (SELECT * FROM (VALUES {', '.join(f'({i}, {i * 10})' for i in range(40))}) v(id, x)) "
            f"TO '{path}' (ROW_GROUP_SIZE 4)"
        )
        assert pq.read_metadata(path).num_row_groups == 10
        res = con.sql(f"SELECT sum(x) FROM read_parquet('{path}') WHERE id >= 36")
        assert res.fetchall() == [(1500,)]
        assert res.io.chunks_skipped == 9
    finally:
        con.close()


def test_file_errors_name_the_file_and_the_place(con, tmp_path):
    with pytest.raises(GlintIOError, match=r"nope\.parquet.*at line 2, column 6"):
        con.sql(f"SELECT *\nFROM '{tmp_path}/nope.parquet'")
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    with pytest.raises(GlintIOError, match="bad.parquet"):
        con.sql(f"SELECT * FROM '{bad}'")
    with pytest.raises(GlintIOError, match="does not exist"):
        con.sql(f"COPY (SELECT 1) TO '{tmp_path}/no/dir/x.csv'")
    with pytest.raises(NotSupported, match="read_parquet option hive_partitioning"):
        con.sql(f"SELECT * FROM read_parquet('{bad}', hive_partitioning = true)")


class _Writes:
    """Random INSERT / DELETE / UPDATE / TRUNCATE statements on two tables."""

    SETUP = [
        "CREATE TABLE a (id INTEGER, s VARCHAR, m DECIMAL(8,2), f BOOLEAN NOT NULL DEFAULT false, dt DATE)",
        "CREATE TABLE b (k BIGINT, s VARCHAR DEFAULT 'dflt', x DOUBLE)",
    ]
    PREDICATES = {
        "a": [
            "id IS NULL",
            "id > 1",
            "m < 5",
            "m IS NOT NULL",
            "s > 'a'",
            "s = 'a'",
            "f",
            "f = false",
            "dt > DATE '2020-01-01'",
            "id IN (SELECT k FROM b)",
            "id = (SELECT max(id) FROM a)",
        ],
        "b": ["k IS NULL", "k > 1", "x < 5", "s <> 'b'", "s IS NOT NULL", "k IN (SELECT id FROM a)"],
    }
    SETS = {
        "a": [
            "m = m * 2",
            "s = upper(s)",
            "id = id + 1",
            "f = NOT f",
            "dt = dt + 1",
            "m = NULL",
            "s = s || 'z', m = -m",
            "f = DEFAULT",
        ],
        "b": ["x = x / 2", "s = coalesce(s, 'n')", "k = k * 3", "s = DEFAULT"],
    }

    def __init__(self, seed: int):
        import random

        self.r = random.Random(seed)

    def lit(self, kind: str) -> str:
        r = self.r
        if r.random() < 0.2:
            return "NULL"
        return {
            "int": lambda: str(r.choice([0, 1, -1, 7, 42, 1000, r.randrange(-50, 50)])),
            "dec": lambda: f"{r.randrange(-999, 999)}.{r.randrange(100):02d}",
            "str": lambda: "'" + r.choice(["a", "b", "", "x y", "it''s", "Z", "ü"]) + "'",
            "date": lambda: f"DATE '20{r.randrange(10, 30)}-0{r.randrange(1, 9)}-1{r.randrange(0, 9)}'",
            "dbl": lambda: r.choice(["0.5", "1.25::DOUBLE", "-2.0", "3"]),
        }[kind]()

    def statement(self) -> str:
        r = self.r
        t, x = r.choice(["a", "b"]), r.random()
        where = r.choice(self.PREDICATES[t])
        if x < 0.35:
            if t == "a":
                rows = [
                    f"({self.lit('int')}, {self.lit('str')}, {self.lit('dec')}, "
                    f"{r.choice(['true', 'false', 'DEFAULT'])}, {self.lit('date')})"
                    for _ in range(r.randrange(1, 5))
                ]
            else:
                rows = [
                    f"({self.lit('int')}, {r.choice([self.lit('str'), 'DEFAULT'])}, {self.lit('dbl')})"
                    for _ in range(r.randrange(1, 5))
                ]
            return f"INSERT INTO {t} VALUES " + ", ".join(rows)
        if x < 0.5:
            return r.choice(
                [
                    f"INSERT INTO b SELECT id, s, m FROM a WHERE {r.choice(self.PREDICATES['a'])}",
                    f"INSERT INTO a (id, s, m) SELECT k, s, x FROM b WHERE {r.choice(self.PREDICATES['b'])}",
                    "INSERT INTO b (k) SELECT count(*) FROM a",
                    "INSERT INTO a BY NAME SELECT k AS id, s FROM b",
                ]
            )
        if x < 0.7:
            return f"DELETE FROM {t} WHERE {where}"
        if x < 0.95:
            return f"UPDATE {t} SET {r.choice(self.SETS[t])} WHERE {where}"
        return f"TRUNCATE {t}"


@pytest.mark.parametrize("seed", [1, 2])
def test_random_writes_match_duckdb(device, duck, seed):
    """After every statement of a random sequence of writes, both tables hold
    DuckDB's rows in DuckDB's order, and a statement fails in glint exactly
    when it fails in DuckDB (the failure changes nothing)."""
    con = glint.connect(device=device, chunk_rows=8)
    gen = _Writes(seed)
    try:
        for sql in _Writes.SETUP:
            con.sql(sql)
            duck.execute(sql)
        for _ in range(60):
            sql = gen.statement()
            try:
                duck.execute(sql)
                failed = False
            except duckdb.Error:
                failed = True
            if failed:
                with pytest.raises(GlintError):
                    con.sql(sql)
            else:
                con.sql(sql)
            for t in ("a", "b"):
                assert con.sql(f"SELECT * FROM {t}").fetchall() == duck.execute(f"SELECT * FROM {t}").fetchall(), sql
    finally:
        con.close()


def test_sample_distinct_counts_match_sorting_and_hashing():
    """The planner's sample statistics: distinct values and values seen
    once by a count per value (small integer ranges) are those of
    torch.unique; a dictionary-encoded string sample's counts (NULLs,
    strings repeated across row groups' dictionaries and within one) are
    those of Arrow's hash table over the strings."""
    import numpy as np
    import pyarrow.compute as pc
    import torch

    from glint.io.table import _distinct_and_singles, _string_counts

    rng = np.random.default_rng(3)
    for lo, span, n in [(-50, 100, 1000), (10**12, 5000, 2000), (0, 10**9, 3000), (-(2**62), 2**62, 500)]:
        x = torch.from_numpy(rng.integers(0, span, n, dtype=np.int64) + lo)
        counts = torch.unique(x, return_counts=True)[1]
        want = (int(counts.numel()), int((counts == 1).sum()))
        assert _distinct_and_singles(x, int(x.min()), int(x.max())) == want
        assert _distinct_and_singles(x, None, None) == want
    chunks, plain = [], []
    for k in range(4):
        words = pa.array([f"w{rng.integers(0, 30)}" if rng.random() > 0.1 else None for _ in range(500)])
        enc = words.dictionary_encode()
        # a dictionary with an entry twice (a writer may repeat one)
        dup = pa.concat_arrays([enc.dictionary, enc.dictionary.slice(0, 1)])
        idx = (
            pc.if_else(pc.equal(enc.indices, 0), pa.scalar(len(enc.dictionary), pa.int32()), enc.indices)
            if k % 2
            else enc.indices
        )
        chunks.append(pa.DictionaryArray.from_arrays(idx, dup))
        plain.append(words)
    got = _string_counts(pa.chunked_array(chunks))
    want = pc.value_counts(pc.drop_null(pa.chunked_array(plain))).field("counts").to_numpy(zero_copy_only=False)
    assert sorted(got.tolist()) == sorted(want.tolist())
