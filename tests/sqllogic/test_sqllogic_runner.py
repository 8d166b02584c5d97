"""Unit tests of the sqllogictest runner (tests/sqllogic/), independent of the engine."""

from __future__ import annotations

import datetime as dt
import decimal
import doctest
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from tests.sqllogic import generate, runner
from tests.sqllogic.runner import Record, RecordFailure

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def q(expected, types="I", sortmode="nosort", sql="SELECT 1") -> Record:
    return Record("query", 7, sql=sql, types=types, sortmode=sortmode, expected=expected)


# --------------------------------------------------------------------------- parsing


def test_doctests_of_runner():
    result = doctest.testmod(runner)
    assert result.failed == 0 and result.attempted > 0


def test_parse_statements_and_queries():
    text = """# header comment
statement ok
CREATE TABLE t(a INTEGER)

statement error
SELECT *
FROM nosuch
----
Table "nosuch" does not exist

statement error
SELEC 1

query IT rowsort
SELECT a, 'x'
# a comment inside the SQL is dropped
FROM t
----
1\tx
2\tx

query R valuesort mylabel
SELECT 0.5
----
0.5

statement maybe
SELECT 1
"""
    f = runner.parse(text, "x.test")
    kinds = [(r.kind, r.line) for r in f.records]
    assert kinds == [
        ("statement", 2),
        ("statement", 5),
        ("statement", 11),
        ("query", 14),
        ("query", 22),
        ("statement", 27),
    ]
    ok, err, err2, q1, q2, maybe = f.records
    assert ok.expect == "ok" and ok.sql == "CREATE TABLE t(a INTEGER)" and ok.error is None
    assert err.expect == "error" and err.sql == "SELECT *\nFROM nosuch" and err.error == 'Table "nosuch" does not exist'
    assert err2.expect == "error" and err2.error is None and not err2.has_separator
    assert q1.types == "IT" and q1.sortmode == "rowsort" and q1.sql == "SELECT a, 'x'\nFROM t"
    assert q1.expected == ["1\tx", "2\tx"] and q1.has_separator
    assert (q1.header_index, q1.end_index) == (13, 20)
    assert q2.types == "R" and q2.sortmode == "valuesort" and q2.label == "mylabel" and q2.expected == ["0.5"]
    assert maybe.expect == "maybe"


def test_parse_query_without_results_or_types():
    f = runner.parse("query\nSELECT 1\n\nquery rowsort\nSELECT 2\n----\n")
    a, b = f.records
    assert a.types is None and a.expected is None and a.sortmode == "nosort"
    assert b.types is None and b.sortmode == "rowsort" and b.expected == []


def test_parse_results_end_only_at_an_empty_line():
    # a blank value (" ") is a result line, not the end of the record
    f = runner.parse("query T\nSELECT ' '\n----\n \nx\n\nquery I\nSELECT 1\n----\n1")
    assert f.records[0].expected == [" ", "x"]
    assert f.records[1].expected == ["1"]  # results may end at EOF


def test_parse_conditions_modes_requires_halt():
    text = """hash-threshold 8

skipif duckdb
query I
SELECT 1
----
1

onlyif GLINT
statement ok
SELECT 1

mode skip

statement ok
SELECT 2

mode unskip

require tpch

statement ok
SELECT 3

halt

statement ok
THIS IS NOT PARSED
"""
    recs = runner.parse(text).records
    assert len(recs) == 4
    assert recs[0].conditions == [("skipif", "duckdb")]
    assert recs[1].conditions == [("onlyif", "glint")]
    assert recs[2].skip == "mode skip" and recs[2].conditions == []
    assert recs[3].requires == ("tpch",) and recs[3].skip is None
    assert runner.skip_reason(recs[0], "duckdb", None) == "skipif duckdb"
    assert runner.skip_reason(recs[0], "glint", "cpu") is None
    assert runner.skip_reason(recs[1], "glint", "cuda") is None
    assert runner.skip_reason(recs[1], "duckdb", None) == "onlyif glint"
    assert runner.skip_reason(recs[2], "glint", "cpu") == "mode skip"
    assert "require tpch" in runner.skip_reason(recs[3], "glint", "cpu")


