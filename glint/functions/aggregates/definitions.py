"""The aggregate functions of the registry: their binding and type rules
(DuckDB 1.4's types and errors), their evaluators (:mod:`.states`, and the
holistic ones: :mod:`.quantile`, :mod:`.string_agg`) and their window forms
(:mod:`.windowed`).

An aggregate's bind rule receives its bound argument (and a quantile's q or
STRING_AGG's separator) and these options from the syntax around it:
``distinct``; ``filter`` (FILTER's condition, bound); ``order`` (a function
giving the ORDER BY keys inside the call, bound: only STRING_AGG reads
them), ``order_size`` (their number), ``order_is_argument`` (each of them
is the call's argument itself), ``descending`` (the first is DESC);
``within_group`` (PERCENTILE_*(q) WITHIN GROUP (ORDER BY x)). Types: VAR_* / STDDEV_* are
DOUBLE; MEDIAN and QUANTILE_CONT are DOUBLE over integers and doubles and
keep a DECIMAL's type; QUANTILE_DISC keeps its input's type; STRING_AGG
casts its input to VARCHAR and wants a constant VARCHAR separator.

>>> from glint.functions.registry import CallSite
>>> from glint.plan.expr import ColRef, Field
>>> x = ColRef(Field(1, "x", T.INTEGER))
>>> _bind_basic("sum")([x], CallSite("SUM", {"distinct": True}))
sum(DISTINCT x#1)
>>> _bind_quantile("median")([x], CallSite("MEDIAN")).type
DOUBLE
"""

from __future__ import annotations

from fractions import Fraction

from glint.columnar import types as T
from glint.errors import BinderError, NotSupported, TypeMismatch
from glint.functions.aggregates import states as S
from glint.functions.aggregates import windowed
from glint.functions.aggregates.quantile import quantile
from glint.functions.registry import AGGREGATE, AggregateEvaluator, CallSite, Function
from glint.plan import typing as ty
from glint.plan.aggregates import Quantile
from glint.plan.expr import AggCall, Expr, Literal


# ------------------------------------------------------------------ result types
def agg_type(fn: str, arg: Expr | None) -> T.DataType:
    """The result type of COUNT, SUM, AVG, MIN or MAX of ``arg``."""
    if fn in ("count", "count_star"):
        return T.BIGINT
    t = arg.type
    if fn == "avg":
        if t.kind in ("DATE", "TIMESTAMP"):
            raise NotSupported(f"AVG of {t} (DuckDB's result is a TIMESTAMP)")
        if not t.is_numeric and t.kind != "NULL":
            raise TypeMismatch(f"Type mismatch: AVG needs a number, got {ty.show(arg)} of type {t}")
        return T.DOUBLE
    if fn == "sum":
        if t.is_integer or t.kind == "NULL":
            return T.HUGEINT
        if t.is_decimal:
            return T.DECIMAL(38, t.scale)
        if t.kind == "DOUBLE":
            return T.DOUBLE
        raise TypeMismatch(f"Type mismatch: SUM needs a number, got {ty.show(arg)} of type {t}")
    return t


def no_function(fn: str, *types) -> BinderError:
    return BinderError(
        f"No function matches the given name and argument types "
        f"'{fn}({', '.join(map(str, types))})'. You might need to add explicit type casts."
    )


def _argument(args, fn: str) -> Expr:
    if not args:
        raise BinderError(f"{fn.upper()} needs an argument")
    return args[0]


# ------------------------------------------------------------------ bind rules
def _bind_count(args, site: CallSite) -> AggCall:
    """count(x); count() and count(*) count rows."""
    if not args:
        return AggCall("count_star", (), T.BIGINT, filter=site.option("filter"))
    return _bind_basic("count")(args, site)


def _bind_basic(fn: str):
    """COUNT, SUM, AVG, MIN, MAX (DISTINCT changes nothing for MIN and MAX)."""

    def bind(args, site):
        v = _argument(args, fn)
        distinct = bool(site.option("distinct")) and fn not in ("min", "max")
        return AggCall(fn, (v,), agg_type(fn, v), distinct, site.option("filter"))

    return bind


