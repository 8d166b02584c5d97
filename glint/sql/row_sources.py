"""Table functions that make rows from constants: ``generate_series``,
``range`` and ``unnest`` in FROM, and ``unnest`` in the SELECT list.

In FROM, each call is replaced before names are qualified by a table name
that no catalog table has (``glint_rows_<n>``), with its alias; the binder
finds the name among the query's row sources and plans the rows: a
:class:`~glint.plan.logical.Series` (made on the device, chunk by chunk)
for generate_series and range, a VALUES list for unnest of a list of
constants. Their arguments are constants (a column of another FROM item, a
LATERAL table function, is refused). Columns are named as DuckDB names them:
``generate_series``, ``range``, ``unnest``, or by the alias.

In the SELECT list, ``unnest(list)`` gives one row per element for every row
(after GROUP BY and window functions, as in DuckDB): the rows are crossed
with the positions 0 .. n-1, and each UNNEST is its element at that
position (NULL past its end, so that several UNNESTs of different lengths
stand side by side). The list's elements may be any expressions.
"""

from __future__ import annotations

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, NotSupported
from glint.functions.builtins import BUILTINS
from glint.functions.registry import TABLE
from glint.functions.series import SeriesSpec, no_match
from glint.plan import logical as L
from glint.plan import typing as ty
from glint.plan.expr import Call, Case, ColRef, Expr, Literal
from glint.sql.bind_expr import ExprContext, bind
from glint.sql.folding import fold_expr
from glint.sql.scope import Scope

_SQL_NAME = {"BIGINT": "BIGINT", "TIMESTAMP": "TIMESTAMP", "INTEGER": "INT", "DOUBLE": "DOUBLE", "DATE": "DATE"}


class RowSource:
    """A FROM item that makes rows: its one column and how to plan it. A
    series whose arguments read columns (``lateral``: the GenerateSeries
    node) is planned over the rows before it (:func:`series_per_row`)."""

    __slots__ = ("column", "type", "spec", "elements", "lateral")

    def __init__(
        self, column: str, type_: T.DataType, spec: SeriesSpec | None, elements: list[Expr] | None, lateral=None
    ):
        self.column = column
        self.type = type_
        self.spec = spec
        self.elements = elements
        self.lateral = lateral

    def sql_type(self) -> str:
        """The column's type as the qualifier's schema spells it."""
        if self.type.is_decimal:
            return "DECIMAL"
        return _SQL_NAME.get(self.type.kind, "VARCHAR" if self.type.is_string else self.type.kind)

    def plan(self, new_field) -> tuple[L.LogicalNode, dict]:
        """(the rows' plan, {column name: field})."""
        if self.lateral is not None:
            raise NotSupported(
                f"{self.column}() whose arguments read columns, other than after a comma or in a JOIN "
                f"(FROM t, {self.column}(t.n))"
            )
        f = new_field(self.column, self.type)
        return rows_plan(self.spec, self.elements, f), {self.column: f}


def rows_plan(spec: SeriesSpec | None, elements: list[Expr] | None, f) -> L.LogicalNode:
    if spec is not None and not spec.values:
        return L.Series(spec.start, spec.step, spec.count, f)
    if spec is not None:
        return L.Values(tuple((Literal(v, f.type),) for v in spec.values), (f,))
    return L.Values(tuple((ty.cast(e, f.type),) for e in elements), (f,))


def resolve_row_sources(ast: exp.Expression, binder) -> tuple[exp.Expression, dict[str, RowSource]]:
    """The query with each generate_series / range / unnest in FROM replaced by
    a table name, and those names' row sources."""
    sources: dict[str, RowSource] = {}

    def fix(node):
        if isinstance(node, exp.Table) and isinstance(node.this, exp.GenerateSeries):
            fn = "range" if node.this.args.get("is_end_exclusive") else "generate_series"
            source = _series_source(fn, node.this, binder)
        elif isinstance(node, exp.Unnest) and isinstance(node.parent, (exp.From, exp.Join)):
            if node.args.get("offset"):
                raise NotSupported("UNNEST ... WITH ORDINALITY")
            if len(node.expressions) != 1:
                raise NotSupported("UNNEST of several lists")
            arg = node.expressions[0]
            if isinstance(arg, exp.GenerateSeries):
                source = _series_source("unnest", arg, binder)
            else:
                source = RowSource("unnest", *_list_source(arg, binder))
        else:
            return node
        name = f"glint_rows_{len(sources) + 1}"
        sources[name] = source
        alias = node.args.get("alias")
        return exp.Table(
            this=exp.to_identifier(name),
            alias=exp.TableAlias(
                this=alias.this if alias is not None and alias.this else exp.to_identifier(source.column),
                columns=alias.columns if alias is not None else None,
            ),
        )

    return ast.transform(fix), sources