def test_conditions_on_devices():
    rec = runner.parse("skipif cuda\nquery I\nSELECT 1\n----\n1\n").records[0]
    assert runner.skip_reason(rec, "glint", "cuda:1") == "skipif cuda"
    assert runner.skip_reason(rec, "glint", "cpu") is None
    rec = runner.parse("require cuda\n\nquery I\nSELECT 1\n----\n1\n").records[0]
    assert runner.skip_reason(rec, "glint", "cuda") is None
    assert runner.skip_reason(rec, "glint", "cpu") is not None


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("loop i 0 10\n", "not supported"),
        ("frobnicate\n", "unknown directive"),
        ("query I sideways\nSELECT 1\n", "unknown sort mode"),
        ("query I\n----\n1\n", "without SQL"),
        ("statement ok\nSELECT 1\n----\nx\n", "cannot have a ---- section"),
        ("statement sometimes\nSELECT 1\n", "statement ok"),
        ("mode fast\n", "unknown mode"),
        ("query I rowsort lbl extra\nSELECT 1\n", "unexpected text"),
    ],
)
def test_parse_errors_name_the_line(text, fragment):
    with pytest.raises(runner.SQLLogicParseError) as ei:
        runner.parse("\n" + text, "bad.test")
    assert fragment in str(ei.value) and "bad.test:2" in str(ei.value)


# --------------------------------------------------------------------------- value printing


@pytest.mark.parametrize(
    "value, text",
    [
        (None, "NULL"),
        (True, "true"),
        (False, "false"),
        (0, "0"),
        (-42, "-42"),
        (2**70, str(2**70)),
        (0.1, "0.1"),
        (3.0, "3.0"),
        (-0.0, "-0.0"),
        (1e20, "1e+20"),
        (1.5e-7, "1.5e-07"),
        (float("inf"), "inf"),
        (float("-inf"), "-inf"),
        (float("nan"), "nan"),
        ("", "(empty)"),
        ("abc", "abc"),
        (" ", " "),
        (decimal.Decimal("12.50"), "12.50"),
        (decimal.Decimal("0.00"), "0.00"),
        (decimal.Decimal("-0.05"), "-0.05"),
        (decimal.Decimal("1E-7"), "0.0000001"),
        (decimal.Decimal("1E+3"), "1000"),
        (dt.date(1995, 3, 15), "1995-03-15"),
        (dt.date(2000, 2, 29), "2000-02-29"),
        (dt.datetime(1995, 3, 15), "1995-03-15 00:00:00"),
        (dt.datetime(1995, 3, 15, 1, 2, 3, 120000), "1995-03-15 01:02:03.12"),
        (dt.time(13, 5, 0), "13:05:00"),
        (dt.timedelta(days=1, seconds=5), "24:00:05"),
        ([1, None, "x"], "[1, NULL, x]"),
        ({"a": 1, "b": None}, "{'a': 1, 'b': NULL}"),
        (b"ab\x00", "ab\\x00"),
    ],
)
def test_format_value(value, text):
    assert runner.format_value(value) == text


def test_format_interval():
    assert runner.format_interval(1, 0, 0) == "1 month"
    assert runner.format_interval(24, 0, 0) == "2 years"
    assert runner.format_interval(-13, 0, 0) == "-1 year -1 month"
    assert runner.format_interval(0, 2, 1_500_000_000) == "2 days 00:00:01.5"
    assert runner.format_interval(0, 0, -3_600_000_000_000) == "-01:00:00"


def test_table_to_rows_and_infer_types():
    table = pa.table(
        {
            "i": pa.array([1, None], pa.int32()),
            "b": pa.array([2**40, -1], pa.int64()),
            "h": pa.array([decimal.Decimal(15), None], pa.decimal128(38, 0)),
            "d": pa.array([decimal.Decimal("12.50"), decimal.Decimal("-0.05")], pa.decimal128(10, 2)),
            "x": pa.array([0.1, None], pa.float64()),
            "f": pa.array([0.1, 2.5], pa.float32()),
            "s": pa.array(["", None], pa.string()),
            "dt": pa.array([dt.date(1995, 3, 15), None], pa.date32()),
            "ok": pa.array([True, None], pa.bool_()),
            "n": pa.array([None, None], pa.null()),
            "dict": pa.array(["a", "b"]).dictionary_encode(),
        }
    )
    assert runner.table_to_rows(table) == [
        ["1", "1099511627776", "15", "12.50", "0.1", "0.1", "(empty)", "1995-03-15", "true", "NULL", "a"],
        ["NULL", "-1", "NULL", "-0.05", "NULL", "2.5", "NULL", "NULL", "NULL", "NULL", "b"],
    ]
    assert runner.infer_types(table) == "IIITRRTTTTT"


