"""Distributed execution (glint.distributed) on Gloo CPU ranks: every TPC-H and SSB
query at a tiny scale factor on 2 and 3 ranks, compared row for row with
DuckDB (decimals exact), under several table partitionings; what a rank
failure, a hang and an error in one rank's rows do; and planning decisions.

One connection (one set of rank processes) serves all queries of a
configuration."""

import json
import time

import duckdb
import pyarrow as pa
import pytest

import glint
from glint.errors import ExecutionError, GlintError, ParseError, RankFailure
from glint.io.file_lists import tables_in_directory
from glint.testing.compare import compare_query_result
from glint.workloads import ssb, tpch

SF = 0.01
TPCH_KEYS = {
    "lineitem": "l_orderkey",
    "orders": "o_orderkey",
    "partsupp": "ps_partkey",
    "part": "p_partkey",
    "customer": "c_custkey",
    "supplier": "s_suppkey",
}

# (ranks, how the tables are spread): "ranges": every table split by rows but
# nation / region (replicated), every aggregate's states shuffled; "keys": the
# big tables hash-partitioned on their keys at load (co-partitioned joins);
# "defaults": the connection's own choices (small tables replicated)
CONFIGS = {"tpch": [(2, "ranges"), (3, "keys")], "ssb": [(2, "ranges"), (3, "defaults")]}
_expected: dict = {}


def _connect(ranks: int, how: str, **kw):
    opts = {"ranges": {"replicate_rows": 30, "small_result_bytes": 0}, "keys": {"replicate_rows": 30}, "defaults": {}}[
        how
    ]
    return glint.connect(ranks=ranks, device="cpu", timeout=60, **opts, **kw)


def _register(con, directory, how: str, keys: dict) -> None:
    for t, path in tables_in_directory(directory).items():
        con.read_parquet(path, t, partition_by=keys.get(t) if how == "keys" else None)


@pytest.fixture(scope="module", params=CONFIGS["tpch"], ids=lambda c: f"{c[0]}ranks-{c[1]}")
def tpch_con(request, tpch_data):
    ranks, how = request.param
    con = _connect(ranks, how)
    _register(con, tpch_data[0], how, TPCH_KEYS)
    yield con, tpch_data[1]
    con.close()


@pytest.fixture(scope="module", params=CONFIGS["ssb"], ids=lambda c: f"{c[0]}ranks-{c[1]}")
def ssb_con(request, ssb_data):
    ranks, how = request.param
    con = _connect(ranks, how)
    _register(con, ssb_data[0], how, {})
    yield con, ssb_data[1]
    con.close()


def _check(con, duck, key, sql):
    if key not in _expected:
        _expected[key] = tpch.duckdb_arrow(duck, sql)
    res = con.sql(sql)
    got = res.arrow()
    diffs = compare_query_result(sql, got, _expected[key])
    assert not diffs, f"{key} on {con}:\n" + "\n".join(diffs)
    assert len(res.rank_stats) == con.ranks
    return res


@pytest.mark.parametrize("n", range(1, 23), ids=lambda n: f"q{n:02d}")
def test_tpch(tpch_con, n):
    con, duck = tpch_con
    _check(con, duck, ("tpch", n), tpch.tpch_query(n))


@pytest.mark.parametrize("name", list(ssb.ssb_queries()), ids=lambda n: f"q{n}")
def test_ssb(ssb_con, name):
    con, duck = ssb_con
    _check(con, duck, ("ssb", name), ssb.ssb_query(name))


def test_breakdown_and_explain(tpch_con):
    con, duck = tpch_con
    res = _check(con, duck, ("tpch", 3), tpch.tpch_query(3))
    for r in res.rank_stats:
        assert r["total_s"] >= r["compute_s"] >= 0
        assert r["bytes_sent"] > 0 and r["messages_sent"] > 0  # at least the final gather
        assert r["exchanges"][-1]["kind"] == "gather" or r["exchanges"][-1]["kind"] in ("broadcast", "shuffle")
    text = con.sql("EXPLAIN ANALYZE " + tpch.tpch_query(3)).fetchall()[0][0]
    assert "Gather to rank 0" in text and "Ranks:" in text and "TopK" in text
    header = text.split(f"Physical plan ({con.ranks} ranks; ")[1].split("\n")[0]
    assert all(f"{t} " in header for t in ("customer", "orders", "lineitem"))


# ------------------------------------------------------------------ exchanges of every type
def _all_types(n: int) -> pa.Table:
    import datetime
    import decimal

    rows = range(n)
    return pa.table(
        {
            "k": pa.array([i % 7 for i in rows], pa.int32()),
            "big": pa.array([None if i % 5 == 0 else i * 10**12 for i in rows], pa.int64()),
            "dbl": pa.array(
                [float("nan") if i % 11 == 0 else -0.0 if i % 13 == 0 else i / 3 for i in rows], pa.float64()
            ),
            "flag": pa.array([None if i % 4 == 0 else i % 2 == 0 for i in rows], pa.bool_()),
            "day": pa.array([datetime.date(1990, 1, 1) + datetime.timedelta(days=i) for i in rows], pa.date32()),
            "price": pa.array(
                [decimal.Decimal(f"{(i * 7919) % 10**13}.{i % 100:02d}") * (-1 if i % 3 else 1) for i in rows],
                pa.decimal128(15, 2),
            ),
            "name": pa.array(
                [None if i % 6 == 0 else "" if i % 9 == 0 else f"näme-{i}-{'x' * (i % 17)}" for i in rows], pa.string()
            ),
            "cat": pa.array([["a", "bb", None, "ccc"][i % 4] for i in rows], pa.string()).dictionary_encode(),
        }
    )


