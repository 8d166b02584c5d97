"""Comparisons (= <> < <= > >=, exact across DECIMAL scales, NaN equal to
NaN and above every number as DuckDB orders doubles, strings byte-wise),
three-valued AND / OR / NOT, IS [NOT] NULL, IS [NOT] DISTINCT FROM, BETWEEN,
IN lists and GROUPING().

>>> import torch
>>> x = Column(T.DECIMAL(4, 3), torch.tensor([2999, 3000]))
>>> compare_columns("lt", x, Column(T.INTEGER, torch.tensor([3, 3], dtype=torch.int32))).data.tolist()
[True, False]
>>> t = Column(T.BOOLEAN, torch.tensor([True, False]), torch.tensor([False, True]))
>>> or3(t, Column(T.BOOLEAN, torch.tensor([True, False]))).to_arrow().to_pylist()
[True, False]
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.functions.casts import scale_of
from glint.functions.registry import EXPRESSIONS, OPERATOR, Function
from glint.functions.strings import core as strings
from glint.functions.validity import and_valid
from glint.kernels import wide as W
from glint.plan import typing as ty
from glint.plan.expr import Call, Literal

_TORCH_CMP = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge}


def _compare(op):
    def run(e: Call, batch, evaluate) -> Column:
        a, b = e.args
        if a.type.is_string and isinstance(b, Literal) and b.value is not None:
            return compare_string_literal(op, evaluate(a, batch), b.value)
        if b.type.is_string and isinstance(a, Literal) and a.value is not None:
            return compare_string_literal(_FLIP[op], evaluate(b, batch), a.value)
        x, y = evaluate(a, batch), evaluate(b, batch)
        return compare_columns(op, x, y)

    return run


_FLIP = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def compare_columns(op: str, x: Column, y: Column) -> Column:
    if x.dtype.is_string and y.dtype.is_string:
        return strings.compare_columns(op, x, y)
    if x.is_wide or y.is_wide:
        xd, yd, sx, sy = x.data, y.data, scale_of(x.dtype), scale_of(y.dtype)
        if sx != sy:
            return Column(T.BOOLEAN, W.compare_scaled(op, xd, sx, yd, sy), and_valid(x.valid, y.valid))
        return Column(T.BOOLEAN, W.compare(op, xd, yd), and_valid(x.valid, y.valid))
    if x.data.is_floating_point() or y.data.is_floating_point():
        return Column(T.BOOLEAN, _float_compare(op, x.data.double(), y.data.double()), and_valid(x.valid, y.valid))
    sx, sy = scale_of(x.dtype), scale_of(y.dtype)
    if sx != sy:
        out = compare_scaled(op, x.data.long(), sx, y.data.long(), sy)
        return Column(T.BOOLEAN, out, and_valid(x.valid, y.valid))
    return Column(T.BOOLEAN, _TORCH_CMP[op](x.data, y.data), and_valid(x.valid, y.valid))


def _float_compare(op: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Comparisons where NaN equals NaN and is greater than any number (DuckDB's order)."""
    nx, ny = torch.isnan(x), torch.isnan(y)
    if op in ("eq", "ne"):
        eq = (nx & ny) | (x == y)
        return eq if op == "eq" else ~eq
    if op in ("gt", "ge"):
        return _float_compare({"gt": "lt", "ge": "le"}[op], y, x)
    lt = torch.where(nx, torch.zeros_like(nx), ny | (x < y))
    if op == "lt":
        return lt
    return lt | (nx & ny) | (x == y)


def compare_scaled(op: str, x: torch.Tensor, sx: int, y: torch.Tensor, sy: int) -> torch.Tensor:
    """x * 10**-sx  op  y * 10**-sy, exactly, without scaling either side up:
    with K = 10**(sy - sx) > 0, x*K > y  <=>  x > floor(y / K), and so on.

    >>> compare_scaled("gt", torch.tensor([3]), 0, torch.tensor([2999]), 3).tolist()
    [True]
    """
    if sx > sy:
        return compare_scaled(_FLIP[op], y, sy, x, sx)
    k = 10 ** (sy - sx)
    if k >= 2**63:  # |y| < k: floor is 0 or -1, ceiling 0 or 1
        fl = torch.where(y >= 0, torch.zeros_like(y), torch.full_like(y, -1))
        ce = (y > 0).to(y.dtype)
    else:
        fl = torch.div(y, k, rounding_mode="floor")
        ce = -torch.div(-y, k, rounding_mode="floor")
    if op == "lt":
        return x < ce
    if op == "le":
        return x <= fl
    if op == "gt":
        return x > fl
    if op == "ge":
        return x >= ce
    eq = (fl == ce) & (x == fl)
    return eq if op == "eq" else ~eq


