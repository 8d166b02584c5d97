"""DECIMAL and integer results beyond int64 (DuckDB computes them in 128 bits):
exact sums, products, rescaling and comparisons across scales."""

from decimal import Decimal

import duckdb
import pyarrow as pa
import pytest

import glint
from glint.testing.compare import compare_tables

BIG = Decimal("9999999999999999.99")  # DECIMAL(18,2) maximum


@pytest.fixture(scope="module")
def cons():
    n = 4000
    t = pa.table(
        {
            "g": pa.array([i % 3 for i in range(n)], pa.int32()),
            "x": pa.array([BIG if i % 5 else -BIG / 3 for i in range(n)], pa.decimal128(18, 2)),
            "y": pa.array([Decimal(i % 97) / 100 for i in range(n)], pa.decimal128(4, 2)),
            "b": pa.array([2**62 - i for i in range(n)], pa.int64()),
        }
    )
    con = glint.connect(device="cpu")
    con.register("t", t)
    duck = duckdb.connect()
    duck.register("t", t)
    return con, duck


QUERIES = [
    "SELECT g, sum(x) FROM t GROUP BY g",
    "SELECT g, sum(x) * 100.00 FROM t GROUP BY g",
    "SELECT g, sum(x) * 0.0001000000 FROM t GROUP BY g",
    "SELECT g, sum(x) + sum(x), sum(x) - 1.5 FROM t GROUP BY g",
    "SELECT g, -sum(x), abs(sum(x) * -2) FROM t GROUP BY g",
    "SELECT g, sum(x) / count(*), sum(x) / sum(y) FROM t GROUP BY g",
    "SELECT g FROM t GROUP BY g HAVING sum(x) > (SELECT sum(x) * 0.0001000000 FROM t)",
    "SELECT g, sum(x) > 10000000000000000000.5, sum(x) = sum(x) * 1.000 FROM t GROUP BY g",
    "SELECT g, sum(b), avg(b) FROM t GROUP BY g",
    "SELECT g, sum(b) * 3 FROM t GROUP BY g",
    "SELECT g, sum(x) s FROM t GROUP BY g ORDER BY s DESC",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_matches_duckdb(cons, sql):
    con, duck = cons
    expected = duck.sql(sql).arrow()
    expected = expected.read_all() if hasattr(expected, "read_all") else expected
    actual = con.sql(sql).arrow()
    assert compare_tables(actual, expected, ordered="ORDER BY" in sql) == []


@pytest.mark.parametrize(
    "sql", ["SELECT sum(x * y) FROM t", "SELECT max(x * x) FROM t WHERE y = 0.96", "SELECT sum(b * 4) FROM t"]
)
def test_overflow_of_a_64_bit_type_is_an_error_in_both(cons, sql):
    """DECIMAL(18,x) and BIGINT results are 64-bit in DuckDB too: both refuse."""
    con, duck = cons
    with pytest.raises(duckdb.OutOfRangeException):
        duck.sql(sql).fetchall()
    with pytest.raises(glint.ExecutionError, match="Overflow"):
        con.sql(sql).fetchall()


def test_overflow_beyond_wide_range_is_an_error(cons):
    con, _ = cons
    with pytest.raises(glint.ExecutionError, match="Overflow"):
        con.sql("SELECT sum(x) * sum(x) * sum(x) FROM t").fetchall()


# ------------------------------------------------------------------ DECIMAL(38,s) columns in files
@pytest.fixture(scope="module")
def d38_file(tmp_path_factory):
    """A Parquet file of DECIMAL(38,2) / DECIMAL(20,2) columns (Spark's and
    DuckDB's wide decimals): row groups whose values all fit in int64 and row
    groups of values beyond it, NULLs in both."""
    import random

    import pyarrow.parquet as pq

    rng = random.Random(7)
    n = 4000
    small = [Decimal(rng.randint(-(10**12), 10**12)) / 100 if rng.random() > 0.1 else None for _ in range(n)]
    big = [
        (Decimal(rng.randint(-(10**25), 10**25)) if i >= 3000 else Decimal(rng.randint(-(10**9), 10**9))) / 100
        if rng.random() > 0.1
        else None
        for i in range(n)
    ]
    t = pa.table(
        {
            "g": pa.array([rng.randint(0, 9) for _ in range(n)], pa.int32()),
            "s": pa.array(small, pa.decimal128(38, 2)),
            "b": pa.array(big, pa.decimal128(38, 2)),
            "m": pa.array(small, pa.decimal128(20, 2)),
        }
    )
    path = tmp_path_factory.mktemp("d38") / "d38.parquet"
    pq.write_table(t, path, row_group_size=1000)
    return str(path)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT g, sum(s), min(s), max(b), sum(b), avg(s), count(b), sum(m), median(b) FROM '{f}' GROUP BY g",
        "SELECT s, b, m FROM '{f}' WHERE s > 1000 AND b < 0 ORDER BY s, b LIMIT 20",
        "SELECT s * 2, b + 1, m - s, s = m, b > s FROM '{f}' ORDER BY 1, 2 LIMIT 10",
        "SELECT b FROM '{f}' WHERE b IS NOT NULL ORDER BY b DESC LIMIT 5",
    ],
)
def test_decimal38_columns_from_parquet(d38_file, sql):
    sql = sql.format(f=d38_file)
    con = glint.connect(device="cpu", chunk_rows=1024)
    expected = duckdb.sql(sql).arrow()
    expected = expected.read_all() if hasattr(expected, "read_all") else expected
    assert compare_tables(con.sql(sql).arrow(), expected, ordered="ORDER BY" in sql) == []


def test_decimal_values_beyond_the_wide_range_are_refused():
    con = glint.connect(device="cpu")
    con.register("t", pa.table({"x": pa.array([Decimal(1), Decimal(10**30)], pa.decimal128(38, 0))}))
    with pytest.raises(glint.NotSupported, match=r"column t\.x: DECIMAL\(38,0\) values of 28 digits"):
        con.sql("SELECT x FROM t").fetchall()
