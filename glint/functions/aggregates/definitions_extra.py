"""The aggregates beyond COUNT / SUM / AVG / MIN / MAX, the variances,
quantiles and STRING_AGG: their binding and type rules (DuckDB 1.4's types
and errors) and evaluators.

- ARG_MAX / ARG_MIN / MAX_BY / MIN_BY (and the _NULL forms), FIRST / LAST /
  ANY_VALUE (:mod:`.picks`): the picked argument's type;
- CORR, COVAR_*, REGR_* (:mod:`.statistics`): DOUBLE over numbers, cast
  first (REGR_COUNT: BIGINT, where DuckDB's is UINTEGER);
- SKEWNESS, KURTOSIS, KURTOSIS_POP: DOUBLE; ENTROPY: DOUBLE of any type;
- PRODUCT: DOUBLE; BIT_AND / BIT_OR / BIT_XOR: the integer's own type;
  COUNT_IF: SUM of the BOOLEAN (HUGEINT, NULL without values);
- MODE: its argument's type;
- APPROX_COUNT_DISTINCT: BIGINT; APPROX_QUANTILE (:mod:`.approx`): the
  input's type, a DECIMAL first rounded to the integer of its width
  (INTEGER up to 9 digits, where DuckDB has SMALLINT below 5; BIGINT up to
  18; HUGEINT), as DuckDB binds it.

DISTINCT is kept where it changes the value and dropped where it cannot
(ARG_MAX, ANY_VALUE, BIT_AND, BIT_OR, APPROX_COUNT_DISTINCT). An ORDER BY
inside the call is kept by FIRST, LAST, ANY_VALUE and MODE (the order they
pick or break ties in) and ignored by the others, as DuckDB does.

>>> from glint.functions.registry import CallSite
>>> from glint.plan.expr import ColRef, Field
>>> x = ColRef(Field(1, "x", T.INTEGER))
>>> s = ColRef(Field(2, "s", T.VARCHAR))
>>> _bind_arg("arg_max")([s, x], CallSite("MAX_BY")).type
VARCHAR
>>> _bind_pair("corr")([x, x], CallSite("CORR"))
corr(CAST(x#1 AS DOUBLE), CAST(x#1 AS DOUBLE))
"""

from __future__ import annotations

from glint.columnar import types as T
from glint.errors import BinderError, NotSupported
from glint.functions.aggregates import approx as AP
from glint.functions.aggregates import picks as PK
from glint.functions.aggregates import reductions as R
from glint.functions.aggregates import statistics as ST
from glint.functions.aggregates import windowed
from glint.functions.aggregates.definitions import no_function
from glint.functions.registry import AGGREGATE, AggregateEvaluator, Function
from glint.plan import typing as ty
from glint.plan.aggregates import Quantile
from glint.plan.expr import AggCall, Literal


def _arguments(args, fn: str, count: int) -> list:
    """The call's ``count`` arguments (DuckDB's error for another number)."""
    got = [args[i] for i in range(len(args))]
    if len(got) != count:
        raise no_function(fn, *(a.type for a in got if a is not None))
    return got


def _numeric(e) -> bool:
    return e.type.is_numeric or e.type.kind == "NULL"


def _order(site):
    order = site.option("order")
    return order() if order is not None else ()


def _call(fn, args, out, site, distinct=None, order=(), params=()) -> AggCall:
    d = bool(site.option("distinct")) if distinct is None else distinct
    return AggCall(fn, tuple(args), out, d, site.option("filter"), tuple(order), tuple(params))


def _not_null(e):
    return ty.cast(e, T.INTEGER) if e.type.kind == "NULL" else e


# ------------------------------------------------------------------ bind rules
def _bind_arg(fn: str):
    """ARG_MAX(x, y) and its kin: x of the row with the largest (smallest) y."""

    def bind(args, site):
        if len(args) > 2:
            raise NotSupported(f"{site.name.upper()} with a count (DuckDB's result is a LIST)")
        x, y = (_not_null(a) for a in _arguments(args, site.name.lower(), 2))
        return _call(fn, (x, y), x.type, site, distinct=False)

    return bind