def test_to_arrow_table_accepts_readers_batches_and_pandas():
    table = pa.table({"a": [1, 2]})
    assert runner.to_arrow_table(table) is table
    assert runner.to_arrow_table(table.to_reader()).equals(table)
    assert runner.to_arrow_table(table.to_batches()[0]).equals(table)
    assert runner.to_arrow_table(table.to_pandas()).equals(table)
    with pytest.raises(TypeError):
        runner.to_arrow_table(42)


def test_table_to_rows_of_an_empty_table():
    assert runner.table_to_rows(pa.table({"a": pa.array([], pa.int32())})) == []


# --------------------------------------------------------------------------- comparison


def test_values_equal_tolerance_on_r_only():
    assert runner.values_equal("1.0", "1.0000000001", True)  # 1e-10 relative
    assert not runner.values_equal("1.0", "1.00000001", True)  # 1e-8 relative
    assert runner.values_equal("1e+20", "100000000000000000001.0", True)
    assert runner.values_equal("0.0", "1e-17", True)  # absolute floor near 0
    assert not runner.values_equal("1.0", "1.0000000001", False)
    assert runner.values_equal("nan", "nan", True)
    assert runner.values_equal("inf", "inf", True) and not runner.values_equal("inf", "-inf", True)
    assert not runner.values_equal("inf", "1e308", True)
    assert not runner.values_equal("NULL", "0.0", True)
    assert runner.values_equal("NULL", "NULL", True)
    assert not runner.values_equal("abc", "abd", True)


def test_sort_rows_modes():
    rows = [["b", "2"], ["a", "10"], ["a", "9"]]
    assert runner.sort_rows(rows, "TI", "nosort") == rows
    assert runner.sort_rows(rows, "TI", "rowsort") == [["a", "10"], ["a", "9"], ["b", "2"]]
    assert runner.sort_rows(rows, "TI", "valuesort") == [["10"], ["2"], ["9"], ["a"], ["a"], ["b"]]
    # R values equal within the tolerance sort alike, so the other column decides
    assert runner.sort_rows([["0.30000000000000004", "b"], ["0.3", "a"]], "RT", "rowsort") == [
        ["0.3", "a"],
        ["0.30000000000000004", "b"],
    ]
    with pytest.raises(ValueError):
        runner.sort_rows(rows, "TI", "weird")


def test_check_query_nosort_is_order_sensitive():
    runner.check_query(q(["1", "2"]), [["1"], ["2"]])
    with pytest.raises(RecordFailure) as ei:
        runner.check_query(q(["1", "2"]), [["2"], ["1"]], "f.test")
    msg = str(ei.value)
    assert msg.startswith("f.test:7:") and "row 1, column 1: expected '1', got '2'" in msg
    assert "SELECT 1" in msg and "Expected:" in msg and "Actual:" in msg


def test_check_query_rowsort_and_valuesort_ignore_order():
    runner.check_query(q(["1\tb", "2\ta"], "IT", "rowsort"), [["2", "a"], ["1", "b"]])
    runner.check_query(q(["2\ta", "1\tb"], "IT", "rowsort"), [["1", "b"], ["2", "a"]])
    with pytest.raises(RecordFailure):
        runner.check_query(q(["1\ta", "2\tb"], "IT", "rowsort"), [["1", "b"], ["2", "a"]])
    runner.check_query(q(["1\ta", "2\tb"], "IT", "valuesort"), [["1", "b"], ["2", "a"]])
    with pytest.raises(RecordFailure) as ei:
        runner.check_query(q(["1\ta", "2\tb"], "IT", "valuesort"), [["1", "b"], ["3", "a"]])
    assert "sorted value" in str(ei.value)


def test_check_query_tolerance_applies_to_r_columns():
    runner.check_query(q(["0.3\t0.3"], "RT"), [["0.30000000000000004", "0.3"]])
    with pytest.raises(RecordFailure):
        runner.check_query(q(["0.3\t0.3"], "RT"), [["0.3", "0.30000000000000004"]])
    with pytest.raises(RecordFailure):
        runner.check_query(q(["0.3"], "R"), [["0.3000001"]])
    runner.check_query(q(["0.3", "1.0"], "R", "valuesort"), [["1.0000000000001"], ["0.30000000000000004"]])


