"""DECIMAL and integer results beyond int64 (DuckDB computes them in 128 bits):
exact sums, products, rescaling and comparisons across scales."""
from decimal import Decimal

import duckdb
import pyarrow as pa
import pytest

import glint
from glint.testing.compare import compare_tables

BIG = Decimal("9999999999999999.99")      # DECIMAL(18,2) maximum


@pytest.fixture(scope="module")
def cons():
    n = 4000
    t = pa.table({
        "g": pa.array([i % 3 for i in range(n)], pa.int32()),
        "x": pa.array([BIG if i % 5 else -BIG / 3 for i in range(n)], pa.decimal128(18, 2)),
        "y": pa.array([Decimal(i % 97) / 100 for i in range(n)], pa.decimal128(4, 2)),
        "b": pa.array([2**62 - i for i in range(n)], pa.int64()),
    })
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


@pytest.mark.parametrize("sql", ["SELECT sum(x * y) FROM t", "SELECT max(x * x) FROM t WHERE y = 0.96",
                                 "SELECT sum(b * 4) FROM t"])
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
