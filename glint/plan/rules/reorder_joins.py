"""Join ordering: each tree of inner joins is flattened into its inputs and
conditions (a :class:`~glint.plan.join_graph.JoinGraph`) and rebuilt.

- Each connected component of the query graph is ordered without cross
  products: exactly, by dynamic programming over its connected subgraphs
  (DPccp, bushy trees), when it has at most ``DP_PAIR_BUDGET`` connected
  (subgraph, complement) pairs; otherwise by the cheaper of IKKBZ
  linearization + interval DP and greedy operator ordering
  (:mod:`glint.plan.join_enumerators`).
- Only when the query graph itself is disconnected (``FROM a, b WHERE a.x =
  1``) are the components joined by cross products, last, smallest first.
- Cost: C_out (the sum of the estimated intermediate rows), with a memory
  check: a join whose inputs and output are estimated beyond the device's
  memory budget loses to any plan that fits. The budget comes from the
  connection (``catalog.memory_budget_bytes()``) unless given.

>>> from glint.columnar import types as T
>>> from glint.plan.expr import Call, ColRef, Field
>>> a, b = Field(1, "a", T.INTEGER), Field(2, "b", T.INTEGER)
>>> j = L.Join(L.Scan("t", ("a",), (a,)), L.Scan("u", ("b",), (b,)), "inner",
...            Call("eq", (ColRef(a), ColRef(b)), T.BOOLEAN))
>>> isinstance(reorder_joins(j, None), L.Join)
True
"""

from __future__ import annotations

from glint.plan import logical as L
from glint.plan.cardinality import Estimator
from glint.plan.expr import conjoin
from glint.plan.join_enumerators import JoinCost, PairBudgetExceeded, dp_ccp, greedy_operator_ordering, linearized_dp
from glint.plan.join_graph import JoinGraph, bits, flatten_inner_joins, is_inner_join_tree

# The exact search costs about 10 us per connected pair in Python. 12,000 pairs
# (about 0.1 s) keep the old limit of 12 inputs for stars, the densest shape
# (a star of n inputs has (n-1) * 2^(n-2) pairs: 11,264 for 12), and admit
# chains and cycles of 25 inputs and more (2,600 and 7,500 pairs). DuckDB
# gives up exact enumeration at 10,000 pairs.
DP_PAIR_BUDGET = 12_000


def reorder_joins(plan: L.LogicalNode, catalog, memory_budget: float | None = None) -> L.LogicalNode:
    if catalog is None:
        return plan
    est = Estimator(catalog)
    needed = _referenced_fields(plan)
    budget = [memory_budget]

    def rule(node):
        if budget[0] is None:
            budget[0] = connection_memory_budget(catalog)
        return _reorder(node, est, budget[0], needed)

    return _top_down(plan, rule)


def connection_memory_budget(catalog) -> float | None:
    """The connection's memory budget in bytes (None: unbounded, for catalogs
    without ``memory_budget_bytes()``)."""
    fn = getattr(catalog, "memory_budget_bytes", None)
    return float(fn()) if fn is not None else None


def _top_down(node, rule):
    if is_inner_join_tree(node):
        return _below_tree(rule(node), rule)
    kids = node.children
    return node.with_children(tuple(_top_down(k, rule) for k in kids)) if kids else node


def _below_tree(node, rule):
    """The reordered tree's leaves are optimised in turn, not its joins again."""
    if is_inner_join_tree(node):
        return node.with_children(tuple(_below_tree(k, rule) for k in node.children))
    return _top_down(node, rule)


def _referenced_fields(plan: L.LogicalNode) -> set[int]:
    """Field ids some expression of the plan reads, and the plan's output: the
    columns that make up an intermediate result's row width."""
    out = {f.id for f in plan.schema}
    stack = [plan]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        out |= node.fields_read()
    return out


def order_component(graph: JoinGraph, cost: JoinCost, comp: int) -> dict:
    """Plan table (see join_enumerators) that covers the connected set `comp`."""
    if comp & (comp - 1) == 0:
        return {comp: ((0.0, 0.0), None)}
    # a vertex of degree d and its neighbours alone form d * 2^(d-1) pairs:
    # when that is over budget, the exact search is not even started
    d = max(bin(graph.adj[i] & comp).count("1") for i in bits(comp))
    if d * 2 ** (d - 1) <= DP_PAIR_BUDGET:
        try:
            return dp_ccp(graph, cost, comp, DP_PAIR_BUDGET)
        except PairBudgetExceeded:
            pass
    tables = [t for t in (linearized_dp(graph, cost, comp), greedy_operator_ordering(graph, cost, comp)) if comp in t]
    return min(tables, key=lambda t: t[comp][0])