@pytest.fixture(scope="module")
def types_con(duck_mem):
    # chunks of 16 rows: every rank's input streams in several batches
    con = glint.connect(ranks=3, device="cpu", timeout=60, replicate_rows=0, small_result_bytes=0, chunk_rows=16)
    for name, n in (("t", 200), ("one", 1), ("none", 0)):
        data = _all_types(n)
        con.register(name, data)
        duck_mem.register(name, data)
    yield con
    con.close()


@pytest.fixture(scope="module")
def duck_mem():
    duckdb = pytest.importorskip("duckdb")
    d = duckdb.connect()
    yield d
    d.close()


EXCHANGE_QUERIES = [
    # gathers of every type (empty partitions on most ranks for "one", all for "none")
    "SELECT * FROM t",
    "SELECT * FROM one",
    "SELECT * FROM none",
    # shuffles: GROUP BY on each type, DISTINCT rows, set operations
    "SELECT name, count(*), min(day), max(price), sum(big) FROM t GROUP BY name",
    "SELECT cat, flag, count(*), avg(dbl), min(name), max(name) FROM t GROUP BY cat, flag",
    "SELECT day, price, count(DISTINCT name) FROM t GROUP BY day, price",
    "SELECT k, count(DISTINCT name), min(price), max(DISTINCT day), count(DISTINCT k + 1) FROM t GROUP BY k",
    "SELECT count(DISTINCT cat), min(name), count(DISTINCT flag) FROM t",
    "SELECT k, count(DISTINCT name), sum(DISTINCT big), count(*) FROM t GROUP BY k",
    "SELECT DISTINCT flag, cat, k FROM t",
    "SELECT name, cat FROM t INTERSECT SELECT name, cat FROM t WHERE k < 4",
    "SELECT * FROM t EXCEPT SELECT * FROM t WHERE k = 1",
    "SELECT k, sum(price * 1000000) AS s FROM t GROUP BY k",  # sums past 64 bits: wide states
    "SELECT sum(price * 1000000), count(DISTINCT cat), count(*) FROM none",
    # all-reduced aggregates without GROUP BY: wide sums, MIN / MAX with NULLs, empty partitions
    "SELECT sum(price * 1000000), min(day), max(day), min(flag), max(flag), min(price), max(big), avg(big), "
    "count(name), sum(dbl) FROM t",
    "SELECT sum(price), min(day), max(flag), avg(big), count(*), count(name) FROM one",
    "SELECT sum(price), min(day), max(flag), avg(big), count(*), count(name) FROM none",
    # joins: shuffled on strings, dates, decimals; semi / anti / NOT IN with NULLs
    "SELECT a.k, b.day FROM t a JOIN t b ON a.name = b.name AND a.price = b.price",
    "SELECT count(*) FROM t a JOIN t b ON a.day = b.day",
    "SELECT * FROM t WHERE name NOT IN (SELECT name FROM t WHERE k = 2)",
    "SELECT * FROM t WHERE cat IN (SELECT cat FROM one)",
    "SELECT * FROM t a WHERE NOT EXISTS (SELECT 1 FROM t b WHERE b.k = a.k AND b.big > a.big)",
    "SELECT a.name, b.name FROM one a FULL JOIN t b ON a.k = b.k",
    # outer joins on spread inputs, with and without keys; subqueries; mixed distributions
    "SELECT a.k, b.name FROM t a RIGHT JOIN one b ON a.k = b.k",
    "SELECT a.k, b.k, b.day FROM one a FULL JOIN t b ON a.k < b.k",
    "SELECT * FROM t WHERE price > (SELECT avg(price) FROM t)",
    "SELECT a.k, (SELECT count(*) FROM t b WHERE b.k = a.k) FROM t a",
    "SELECT * FROM t a WHERE a.k = 1 OR EXISTS (SELECT 1 FROM one b WHERE b.name = a.name)",
    "SELECT k, name FROM t INTERSECT ALL SELECT k, name FROM t WHERE k > 2",
    "SELECT k, cat FROM t EXCEPT ALL SELECT k, cat FROM t WHERE flag",
    "SELECT k FROM t UNION ALL SELECT 42 UNION ALL SELECT k FROM one",
    "SELECT 1 + 1, 'x' || 'y'",
    # global order and limit
    "SELECT k, name FROM t ORDER BY k, name NULLS LAST OFFSET 190",
    "SELECT name, price FROM t ORDER BY price DESC, name NULLS FIRST LIMIT 7 OFFSET 3",
    "SELECT day FROM t ORDER BY day LIMIT 5",
    "SELECT * FROM (SELECT * FROM t LIMIT 11) s",
    # rank 2 alone has 11 rows in the first branch: no rank may stop before the all-reduce of the second
    "SELECT count(*) FROM (SELECT * FROM t WHERE big > 150000000000000 UNION ALL SELECT * FROM t WHERE price > "
    "(SELECT avg(price) FROM t) LIMIT 11) s",
    # window functions: hashed on the shared PARTITION BY keys, or gathered when there are none
    "SELECT k, day, price, sum(price) OVER (PARTITION BY k ORDER BY day, price, name) AS s, "
    "rank() OVER (PARTITION BY k ORDER BY price DESC NULLS LAST) AS r FROM t",
    "SELECT k, cat, count(*) OVER (PARTITION BY k, cat) AS c, max(name) OVER (PARTITION BY k) AS m FROM t",
    "SELECT k, big, lag(big) OVER (ORDER BY k, big, name, day NULLS FIRST, price) AS prev FROM t WHERE big IS NOT NULL",
    "SELECT k, sum(price) AS s, dense_rank() OVER (ORDER BY sum(price) DESC NULLS LAST) AS d FROM t GROUP BY k",
    "SELECT name, k FROM t QUALIFY row_number() OVER (PARTITION BY k ORDER BY name NULLS LAST, day, price, big) = 1",
    # grouping sets: states shuffled on (keys, grouping set); holistic aggregates gathered or shuffled
    "SELECT k, cat, count(*), sum(price), var_samp(big), bool_or(flag), grouping(k, cat) FROM t GROUP BY ROLLUP (k, cat)",
    "SELECT k, flag, median(price), quantile_disc(day, 0.3), string_agg(name, ',' ORDER BY name, day) FROM t "
    "GROUP BY k, CUBE (flag)",
    "SELECT cat, count(*), min(day) FROM none GROUP BY GROUPING SETS ((cat), ())",
]


