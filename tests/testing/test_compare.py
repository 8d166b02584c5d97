"""Result comparison (glint.testing.compare) and the official TPC-H answers."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from glint.testing.compare import (
    compare_query_result,
    compare_tables,
    order_by_columns,
    ordered_by_query,
    query_limit,
    values_equal,
)

D = Decimal


def tbl(**cols) -> pa.Table:
    return pa.table(cols)


def dec(values, p=15, s=2):
    return pa.array([None if v is None else D(v) for v in values], pa.decimal128(p, s))


# ------------------------------------------------------------------ basics
def test_equal_tables():
    a = tbl(x=[1, 2, 3], s=["a", "b", None])
    assert compare_tables(a, a, ordered=True) == []
    assert compare_tables(a, a, ordered=False) == []


def test_unordered_ignores_order_ordered_does_not():
    a = tbl(x=[1, 2, 3], s=["a", "b", "c"])
    b = tbl(x=[3, 1, 2], s=["c", "a", "b"])
    assert compare_tables(a, b, ordered=False) == []
    d = compare_tables(a, b, ordered=True)
    assert d and d[0] == "3 of 3 rows differ"
    assert any("in another order" in x for x in d)


def test_row_count_difference_lists_missing_rows():
    a = tbl(k=["A", "B"], v=[1, 2])
    b = tbl(k=["A", "B", "C"], v=[1, 2, 3])
    d = compare_tables(a, b, ordered=False)
    assert d[0] == "row count: actual has 2 rows, expected 3"
    assert any("missing" in x and "'C'" in x for x in d)


def test_column_count_difference():
    d = compare_tables(tbl(a=[1]), tbl(a=[1], b=[2]), ordered=False)
    assert len(d) == 1 and "column count" in d[0] and "['a', 'b']" in d[0]


def test_names_checked_only_when_asked():
    assert compare_tables(tbl(a=[1]), tbl(b=[1]), ordered=True) == []
    d = compare_tables(tbl(a=[1]), tbl(b=[1]), ordered=True, check_names=True)
    assert d and "column names" in d[0]


def test_decimals_exact():
    a = tbl(v=dec(["1.10", "2.00"]))
    assert compare_tables(a, tbl(v=dec(["1.1", "2"], 38, 4)), ordered=True) == []
    d = compare_tables(a, tbl(v=dec(["1.10", "2.01"])), ordered=True)
    assert d[0] == "1 of 2 rows differ"
    assert "column 1 'v': actual 2.00, expected 2.01" in d[1]


def test_decimal_exact_even_beyond_double_precision():
    a = tbl(v=dec(["12345678901234567890.123456"], 38, 6))
    b = tbl(v=dec(["12345678901234567890.123457"], 38, 6))
    assert compare_tables(a, b, ordered=True) != []


def test_decimal_vs_double_within_tolerance():
    a = tbl(v=dec(["0.30", "100.00"]))
    b = tbl(v=[0.1 + 0.2, 100.0000000001])
    assert compare_tables(a, b, ordered=True) == []
    assert compare_tables(b, a, ordered=True) == []
    assert compare_tables(a, tbl(v=[0.3, 100.001]), ordered=True) != []


def test_double_relative_tolerance():
    a = tbl(v=[1e12, 0.0, float("nan"), float("inf")])
    b = tbl(v=[1e12 * (1 + 1e-11), 1e-15, float("nan"), float("inf")])
    assert compare_tables(a, b, ordered=True) == []
    assert compare_tables(a, tbl(v=[1e12 * (1 + 1e-7), 0.0, float("nan"), float("inf")]), ordered=True) != []
    assert compare_tables(tbl(v=[1.0]), tbl(v=[1.001]), ordered=True, rel_tol=0.01) == []


def test_integers_vs_decimal_and_widths():
    a = pa.table({"n": pa.array([1, 2], pa.int32())})
    b = pa.table({"n": pa.array([D(1), D(2)], pa.decimal128(38, 0))})
    assert compare_tables(a, b, ordered=True) == []
    assert compare_tables(a, pa.table({"n": pa.array([1, 3], pa.int64())}), ordered=True) != []


def test_nulls():
    a = tbl(v=pa.array([None, 1], pa.int64()))
    assert compare_tables(a, tbl(v=pa.array([None, 1], pa.int64())), ordered=True) == []
    d = compare_tables(a, tbl(v=pa.array([0, 1], pa.int64())), ordered=True)
    assert "actual NULL, expected 0" in d[1]
    # an all-NULL column typed NULL matches any type
    assert compare_tables(tbl(v=pa.nulls(2)), tbl(v=pa.array([None, None], pa.float64())), ordered=True) == []


def test_dates_and_strings_exact():
    a = tbl(d=pa.array([dt.date(1995, 3, 11)], pa.date32()), s=["abc "])
    assert compare_tables(a, a, ordered=True) == []
    d = compare_tables(a, tbl(d=pa.array([dt.date(1995, 3, 12)], pa.date32()), s=["abc "]), ordered=True)
    assert "1995-03-11" in d[1] and "1995-03-12" in d[1]
    d = compare_tables(a, tbl(d=pa.array([dt.date(1995, 3, 11)], pa.date32()), s=["abc"]), ordered=True)
    assert "'abc '" in d[1]


def test_string_view_vs_string():
    a = pa.table({"s": pa.array(["x", "y"], pa.string_view())})
    assert compare_tables(a, tbl(s=["y", "x"]), ordered=False) == []


def test_type_kind_mismatch():
    d = compare_tables(tbl(v=["1"]), tbl(v=[1]), ordered=True)
    assert len(d) == 1 and "actual type string" in d[0] and "expected int64" in d[0]


def test_unordered_with_doubles_pairs_rows_by_exact_columns_first():
    # sorting by the double first would pair the rows differently on each side
    a = tbl(k=["a", "b"], v=[1.0000000000001, 1.0])
    b = tbl(k=["b", "a"], v=[1.0000000000002, 1.0])
    assert compare_tables(a, b, ordered=False) == []


def test_first_few_differences_then_count():
    a = tbl(v=list(range(20)))
    b = tbl(v=[x + 1 for x in range(20)])
    d = compare_tables(a, b, ordered=True, max_diffs=3)
    assert d[0] == "20 of 20 rows differ"
    assert sum(x.startswith("row ") for x in d) == 3
    assert d[-1] == "... and 17 more differing rows"
    d = compare_tables(a, b, ordered=False, max_diffs=3)
    assert any("missing from actual" in x for x in d) and any("not expected" in x for x in d)


def test_record_batch_reader_accepted():
    t = tbl(v=[1, 2])
    reader = pa.RecordBatchReader.from_batches(t.schema, t.to_batches())
    assert compare_tables(reader, t, ordered=True) == []


# ------------------------------------------------------------------ ordering
def test_ties_on_order_keys_may_come_in_any_order():
    expected = tbl(k=[1, 2, 2, 2, 3], v=["a", "b", "c", "d", "e"])
    actual = tbl(k=[1, 2, 2, 2, 3], v=["a", "d", "b", "c", "e"])
    assert compare_tables(actual, expected, ordered=True, order_by=[0]) == []
    assert compare_tables(actual, expected, ordered=True) != []
    # but rows may not move across key groups
    wrong = tbl(k=[2, 1, 2, 2, 3], v=["b", "a", "c", "d", "e"])
    d = compare_tables(wrong, expected, ordered=True, order_by=[0])
    assert d and "rows differ" in d[0]


def test_rows_whose_float_key_differs_by_rounding_may_swap_whatever_the_later_keys():
    """ORDER BY a float first, then an integer: one engine's AVG gives -640.8999999999999 where the
    other's gives -640.9, which moves a row across rows with a smaller second key."""
    expected = tbl(f=[-640.8999999999999, -640.9, -640.9, -1.0], k=[9, 1, 2, 3])
    actual = tbl(f=[-640.9, -640.9, -640.9, -1.0], k=[1, 2, 9, 3])
    assert compare_tables(actual, expected, ordered=True, order_by=[0, 1]) == []
    # rows still may not cross float keys that differ by more than rounding
    wrong = tbl(f=[-1.0, -640.9, -640.9, -640.9], k=[3, 1, 2, 9])
    assert compare_tables(wrong, expected, ordered=True, order_by=[0, 1]) != []
    # nor integer keys before the float key
    ints = tbl(k=[1, 1, 2], f=[0.5, 0.5000000000000001, 0.5])
    assert compare_tables(tbl(k=[2, 1, 1], f=[0.5, 0.5, 0.5]), ints, ordered=True, order_by=[0, 1]) != []


