"""The join-order search (glint.plan.join_enumerators) against brute force on
random query graphs, the estimates' floors (glint.plan.cardinality,
glint.plan.join_graph), and the memory check end to end."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

import glint
from glint.columnar import types as T
from glint.io.table import ColumnStats
from glint.plan import logical as L
from glint.plan.cardinality import Estimator
from glint.plan.expr import Call, ColRef, Field, Literal
from glint.plan.join_enumerators import JoinCost, dp_ccp, greedy_operator_ordering, linearized_dp
from glint.plan.join_graph import JoinGraph, flatten_inner_joins
from glint.plan.rules.reorder_joins import plan_table
from glint.testing.compare import compare_query_result
from glint.workloads.tpch import duckdb_arrow


class _Table:
    def __init__(self, rows, ndv):
        self.num_rows, self._ndv = rows, ndv

    def stats(self, column):
        d = self._ndv[column]
        return ColumnStats(d, 0, 0, d - 1)


class _Catalog:
    def __init__(self):
        self.tables = {}

    def table(self, name):
        return self.tables[name]


def random_graph(seed: int, n: int, extra_edges: int) -> JoinGraph:
    """A connected random query graph over n scans (a random spanning tree plus
    extra edges), with random sizes, key ndvs, filters and row widths."""
    rnd = random.Random(seed)
    cat = _Catalog()
    ids = iter(range(1, 10_000))
    edges = {(rnd.randrange(i), i) for i in range(1, n)}
    while len(edges) < n - 1 + extra_edges and len(edges) < n * (n - 1) // 2:
        a, b = sorted(rnd.sample(range(n), 2))
        edges.add((a, b))
    leaves, cols = [], []
    for i in range(n):
        rows = rnd.choice([10, 100, 1_000, 10_000, 100_000])
        fields = {j: Field(next(ids), f"c{j}", T.BIGINT) for j in range(n)}
        payload = tuple(Field(next(ids), f"p{k}", T.DOUBLE) for k in range(rnd.randrange(4)))
        ndv = {f"c{j}": max(1, min(rows, rnd.choice([5, 50, 500, 5_000, rows]))) for j in range(n)}
        cat.tables[f"t{i}"] = _Table(rows, {**ndv, **{f.name: rows for f in payload}})
        scan = L.Scan(
            f"t{i}",
            tuple(f.name for f in fields.values()) + tuple(f.name for f in payload),
            tuple(fields.values()) + payload,
        )
        if rnd.random() < 0.4:
            f = fields[i]
            scan = L.Filter(scan, Call("eq", (ColRef(f), Literal(1, T.BIGINT)), T.BOOLEAN))
        leaves.append(scan)
        cols.append(fields)
    preds = [Call("eq", (ColRef(cols[a][b]), ColRef(cols[b][a])), T.BOOLEAN) for a, b in sorted(edges)]
    return JoinGraph(leaves, preds, Estimator(cat))


def brute_force(graph: JoinGraph, cost: JoinCost) -> dict:
    """Every bushy plan without cross products, by dynamic programming over all subsets."""
    table = {1 << i: ((0.0, 0.0), None) for i in range(graph.n)}
    for mask in sorted(range(1, graph.full + 1), key=lambda m: bin(m).count("1")):
        if mask in table or not graph.is_connected(mask):
            continue
        sub = (mask - 1) & mask
        while sub:
            other = mask ^ sub
            if sub < other and sub in table and other in table and graph.connected(sub, other):
                c = cost.join(table, sub, other)
                if mask not in table or c < table[mask][0]:
                    table[mask] = (c, (sub, other))
            sub = (sub - 1) & mask
    return table


def check_plan(graph: JoinGraph, table: dict, mask: int) -> None:
    """The plan for mask covers it and joins only connected, disjoint sets."""
    split = table[mask][1]
    if split is None:
        assert mask & (mask - 1) == 0
        return
    a, b = split
    assert a | b == mask and not a & b and graph.connected(a, b)
    check_plan(graph, table, a)
    check_plan(graph, table, b)


def _close(x, y):
    return x[0] == pytest.approx(y[0], rel=1e-9, abs=1e-6) and x[1] == pytest.approx(y[1], rel=1e-9)


@pytest.mark.parametrize("seed", range(40))
def test_dp_ccp_finds_the_optimum(seed):
    rnd = random.Random(seed)
    n = rnd.randrange(3, 9)
    g = random_graph(seed, n, rnd.randrange(0, n))
    for budget in (None, 1e4, 1e6):
        cost = JoinCost(g, budget)
        exact = brute_force(g, cost)[g.full][0]
        table = dp_ccp(g, cost, g.full, 10**6)
        check_plan(g, table, g.full)
        assert _close(table[g.full][0], exact), (seed, budget)


@pytest.mark.parametrize("seed", range(40))
def test_heuristics_give_valid_plans_no_better_than_the_optimum(seed):
    rnd = random.Random(seed)
    n = rnd.randrange(3, 10)
    g = random_graph(seed, n, rnd.randrange(0, n))
    cost = JoinCost(g, 1e6)
    exact = dp_ccp(g, cost, g.full, 10**6)[g.full][0]
    for search in (linearized_dp, greedy_operator_ordering):
        table = search(g, cost, g.full)
        check_plan(g, table, g.full)
        assert table[g.full][0] >= exact or _close(table[g.full][0], exact)


def test_linearized_dp_is_optimal_on_a_star():
    """IKKBZ orders a star's dimensions optimally for C_out; on a star every
    plan without cross products is left-deep from the fact table."""
    for seed in range(10):
        g = random_graph(seed, 8, 0)
        star = JoinGraph(
            g.leaves,
            [Call("eq", (ColRef(g.leaves[0].schema[i]), ColRef(_key(g.leaves[i]))), T.BOOLEAN) for i in range(1, 8)],
            g.est,
        )
        cost = JoinCost(star)
        assert _close(
            linearized_dp(star, cost, star.full)[star.full][0], dp_ccp(star, cost, star.full, 10**6)[star.full][0]
        ), seed


def _key(leaf):
    while isinstance(leaf, L.Filter):
        leaf = leaf.child
    return leaf.schema[0]


def test_large_graphs_use_the_heuristics_and_stay_connected():
    g = random_graph(3, 30, 10)
    table = plan_table(g, JoinCost(g, None))
    check_plan(g, table, g.full)


# ---------------------------------------------------------------- estimates
def _est_rows(con, sql):
    res = con.sql(sql)
    from glint.plan.cardinality import Estimator as E

    return E(con).rows(res.logical)


@pytest.fixture(scope="module")
def dims():
    rng = np.random.default_rng(1)
    n = 40_000
    g = rng.integers(0, 20, n)
    con = glint.connect(device="cpu")
    con.register(
        "dim",
        pa.table(
            {
                "k": np.arange(n),
                "g": g,
                "code": g * 7 + 1,
                "name": np.array([f"g{v}" for v in g]),
                "x": np.arange(n) % 1000,
            }
        ),
    )
    con.register("fact", pa.table({"dk": rng.integers(0, n, 200_000), "ek": rng.integers(0, n, 200_000)}))
    con.register("dim2", pa.table({"k": np.arange(n), "g": g}))
    return con


def test_correlated_filters_do_not_collapse(dims):
    """Three equalities that say the same thing keep 1/20 of the rows; independence
    says 1/8000 (5 rows), backoff 1/20 * (1/20)^(1/2) * (1/20)^(1/4) (211 rows)."""
    rows = _est_rows(dims, "SELECT k FROM dim WHERE g = 3 AND code = 22 AND name = 'g3'")
    assert 150 < rows < 2000


def test_range_conjuncts_on_one_column_make_one_interval(dims):
    rows = _est_rows(dims, "SELECT k FROM dim WHERE x >= 100 AND x < 200")
    assert rows == pytest.approx(40_000 * 100 / 999, rel=0.05)
    rows = _est_rows(dims, "SELECT k FROM dim WHERE x > 500 AND x < 400")  # empty: one value's worth
    assert 1 <= rows <= 100


def test_join_chain_of_correlated_dimension_filters_does_not_collapse(dims):
    """fact joined to two dimensions filtered on the same (correlated) group:
    independence multiplies both filters (200,000 / 400 = 500 rows); the
    estimate keeps at least the backoff of the two."""
    sql = "SELECT count(*) FROM fact, dim, dim2 WHERE fact.dk = dim.k AND fact.ek = dim2.k AND dim.g = 3 AND dim2.g = 3"
    res = dims.sql(sql)
    join = res.logical
    while not (isinstance(join, L.Join) and join.kind == "inner"):
        join = join.children[0]
    rows = Estimator(dims).rows(join)
    assert rows >= 200_000 / 20 / 20**0.5 * 0.9


def test_composite_key_keeps_one_row_per_key():
    """A two-column foreign key (like lineitem -> partsupp): the product of the
    two equalities' selectivities is clamped at one match per distinct key."""
    cat = _Catalog()
    cat.tables["ps"] = _Table(80_000, {"pk": 20_000, "sk": 1_000})
    cat.tables["l"] = _Table(600_000, {"pk": 20_000, "sk": 1_000})
    f = [Field(i, n, T.INTEGER) for i, n in enumerate(["pk", "sk", "lpk", "lsk"])]
    ps = L.Scan("ps", ("pk", "sk"), (f[0], f[1]))
    li = L.Scan("l", ("pk", "sk"), (f[2], f[3]))
    eq = lambda a, b: Call("eq", (ColRef(a), ColRef(b)), T.BOOLEAN)
    g = JoinGraph((li, ps), [eq(f[0], f[2]), eq(f[1], f[3])], Estimator(cat))
    assert g.rows(g.full) == pytest.approx(600_000 * 80_000 / 600_000)


