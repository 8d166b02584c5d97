"""PIVOT and UNPIVOT, DuckDB's statements and the SQL standard's clauses,
rewritten into the SELECTs they stand for before anything else is done.

``PIVOT t ON k [IN (v1, v2)] [USING agg(x) [AS a], ...] [GROUP BY g]`` and
``FROM t PIVOT (agg(x) [AS a] FOR k IN (v1, v2))`` become::

    SELECT g, agg(x) FILTER (WHERE k = v1) AS "v1", agg(x) FILTER (WHERE k = v2) AS "v2"
    FROM t GROUP BY g

- without IN, the values are the distinct non-NULL values of ``k``, sorted,
  found by a query run first (DuckDB's dynamic PIVOT); several ON columns
  cross their values, and the columns are named ``v1_w1``...;
- without GROUP BY, the rows are grouped by every column of ``t`` that
  neither ON nor USING reads; without USING the aggregate is ``count(*)``;
- a column is named after its values, then ``_alias`` (or ``_agg(x)`` when
  there are several aggregates without aliases).

``UNPIVOT t ON c1, c2 [INTO NAME n VALUE v]`` (also ``ON COLUMNS(...)``) and
``FROM t UNPIVOT (v FOR n IN (c1, c2))`` become one row per column of ON
for each row of ``t``: the other columns, the column's name (``name``) and
its value (``value``), rows whose value is NULL left out::

    SELECT * FROM (SELECT other, u.n AS n, CASE u.n WHEN 'c1' THEN c1 WHEN 'c2' THEN c2 END AS v
                   FROM t CROSS JOIN (VALUES ('c1'), ('c2')) AS u(n)) WHERE v IS NOT NULL

The columns of ``t`` and the dynamic values come from queries run on the
connection (``run(sql) -> pyarrow.Table``).
"""

from __future__ import annotations

import datetime
import decimal
import itertools
import re

from sqlglot import exp

from glint.errors import BinderError, NotSupported

# the argument of a SELECT that holds its WITH (its name differs between sqlglot versions)
WITH_KEY = "with_" if "with_" in exp.Select.arg_types else "with"

_NAME = "__glint_unpivot_name"


def rewrite_pivots(ast: exp.Expression, run) -> exp.Expression:
    """The query with every PIVOT / UNPIVOT rewritten (``run``: None when no
    query can be run, which a PIVOT needing one refuses)."""
    nodes = [
        n
        for n in ast.find_all(exp.Pivot, exp.Table, bfs=False)
        if (isinstance(n, exp.Pivot) and n.args.get("this") is not None)
        or (isinstance(n, exp.Table) and n.args.get("pivots"))
    ]
    for node in reversed(nodes):  # inner ones first; each sees the CTEs above it
        new = _statement(node, run) if isinstance(node, exp.Pivot) else _clause(node, run)
        if node is ast:
            return new
        node.replace(new)
    return ast


def _statement(node: exp.Pivot, run) -> exp.Expression:
    source = node.this
    if node.args.get("unpivot"):
        into = node.args.get("into")
        name, values = "name", ["value"]
        if into is not None:
            name = into.this.name
            values = [e.name for e in into.expressions]
        sel = _unpivot(source, list(node.expressions), name, values, node, run)
    else:
        using = node.args.get("using") or [exp.Count(this=exp.Star())]
        group = node.args.get("group")
        sel = _pivot(source, list(node.expressions), list(using), group, node, run)
    w = node.args.get("with") or node.args.get("with_")
    if w is not None:
        sel.set(WITH_KEY, w.copy())
    return sel if not isinstance(node.parent, (exp.From, exp.Join)) else exp.Subquery(this=sel)


