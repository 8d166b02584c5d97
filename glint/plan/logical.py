"""Logical plan: immutable relational-algebra nodes over typed expressions.

Each node declares its `children` and its output `schema` (a tuple of
:class:`~glint.plan.expr.Field`); rewrites build new nodes with
``with_children``. ``expressions()`` lists every expression a node evaluates,
and ``with_expressions`` / ``map_expressions`` rebuild it with new ones, so a
rule that rewrites or inspects expressions needs no case per node type.
``explain`` prints a stable, indented tree.

>>> from glint.columnar import types as T
>>> from glint.plan.expr import ColRef, Literal
>>> a = Field(1, "a", T.INTEGER)
>>> f = Filter(Scan("t", ("a",), (a,)), ColRef(a))
>>> f.expressions()
(a#1,)
>>> f.map_expressions(lambda e: Literal(True, T.BOOLEAN)).label()
'Filter True'
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from dataclasses import fields as dc_fields

from glint.plan.aggregates import WINDOW_AGGREGATES
from glint.plan.expr import AggCall, Expr, Field

JOIN_KINDS = ("inner", "left", "right", "full", "semi", "anti", "mark", "single")


class LogicalNode:
    __slots__ = ()

    @property
    def children(self) -> tuple[LogicalNode, ...]:
        return tuple(getattr(self, f.name) for f in dc_fields(self) if f.name in ("child", "left", "right"))

    def with_children(self, children) -> LogicalNode:
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

    def expressions(self) -> tuple[Expr, ...]:
        """Every expression the node evaluates, in a fixed order (the order
        ``with_expressions`` takes them back in)."""
        return ()

    def with_expressions(self, exprs) -> LogicalNode:
        """The same node with its expressions replaced, in ``expressions()`` order."""
        return self

    def map_expressions(self, fn) -> LogicalNode:
        """The same node with ``fn`` applied to each of its expressions."""
        exprs = self.expressions()
        return self.with_expressions(tuple(fn(e) for e in exprs)) if exprs else self

    def fields_read(self) -> set[int]:
        """Ids of the fields the node's expressions read."""
        return {f.id for e in self.expressions() for f in e.fields()}

    def transform_up(self, fn) -> LogicalNode:
        kids = self.children
        node = self.with_children(tuple(k.transform_up(fn) for k in kids)) if kids else self
        return fn(node)


@dataclass(frozen=True, slots=True)
class Scan(LogicalNode):
    table: str
    columns: tuple[str, ...]  # table column names, aligned with `fields`
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
class Values(LogicalNode):
    """Rows of constant expressions (a VALUES list), each already of its
    column's type.

    >>> from glint.columnar import types as T
    >>> from glint.plan.expr import Field, Literal
    >>> Values(((Literal(1, T.INTEGER),), (Literal(2, T.INTEGER),)), (Field(1, "col0", T.INTEGER),)).label()
    'Values 2 rows [col0#1]'
    """

    rows: tuple[tuple[Expr, ...], ...]
    fields: tuple[Field, ...]

    @property
    def schema(self):
        return self.fields

    def expressions(self):
        return tuple(e for r in self.rows for e in r)

    def with_expressions(self, exprs):
        w = len(self.fields)
        return Values(tuple(tuple(exprs[i * w : (i + 1) * w]) for i in range(len(self.rows))), self.fields)

    def label(self):
        return f"Values {len(self.rows)} row{'s' if len(self.rows) != 1 else ''} [{', '.join(map(repr, self.fields))}]"


@dataclass(frozen=True, slots=True)
class Series(LogicalNode):
    """The ``count`` values ``start``, ``start + step``, ... of one BIGINT or
    TIMESTAMP (microseconds) column, in order: generate_series and range.

    >>> from glint.columnar import types as T
    >>> Series(1, 2, 5, Field(1, "range", T.BIGINT)).label()
    'Series 5 values from 1 by 2 [range#1]'
    """

    start: int
    step: int
    count: int
    field: Field

    @property
    def schema(self):
        return (self.field,)

    def label(self):
        return f"Series {self.count} value{'s' if self.count != 1 else ''} from {self.start} by {self.step} [{self.field!r}]"


