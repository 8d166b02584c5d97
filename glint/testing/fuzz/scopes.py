"""What the query generator tracks while it writes a query: the sources of a
FROM clause (base tables, derived tables, CTEs, VALUES lists) with their
columns' types and join-key classes, the scope an expression may refer to,
and the SELECTs and queries it has written."""

from __future__ import annotations

from dataclasses import dataclass, field

from glint.testing.fuzz.sqltypes import E, T, matches


@dataclass
class Source:
    alias: str
    cols: list[tuple[str, T, str | None, bool]]  # (name, type, key class, nosum)
    rows: int
    base: str | None = None  # the table name, for base tables

    def columns_of(self, kind: str):
        return [c for c in self.cols if matches(c[1], kind)]


@dataclass
class Scope:
    sources: list[Source]
    outer: Scope | None = None
    group: list[E] | None = None  # group keys, when aggregated

    def columns(self, kind: str | None = None):
        out = []
        for s in self.sources:
            for c in s.cols:
                if kind is None or matches(c[1], kind):
                    out.append((s, c))
        return out


@dataclass
class Select:
    sql: str
    types: list[T]
    keys: list[str | None]
    nosum: list[bool]


@dataclass
class GeneratedQuery:
    sql: str
    ordered: bool  # the outer ORDER BY fixes the row order
    features: set[str] = field(default_factory=set)
    ctas: bool = False  # glint stores the result in a table and reads it back