def _bind_moment(fn: str):
    def bind(args, site):
        v = _argument(args, fn)
        if not (v.type.is_numeric or v.type.kind == "NULL"):
            raise no_function(fn, v.type)
        return AggCall(fn, (ty.cast(v, T.DOUBLE),), T.DOUBLE, bool(site.option("distinct")), site.option("filter"))

    return bind


def _bind_bool(fn: str):
    def bind(args, site):
        v = _argument(args, fn)
        if v.type.kind not in ("BOOLEAN", "NULL"):
            raise no_function(fn, v.type)
        return AggCall(fn, (ty.cast(v, T.BOOLEAN),), T.BOOLEAN, bool(site.option("distinct")), site.option("filter"))

    return bind


def _bind_string_agg(args, site: CallSite) -> AggCall:
    v = _argument(args, "string_agg")
    sep = ","
    if len(args) > 1 and args[1] is not None:
        s = site.fold(args[1])
        if not isinstance(s, Literal):
            raise BinderError("Separator argument to StringAgg must be a constant")
        if s.type.kind not in ("VARCHAR", "NULL"):
            raise no_function("string_agg", v.type, s.type)
        sep = s.value
    distinct = bool(site.option("distinct"))
    if distinct and site.option("order_size") and not site.option("order_is_argument"):
        raise BinderError("In a DISTINCT aggregate, ORDER BY expressions must appear in the argument list")
    order = site.option("order")
    keys = order() if order is not None else ()
    return AggCall("string_agg", (ty.cast(v, T.VARCHAR),), T.VARCHAR, distinct, site.option("filter"), keys, (sep,))


def _quantile_value(fn: str, q: Expr | None, site: CallSite) -> tuple[tuple[int, int] | None, float]:
    """(q = num / den exactly when it is a DECIMAL or an integer, q as a double)."""
    if q is None:
        raise BinderError(f"{fn.upper()} needs a quantile argument")
    q = site.fold(q)
    if not isinstance(q, Literal):
        raise BinderError("QUANTILE can only take constant parameters")
    if q.value is None:
        raise BinderError("QUANTILE argument must not be NULL")
    if q.type.is_decimal and q.type.scale <= 18:
        exact = (q.value, 10**q.type.scale)
    elif q.type.is_integer:
        exact = (q.value, 1)
    elif q.type.is_numeric:
        exact = None
    else:
        raise no_function(fn, "ANY", q.type)
    value = float(Fraction(q.value, 10**q.type.scale)) if q.type.is_decimal else float(q.value)
    if not -1 <= value <= 1:
        raise BinderError("QUANTILE can only take parameters in the range [-1, 1]")
    return exact, value


def _bind_quantile(name: str):
    """MEDIAN, QUANTILE_CONT and QUANTILE_DISC: their q and result type."""

    def bind(args, site):
        v = _argument(args, name)
        t = v.type
        percentile = (
            bool(site.option("within_group"))
            or site.option("order_size") == 1
            and bool(site.option("order_is_argument"))
        )
        descending = percentile and bool(site.option("descending"))
        if name == "median":
            exact, q = (5, 10), 0.5
        else:
            exact, q = _quantile_value(name, args[1] if len(args) > 1 else None, site)
        if q < 0 and percentile:
            raise BinderError("PERCENTILEs can only take parameters in the range [0, 1]")
        if q < 0:
            descending = not descending
        spec = Quantile(abs(q), None if exact is None else abs(exact[0]), 1 if exact is None else exact[1], descending)
        distinct, filt = bool(site.option("distinct")), site.option("filter")
        fn = name
        temporal = t.kind in ("DATE", "TIMESTAMP")
        if fn == "median":
            fn = "quantile_cont" if t.is_numeric or t.kind == "NULL" or temporal else "quantile_disc"
        if fn == "quantile_cont" and temporal:
            # interpolated between TIMESTAMPs (a DATE is cast first), as DuckDB
            return AggCall(fn, (ty.cast(v, T.TIMESTAMP),), T.TIMESTAMP, distinct, filt, (), (spec,))
        if fn == "quantile_cont":
            if not (t.is_numeric or t.kind == "NULL"):
                raise no_function(name, t, "DECIMAL(2,1)")
            out = t if t.is_decimal else T.DOUBLE
            arg = v if t.is_decimal else ty.cast(v, T.DOUBLE)
        else:
            if t.kind not in (
                "INTEGER",
                "BIGINT",
                "HUGEINT",
                "DOUBLE",
                "DECIMAL",
                "DATE",
                "TIMESTAMP",
                "VARCHAR",
                "BOOLEAN",
                "NULL",
            ):
                raise no_function(name, t)
            out, arg = t, v
        return AggCall(fn, (arg,), out, distinct, filt, (), (spec,))

    return bind