def compare_string_literal(op: str, c: Column, s: str) -> Column:
    """Compare a VARCHAR column with a literal (byte order, as DuckDB)."""
    return strings.compare_literal(op, c, s)


# ---------------------------------------------------------------- logic, IS NULL, IN
def _and(e: Call, cols: list[Column]) -> Column:
    a, b = cols
    return and3(a, b)


def and3(a: Column, b: Column) -> Column:
    """Three-valued AND: FALSE wins over NULL."""
    if a.valid is None and b.valid is None:
        return Column(T.BOOLEAN, a.data & b.data)
    va, vb = a.validity(), b.validity()
    false_a, false_b = va & ~a.data, vb & ~b.data
    data = a.data & b.data
    valid = (va & vb) | false_a | false_b
    return Column(T.BOOLEAN, data & valid, valid)


def or3(a: Column, b: Column) -> Column:
    """Three-valued OR: TRUE wins over NULL."""
    if a.valid is None and b.valid is None:
        return Column(T.BOOLEAN, a.data | b.data)
    va, vb = a.validity(), b.validity()
    true_a, true_b = va & a.data, vb & b.data
    valid = (va & vb) | true_a | true_b
    return Column(T.BOOLEAN, true_a | true_b, valid)


def _or(e: Call, cols: list[Column]) -> Column:
    a, b = cols
    return or3(a, b)


def _not(e: Call, cols: list[Column]) -> Column:
    (a,) = cols
    return a.with_data(~a.data)


def _is_null(e: Call, cols: list[Column]) -> Column:
    (a,) = cols
    if a.valid is None:
        return Column(T.BOOLEAN, torch.zeros(len(a), dtype=torch.bool, device=a.device))
    return Column(T.BOOLEAN, ~a.valid)


def _distinct(negate: bool):
    def run(e: Call, cols: list[Column]) -> Column:
        x, y = cols
        eq = compare_columns("eq", x, y)
        vx, vy = x.validity(), y.validity()
        same = torch.where(vx & vy, eq.data, ~vx & ~vy)
        return Column(T.BOOLEAN, ~same if negate else same)

    return run


def _in_list(e: Call, batch, evaluate) -> Column:
    v, *items = e.args
    x = evaluate(v, batch)
    const = [i for i in items if isinstance(i, Literal)]
    result = None
    saw_null = False
    if x.dtype.is_string and len(const) == len(items):
        saw_null = any(i.value is None for i in items)
        hit = strings.in_literals(x, [i.value for i in items if i.value is not None])
        result = Column(T.BOOLEAN, hit, x.valid)
    elif (
        len(const) == len(items)
        and not x.dtype.is_string
        and not x.is_wide
        and all(i.value is None or -(2**63) <= i.value < 2**63 for i in items if isinstance(i.value, int))
    ):
        vals = [i.value for i in items if i.value is not None]
        saw_null = len(vals) < len(items)
        hit = (
            torch.isin(x.data, torch.tensor(vals, dtype=x.data.dtype, device=x.device))
            if vals
            else torch.zeros(len(x), dtype=torch.bool, device=x.device)
        )
        result = Column(T.BOOLEAN, hit, x.valid)
    else:
        for i in items:
            c = compare_columns("eq", x, evaluate(i, batch))
            result = c if result is None else or3(result, c)
    if saw_null:
        result = or3(result, Column.nulls(T.BOOLEAN, len(x), x.device))
    return result


def _grouping(e: Call, cols: list[Column]) -> Column:
    """GROUPING(...) from the grouping set's number: e.params[0] holds its value per set."""
    (s,) = cols
    table = torch.tensor(e.params[0], dtype=torch.int64, device=s.device)
    return Column(T.BIGINT, table[s.data.long()])


