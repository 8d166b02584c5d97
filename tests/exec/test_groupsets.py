"""GROUPING SETS / ROLLUP / CUBE with GROUPING(), and the statistics,
quantile, boolean and string aggregates (with FILTER and ORDER BY inside the
call): over 7-row chunks (every chunk is a partial aggregation whose states
combine) and against DuckDB's results and result types; random groups for the
quantile positions and interpolation and for the variances; out of core under
a 48 KB budget; the predicate pushdown rule around grouping sets; and on 2
Gloo ranks (states shuffled on the keys and the grouping set, rows shuffled
on the keys every set keeps, or gathered). The per-construct behaviour is in
tests/sqllogic/groupsets/ and tests/sqllogic/aggregates/."""

from __future__ import annotations

import re
from decimal import Decimal

import duckdb
import numpy as np
import pyarrow as pa
import pytest

import glint
from glint.testing.compare import compare_query_result
from tests.exec.test_window import _table as window_table


def _table(n: int = 400, seed: int = 11) -> pa.Table:
    """The window tests' table (NULL-heavy numbers of every type, strings,
    dates) with a BOOLEAN column."""
    rng = np.random.default_rng(seed)
    x = [None if rng.random() < 0.12 else bool(v) for v in rng.random(n) < 0.6]
    return window_table(n, seed).append_column("x", pa.array(x, pa.bool_()))


def _engines(table: pa.Table, device, **connect):
    """(a glint connection, a DuckDB connection), both with ``table`` as t."""
    con = glint.connect(device=device, **connect)
    con.register("t", table)
    duck = duckdb.connect()
    duck.register("t", table)
    return con, duck


@pytest.fixture(scope="module")
def engines(device):
    con, duck = _engines(_table(), device, chunk_rows=7)
    yield con, duck
    duck.close()


QUERIES = [
    # every grouping construct, with GROUPING() telling rolled-up NULLs from real ones
    "SELECT g, h, count(*), sum(v), sum(d), avg(f), min(s), max(dt), grouping(g, h) FROM t GROUP BY ROLLUP (g, h)",
    "SELECT g, x, h, count(v), sum(b), grouping(x), grouping(h, g, x) FROM t GROUP BY CUBE (g, x, h)",
    "SELECT g, h, x, count(*) FROM t GROUP BY GROUPING SETS ((g, h), (x), (), (g, h)), ROLLUP (x)",
    "SELECT g, h, sum(v) FROM t GROUP BY g, ROLLUP (h) HAVING sum(v) > 0 OR grouping(h) = 1",
    # DISTINCT and holistic aggregates per grouping set (input rows held per set)
    "SELECT g, h, count(DISTINCT s), sum(DISTINCT v), median(v), quantile_disc(s, 0.3) FROM t GROUP BY CUBE (g, h)",
    "SELECT g, string_agg(s, ',' ORDER BY s NULLS FIRST, id), median(d), quantile_cont(f, 0.75) FROM t "
    "GROUP BY ROLLUP (g)",
    # the statistics, boolean and string aggregates (decomposable: partial states per chunk)
    "SELECT g, var_samp(v), var_pop(d), stddev_samp(f), stddev_pop(b), bool_and(x), bool_or(x) FROM t GROUP BY g",
    "SELECT h, string_agg(DISTINCT s, '|' ORDER BY s DESC), bool_and(v > -40), count(*) FILTER (WHERE x) "
    "FROM t GROUP BY h",
    "SELECT var_samp(v) FILTER (WHERE x), median(v) FILTER (WHERE h = 1), string_agg(g, '' ORDER BY id) "
    "FILTER (WHERE v > 40), sum(d) FILTER (WHERE NOT x) FROM t",
    "SELECT quantile_disc(dt, 0.5), quantile_disc(x, 0.25), quantile_cont(b, 0.1), median(DISTINCT h), "
    "percentile_disc(0.4) WITHIN GROUP (ORDER BY v DESC) FROM t",
    # windows over a grouping-sets result
    "SELECT g, h, sum(v), rank() OVER (PARTITION BY grouping(g, h) ORDER BY sum(v) DESC NULLS LAST, g, h), "
    "sum(count(*)) OVER (PARTITION BY grouping(g, h)) FROM t GROUP BY CUBE (g, h)",
    # nothing passes the filter: the grand total row alone
    "SELECT g, count(*), median(v), string_agg(s, ','), var_samp(v), bool_or(x) FROM t WHERE v > 1000 "
    "GROUP BY ROLLUP (g)",
]


