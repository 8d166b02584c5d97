"""Name resolution scopes used while binding a query.

A scope maps each FROM source's alias to its columns; scopes of subqueries
point at their parent so correlated references resolve outward.

>>> from glint.columnar import types as T
>>> from glint.plan.expr import Field
>>> outer = Scope(None); outer.add("t", {"a": Field(1, "a", T.INTEGER)})
>>> inner = Scope(outer); inner.add("u", {"b": Field(2, "b", T.INTEGER)})
>>> inner.resolve("t", "a")
(a#1, True)
"""

from __future__ import annotations

from glint.errors import ColumnNotFound, did_you_mean
from glint.plan.expr import Field


class Scope:
    __slots__ = ("parent", "sources", "outer_refs")

    def __init__(self, parent: Scope | None):
        self.parent = parent
        self.sources: dict[str, dict[str, Field]] = {}
        self.outer_refs: set[int] = set()  # ids of outer fields this scope used

    def add(self, alias: str, columns: dict[str, Field]) -> None:
        self.sources[alias] = columns

    def merged(self, other: Scope) -> Scope:
        s = Scope(self.parent)
        s.sources = {**self.sources, **other.sources}
        return s

    def all_fields(self) -> list[Field]:
        return [f for cols in self.sources.values() for f in cols.values()]

    def resolve(self, table: str | None, name: str) -> tuple[Field, bool]:
        """(field, is_outer) for a column reference."""
        scope, outer = self, False
        while scope is not None:
            f = scope._lookup(table, name)
            if f is not None:
                if outer:
                    self.outer_refs.add(f.id)
                return f, outer
            scope, outer = scope.parent, True
        names = [c for s in self._chain() for cols in s.sources.values() for c in cols]
        ref = f"{table}.{name}" if table else name
        raise ColumnNotFound(f'Column "{ref}" not found{did_you_mean(name, names)}')

    def label(self, table: str | None, name: str) -> str | None:
        """The name a column reference resolves to, as its source spells it
        (a result column referenced as ``X`` is named ``x`` after its table's
        column)."""
        scope = self
        while scope is not None:
            hit = scope._find(table, name)
            if hit is not None:
                return hit[0]
            scope = scope.parent
        return None

    def _lookup(self, table, name):
        hit = self._find(table, name)
        return None if hit is None else hit[1]

    def _find(self, table, name) -> tuple[str, Field] | None:
        """(the source's spelling, field) of a column: names resolve regardless
        of case, as DuckDB's do (an exact match first)."""
        sources = self.sources.values() if table is None else [self.sources.get(table) or {}]
        for cols in sources:
            if name in cols:
                return name, cols[name]
        folded = name.lower()
        for cols in sources:
            for key, f in cols.items():
                if key.lower() == folded:
                    return key, f
        return None

    def _chain(self):
        s = self
        while s is not None:
            yield s
            s = s.parent
