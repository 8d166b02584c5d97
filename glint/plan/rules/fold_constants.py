"""Constant folding: evaluate expressions whose inputs are all constants, and
simplify AND/OR/NOT around constants.

The folded value is computed by the executor's own expression evaluator,
given by the caller as a :class:`ConstantEvaluator` (the engine passes
:data:`glint.functions.evaluate.CONSTANT_EVALUATOR`), so folding can never
disagree with execution; the same object names the strict functions (NULL
in any argument gives NULL), whose calls with a NULL argument fold to NULL
without evaluating the rest.

>>> from glint.columnar import types as T
>>> from glint.plan.expr import Call, Literal
>>> three = ConstantEvaluator(lambda e: 3, frozenset({"add"}))
>>> e = fold(Call("add", (Literal(1, T.INTEGER), Literal(2, T.INTEGER)), T.INTEGER), three)
>>> e.value, e.type
(3, INTEGER)
>>> fold(Call("add", (Literal(1, T.INTEGER), Literal(None, T.INTEGER)), T.INTEGER), three)
NULL
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from glint.columnar import types as T
from glint.errors import GlintError
from glint.plan import logical as L
from glint.plan.expr import Call, Case, ColRef, Expr, Literal, conjoin, conjuncts

_TRUE = Literal(True, T.BOOLEAN)
FOLD_VALUES_ROWS = 64  # longer VALUES lists are cast column by column when they run (glint.exec.values)
_FALSE = Literal(False, T.BOOLEAN)


@dataclass(frozen=True, slots=True)
class ConstantEvaluator:
    """What folding computes with: ``value`` gives a constant expression's
    value (raising GlintError when it cannot: an overflow, a bad cast);
    ``strict`` names the functions whose result is NULL whenever an argument
    is NULL."""

    value: Callable[[Expr], object]
    strict: frozenset[str] = frozenset()


def fold_constants(plan: L.LogicalNode, evaluator: ConstantEvaluator) -> L.LogicalNode:
    """Fold constants in every expression of the plan; drop always-true filters."""

    def fold_expr(e: Expr) -> Expr:
        return fold(e, evaluator)

    def rule(node):
        gone = _without_rows(node)
        if gone is not None:
            return gone
        if isinstance(node, L.Filter):
            p = fold_expr(node.predicate)
            if p == _TRUE:
                return node.child
            if isinstance(p, Literal) and not p.value:  # WHERE FALSE / WHERE NULL
                return _empty(node)
            return L.Filter(node.child, p)
        if isinstance(node, L.Limit) and node.limit == 0 and not isinstance(node.child, L.OneRow):
            return L.Limit(L.OneRow(), 0) if not node.schema else _empty(node)
        if isinstance(node, L.Values) and len(node.rows) > FOLD_VALUES_ROWS:
            return node
        if isinstance(node, (L.Project, L.Values, L.Aggregate, L.Sort, L.Window)):
            return node.map_expressions(fold_expr)
        if isinstance(node, L.Join) and node.condition is not None:
            if node.null_aware is None:
                c = fold_expr(node.condition)
                return L.Join(node.left, node.right, node.kind, None if c == _TRUE else c, node.mark, None)
            # an IN's own equality stays an equality (a NULL on either side makes the
            # mark NULL, which the join computes); its operands fold on their own
            na = tuple(fold_expr(x) for x in node.null_aware)
            parts = []
            for c in conjuncts(node.condition):
                if isinstance(c, Call) and c.args == tuple(node.null_aware):
                    parts.append(Call(c.fn, na, c.type))
                else:
                    parts.append(fold_expr(c))
            return L.Join(node.left, node.right, node.kind, conjoin(parts), node.mark, na)
        return node

    return plan.transform_up(rule)


def _empty(node: L.LogicalNode) -> L.LogicalNode:
    """No rows with node's columns, computing nothing (LIMIT 0, WHERE FALSE)."""
    return L.Limit(L.Project(L.OneRow(), tuple((f, Literal(None, f.type)) for f in node.schema)), 0)


def is_empty(node: L.LogicalNode) -> bool:
    """Whether the node makes no rows whatever the data (LIMIT 0, an empty VALUES)."""
    return (isinstance(node, L.Limit) and node.limit == 0) or (isinstance(node, L.Values) and not node.rows)