def test_check_query_row_and_column_counts():
    with pytest.raises(RecordFailure) as ei:
        runner.check_query(q(["1"]), [["1"], ["2"]])
    assert "expected 1 rows, got 2" in str(ei.value)
    with pytest.raises(RecordFailure) as ei:
        runner.check_query(q(["1"], "I"), [["1", "2"]])
    assert "returned 2 columns" in str(ei.value)
    runner.check_query(q([], "II"), [])  # empty result
    with pytest.raises(RecordFailure):
        runner.check_query(q([], "I"), [["1"]])


def test_check_query_needs_results_and_types():
    with pytest.raises(RecordFailure) as ei:
        runner.check_query(q(None), [["1"]])
    assert "generate.py" in str(ei.value)
    with pytest.raises(RecordFailure) as ei:
        runner.check_query(q(["1"], None), [["1"]])
    assert "types" in str(ei.value)


def test_check_query_value_per_line_layout():
    runner.check_query(q(["1", "a", "2", "b"], "IT"), [["1", "a"], ["2", "b"]])


def test_check_query_hash_results():
    rows = [["1", "a"], ["2", "b"]]
    digest = runner.result_hash(rows)
    runner.check_query(q([f"4 values hashing to {digest}"], "IT"), rows)
    runner.check_query(q([f"4 values hashing to {digest}"], "IT", "rowsort"), list(reversed(rows)))
    with pytest.raises(RecordFailure):
        runner.check_query(q([f"4 values hashing to {digest}"], "IT"), [["1", "a"], ["2", "c"]])


def test_check_error_fragment_and_regex():
    rec = Record("statement", 3, sql="SELECT x", expect="error", error='Column "x" not found')
    runner.check_error(rec, 'Binder: Column "x" not found in t')
    with pytest.raises(RecordFailure) as ei:
        runner.check_error(rec, "something else")
    assert "expected fragment" in str(ei.value)
    runner.check_error(rec, "something else", check_fragment=False)
    runner.check_error(Record("statement", 3, sql="x", expect="error"), "anything")
    rx = Record("statement", 3, sql="x", expect="error", error=r"<REGEX>:line \d+, column \d+")
    runner.check_error(rx, "syntax error at line 1, column 8")
    with pytest.raises(RecordFailure):
        runner.check_error(rx, "syntax error")


@pytest.mark.parametrize(
    "sql, store",
    [
        ("CREATE TABLE t(a INT)", True),
        ("create temp table t AS SELECT 1", True),
        ("CREATE OR REPLACE TABLE t AS SELECT 1", True),
        ("  INSERT INTO t VALUES (1)", True),
        ("-- comment\nINSERT INTO t VALUES (1)", True),
        ("/* c */ DROP TABLE t", True),
        ("COPY t FROM 'x.csv'", True),
        ("UPDATE t SET a = 1", True),
        ("DELETE FROM t", True),
        ("CREATE VIEW v AS SELECT 1", False),
        ("CREATE OR REPLACE VIEW v AS SELECT 1", False),
        ("SELECT * FROM t", False),
        ("WITH x AS (SELECT 1) SELECT * FROM x", False),
        ("DROP VIEW v", False),
        ("INSERTX", False),
    ],
)
def test_is_store_statement(sql, store):
    assert runner.is_store_statement(sql) is store


# --------------------------------------------------------------------------- sessions


class FakeEngine:
    """Records what the session asks of an engine; answers queries from DuckDB."""

    name = "fake"

    def __init__(self):
        import duckdb

        self.duck = duckdb.connect()
        self.calls: list[tuple] = []
        self.error_types = (duckdb.Error,)

    def register(self, name, table):
        assert isinstance(table, pa.Table)
        self.calls.append(("register", name, table.num_rows))
        self.duck.register(name, table)

    def unregister(self, name):
        self.calls.append(("unregister", name))
        self.duck.unregister(name)

    def execute(self, sql):
        self.calls.append(("execute", sql))
        self.duck.execute(sql)

    def query(self, sql):
        self.calls.append(("query", sql))
        return self.duck.execute(sql).arrow().read_all()

    def close(self):
        self.calls.append(("close",))


SESSION_TEXT = """statement ok
CREATE TABLE t(a INTEGER)

statement ok
INSERT INTO t VALUES (1), (2)

statement ok
CREATE VIEW v AS SELECT a * 10 AS x FROM t

query I rowsort
SELECT x FROM v
----
10
20

statement ok
INSERT INTO t VALUES (3)

query I
SELECT count(*) FROM v
----
3

statement ok
DROP TABLE t

statement error
SELECT * FROM t
----
does not exist
"""


