"""DuckDB's ``COLUMNS(...)``: an expression repeated once per column.

``COLUMNS(*)``, ``COLUMNS(t.*)`` (with EXCLUDE / REPLACE / RENAME as for a
star), ``COLUMNS('regex')`` (the columns whose name the regular expression
finds, case-sensitively) and ``COLUMNS(['a', 'b'])`` are expanded before
names are qualified:

- a SELECT item holding COLUMNS becomes one item per column, named after the
  column (``max(COLUMNS(*))`` is ``a``, ``b``...), or after its alias, where
  ``\\0`` is the column's name and ``\\1``... the regex's groups;
- in WHERE, HAVING and QUALIFY the condition is repeated once per column and
  the copies are joined by AND; in ORDER BY the item is repeated;
- one expression may hold one COLUMNS only (repeated, it is the same column).

The columns a star stands for are found by qualifying a copy of the SELECT
whose only item is that star.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.qualify import qualify

from glint.errors import BinderError, NotSupported

# the argument of a SELECT that holds its WITH (its name differs between sqlglot versions)
WITH_KEY = "with_" if "with_" in exp.Select.arg_types else "with"


def expand_columns(ast: exp.Expression, schema: dict) -> exp.Expression:
    """The query with every COLUMNS(...) expanded, and the names a star's
    EXCLUDE / REPLACE lists checked."""
    for sel in reversed(list(ast.find_all(exp.Select))):
        for star in sel.expressions:
            if isinstance(star, exp.Star) or (isinstance(star, exp.Column) and isinstance(star.this, exp.Star)):
                _check_modifiers(sel, star, schema)
        if any(_own(c, sel) for c in sel.find_all(exp.Columns)):
            _expand_select(sel, schema)
    return ast


def _check_modifiers(sel: exp.Select, star: exp.Expression, schema: dict) -> None:
    """A name in a star's EXCLUDE or REPLACE list that the star has not."""
    s = star if isinstance(star, exp.Star) else star.this
    # (DuckDB lets RENAME name a column the star has not)
    lists = [("EXCLUDE", s.args.get("except") or s.args.get("except_")), ("REPLACE", s.args.get("replace"))]
    if not any(items for _, items in lists):
        return
    bare = exp.Star() if isinstance(star, exp.Star) else exp.Column(this=exp.Star(), table=star.args.get("table"))
    have = {n.lower() for n, _ in _star(sel, bare, schema)}
    for what, items in lists:
        for item in items or ():
            name = item.alias if isinstance(item, exp.Alias) else item.name
            if name and name.lower() not in have:
                raise BinderError(f'Column "{name}" in {what} list not found in FROM clause')


def _own(node: exp.Expression, sel: exp.Select) -> bool:
    return node.find_ancestor(exp.Select) is sel


def _expand_select(sel: exp.Select, schema: dict) -> None:
    cache: dict[str, list[tuple[str, exp.Expression, re.Match | None]]] = {}

    def matches(node: exp.Columns):
        key = node.sql(dialect="duckdb")
        if key not in cache:
            cache[key] = _matching(node, sel, schema)
        return cache[key]

    items = []
    for item in sel.expressions:
        node = _one_columns(item, sel)
        if node is None:
            items.append(item)
            continue
        alias = item.alias if isinstance(item, exp.Alias) else None
        body = item.this if isinstance(item, exp.Alias) else item
        for name, col, m in matches(node):
            out = _substitute(body, node, col)
            items.append(exp.alias_(out, _alias_text(alias, name, m), quoted=True))
    sel.set("expressions", items)
    for key in ("where", "having", "qualify"):
        clause = sel.args.get(key)
        if clause is None:
            continue
        node = _one_columns(clause.this, sel)
        if node is not None:
            parts = [_substitute(clause.this, node, col) for _, col, _ in matches(node)]
            clause.set("this", exp.and_(*parts) if len(parts) > 1 else parts[0])
    order = sel.args.get("order")
    if order is not None:
        out = []
        for o in order.expressions:
            node = _one_columns(o, sel)
            out += [o] if node is None else [_substitute(o, node, col) for _, col, _ in matches(node)]
        order.set("expressions", out)
    group = sel.args.get("group")
    if group is not None and any(_own(c, sel) for c in group.find_all(exp.Columns)):
        raise BinderError("STAR expression is not supported here")