def test_implied_equalities_count_once():
    """a.k = b.k, b.k = c.k and a.k = c.k: the third adds nothing."""
    cat = _Catalog()
    fs = []
    for t in "abc":
        cat.tables[t] = _Table(1000, {"k": 100})
        fs.append(Field(len(fs), t, T.INTEGER))
    scans = [L.Scan(t, ("k",), (f,)) for t, f in zip("abc", fs)]
    eq = lambda a, b: Call("eq", (ColRef(a), ColRef(b)), T.BOOLEAN)
    two = JoinGraph(scans, [eq(fs[0], fs[1]), eq(fs[1], fs[2])], Estimator(cat)).rows(-1)
    three = JoinGraph(scans, [eq(fs[0], fs[1]), eq(fs[1], fs[2]), eq(fs[0], fs[2])], Estimator(cat)).rows(-1)
    assert two == three == pytest.approx(1000**3 / 100**2)


# ---------------------------------------------------------------- memory
@pytest.fixture(scope="module")
def chain():
    """wide - fact - narrow: joining the filtered wide table first has the
    fewest rows (C_out's choice), but its intermediate result carries the
    wide table's 40 columns through all of fact's matching rows."""
    rng = np.random.default_rng(2)
    wide = {"k": np.arange(1000), "sel": np.arange(1000) % 10}
    wide.update({f"w{i}": rng.random(1000) for i in range(40)})
    tables = {
        "wide": pa.table(wide),
        "fact": pa.table({"wk": rng.integers(0, 1000, 100_000), "nk": rng.integers(0, 1000, 100_000)}),
        "narrow": pa.table({"k": np.arange(1000), "sel": np.arange(1000) % 2}),
    }
    return tables


