"""The differential fuzzer (glint.testing.fuzz): a fixed-seed run against DuckDB,
and unit tests of its data, generator, runner classification and reducer.

``test_fuzz_fixed_seed`` fails while glint has the bugs the fuzzer found (see
tests/sqllogic/fuzz/regressions.test); refusals (NotSupported) are allowed and
printed. Run more with ``glint fuzz --seed S --queries N``.
"""

from __future__ import annotations

import datetime
import time
from collections import Counter

import pyarrow as pa
import pytest
import sqlglot

from glint.testing.fuzz import data as fdata
from glint.testing.fuzz.classify import classify
from glint.testing.fuzz.data import FuzzData
from glint.testing.fuzz.engines import Duck, Engines, GlintWorker
from glint.testing.fuzz.generator import QueryGenerator, generate_query
from glint.testing.fuzz.reduce import reduce_sql, referenced_columns, sqllogic_text, table_statements, trim_rows
from glint.testing.fuzz.results import Outcome, compare_results
from glint.testing.fuzz.runner import failure_signature, print_summary, run_fuzz

FUZZ_SEED = 20240611
FUZZ_QUERIES = 500
FUZZ_ROWS = 100


@pytest.fixture(scope="module")
def info():
    return fdata.make_data(FUZZ_SEED, rows=FUZZ_ROWS).info


# ------------------------------------------------------------------ data
def test_data_is_deterministic_and_nasty():
    a = fdata.make_data(5, rows=120)
    b = fdata.make_data(5, rows=120)
    c = fdata.make_data(6, rows=120)
    assert all(a.tables[n].equals(b.tables[n]) for n in a.tables)
    assert not a.tables["t0"].equals(c.tables["t0"])
    t0 = a.tables["t0"]
    assert all(t.num_rows <= 120 for t in a.tables.values())
    assert a.tables["t4"].num_rows == 0 and a.tables["t5"].num_rows == 1
    assert t0.column("k1").null_count > 0 and t0.column("k2").null_count > 0
    ints = [v for v in t0.column("i").to_pylist() if v is not None]
    assert fdata.INT32_MIN in ints or fdata.INT32_MAX in ints
    assert pa.types.is_decimal(t0.schema.field("d18").type) and t0.schema.field("d18").type.precision == 18
    assert a.tables["t1"].column("n").null_count == a.tables["t1"].num_rows  # an all-NULL column
    keys = Counter(v for v in t0.column("k1").to_pylist() if v is not None)
    assert keys.most_common(1)[0][1] > 5  # duplicate keys, skew


# ------------------------------------------------------------------ generator
def test_generator_is_deterministic(info):
    first = [QueryGenerator(info, seed=s).generate().sql for s in range(30)]
    again = [QueryGenerator(info, seed=s).generate().sql for s in range(30)]
    assert first == again
    assert len(set(first)) == len(first)
    g1, g2 = QueryGenerator(info, seed=3), QueryGenerator(info, seed=3)
    assert [g1.generate().sql for _ in range(10)] == [g2.generate().sql for _ in range(10)]


def test_generated_queries_parse_with_sqlglot(info):
    features = Counter()
    for s in range(300):
        q = QueryGenerator(info, seed=s).generate()
        tree = sqlglot.parse_one(q.sql, read="duckdb")
        assert tree is not None, q.sql
        features.update(q.features)
    # the generator reaches the constructs it is meant to
    for f in (
        "join:left",
        "join:full",
        "join:right",
        "join:cross",
        "join:comma",
        "join:using",
        "join:multikey",
        "aggregate",
        "group_by",
        "having",
        "agg:distinct",
        "order_by",
        "limit",
        "offset",
        "distinct",
        "subquery:in",
        "subquery:not_in",
        "subquery:exists",
        "subquery:not_exists",
        "subquery:scalar",
        "correlated",
        "setop:union",
        "setop:intersect",
        "setop:except",
        "case",
        "coalesce",
        "nullif",
        "cast",
        "like",
        "between",
        "in_list",
        "is_null",
        "extract",
        "cte",
        "ts:interval",
        "ts:date_trunc",
        "ts:extract",
        "ts:compare",
        "ts:date_diff",
        "ts:date_sub",
        "ts:cast",
        "derived_table",
        "fn:substring",
        "fn:concat",
    ):
        assert features[f] > 0, f"no generated query has {f}"


