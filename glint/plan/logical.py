"""Logical plan: immutable relational-algebra nodes over typed expressions.

Each node declares its `children` and its output `schema` (a tuple of
:class:`~glint.plan.expr.Field`); rewrites build new nodes with
``with_children``. ``explain`` prints a stable, indented tree.
"""
from __future__ import annotations

from dataclasses import dataclass, fields as dc_fields, replace

from .expr import AggCall, Expr, Field

JOIN_KINDS = ("inner", "left", "right", "full", "semi", "anti", "mark", "single")


class LogicalNode:
    __slots__ = ()

    @property
    def children(self) -> tuple["LogicalNode", ...]:
        return tuple(getattr(self, f.name) for f in dc_fields(self) if f.name in ("child", "left", "right"))

    def with_children(self, children) -> "LogicalNode":
        names = [f.name for f in dc_fields(self) if f.name in ("child", "left", "right")]
        return replace(self, **dict(zip(names, children)))

    @property
    def schema(self) -> tuple[Field, ...]:
        raise NotImplementedError

    def label(self) -> str:
        raise NotImplementedError

    def explain(self, indent: int = 0, estimate=None) -> str:
        est = ""
        if estimate is not None:
            est = f"  (~{estimate(self):,.0f} rows)"
        lines = ["  " * indent + self.label() + est]
        for c in self.children:
            lines.append(c.explain(indent + 1, estimate))
        return "\n".join(lines)

    def transform_up(self, fn) -> "LogicalNode":
        kids = self.children
        node = self.with_children(tuple(k.transform_up(fn) for k in kids)) if kids else self
        return fn(node)


@dataclass(frozen=True, slots=True)
class Scan(LogicalNode):
    table: str
    columns: tuple[str, ...]        # table column names, aligned with `fields`
    fields: tuple[Field, ...]
    alias: str = ""

    @property
    def schema(self):
        return self.fields

    def label(self):
        cols = ", ".join(f"{c}#{f.id}" for c, f in zip(self.columns, self.fields))
        a = f" AS {self.alias}" if self.alias and self.alias != self.table else ""
        return f"Scan {self.table}{a} [{cols}]"


@dataclass(frozen=True, slots=True)
class OneRow(LogicalNode):
    """The single empty row a SELECT without FROM reads."""

    @property
    def schema(self):
        return ()

    def label(self):
        return "OneRow"


@dataclass(frozen=True, slots=True)
class Filter(LogicalNode):
    child: LogicalNode
    predicate: Expr

    @property
    def schema(self):
        return self.child.schema

    def label(self):
        return f"Filter {self.predicate!r}"


@dataclass(frozen=True, slots=True)
class Project(LogicalNode):
    child: LogicalNode
    exprs: tuple[tuple[Field, Expr], ...]

    @property
    def schema(self):
        return tuple(f for f, _ in self.exprs)

    def label(self):
        return "Project " + ", ".join(
            repr(f) if isinstance(e, type(None)) or repr(e) == repr(f) else f"{e!r} AS {f!r}" for f, e in self.exprs)


@dataclass(frozen=True, slots=True)
class Join(LogicalNode):
    """Joins of every kind. `mark` is the BOOLEAN field a mark join adds;
    `null_aware` = (outer expr, inner expr) of an IN / NOT IN, whose NULLs
    make the mark NULL instead of FALSE."""
    left: LogicalNode
    right: LogicalNode
    kind: str
    condition: Expr | None = None
    mark: Field | None = None
    null_aware: tuple[Expr, Expr] | None = None

    @property
    def schema(self):
        if self.kind in ("semi", "anti"):
            return self.left.schema
        if self.kind == "mark":
            return self.left.schema + (self.mark,)
        return self.left.schema + self.right.schema

    def label(self):
        cond = f" ON {self.condition!r}" if self.condition is not None else ""
        na = f" IN-key {self.null_aware[0]!r} = {self.null_aware[1]!r}" if self.null_aware else ""
        mk = f" -> {self.mark!r}" if self.mark else ""
        return f"Join {self.kind.upper()}{cond}{na}{mk}"


@dataclass(frozen=True, slots=True)
class Aggregate(LogicalNode):
    child: LogicalNode
    groups: tuple[tuple[Field, Expr], ...]
    aggs: tuple[tuple[Field, AggCall], ...]

    @property
    def schema(self):
        return tuple(f for f, _ in self.groups) + tuple(f for f, _ in self.aggs)

    def label(self):
        g = ", ".join(f"{e!r} AS {f!r}" for f, e in self.groups)
        a = ", ".join(f"{e!r} AS {f!r}" for f, e in self.aggs)
        return f"Aggregate groups=[{g}] aggs=[{a}]"


@dataclass(frozen=True, slots=True)
class SortKey:
    expr: Expr
    descending: bool = False
    nulls_first: bool = False

    def __repr__(self):
        return f"{self.expr!r} {'DESC' if self.descending else 'ASC'} NULLS {'FIRST' if self.nulls_first else 'LAST'}"


@dataclass(frozen=True, slots=True)
class Sort(LogicalNode):
    child: LogicalNode
    keys: tuple[SortKey, ...]

    @property
    def schema(self):
        return self.child.schema

    def label(self):
        return "Sort " + ", ".join(map(repr, self.keys))


@dataclass(frozen=True, slots=True)
class Limit(LogicalNode):
    child: LogicalNode
    limit: int | None
    offset: int = 0

    @property
    def schema(self):
        return self.child.schema

    def label(self):
        return f"Limit {self.limit if self.limit is not None else 'ALL'} OFFSET {self.offset}"


@dataclass(frozen=True, slots=True)
class SetOp(LogicalNode):
    """UNION / INTERSECT / EXCEPT; children already project the common types."""
    left: LogicalNode
    right: LogicalNode
    kind: str          # union | intersect | except
    all: bool
    fields: tuple[Field, ...]

    @property
    def schema(self):
        return self.fields

    def label(self):
        return f"{self.kind.upper()}{' ALL' if self.all else ''} -> [{', '.join(map(repr, self.fields))}]"