def _series_source(column: str, node: exp.GenerateSeries, binder) -> RowSource:
    if any(node.args.get(k) is not None and node.args[k].find(exp.Column) for k in ("start", "end", "step")):
        step = node.args.get("step")
        stepped = step is not None and (isinstance(step, exp.Interval) or step.find(exp.Interval) is not None)
        return RowSource(column, T.TIMESTAMP if stepped else T.BIGINT, None, None, lateral=node)
    return RowSource(column, *_series_spec(node, binder))


def series_per_row(
    node: exp.GenerateSeries, plan: L.LogicalNode, ctx: ExprContext, field_name: str, new_field, keep_empty=False
):
    """(plan with each row repeated once per value of its own series, the value's field)."""
    fn = "range" if node.args.get("is_end_exclusive") else "generate_series"
    args = [bind(node.args[k], ctx) if node.args.get(k) is not None else None for k in ("start", "end", "step")]
    if ctx.pending:
        raise NotSupported(f"subqueries in the arguments of {fn}()")
    start, stop, step = args
    if step is not None and step.type.kind == "INTERVAL":
        step = fold_expr(step)
        if not isinstance(step, Literal) or step.value is None:
            raise NotSupported(f"{fn}() with an INTERVAL step that is not a constant")
        months, days, micros = step.value
        if months:
            raise NotSupported(f"{fn}() over TIMESTAMPs with a month step, with arguments that read columns")
        if days == 0 and micros == 0:
            raise BinderError("interval cannot be 0!")
        for a in (start, stop):
            if a.type.kind not in ("DATE", "TIMESTAMP", "NULL"):
                raise no_match(fn, [start, stop, step])
        start, stop = ty.cast(start, T.TIMESTAMP), ty.cast(stop, T.TIMESTAMP)
        step, t = Literal(days * 86_400_000_000 + micros, T.BIGINT), T.TIMESTAMP
    else:
        if step is None:
            step = Literal(1, T.BIGINT)
        if any(a.type.kind not in ("INTEGER", "BIGINT", "NULL") for a in (start, stop, step)):
            raise no_match(fn, [start, stop, step])
        start, stop, step = (ty.cast(a, T.BIGINT) for a in (start, stop, step))
        t = T.BIGINT
    f = new_field(field_name, t)
    return L.SeriesPerRow(plan, start, stop, step, fn == "generate_series", f, keep_empty), f


def _constant(node: exp.Expression, binder, fn: str) -> Literal:
    if node.find(exp.Column) is not None:
        raise NotSupported(
            f"{fn}() with arguments that read columns (a LATERAL table function): {node.sql(dialect='duckdb')}"
        )
    ctx = ExprContext(Scope(None), binder)
    e = fold_expr(bind(node, ctx))
    if ctx.pending or not isinstance(e, Literal):
        raise NotSupported(f"{fn}() with an argument that is not a constant: {node.sql(dialect='duckdb')}")
    return e


def _series_spec(node: exp.GenerateSeries, binder) -> tuple[T.DataType, SeriesSpec, None]:
    fn = "range" if node.args.get("is_end_exclusive") else "generate_series"
    args = [_constant(node.args[k], binder, fn) for k in ("start", "end", "step") if node.args.get(k) is not None]
    spec = BUILTINS.get(fn, TABLE).bind(args, fn)
    return spec.type, spec, None


