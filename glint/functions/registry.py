"""The function registry: one :class:`Function` per SQL function, holding
its names, its binding and type rule, its evaluator(s), whether it is
strict, and its documentation.

Kinds of function:

- ``scalar``: called by name (``upper(s)``, ``date_trunc('month', ts)``);
- ``operator``: SQL syntax that computes like a function (``a + b``,
  ``a = b``, ``NOT a``, ``s LIKE p``, ``CAST(x AS t)``, ``x IN (...)``);
  its name is the one plans print (``add``, ``eq``, ``like``, ``cast``);
- ``aggregate``: ``sum(x)``, ``string_agg(s, ',')``; those with a window
  form also run as ``fn(...) OVER (...)``;
- ``window``: ``row_number() OVER (...)``, ``lag(x) OVER (...)``;
- ``table``: ``FROM read_parquet('x.parquet')``.

An *internal* function is one that binding produces for others (a LIKE
with a per-row pattern is ``like_rows``, ``year(d)`` is ``extract``): it
has an evaluator and documentation but no SQL name.

A bound call names its function (``Call.fn``, ``AggCall.fn``,
``WindowFunc.fn``); evaluation finds the evaluator by that name in one
dictionary built from the registry (:mod:`glint.functions.evaluate`).

>>> from glint.columnar import types as T
>>> from glint.plan.expr import Call, Literal
>>> f = Function("twice", SCALAR, "math", "twice(INTEGER) -> INTEGER", "Two times the argument.",
...              aliases=("double_it",), bind=lambda args, site: Call("twice", tuple(args), T.INTEGER),
...              evaluate=lambda call, cols: cols[0].with_data(cols[0].data * 2), strict=True)
>>> r = Registry([f])
>>> r.lookup("DOUBLE_IT") is f, r.lookup("nosuch"), sorted(r.sql_names())
(True, None, ['double_it', 'twice'])
>>> r.lookup("twice").bind([Literal(3, T.INTEGER)], CallSite("twice"))
twice(3)
>>> sorted(r.strict_names())
['twice']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from glint.plan.expr import Expr

SCALAR = "scalar"
OPERATOR = "operator"
AGGREGATE = "aggregate"
WINDOW = "window"
TABLE = "table"
KINDS = (SCALAR, OPERATOR, AGGREGATE, WINDOW, TABLE)

# how a scalar's or an operator's evaluator receives its arguments
COLUMNS = "columns"  # evaluate(call, columns): every argument evaluated
CONSTANTS = "constants"  # evaluate(call, arguments): an argument after the first that is a
#                                 non-NULL constant arrives as its Python value, so that the work
#                                 on it (a pattern, a delimiter) is done once
EXPRESSIONS = "expressions"  # evaluate(call, batch, evaluate): it evaluates its arguments itself
#                                 (only some rows of a branch, a constant side kept as a value)
TAKES = (COLUMNS, CONSTANTS, EXPRESSIONS)


def _no_folding(e: Expr) -> Expr:
    return e


@dataclass(frozen=True, slots=True)
class CallSite:
    """What the binder knows of a call besides its arguments.

    ``name``: the function's name as the statement spells it for a call by
    name, its canonical name in upper case for a call SQL writes as syntax
    (it appears in error messages); ``options``: constants the syntax gives
    (EXTRACT's part, LIKE's ESCAPE character and NOT, an aggregate's
    DISTINCT, FILTER and ORDER BY); ``fold``: the constant folder, for a
    rule that must know a constant argument's value."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)
    fold: Callable[[Expr], Expr] = _no_folding

    def option(self, key: str, default=None):
        return self.options.get(key, default)


# bind(arguments, site) -> a typed expression: an Expr for a scalar or an
# operator, an AggCall for an aggregate, a (function name, arguments, type)
# triple for a window function. The arguments are bound expressions (None
# for an absent optional one), each bound when the rule first reads it, so
# that the rule decides the order of checks and so which error a statement
# with several gets. A table function's rule is bind(files, options, name)
# -> (format, files, reader options), its options (name, value) pairs.
BindRule = Callable[[Sequence[Expr], CallSite], Any]