def test_generated_queries_are_valid_in_duckdb(info):
    """Nearly every query binds in DuckDB (errors at run time, e.g. overflows, are fine)."""
    import duckdb

    con = duckdb.connect()
    d = fdata.make_data(FUZZ_SEED, rows=20)
    d.register(duck_con=con)
    bad = []
    for s in range(200):
        sql = QueryGenerator(d.info, seed=s).generate().sql
        try:
            con.execute(sql).fetchall()
        except (duckdb.BinderException, duckdb.ParserException, duckdb.CatalogException) as e:
            bad.append((sql, str(e).splitlines()[0]))
        except duckdb.Error:
            pass
    assert len(bad) <= 6, bad[:6]


# ------------------------------------------------------------------ classification
def test_classify_outcomes():
    t = pa.table({"a": [1, 2]})
    assert classify("SELECT a FROM t", ("ok", t), ("ok", pa.table({"x": [2, 1]}))).status == "match"
    o = classify("SELECT a FROM t ORDER BY a", ("ok", t), ("ok", pa.table({"x": [2, 1]})))
    assert o.status == "mismatch" and o.details
    assert classify("q", ("ok", t), ("refusal", "NotSupported", "Not supported: X(1)", "X(1)")).construct == "X(N)"
    assert classify("q", ("ok", t), ("crash", "IndexError", "boom", "tb")).status == "crash"
    assert classify("q", ("ok", t), ("glint_error", "ExecutionError", "overflow", "")).status == "error_mismatch"
    assert (
        classify("q", ("error", "BinderException: x"), ("glint_error", "BinderError", "x", "")).status == "both_error"
    )
    o = classify("q", ("error", "OutOfRangeException: Overflow in addition of INT64 (1 + 2)!"), ("ok", t))
    assert o.status == "mismatch"
    o = classify(
        "q",
        ("error", "OutOfRangeException: Overflow in addition of INT64 (1 + 2)!"),
        ("ok", pa.table({"a": pa.array([], pa.int64())})),
    )
    assert o.status == "duck_only_error"  # glint never had to evaluate it: empty result
    o = classify("q", ("error", "NotImplementedException: Not implemented Error: x"), ("ok", t))
    assert o.status == "duck_only_error"
    assert failure_signature(
        Outcome("crash", "q", glint_error="IndexError: list 3", glint_error_type="IndexError")
    ) == failure_signature(Outcome("crash", "q", glint_error="IndexError: list 4", glint_error_type="IndexError"))


def test_compare_results_dates_and_timestamps():
    import datetime as dt

    g = pa.table({"d": pa.array([dt.date(2000, 1, 2), None], pa.date32())})
    d = pa.table({"d": pa.array([dt.datetime(2000, 1, 2), None], pa.timestamp("us"))})
    # a DATE where DuckDB has a TIMESTAMP (date + INTERVAL) is a wrong type, even at midnight
    assert compare_results("SELECT d FROM t", g, d) == ["column 1: glint type date32[day], DuckDB type timestamp[us]"]
    assert compare_results("SELECT d FROM t", d, d) == []
    e = pa.table({"d": pa.array([dt.datetime(2000, 1, 2, 0, 0, 0, 1), None], pa.timestamp("us"))})
    assert compare_results("SELECT d FROM t", e, d)
    # timestamps past Python's year 9999 compare as microseconds
    far = pa.table({"d": pa.array([2**62, None], pa.int64()).cast(pa.timestamp("us"))})
    assert compare_results("SELECT d FROM t", far, far) == [] and compare_results("SELECT d FROM t", far, d)
    # all-NULL columns: the type does not matter
    assert (
        compare_results(
            "SELECT x", pa.table({"x": pa.array([None], pa.string())}), pa.table({"x": pa.array([None], pa.int32())})
        )
        == []
    )


# ------------------------------------------------------------------ reducer
def test_reduce_sql_on_a_synthetic_predicate():
    sql = (
        "SELECT a.x AS c0, UPPER(a.s) AS c1, (a.y + 1) * 2 AS c2 FROM t AS a JOIN u AS b ON a.k = b.k "
        "LEFT JOIN v AS c ON b.k = c.k WHERE a.x > 1 AND (a.y < 3 OR a.z IS NULL) AND a.s LIKE 'x%' "
        "ORDER BY 1, 2 LIMIT 5"
    )
    calls = []

    def fails(s: str) -> bool:  # the "bug": a.y < 3 on a query that reads u
        calls.append(s)
        return "a.y < 3" in s and " u " in f" {s} "

    out = reduce_sql(sql, fails)
    assert fails(out)
    assert len(out) < len(sql) // 2, out
    assert "ORDER BY" not in out and "LIMIT" not in out and "LIKE" not in out and "JOIN v" not in out
    assert sqlglot.parse_one(out, read="duckdb") is not None