# ------------------------------------------------------------------ window forms
def _window_count(args, site):
    if not args:
        return "count_star", (), T.BIGINT
    v = args[0]
    return "count", (v,), agg_type("count", v)


def _window_basic(fn: str):
    def bind(args, site):
        v = args[0]
        return fn, (v,), agg_type(fn, v)

    return bind


# ------------------------------------------------------------------ evaluators
_COUNT = AggregateEvaluator(1, S.count_states, S.combine_counts, S.final_count)
_COUNT_ROWS = AggregateEvaluator(1, S.count_rows_states, S.combine_counts, S.final_count)
_SUM = AggregateEvaluator(2, S.sum_states, S.combine_sums, S.final_sum)
_EXTREME = AggregateEvaluator(1, S.extreme_states, S.combine_extremes, S.final_value_of_state)
_MOMENTS = AggregateEvaluator(3, S.moments_states, S.combine_moments, S.final_moments)
_STRING_AGG = AggregateEvaluator(
    1,
    S.string_agg_states,
    lambda agg, cols, slots: S.string_agg_states(agg, cols[0], slots),
    S.final_value_of_state,
    S.string_agg_whole,
)


def _quantile_whole(continuous: bool):
    return lambda agg, x, slots, order: quantile(x, slots, agg.params[0], continuous, agg.type)


_QUANTILE_CONT = AggregateEvaluator(whole=_quantile_whole(True))
_QUANTILE_DISC = AggregateEvaluator(whole=_quantile_whole(False))


def _window(ev: AggregateEvaluator, fn: str, bind, framed: bool = True) -> dict:
    """The window form of an aggregate that runs from its evaluator
    (glint.functions.aggregates.windowed.from_states); its bind rule is the
    aggregate's own. ``framed`` False: over whole partitions only."""
    return {"window_bind": bind, "window_evaluate": windowed.from_states(ev, fn, framed)}


# ------------------------------------------------------------------ the functions
def _aggregate(
    name,
    signature,
    doc,
    bind,
    evaluate=None,
    aliases=(),
    window_bind=None,
    window_evaluate=None,
    internal=False,
    rewrites_to=None,
):
    return Function(
        name,
        AGGREGATE,
        "aggregates",
        signature,
        doc,
        aliases=aliases,
        bind=bind,
        evaluate=evaluate,
        window_bind=window_bind,
        window_evaluate=window_evaluate,
        internal=internal,
        rewrites_to=rewrites_to,
    )


_MOMENT_DOCS = {
    "var_samp": ("Sample variance.", ("variance",)),
    "var_pop": ("Population variance.", ()),
    "stddev_samp": ("Sample standard deviation.", ("stddev",)),
    "stddev_pop": ("Population standard deviation.", ()),
}

