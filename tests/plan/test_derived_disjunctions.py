"""Conjuncts derived from an OR over several tables (glint.plan.rules.
factor_disjunctions.derive_per_table): where every branch constrains a table
alone and the OR of those parts is selective, it is added beside the OR and
pushed to that table's scan (TPC-H Q19's part side), not where it keeps most
rows (Q19's quantity ranges); and the rows are DuckDB's for ORs with NULLs,
branches without a part on some table, nested ORs and outer joins."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest

import glint
from glint.plan import logical as L
from glint.testing.compare import compare_query_result
from glint.workloads import tpch


def _scan_filters(plan: L.LogicalNode) -> dict[str, list[str]]:
    """Each scanned table's filters just above its scan, as text."""
    out: dict[str, list[str]] = {}

    def visit(n):
        if isinstance(n, L.Filter) and isinstance(n.child, L.Scan):
            out.setdefault(n.child.table, []).append(repr(n.predicate))
        for c in n.children:
            visit(c)

    visit(plan)
    return out


def test_q19_gets_the_part_side_of_its_or(cached_tpch):
    con = glint.connect(device="cpu")
    tpch.load_tpch(con, directory=cached_tpch(0.01), progress=False)
    filters = _scan_filters(con.sql(tpch.tpch_query(19)).logical)
    part = " ".join(filters.get("part", []))
    assert "Brand#12" in part and "Brand#34" in part and "SM CASE" in part  # derived, pushed to part
    assert "l_quantity" not in " ".join(filters.get("lineitem", []))  # about 60% of lineitem: not derived


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    rng = np.random.default_rng(3)
    n = 20_000
    a = pa.array(rng.integers(0, 500, n), mask=rng.random(n) < 0.05)
    return {
        "f": pa.table({"k": rng.integers(0, 2_000, n), "a": a, "q": rng.integers(0, 50, n)}),
        "d": pa.table(
            {
                "k": np.arange(2_000),
                "b": pa.array(np.arange(2_000) % 97, mask=np.arange(2_000) % 31 == 0),
                "s": np.array([f"s{i % 13}" for i in range(2_000)]),
            }
        ),
    }


QUERIES = [
    # every branch has a part on d: (b = 3 AND s = 's1') OR (b = 7 AND s = 's2') derived for d
    "SELECT f.k, f.q FROM f, d WHERE f.k = d.k AND ((d.b = 3 AND d.s = 's1' AND f.q < 10) "
    "OR (d.b = 7 AND d.s = 's2' AND f.q > 40))",
    # a branch without a part on d: nothing derived for d
    "SELECT count(*) FROM f, d WHERE f.k = d.k AND ((d.b = 3 AND f.q < 10) OR f.a = 5)",
    # NULLs in both tables' columns, three branches, a nested OR inside a branch
    "SELECT f.k, d.b FROM f JOIN d ON f.k = d.k WHERE (d.b IS NULL AND f.a < 3) OR (d.b = 1 AND (f.a = 7 OR f.a IS NULL)) "
    "OR (d.b = 2 AND f.q = 1)",
    # above a LEFT JOIN: the right side's part is NULL where no row matched
    "SELECT f.k, d.s FROM f LEFT JOIN d ON f.k = d.k AND d.b < 50 WHERE (d.s = 's1' AND f.q < 5) OR (d.s IS NULL AND f.q = 7)",
    "SELECT f.k, d.s FROM f LEFT JOIN d ON f.k = d.k WHERE (d.b = 3 AND f.q < 25) OR (d.b = 4 AND f.q > 25)",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_rows_equal_duckdb(device, tables, sql):
    con = glint.connect(device=device)
    duck = duckdb.connect()
    for name, t in tables.items():
        con.register(name, t)
        duck.register(name, t)
    assert compare_query_result(sql, con.sql(sql).arrow(), duck.sql(sql).arrow()) == []


def test_derivation_follows_the_branches(tables):
    con = glint.connect(device="cpu")
    for name, t in tables.items():
        con.register(name, t)
    derived = _scan_filters(con.sql(QUERIES[0]).logical)
    assert any("s1" in p and "s2" in p for p in derived.get("d", [])), derived
    none = _scan_filters(con.sql(QUERIES[1]).logical)
    assert not any("(b" in p or "b#" in p for p in none.get("d", [])), none