def test_reduce_sql_keeps_the_original_when_nothing_fails():
    assert reduce_sql("SELECT 1 AS c0 FROM t", lambda s: False) == "SELECT 1 AS c0 FROM t"


def test_trim_rows_and_reproducer_text():
    t = pa.table({"k": list(range(40)), "s": [f"v{i}" for i in range(40)]})

    def fails(tables):  # needs the rows with k == 7 and k == 30
        ks = set(tables["t"].column("k").to_pylist())
        return {7, 30} <= ks

    out = trim_rows({"t": t}, ["t"], fails)
    assert sorted(out["t"].column("k").to_pylist()) == [7, 30]
    text = sqllogic_text(out, "SELECT k FROM t", expect_error=False, header=["x"])
    assert "CREATE OR REPLACE TABLE t(k BIGINT, s VARCHAR)" in text
    assert "INSERT INTO t VALUES (7, 'v7'), (30, 'v30')" in text
    assert "query rowsort\nSELECT k FROM t" in text
    stmts = table_statements("e", pa.table({"d": pa.array([None], pa.decimal128(18, 2)), "f": pa.array([-0.0])}))
    assert stmts[0].endswith("CREATE OR REPLACE TABLE e(d DECIMAL(18,2), f DOUBLE)")
    assert stmts[1].endswith("INSERT INTO e VALUES (NULL, CAST('-0.0' AS DOUBLE))")
    assert referenced_columns("SELECT a.x FROM t AS a JOIN u AS b USING (k)") == {"x", "k"}
    assert referenced_columns("SELECT * FROM t") is None


# ------------------------------------------------------------------ the run
def test_fuzz_fixed_seed(tmp_path, capsys):
    """500 generated queries on the CPU: zero mismatches and zero crashes
    (refusals allowed). Fails until the bugs in tests/sqllogic/fuzz/regressions.test
    are fixed."""
    t0 = time.perf_counter()
    s = run_fuzz(
        FUZZ_SEED, FUZZ_QUERIES, device="cpu", rows=FUZZ_ROWS, out=tmp_path / "failures", reduce=False, time_limit=30
    )
    elapsed = time.perf_counter() - t0
    with capsys.disabled():
        print()
        print_summary(s)
        print(f"fuzz run took {elapsed:.1f} s")
    assert s.queries == FUZZ_QUERIES
    assert s.counts["match"] > FUZZ_QUERIES // 2  # the generator stays mostly within glint's SQL
    failures = [f"query {i} ({o.status}): {o.sql[:400]}\n    {o.summary()[:300]}" for i, o, _ in s.failures]
    assert not failures, f"{len(failures)} mismatches/crashes (reproducers in {tmp_path}):\n" + "\n".join(failures[:15])


def test_fuzz_tiny_chunks_and_memory(tmp_path, capsys, monkeypatch):
    """The same differential run with 7-row chunks and a 16 KB memory limit
    (the worker processes read GLINT_CHUNK_ROWS / GLINT_MEMORY_LIMIT), so every
    query streams chunk by chunk and breakers spill: zero mismatches, zero crashes."""
    monkeypatch.setenv("GLINT_CHUNK_ROWS", "7")
    monkeypatch.setenv("GLINT_MEMORY_LIMIT", "16KB")
    s = run_fuzz(
        FUZZ_SEED + 1, 300, device="cpu", rows=FUZZ_ROWS, out=tmp_path / "failures", reduce=False, time_limit=60
    )
    with capsys.disabled():
        print()
        print_summary(s)
    assert s.queries == 300 and s.counts["match"] > 150
    failures = [f"query {i} ({o.status}): {o.sql[:400]}\n    {o.summary()[:300]}" for i, o, _ in s.failures]
    assert not failures, f"{len(failures)} mismatches/crashes (reproducers in {tmp_path}):\n" + "\n".join(failures[:15])


def test_generate_query_is_reproducible():
    d = fdata.make_data(1, rows=10)
    assert generate_query(d, 1, 17).sql == generate_query(d, 1, 17).sql


