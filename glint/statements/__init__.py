"""Statements that change tables or write files, run on a connection:
CREATE TABLE [AS], DROP TABLE, INSERT, DELETE, UPDATE, TRUNCATE and COPY;
and SET / RESET of the connection's settings (glint.statements.settings).

Tables created in SQL are in-memory tables of the connection (Arrow data,
chunked and cached on the device like registered tables). Each statement
binds and plans like a query, runs it, and then changes the catalog, so a
statement that fails (a failed CAST, a NOT NULL violation) changes nothing.
Statements that add or change rows return DuckDB's one-row ``Count``.

>>> import glint
>>> con = glint.connect(device="cpu")
>>> con.sql("CREATE TABLE t (a INTEGER NOT NULL, s VARCHAR DEFAULT 'x')")
>>> con.sql("INSERT INTO t (a) VALUES (1), ('2')").fetchall()
[(2,)]
>>> con.sql("UPDATE t SET s = s || a WHERE a > 1").fetchall(), con.sql("SELECT * FROM t").fetchall()
([(1,)], [(1, 'x'), (2, 'x2')])
>>> con.sql("INSERT INTO t VALUES (NULL, 'y')")
Traceback (most recent call last):
...
glint.errors.ConstraintError: Constraint Error: NOT NULL constraint failed: t.a
"""

from __future__ import annotations

from glint.errors import NotSupported
from glint.statements import copy, modify, settings, tables

_HANDLERS = {
    "create_table": tables.create_table,
    "drop_table": tables.drop_table,
    "insert": tables.insert,
    "truncate": tables.truncate,
    "delete": modify.delete,
    "update": modify.update,
    "copy": copy.copy,
    "set": settings.set_statement,
    "reset": settings.reset_statement,
}


def run_statement(con, stmt, kind: str):
    """Runs one statement: its answer as an Arrow table (``Count``), or None."""
    handler = _HANDLERS.get(kind)
    if handler is None:
        raise NotSupported(f"{kind.replace('_', ' ').upper()} statements")
    return handler(con, stmt)
