"""Join-order search over a :class:`~glint.plan.join_graph.JoinGraph`.

Every algorithm here joins only inputs that a predicate connects: a cross
product is never considered inside a connected component (the rule joins the
components together afterwards). Each fills a *plan table*: bitmask of leaves
-> (cost, split), where split is None for a leaf and (left mask, right mask)
for a join; the cost is the pair (bytes over the memory budget, work):

- *work* is C_out, the sum of the estimated rows of every intermediate result,
  plus the pairs a join without an equality key enumerates (a nested loop);
- *bytes over budget*: each join holds its two inputs (unless an input is a
  table's resident columns) and its output (rows x row width, plus the row ids
  of the matched pairs) at once; what exceeds the device memory budget is
  summed. Costs compare as pairs, so a plan that fits always beats one that
  does not, and among plans that do not fit the one that overshoots least
  wins. (What a bushy plan keeps of one side while it computes the other is
  not counted.)

Algorithms:

- :func:`dp_ccp`: the exact bushy optimum by dynamic programming over the
  connected subgraph / complement pairs (Moerkotte & Neumann, "Analysis of
  two existing and one new dynamic programming algorithm for the generation
  of optimal bushy join trees without cross products", VLDB 2006), given a
  budget of pairs: a star of n inputs has (n-1) 2^(n-2) of them;
- :func:`linearized_dp`: IKKBZ's optimal left-deep order of a spanning tree,
  then dynamic programming over the intervals of that order, which may still
  build bushy trees (Neumann & Radke, "Adaptive optimization of very large
  join queries", SIGMOD 2018): O(n^3);
- :func:`greedy_operator_ordering`: GOO (Fegaras 1998), always join the two
  connected sets with the smallest result: O(n^3).

>>> class Toy:                  # a chain 0 - 1 - 2 where 1 - 2 is very selective
...     n, full = 3, 0b111
...     def rows(self, m): return {1: 100, 2: 100, 4: 100, 3: 1000, 6: 10, 7: 100}[m]
...     def width(self, m): return 8 * bin(m).count("1")
...     def bytes(self, m): return self.rows(m) * self.width(m)
...     def input_bytes(self, m): return self.bytes(m)
...     def neighbors(self, m): return {1: 2, 2: 5, 4: 2, 3: 4, 6: 1, 5: 2, 7: 0}[m]
...     def connected(self, a, b): return bool(self.neighbors(a) & b)
...     def has_equi(self, a, b): return True
...     def is_connected(self, m): return m != 5
>>> table = dp_ccp(Toy(), JoinCost(Toy()), 0b111, 100)
>>> table[0b111][1], table[0b111][0]     # (0 with (1 join 2)); work = 10 + 100
((1, 6), (0.0, 110.0))
>>> greedy_operator_ordering(Toy(), JoinCost(Toy()), 0b111)[0b111][1]
(1, 6)
"""

from __future__ import annotations

from glint.plan.join_graph import PAIR_ID_BYTES, bits

ZERO = (0.0, 0.0)


class JoinCost:
    """Cost of one join step (see the module docstring); `budget` in bytes or None."""

    def __init__(self, graph, budget: float | None = None):
        self.graph = graph
        self.budget = budget

    def step(self, m1: int, m2: int) -> tuple[float, float]:
        g = self.graph
        m = m1 | m2
        out = g.rows(m)
        work = out
        if not g.has_equi(m1, m2):
            work += g.rows(m1) * g.rows(m2)  # a nested loop visits every pair
        if self.budget is None:
            return 0.0, work
        held = g.input_bytes(m1) + g.input_bytes(m2) + out * (g.width(m) + PAIR_ID_BYTES)
        return max(0.0, held - self.budget), work

    def join(self, table: dict, m1: int, m2: int) -> tuple[float, float]:
        """Cost of the plan that joins the table's plans for m1 and m2."""
        (o1, w1), (o2, w2) = table[m1][0], table[m2][0]
        so, sw = self.step(m1, m2)
        return o1 + o2 + so, w1 + w2 + sw


def _leaf_table(comp: int) -> dict:
    return {1 << i: (ZERO, None) for i in bits(comp)}


def _subsets(n: int):
    """Non-empty subsets of the bitmask n, in increasing order."""
    s = (0 - n) & n
    while s:
        yield s
        s = (s - n) & n


class PairBudgetExceeded(Exception):
    """dp_ccp gave up: the graph has more connected pairs than it may enumerate."""


def dp_ccp(graph, cost: JoinCost, comp: int, max_pairs: int) -> dict:
    """Optimal bushy plan of the connected component `comp` (a bitmask).
    Raises PairBudgetExceeded after `max_pairs` csg-cmp pairs."""
    table = _leaf_table(comp)
    pairs = 0

    def emit_pair(s1, s2):
        nonlocal pairs
        pairs += 1
        if pairs > max_pairs:
            raise PairBudgetExceeded
        c = cost.join(table, s1, s2)
        m = s1 | s2
        cur = table.get(m)
        if cur is None or c < cur[0]:
            table[m] = (c, (s1, s2))

    def emit_csg(s1):
        low = s1 & -s1
        x = s1 | ((low << 1) - 1)  # s1 and every leaf numbered below its lowest
        n = graph.neighbors(s1) & ~x & comp
        for i in sorted(bits(n), reverse=True):
            v = 1 << i
            emit_pair(s1, v)
            enumerate_cmp(s1, v, x | (((v << 1) - 1) & n))

    def enumerate_csg(s, x):
        n = graph.neighbors(s) & ~x & comp
        if not n:
            return
        for sub in _subsets(n):
            emit_csg(s | sub)
        for sub in _subsets(n):
            enumerate_csg(s | sub, x | n)

    def enumerate_cmp(s1, s2, x):
        n = graph.neighbors(s2) & ~x & comp
        if not n:
            return
        for sub in _subsets(n):
            emit_pair(s1, s2 | sub)
        for sub in _subsets(n):
            enumerate_cmp(s1, s2 | sub, x | n)

    for i in sorted(bits(comp), reverse=True):
        v = 1 << i
        emit_csg(v)
        enumerate_csg(v, (v << 1) - 1)
    return table