# ------------------------------------------------------------------ crashes that kill the process
CRASH_REGRESSIONS = [  # fuzz bug 2 of tests/sqllogic/fuzz/regressions.test (SIGFPE)
    "SELECT b // -1 FROM fz_ints WHERE b < 0",
    "SELECT i // -1 FROM fz_ints WHERE i < 0",
    "SELECT b % -1 FROM fz_ints WHERE b < 0",
]


@pytest.mark.parametrize("sql", CRASH_REGRESSIONS)
def test_crash_regressions_in_a_subprocess(sql):
    """Queries that took the whole process down (a signal): run in a glint
    worker process; glint must raise a GlintError (DuckDB: Overflow in division)."""
    w = GlintWorker("cpu")
    w.register(
        "fz_ints",
        pa.table({"i": pa.array([-2147483648, 5], pa.int32()), "b": pa.array([-9223372036854775808, 7], pa.int64())}),
    )
    try:
        reply = w.query(sql, timeout=60)
    finally:
        w.close()
    assert reply[0] == "glint_error", reply[:3]


def test_worker_time_limit_and_restart():
    """A query past the time limit is a crash ("Timeout"); the worker is restarted."""
    w = GlintWorker("cpu")
    w.register("t", pa.table({"a": list(range(1000))}))
    try:
        assert w.query("SELECT sum(a) FROM t", timeout=60)[0] == "ok"
        reply = w.query("SELECT count(*) FROM t AS x, t AS y WHERE x.a + y.a > 7", timeout=0.0001)
        assert reply[:2] == ("crash", "Timeout")
        assert w.query("SELECT count(*) FROM t", timeout=60)[0] == "ok"
        assert w.restarts >= 1
    finally:
        w.close()


def test_evaluation_order_needs_a_probe_that_fails_in_both_engines():
    """glint answering where DuckDB raised a run-time error counts as an
    evaluation-order difference only when glint raises on the very operation
    DuckDB names (an unchecked overflow in glint would stay a mismatch)."""
    data = FuzzData(tables={"t": pa.table({"b": pa.array([-9223372036854775808, 7], pa.int64())})}, info=None)
    e = Engines(data, "cpu", 60, in_process=True)
    try:
        # COALESCE never needs its second argument: glint folds it away, DuckDB computes it
        o = e.run("SELECT COALESCE(4, (SELECT b - 9 FROM t WHERE b < 0)) AS c FROM t")
        assert o.status == "eval_order", o.details
        assert "raises on it too" in o.details[0]

        class Lenient:  # an engine that answers the probe: an unchecked overflow
            def query(self, sql, timeout):
                return ("ok", pa.table({"x": [1]}))

        o2 = classify(o.sql, ("error", o.duck_error), ("ok", pa.table({"c": [4, 4]})))
        assert o2.status == "mismatch"
        e.glint, real = Lenient(), e.glint
        e._check_evaluation_order(o2)
        assert o2.status == "mismatch"
        e.glint = real
    finally:
        e.close()


def test_duckdb_computing_an_unread_window_is_evaluation_order():
    """DuckDB computes a derived table's window that nothing reads, and its
    RANGE frame's INTERVAL bound leaves the TIMESTAMP range; glint prunes the
    window and answers. Evaluation order, since glint raises too when the
    window is read (seed 9800 q3684)."""
    import duckdb

    t3 = duckdb.sql(
        "SELECT * FROM (VALUES ('a', TIMESTAMP '294247-01-10 04:00:54.775806'), ('a', TIMESTAMP '2000-01-01'), "
        "('b', NULL)) v(k2, tx)"
    ).arrow()
    t3 = t3.read_all() if hasattr(t3, "read_all") else t3
    window = (
        "SELECT MIN(a1.tx) OVER (PARTITION BY a1.k2 ORDER BY a1.tx NULLS FIRST RANGE BETWEEN INTERVAL 2 HOUR "
        "PRECEDING AND INTERVAL 12 MONTH FOLLOWING) AS c0 FROM t3 AS a1"
    )
    e = Engines(FuzzData(tables={"t3": t3}, info=None), "cpu", 60, in_process=True)
    try:
        o = e.run(f"SELECT 288.69 AS c1 FROM ({window}) AS q2")
        assert o.status == "eval_order", (o.status, o.details)
        assert "raises on it too" in o.details[0]
        assert e.run(window).status == "both_error"
    finally:
        e.close()