def _without_rows(node: L.LogicalNode) -> L.LogicalNode | None:
    """``node`` with its inputs' emptiness taken into account: an empty
    relation where an empty input makes it so, a UNION ALL without its empty
    side; None where nothing changes. (After predicate pushdown a UNION
    branch's filter may compare two constants: TPC-DS q4, q11 and q74 read a
    CTE of three channels, each reference keeping one of them.)

    >>> from glint.plan.expr import ColRef, Field
    >>> a, b, u = Field(1, "a", T.INTEGER), Field(2, "a", T.INTEGER), Field(3, "a", T.INTEGER)
    >>> t = L.Scan("t", ("a",), (a,))
    >>> nothing = _empty(L.Scan("s", ("a",), (b,)))
    >>> print(_without_rows(L.SetOp(t, nothing, "union", True, (u,))).explain())
    Project a#1 AS a#3
      Scan t [a#1]
    >>> is_empty(_without_rows(L.Join(t, nothing, "inner")))
    True
    >>> _without_rows(L.Join(t, nothing, "left")) is None  # the left rows stay
    True
    >>> _without_rows(L.Aggregate(nothing, (), ())) is None  # a global aggregate makes a row
    True
    """
    kids = node.children
    if not kids or is_empty(node) or not any(is_empty(k) for k in kids):
        return None
    if isinstance(node, (L.Filter, L.Project, L.Sort, L.Window, L.Limit)):
        return _empty(node)
    if isinstance(node, L.Aggregate):
        grouped = node.groups and (node.grouping is None or node.grouping.common())
        return _empty(node) if grouped else None
    if isinstance(node, L.Join):
        left, right = is_empty(node.left), is_empty(node.right)
        kind = node.kind
        if (
            kind == "inner"
            or (left and kind in ("left", "semi", "anti", "mark", "single"))
            or (right and kind in ("right", "semi"))
            or (left and right)
        ):
            return _empty(node)
        return None
    if isinstance(node, L.SetOp):
        left, right = is_empty(node.left), is_empty(node.right)
        if node.kind == "intersect" or (left and right) or (left and node.kind == "except"):
            return _empty(node)
        if node.kind == "union" and node.all:
            kept = node.right if left else node.left
            if all(f.type == k.type for f, k in zip(node.fields, kept.schema)):
                return L.Project(kept, tuple((f, ColRef(k)) for f, k in zip(node.fields, kept.schema)))
        return None
    return None


def fold(e: Expr, evaluator: ConstantEvaluator) -> Expr:
    """e with its constant parts folded."""
    return e.transform(lambda n: _fold_node(n, evaluator))


def _fold_node(e: Expr, evaluator: ConstantEvaluator) -> Expr:
    if (
        isinstance(e, Call)
        and e.fn in evaluator.strict
        and any(isinstance(a, Literal) and a.value is None for a in e.args)
    ):
        return Literal(None, e.type)  # the other operands need not be evaluated at all
    if isinstance(e, Call) and e.fn == "like_rows" and isinstance(e.args[1], Literal):
        # the pattern folded to a constant: the per-entry LIKE
        return Call("like", (e.args[0],), e.type, (e.args[1].value,) + e.params)
    if (
        isinstance(e, Call)
        and e.fn == "concat"
        and not e.params[0]
        and any(isinstance(a, Literal) and a.value is None for a in e.args)
    ):
        return Literal(None, e.type)
    if isinstance(e, Call):
        if e.fn == "and":
            a, b = e.args
            if a == _FALSE or b == _FALSE:
                return _FALSE
            if a == _TRUE:
                return b
            if b == _TRUE:
                return a
        if e.fn == "or":
            a, b = e.args
            if a == _TRUE or b == _TRUE:
                return _TRUE
            if a == _FALSE:
                return b
            if b == _FALSE:
                return a
        if e.fn == "coalesce":
            args = [a for a in e.args if not (isinstance(a, Literal) and a.value is None)]
            for i, a in enumerate(args):
                if isinstance(a, Literal):  # later arguments are never evaluated
                    args = args[: i + 1]
                    break
            if not args:
                return Literal(None, e.type)
            if len(args) == 1:
                return args[0]
            if len(args) != len(e.args):
                return Call("coalesce", tuple(args), e.type)
        if all(isinstance(a, Literal) for a in e.args) and e.args:
            if any(a.type.kind == "INTERVAL" for a in e.args):
                return e
            return _evaluate_constant(e, evaluator)
        if e.fn in _DATE_CMP:
            moved = move_constant(e)
            if moved is not e:
                return moved
            return date_against_timestamp(e)
    if isinstance(e, Case):
        whens = [(c, v) for c, v in e.whens if c != _FALSE and not (isinstance(c, Literal) and c.value is None)]
        if whens and whens[0][0] == _TRUE:
            return whens[0][1]
        if not whens:
            return e.default
        if len(whens) != len(e.whens):
            return Case(tuple(whens), e.default, e.type)
    return e


_DATE_CMP = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}  # op -> op with sides swapped
_MICROS_PER_DAY = 86_400_000_000
_DATE_LIMIT = 2**31 - 2


_INT_RANGE = {"INTEGER": (-(2**31), 2**31 - 1), "BIGINT": (-(2**63), 2**63 - 1)}


