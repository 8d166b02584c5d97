"""Binding of window function calls (``fn(...) OVER (...)``) and their frames.

A window call is bound against the rows the window sees: the FROM rows, or
after GROUP BY the groups (its arguments may then hold aggregates, which are
columns of the Aggregate below). Named windows (``WINDOW w AS (...)``) are
merged into the calls that use them. Frames follow DuckDB's defaults: with an
ORDER BY, ``RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`` (the peers of
the current row included); without one, every row of the partition.

>>> import sqlglot
>>> w = sqlglot.parse_one("SELECT sum(a) OVER (ROWS 2 PRECEDING)", read="duckdb").expressions[0]
>>> bind_frame(w.args["spec"], (), None)
ROWS BETWEEN 2 PRECEDING AND CURRENT ROW
"""

from __future__ import annotations

import math
from fractions import Fraction

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, ExecutionError, NotSupported, TypeMismatch
from glint.functions.builtins import BUILTINS
from glint.functions.registry import AGGREGATE, WINDOW, Function
from glint.plan import logical as L
from glint.plan import typing as ty
from glint.plan.expr import Expr, Literal
from glint.sql.bind_agg import aggregate_arguments, aggregate_function
from glint.sql.bind_expr import bind, bind_call
from glint.sql.folding import fold_expr
from glint.sql.function_calls import WINDOW_NODES, argument_nodes

_EXCLUDE = {"": "", "NO OTHERS": "", "CURRENT ROW": "current_row", "GROUP": "group", "TIES": "ties"}


def has_window(node: exp.Expression) -> bool:
    """Whether an expression holds a window call outside its subqueries."""
    return bool(window_calls(node))


def window_calls(node: exp.Expression) -> list[exp.Window]:
    """The window calls in an expression, not descending into subqueries.

    >>> import sqlglot
    >>> e = sqlglot.parse_one("SELECT a - lag(a) OVER (ORDER BY b) + (SELECT rank() OVER () FROM t)").expressions[0]
    >>> [w.sql() for w in window_calls(e)]
    ['LAG(a) OVER (ORDER BY b)']
    """
    out = []

    def walk(n):
        if isinstance(n, (exp.Subquery, exp.Select, exp.Exists)):
            return
        if isinstance(n, exp.In) and n.args.get("query"):
            walk(n.this)
            return
        if isinstance(n, exp.Window):
            out.append(n)
            return
        for child in n.iter_expressions():
            walk(child)

    walk(node)
    return out


def named_windows(sel: exp.Select) -> dict[str, exp.Window]:
    named = {}
    for w in sel.args.get("windows") or []:
        name = w.this.name
        if name in named:
            raise BinderError(f'window "{name}" is defined twice')
        named[name] = w
    return named


def bind_window(node: exp.Window, ctx, named: dict[str, exp.Window]) -> L.WindowFunc:
    """A window call bound against ``ctx`` (the FROM scope, or the groups and
    aggregates of an aggregated query)."""
    partition, order, spec = node.args.get("partition_by"), node.args.get("order"), node.args.get("spec")
    ref = node.args.get("alias")
    if ref is not None:
        base = named.get(ref.name)
        if base is None:
            raise BinderError(f'window "{ref.name}" is not defined')
        if partition and base.args.get("partition_by"):
            raise BinderError(f'cannot override PARTITION BY clause of window "{ref.name}"')
        if order and base.args.get("order"):
            raise BinderError(f'cannot override ORDER BY clause of window "{ref.name}"')
        partition = partition or base.args.get("partition_by")
        order = order or base.args.get("order")
        spec = spec or base.args.get("spec")
    for part in [*(partition or []), *(order.expressions if order else []), spec]:
        if part is not None and has_window(part):
            raise BinderError("window functions are not allowed in window definitions")
    parts = tuple(bind(p, ctx) for p in partition or [])
    keys = tuple(
        L.SortKey(bind(o.this, ctx), bool(o.args.get("desc")), bool(o.args.get("nulls_first")))
        for o in (order.expressions if order else [])
    )
    f = node.this
    if isinstance(f, exp.IgnoreNulls) and isinstance(f.this, exp.AnyValue):
        f = f.this  # DuckDB's ANY_VALUE, which skips NULLs anyway
    ignore_nulls = isinstance(f, exp.IgnoreNulls)
    if isinstance(f, (exp.IgnoreNulls, exp.RespectNulls)):
        f = f.this
        function = _window_function(f)
        if function is None or not function.ignore_nulls:
            raise BinderError("RESPECT/IGNORE NULLS is not supported for windowed aggregates")
    fn, args, out_type, params = _bind_function(f, ctx)
    frame = bind_frame(spec, keys, ctx) if fn in L.FRAMED_FUNCS else L.DEFAULT_FRAME
    return L.WindowFunc(fn, args, parts, keys, frame, out_type, ignore_nulls, params)