def _check(con, duck, sql: str, res=None) -> None:
    """glint's rows and column types are DuckDB's."""
    actual = (res or con.sql(sql)).arrow()
    expected = duck.sql(sql).fetch_arrow_table()
    diffs = compare_query_result(sql, actual, expected, check_names=True)
    assert not diffs, f"{sql}\n" + "\n".join(diffs)
    assert actual.schema.types == expected.schema.types, sql


@pytest.mark.parametrize("sql", QUERIES, ids=range(len(QUERIES)))
def test_queries_match_duckdb(engines, sql):
    # with DuckDB's types: DOUBLE variances and medians of integers, DECIMAL medians, the
    # input's type for QUANTILE_DISC, BIGINT GROUPING(), VARCHAR STRING_AGG, BOOLEAN BOOL_AND
    _check(*engines, sql)


def test_string_agg_without_order_follows_the_input(engines):
    """Without ORDER BY the strings come in input order (chunk states are
    joined in the order they were made), as DuckDB on one thread gives them."""
    con, duck = engines
    duck.execute("SET threads = 1")
    try:
        _check(con, duck, "SELECT h, string_agg(s, ',') FROM t GROUP BY h")
    finally:
        duck.execute("RESET threads")


@pytest.fixture(scope="module")
def random_groups(device):
    rng = np.random.default_rng(5)
    n = 2500
    t = pa.table(
        {
            "g": pa.array(rng.integers(0, 50, n), pa.int32()),
            "d": pa.array(
                [
                    None if r < 0.1 else Decimal(int(v)).scaleb(-3)
                    for r, v in zip(rng.random(n), rng.integers(-(10**15), 10**15, n))
                ],
                pa.decimal128(18, 3),
            ),
            "e": pa.array([Decimal(int(v)).scaleb(-2) for v in rng.integers(-999, 999, n)], pa.decimal128(5, 2)),
            "b": pa.array(
                [
                    int(v) if r < 0.5 else int(w)
                    for r, v, w in zip(rng.random(n), rng.integers(-(2**62), 2**62, n), rng.integers(-100, 100, n))
                ],
                pa.int64(),
            ),
            "f": pa.array(np.where(rng.random(n) < 0.5, rng.uniform(-1e6, 1e6, n), rng.integers(-5, 5, n) / 4)),
        }
    )
    con, duck = _engines(t, device, chunk_rows=128)
    yield con, duck
    duck.close()


@pytest.mark.parametrize(
    "q", ["0.5", "0.3", "0.1", "0.99", "-0.3", "0.333", "0", "1", "0.3::DOUBLE", "(1 / 3)", "-0.7::DOUBLE"]
)
def test_quantile_positions_and_interpolation(random_groups, q):
    """DuckDB's positions (exact for a DECIMAL q, in doubles for a DOUBLE q)
    and interpolation (truncated in a DECIMAL's scale) on groups of every size."""
    con, duck = random_groups
    for fn in ("quantile_cont", "quantile_disc"):
        _check(con, duck, f"SELECT g, {fn}(d, {q}), {fn}(e, {q}), {fn}(b, {q}), {fn}(f, {q}) FROM t GROUP BY g")


def test_variances_of_random_groups(random_groups):
    con, duck = random_groups
    for sql in (
        "SELECT g, var_samp(b), var_pop(d), stddev_samp(f), stddev_pop(e), var_samp(DISTINCT f) FROM t GROUP BY g",
        "SELECT var_samp(b), var_pop(d), stddev_samp(f), stddev_pop(e) FROM t",
    ):
        _check(con, duck, sql)


# ------------------------------------------------------------------ out of core
@pytest.fixture(scope="module")
def big_table():
    rng = np.random.default_rng(8)
    n = 5000
    t = pa.table(
        {
            "k": rng.integers(0, 1200, n),
            "kn": pa.array(np.where(rng.random(n) < 0.1, None, rng.integers(0, 40, n)).tolist(), pa.int64()),
            "x": rng.integers(-1000, 1000, n) / 8,
            "s": pa.array([None if r < 0.05 else f"s{v:03d}" for r, v in zip(rng.random(n), rng.integers(0, 300, n))]),
        }
    )
    duck = duckdb.connect()
    duck.register("big", t)
    yield t, duck
    duck.close()


