"""Settings in SQL, as DuckDB has them: ``SET name = value`` (or ``TO``),
``RESET name``, ``RESET ALL``; ``current_setting('name')`` and the table
function ``glint_settings()`` (name, value, description, input_type, scope:
DuckDB's ``duckdb_settings()``), which are resolved before a query is bound
(:func:`resolve_setting_functions`). Names are case-insensitive; an unknown
one is an error naming the close ones; a setting fixed when the connection
(or the process's pools) was created refuses SET. See docs/settings.md.

>>> import glint
>>> con = glint.connect(device="cpu")
>>> con.sql("SET chunk_rows = 1000")
>>> con.sql("SELECT current_setting('CHUNK_ROWS') AS c").fetchall()
[(1000,)]
>>> con.sql("SELECT value, scope FROM glint_settings() WHERE name = 'read_ahead'").fetchall()
[('true', 'connection')]
>>> con.sql("SET spill_dir = '/tmp'")
Traceback (most recent call last):
...
glint.errors.GlintError: spill_dir cannot be changed on an open connection: it is fixed when the connection is \
created (pass spill_dir=... to glint.connect(), or set GLINT_SPILL_DIR)
"""

from __future__ import annotations

from sqlglot import exp

from glint.errors import BinderError, GlintError, ParseError
from glint.runtime.settings import all_settings, setting

_RESET_SCOPES = ("LOCAL", "SESSION", "GLOBAL")  # RESET [scope] name: one scope here
SETTINGS_FUNCTION = "glint_settings"
SETTINGS_COLUMNS = ("name", "value", "description", "input_type", "scope")


def set_statement(con, stmt) -> None:
    """``SET name = value [, name = value ...]`` (``SET [LOCAL | SESSION |
    GLOBAL] name TO value`` too: a connection has one scope)."""
    if not isinstance(stmt, exp.Set):
        raise ParseError(f"SET needs a name and a value (SET name = value), got {stmt.sql(dialect='duckdb')!r}")
    for item in stmt.expressions:
        eq = item.this if isinstance(item, exp.SetItem) else None
        if not isinstance(eq, exp.EQ) or not isinstance(eq.this, (exp.Column, exp.Identifier)):
            raise ParseError(f"SET needs a name and a value (SET name = value), got {item.sql(dialect='duckdb')!r}")
        con.set_setting(eq.this.name, _value(eq.expression, eq.this.name))


def _value(node: exp.Expression, name: str):
    """A SET value as Python: a text, a whole number, a boolean; a bare word
    (SET x = on) as its text."""
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        return int(text) if text.lstrip("-").isdigit() else text
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        value = _value(node.this, name)
        return -value if isinstance(value, int) else f"-{value}"
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, (exp.Var, exp.Identifier, exp.Column)) and node.name:
        return node.name
    raise GlintError(f"{name} takes a constant value, got {node.sql(dialect='duckdb')}")


def reset_statement(con, stmt) -> None:
    """``RESET name`` / ``RESET ALL``: the values the connection was opened
    with."""
    words = str(stmt.expression.name if stmt.expression is not None else "").split()
    if words and words[0].upper() in _RESET_SCOPES:
        words = words[1:]
    if len(words) != 1:
        raise ParseError("RESET takes the name of a setting, or ALL")
    con.reset_setting(None if words[0].upper() == "ALL" else words[0].strip('"'))


def resolve_setting_functions(con, ast: exp.Expression) -> exp.Expression:
    """A query with ``current_setting('name')`` replaced by the setting's
    value (a constant, as of now) and ``glint_settings()`` in FROM by a
    VALUES list of every setting (a copy: the query may be a view's body)."""

    def calls(tree):
        return [
            n for n in tree.find_all(exp.Anonymous) if str(n.this).lower() in ("current_setting", SETTINGS_FUNCTION)
        ]

    if not calls(ast):
        return ast
    ast = ast.copy()
    for node in calls(ast):
        if str(node.this).lower() == "current_setting":
            node.replace(_current_setting(con, node))
        elif isinstance(node.parent, exp.Table):
            table = node.parent
            table.replace(_settings_values(con, table.alias_or_name if table.alias else SETTINGS_FUNCTION))
        else:
            raise BinderError(f"{SETTINGS_FUNCTION}() is a table function: use it in FROM")
    return ast


def _current_setting(con, node: exp.Anonymous) -> exp.Expression:
    args = node.expressions
    if len(args) != 1 or not (isinstance(args[0], exp.Literal) and args[0].is_string):
        raise BinderError("current_setting takes the name of a setting as a constant text")
    s = setting(args[0].this)
    value = s.sql_value(con.setting_value(s.name))
    if value is None:
        return exp.cast(exp.Null(), "BIGINT" if s.kind == "integer" else "VARCHAR")
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(value)
    return exp.Literal.string(value)


def _settings_values(con, alias: str) -> exp.Expression:
    rows = []
    for s in all_settings():
        value = s.text(con.setting_value(s.name))
        cells = [s.name, value, s.description, s.input_type, s.scope]
        rows.append(
            exp.Tuple(
                expressions=[exp.cast(exp.Null(), "VARCHAR") if c is None else exp.Literal.string(c) for c in cells]
            )
        )
    return exp.Values(
        expressions=rows,
        alias=exp.TableAlias(this=exp.to_identifier(alias), columns=[exp.to_identifier(c) for c in SETTINGS_COLUMNS]),
    )
