"""Files in FROM: ``FROM 'x.parquet'``, ``FROM 'dir/*.parquet'``, ``FROM 'x.csv'``,
``read_parquet('a.parquet')``, ``read_parquet(['a', 'b'])``,
``read_csv('x.csv', header = true, delim = '|')``, ``read_csv_auto(...)``,
``parquet_scan(...)``.

Each reference is replaced, before names are qualified, by a table of the
connection's catalog that reads the files (``glint.io.file_tables``):
Parquet through the streaming row-group source ``read_parquet`` uses
(chunked scans, min/max pruning, device caching), CSV through DuckDB's
``read_csv`` defaults (``glint.io.csv_auto``). A quoted name is a file
only when no table, view or CTE has that name and it ends in a Parquet or
CSV suffix, as DuckDB's replacement scans decide. The table's alias is the
file's stem (``FROM 'data/x.parquet'`` is ``x``) or the function's name. A
missing file is a GlintIOError naming it and its place in the SQL.

A catalog's system tables (``catalog.system_tables``, e.g. a server's
``glint_queries``) are resolved in the same pass: a name that no table, view
or CTE takes becomes a table of the catalog holding the system table's rows as
of now (``catalog.system_table(name)`` gives its name).
"""

from __future__ import annotations

import os

from sqlglot import exp

from glint.errors import BinderError, GlintIOError, NotSupported
from glint.functions.builtins import BUILTINS
from glint.functions.registry import TABLE
from glint.io.file_lists import PARQUET_SUFFIXES, has_suffix
from glint.sql.positions import position


def file_kind(name: str) -> str | None:
    """'parquet' or 'csv' for a name DuckDB would read as a file, else None.

    >>> file_kind("data/*.parquet"), file_kind("x.csv.gz"), file_kind("x.tsv"), file_kind("orders")
    ('parquet', 'csv', 'csv', None)
    """
    if has_suffix(name, PARQUET_SUFFIXES):
        return "parquet"
    if has_suffix(name, (".csv", ".tsv")):
        return "csv"
    return None


def _function_name(node: exp.Expression) -> str | None:
    if isinstance(node, exp.ReadParquet):
        return "read_parquet"
    if isinstance(node, exp.ReadCSV):
        return "read_csv"
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    return None


def _paths(node: exp.Expression, what: str) -> list[str] | str:
    if isinstance(node, exp.Literal) and node.is_string:
        return node.this
    if (
        isinstance(node, exp.Array)
        and node.expressions
        and all(isinstance(e, exp.Literal) and e.is_string for e in node.expressions)
    ):
        return [e.this for e in node.expressions]
    raise BinderError(f"{what} takes a file name or a list of file names as text, got {node.sql(dialect='duckdb')}")


def _option_value(node: exp.Expression, fn: str, name: str):
    """An option's constant: text, a number, a boolean, a list (a tuple) or a
    struct (a tuple of (key, value) pairs)."""
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        try:
            return int(node.this)
        except ValueError:
            raise BinderError(f"{fn} option {name} takes a whole number, got {node.this}") from None
    if isinstance(node, exp.Array):
        return tuple(_option_value(e, fn, name) for e in node.expressions)
    if isinstance(node, exp.Struct):
        pairs = []
        for e in node.expressions:
            if not isinstance(e, (exp.PropertyEQ, exp.EQ, exp.Slice)):
                raise NotSupported(f"{fn} option {name} = {node.sql(dialect='duckdb')}")
            key = e.this.name if isinstance(e.this, (exp.Identifier, exp.Column)) else _option_value(e.this, fn, name)
            pairs.append((str(key), _option_value(e.expression, fn, name)))
        return tuple(pairs)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return -_option_value(node.this, fn, name)  # sample_size = -1
    raise NotSupported(f"{fn} option {name} = {node.sql(dialect='duckdb')}")


def _options(args: list[exp.Expression], fn: str):
    """The named options, in order: (name, a function giving its constant value)."""
    for a in args:
        if not isinstance(a, (exp.EQ, exp.PropertyEQ)):
            raise BinderError(f"{fn} takes named options after the files (name = value), got {a.sql(dialect='duckdb')}")
        name = a.this.name.lower()
        yield name, (lambda a=a, name=name: _option_value(a.expression, fn, name))


def _reference(node: exp.Table, catalog, ctes: set[str]):
    """(kind, paths, options, default alias) when the table reads files, else None."""
    fn = _function_name(node.this)
    if fn is not None:
        function = BUILTINS.lookup(fn, TABLE)
        if function is None:
            return None  # another table function: refused by the binder
        if isinstance(node.this, exp.ReadCSV):
            first, rest = node.this.this, list(node.this.expressions)
        else:
            args = list(node.this.expressions)
            if not args:
                raise BinderError(f"{fn} needs a file name")
            first, rest = args[0], args[1:]
        kind, paths, options = function.bind(_paths(first, fn), _options(rest, fn), fn)
        return kind, paths, options, fn, first
    if not isinstance(node.this, exp.Identifier) or node.db or node.args.get("catalog"):
        return None
    name = node.name
    if name.lower() in ctes or catalog.has_table(name) or name.lower() in getattr(catalog, "_views", {}):
        return None
    kind = file_kind(name)
    if kind is None:
        return None
    stem = os.path.basename(name.rstrip("/"))
    return kind, name, {}, stem.split(".")[0] or stem, node


def _system_reference(node: exp.Table, catalog, ctes: set[str]) -> str | None:
    """The system table a FROM item names (lower case), else None."""
    system = getattr(catalog, "system_tables", None)
    if not system or not isinstance(node.this, exp.Identifier) or node.args.get("catalog"):
        return None
    name = node.name.lower()
    if name not in system or name in ctes or catalog.has_table(name) or name in getattr(catalog, "_views", {}):
        return None
    return name


def resolve_file_references(ast: exp.Expression, catalog, copy: bool = True) -> exp.Expression:
    """The query with each file reference replaced by the catalog table that
    reads it (``catalog.file_table(kind, paths, options)`` gives its name)."""
    if not hasattr(catalog, "file_table"):
        return ast
    ctes = {c.alias_or_name.lower() for w in ast.find_all(exp.With) for c in w.expressions}

    def fix(node):
        if not isinstance(node, exp.Table):
            return node
        system = _system_reference(node, catalog, ctes)
        if system is not None:
            alias = node.args.get("alias")
            return exp.Table(
                this=exp.to_identifier(catalog.system_table(system), quoted=True),
                alias=alias.copy() if alias is not None else exp.TableAlias(this=exp.to_identifier(system)),
            )
        ref = _reference(node, catalog, ctes)
        if ref is None:
            return node
        kind, paths, options, default_alias, where = ref
        try:
            name = catalog.file_table(kind, paths, options)
        except GlintIOError as e:
            raise GlintIOError(f"{e}{position(where)}") from None
        alias = node.args.get("alias")
        new_alias = exp.TableAlias(
            this=alias.this if alias is not None and alias.this else exp.to_identifier(default_alias),
            columns=alias.columns if alias is not None else None,
        )
        return exp.Table(this=exp.to_identifier(name, quoted=True), alias=new_alias)

    return ast.transform(fix, copy=copy)
