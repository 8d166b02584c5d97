"""Where a node stands in the SQL text, for error messages.

>>> import sqlglot
>>> t = sqlglot.parse_one("SELECT *\\nFROM nosuch", read="duckdb").find(sqlglot.exp.Table)
>>> position(t)
' at line 2, column 6'
"""

from __future__ import annotations

from sqlglot import exp


def position(node: exp.Expression) -> str:
    """' at line L, column C' where the node starts (empty when unknown)."""
    meta = node.this.meta if isinstance(node.this, exp.Expression) else node.meta
    if meta and "line" in meta:
        col = meta["col"] - (meta["end"] - meta["start"]) if "end" in meta else meta["col"]
        return f" at line {meta['line']}, column {col}"
    return ""