def _bind_edge(fn: str):
    """FIRST / LAST / ANY_VALUE (x), with the ORDER BY inside the call."""

    def bind(args, site):
        (x,) = _arguments(args, site.name.lower(), 1)
        if fn == "any_value":
            x = _not_null(x)
        distinct = False if fn == "any_value" else None
        return _call(fn, (x,), x.type, site, distinct, _order(site))

    return bind


def _bind_mode(args, site):
    (x,) = _arguments(args, "mode", 1)
    return _call("mode", (x,), x.type, site, order=_order(site))


def _bind_pair(fn: str):
    """CORR, COVAR_*, REGR_*: two numbers, as DOUBLE."""

    def bind(args, site):
        y, x = _arguments(args, fn, 2)
        if not (_numeric(y) and _numeric(x)):
            raise no_function(fn, y.type, x.type)
        out = T.BIGINT if fn == "regr_count" else T.DOUBLE
        return _call(fn, (ty.cast(y, T.DOUBLE), ty.cast(x, T.DOUBLE)), out, site)

    return bind


def _bind_double(fn: str):
    """SKEWNESS, KURTOSIS, KURTOSIS_POP, PRODUCT: one number, as DOUBLE."""

    def bind(args, site):
        (x,) = _arguments(args, fn, 1)
        if not _numeric(x):
            raise no_function(fn, x.type)
        return _call(fn, (ty.cast(x, T.DOUBLE),), T.DOUBLE, site)

    return bind


def _bind_entropy(args, site):
    (x,) = _arguments(args, "entropy", 1)
    return _call("entropy", (_not_null(x),), T.DOUBLE, site)


def _bind_bits(fn: str):
    def bind(args, site):
        (x,) = _arguments(args, fn, 1)
        if x.type.kind == "NULL":
            x = ty.cast(x, T.BIGINT)
        if not x.type.is_integer:
            raise no_function(fn, x.type)
        return _call(fn, (x,), x.type, site, distinct=None if fn == "bit_xor" else False)

    return bind


def _bind_count_if(args, site):
    (x,) = _arguments(args, "count_if", 1)
    if x.type.kind not in ("BOOLEAN", "NULL"):
        raise no_function("count_if", x.type)
    return _call("sum", (ty.cast(x, T.BOOLEAN),), T.HUGEINT, site)


def _bind_approx_count(args, site):
    (x,) = _arguments(args, "approx_count_distinct", 1)
    return _call("approx_count_distinct", (_not_null(x),), T.BIGINT, site, distinct=False)


def _approx_input(x):
    """APPROX_QUANTILE's argument as DuckDB binds it, and its result type."""
    t = x.type
    if t.kind == "NULL":
        return ty.cast(x, T.BIGINT)
    if t.is_decimal:
        return ty.cast(x, T.INTEGER if t.precision <= 9 else T.BIGINT if t.precision <= 18 else T.HUGEINT)
    if t.is_numeric or t.kind in ("DATE", "TIMESTAMP"):
        return x
    return None


def _bind_approx_quantile(args, site):
    if len(args) != 2:
        raise no_function("approx_quantile", *(a.type for a in args))
    x, q = args[0], site.fold(args[1])
    v = _approx_input(x)
    if v is None:
        raise no_function("approx_quantile", x.type, q.type)
    if not isinstance(q, Literal):
        raise BinderError("APPROXIMATE QUANTILE can only take constant quantile parameters")
    if q.value is None:
        raise BinderError("APPROXIMATE QUANTILE parameter list cannot be NULL")
    if not (q.type.is_decimal or q.type.is_integer):
        raise no_function("approx_quantile", x.type, q.type)
    value = q.value / 10**q.type.scale if q.type.is_decimal else float(q.value)
    if not 0 <= value <= 1:
        raise BinderError("APPROXIMATE QUANTILE can only take parameters in range [0, 1]")
    return _call("approx_quantile", (v,), v.type, site, params=(Quantile(value, None, 1, False),))