def test_session_routes_ddl_to_the_store_and_registers_tables(monkeypatch):
    fake = FakeEngine()
    monkeypatch.setattr(runner, "make_engine", lambda engine, device: fake)
    sess = runner.Session(runner.parse(SESSION_TEXT, "s.test"), engine="glint", device="cpu")
    results = sess.run_all()
    sess.close()
    assert [e for _, e in results] == [None] * 8
    assert fake.calls == [
        ("register", "t", 2),  # synced before the first engine statement
        ("execute", "CREATE VIEW v AS SELECT a * 10 AS x FROM t"),
        ("query", "SELECT x FROM v"),
        ("register", "t", 3),  # re-registered after the INSERT
        ("query", "SELECT count(*) FROM v"),
        ("unregister", "t"),  # dropped in the store
        ("execute", "SELECT * FROM t"),
        ("close",),
    ]


def test_session_reports_failures_with_file_and_line(monkeypatch):
    text = SESSION_TEXT.replace("10\n20\n", "10\n21\n").replace("does not exist", "no such fragment")
    sess = runner.Session(runner.parse(text, "s.test"), engine="duckdb", device=None)
    outcomes = {rec.line: e for rec, e in sess.run_all()}
    sess.close()
    assert isinstance(outcomes[10], RecordFailure) and "s.test:10:" in str(outcomes[10])
    assert "expected '21', got '20'" in str(outcomes[10])
    # DuckDB as the engine is held to failing, not to glint's fragments
    last = max(outcomes)
    assert runner.parse(text).records[-1].expect == "error" and outcomes[last] is None


def test_session_statement_outcomes():
    text = """statement ok
SELECT * FROM nosuch

statement error
SELECT 1

statement maybe
SELECT * FROM nosuch

statement error
CREATE TABLE t(a INTEGER NOT NULL)

statement error
INSERT INTO t VALUES (NULL)
----
NOT NULL

statement error
INSERT INTO t VALUES (NULL)
----
not this fragment
"""
    sess = runner.Session(runner.parse(text, "o.test"), engine="duckdb", device=None)
    out = [e for _, e in sess.run_all()]
    sess.close()
    assert "statement failed" in str(out[0])
    assert "should have failed" in str(out[1])
    assert out[2] is None
    assert "should have failed" in str(out[3])  # CREATE TABLE succeeded
    assert out[4] is None  # store errors are checked against the fragment...
    assert "expected fragment" in str(out[5])  # ...even under the duckdb engine


def test_session_replays_earlier_statements_for_a_selected_record():
    tf = runner.parse(SESSION_TEXT, "s.test")
    sess = runner.Session(tf, engine="duckdb", device=None)
    sess.run_index(5)  # the count(*) query alone: needs 4 statements first
    assert sorted(sess.done) == [0, 1, 2, 4, 5]
    sess.run_index(4)  # already replayed: reports its outcome
    sess.close()


def test_session_skips_records_that_do_not_apply():
    tf = runner.parse("onlyif glint\nstatement error\nSELECT 1\n\nquery I\nSELECT 1\n----\n1\n")
    sess = runner.Session(tf, engine="duckdb", device=None)
    with pytest.raises(runner.RecordSkipped):
        sess.run_index(0)
    sess.run_index(1)
    sess.close()


def test_session_without_an_engine_fails_each_record(monkeypatch):
    def broken(engine, device):
        raise ImportError("engine not built yet")

    monkeypatch.setattr(runner, "make_engine", broken)
    sess = runner.Session(runner.parse(SESSION_TEXT), engine="glint", device="cpu")
    outcomes = [e for _, e in sess.run_all()]
    sess.close()
    assert outcomes[0] is None and outcomes[1] is None  # the store still works
    assert "could not open a glint connection" in str(outcomes[2]) and "engine not built yet" in str(outcomes[2])


def test_store_copy_reads_files_relative_to_the_test_file(tmp_path):
    (tmp_path / "data.csv").write_text("a,b\n1,x\n2,y\n")
    path = tmp_path / "c.test"
    path.write_text(
        "statement ok\nCREATE TABLE t(a INTEGER, b VARCHAR)\n\nstatement ok\nCOPY t FROM 'data.csv' (HEADER)\n\n"
        "query IT\nSELECT a, b FROM t ORDER BY a\n----\n1\tx\n2\ty\n"
    )
    results = runner.run_file(path, engine="duckdb")
    assert [e for _, e in results] == [None, None, None]


# --------------------------------------------------------------------------- generator