# ---------------------------------------------------------------- IKKBZ
def _spanning_tree(graph, comp: int) -> list[list[int]]:
    """Adjacency lists of a minimum spanning tree of `comp`, weighted by each
    edge's selectivity (the most selective connections are kept)."""
    edges = []
    for i in bits(comp):
        for j in bits(graph.adj[i] & comp):
            if i < j:
                sel = graph.rows((1 << i) | (1 << j)) / (graph.rows(1 << i) * graph.rows(1 << j))
                edges.append((sel, i, j))
    edges.sort()
    root = {i: i for i in bits(comp)}

    def find(x):
        while root[x] != x:
            x = root[x]
        return x

    tree = {i: [] for i in bits(comp)}
    for _, i, j in edges:
        ri, rj = find(i), find(j)
        if ri != rj:
            root[ri] = rj
            tree[i].append(j)
            tree[j].append(i)
    return tree


def _ikkbz_order(graph, tree, root: int) -> list[int]:
    """IKKBZ: the left-deep order of the tree rooted at `root` that is optimal
    for C_out under the tree's selectivities (rank = (T - 1) / C)."""

    def factor(parent, v):
        # how much joining v multiplies the rows of a set that holds its parent
        pm = 1 << parent
        return graph.rows(pm | (1 << v)) / graph.rows(pm)

    def chain(v, parent):
        """Normalized chain of modules (leaves, T, C) for v's subtree, v first."""
        t = factor(parent, v)
        mods = [([v], t, t)] + _merge([chain(c, v) for c in tree[v] if c != parent])
        while len(mods) > 1 and _rank(mods[0]) > _rank(mods[1]):
            (r1, t1, c1), (r2, t2, c2) = mods[0], mods[1]
            mods[0:2] = [(r1 + r2, t1 * t2, c1 + t1 * c2)]
        return mods

    order = [root]
    for leaves, _, _ in _merge([chain(c, root) for c in tree[root]]):
        order += leaves
    return order


def _rank(mod) -> float:
    _, t, c = mod
    return (t - 1.0) / c if c > 0 else 0.0


def _merge(chains):
    # each chain is in ascending rank already; a stable sort merges them
    return sorted((m for ch in chains for m in ch), key=_rank)


def linearized_dp(graph, cost: JoinCost, comp: int) -> dict:
    """Best plan whose every join combines two adjacent intervals of the
    IKKBZ order (of the root whose left-deep plan is cheapest)."""
    tree = _spanning_tree(graph, comp)
    order, best = None, None
    for root in bits(comp):
        o = _ikkbz_order(graph, tree, root)
        table = _leaf_table(comp)
        m = 1 << o[0]
        for v in o[1:]:
            table[m | 1 << v] = (cost.join(table, m, 1 << v), (m, 1 << v))
            m |= 1 << v
        if best is None or table[m][0] < best:
            order, best = o, table[m][0]
    k = len(order)
    prefix = [0]
    for v in order:
        prefix.append(prefix[-1] | 1 << v)
    table = _leaf_table(comp)
    for length in range(2, k + 1):
        for i in range(k - length + 1):
            j = i + length
            m = prefix[j] & ~prefix[i]
            if not graph.is_connected(m):
                continue
            choice = None
            for s in range(i + 1, j):
                left, right = prefix[s] & ~prefix[i], prefix[j] & ~prefix[s]
                if left in table and right in table and graph.connected(left, right):
                    c = cost.join(table, left, right)
                    if choice is None or c < choice[0]:
                        choice = (c, (left, right))
            if choice is not None:
                table[m] = choice
    return table


def greedy_operator_ordering(graph, cost: JoinCost, comp: int) -> dict:
    """GOO: repeatedly join the two connected sets whose join fits the memory
    budget best and has the fewest estimated rows."""
    table = _leaf_table(comp)
    parts = [1 << i for i in bits(comp)]
    while len(parts) > 1:
        choice = None
        for x in range(len(parts)):
            for y in range(x + 1, len(parts)):
                a, b = parts[x], parts[y]
                if not graph.connected(a, b):
                    continue
                key = (cost.step(a, b)[0], graph.rows(a | b))
                if choice is None or key < choice[0]:
                    choice = (key, x, y)
        if choice is None:
            break  # not connected: the caller joins components
        _, x, y = choice
        a, b = parts[x], parts[y]
        table[a | b] = (cost.join(table, a, b), (a, b))
        parts = [p for k, p in enumerate(parts) if k not in (x, y)] + [a | b]
    return table