@dataclass(frozen=True, slots=True)
class SeriesPerRow(LogicalNode):
    """Each row of ``child`` once per value of its own series: ``start``,
    ``start + step``, ... before ``stop`` (or reaching it, when
    ``inclusive``), in ``field`` (generate_series / range whose arguments read
    columns: ``FROM t, range(t.n)``). BIGINT or TIMESTAMP values (microseconds,
    ``step`` then a number of them); a NULL argument or a step away from the
    stop gives no value, and with ``keep_empty`` (LEFT JOIN) such a row stays
    once, with NULL."""

    child: LogicalNode
    start: Expr
    stop: Expr
    step: Expr
    inclusive: bool
    field: Field
    keep_empty: bool = False

    @property
    def schema(self):
        return self.child.schema + (self.field,)

    def expressions(self):
        return (self.start, self.stop, self.step)

    def with_expressions(self, exprs):
        return replace(self, start=exprs[0], stop=exprs[1], step=exprs[2])

    def label(self):
        fn = "generate_series" if self.inclusive else "range"
        left = " (LEFT)" if self.keep_empty else ""
        return f"SeriesPerRow {fn}({self.start!r}, {self.stop!r}, {self.step!r}){left} -> {self.field!r}"


@dataclass(frozen=True, slots=True)
class Filter(LogicalNode):
    child: LogicalNode
    predicate: Expr

    @property
    def schema(self):
        return self.child.schema

    def expressions(self):
        return (self.predicate,)

    def with_expressions(self, exprs):
        return Filter(self.child, exprs[0])

    def label(self):
        return f"Filter {self.predicate!r}"


@dataclass(frozen=True, slots=True)
class Project(LogicalNode):
    child: LogicalNode
    exprs: tuple[tuple[Field, Expr], ...]

    @property
    def schema(self):
        return tuple(f for f, _ in self.exprs)

    def expressions(self):
        return tuple(e for _, e in self.exprs)

    def with_expressions(self, exprs):
        return Project(self.child, tuple((f, e) for (f, _), e in zip(self.exprs, exprs)))

    def label(self):
        return "Project " + ", ".join(
            repr(f) if isinstance(e, type(None)) or repr(e) == repr(f) else f"{e!r} AS {f!r}" for f, e in self.exprs
        )


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

    def expressions(self):
        cond = (self.condition,) if self.condition is not None else ()
        return cond + tuple(self.null_aware or ())

    def with_expressions(self, exprs):
        cond = exprs[0] if self.condition is not None else None
        rest = tuple(exprs[self.condition is not None :])
        return Join(self.left, self.right, self.kind, cond, self.mark, rest if self.null_aware else None)

    def label(self):
        cond = f" ON {self.condition!r}" if self.condition is not None else ""
        na = f" IN-key {self.null_aware[0]!r} = {self.null_aware[1]!r}" if self.null_aware else ""
        mk = f" -> {self.mark!r}" if self.mark else ""
        return f"Join {self.kind.upper()}{cond}{na}{mk}"


@dataclass(frozen=True, slots=True)
class GroupingSets:
    """GROUP BY GROUPING SETS / ROLLUP / CUBE: each set lists the positions
    of the aggregate's groups it keeps (the others are NULL in its rows);
    ``field`` (INTEGER) numbers the set each output row belongs to, so a set
    listed twice gives its rows twice, as in DuckDB.

    >>> from glint.columnar import types as T
    >>> gs = GroupingSets(((0, 1), (0,), ()), Field(9, "grouping_set", T.INTEGER))
    >>> gs.common(), gs.masks((0, 1)), gs
    ((), (0, 1, 3), sets=[(0, 1), (0,), ()])
    """

    sets: tuple[tuple[int, ...], ...]
    field: Field

    def common(self) -> tuple[int, ...]:
        """The positions of the groups every set keeps (never NULLed)."""
        return tuple(sorted(set.intersection(*(set(s) for s in self.sets))))

    def masks(self, positions: tuple[int, ...]) -> tuple[int, ...]:
        """GROUPING(groups at ``positions``) of each set: one bit per argument,
        the first the most significant, set where the set leaves it out."""
        out = []
        for s in self.sets:
            m = 0
            for p in positions:
                m = (m << 1) | (p not in s)
            out.append(m)
        return tuple(out)

    def __repr__(self):
        return "sets=[" + ", ".join(f"({', '.join(map(str, s))}{',' if len(s) == 1 else ''})" for s in self.sets) + "]"