@pytest.mark.parametrize("sql", EXCHANGE_QUERIES)
def test_exchange_types(types_con, duck_mem, sql):
    got = types_con.sql(sql).arrow()
    if "LIMIT 11" in sql:
        assert got.num_rows == 11 or got.column(0).to_pylist() == [11]
        return
    diffs = compare_query_result(sql, got, tpch.duckdb_arrow(duck_mem, sql))
    assert not diffs, "\n".join(diffs)


def test_parquet_shares(types_con, duck_mem, tmp_path):
    """Whole row groups per rank (more row groups than ranks), row ranges cut
    through one row group, and a file of no rows; each rank reads only its share."""
    import pyarrow.parquet as pq

    data = _all_types(1000)
    pq.write_table(data, tmp_path / "groups.parquet", row_group_size=64)  # 16 row groups
    pq.write_table(data, tmp_path / "whole.parquet")  # 1 row group
    pq.write_table(data.slice(0, 0), tmp_path / "empty.parquet")
    for name in ("groups", "whole", "empty"):
        types_con.read_parquet(str(tmp_path / f"{name}.parquet"), name)
        duck_mem.register(name, pq.read_table(tmp_path / f"{name}.parquet"))
        sql = f"SELECT k, count(*), sum(price), min(name), max(day) FROM {name} WHERE big > 0 OR big IS NULL GROUP BY k"
        assert compare_query_result(sql, types_con.sql(sql).arrow(), tpch.duckdb_arrow(duck_mem, sql)) == []
        res = types_con.sql(f"SELECT count(*) FROM {name}")
        assert res.fetchall() == [(0 if name == "empty" else 1000,)]
        scanned = [r["io"]["chunks"] for r in res.rank_stats]
        # (a table without rows has no chunks: its scan reads nothing)
        assert sum(scanned) == 0 if name == "empty" else all(c >= 1 for c in scanned)


# ------------------------------------------------------------------ TIMESTAMP on 2 ranks
def _timestamps(n: int) -> pa.Table:
    import datetime

    base = datetime.datetime(1995, 1, 1)
    far = [datetime.datetime(1, 1, 1), datetime.datetime(9999, 12, 31, 23, 59, 59, 999999)]
    return pa.table(
        {
            "k": pa.array([i % 5 for i in range(n)], pa.int32()),
            "ts": pa.array(
                [
                    None
                    if i % 7 == 0
                    else far[i % 2]
                    if i % 23 == 0
                    else base + datetime.timedelta(hours=11 * i, microseconds=i)
                    for i in range(n)
                ],
                pa.timestamp("us"),
            ),
            "d": pa.array([datetime.date(1995, 1, 1) + datetime.timedelta(days=i % 40) for i in range(n)], pa.date32()),
        }
    )