def _window_function(f: exp.Expression) -> Function | None:
    """The registry's window function (or aggregate with a window form) a node calls."""
    entry = WINDOW_NODES.get(type(f))
    if entry is None:
        name = aggregate_function(f)
        f = BUILTINS.lookup(name, AGGREGATE) if name is not None else None
        return f if f is not None and f.window_bind is not None else None
    return BUILTINS.lookup(entry[0], WINDOW) or BUILTINS.lookup(entry[0], AGGREGATE)


def _bind_function(f: exp.Expression, ctx) -> tuple[str, tuple[Expr, ...], T.DataType, tuple]:
    if isinstance(f, exp.Filter):
        raise NotSupported("FILTER in window aggregates")
    if has_window(f):
        raise BinderError("window function calls cannot be nested")
    function = _window_function(f)
    if function is None:
        name = f.sql(dialect="duckdb").split("(")[0]
        raise NotSupported(f"window function {name}")
    if type(f) not in WINDOW_NODES:  # an aggregate that runs from its evaluator
        return _bind_aggregate(f, function, ctx)
    name, keys = WINDOW_NODES[type(f)]
    if isinstance(f, exp.NthValue) and f.args.get("from_first") is False:
        raise NotSupported("NTH_VALUE ... FROM LAST")
    args = argument_nodes(f, keys)
    if function.kind == WINDOW:
        return (*bind_call(function.bind, args, ctx, name.upper()), ())
    if isinstance(f.this, exp.Distinct):
        raise NotSupported(f"DISTINCT in window aggregates ({name.upper()}(DISTINCT ...) OVER)")
    if name == "count" and isinstance(f.this, exp.Star):
        args = []
    return (*bind_call(function.window_bind, args, ctx, name.upper()), ())


def _bind_aggregate(f: exp.Expression, function: Function, ctx):
    """An aggregate's window form bound by the aggregate's own rule:
    (function, arguments, type, constant arguments)."""
    name = function.name.upper()
    args = aggregate_arguments(f)
    if args and isinstance(args[0], exp.Distinct):
        raise NotSupported(f"DISTINCT in window aggregates ({name}(DISTINCT ...) OVER)")
    if args and isinstance(args[0], exp.Order) or isinstance(f, exp.WithinGroup):
        raise NotSupported(f"ORDER BY inside a window aggregate ({name}(... ORDER BY ...) OVER)")
    call = bind_call(function.window_bind, args, ctx, name)
    return call.fn, call.args, call.type, call.params


def bind_frame(spec: exp.WindowSpec | None, keys: tuple, ctx) -> L.Frame:
    if spec is None:
        return L.DEFAULT_FRAME
    kind = (spec.args.get("kind") or "").lower()
    exclude = spec.args.get("exclude")
    exclude = _EXCLUDE.get(exclude.name.upper() if isinstance(exclude, exp.Expression) else str(exclude or "").upper())
    if exclude is None:
        raise NotSupported(f"EXCLUDE {spec.args.get('exclude')}")
    if kind not in ("rows", "range", "groups"):
        raise NotSupported(f"{kind.upper()} window frames")  # never: the parser knows no others
    start = _bound(spec.args.get("start"), spec.args.get("start_side"), ctx, kind, keys)
    end = (
        _bound(spec.args.get("end"), spec.args.get("end_side"), ctx, kind, keys)
        if spec.args.get("end") is not None
        else L.FrameBound("current")
    )
    if start.kind == "unbounded" and (spec.args.get("start_side") or "").upper() == "FOLLOWING":
        raise BinderError("frame start cannot be UNBOUNDED FOLLOWING")
    if end.kind == "unbounded" and (spec.args.get("end_side") or "").upper() == "PRECEDING":
        raise BinderError("frame end cannot be UNBOUNDED PRECEDING")
    if start.kind == "current" and end.kind == "preceding":
        raise BinderError("frame starting from current row cannot have preceding rows")
    if start.kind == "following" and end.kind in ("current", "preceding"):
        raise BinderError(
            "frame starting from following row cannot have preceding rows"
            if end.kind == "preceding"
            else "frame starting from following row cannot end with current row"
        )
    return L.Frame(kind, start, end, exclude)


