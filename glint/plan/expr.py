"""Typed, immutable expressions of glint's logical plan.

Columns are referenced by a plan-wide integer id (a :class:`Field`), never by
name, so rewrites can move expressions between nodes without re-resolving.

>>> from glint.columnar import types as T
>>> a = ColRef(Field(1, "a", T.INTEGER))
>>> e = Call("add", (a, Literal(1, T.INTEGER)), T.INTEGER)
>>> e
(a#1 + 1)
>>> sorted(f.id for f in e.fields())
[1]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from glint.columnar.types import DataType

_INFIX = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "intdiv": "//",
    "mod": "%",
    "eq": "=",
    "ne": "<>",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "and": "AND",
    "or": "OR",
    "concat": "||",
    "is_not_distinct": "IS NOT DISTINCT FROM",
    "is_distinct": "IS DISTINCT FROM",
}


@dataclass(frozen=True, slots=True)
class Field:
    """A column of a plan node's output: a unique id, a display name and a type."""

    id: int
    name: str
    type: DataType

    def __repr__(self) -> str:
        return f"{self.name}#{self.id}"


class Expr:
    __slots__ = ()
    type: DataType

    @property
    def children(self) -> tuple[Expr, ...]:
        return ()

    def with_children(self, children) -> Expr:
        return self

    def walk(self) -> Iterator[Expr]:
        yield self
        for c in self.children:
            yield from c.walk()

    def fields(self) -> set[Field]:
        return {e.field for e in self.walk() if isinstance(e, ColRef)}

    def transform(self, fn) -> Expr:
        """Bottom-up rewrite: fn(node with rewritten children) -> node."""
        kids = self.children
        node = self.with_children(tuple(k.transform(fn) for k in kids)) if kids else self
        return fn(node)


@dataclass(frozen=True, slots=True)
class ColRef(Expr):
    field: Field

    @property
    def type(self) -> DataType:
        return self.field.type

    def __repr__(self) -> str:
        return repr(self.field)


@dataclass(frozen=True, slots=True)
class Literal(Expr):
    """A constant. DECIMAL values are scaled ints, DATE values days since 1970,
    TIMESTAMP values microseconds since 1970, INTERVAL values (months, days,
    microseconds)."""

    value: object
    type: DataType

    def __repr__(self) -> str:
        if self.value is None:
            return "NULL"
        if self.type.kind == "DECIMAL":
            s = self.type.scale
            v = abs(self.value)
            txt = f"{v // 10**s}.{v % 10**s:0{s}d}" if s else str(v)
            return ("-" if self.value < 0 else "") + txt
        if self.type.kind == "DATE":
            from datetime import date, timedelta

            return f"DATE '{date(1970, 1, 1) + timedelta(days=self.value)}'"
        if self.type.kind == "TIMESTAMP":
            from glint.columnar.timestamp_text import format_timestamp

            return f"TIMESTAMP '{format_timestamp(self.value)}'"
        if self.type.kind == "INTERVAL":
            months, days, micros = self.value
            return f"INTERVAL '{months} months {days} days {micros} microseconds'"
        if isinstance(self.value, str):
            return "'" + self.value.replace("'", "''") + "'"
        return str(self.value)


@dataclass(frozen=True, slots=True)
class Call(Expr):
    """A scalar function or operator. `params` holds constant, non-expression
    arguments (a LIKE pattern, an EXTRACT field, an interval)."""

    fn: str
    args: tuple[Expr, ...]
    type: DataType
    params: tuple = ()

    @property
    def children(self):
        return self.args

    def with_children(self, children):
        return Call(self.fn, tuple(children), self.type, self.params)

    def __repr__(self) -> str:
        if self.fn in _INFIX and len(self.args) == 2:
            return f"({self.args[0]!r} {_INFIX[self.fn]} {self.args[1]!r})"
        if self.fn == "cast":
            return f"CAST({self.args[0]!r} AS {self.type})"
        p = "".join(f", {v!r}" for v in self.params)
        return f"{self.fn}({', '.join(map(repr, self.args))}{p})"


