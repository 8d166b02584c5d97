"""SQL text -> optimized logical plan: parse (sqlglot, DuckDB dialect), inline
views, check names, qualify, bind, optimize. Errors name the position."""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, SqlglotError, TokenError
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.optimizer.qualify import qualify
from sqlglot.tokens import TokenType

from glint.errors import (
    BinderError,
    CatalogError,
    ColumnNotFound,
    GlintError,
    NotSupported,
    ParseError,
    did_you_mean,
)
from glint.sql.bind_lateral import mark_implicit_laterals
from glint.sql.bind_values import normalize_values
from glint.sql.binder import Binder, Bound
from glint.sql.dialect import DIALECT, VERSION
from glint.sql.names import deduplicate_derived, name_select_items
from glint.sql.pivot import rewrite_pivots
from glint.sql.positions import position
from glint.sql.row_sources import resolve_row_sources
from glint.sql.star_columns import expand_columns
from glint.sql.table_functions import resolve_file_references
from glint.sql.using_joins import rewrite_using_after_comma

_SQL_TYPE = {
    "BOOLEAN": "BOOLEAN",
    "INTEGER": "INT",
    "BIGINT": "BIGINT",
    "HUGEINT": "INT128",
    "DOUBLE": "DOUBLE",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP",
    "VARCHAR": "VARCHAR",
    "NULL": "INT",
}


def parse(sql: str) -> list[exp.Expression]:
    """The statements of ``sql``, each SELECT item named as DuckDB names a
    result column (:mod:`glint.sql.names`)."""
    text = _whole_interval_strings(sql)
    try:
        stmts = sqlglot.parse(text, read=DIALECT)
    except SqlglotParseError as e:
        err = e.errors[0] if e.errors else {}
        line, col = err.get("line"), err.get("col")
        desc = err.get("description") or str(e)
        near = (err.get("highlight") or "").strip()
        where = f" at line {line}, column {col}" if line is not None else ""
        near_txt = f' near "{near}"' if near else ""
        raise ParseError(f"syntax error{where}{near_txt}: {_friendly(desc)}") from None
    except TokenError as e:
        raise ParseError(f"syntax error: {e}") from None
    name_select_items(stmts, text, VERSION)
    return [s for s in stmts if s is not None]


# how sqlglot splits an INTERVAL string into 'amount unit' pieces (its INTERVAL_STRING_RE)
_INTERVAL_PIECE = re.compile(r"\s*(-?[0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]+)\s*")


def _whole_interval_strings(sql: str) -> str:
    """sqlglot keeps only the first 'amount unit' of INTERVAL '1 day 04:05:06'
    (it reads it as INTERVAL '1' DAY): such a literal is rewritten as
    CAST('1 day 04:05:06' AS INTERVAL), which the binder reads whole.

    >>> _whole_interval_strings("SELECT d + INTERVAL '1 day 04:05' FROM t")
    "SELECT d + CAST('1 day 04:05' AS INTERVAL) FROM t"
    """
    if "interval" not in sql.lower():
        return sql
    try:
        tokens = sqlglot.tokenize(sql, read="duckdb")
    except TokenError:
        return sql  # the parser reports it
    out, last = [], 0
    for t, nxt in zip(tokens, tokens[1:]):
        if t.token_type == TokenType.INTERVAL and nxt.token_type == TokenType.STRING:
            text = nxt.text
            if len(_INTERVAL_PIECE.findall(text)) == 1 and not _INTERVAL_PIECE.fullmatch(text):
                quoted = text.replace("'", "''")
                out.append(sql[last : t.start] + f"CAST('{quoted}' AS INTERVAL)")
                last = nxt.end + 1
    return "".join(out) + sql[last:] if out else sql


def _friendly(desc: str) -> str:
    m = re.match(r"Required keyword: '(\w+)' missing for <class '[\w.]*\.(\w+)'>", desc)
    if m:
        return f"incomplete {m.group(2).upper()} clause"
    return desc.split("\n")[0]


def inline_views(ast: exp.Expression, views: dict[str, exp.Expression], depth: int = 0) -> exp.Expression:
    """Replace references to views by their defining query (as a derived table)."""
    if not views:
        return ast
    if depth > 32:
        raise BinderError("views nest too deeply (a view that references itself?)")
    ctes = _cte_names(ast)

    def repl(node):
        if isinstance(node, exp.Table) and not node.db and node.name.lower() in views and node.name.lower() not in ctes:
            body = inline_views(views[node.name.lower()].copy(), views, depth + 1)
            alias = node.alias_or_name
            return exp.Subquery(this=body, alias=exp.TableAlias(this=exp.to_identifier(alias)))
        return node

    return ast.transform(repl)


def _cte_names(ast) -> set[str]:
    return {c.alias_or_name.lower() for w in ast.find_all(exp.With) for c in w.expressions}