def test_truncated_last_group_checks_keys_only():
    expected = tbl(k=[1, 2, 2], v=["a", "b", "c"])
    actual = tbl(k=[1, 2, 2], v=["a", "x", "b"])
    assert compare_tables(actual, expected, ordered=True, order_by=[0], truncated=True) == []
    assert compare_tables(actual, expected, ordered=True, order_by=[0]) != []
    bad = tbl(k=[1, 2, 3], v=["a", "b", "c"])
    assert compare_tables(bad, expected, ordered=True, order_by=[0], truncated=True) != []


def test_compare_query_result_uses_query_ordering():
    expected = tbl(k=[2, 1, 1], v=["x", "y", "z"])
    actual_tied = tbl(k=[2, 1, 1], v=["x", "z", "y"])
    actual_wrong = tbl(k=[1, 2, 1], v=["y", "x", "z"])
    q = "SELECT k, v FROM t ORDER BY k DESC"
    assert compare_query_result(q, actual_tied, expected) == []
    assert compare_query_result(q, actual_wrong, expected) != []
    assert compare_query_result("SELECT k, v FROM t", actual_wrong, expected) == []
    # LIMIT cutting through a tie group
    q = "SELECT k, v FROM t ORDER BY k DESC LIMIT 3"
    assert compare_query_result(q, tbl(k=[2, 1, 1], v=["x", "y", "q"]), expected) == []