def test_duckdb_raising_on_a_set_operation_branch_glint_finds_empty():
    """DuckDB raised on a branch of a UNION ALL (a value it computed below a
    join that keeps no rows, its message naming no operands) while the other
    branch has rows: evaluation order when glint's rows of the failing branch
    are none; a mismatch still when they are not."""
    data = FuzzData(
        tables={"t": pa.table({"k": pa.array([1, 2], pa.int64())}), "u": pa.table({"k": pa.array([5], pa.int64())})},
        info=None,
    )
    err = "ConversionException: Conversion Error: Date and time not in timestamp range"

    class RaisingOnJoin:  # DuckDB as it behaved: the joining branch fails, and so the query
        def query(self, sql, timeout, disable=""):
            return ("error", err) if "JOIN" in sql else ("ok", pa.table({"c": [1]}))

    e = Engines(data, "cpu", 60, in_process=True)
    real = e.duck
    try:
        e.duck = RaisingOnJoin()
        empty = "SELECT 1 AS c UNION ALL SELECT t.k AS c FROM t JOIN u ON t.k = u.k"
        o = classify(empty, ("error", err), ("ok", pa.table({"c": [1]})))
        assert o.status == "mismatch"
        e._check_evaluation_order(o)
        assert o.status == "duck_only_error" and "branch of a set operation" in o.details[0], o.details
        rows = "SELECT 1 AS c UNION ALL (SELECT t.k AS c FROM t JOIN t AS t2 ON t.k = t2.k)"
        o = classify(rows, ("error", err), ("ok", pa.table({"c": [1, 1, 2]})))
        e._check_evaluation_order(o)
        assert o.status == "mismatch", o.details
    finally:
        e.duck = real
        e.close()


def test_duckdb_disagreeing_with_itself_is_an_oracle_bug():
    """DuckDB 1.4's expression rewriter folds date_trunc('day', dt) <= '1995-01-05'
    to TRUE for dt = 1995-01-06 (seed 607 q280) and date_trunc compared with a
    constant to TRUE for a NULL (seeds 602, 606, 610): without the rewriter DuckDB
    answers as glint does, so the outcome is an oracle bug, not a mismatch. A real
    difference stays a mismatch."""
    t = pa.table(
        {
            "dt": pa.array([datetime.date(1995, 1, 6), None], pa.date32()),
            "ts": pa.array([None, None], pa.timestamp("us")),
        }
    )
    e = Engines(FuzzData(tables={"t": t}, info=None), "cpu", 60, in_process=True)
    try:
        for sql in (
            "SELECT dt FROM t WHERE date_trunc('day', dt) <= '1995-01-05'",
            "SELECT date_trunc('century', ts) <> '2000-01-31' FROM t",
        ):
            o = e.run(sql)
            assert o.status == "oracle_bug", (sql, o.status, o.details)
        o = classify("SELECT 1", ("ok", pa.table({"x": [1]})), ("ok", pa.table({"x": [2]})))
        assert o.status == "mismatch"
        e._check_oracle(o)
        assert o.status == "mismatch"
    finally:
        e.close()


@pytest.mark.parametrize(
    "sql, probe",
    [
        # DuckDB computes RANGE frame bounds for CUME_DIST / RANK, which ignore them, and fails past
        # the TIMESTAMP range (seed 614 q1639): the probe reads the frame with COUNT(*)
        (
            "SELECT CUME_DIST() OVER (ORDER BY tx DESC RANGE BETWEEN INTERVAL '3' HOUR PRECEDING "
            "AND INTERVAL '1' MINUTE FOLLOWING) AS c0 FROM t3",
            "COUNT(*) OVER",
        ),
        # DuckDB computes a CTE read only under CASE NULL WHEN ... (seed 610 q1807): the probe reads it
        (
            "WITH w7 AS (SELECT tx - INTERVAL '-2' QUARTER AS c0 FROM t3) SELECT NULL AS c1 FROM "
            "(SELECT CASE NULL WHEN 'x' THEN split_part((SELECT NULL FROM w7), ',', 3) END AS c0 FROM t3) q",
            "SELECT * FROM w7",
        ),
    ],
)
def test_values_only_duckdb_computes_are_evaluation_order(sql, probe):
    """glint never computes the value DuckDB fails on, and raises as soon as it does."""
    t = pa.table({"tx": pa.array([9223372036854775806 - 10**6], pa.int64()).cast(pa.timestamp("us"))})
    e = Engines(FuzzData(tables={"t3": t}, info=None), "cpu", 60, in_process=True)
    try:
        o = e.run(sql)
        assert o.status == "eval_order", o.details
        assert probe in o.details[0]
    finally:
        e.close()


