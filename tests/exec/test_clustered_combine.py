"""Partial aggregation states of chunks whose GROUP BY keys barely overlap
(a table clustered by the key, TPC-H lineitem by l_orderkey) combine by
concatenation, the rows in the overlaps grouped again
(glint.exec.aggregate._apart): DuckDB's rows whatever the clustering, with
NULL keys, several key columns, DATE and DECIMAL keys, and keys in no order."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from glint.exec import aggregate as A
from glint.testing.compare import compare_query_result
from tests.registered import duck_fixture, glint_with, spy_on

N = 50_000


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    rng = np.random.default_rng(4)
    clustered = np.sort(rng.integers(0, N // 3, N))  # runs of equal keys cut by the chunks
    return {
        "t": pa.table(
            {
                "k": clustered,
                "r": rng.integers(0, N // 3, N),  # the same keys in no order
                "n": pa.array(clustered, mask=rng.random(N) < 0.01),
                "day": pa.array(clustered.astype("int32")).cast(pa.date32()),
                "p": pa.array((clustered * 3 + 7) / 100).cast(pa.decimal128(12, 2)),
                "s": pa.array(np.array(["a", "b"])[clustered % 2]),
                "x": rng.integers(-50, 50, N),
            }
        )
    }


@pytest.fixture
def con(device, tables, monkeypatch):
    shared = spy_on(monkeypatch, A, "_apart", lambda out: None if out is None else (int(out.sum()), out.shape[0]))
    c = glint_with(tables, device, chunk_rows=4096)
    c.shared = shared
    yield c
    c.close()


duck = duck_fixture()


CASES = {
    # (query, whether the combines found the chunks' states apart but for a few rows)
    "clustered": ("SELECT k, count(*) AS c, sum(x) AS s, min(x) AS lo FROM t GROUP BY k", True),
    "two_keys": ("SELECT s, k, count(*) AS c, avg(x) AS a FROM t GROUP BY s, k", True),
    "date": ("SELECT day, sum(x) AS s FROM t GROUP BY day", True),
    "decimal": ("SELECT p, count(*) AS c FROM t GROUP BY p", True),
    "unordered": ("SELECT r, count(*) AS c, sum(x) AS s FROM t GROUP BY r", False),
    "null_keys": ("SELECT n, count(*) AS c, sum(x) AS s FROM t GROUP BY n", None),
    "having": ("SELECT k, sum(x) AS s FROM t GROUP BY k HAVING sum(x) > 40", True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_combines_of_clustered_states(con, duck, name):
    sql, apart = CASES[name]
    got = con.sql(sql).arrow()
    assert compare_query_result(sql, got, duck.execute(sql).arrow()) == []
    assert con.shared, "no combine of several states ran"
    if apart is not None:
        mostly_apart = [m is not None and 2 * m[0] <= m[1] for m in con.shared]
        assert all(mostly_apart) == apart, con.shared