# ---------------------------------------------------------------- definitions
def _bind_compare(op: str):
    def bind(args, site):
        return ty.compare(op, args[0], args[1])

    return bind


def _bind_logic(op: str):
    what = f"{op.upper()} operand"

    def bind(args, site):
        a = ty.require_boolean(args[0], what)
        return Call(op, (a, ty.require_boolean(args[1], what)), T.BOOLEAN)

    return bind


def _bind_not(args, site):
    return Call("not", (ty.require_boolean(args[0], "NOT operand"),), T.BOOLEAN)


def _bind_is_null(args, site):
    return Call("is_null", (args[0],), T.BOOLEAN)


def _bind_distinct(fn: str):
    def bind(args, site):
        a, b = args[0], args[1]
        return Call(fn, ty.compare("eq", a, b).args, T.BOOLEAN)

    return bind


def _bind_between(args, site):
    v = args[0]
    lo, hi = args[1], args[2]
    return Call("and", (ty.compare("ge", v, lo), ty.compare("le", v, hi)), T.BOOLEAN)


def _bind_in_list(args, site):
    """x IN (a, b, ...): ``site.options["text"]`` is the IN's SQL text (for the type error)."""
    v, *items = args
    t = ty.common_of([v] + items, site.options["text"])
    if t.is_string:
        return Call("in_list", (ty.cast(v, t), *(ty.cast(i, t) for i in items)), T.BOOLEAN)
    return Call("in_list", tuple(ty.cast(e, t) for e in [v] + items), T.BOOLEAN)


_COMPARISONS = (
    ("eq", "=", "equal to"),
    ("ne", "<>", "not equal to"),
    ("lt", "<", "less than"),
    ("le", "<=", "less than or equal to"),
    ("gt", ">", "greater than"),
    ("ge", ">=", "greater than or equal to"),
)

FUNCTIONS = [
    *(
        Function(
            op,
            OPERATOR,
            "comparison",
            f"a {sql} b",
            f"Whether a is {what} b.",
            bind=_bind_compare(op),
            evaluate=_compare(op),
            takes=EXPRESSIONS,
            strict=True,
        )
        for op, sql, what in _COMPARISONS
    ),
    Function(
        "is_not_distinct",
        OPERATOR,
        "comparison",
        "a IS NOT DISTINCT FROM b, a <=> b, a IS TRUE",
        "Whether a equals b, NULL equal to NULL (never NULL).",
        bind=_bind_distinct("is_not_distinct"),
        evaluate=_distinct(False),
    ),
    Function(
        "is_distinct",
        OPERATOR,
        "comparison",
        "a IS DISTINCT FROM b",
        "Whether a differs from b, NULL equal to NULL (never NULL).",
        bind=_bind_distinct("is_distinct"),
        evaluate=_distinct(True),
    ),
    Function(
        "between",
        OPERATOR,
        "comparison",
        "x BETWEEN lo AND hi",
        "lo <= x AND x <= hi.",
        bind=_bind_between,
        rewrites_to=("and", "ge", "le"),
    ),
    Function(
        "in_list",
        OPERATOR,
        "comparison",
        "x IN (a, b, ...)",
        "Whether x equals one of the values (NULL when it does not and one is NULL).",
        bind=_bind_in_list,
        evaluate=_in_list,
        takes=EXPRESSIONS,
    ),
    Function(
        "and",
        OPERATOR,
        "logic",
        "a AND b",
        "Three-valued AND: FALSE wins over NULL.",
        bind=_bind_logic("and"),
        evaluate=_and,
    ),
    Function(
        "or", OPERATOR, "logic", "a OR b", "Three-valued OR: TRUE wins over NULL.", bind=_bind_logic("or"), evaluate=_or
    ),
    Function("not", OPERATOR, "logic", "NOT a", "Logical negation.", bind=_bind_not, evaluate=_not, strict=True),
    Function("is_null", OPERATOR, "logic", "x IS NULL", "Whether x is NULL.", bind=_bind_is_null, evaluate=_is_null),
    Function(
        "grouping",
        OPERATOR,
        "grouping",
        "GROUPING(group expression, ...)",
        "Which of the listed GROUP BY expressions a row's grouping set leaves out, as bits.",
        evaluate=_grouping,
        internal=True,
    ),
]
