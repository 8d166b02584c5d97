"""A filter right below a projection carries only the columns the projection
reads: a column only the predicate reads (TPC-H Q21's ``l_receiptdate >
l_commitdate``) is not gathered for the surviving rows. The plans, and the
same rows as DuckDB's: strings, NULLs, a predicate that is evaluated conjunct
by conjunct (its first form raises), joins and aggregations above."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column
from glint.exec.filter import FilterExec, filter_batch
from glint.plan.expr import Call, ColRef, Field, Literal
from glint.testing.compare import compare_query_result
from tests.registered import duck_fixture, glint_with

N = 20_000


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    rng = np.random.default_rng(21)
    k = rng.integers(0, 500, N)
    commit = rng.integers(0, 1000, N)
    return {
        "l": pa.table(
            {
                "k": k,
                "s": pa.array(np.array(["x", "y", "zz", "w"])[rng.integers(0, 4, N)]),
                "commit": pa.array(commit, mask=rng.random(N) < 0.05),
                "receipt": commit + rng.integers(-30, 30, N),
                "big": np.where(rng.random(N) < 0.01, 5_000_000_000_000_000_000, rng.integers(0, 100, N)),
            }
        ),
        "o": pa.table({"k": np.arange(500), "status": np.array(["F", "O"])[np.arange(500) % 2]}),
    }


@pytest.fixture(scope="module")
def con(device, tables):
    c = glint_with(tables, device)
    yield c
    c.close()


duck = duck_fixture()


def _filters(node):
    if isinstance(node, FilterExec):
        yield node
    for c in node.children:
        yield from _filters(c)


QUERIES = {
    "dates": "SELECT k, s FROM l WHERE receipt > commit",
    "strings_out": "SELECT s FROM l WHERE k < 100 AND receipt < 500",
    "string_predicate": "SELECT k, commit FROM l WHERE s = 'zz'",
    "expression": "SELECT k + 1 AS k1, upper(s) AS u FROM l WHERE receipt > commit + 10",
    "joined": "SELECT o.status, count(*) AS n FROM l JOIN o ON l.k = o.k WHERE l.receipt > l.commit GROUP BY o.status",
    "semi": "SELECT count(*) AS n FROM o WHERE EXISTS (SELECT 1 FROM l WHERE l.k = o.k AND l.receipt > l.commit AND l.s <> 'x')",
    # the doubled big value overflows on rows the first conjunct rejects: evaluated conjunct by conjunct
    "conjunct_by_conjunct": "SELECT k, s FROM l WHERE big < 100 AND big * 2 > 50",
}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_narrow_filters_give_duckdbs_rows(con, duck, name):
    sql = QUERIES[name]
    res = con.sql(sql)
    filters = list(_filters(res.physical))
    assert filters and all(f.keep is not None for f in filters), res.physical
    got = res.arrow()
    assert compare_query_result(sql, got, duck.execute(sql).arrow()) == []


def test_a_folded_where_gathers_only_what_the_aggregation_reads(con, duck, monkeypatch):
    """A WHERE folded into an aggregation whose fused pass does not take it
    (COUNT of a column, grouped) filters the rows first: of the columns the
    groups and aggregates read, not of the ones only the WHERE reads."""
    from glint.exec import aggregate as A

    gathered = []
    real = A.filter_batch

    def spy(*args, **kw):
        out = real(*args, **kw)
        gathered.append(set(out.columns))
        return out

    monkeypatch.setattr(A, "filter_batch", spy)
    sql = "SELECT k, count(commit) AS n FROM l WHERE s NOT LIKE '%z%' AND receipt > 10 GROUP BY k"
    res = con.sql(sql)
    assert " where " in res.physical.describe() or "where" in repr(res.physical)
    got = res.arrow()
    assert compare_query_result(sql, got, duck.execute(sql).arrow()) == []
    assert gathered and all(len(cols) == 2 for cols in gathered), gathered


def test_only_the_kept_columns_are_gathered():
    b = Field(2, "b", T.BIGINT)
    batch = Batch(
        {1: Column(T.BIGINT, torch.tensor([1, 5, 3])), 2: Column(T.BIGINT, torch.tensor([4, 4, 9]))}, 3, "cpu"
    )
    pred = Call("gt", (ColRef(b), Literal(4, T.BIGINT)), T.BOOLEAN)
    out = filter_batch(pred, batch, keep=frozenset({1}))
    assert list(out.columns) == [1] and out.columns[1].data.tolist() == [3] and out.num_rows == 1
    full = filter_batch(pred, batch)
    assert list(full.columns) == [1, 2] and full.columns[2].data.tolist() == [9]