def check_tables(ast: exp.Expression, catalog, sources=()) -> None:
    ctes = _cte_names(ast)
    for t in ast.find_all(exp.Table):
        name = t.name
        if not name or isinstance(t.this, exp.Anonymous) or (name in sources and not t.db):
            continue
        if name.lower() in ctes and not t.db:
            continue
        if not catalog.has_table(name):
            raise CatalogError(f'Table "{name}" does not exist{position(t)}{did_you_mean(name, catalog.table_names())}')


def source_columns(ast: exp.Expression, catalog, sources: dict, schema: dict):
    """``columns_of(from item)``: a FROM item's column names (None when not
    known), for the rewrite of USING after a comma (glint.sql.using_joins)."""
    ctes = {c.alias_or_name.lower(): c.this for w in ast.find_all(exp.With) for c in w.expressions}

    def names_of(query) -> list[str] | None:
        try:
            q = qualify(query.copy(), schema=schema, dialect="duckdb", validate_qualify_columns=True)
        except (OptimizeError, GlintError):
            return None
        return list(q.named_selects) if isinstance(q, (exp.Select, exp.SetOperation)) else None

    def columns_of(node) -> list[str] | None:
        alias = node.args.get("alias")
        given = [c.name for c in alias.columns] if alias is not None and alias.columns else []
        base = None
        if isinstance(node, exp.Table) and not node.db:
            name = node.name
            if name in sources:
                base = [sources[name].column]
            elif name.lower() in ctes:
                base = names_of(ctes[name.lower()])
            elif catalog.has_table(name):
                base = list(catalog.table(name).schema)
        elif isinstance(node, exp.Subquery):
            base = names_of(node.this)
        elif isinstance(node, exp.Values):
            base = given
        if base is None:
            return None
        return given + base[len(given) :]

    return columns_of


def bind_query(ast: exp.Expression, catalog, binder: Binder | None = None) -> Bound:
    binder = binder or Binder(catalog)
    run = (lambda text: catalog.sql(text).arrow()) if hasattr(catalog, "sql") else None
    # one copy of the caller's tree, which the rewrites and qualify then change in place
    ast = rewrite_pivots(ast.copy(), run)
    ast = resolve_file_references(normalize_values(ast, copy=False), catalog, copy=False)
    ast, sources = resolve_row_sources(ast, binder)
    binder.row_sources.update(sources)
    check_tables(ast, catalog, sources)
    used = {t.name for t in ast.find_all(exp.Table) if t.name and catalog.has_table(t.name)}
    schema = {
        catalog.table(name).name: {
            c.lower(): _SQL_TYPE.get(t.kind, "DECIMAL" if t.is_decimal else "VARCHAR")
            for c, t in catalog.table(name).schema.items()
        }
        for name in used
    }
    schema.update({name: {s.column: s.sql_type()} for name, s in sources.items()})
    ast = rewrite_using_after_comma(ast, source_columns(ast, catalog, sources, schema))
    ast = expand_columns(ast, schema)
    ast = mark_implicit_laterals(ast)
    try:
        q = _qualify(_hide_order_positions(ast), schema)
    except OptimizeError as e:
        raise _column_error(str(e), ast, catalog) from None
    try:
        return binder.bind_query(expand_order_by_all(_show_order_positions(q)))
    except SqlglotError as e:
        # sqlglot failing on a tree it parsed (older sqlglot releases regenerate some aggregates'
        # arguments, e.g. QUANTILE_DISC(DISTINCT (a // b), q), and cannot parse them back)
        text = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).splitlines()[0]
        raise ParseError(f"the SQL parser (sqlglot {sqlglot.__version__}) failed on this query: {text}") from None


def _qualify(ast, schema):
    """sqlglot's qualify; a star over a derived table whose own star brought in
    a repeated name stays unexpanded (or fails qualify's positional ORDER BY)
    until the derived table's names are made unique as DuckDB makes them."""
    try:
        q = qualify(ast, schema=schema, dialect="duckdb", validate_qualify_columns=True)
    except AssertionError:
        # (qualify expands the derived table's star in place before it fails)
        if not deduplicate_derived(ast):
            raise BinderError("could not resolve the columns of a SELECT * in this query") from None
        return qualify(ast, schema=schema, dialect="duckdb", validate_qualify_columns=True)
    if _unexpanded_star(q) and deduplicate_derived(q):
        q = qualify(q, schema=schema, dialect="duckdb", validate_qualify_columns=True)
    return q


def _unexpanded_star(ast) -> bool:
    return any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
        for sel in ast.find_all(exp.Select)
        for e in sel.expressions
    )


_POSITION = "__glint_order_position"