def _clause(table: exp.Table, run) -> exp.Expression:
    pivots = table.args["pivots"]
    if len(pivots) != 1:
        raise NotSupported("several PIVOT / UNPIVOT clauses on one FROM item")
    p = pivots[0]
    source = table.copy()
    source.set("pivots", None)
    alias = p.args.get("alias") or table.args.get("alias")
    source.set("alias", table.args.get("alias"))
    if p.args.get("unpivot"):
        fields = p.args.get("fields") or []
        if len(fields) != 1 or len(p.expressions) != 1:
            raise NotSupported("UNPIVOT with several value or name columns")
        name = fields[0].this.name
        ons = [exp.column(e.name) if not isinstance(e, exp.Column) else e for e in fields[0].expressions]
        sel = _unpivot(source, ons, name, [p.expressions[0].name], table, run)
    else:
        sel = _pivot(source, list(p.args.get("fields") or []), list(p.expressions), None, table, run)
    name = alias.name if alias is not None and alias.name else table.alias_or_name
    return exp.Subquery(this=sel, alias=exp.TableAlias(this=exp.to_identifier(name)))


# ---------------------------------------------------------------- PIVOT
def _pivot(source, ons, using, group, where, run) -> exp.Select:
    if not ons:
        raise BinderError("PIVOT needs ON columns")
    on_items = []
    for on in ons:
        if isinstance(on, exp.In):
            on_items.append((on.this, [(v, _value_name(v)) for v in on.expressions]))
        else:
            on_items.append((on, None))
    if any(values is None for _, values in on_items):
        if run is None:
            raise NotSupported("PIVOT without IN lists here (its values need a query run first)")
        on_items = [
            (e, values if values is not None else _distinct_values(source, e, where, run)) for e, values in on_items
        ]
    if group is not None:
        keys = list(group.expressions)
    else:
        read = {c.name.lower() for e, _ in on_items for c in e.find_all(exp.Column)}
        for u in using:
            read |= {c.name.lower() for c in u.find_all(exp.Column)}
        keys = [exp.column(c, quoted=True) for c in _columns(source, where, run) if c.lower() not in read]
    several = len(using) > 1
    items = [k.copy() for k in keys]
    for combo in itertools.product(*(values for _, values in on_items)):
        cond = exp.and_(*(exp.EQ(this=e.copy(), expression=v.copy()) for (e, _), (v, _) in zip(on_items, combo)))
        base = "_".join(name for _, name in combo)
        for u in using:
            agg = u.this if isinstance(u, exp.Alias) else u
            if isinstance(u, exp.Alias):
                label = f"{base}_{u.alias}"
            elif several:
                label = f"{base}_{_agg_text(agg)}"
            else:
                label = base
            items.append(exp.alias_(_filtered(agg, cond), label, quoted=True))
    sel = exp.Select(expressions=items).from_(_as_from(source))
    if keys:
        sel.set("group", exp.Group(expressions=[k.copy() for k in keys]))
    return sel


def _filtered(agg: exp.Expression, cond: exp.Expression) -> exp.Expression:
    if isinstance(agg, exp.Filter):
        inner = agg.expression.this if isinstance(agg.expression, exp.Where) else agg.expression
        return exp.Filter(this=agg.this.copy(), expression=exp.Where(this=exp.and_(inner.copy(), cond)))
    return exp.Filter(this=agg.copy(), expression=exp.Where(this=cond))


def _agg_text(agg: exp.Expression) -> str:
    """An aggregate as DuckDB prints it in a name: sum(v)."""
    text = agg.sql(dialect="duckdb")
    return re.sub(r"^[A-Z_]+\(", lambda m: m.group(0).lower(), text)


def _value_name(v: exp.Expression) -> str:
    if isinstance(v, exp.Literal):
        return v.this
    if isinstance(v, exp.Null):
        return "NULL"
    if isinstance(v, exp.Boolean):
        return "true" if v.this else "false"
    if isinstance(v, exp.Cast) and isinstance(v.this, exp.Literal):
        return v.this.this
    return v.sql(dialect="duckdb")


def _distinct_values(source, on: exp.Expression, where, run) -> list[tuple[exp.Expression, str]]:
    q = exp.Select(expressions=[exp.alias_(on.copy(), "v")]).from_(_as_from(source)).distinct()
    q = q.where(exp.Not(this=exp.Is(this=on.copy(), expression=exp.Null()))).order_by("1")
    values = run(_with_ctes(q, where).sql(dialect="duckdb")).column(0).to_pylist()
    if not values:
        raise BinderError(f"PIVOT: the ON expression {on.sql(dialect='duckdb')} has no values (no IN list given)")
    return [_literal(v) for v in values]