@dataclass(frozen=True, slots=True)
class Case(Expr):
    """CASE WHEN c1 THEN v1 ... ELSE d END (a missing ELSE is a NULL Literal)."""

    whens: tuple[tuple[Expr, Expr], ...]
    default: Expr
    type: DataType

    @property
    def children(self):
        return tuple(x for w in self.whens for x in w) + (self.default,)

    def with_children(self, children):
        n = len(self.whens)
        whens = tuple((children[2 * i], children[2 * i + 1]) for i in range(n))
        return Case(whens, children[2 * n], self.type)

    def __repr__(self) -> str:
        w = " ".join(f"WHEN {c!r} THEN {v!r}" for c, v in self.whens)
        return f"CASE {w} ELSE {self.default!r} END"


@dataclass(frozen=True, slots=True)
class AggCall(Expr):
    """An aggregate: ``fn(args)`` [DISTINCT] [ORDER BY ``order``] [FILTER (WHERE
    ``filter``)]. Functions and what they keep are in :mod:`glint.plan.aggregates`.

    ``order`` holds :class:`~glint.plan.logical.SortKey` s (only STRING_AGG's
    value depends on it); ``params`` the constant arguments (STRING_AGG's
    separator, a quantile's :class:`~glint.plan.aggregates.Quantile`).

    >>> from glint.columnar import types as T
    >>> x = ColRef(Field(1, "x", T.INTEGER))
    >>> AggCall("sum", (x,), T.HUGEINT, filter=Call("gt", (x, Literal(0, T.INTEGER)), T.BOOLEAN))
    sum(x#1) FILTER (WHERE (x#1 > 0))
    """

    fn: str
    args: tuple[Expr, ...]
    type: DataType
    distinct: bool = False
    filter: Expr | None = None
    order: tuple = ()
    params: tuple = ()

    @property
    def children(self):
        return self.args + ((self.filter,) if self.filter is not None else ()) + tuple(k.expr for k in self.order)

    def with_children(self, children):
        n = len(self.args)
        f = children[n] if self.filter is not None else None
        rest = children[n + (self.filter is not None) :]
        order = tuple(type(k)(e, k.descending, k.nulls_first) for k, e in zip(self.order, rest))
        return AggCall(self.fn, tuple(children[:n]), self.type, self.distinct, f, order, self.params)

    def __repr__(self) -> str:
        if self.fn == "count_star":
            text = "count_star()"
        else:
            inner = ("DISTINCT " if self.distinct else "") + ", ".join(map(repr, self.args))
            inner += "".join(f", {p!r}" for p in self.params)
            if self.order:
                inner += " ORDER BY " + ", ".join(map(repr, self.order))
            text = f"{self.fn}({inner})"
        return text + (f" FILTER (WHERE {self.filter!r})" if self.filter is not None else "")


def conjuncts(e: Expr | None) -> list[Expr]:
    """Split an AND tree into its parts.

    >>> from glint.columnar import types as T
    >>> t = Literal(True, T.BOOLEAN)
    >>> len(conjuncts(Call("and", (t, Call("and", (t, t), T.BOOLEAN)), T.BOOLEAN)))
    3
    """
    if e is None:
        return []
    if isinstance(e, Call) and e.fn == "and":
        return [p for a in e.args for p in conjuncts(a)]
    return [e]


def conjoin(parts) -> Expr | None:
    from glint.columnar.types import BOOLEAN

    parts = list(parts)
    if not parts:
        return None
    out = parts[0]
    for p in parts[1:]:
        out = Call("and", (out, p), BOOLEAN)
    return out


def substitute(e: Expr, mapping: dict[int, Expr]) -> Expr:
    """Replace column references by the expressions they stand for."""
    return e.transform(lambda n: mapping.get(n.field.id, n) if isinstance(n, ColRef) else n)