def _one_columns(e: exp.Expression, sel: exp.Select) -> exp.Columns | None:
    nodes = [c for c in e.find_all(exp.Columns) if _own(c, sel)]
    if not nodes:
        return None
    if len({n.sql(dialect="duckdb") for n in nodes}) > 1:
        raise BinderError("Multiple different STAR/COLUMNS in the same expression are not supported")
    return nodes[0]


def _substitute(e: exp.Expression, node: exp.Columns, col: exp.Expression) -> exp.Expression:
    key = node.sql(dialect="duckdb")

    def repl(n):
        if isinstance(n, exp.Columns) and n.sql(dialect="duckdb") == key:
            return col.copy()
        return n

    return e.copy().transform(repl)


def _alias_text(alias: str | None, name: str, m: re.Match | None) -> str:
    if alias is None:
        return name
    if "\\" not in alias:
        return alias
    groups = [name] + (list(m.groups()) if m is not None else [])

    def group(g):
        i = int(g.group(1))
        return (groups[i] or "") if i < len(groups) else ""

    return re.sub(r"\\(\d)", group, alias)


def _matching(node: exp.Columns, sel: exp.Select, schema: dict):
    """[(column name, its expression, the regex's match)] of a COLUMNS(...)."""
    arg = node.this
    if isinstance(arg, exp.Lambda):
        raise NotSupported("COLUMNS with a lambda (COLUMNS(c -> ...))")
    if isinstance(arg, (exp.Star, exp.Column)) and (isinstance(arg, exp.Star) or isinstance(arg.this, exp.Star)):
        return [(n, e, None) for n, e in _star(sel, arg, schema)]
    all_cols = _star(sel, exp.Star(), schema)
    if isinstance(arg, exp.Literal) and arg.is_string:
        try:
            pattern = re.compile(arg.this)
        except re.error as err:
            raise BinderError(f'Failed to compile regex "{arg.this}": {err}') from None
        found = [(n, e, pattern.search(n)) for n, e in all_cols]
        found = [(n, e, m) for n, e, m in found if m is not None]
        if not found:
            raise BinderError(f'No matching columns found that match regex "{arg.this}"')
        return found
    if isinstance(arg, exp.Array) and all(isinstance(x, exp.Literal) and x.is_string for x in arg.expressions):
        by_name = {n: e for n, e in all_cols}
        out = []
        for x in arg.expressions:
            if x.this not in by_name:
                raise BinderError(f'Column "{x.this}" was selected but was not found in the FROM clause')
            out.append((x.this, by_name[x.this], None))
        return out
    raise BinderError("COLUMNS expects either a VARCHAR argument (regex) or a LIST of VARCHAR (list of columns)")


def _star(sel: exp.Select, star: exp.Expression, schema: dict) -> list[tuple[str, exp.Expression]]:
    """(name, qualified expression) of each column a star of this SELECT stands for."""
    probe = exp.Select(expressions=[star.copy()])
    for key in ("from", "from_", "joins", "laterals"):
        if sel.args.get(key) is not None:
            probe.set(
                key, sel.args[key].copy() if not isinstance(sel.args[key], list) else [j.copy() for j in sel.args[key]]
            )
    ctes = []
    parent = sel
    while parent is not None:
        w = parent.args.get("with") or parent.args.get("with_")
        if w is not None:
            ctes = [c.copy() for c in w.expressions] + ctes
        parent = parent.parent
    if ctes:
        probe.set(WITH_KEY, exp.With(expressions=ctes))
    try:
        q = qualify(probe, schema=schema, dialect="duckdb", validate_qualify_columns=False)
    except OptimizeError as e:
        raise NotSupported(f"COLUMNS(...) over this FROM ({e})") from None
    out = []
    for e in q.expressions:
        if isinstance(e, exp.Alias):
            out.append((e.alias, e.this))
        elif isinstance(e, exp.Column) and not isinstance(e.this, exp.Star):
            out.append((e.name, e))
        else:
            raise NotSupported("COLUMNS(...) over a FROM whose columns are not known")
    return out