TIMESTAMP_QUERIES = [
    "SELECT * FROM ts_t",
    "SELECT ts, count(*), min(k) FROM ts_t GROUP BY ts",
    "SELECT date_trunc('day', ts) AS day, count(*), max(ts) FROM ts_t GROUP BY day",
    "SELECT min(ts), max(ts), count(ts), count(DISTINCT date_trunc('hour', ts)) FROM ts_t",
    "SELECT min(ts), max(ts), count(ts), min(d + INTERVAL 1 HOUR) FROM ts_t WHERE k > 1",  # all-reduced
    "SELECT a.k, b.k, a.ts FROM ts_t a JOIN ts_t b ON a.ts = b.ts AND a.k <> b.k",
    "SELECT a.k, b.ts FROM ts_t a JOIN ts_t b ON a.d = b.ts",
    "SELECT ts, k FROM ts_t ORDER BY ts DESC NULLS LAST, k LIMIT 9",
    "SELECT DISTINCT ts FROM ts_t WHERE ts < d + INTERVAL 36 HOUR",
    "SELECT k, ts, count(*) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL 2 DAY PRECEDING AND CURRENT ROW) "
    "FROM ts_t WHERE ts > TIMESTAMP '1900-01-01' AND ts < TIMESTAMP '9000-01-01'",
    "SELECT ts FROM ts_t EXCEPT SELECT ts + INTERVAL 0 DAY FROM ts_t WHERE k = 1",
]


@pytest.fixture(scope="module")
def timestamps_con(duck_mem):
    con = glint.connect(ranks=2, device="cpu", timeout=60, replicate_rows=0, small_result_bytes=0, chunk_rows=32)
    data = _timestamps(300)
    con.register("ts_t", data)
    duck_mem.register("ts_t", data)
    yield con
    con.close()


@pytest.mark.parametrize("sql", TIMESTAMP_QUERIES)
def test_timestamps_on_two_ranks(timestamps_con, duck_mem, sql):
    """TIMESTAMP columns shuffled, broadcast, gathered and all-reduced exactly (int64 microseconds)."""
    got = timestamps_con.sql(sql).arrow()
    want = tpch.duckdb_arrow(duck_mem, sql)
    assert got.schema.types == want.schema.types
    diffs = compare_query_result(sql, got, want)
    assert not diffs, "\n".join(diffs)


def test_tables_writes_and_files_on_two_ranks(tmp_path):
    """CREATE TABLE [AS], INSERT into tables split by rows, replicated and
    hash-partitioned, TRUNCATE, VALUES, and files in FROM (each rank reading
    its row groups) on 2 ranks, against DuckDB; DELETE and UPDATE are refused."""
    import duckdb

    from glint.errors import NotSupported

    path = tmp_path / "p.parquet"
    duck = duckdb.connect()
    duck.execute(
        f"COPY (SELECT i AS k, i % 5 AS g, 'n' || (i % 7) AS s, (i * 0.25)::DECIMAL(8,2) AS m "
        f"FROM range(300) t(i)) TO '{path}' (ROW_GROUP_SIZE 40)"
    )
    con = glint.connect(ranks=2, device="cpu", timeout=60, replicate_rows=8, chunk_rows=16)
    try:
        statements = [
            f"CREATE TABLE big AS SELECT * FROM '{path}' WHERE k < 200",
            f"INSERT INTO big SELECT k + 1000, g, s, m FROM read_parquet('{path}') WHERE k >= 250",
            "INSERT INTO big VALUES (-1, NULL, 'x', NULL), (-2, 4, NULL, 0.5)",
            "CREATE TABLE dim (g INTEGER, label VARCHAR)",
            "INSERT INTO dim VALUES (0, 'zero'), (1, 'one'), (4, 'four')",
            "CREATE TABLE sums AS SELECT g, sum(m) AS total, count(*) AS n FROM big GROUP BY g",
            "CREATE TABLE gone AS SELECT * FROM big WHERE k < 10",
            "TRUNCATE gone",
            "INSERT INTO gone SELECT * FROM big WHERE k BETWEEN 100 AND 120",
        ]
        for sql in statements:
            con.sql(sql)
            duck.execute(sql)
        assert repr(con.partitioning("big")) == "range" and repr(con.partitioning("dim")) == "replicated"
        queries = [
            "SELECT count(*), sum(k), sum(m), count(s), count(DISTINCT s) FROM big",
            "SELECT b.g, d.label, count(*), sum(b.m) FROM big b JOIN dim d ON b.g = d.g GROUP BY b.g, d.label",
            "SELECT * FROM sums",
            "SELECT g, n FROM sums WHERE total > (SELECT avg(total) FROM sums)",
            "SELECT count(*), min(k), max(k) FROM gone",
            f"SELECT g, count(*), sum(m) FROM '{path}' WHERE k % 3 = 0 GROUP BY g",
            f"SELECT count(*) FROM read_parquet(['{path}', '{path}'])",
            "SELECT v.x, d.label FROM (VALUES (1, 'a'), (4, 'b'), (9, 'c')) v(x, y) LEFT JOIN dim d ON v.x = d.g",
            "SELECT k, s FROM big ORDER BY k DESC LIMIT 5",
        ]
        for sql in queries:
            res = con.sql(sql)
            diffs = compare_query_result(sql, res.arrow(), duck.execute(sql).arrow().read_all())
            assert not diffs, (sql, diffs)
        res = con.sql("SELECT count(*) FROM big")
        # both ranks hold rows of it
        assert res.fetchall() == [(252,)] and all(r["io"]["chunks"] >= 1 for r in res.rank_stats)
        # INSERT into a table hash-partitioned on its key: each row goes to the rank its key hashes to
        data = pa.table({"k": list(range(50)), "v": [i * 3 for i in range(50)]})
        con.register("h", data, partition_by="k")
        duck.register("h_src", data)
        duck.execute("CREATE TABLE h AS SELECT * FROM h_src")
        for sql in ("INSERT INTO h SELECT k + 25, v FROM h", "INSERT INTO h VALUES (7, NULL), (NULL, 1)"):
            con.sql(sql)
            duck.execute(sql)
        for sql in ("SELECT k, count(*), sum(v) FROM h GROUP BY k", "SELECT count(*), count(k), sum(v) FROM h"):
            assert not compare_query_result(sql, con.sql(sql).arrow(), duck.execute(sql).arrow().read_all())
        for sql in ("DELETE FROM big WHERE k = 1", "UPDATE big SET g = 0"):
            with pytest.raises(NotSupported, match="on a distributed connection"):
                con.sql(sql)
    finally:
        con.close()
        duck.close()