# ------------------------------------------------------------------ evaluators
_ARG = AggregateEvaluator(2, PK.arg_states, PK.arg_combine, PK.arg_final, takes_rows=True)
_EDGE = AggregateEvaluator(2, PK.edge_states, PK.edge_combine, PK.edge_final, PK.edge_whole, takes_rows=True)
_ANY = AggregateEvaluator(1, PK.edge_states, PK.edge_combine, PK.edge_final, PK.edge_whole, takes_rows=True)
_PAIR = AggregateEvaluator(6, ST.pair_states, ST.pair_combine, ST.pair_final, takes_rows=True)
_SHAPE = AggregateEvaluator(5, ST.shape_states, ST.shape_combine, ST.shape_final)
_PRODUCT = AggregateEvaluator(2, R.product_states, R.product_combine, R.product_final)
_BITS = AggregateEvaluator(1, R.bits_states, lambda agg, cols, slots: R.bits_states(agg, cols[0], slots), R.bits_final)
_MODE = AggregateEvaluator(whole=R.mode)
_ENTROPY = AggregateEvaluator(whole=R.entropy)
_HLL = AggregateEvaluator(1, AP.hll_states, AP.hll_combine, AP.hll_final)
_DIGEST = AggregateEvaluator(4, AP.digest_states, AP.digest_combine, AP.digest_final)


def _aggregate(name, signature, doc, bind, ev, aliases=(), framed=True):
    """An aggregate with its window form: from states over any frame, or
    (``framed`` False: holistic, or too large a state per row) over whole
    partitions only."""
    return Function(
        name,
        AGGREGATE,
        "aggregates",
        signature,
        doc if framed else doc + " Also a window function (OVER) over whole partitions only.",
        aliases=aliases,
        bind=bind,
        evaluate=ev,
        window_bind=bind,
        window_evaluate=windowed.from_states(ev, name, framed),
    )


_PAIR_DOCS = {
    "corr": "Correlation coefficient of the pairs where both are present.",
    "covar_pop": "Population covariance.",
    "covar_samp": "Sample covariance.",
    "regr_slope": "Slope of the least-squares line of y on x.",
    "regr_intercept": "Intercept of the least-squares line of y on x.",
    "regr_r2": "Coefficient of determination of the least-squares line.",
    "regr_count": "Number of pairs where both are present (BIGINT; DuckDB's is UINTEGER).",
    "regr_avgx": "Average of x over the pairs where both are present.",
    "regr_avgy": "Average of y over the pairs where both are present.",
    "regr_sxx": "regr_count(y, x) * var_pop(x).",
    "regr_syy": "regr_count(y, x) * var_pop(y).",
    "regr_sxy": "regr_count(y, x) * covar_pop(y, x).",
}