def _hide_order_positions(ast: exp.Expression) -> exp.Expression:
    """ORDER BY 1, 2 kept as positions through sqlglot's qualify: before
    sqlglot 30.20 it rewrote them into the output names, and two outputs of
    one name (``a.region, b.region``) then both sorted by the first
    (:func:`_show_order_positions` puts them back; the binder reads them).

    >>> q = sqlglot.parse_one("SELECT a FROM t ORDER BY 1", dialect="duckdb")
    >>> _show_order_positions(_hide_order_positions(q)).sql(dialect="duckdb")
    'SELECT a FROM t ORDER BY 1'
    """
    for node in ast.find_all(exp.Select, exp.SetOperation):
        order = node.args.get("order")
        for o in order.expressions if order is not None else []:
            if isinstance(o.this, exp.Literal) and not o.this.is_string and o.this.this.isdigit():
                o.set("this", exp.Anonymous(this=_POSITION, expressions=[o.this.copy()]))
    return ast


def _show_order_positions(ast: exp.Expression) -> exp.Expression:
    for node in list(ast.find_all(exp.Anonymous)):
        if str(node.this).lower() == _POSITION and isinstance(node.parent, exp.Ordered):
            node.replace(node.expressions[0])
    return ast


def expand_order_by_all(ast: exp.Expression) -> exp.Expression:
    """DuckDB's ``ORDER BY ALL [DESC] [NULLS ...]``: every output column, left to
    right, with the one direction (after qualify, so that * is expanded).

    >>> q = sqlglot.parse_one("SELECT a, b FROM t ORDER BY ALL DESC", dialect="duckdb")
    >>> expand_order_by_all(q).sql(dialect="duckdb")
    'SELECT a, b FROM t ORDER BY 1 DESC, 2 DESC'
    """
    for node in list(ast.find_all(exp.Select, exp.SetOperation)):
        order = node.args.get("order")
        if order is None or not any(
            isinstance(o.this, exp.Var) and o.this.name.upper() == "ALL" for o in order.expressions
        ):
            continue
        if len(order.expressions) > 1:
            raise BinderError("ORDER BY ALL cannot be combined with other ORDER BY terms")
        left = node
        while isinstance(left, exp.SetOperation):
            left = left.this
        while isinstance(left, exp.Subquery):
            left = left.this
        n = len(left.expressions) if isinstance(left, exp.Select) else 0
        if n == 0:
            raise NotSupported("ORDER BY ALL here")
        o = order.expressions[0]
        order.set(
            "expressions",
            [
                exp.Ordered(
                    this=exp.Literal.number(i + 1), desc=o.args.get("desc"), nulls_first=o.args.get("nulls_first")
                )
                for i in range(n)
            ],
        )
    return ast


def _column_error(msg: str, ast, catalog):
    m = re.match(r"Column '(.+?)' could not be resolved(?:\. Line: (\d+), Col: (\d+))?", msg)
    if m:
        name = m.group(1).strip('"')
        # sqlglot reports where the name ends; users count from where it starts
        where = f" at line {m.group(2)}, column {int(m.group(3)) - len(name) + 1}" if m.group(2) else ""
        names = []
        for t in ast.find_all(exp.Table):
            if catalog.has_table(t.name):
                names += list(catalog.table(t.name).schema)
        if sum(n.lower() == name.lower() for n in names) > 1:
            return BinderError(f'Column reference "{name}" is ambiguous{where}: qualify it with a table name')
        return ColumnNotFound(f'Column "{name}" not found{where}{did_you_mean(name, sorted(set(names)))}')
    m = re.match(r"Unknown column: (\S+)", msg)
    if m:
        name = m.group(1).strip('"')
        return ColumnNotFound(f'Column "{name}" not found')
    if "ambiguous" in msg.lower():
        return BinderError(f"ambiguous column reference: {msg}")
    if "Unknown table" in msg or "Unknown" in msg:
        return CatalogError(msg)
    return BinderError(msg)


def statement_kind(stmt: exp.Expression) -> str:
    if isinstance(stmt, exp.Create):
        return f"create_{(stmt.args.get('kind') or '').lower()}"
    if isinstance(stmt, exp.Drop):
        return f"drop_{(stmt.args.get('kind') or '').lower()}"
    if isinstance(stmt, (exp.Select, exp.SetOperation, exp.Subquery, exp.Values, exp.Pivot)):
        return "query"
    for cls, kind in (
        (exp.Insert, "insert"),
        (exp.Delete, "delete"),
        (exp.Update, "update"),
        (exp.Copy, "copy"),
        (exp.TruncateTable, "truncate"),
    ):
        if isinstance(stmt, cls):
            return kind
    if isinstance(stmt, exp.Describe):
        return "describe"
    if isinstance(stmt, exp.Command) and str(stmt.this).upper() == "EXPLAIN":
        return "explain"
    if isinstance(stmt, exp.Set) or (isinstance(stmt, exp.Command) and str(stmt.this).upper() == "SET"):
        return "set"
    if isinstance(stmt, exp.Command) and str(stmt.this).upper() == "RESET":
        return "reset"
    raise NotSupported(f"statement {stmt.sql(dialect='duckdb')[:60]!r}")