def test_generate_fills_results_and_types_and_keeps_the_rest():
    text = """# keep me
statement ok
CREATE TABLE t(a INTEGER, d DECIMAL(6,2), x DOUBLE, s VARCHAR)

statement ok
INSERT INTO t VALUES (2, 1.50, 0.25, ''), (1, NULL, NULL, 'b')

query rowsort
SELECT a, d, x, s FROM t
# comment inside the SQL

query I
SELECT sum(a)
FROM t
----
999

query T
SELECT a FROM t ORDER BY a

onlyif glint
query I
SELECT glint_only()

statement error
SELECT nosuch FROM t
----
glint wording
"""
    new, problems = generate.generate_text(text)
    assert problems == []
    assert (
        new
        == """# keep me
statement ok
CREATE TABLE t(a INTEGER, d DECIMAL(6,2), x DOUBLE, s VARCHAR)

statement ok
INSERT INTO t VALUES (2, 1.50, 0.25, ''), (1, NULL, NULL, 'b')

query ITRT rowsort
SELECT a, d, x, s FROM t
# comment inside the SQL
----
1\tNULL\tNULL\tb
2\t1.50\t0.25\t(empty)

query I
SELECT sum(a)
FROM t
----
3

query T
SELECT a FROM t ORDER BY a
----
1
2

onlyif glint
query I
SELECT glint_only()

statement error
SELECT nosuch FROM t
----
glint wording
"""
    )
    again, problems = generate.generate_text(new)
    assert again == new and problems == []


def test_generate_reports_misbehaving_records_and_unordered_queries():
    text = "statement ok\nSELECT * FROM nosuch\n\nstatement error\nSELECT 1\n\nquery I\nSELECT * FROM (VALUES (1), (2))\n\nquery I\nSELECT nosuch\n"
    new, problems = generate.generate_text(text, Path("p.test"))
    assert len(problems) == 4
    assert "statement failed" in problems[0] and "p.test:1:" in problems[0]
    assert "should have failed" in problems[1]
    assert "warning" in problems[2] and "rowsort" in problems[2]
    assert "query failed" in problems[3]
    assert new.endswith("query I\nSELECT nosuch\n")  # a failing query is left as it was


def test_generate_main_check_mode(tmp_path, capsys):
    path = tmp_path / "g.test"
    path.write_text("query\nSELECT 42\n")
    assert generate.main(["--check", str(tmp_path)]) == 1
    assert path.read_text() == "query\nSELECT 42\n"
    assert generate.main([str(tmp_path)]) == 0
    assert path.read_text() == "query I\nSELECT 42\n----\n42\n"
    assert generate.main(["--check", str(path)]) == 0


def test_checked_in_files_are_up_to_date():
    """Every tests/sqllogic/**/*.test file has the results DuckDB gives (run generate.py after editing one)."""
    stale = []
    for path in runner.iter_test_files([HERE]):
        old = path.read_text(encoding="utf-8")
        new, problems = generate.generate_text(old, path)
        if new != old or [p for p in problems if ": warning: " not in p]:
            stale.append((str(path), problems))
    assert stale == []


# --------------------------------------------------------------------------- pytest plugin


def _pytest(*args):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_plugin_collects_one_item_per_record():
    res = _pytest("--collect-only", "-q", "tests/sqllogic/select/distinct.test")
    assert res.returncode == 0, res.stdout + res.stderr
    ids = [ln for ln in res.stdout.splitlines() if "::" in ln]
    n = len(runner.parse_file(REPO / "tests/sqllogic/select/distinct.test").records)
    assert len(ids) == n and ids[0] == "tests/sqllogic/select/distinct.test::L4"


def test_plugin_runs_a_selected_record_against_duckdb():
    rec = runner.parse_file(REPO / "tests/sqllogic/select/views.test").records[-1]
    res = _pytest("-q", "--sqllogic-engine=duckdb", f"tests/sqllogic/select/views.test::L{rec.line}")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "1 passed" in res.stdout


def test_session_reports_a_failing_registration(monkeypatch):
    fake = FakeEngine()

    def refuse(name, table):
        raise ValueError("no such column type")

    fake.register = refuse
    monkeypatch.setattr(runner, "make_engine", lambda engine, device: fake)
    sess = runner.Session(runner.parse(SESSION_TEXT, "s.test"), engine="glint", device="cpu")
    outcomes = [e for _, e in sess.run_all()]
    sess.close()
    assert "registering table 't'" in str(outcomes[2]) and "no such column type" in str(outcomes[2])