def _bound(value, side, ctx, kind: str, keys) -> L.FrameBound:
    if isinstance(value, str):
        v = value.upper()
        if v == "UNBOUNDED":
            return L.FrameBound("unbounded")
        if v == "CURRENT ROW":
            return L.FrameBound("current")
        raise NotSupported(f"window frame bound {value}")
    side = (side or "").lower()
    off = (
        ty.literal_number(value.this)
        if isinstance(value, exp.Literal) and not value.is_string
        else fold_expr(bind(value, ctx))
    )
    if kind == "range":
        if len(keys) != 1:
            raise BinderError("RANGE frames must have only one ORDER BY expression")
        return L.FrameBound(side, _range_offset(off, keys[0].expr.type, side))
    if off.type.is_numeric:
        off = fold_expr(ty.cast(off, T.BIGINT))  # as DuckDB: 1.5 rows is 2
    if not (isinstance(off, Literal) and isinstance(off.value, int)):
        raise NotSupported("window frame offsets that are not constant integers")
    if kind == "groups" and off.value < 0:
        raise ExecutionError(f"Out of Range Error: Invalid GROUPS {side.upper()} value")
    return L.FrameBound(side, off.value)


def _range_offset(off: Expr, key: T.DataType, side: str):
    """A RANGE offset in the representation of the ORDER BY key (DATE: days,
    DECIMAL: scaled integer). The frame compares key values, so over integer
    keys an offset of 1.5 reaches as far as 1 does.

    >>> offset = Literal(15, T.DECIMAL(2, 1))
    >>> _range_offset(offset, T.INTEGER, "preceding"), _range_offset(offset, T.DECIMAL(9, 2), "following")
    (1, 150)
    """
    if not isinstance(off, Literal) or off.value is None:
        raise NotSupported("RANGE frame offsets that are not constants")
    t, v = off.type, off.value
    if t.kind == "INTERVAL":
        if key.kind not in ("DATE", "TIMESTAMP"):
            raise TypeMismatch(f"Type mismatch: a RANGE frame offset over {key} keys must be a number, got an INTERVAL")
        months, days, micros = v
        if (months * 30 + days) * 86_400_000_000 + micros < 0:  # DuckDB compares intervals with 30-day months
            raise ExecutionError(f"Out of Range Error: Invalid RANGE {side.upper()} value")
        return L.IntervalOffset(months, days, micros)
    if key.kind == "TIMESTAMP":
        raise TypeMismatch(
            f"Type mismatch: a RANGE frame offset over TIMESTAMP keys must be an INTERVAL, got {ty.show(off)}"
        )
    if t.is_decimal:
        exact = Fraction(v, 10**t.scale)
    elif t.is_integer or t.kind == "DOUBLE":
        exact = Fraction(v)
    else:
        raise TypeMismatch(f"Type mismatch: a RANGE frame offset must be a number, got {ty.show(off)}")
    if exact < 0:
        raise ExecutionError(f"Out of Range Error: Invalid RANGE {side.upper()} value")
    if key.is_integer and key.kind != "HUGEINT" or key.kind == "DATE":
        return math.floor(exact)
    if key.is_decimal and key.precision <= 18:
        return math.floor(exact * 10**key.scale)
    if key.kind == "DOUBLE":
        return float(exact)
    raise NotSupported(f"RANGE frames with offsets over {key} keys")