# ------------------------------------------------------------------ failures
def test_error_in_one_rank_keeps_connection(duck_mem):
    con = glint.connect(ranks=3, device="cpu", timeout=60, replicate_rows=0)
    try:
        con.register("s", pa.table({"v": ["1", "2", "3", "4", "5", "x"]}))  # "x" is rank 2's
        with pytest.raises(ExecutionError, match="Could not convert string 'x' to INT32"):
            con.sql("SELECT sum(CAST(v AS INTEGER)) FROM s").arrow()
        with pytest.raises(ParseError):
            con.sql("SELEC 1")
        con.inject_fault(1, "raise", step=1)
        with pytest.raises(ExecutionError, match="injected fault on rank 1"):
            con.sql("SELECT v, count(*) FROM s GROUP BY v").arrow()
        assert con.sql("SELECT count(*), min(v) FROM s").fetchall() == [(6, "1")]
    finally:
        con.close()


def test_rank_exit_is_named_and_a_new_connection_works(tpch_data):
    d, duck = tpch_data
    con = glint.connect(ranks=3, device="cpu", timeout=30)
    tpch.load_tpch(con, directory=d, progress=False)
    con.inject_fault(2, "exit", step=1)
    t0 = time.monotonic()
    with pytest.raises(RankFailure, match="rank 2 exited with code 17") as e:
        con.sql(tpch.tpch_query(1)).arrow()
    assert e.value.rank == 2 and time.monotonic() - t0 < 15
    with pytest.raises(RankFailure, match="open a new connection"):
        con.sql("SELECT 1").arrow()
    con.close()
    con = glint.connect(ranks=3, device="cpu", timeout=30)
    try:
        tpch.load_tpch(con, directory=d, progress=False)
        _check(con, duck, ("tpch", 1), tpch.tpch_query(1))
    finally:
        con.close()


def test_rank_hang_times_out():
    con = glint.connect(ranks=2, device="cpu", timeout=3)
    con.register("t", pa.table({"a": list(range(100))}), replicate=False)
    con.inject_fault(1, "sleep", step=1, seconds=60)
    t0 = time.monotonic()
    with pytest.raises(RankFailure, match=r"rank 1 did not reach exchange 1 \(.*\) within 3 s") as e:
        con.sql("SELECT a % 3, count(*) FROM t GROUP BY 1").arrow()
    elapsed = time.monotonic() - t0
    assert e.value.rank == 1 and 2.5 < elapsed < 10
    procs = list(con.world.procs.values())
    assert all(p.poll() is not None for p in procs)  # nothing left hanging
    con.close()


def test_bad_arguments():
    with pytest.raises(GlintError, match="ranks must be"):
        glint.connect(ranks=0, device="cpu")
    with pytest.raises(GlintError, match="torchrun"):
        glint.connect(ranks="env", device="cpu")


# ------------------------------------------------------------------ planning (no rank processes)
@pytest.fixture(scope="module")
def planning():
    """A plain connection as the planner's catalog, with a partitioning per table
    (fact's rows grouped before the join, 100 to a group of d, would hide the
    join's exchanges these tests are about: that rule is off here)."""
    from glint.distributed.catalog import TablePartitioning

    con = glint.connect(device="cpu", optimizer={"aggregate_below_joins": False})
    n = 100_000
    con.register("fact", pa.table({"k": list(range(n)), "d": [i % 1000 for i in range(n)], "v": [1.0] * n}))
    con.register("dim", pa.table({"d": list(range(1000)), "name": [f"n{i}" for i in range(1000)]}))
    con.register("a", pa.table({"x": list(range(10_000)), "p": list(range(10_000))}))
    con.register("b", pa.table({"y": list(range(10_000)), "q": list(range(10_000))}))
    parts = {}
    con.partitioning = lambda name: parts.get(name, TablePartitioning("range"))
    yield con, parts
    con.close()