def _literal(v) -> tuple[exp.Expression, str]:
    if isinstance(v, bool):
        return exp.Boolean(this=v), "true" if v else "false"
    if isinstance(v, (int, decimal.Decimal)):
        return exp.Literal.number(str(v)), str(v)
    if isinstance(v, float):
        return exp.Literal.number(repr(v)), repr(v)
    if isinstance(v, datetime.datetime):
        text = v.isoformat(sep=" ")
        return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build("TIMESTAMP")), text
    if isinstance(v, datetime.date):
        text = v.isoformat()
        return exp.Cast(this=exp.Literal.string(text), to=exp.DataType.build("DATE")), text
    return exp.Literal.string(str(v)), str(v)


# ---------------------------------------------------------------- UNPIVOT
def _unpivot(source, ons, name: str, values: list[str], where, run) -> exp.Select:
    if len(values) != 1:
        raise NotSupported("UNPIVOT into several value columns")
    columns = _columns(source, where, run)
    picked: list[str] = []
    for on in ons:
        picked += _on_columns(on, columns)
    if not picked:
        raise BinderError("UNPIVOT needs ON columns")
    lower = {c.lower() for c in picked}
    others = [c for c in columns if c.lower() not in lower]
    u = exp.column(_NAME, "__glint_unpivot")
    case = exp.Case(
        ifs=[
            exp.If(this=exp.EQ(this=u.copy(), expression=exp.Literal.string(c)), true=exp.column(c, quoted=True))
            for c in picked
        ]
    )
    names = exp.Values(
        expressions=[exp.Tuple(expressions=[exp.Literal.string(c)]) for c in picked],
        alias=exp.TableAlias(this=exp.to_identifier("__glint_unpivot"), columns=[exp.to_identifier(_NAME)]),
    )
    inner = exp.Select(
        expressions=[exp.column(c, quoted=True) for c in others]
        + [exp.alias_(u.copy(), name, quoted=True), exp.alias_(case, values[0], quoted=True)]
    ).from_(_as_from(source))
    inner = inner.join(names, join_type="CROSS")
    sub = exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier("__glint_unpivoted")))
    return (
        exp.Select(expressions=[exp.Star()])
        .from_(sub)
        .where(exp.Not(this=exp.Is(this=exp.column(values[0], quoted=True), expression=exp.Null())))
    )


def _on_columns(on: exp.Expression, columns: list[str]) -> list[str]:
    if isinstance(on, exp.Column) and not isinstance(on.this, exp.Star):
        match = [c for c in columns if c.lower() == on.name.lower()]
        if not match:
            raise BinderError(f'Column "{on.name}" referenced in UNPIVOT but no matching entry was found in the table')
        return match
    if isinstance(on, exp.Columns):
        arg = on.this
        if isinstance(arg, exp.Star):
            excluded = {e.name.lower() for e in (arg.args.get("except") or arg.args.get("except_") or [])}
            return [c for c in columns if c.lower() not in excluded]
        if isinstance(arg, exp.Literal) and arg.is_string:
            pattern = re.compile(arg.this)
            return [c for c in columns if pattern.search(c)]
    raise NotSupported(f"UNPIVOT ON {on.sql(dialect='duckdb')}")


# ---------------------------------------------------------------- the source
def _as_from(source: exp.Expression) -> exp.Expression:
    return source.copy()


def _columns(source, where, run) -> list[str]:
    if run is None:
        raise NotSupported("PIVOT / UNPIVOT here (the columns of its input need a query run first)")
    q = exp.Select(expressions=[exp.Star()]).from_(_as_from(source)).limit(0)
    return list(run(_with_ctes(q, where).sql(dialect="duckdb")).column_names)


def _with_ctes(q: exp.Select, where: exp.Expression) -> exp.Select:
    """``q`` with the CTEs visible where the PIVOT stands."""
    ctes = []
    node = where
    while node is not None:
        w = node.args.get("with") or node.args.get("with_")
        if w is not None:
            ctes = [c.copy() for c in w.expressions] + ctes
        node = node.parent
    if ctes:
        q.set(WITH_KEY, exp.With(expressions=ctes))
    return q
