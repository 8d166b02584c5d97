"""Pull conjuncts shared by every branch of an OR out in front of it:
(A AND B) OR (A AND C)  ->  A AND (B OR C). This exposes join keys hidden in
disjunctions (TPC-H Q19) to predicate pushdown and hash joins.

Then, for a filter's OR over the columns of several tables, derive what it
implies about each table alone: where every branch has conjuncts on table R
only, the OR of those parts (one per branch) is implied by the whole and is
added beside it, and predicate pushdown takes it down to R's scan. TPC-H
Q19's three branches of brand, container, size and quantity ranges become
``(p_brand = 'Brand#12' AND p_container IN (...) AND p_size <= 5) OR ...`` on
part and ``(l_quantity >= 1 AND l_quantity <= 11) OR ...`` on lineitem, so
the join sees a fraction of both. The whole OR stays where it was, so the
result is the same: a row passes the filter only where some branch is TRUE,
and then that branch's part on R is TRUE too (glint has no volatile
functions whose repetition could differ).

>>> from glint.columnar import types as T
>>> from glint.plan.expr import Call, ColRef, Field
>>> a, b, c = (ColRef(Field(i, n, T.BOOLEAN)) for i, n in enumerate("abc"))
>>> AND = lambda x, y: Call("and", (x, y), T.BOOLEAN)
>>> factor_expr(Call("or", (AND(a, b), AND(a, c)), T.BOOLEAN))
(a#0 AND (b#1 OR c#2))
"""

from __future__ import annotations

from glint.columnar import types as T
from glint.plan import logical as L
from glint.plan.cardinality import Estimator
from glint.plan.expr import Call, Expr, conjoin, conjuncts


def factor_disjunctions(plan: L.LogicalNode, catalog=None) -> L.LogicalNode:
    """``catalog``: where the derived conjuncts' selectivities are estimated
    from (None: nothing is derived)."""
    estimator = Estimator(catalog) if catalog is not None else None

    def rule(node):
        if isinstance(node, L.Filter):
            predicate = factor_expr(node.predicate)
            derived = derive_per_table(predicate, node.child, estimator) if estimator is not None else []
            return L.Filter(node.child, conjoin(conjuncts(predicate) + derived) if derived else predicate)
        if isinstance(node, L.Join) and node.condition is not None:
            return L.Join(node.left, node.right, node.kind, factor_expr(node.condition), node.mark, node.null_aware)
        return node

    return plan.transform_up(rule)


def factor_expr(e: Expr) -> Expr:
    return e.transform(_factor)


def _disjuncts(e: Expr) -> list[Expr]:
    if isinstance(e, Call) and e.fn == "or":
        return [d for a in e.args for d in _disjuncts(a)]
    return [e]


def _factor(e: Expr) -> Expr:
    if not (isinstance(e, Call) and e.fn == "or"):
        return e
    branches = [conjuncts(d) for d in _disjuncts(e)]
    common = [c for c in branches[0] if all(c in b for b in branches[1:])]
    if not common:
        return e
    rests = [[c for c in b if c not in common] for b in branches]
    if any(not r for r in rests):  # one branch is just the common part: the OR is implied
        return conjoin(common)
    rest = conjoin(rests[0])
    for r in rests[1:]:
        rest = Call("or", (rest, conjoin(r)), T.BOOLEAN)
    return conjoin(common + [rest])


def _tables(node: L.LogicalNode) -> tuple[dict[int, int], list[L.Scan]]:
    """Each field a scan under ``node`` produces -> that scan's position; the scans."""
    out: dict[int, int] = {}
    scans: list[L.Scan] = []

    def visit(n):
        if isinstance(n, L.Scan):
            scans.append(n)
            for f in n.fields:
                out[f.id] = len(scans) - 1
        for c in n.children:
            visit(c)

    visit(node)
    return out, scans


# the most a derived conjunct may keep of its table's rows (by estimate): one that keeps more
# costs its evaluation over the whole table and saves the join little (Q19's quantity ranges
# keep about 60% of lineitem; its brands and containers under 1% of part)
DERIVED_SELECTIVITY = 0.2


def derive_per_table(predicate: Expr, child: L.LogicalNode, estimator: Estimator) -> list[Expr]:
    """Conjuncts implied by the ORs among ``predicate``'s conjuncts, one per
    table that every branch of an OR constrains alone and that the estimate
    says keeps at most DERIVED_SELECTIVITY of the table (see the module's
    docstring); none for an OR over one table (it is its own)."""
    ors = [c for c in conjuncts(predicate) if isinstance(c, Call) and c.fn == "or"]
    if not ors:
        return []
    table_of, scans = _tables(child)
    have = set(conjuncts(predicate))
    out: list[Expr] = []
    for e in ors:
        branches = [conjuncts(d) for d in _disjuncts(e)]
        per_branch = []  # per branch: table -> its conjuncts on that table alone
        for b in branches:
            parts: dict[int, list[Expr]] = {}
            for c in b:
                ts = {table_of.get(f.id) for f in c.fields()}
                if len(ts) == 1 and None not in ts:
                    parts.setdefault(ts.pop(), []).append(c)
            per_branch.append(parts)
        every = set(per_branch[0]).intersection(*per_branch[1:])
        if len(every) == 1 and all(sum(map(len, p.values())) == len(b) for p, b in zip(per_branch, branches)):
            continue  # the whole OR is on one table: pushdown takes it as it is
        for t in sorted(every):
            derived = conjoin(per_branch[0][t])
            for p in per_branch[1:]:
                derived = Call("or", (derived, conjoin(p[t])), T.BOOLEAN)
            rows = estimator.rows(scans[t])
            if derived not in have and estimator.selectivity(derived, rows) <= DERIVED_SELECTIVITY:
                have.add(derived)
                out.append(derived)
    return out