FUNCTIONS = [
    _aggregate(
        "arg_max",
        "arg_max(ANY x, ANY y) -> ANY",
        "x of the row with the largest y (rows where x or y is NULL skipped).",
        _bind_arg("arg_max"),
        _ARG,
        aliases=("argmax", "max_by"),
    ),
    _aggregate(
        "arg_min",
        "arg_min(ANY x, ANY y) -> ANY",
        "x of the row with the smallest y (rows where x or y is NULL skipped).",
        _bind_arg("arg_min"),
        _ARG,
        aliases=("argmin", "min_by"),
    ),
    _aggregate(
        "arg_max_null",
        "arg_max_null(ANY x, ANY y) -> ANY",
        "x (NULL or not) of the row with the largest y.",
        _bind_arg("arg_max_null"),
        _ARG,
    ),
    _aggregate(
        "arg_min_null",
        "arg_min_null(ANY x, ANY y) -> ANY",
        "x (NULL or not) of the row with the smallest y.",
        _bind_arg("arg_min_null"),
        _ARG,
    ),
    _aggregate(
        "first",
        "first(ANY [ORDER BY ...]) -> ANY",
        "The first row's value, NULL or not (in input order, or by the ORDER BY).",
        _bind_edge("first"),
        _EDGE,
        aliases=("arbitrary",),
    ),
    _aggregate(
        "last",
        "last(ANY [ORDER BY ...]) -> ANY",
        "The last row's value, NULL or not (in input order, or by the ORDER BY).",
        _bind_edge("last"),
        _EDGE,
    ),
    _aggregate(
        "any_value",
        "any_value(ANY [ORDER BY ...]) -> ANY",
        "The first value that is not NULL.",
        _bind_edge("any_value"),
        _ANY,
    ),
    _aggregate(
        "mode",
        "mode(ANY [ORDER BY ...]) -> ANY",
        "The most frequent value (ties: the first in input order, or by the ORDER BY).",
        _bind_mode,
        _MODE,
        framed=False,
    ),
    *(
        _aggregate(
            fn,
            f"{fn}(NUMERIC y, NUMERIC x) -> {'BIGINT' if fn == 'regr_count' else 'DOUBLE'}",
            doc,
            _bind_pair(fn),
            _PAIR,
        )
        for fn, doc in _PAIR_DOCS.items()
    ),
    _aggregate(
        "skewness",
        "skewness(NUMERIC) -> DOUBLE",
        "Sample skewness (DuckDB's formula; NULL below three values).",
        _bind_double("skewness"),
        _SHAPE,
    ),
    _aggregate(
        "kurtosis",
        "kurtosis(NUMERIC) -> DOUBLE",
        "Sample excess kurtosis, bias-corrected (NULL below four values).",
        _bind_double("kurtosis"),
        _SHAPE,
    ),
    _aggregate(
        "kurtosis_pop",
        "kurtosis_pop(NUMERIC) -> DOUBLE",
        "Population excess kurtosis.",
        _bind_double("kurtosis_pop"),
        _SHAPE,
    ),
    _aggregate(
        "entropy",
        "entropy(ANY) -> DOUBLE",
        "Shannon entropy in bits of the values' frequencies (0 without values).",
        _bind_entropy,
        _ENTROPY,
        framed=False,
    ),
    _aggregate(
        "product",
        "product(NUMERIC) -> DOUBLE",
        "Product of the values.",
        _bind_double("product"),
        _PRODUCT,
    ),
    *(
        _aggregate(
            fn,
            f"{fn}(INTEGER | BIGINT | HUGEINT) -> same",
            f"Bitwise {fn[4:].upper()} of the values.",
            _bind_bits(fn),
            _BITS,
        )
        for fn in ("bit_and", "bit_or", "bit_xor")
    ),
    Function(
        "count_if",
        AGGREGATE,
        "aggregates",
        "count_if(BOOLEAN) -> HUGEINT",
        "Number of TRUE values (sum(x) of the BOOLEAN: NULL without values).",
        aliases=("countif",),
        bind=_bind_count_if,
        rewrites_to=("sum",),
    ),
    _aggregate(
        "approx_count_distinct",
        "approx_count_distinct(ANY) -> BIGINT",
        "Number of distinct values, by a HyperLogLog of 2048 registers (relative standard error 2.3%).",
        _bind_approx_count,
        _HLL,
        framed=False,
    ),
    _aggregate(
        "approx_quantile",
        "approx_quantile(NUMERIC | DATE | TIMESTAMP, q) -> same",
        "The q-quantile by a t-digest of 100 centroids (rank within 0.5% of the exact one).",
        _bind_approx_quantile,
        _DIGEST,
        framed=False,
    ),
]