@dataclass(frozen=True, slots=True)
class Aggregate(LogicalNode):
    """GROUP BY ``groups`` computing ``aggs``; with ``grouping``, once per
    grouping set over the same input (the set's number is a column too)."""

    child: LogicalNode
    groups: tuple[tuple[Field, Expr], ...]
    aggs: tuple[tuple[Field, AggCall], ...]
    grouping: GroupingSets | None = None

    @property
    def schema(self):
        gs = (self.grouping.field,) if self.grouping is not None else ()
        return tuple(f for f, _ in self.groups) + gs + tuple(f for f, _ in self.aggs)

    def expressions(self):
        return tuple(e for _, e in self.groups) + tuple(a for _, a in self.aggs)

    def with_expressions(self, exprs):
        n = len(self.groups)
        return replace(
            self,
            groups=tuple((f, e) for (f, _), e in zip(self.groups, exprs[:n])),
            aggs=tuple((f, a) for (f, _), a in zip(self.aggs, exprs[n:])),
        )

    def label(self):
        g = ", ".join(f"{e!r} AS {f!r}" for f, e in self.groups)
        a = ", ".join(f"{e!r} AS {f!r}" for f, e in self.aggs)
        gs = f" {self.grouping!r} AS {self.grouping.field!r}" if self.grouping is not None else ""
        return f"Aggregate groups=[{g}]{gs} aggs=[{a}]"


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

    def expressions(self):
        return tuple(k.expr for k in self.keys)

    def with_expressions(self, exprs):
        return Sort(self.child, tuple(SortKey(e, k.descending, k.nulls_first) for k, e in zip(self.keys, exprs)))

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
    kind: str  # union | intersect | except
    all: bool
    fields: tuple[Field, ...]

    @property
    def schema(self):
        return self.fields

    def label(self):
        return f"{self.kind.upper()}{' ALL' if self.all else ''} -> [{', '.join(map(repr, self.fields))}]"


@dataclass(frozen=True, slots=True)
class RecursiveCTE(LogicalNode):
    """WITH RECURSIVE: the rows of ``left`` (the anchor), then the rows of
    ``right`` run again and again, each time over the rows the run before it
    added (the :class:`WorkingTable` leaves numbered ``key``), until a run
    adds none. UNION (``all`` False) adds only rows not seen before. The
    children already project the CTE's types."""

    left: LogicalNode
    right: LogicalNode
    all: bool
    fields: tuple[Field, ...]
    key: int

    @property
    def schema(self):
        return self.fields

    def label(self):
        return f"RecursiveCTE #{self.key} UNION{' ALL' if self.all else ''} -> [{', '.join(map(repr, self.fields))}]"


@dataclass(frozen=True, slots=True)
class WorkingTable(LogicalNode):
    """Inside a recursive CTE's recursive term: the rows the previous step
    added (the CTE's columns, as ``fields``)."""

    key: int
    fields: tuple[Field, ...]

    @property
    def schema(self):
        return self.fields

    def label(self):
        return f"WorkingTable #{self.key} [{', '.join(map(repr, self.fields))}]"


@dataclass(frozen=True, slots=True)
class IntervalOffset:
    """A RANGE frame offset over a DATE or TIMESTAMP key: the INTERVAL
    (months, days, microseconds) each row's key is moved by.

    >>> -IntervalOffset(1, 2, 3)
    INTERVAL '-1 months -2 days -3 microseconds'
    """

    months: int
    days: int
    micros: int

    def __neg__(self) -> IntervalOffset:
        return IntervalOffset(-self.months, -self.days, -self.micros)

    def __repr__(self):
        return f"INTERVAL '{self.months} months {self.days} days {self.micros} microseconds'"


@dataclass(frozen=True, slots=True)
class FrameBound:
    """One end of a window frame: ``unbounded``, ``preceding`` / ``following``
    with a constant ``offset``, or ``current`` (the row itself for ROWS, its
    last or first peer for RANGE)."""

    kind: str  # unbounded | preceding | current | following
    offset: int | float | IntervalOffset = 0

    def __repr__(self):
        if self.kind == "unbounded":
            return "UNBOUNDED"
        if self.kind == "current":
            return "CURRENT ROW"
        return f"{self.offset} {self.kind.upper()}"