# budgets small enough that the aggregation goes out of core, large enough
# that one level of partitions fits (deeper levels only cost time here)
@pytest.mark.parametrize(
    "budget, sql, note",
    [
        (
            "256KB",
            "SELECT k, kn, count(*), sum(x), var_samp(x), bool_or(x > 0), grouping(k, kn) FROM big "
            "GROUP BY ROLLUP (k, kn)",
            "aggregation state over budget",
        ),
        (
            "256KB",
            "SELECT k, kn, count(DISTINCT x), median(x), quantile_disc(x, 0.3) FROM big GROUP BY CUBE (k, kn)",
            "input over budget",
        ),
        ("256KB", "SELECT k, string_agg(s, ',' ORDER BY s NULLS FIRST, x) FROM big GROUP BY k", "input over budget"),
        (
            "320KB",
            "SELECT k, kn, string_agg(s || s || s, '') FILTER (WHERE x > 0), stddev_pop(x) FROM big GROUP BY k, kn",
            "aggregation state over budget",
        ),
    ],
)
def test_out_of_core(device, big_table, budget, sql, note):
    t, duck = big_table
    con = glint.connect(device=device, chunk_rows=256, memory_limit=budget)
    con.register("big", t)
    res = con.sql(sql)
    duck.execute("SET threads = 1")  # STRING_AGG without ORDER BY: input order on both sides
    try:
        _check(con, duck, sql, res)
    finally:
        duck.execute("RESET threads")
    assert note in res.explain(analyze=True)


# ------------------------------------------------------------------ planning
SMALL_BATCHES = [
    # a selective WHERE leaves a few rows of each 64-row chunk: the batches are merged
    # before their partial aggregation, and a batch's sets aggregated as one batch, the
    # rolled-up VARCHAR keys sharing the key's dictionary
    "SELECT g, h, count(*), sum(v), sum(d), min(s), grouping(g, h) FROM t WHERE id % 23 = 0 GROUP BY ROLLUP (g, h)",
    "SELECT s, g, count(*), max(dt), sum(b) FROM t WHERE id % 17 < 2 GROUP BY CUBE (s, g)",
    # so few rows that every set of the one merged batch is aggregated together
    "SELECT g, s, count(*), sum(d), grouping(s) FROM t WHERE id % 97 = 0 GROUP BY ROLLUP (g, s)",
    # a union's pieces (and an empty branch), each with its own dictionaries
    "SELECT s, count(*), sum(v) FROM (SELECT s, v FROM t WHERE id % 7 = 0 UNION ALL "
    "SELECT g, h FROM t WHERE id % 11 = 1 UNION ALL SELECT s, v FROM t WHERE false) GROUP BY s",
]


@pytest.mark.parametrize("sql", SMALL_BATCHES, ids=range(len(SMALL_BATCHES)))
def test_small_batches_aggregate_together(device, sql, monkeypatch):
    from glint.exec import aggregate

    seen = []
    merge = aggregate.merge_small

    def counting(batches, rows):
        for b in merge(batches, rows):
            seen.append(b.num_rows)
            yield b

    monkeypatch.setattr(aggregate, "merge_small", counting)
    con, duck = _engines(_table(), device, chunk_rows=64)
    try:
        _check(con, duck, sql)
    finally:
        duck.close()
    # (the 400 rows came in chunks of at most 64, a few of each chunk's rows kept)
    assert seen and max(seen) > 3 and len(seen) < 400 // 64, seen


def _logical(con, sql: str) -> list[str]:
    plan = con.sql("EXPLAIN " + sql).arrow().column(0)[0].as_py().split("Physical plan:")[0]
    return [re.sub(r"  \(~[0-9,]+ rows\)", "", ln.strip()) for ln in plan.splitlines()]


def test_filters_on_keys_every_set_keeps_go_below_the_aggregate(engines):
    con, duck = engines
    sql = "SELECT g, h, count(*) FROM t GROUP BY g, ROLLUP (h) HAVING g = 'a' AND h = 1"
    lines = _logical(con, sql)
    agg = next(i for i, ln in enumerate(lines) if ln.startswith("Aggregate"))
    # g is in every set: its filter runs on the input; h is NULL in the rolled-up rows: its stays above
    assert any(ln.startswith("Filter (g#") for ln in lines[agg:])
    assert any(ln.startswith("Filter (h#") for ln in lines[:agg])
    _check(con, duck, sql)
    lines = _logical(con, "SELECT g, count(*) FROM t GROUP BY ROLLUP (g) HAVING g IS NULL")
    assert lines.index(next(ln for ln in lines if ln.startswith("Filter"))) < lines.index(
        next(ln for ln in lines if ln.startswith("Aggregate"))
    )