def _list_source(node: exp.Expression, binder):
    """(type, series spec or None, constant elements or None) of unnest's argument."""
    if isinstance(node, exp.GenerateSeries):
        return _series_spec(node, binder)
    if isinstance(node, exp.Array):
        elements = [_constant(e, binder, "unnest") for e in node.expressions]
        return list_type(elements, node.expressions), None, elements
    if isinstance(node, exp.Null):
        raise BinderError("UNNEST requires a single list as input")
    raise NotSupported(
        f"UNNEST of {node.sql(dialect='duckdb')[:60]} (glint has no LIST values: a list of constants "
        "[...] or range / generate_series)"
    )


def list_type(elements: list[Expr], nodes: list[exp.Expression]) -> T.DataType:
    """The type of a list's elements (glint.functions.series.element_type)."""
    typed = [(e.type, isinstance(n, exp.Literal) and n.is_string) for e, n in zip(elements, nodes)]
    return BUILTINS.get("unnest", TABLE).bind(typed, "unnest")


# ---------------------------------------------------------------- unnest in SELECT
def select_unnests(items: list[exp.Expression]) -> list[exp.Explode]:
    """The UNNEST calls of a SELECT list, outside subqueries."""
    out = []

    def walk(n):
        if isinstance(n, (exp.Subquery, exp.Select)):
            return
        if isinstance(n, exp.Explode):
            out.append(n)
            return
        for c in n.iter_expressions():
            walk(c)

    for i in items:
        walk(i)
    return out


def bind_unnests(calls: list[exp.Explode], plan: L.LogicalNode, ctx: ExprContext, new_field):
    """The plan crossed with the positions of the longest list, and {the
    call's SQL: its element at the row's position}."""
    lists = []
    for call in calls:
        arg = call.this
        if isinstance(arg, exp.GenerateSeries) and any(
            arg.args.get(k) is not None and arg.args[k].find(exp.Column) for k in ("start", "end", "step")
        ):
            if len(calls) > 1:
                raise NotSupported("UNNEST of a series whose arguments read columns beside another UNNEST")
            plan, f = series_per_row(arg, plan, ctx, "unnest", new_field)
            return plan, {call.sql(dialect="duckdb"): ColRef(f)}
        if isinstance(arg, exp.GenerateSeries):
            t, spec, _ = _series_spec(arg, ctx.binder)
            lists.append((call, t, spec, None))
        elif isinstance(arg, exp.Array):
            elements = [bind(e, ctx) for e in arg.expressions]
            t = list_type(elements, arg.expressions)
            lists.append((call, t, None, [ty.cast(e, t) for e in elements]))
        else:
            _list_source(arg, ctx.binder)  # raises the error of a non-list argument
    values = {}
    if len(lists) == 1 and lists[0][2] is not None:
        call, t, spec, _ = lists[0]
        f = new_field("unnest", t)
        values[call.sql(dialect="duckdb")] = ColRef(f)
        return L.Join(plan, rows_plan(spec, None, f), "inner", None), values
    if any(spec is not None and spec.values for _, _, spec, _ in lists):
        raise NotSupported("UNNEST of a month-stepped series beside another UNNEST in one SELECT")
    n = max(spec.count if spec is not None else len(elements) for _, _, spec, elements in lists)
    pos = new_field("unnest_position", T.BIGINT)
    at = ColRef(pos)
    for call, t, spec, elements in lists:
        values[call.sql(dialect="duckdb")] = _element_at(at, t, spec, elements)
    return L.Join(plan, L.Series(0, 1, n, pos), "inner", None), values


def _element_at(at: Expr, t: T.DataType, spec: SeriesSpec | None, elements: list[Expr] | None) -> Expr:
    if spec is None:
        whens = tuple((Call("eq", (at, Literal(i, T.BIGINT)), T.BOOLEAN), e) for i, e in enumerate(elements))
        return Case(whens, Literal(None, t), t) if whens else Literal(None, t)
    inside = Call("lt", (at, Literal(spec.count, T.BIGINT)), T.BOOLEAN)
    value = Call(
        "add", (Literal(spec.start, T.BIGINT), Call("mul", (at, Literal(spec.step, T.BIGINT)), T.BIGINT)), T.BIGINT
    )
    if t.kind == "TIMESTAMP":
        raise NotSupported("UNNEST of a TIMESTAMP series beside another UNNEST in one SELECT")
    return Case(((inside, value),), Literal(None, t), t)