@dataclass(frozen=True, slots=True)
class Frame:
    """``ROWS``, ``RANGE`` or ``GROUPS`` BETWEEN start AND end (offsets count
    rows, ORDER BY values or peer groups). Without ORDER BY every row of a
    partition is a peer of every other, so the RANGE default frame is the
    whole partition (as in DuckDB)."""

    kind: str  # rows | range | groups
    start: FrameBound
    end: FrameBound
    exclude: str = ""  # "" (no others) | current_row | group | ties

    def __repr__(self):
        def bound(b, unbounded):
            return f"UNBOUNDED {unbounded}" if b.kind == "unbounded" else repr(b)

        ex = f" EXCLUDE {self.exclude.replace('_', ' ').upper()}" if self.exclude else ""
        return f"{self.kind.upper()} BETWEEN {bound(self.start, 'PRECEDING')} AND {bound(self.end, 'FOLLOWING')}{ex}"


DEFAULT_FRAME = Frame("range", FrameBound("unbounded"), FrameBound("current"))
# the window functions whose value depends on the frame; the others see the partition and the order
FRAMED_FUNCS = (
    "first_value",
    "last_value",
    "nth_value",
    "count_star",
    "count",
    "sum",
    "avg",
    "min",
    "max",
) + WINDOW_AGGREGATES


@dataclass(frozen=True, slots=True)
class WindowFunc:
    """fn(args) OVER (PARTITION BY partition ORDER BY order frame).

    fn: row_number, rank, dense_rank, percent_rank, cume_dist, ntile, lag,
    lead, first_value, last_value, nth_value, count_star, count, sum, avg,
    min, max.

    >>> from glint.columnar import types as T
    >>> from glint.plan.expr import ColRef, Field
    >>> a = ColRef(Field(1, "a", T.INTEGER))
    >>> WindowFunc("sum", (a,), (), (SortKey(a),), DEFAULT_FRAME, T.HUGEINT)
    sum(a#1) OVER (ORDER BY a#1 ASC NULLS LAST RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
    """

    fn: str
    args: tuple[Expr, ...]
    partition: tuple[Expr, ...]
    order: tuple[SortKey, ...]
    frame: Frame
    type: object
    ignore_nulls: bool = False  # LAG / LEAD / FIRST_VALUE / LAST_VALUE / NTH_VALUE skip NULL rows
    params: tuple = ()  # an aggregate's constant arguments (APPROX_QUANTILE's q)

    def expressions(self) -> tuple[Expr, ...]:
        return self.args + self.partition + tuple(k.expr for k in self.order)

    def fields(self) -> set[Field]:
        return {f for e in self.expressions() for f in e.fields()}

    def map_expressions(self, fn) -> WindowFunc:
        """The same call with fn applied to each of its expressions."""
        return replace(
            self,
            args=tuple(fn(a) for a in self.args),
            partition=tuple(fn(p) for p in self.partition),
            order=tuple(SortKey(fn(k.expr), k.descending, k.nulls_first) for k in self.order),
        )

    def __repr__(self):
        over = []
        if self.partition:
            over.append("PARTITION BY " + ", ".join(map(repr, self.partition)))
        if self.order:
            over.append("ORDER BY " + ", ".join(map(repr, self.order)))
        if self.fn in FRAMED_FUNCS:
            over.append(repr(self.frame))
        ignore = " IGNORE NULLS" if self.ignore_nulls else ""
        return f"{self.fn}({', '.join(map(repr, self.args))}{ignore}) OVER ({' '.join(over)})"


@dataclass(frozen=True, slots=True)
class Window(LogicalNode):
    """The child's rows, each with the value of every window function added."""

    child: LogicalNode
    funcs: tuple[tuple[Field, WindowFunc], ...]

    @property
    def schema(self):
        return self.child.schema + tuple(f for f, _ in self.funcs)

    def expressions(self):
        return tuple(e for _, w in self.funcs for e in w.expressions())

    def with_expressions(self, exprs):
        funcs, i = [], 0
        for f, w in self.funcs:
            n = len(w.expressions())
            it = iter(exprs[i : i + n])
            funcs.append((f, w.map_expressions(lambda _e: next(it))))
            i += n
        return Window(self.child, tuple(funcs))

    def label(self):
        return "Window " + ", ".join(f"{w!r} AS {f!r}" for f, w in self.funcs)