@dataclass(frozen=True, slots=True)
class AggregateEvaluator:
    """How an aggregate computes over rows grouped by ``slots``
    (glint.kernels.groupby.Slots).

    A decomposable aggregate gives ``states(agg, x, slots)``: its
    ``n_states`` state columns (one row per group) for the rows of ``x``
    (the argument, FILTER applied; for an aggregate of no argument, COUNT(*),
    the rows FILTER keeps as a mask, None for all); ``combine(agg, states,
    slots)``: states of several rows per group combined; ``final(agg,
    states)``: the value. ``whole(agg, x, slots, order)`` computes from all
    of a group's values at once (holistic aggregates; ``order``: the ORDER
    BY keys inside the call as (column, descending, nulls_first)); when it
    is None, the whole computation is ``final(states(...))``.

    ``takes_rows``: ``states`` and ``whole`` receive the list of every
    argument's column instead of the first one's, and FILTER drops the rows
    it rejects (where otherwise they arrive as NULL inputs): for aggregates
    of several arguments and those that see NULL inputs (FIRST, LAST)."""

    n_states: int = 1
    states: Callable | None = None
    combine: Callable | None = None
    final: Callable | None = None
    whole: Callable | None = None
    takes_rows: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class Function:
    """One SQL function.

    ``name``: canonical name (the one plans print); ``kind``: one of
    :data:`KINDS`; ``area``: what it works on (strings, dates, math ...),
    for the reference; ``signature``: its forms as text; ``doc``: one line.
    ``bind``: the binding and type rule (:data:`BindRule`). ``evaluate``:
    for a scalar or an operator, the evaluator of its calls (called as
    ``takes`` says, on the batch's device); for a window function,
    ``evaluate(window_func, args, rows)`` over rows sorted by partition and
    order; for an aggregate, an :class:`AggregateEvaluator`. ``cuda``: an
    evaluator for CUDA batches when that device needs its own (None: the
    same callable everywhere). ``strict``: NULL in any argument gives NULL
    out, so the constant folder may replace such a call by NULL without
    evaluating the rest. ``rewrites_to``: a scalar without an evaluator of
    its own, whose bind rule turns its calls into calls of these functions
    (``year(d)`` into ``extract``, ``nullif`` into CASE); empty when it
    binds to a constant. ``window_bind`` / ``window_evaluate``: an
    aggregate's form as a window function. ``ignore_nulls``: a window
    function that takes IGNORE NULLS."""

    name: str
    kind: str
    area: str
    signature: str
    doc: str
    aliases: tuple[str, ...] = ()
    bind: BindRule | None = None
    evaluate: Callable | AggregateEvaluator | None = None
    takes: str = COLUMNS
    cuda: Callable | None = None
    strict: bool = False
    internal: bool = False
    rewrites_to: tuple[str, ...] | None = None
    window_bind: BindRule | None = None
    window_evaluate: Callable | None = None
    ignore_nulls: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        """The names SQL calls it by (none for an internal function)."""
        return () if self.internal else (self.name,) + self.aliases

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}>"


_CALL_KINDS = (SCALAR, OPERATOR)  # functions of Call nodes: one namespace