def test_grouping_sets_plan_reads_the_input_once(engines):
    con, _ = engines
    text = con.sql("EXPLAIN SELECT g, h, count(*) FROM t GROUP BY CUBE (g, h)").arrow().column(0)[0].as_py()
    physical = text.split("Physical plan:")[1]
    assert physical.count("Scan t") == 1 and "sets=[(0, 1), (0,), (1,), ()]" in physical


# ------------------------------------------------------------------ 2 ranks
def test_on_two_ranks():
    """States of every grouping set shuffled on (keys, grouping set); holistic
    aggregates shuffled on the keys every set keeps, or gathered; an empty
    input's grand total; all against DuckDB."""
    t = _table(300, 4)
    con = glint.connect(ranks=2, device="cpu", timeout=60, replicate_rows=0, small_result_bytes=0, chunk_rows=16)
    duck = duckdb.connect()
    try:
        con.register("t", t)
        con.register("none", t.slice(0, 0))
        duck.register("t", t)
        duck.register("none", t.slice(0, 0))
        queries = [
            "SELECT g, h, count(*), sum(d), var_samp(v), stddev_pop(f), bool_and(x), grouping(g, h) FROM t "
            "GROUP BY ROLLUP (g, h)",
            "SELECT g, x, median(v), quantile_disc(s, 0.25), string_agg(s, ',' ORDER BY s DESC NULLS LAST, id) "
            "FROM t GROUP BY CUBE (g, x)",
            "SELECT h, g, count(DISTINCT s), quantile_cont(d, 0.6) FROM t GROUP BY h, ROLLUP (g)",
            "SELECT median(b), var_pop(d), bool_or(x), string_agg(DISTINCT g, '-' ORDER BY g), "
            "count(*) FILTER (WHERE v > 0) FROM t",
            "SELECT g, count(*), sum(v), median(v) FROM none GROUP BY ROLLUP (g)",
        ]
        for sql in queries:
            _check(con, duck, sql)
        plan = con.sql("EXPLAIN " + queries[0]).fetchall()[0][0]
        assert re.search(r"Shuffle hash\(g#\d+, h#\d+, grouping_set#\d+\)", plan) and "HashAggregate(partial)" in plan
        assert re.search(r"Gather to rank 0.*\n\s+Scan t", con.sql("EXPLAIN " + queries[1]).fetchall()[0][0])
        assert re.search(r"Shuffle hash\(h#\d+\)", con.sql("EXPLAIN " + queries[2]).fetchall()[0][0])
    finally:
        con.close()
        duck.close()


def test_grouping_sets_in_either_sqlglot_layout():
    """sqlglot before 30.19 holds ROLLUP, CUBE and GROUPING SETS apart from a
    GROUP BY's plain items (Group's rollup / cube / grouping_sets), later
    versions among them: both give the same grouping sets; MySQL's WITH
    ROLLUP (a ROLLUP without expressions) is refused in both."""
    import sqlglot
    from sqlglot import exp

    from glint.errors import NotSupported
    from glint.sql.grouping_sets import group_items, grouping_sets

    sel = sqlglot.parse_one(
        "SELECT a, b, c FROM t GROUP BY a, ROLLUP (b, c), CUBE (c), GROUPING SETS ((a), ())", read="duckdb"
    )
    items = group_items(sel.args["group"])
    kinds = {exp.Rollup: "rollup", exp.Cube: "cube", exp.GroupingSets: "grouping_sets"}
    apart = exp.Group(expressions=[e.copy() for e in items if type(e) not in kinds])
    for e in items:
        if type(e) in kinds:
            apart.append(kinds[type(e)], e.copy())
    together = exp.Group(expressions=[e.copy() for e in items])

    def named(group):
        exprs, sets = grouping_sets(group, sel.expressions)
        return sorted(sorted(exprs[i].sql() for i in s) for s in sets)

    assert named(apart) == named(together) and len(named(together)) == 3 * 2 * 2
    with_rollup = sqlglot.parse_one("SELECT a FROM t GROUP BY a WITH ROLLUP", read="mysql")
    with pytest.raises(NotSupported, match="WITH ROLLUP"):
        grouping_sets(with_rollup.args["group"], with_rollup.expressions)