def plan_table(graph: JoinGraph, cost: JoinCost) -> dict:
    """Plan table of the whole graph: each component ordered on its own, then
    the components joined by cross products, smallest first."""
    table = {}
    comps = graph.components()
    for comp in comps:
        table.update(order_component(graph, cost, comp))
    comps.sort(key=graph.rows)
    acc = comps[0]
    for comp in comps[1:]:
        table[acc | comp] = (cost.join(table, acc, comp), (acc, comp))
        acc |= comp
    return table


def _reorder(node: L.LogicalNode, est: Estimator, budget: float | None, needed: set[int]) -> L.LogicalNode:
    leaves, preds = [], []
    flatten_inner_joins(node, leaves, preds)
    if len(leaves) < 3:
        return node
    leaves, hoisted, graph, table = _place_semi_joins(leaves, preds, est, budget, needed)
    plan = _build(leaves, preds, graph, table)
    for j in hoisted:
        plan = j.with_children((plan, j.right))
    return plan


def _peel(leaf: L.LogicalNode) -> tuple[L.LogicalNode, list]:
    """A leaf's input below the SEMI / ANTI joins stacked on it, and those
    joins, innermost first."""
    chain = []
    while isinstance(leaf, L.Join) and leaf.kind in ("semi", "anti"):
        chain.append(leaf)
        leaf = leaf.left
    return leaf, chain[::-1]


def _place_semi_joins(leaves: list, preds: list, est: Estimator, budget: float | None, needed: set[int]):
    """Where the SEMI / ANTI joins on the graph's leaves (EXISTS, IN, NOT
    EXISTS decorrelated onto one input) run: on their leaf, as written, or
    after all the inner joins, whichever the estimates make cheaper. Such a
    join keeps or drops a row by the leaf's columns alone, which every row of
    the inner joins' result still holds, so either place gives the same rows.
    After the joins it sees their result's rows instead of the leaf's: TPC-H
    Q21's EXISTS / NOT EXISTS over lineitem then probe the few rows of one
    nation's suppliers instead of every late lineitem. Cost: the plan's
    (over-budget bytes, intermediate rows), plus the rows each SEMI / ANTI
    join reads on its left. Returns (leaves, hoisted joins, graph, plan
    table)."""

    def plan_of(ls):
        g = JoinGraph(ls, preds, est, needed)
        return g, plan_table(g, JoinCost(g, budget))

    def semi_rows(ls) -> float:
        return sum(est.rows(j.left) for leaf in ls for j in _peel(leaf)[1])

    graph, table = plan_of(leaves)
    over, work = table[graph.full][0]
    best = (over, work + semi_rows(leaves))
    hoisted: list = []
    for i, leaf in enumerate(leaves):
        core, chain = _peel(leaf)
        if not chain:
            continue
        trial = [*leaves[:i], core, *leaves[i + 1 :]]
        g, t = plan_of(trial)
        o, w = t[g.full][0]
        out = g.rows(g.full)
        cost = (o, w + semi_rows(trial) + out * (len(hoisted) + len(chain)))
        if cost < best:
            best, leaves, graph, table = cost, trial, g, t
            hoisted = hoisted + chain
    return leaves, hoisted, graph, table


def _build(leaves: list, preds: list, graph: JoinGraph, table: dict) -> L.LogicalNode:
    """The join tree of the plan table's best plan, with the conditions
    placed at the first join that covers their inputs."""
    used = [False] * len(preds)
    pred_sets = [{f.id for f in p.fields()} for p in preds]

    def build(mask):
        entry = table[mask][1]
        if entry is None:
            i = next(bits(mask))
            return leaves[i], {f.id for f in leaves[i].schema}
        a, b = entry
        (pa_, ia), (pb, ib) = build(a), build(b)
        if graph.rows(a) < graph.rows(b):  # larger input on the left (probe side)
            pa_, pb, ia, ib = pb, pa_, ib, ia
        covered = ia | ib
        return _join(pa_, pb, preds, pred_sets, used, covered), covered

    plan, _ = build(graph.full)
    left_over = [p for p, u in zip(preds, used) if not u]
    return L.Filter(plan, conjoin(left_over)) if left_over else plan


def _join(left, right, preds, pred_sets, used, covered):
    cond = []
    for n, (p, p_ids) in enumerate(zip(preds, pred_sets)):
        if not used[n] and p_ids <= covered:
            cond.append(p)
            used[n] = True
    return L.Join(left, right, "inner", conjoin(cond))