def test_oracle_runs_without_duckdbs_join_filter_pushdown_below_limit():
    """DuckDB 1.4 pushes a join's run-time filter below a TOP_N (duckdb/duckdb#22924):
    seed 133 q18 joined a value that is not among the subquery's 10 smallest. The
    oracle's DuckDB must answer as glint does (and as DuckDB without that optimizer)."""
    import glint

    d = fdata.make_data(133, rows=150)
    sql = (
        "SELECT a1.k1, q4.c0 FROM t3 AS a1 JOIN (SELECT a2.d18 AS c0 FROM t2 AS a2 FULL JOIN t4 AS a3 "
        "ON a2.k1 = a3.k1 WHERE TRUE ORDER BY 1 LIMIT 10) AS q4 ON a1.k1 = q4.c0"
    )
    duck = Duck()
    for name, t in d.tables.items():
        duck.register(name, t)
    duck.con.execute("SET threads = 1")  # the wrong row came every time with one thread
    status, got = duck.query(sql, 30)
    assert status == "ok" and got.num_rows == 0
    con = glint.connect(device="cpu")
    d.register(glint_con=con)
    assert con.sql(sql).fetchall() == []
    limited = con.sql(
        "SELECT min(c0), max(c0), count(*) FROM (SELECT a2.d18 AS c0 FROM t2 AS a2 FULL JOIN t4 AS a3 "
        "ON a2.k1 = a3.k1 ORDER BY 1 LIMIT 10) AS q"
    ).fetchall()
    assert limited[0][2] == 10 and limited[0][1] < 0  # no 0.00 among the 10 smallest


def test_generated_decimals_fit_their_type():
    """10**p has p + 1 digits: seed 144's tables could not be built (DECIMAL(4,1) got 1000.0)."""
    from decimal import Decimal

    for seed in range(40):
        g = fdata._Gen(seed)
        for p, s in ((1, 0), (4, 1), (5, 4), (8, 2), (15, 2), (18, 6)):
            vals = [v for v in g.decimal(400, p, s) if v is not None]
            assert all(abs(v) < Decimal(10) ** (p - s) for v in vals), (seed, p, s)
    assert fdata.make_data(144, rows=150).tables["t0"].num_rows == 150


# ------------------------------------------------------------------ reproducers
def test_reproducers_go_to_the_temporary_directory_as_regression_sections(tmp_path, monkeypatch, capsys):
    """Without --out, reproducers go under the system's temporary directory; each
    repro.test is a section of sqllogictest records that tests/sqllogic/fuzz/regressions.test
    takes as it is."""
    import tempfile

    from glint.testing.fuzz import classify as fclassify
    from glint.testing.fuzz.reduce import append_regression, default_out_dir
    from tests.sqllogic import runner as sqllogic

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert default_out_dir() == tmp_path / "glint-fuzz"
    monkeypatch.setattr(fclassify, "compare_results", lambda sql, got, expected: ["a forced difference"])
    s = run_fuzz(3, 6, device="cpu", rows=20, reduce=False, in_process=True)
    assert s.failures and s.reproducers >= len(s.failures) and s.out == tmp_path / "glint-fuzz"
    dirs = sorted((tmp_path / "glint-fuzz").iterdir())
    assert len(dirs) == s.reproducers and all(d.name.startswith("seed3-q") for d in dirs)
    text = (dirs[0] / "repro.test").read_text()
    assert text.startswith("# ==== fuzz reproducer: seed 3, query ")
    assert sqllogic.parse(text, "repro.test").records
    regressions = tmp_path / "regressions.test"
    regressions.write_text("# name: regressions.test\n")
    append_regression(dirs[0], regressions, "fuzz bug N: a title")
    merged = regressions.read_text()
    assert merged.count("# ====") == 1 and "# ==== fuzz bug N: a title\n" in merged
    assert len(sqllogic.parse(merged, "regressions.test").records) == len(sqllogic.parse(text).records)
    print_summary(s)
    out = capsys.readouterr().out
    assert str(tmp_path / "glint-fuzz") in out and "tests/sqllogic/fuzz/regressions.test" in out


def test_fuzz_help_says_where_reproducers_go(capsys):
    from glint.__main__ import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["fuzz", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "temporary directory" in text and "tests/sqllogic/fuzz/regressions.test" in text