def test_ordered_by_query():
    assert ordered_by_query("SELECT a FROM t ORDER BY a")
    assert ordered_by_query("select a from t order by 1 limit 5;")
    assert ordered_by_query("WITH x AS (SELECT 1 AS a) SELECT * FROM x ORDER BY a")
    assert ordered_by_query("SELECT 1 AS a UNION ALL SELECT 2 ORDER BY a")
    assert not ordered_by_query("SELECT a FROM (SELECT a FROM t ORDER BY a) s")
    assert not ordered_by_query("SELECT a, row_number() OVER (ORDER BY a) FROM t")
    assert not ordered_by_query("SELECT 'ORDER BY x' AS s -- ORDER BY y")
    assert not ordered_by_query("SELECT count(*) FROM t")
    # unparsable SQL falls back to scanning the top level
    assert ordered_by_query("SELECT a FROM t WHERE a @@@ 1 ORDER BY a")
    assert not ordered_by_query("SELECT a FROM (x @@@ ORDER BY a)")


def test_order_by_columns_and_limit():
    q = "SELECT a, sum(b) AS s, count(*) FROM t GROUP BY a ORDER BY s DESC, count(*), a"
    assert order_by_columns(q, ["a", "s", "count_star()"]) == [1, 2, 0]
    assert order_by_columns("SELECT a, b FROM t ORDER BY 2, a", ["a", "b"]) == [1, 0]
    assert order_by_columns("SELECT t.a FROM t ORDER BY t.a", ["a"]) == [0]
    assert order_by_columns("SELECT a FROM t ORDER BY b, a", ["a"]) == []
    assert order_by_columns("SELECT a FROM t", ["a"]) == []
    assert query_limit("SELECT a FROM t ORDER BY a LIMIT 100") == 100
    assert query_limit("SELECT a FROM (SELECT a FROM t LIMIT 3) s") is None


def test_tpch_queries_ordering():
    from glint.workloads.tpch import tpch_query

    unordered = {n for n in range(1, 23) if not ordered_by_query(tpch_query(n))}
    assert unordered == {6, 14, 17, 19}
    assert order_by_columns(tpch_query(1), ["l_returnflag", "l_linestatus"] + ["x"] * 8) == [0, 1]
    q18_cols = ["c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice", "sum(l_quantity)"]
    assert order_by_columns(tpch_query(18), q18_cols) == [4, 3]
    assert order_by_columns(tpch_query(13), ["c_count", "custdist"]) == [1, 0]
    assert query_limit(tpch_query(2)) == 100 and query_limit(tpch_query(1)) is None


def test_values_equal():
    assert values_equal(D("1.0"), 1)
    assert values_equal(dt.date(2020, 1, 1), dt.datetime(2020, 1, 1))
    assert not values_equal(True, 1)
    assert not values_equal("1", 1)


# ------------------------------------------------------------------ official answers
@pytest.fixture(scope="module")
def reference():
    duckdb = pytest.importorskip("duckdb")
    from glint.errors import GlintError
    from glint.workloads import tpch

    try:
        path = tpch.tpch_extension_path()
    except GlintError:
        pytest.skip("duckdb-ext-tpch is not installed")
    con = duckdb.connect()
    con.execute(f"LOAD '{path}'")
    con.execute("CALL dbgen(sf=0.01)")
    return con


def test_official_answers_match_duckdb_dbgen(reference):
    """DuckDB's answers at SF 0.01 equal DuckDB's results on its own dbgen data:
    checks the answer parsing (types, NULLs, trailing spaces) and the comparison."""
    from glint.workloads import tpch

    for n in range(1, 23):
        q = tpch.tpch_query(n)
        answer = tpch.official_answer(n, 0.01)
        got = tpch.duckdb_arrow(reference, q)
        assert answer.schema.names == got.schema.names
        assert compare_query_result(q, got, answer) == [], n


def test_official_answer_types():
    pytest.importorskip("duckdb")
    from glint.errors import GlintError
    from glint.workloads import tpch

    try:
        q1 = tpch.official_answer(1, 0.01)
    except GlintError:
        pytest.skip("duckdb-ext-tpch is not installed")
    assert q1.schema.field("sum_charge").type == pa.decimal128(38, 6)
    assert q1.schema.field("avg_qty").type == pa.float64()
    assert q1.column("sum_disc_price")[0].as_py() == D("505822441.4861")
    assert tpch.official_answer(17, 0.01).column(0).to_pylist() == [None]  # a row holding NULL
    q15 = tpch.official_answer(15, 0.01)
    assert q15.column("s_address")[0].as_py().endswith(" ")  # trailing space kept
    assert tpch.official_answer(3, 1).column("o_orderdate").type == pa.date32()
    assert tpch.official_answer(1, 0.1) is not None and tpch.official_answer(1, 1.0) is not None
    assert tpch.official_answer(1, 10) is None and tpch.official_answer(1, 0.5) is None