def _plan_text(planning, sql: str, ranks: int = 4, **parts) -> str:
    import re

    from glint.distributed.catalog import TablePartitioning
    from glint.distributed.planner import plan_distributed

    con, table_parts = planning
    table_parts.clear()
    table_parts.update({t: TablePartitioning("hash", k) for t, k in parts.items()})
    text = plan_distributed(con.sql(sql).logical, con, ranks).explain()
    return re.sub(r"  \(~[0-9,]+ rows\)", "", text)


def test_plan_broadcasts_the_small_side(planning):
    # |fact| / |dim| = 100 > ranks - 1 (eq. 3): dim is broadcast, fact stays where it is
    assert (
        _plan_text(planning, "SELECT name, sum(v) FROM fact JOIN dim ON fact.d = dim.d GROUP BY name")
        == """\
Project name#6 AS name#8, SUM(v)#7 AS sum(v)#9
  HashAggregate(final) groups=[name#5] aggs=[sum(v#3)] [breaker]
    Broadcast to all ranks [breaker]
      HashAggregate(partial) groups=[name#5] aggs=[sum(v#3)] [breaker]
        Project v#3, name#5
          EquiJoin INNER [d#2 = d#4] build=right [breaker]
            Scan fact [d, v]
            Broadcast to all ranks [breaker]
              Scan dim [d, name]"""
    )


def test_plan_shuffles_comparable_sides_and_keeps_co_partitioned_ones(planning):
    sql = "SELECT count(*) FROM a JOIN b ON x = y"
    shuffled = _plan_text(planning, sql)
    assert (
        "Shuffle hash(x#1)" in shuffled
        and "Shuffle hash(y#3)" in shuffled
        and "Broadcast to all ranks\n" not in shuffled.split("EquiJoin")[1]
    )
    local = _plan_text(planning, sql, a="x", b="y")
    assert "Shuffle" not in local and local.endswith(
        "EquiJoin INNER [x#1 = y#3] build=right [breaker]\n          Scan a [x]\n          Scan b [y]"
    )
    # partitioned on another column: only that side moves
    one = _plan_text(planning, sql, a="x", b="q")
    assert "Shuffle hash(y#3)" in one and "Shuffle hash(x" not in one


def test_plan_not_in_never_partitions_on_the_in_key(planning):
    text = _plan_text(planning, "SELECT * FROM a WHERE p NOT IN (SELECT q FROM b)", a="p", b="q")
    assert "EquiJoin ANTI null-aware" in text and "Broadcast to all ranks" in text and "Shuffle" not in text


def test_plan_all_reduces_aggregates_without_groups(planning):
    text = _plan_text(planning, "SELECT sum(v), min(k), count(*) FROM fact")
    assert (
        text
        == """\
Project SUM(v)#4 AS sum(v)#7, MIN(k)#5 AS min(k)#8, COUNT(*)#6 AS count_star()#9
  HashAggregate(final) groups=[] aggs=[sum(v#3), min(k#1), count_star()] [breaker]
    AllReduce sum(v#3), min(k#1), count_star() [breaker]
      HashAggregate(partial) groups=[] aggs=[sum(v#3), min(k#1), count_star()] [breaker]
        Scan fact [k, v]"""
    )
    assert "AllReduce" not in _plan_text(planning, "SELECT max(v) FROM fact")  # NaN order: states broadcast


def test_plan_global_top_k_and_distinct_aggregates(planning):
    assert (
        _plan_text(planning, "SELECT x FROM a ORDER BY p DESC LIMIT 5")
        == """\
Project x#3
  TopK 5 OFFSET 0 BY __order#4 DESC NULLS LAST [breaker]
    Gather to rank 0
      TopK 5 OFFSET 0 BY __order#4 DESC NULLS LAST [breaker]
        Project x#1 AS x#3, p#2 AS __order#4
          Scan a [x, p]"""
    )
    # DISTINCT: each rank's distinct (group, argument) pairs are shuffled, not its rows
    assert _plan_text(planning, "SELECT q % 10, count(DISTINCT y) FROM b GROUP BY 1").endswith("""\
    HashAggregate groups=[q % 10#3] aggs=[count(DISTINCT __arg0#7)] [breaker]
      Shuffle hash(q % 10#3)
        HashAggregate groups=[(q#2 % 10), y#1] aggs=[] [breaker]
          Scan b [y, q]""")
    text = _plan_text(planning, "SELECT q % 10, count(DISTINCT y), count(*) FROM b GROUP BY 1")
    assert "Shuffle hash((q#2 % 10))" in text and "aggs=[]" not in text and "partial" not in text


def test_plan_grouping_sets(planning):
    # one pass over the input: each rank's states of every set, shuffled on the keys and the set
    assert _plan_text(planning, "SELECT k, count(*) FROM fact GROUP BY ROLLUP (k)").endswith("""\
    HashAggregate(final) groups=[k#1] sets=[(0,), ()] aggs=[count_star()] [breaker]
      Shuffle hash(k#4, grouping_set#5)
        HashAggregate(partial) groups=[k#1] sets=[(0,), ()] aggs=[count_star()] [breaker]
          Scan fact [k]""")
    # a median needs the rows: shuffled on the key every set keeps, none moved when already there
    text = _plan_text(planning, "SELECT k, d, median(v) FROM fact GROUP BY k, ROLLUP (d)")
    assert "Shuffle hash(k#1)" in text and "partial" not in text
    assert "Shuffle" not in _plan_text(planning, "SELECT k, d, median(v) FROM fact GROUP BY k, ROLLUP (d)", fact="k")
    assert "Gather to rank 0\n      Scan fact" in _plan_text(
        planning, "SELECT d, median(v) FROM fact GROUP BY ROLLUP (d)"
    )