FUNCTIONS = [
    _aggregate(
        "count",
        "count(ANY) -> BIGINT; count(*) -> BIGINT",
        "Number of values that are not NULL (of rows for count(*)).",
        _bind_count,
        _COUNT,
        window_bind=_window_count,
        window_evaluate=windowed.count,
    ),
    _aggregate(
        "count_star",
        "count_star() -> BIGINT",
        "count(*): number of rows.",
        None,
        _COUNT_ROWS,
        window_evaluate=windowed.count,
        internal=True,
    ),
    _aggregate(
        "sum",
        "sum(NUMERIC) -> HUGEINT | DECIMAL(38, s) | DOUBLE",
        "Sum (exact for integers and DECIMALs).",
        _bind_basic("sum"),
        _SUM,
        window_bind=_window_basic("sum"),
        window_evaluate=windowed.sum_avg,
    ),
    _aggregate(
        "avg",
        "avg(NUMERIC) -> DOUBLE",
        "Average.",
        _bind_basic("avg"),
        _SUM,
        window_bind=_window_basic("avg"),
        window_evaluate=windowed.sum_avg,
    ),
    _aggregate(
        "min",
        "min(ANY) -> ANY",
        "Smallest value (strings by bytes).",
        _bind_basic("min"),
        _EXTREME,
        window_bind=_window_basic("min"),
        window_evaluate=windowed.extreme(False),
    ),
    _aggregate(
        "max",
        "max(ANY) -> ANY",
        "Largest value (strings by bytes).",
        _bind_basic("max"),
        _EXTREME,
        window_bind=_window_basic("max"),
        window_evaluate=windowed.extreme(True),
    ),
    *(
        _aggregate(
            fn,
            f"{fn}(NUMERIC) -> DOUBLE",
            doc,
            _bind_moment(fn),
            _MOMENTS,
            aliases=aliases,
            **_window(_MOMENTS, fn, _bind_moment(fn)),
        )
        for fn, (doc, aliases) in _MOMENT_DOCS.items()
    ),
    _aggregate(
        "bool_and",
        "bool_and(BOOLEAN) -> BOOLEAN",
        "Whether every value is TRUE.",
        _bind_bool("bool_and"),
        _EXTREME,
        **_window(_EXTREME, "bool_and", _bind_bool("bool_and")),
    ),
    _aggregate(
        "bool_or",
        "bool_or(BOOLEAN) -> BOOLEAN",
        "Whether any value is TRUE.",
        _bind_bool("bool_or"),
        _EXTREME,
        **_window(_EXTREME, "bool_or", _bind_bool("bool_or")),
    ),
    _aggregate(
        "string_agg",
        "string_agg(ANY [, VARCHAR separator] [ORDER BY ...]) -> VARCHAR",
        "The values as text joined by the separator (',' by default). Also a window function (OVER) over whole partitions only.",
        _bind_string_agg,
        _STRING_AGG,
        aliases=("listagg", "group_concat"),
        **_window(_STRING_AGG, "string_agg", _bind_string_agg, framed=False),
    ),
    _aggregate(
        "median",
        "median(ANY) -> ANY",
        "quantile_cont(x, 0.5) for numbers and dates, quantile_disc otherwise. Also a window function (OVER) over "
        "whole partitions only.",
        _bind_quantile("median"),
        rewrites_to=("quantile_cont", "quantile_disc"),
        **_window(_QUANTILE_CONT, "median", _bind_quantile("median"), framed=False),
    ),
    _aggregate(
        "quantile_cont",
        "quantile_cont(NUMERIC | DATE | TIMESTAMP, q) -> DOUBLE | DECIMAL | TIMESTAMP; "
        "PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY x)",
        "The q-quantile, interpolated between neighbours. Also a window function (OVER) over whole partitions only.",
        _bind_quantile("quantile_cont"),
        _QUANTILE_CONT,
        aliases=("percentile_cont",),
        **_window(_QUANTILE_CONT, "quantile_cont", _bind_quantile("quantile_cont"), framed=False),
    ),
    _aggregate(
        "quantile_disc",
        "quantile_disc(ANY, q) -> ANY; PERCENTILE_DISC(q) WITHIN GROUP (ORDER BY x)",
        "The value at the q-quantile's position. Also a window function (OVER) over whole partitions only.",
        _bind_quantile("quantile_disc"),
        _QUANTILE_DISC,
        aliases=("quantile", "percentile_disc"),
        **_window(_QUANTILE_DISC, "quantile_disc", _bind_quantile("quantile_disc"), framed=False),
    ),
]