def move_constant(e: Call) -> Expr:
    """``x + c1 op c2`` as ``x op c2 - c1`` (also ``x - c1`` and ``c1 - x``, the
    constant on either side) for INTEGER / BIGINT, as DuckDB's optimizer does:
    the column is compared bare (so scans prune by it) and ``x - 1`` is never
    computed, so it cannot overflow. Left alone when the new constant does not
    fit the type.

    >>> from glint.plan.expr import ColRef, Field
    >>> x = ColRef(Field(1, "x", T.INTEGER))
    >>> one, zero = Literal(1, T.INTEGER), Literal(0, T.INTEGER)
    >>> move_constant(Call("ne", (zero, Call("sub", (x, one), T.INTEGER)), T.BOOLEAN))
    (x#1 <> 1)
    >>> move_constant(Call("lt", (Call("sub", (Literal(10, T.INTEGER), x), T.INTEGER), one), T.BOOLEAN))
    (x#1 > 9)
    >>> big = Literal(2**31 - 1, T.INTEGER)
    >>> move_constant(Call("eq", (Call("add", (x, one), T.INTEGER), Literal(-2**31, T.INTEGER)), T.BOOLEAN))
    ((x#1 + 1) = -2147483648)
    """
    a, b = e.args
    op = e.fn
    if isinstance(a, Literal) and not isinstance(b, Literal):
        a, b, op = b, a, _DATE_CMP[op]
    if not (
        isinstance(a, Call)
        and a.fn in ("add", "sub")
        and isinstance(b, Literal)
        and b.value is not None
        and a.type.kind in _INT_RANGE
        and b.type == a.type
        and all(x.type == a.type for x in a.args)
    ):
        return e
    x, y = a.args
    if isinstance(y, Literal) and not isinstance(x, Literal) and y.value is not None:
        c = b.value - y.value if a.fn == "add" else b.value + y.value  # x + y op b / x - y op b
        col = x
    elif isinstance(x, Literal) and not isinstance(y, Literal) and x.value is not None:
        if a.fn == "add":
            c, col = b.value - x.value, y  # x + y op b, x constant
        else:
            c, col, op = x.value - b.value, y, _DATE_CMP[op]  # x - y op b: y op' x - b
    else:
        return e
    lo, hi = _INT_RANGE[a.type.kind]
    if not lo <= c <= hi:
        return e
    return Call(op, (col, Literal(c, a.type)), e.type)


def date_against_timestamp(e: Call) -> Expr:
    """``CAST(date AS TIMESTAMP) op TIMESTAMP constant`` as the exactly
    equivalent comparison of the DATE with a DATE constant (and two DATEs cast
    to TIMESTAMP compared as DATEs), so that DATE filters such as TPC-H's
    ``l_shipdate <= DATE '1998-12-01' - INTERVAL 90 DAY`` stay int32 day
    comparisons that scans can prune by. A time after midnight moves the
    bound: ``d < TIMESTAMP '1995-01-01 12:00'`` is ``d <= DATE '1995-01-01'``.

    >>> from glint.plan.expr import ColRef, Field
    >>> d = ColRef(Field(1, "d", T.DATE))
    >>> noon = Literal(788961600000000, T.TIMESTAMP)            # 1995-01-01 12:00
    >>> date_against_timestamp(Call("lt", (Call("cast", (d,), T.TIMESTAMP), noon), T.BOOLEAN))
    (d#1 <= DATE '1995-01-01')
    >>> date_against_timestamp(Call("ge", (noon, Call("cast", (d,), T.TIMESTAMP)), T.BOOLEAN))
    (d#1 <= DATE '1995-01-01')
    """
    a, b = e.args
    op = e.fn
    if _is_date_cast(a) and _is_date_cast(b):
        return Call(op, (a.args[0], b.args[0]), e.type)
    if isinstance(a, Literal) and _is_date_cast(b):
        a, b, op = b, a, _DATE_CMP[op]
    if not (_is_date_cast(a) and isinstance(b, Literal) and b.type.kind == "TIMESTAMP" and isinstance(b.value, int)):
        return e
    days, rest = divmod(b.value, _MICROS_PER_DAY)
    if abs(days) + 1 > _DATE_LIMIT:
        return e
    col = a.args[0]
    if rest:
        if op in ("eq", "ne"):
            return e  # never equal: kept, so that a NULL date still gives NULL
        # strictly between two midnights: d < ts and d <= ts mean d <= day, d > ts and d >= ts mean d > day
        op = "le" if op in ("lt", "le") else "gt"
    return Call(op, (col, Literal(days, T.DATE)), e.type)


def _is_date_cast(x: Expr) -> bool:
    return isinstance(x, Call) and x.fn == "cast" and x.type.kind == "TIMESTAMP" and x.args[0].type.kind == "DATE"


def _evaluate_constant(e: Expr, evaluator: ConstantEvaluator) -> Expr:
    try:
        value = evaluator.value(e)
    except GlintError:
        return e  # an error (overflow, bad cast) is raised when the query runs, if the row exists
    return Literal(value, e.type)