class Registry:
    """Functions by kind and name. :meth:`lookup` finds what SQL can call
    (canonical names and aliases, case-insensitive); :meth:`get` finds any
    function by its canonical name, internal ones included. Built once; the
    definitions are checked as it is built (duplicate names, an evaluator or
    a rewrite for every scalar)."""

    def __init__(self, functions: Iterable[Function]):
        self._functions = tuple(functions)
        self._by_name: dict[tuple[str, str], Function] = {}
        self._sql: dict[str, dict[str, Function]] = {k: {} for k in KINDS}
        for f in self._functions:
            self._add(f)
        self._check()

    def _add(self, f: Function) -> None:
        if f.kind not in KINDS:
            raise ValueError(f"{f.name}: unknown kind {f.kind}")
        if f.takes not in TAKES:
            raise ValueError(f"{f.name}: unknown argument convention {f.takes}")
        space = "call" if f.kind in _CALL_KINDS else f.kind
        if (space, f.name) in self._by_name:
            raise ValueError(f"function {f.name} ({f.kind}) is defined twice")
        self._by_name[(space, f.name)] = f
        if f.kind != OPERATOR:
            names = self._sql[f.kind]
            for n in f.names:
                if n in names:
                    raise ValueError(f"the {f.kind} name {n} belongs to {names[n].name} and {f.name}")
                names[n] = f

    def _check(self) -> None:
        for f in self._functions:
            if not f.internal and f.bind is None:
                raise ValueError(f"{f.name}: a function SQL calls needs a bind rule")
            if f.kind in (SCALAR, OPERATOR, AGGREGATE) and (f.evaluate is None) == (f.rewrites_to is None):
                raise ValueError(f"{f.name}: a function has either an evaluator or the functions it rewrites to")
            if f.kind == WINDOW and f.evaluate is None:
                raise ValueError(f"{f.name}: a window function needs an evaluator")
            if (f.window_bind is None) != (f.window_evaluate is None) and not f.internal:
                raise ValueError(f"{f.name}: a window form needs a bind rule and an evaluator")
            space = "call" if f.kind in _CALL_KINDS else f.kind
            for target in f.rewrites_to or ():
                t = self._by_name.get((space, target))
                if t is None or t.evaluate is None:
                    raise ValueError(f"{f.name} rewrites to {target}, which has no evaluator")

    # ------------------------------------------------------------ lookups
    def lookup(self, name: str, kind: str = SCALAR) -> Function | None:
        """The function SQL calls ``name`` (or None): canonical names and
        aliases, case-insensitive; internal functions and operators are not
        called by name."""
        return self._sql[kind].get(name.lower())

    def get(self, name: str, kind: str = SCALAR) -> Function:
        """The function of canonical name ``name`` (internal ones too)."""
        space = "call" if kind in _CALL_KINDS else kind
        f = self._by_name.get((space, name))
        if f is None or f.kind != kind:
            raise KeyError(f"no {kind} function {name}")
        return f

    def functions(self, kind: str | None = None) -> list[Function]:
        return [f for f in self._functions if kind is None or f.kind == kind]

    def sql_names(self, kind: str | None = None) -> list[str]:
        """Every name SQL can call (canonical names and aliases), sorted."""
        kinds = [kind] if kind is not None else [k for k in KINDS if k != OPERATOR]
        return sorted({n for k in kinds for n in self._sql[k]})

    # ------------------------------------------------------------ evaluation tables
    def call_functions(self) -> dict[str, Function]:
        """Functions of Call nodes that have an evaluator, by name."""
        return {f.name: f for f in self._functions if f.kind in _CALL_KINDS and f.evaluate is not None}

    def aggregate_evaluators(self) -> dict[str, AggregateEvaluator]:
        return {f.name: f.evaluate for f in self._functions if f.kind == AGGREGATE and f.evaluate is not None}

    def window_evaluators(self) -> dict[str, Callable]:
        """Window functions' evaluators by name: the window functions' own and
        the aggregates' window forms."""
        out = {f.name: f.evaluate for f in self._functions if f.kind == WINDOW}
        out.update(
            {
                f.name: f.window_evaluate
                for f in self._functions
                if f.kind == AGGREGATE and f.window_evaluate is not None
            }
        )
        return out

    def strict_names(self) -> frozenset[str]:
        """Functions of Call nodes whose result is NULL whenever an argument is NULL."""
        return frozenset(f.name for f in self._functions if f.kind in _CALL_KINDS and f.strict)