CHAIN_SQL = (
    "SELECT "
    + ", ".join(f"sum(wide.w{i})" for i in range(40))
    + " FROM wide, fact, narrow WHERE fact.wk = wide.k AND fact.nk = narrow.k "
    "AND wide.sel = 0 AND narrow.sel = 0"
)


def _chain_con(tables, budget):
    con = glint.connect(device="cpu")
    for name, t in tables.items():
        con.register(name, t)
    if budget is not None:
        con.memory_budget_bytes = lambda: budget
    return con


def _first_join_tables(plan) -> set[str]:
    """Tables under the deepest inner join of the plan."""
    deepest, depth = None, -1

    def walk(node, d):
        nonlocal deepest, depth
        if isinstance(node, L.Join) and node.kind == "inner" and d > depth:
            deepest, depth = node, d
        for c in node.children:
            walk(c, d + 1)

    walk(plan, 0)
    out = set()
    deepest.transform_up(lambda n: out.add(n.table) or n if isinstance(n, L.Scan) else n)
    return out


def _step_bytes(graph, table, mask):
    """Largest estimated memory of one join of the plan for mask."""
    split = table[mask][1]
    if split is None:
        return 0.0
    a, b = split
    held = graph.input_bytes(a) + graph.input_bytes(b) + graph.rows(mask) * (graph.width(mask) + 16)
    return max(held, _step_bytes(graph, table, a), _step_bytes(graph, table, b))


def test_memory_budget_rejects_the_plan_that_does_not_fit(chain):
    duckdb = pytest.importorskip("duckdb")
    free = _chain_con(chain, None)
    assert _first_join_tables(free.sql(CHAIN_SQL).logical) == {"wide", "fact"}
    # a budget below the chosen plan's largest join, from the optimizer's own estimates
    leaves, preds = [], []
    node = free.sql(CHAIN_SQL).logical
    while not (isinstance(node, L.Join) and node.kind == "inner"):
        node = node.children[0]
    flatten_inner_joins(node, leaves, preds, selections=True)
    g = JoinGraph(leaves, preds, Estimator(free))
    unbounded = plan_table(g, JoinCost(g, None))
    worst = _step_bytes(g, unbounded, g.full)
    tight = plan_table(g, JoinCost(g, worst * 0.9))
    assert _step_bytes(g, tight, g.full) <= worst * 0.9, "another plan fits"
    # the connection's budget reaches the optimizer, which picks the plan that fits
    con = _chain_con(chain, int(worst * 0.9))
    res = con.sql(CHAIN_SQL)
    assert _first_join_tables(res.logical) == {"narrow", "fact"}
    duck = duckdb.connect()
    for name, t in chain.items():
        duck.register(name, t)
    assert compare_query_result(CHAIN_SQL, res.arrow(), duckdb_arrow(duck, CHAIN_SQL)) == []
    # with no plan that fits, the one that overshoots least still runs
    assert _chain_con(chain, 1).sql(CHAIN_SQL).arrow().num_rows == 1


def test_connection_memory_budget_is_positive():
    con = glint.connect(device="cpu")
    assert con.memory_budget_bytes() > 0