# ------------------------------------------------------------------ command line and benchmark
def test_cli_sql_and_bench_on_ranks(tmp_path, tpch_data, capsys):
    import json

    from glint.__main__ import main

    d = tpch_data[0]
    assert (
        main(
            [
                "sql",
                "SELECT count(*) AS n FROM lineitem",
                "--parquet",
                str(d),
                "--device",
                "cpu",
                "--ranks",
                "2",
                "--timer",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "60175" in out and "Ranks:" in out and "allreduce" in out  # COUNT(*): all-reduced states
    res = tmp_path / "res"
    assert (
        main(
            [
                "bench",
                "tpch",
                "--sf",
                "0.01",
                "--device",
                "cpu",
                "--ranks",
                "2",
                "--hash-partition",
                "--runs",
                "1",
                "--warmup",
                "0",
                "--queries",
                "3,18",
                "--cold-queries",
                "3",
                "--no-cold-process",
                "--no-duckdb-memory",
                "--out",
                str(res),
            ]
        )
        == 0
    )
    rep = json.loads((res / "tpch_sf0.01_2-ranks-x-cpu.json").read_text())
    assert rep["ranks"] == 2 and rep["hash_partition"] and rep["queries_failed"] == []
    q3 = rep["queries"][0]
    assert q3["checked"] == ["warm", "cold"] and len(q3["rank_stats"]) == 2
    assert q3["breakdown"]["exchanges"] >= 1 and q3["breakdown"]["bytes_sent"] > 0
    assert "shuffle s" in (res / "tpch_sf0.01_2-ranks-x-cpu.md").read_text()


def test_torchrun_entry(tpch_data):
    """``torchrun ... -m glint <command> --ranks env``: rank 0 runs the command
    over all the ranks torchrun started; the others serve it and leave."""
    import subprocess
    import sys

    sql = "SELECT l_returnflag, count(*) AS n FROM lineitem GROUP BY 1 ORDER BY 1"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            "2",
            "-m",
            "glint",
            "sql",
            sql,
            "--parquet",
            str(tpch_data[0]),
            "--device",
            "cpu",
            "--timer",
            "--ranks",
            "env",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    expected = tpch.duckdb_arrow(tpch_data[1], sql).to_pylist()
    for row in expected:
        assert f"{row['l_returnflag']} " in p.stdout and str(row["n"]) in p.stdout
    assert "Ranks:" in p.stdout and "   1 " in p.stdout  # both ranks' breakdown


def test_two_nodes_of_two_ranks_through_torchrun(tpch_data, tmp_path):
    """Two hosts simulated on one: two torchrun launchers (``--nnodes 2
    --nproc-per-node 2``, node ranks 0 and 1) meet at one rendezvous, and the
    four Gloo ranks run TPC-H's 22 queries; rank 0 (on node 0) checks each
    answer against DuckDB's."""
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    nodes = []
    for node in (0, 1):
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "2"]
        cmd += ["--node-rank", str(node), "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}"]
        cmd += ["-m", "glint", "bench", "tpch", "--sf", str(SF), "--data", str(tpch_data[0]), "--device", "cpu"]
        cmd += ["--ranks", "env", "--runs", "1", "--warmup", "0", "--no-cold", "--duckdb-runs", "1"]
        cmd += ["--no-duckdb-parquet", "--out", str(tmp_path / f"node{node}")]
        nodes.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    try:
        outs = [p.communicate(timeout=300)[0] for p in nodes]
    finally:
        for p in nodes:
            p.kill()
    assert [p.returncode for p in nodes] == [0, 0], outs[0][-3000:] + outs[1][-3000:]
    (report,) = (tmp_path / "node0").glob("*.json")
    rep = json.loads(report.read_text())
    assert rep["ranks"] == 4 and rep["queries_correct"] == rep["queries_total"] == 22, rep["queries_failed"]
    assert {r["rank"] for r in rep["queries"][2]["rank_stats"]} == {0, 1, 2, 3}


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs CUDA")
def test_cuda_ranks_nccl(tpch_data):
    """One rank per GPU (up to 2), NCCL between them: the same results."""
    import torch

    d, duck = tpch_data
    con = glint.connect(ranks=min(2, torch.cuda.device_count()), device="cuda", replicate_rows=30)
    try:
        tpch.load_tpch(con, directory=d, progress=False, partition_keys={"orders": "o_orderkey"})
        for n in (1, 3, 9, 13, 16, 18, 21, 22):
            _check(con, duck, ("tpch", n), tpch.tpch_query(n))
    finally:
        con.close()


# --------------------------------------------------------- string functions
STRING_QUERIES = [
    # strings made by the functions cross shuffles (GROUP BY, DISTINCT, joins) and the final gather
    "SELECT regexp_replace(name, '[0-9]+', '#', 'g') AS r, count(*) FROM t GROUP BY r",
    "SELECT split_part(name, '-', 2) AS p, max(reverse(name)), count(DISTINCT lpad(cat, 4, 'é')) FROM t GROUP BY p",
    "SELECT DISTINCT left(name, 6), right(name, 3), concat_ws('|', cat, k, day) FROM t",
    "SELECT a.k, b.k FROM t a JOIN t b ON regexp_extract(a.name, '-([0-9]+)-', 1) = split_part(b.name, '-', 2)",
    # per-row patterns from the other side of a join (broadcast or shuffled), NULLs included
    "SELECT a.name, b.cat FROM t a JOIN one b ON a.name LIKE '%' || b.cat || '%'",
    "SELECT count(*) FROM t a JOIN t b ON a.k = b.k AND regexp_matches(a.name, b.cat || '.?')",
    "SELECT k, count(*) FROM t WHERE NOT (name ILIKE cat || '%') OR strpos(name, cat) > 0 GROUP BY k",
    "SELECT repeat(cat, 2) AS c, md5(name), ascii(name), chr(65 + k) FROM t ORDER BY k, name NULLS FIRST LIMIT 20",
]


@pytest.fixture(scope="module")
def string_con(duck_mem):
    con = glint.connect(ranks=2, device="cpu", timeout=60, replicate_rows=0, small_result_bytes=0, chunk_rows=32)
    for name, n in (("t", 200), ("one", 1)):
        data = _all_types(n)
        con.register(name, data)
        duck_mem.register(name, data)
    yield con
    con.close()


@pytest.mark.parametrize("sql", STRING_QUERIES)
def test_string_functions_on_two_ranks(string_con, duck_mem, sql):
    got = string_con.sql(sql).arrow()
    diffs = compare_query_result(sql, got, tpch.duckdb_arrow(duck_mem, sql))
    assert not diffs, "\n".join(diffs)


def test_string_function_error_in_one_rank(string_con):
    string_con.register("pats", pa.table({"s": ["a", "b", "c", "d"], "p": ["a", "b", "c", "("]}))  # "(" is rank 1's
    with pytest.raises(ExecutionError, match=r"missing \): \("):
        string_con.sql("SELECT count(*) FROM pats WHERE regexp_matches(s, p)").arrow()
    assert string_con.sql("SELECT count(*) FROM pats WHERE s LIKE p").fetchall() == [(3,)]


def test_ranks_read_every_scan_ahead(tmp_path, monkeypatch):
    """Each rank starts reading all of its scans when its run starts, as one
    process does (rank 0 is this process: its readers are seen here); the
    result equals DuckDB's and no reader thread outlives the run."""
    import threading

    import pyarrow.parquet as pq

    from glint.distributed import rank as R

    n = 4000
    fact = pa.table(
        {"fk": pa.array([i % 40 for i in range(n)], pa.int64()), "v": pa.array([i % 97 for i in range(n)], pa.int64())}
    )
    dim = pa.table({"dk": pa.array(range(40), pa.int64()), "g": pa.array([f"g{i % 4}" for i in range(40)])})
    for name, t in (("fact", fact), ("dim", dim)):
        pq.write_table(t, str(tmp_path / f"{name}.parquet"), row_group_size=500)
    seen = []
    real = R.start_scans

    def spy(ctx, root):
        real(ctx, root)
        seen.append(sorted(r.table.name for r in ctx.read_ahead.values()))

    monkeypatch.setattr(R, "start_scans", spy)
    sql = "SELECT g, sum(v) AS s, count(*) AS c FROM fact JOIN dim ON fk = dk GROUP BY g ORDER BY g"
    duck = duckdb.connect()
    for name in ("fact", "dim"):
        duck.execute(f"CREATE VIEW {name} AS SELECT * FROM '{tmp_path / name}.parquet'")
    con = _connect(2, "ranges", chunk_rows=512)
    try:
        for name in ("fact", "dim"):
            con.read_parquet(str(tmp_path / f"{name}.parquet"), name)
        assert con.sql(sql).fetchall() == duck.execute(sql).fetchall()
    finally:
        con.close()
    assert seen and "fact" in seen[0]
    assert not [t for t in threading.enumerate() if t.name.startswith("glint-scan") and t.is_alive()]


def test_registering_many_tables_on_ranks_reads_each_ranks_share(tpch_data):
    """Connection.read_parquet_tables (the bench's registration) on a
    distributed connection registers each table its own way (each rank its
    share of the row groups): the counts are the tables' counts."""
    d, duck = tpch_data
    con = _connect(2, "ranges")
    try:
        tpch.load_tpch(con, directory=d, progress=False)
        for t in ("lineitem", "orders", "nation"):
            sql = f"SELECT count(*) AS n FROM {t}"
            assert con.sql(sql).arrow().column("n").to_pylist() == [duck.sql(sql).fetchone()[0]]
    finally:
        con.close()
