"""The aggregate functions: which combine from partial states, which need
all of a group's values at once, and which ignore duplicate inputs.

- *decomposable*: a chunk (or a rank) reduces to one state row per group,
  and states combine: COUNT, SUM, AVG, MIN, MAX (counts, exact sums,
  extremes), VAR_* / STDDEV_* (count, mean and the sum of squared
  deviations, combined with Chan's formula), BOOL_AND / BOOL_OR (as MIN /
  MAX of BOOLEAN) and STRING_AGG without ORDER BY (the partial string:
  concatenation is associative);
  ARG_MAX / ARG_MIN (the picked row's values), FIRST / LAST / ANY_VALUE
  without ORDER BY, CORR / COVAR_* / REGR_* (co-moments), SKEWNESS /
  KURTOSIS (central moments to the fourth), PRODUCT, BIT_AND / BIT_OR /
  BIT_XOR, and the sketches of APPROX_COUNT_DISTINCT (HyperLogLog
  registers) and APPROX_QUANTILE (a t-digest);
- *holistic*: MEDIAN, QUANTILE_CONT, QUANTILE_DISC, MODE, ENTROPY, and
  STRING_AGG, FIRST, LAST and ANY_VALUE with ORDER BY see every value of a
  group at once (the aggregation then holds its input rows,
  hash-partitioned by group when they outgrow memory);
- a DISTINCT aggregate is never decomposable.

>>> from glint.columnar import types as T
>>> from glint.plan.expr import AggCall, ColRef, Field
>>> x = ColRef(Field(1, "x", T.DOUBLE))
>>> decomposable(AggCall("var_samp", (x,), T.DOUBLE)), decomposable(AggCall("median", (x,), T.DOUBLE))
(True, False)
>>> duplicate_insensitive(AggCall("bool_or", (x,), T.BOOLEAN)), duplicate_insensitive(AggCall("sum", (x,), T.DOUBLE))
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass

MOMENTS = ("var_samp", "var_pop", "stddev_samp", "stddev_pop")
QUANTILES = ("median", "quantile_cont", "quantile_disc")
PAIR_STATISTICS = (
    "corr",
    "covar_pop",
    "covar_samp",
    "regr_slope",
    "regr_intercept",
    "regr_r2",
    "regr_count",
    "regr_avgx",
    "regr_avgy",
    "regr_sxx",
    "regr_syy",
    "regr_sxy",
)
PICKS = ("arg_max", "arg_min", "arg_max_null", "arg_min_null", "first", "last", "any_value")
ORDERED = ("string_agg", "first", "last", "any_value")  # not decomposable with an ORDER BY inside
DECOMPOSABLE = (
    ("count_star", "count", "sum", "avg", "min", "max", "bool_and", "bool_or", "string_agg")
    + MOMENTS
    + PAIR_STATISTICS
    + PICKS
    + ("skewness", "kurtosis", "kurtosis_pop", "product", "bit_and", "bit_or", "bit_xor")
    + ("approx_count_distinct", "approx_quantile")
)
HOLISTIC = QUANTILES + ("mode", "entropy")
DUPLICATE_INSENSITIVE = (
    "min",
    "max",
    "bool_and",
    "bool_or",
    "arg_max",
    "arg_min",
    "any_value",
    "bit_and",
    "bit_or",
    "approx_count_distinct",
)
# the aggregates with a window form beyond COUNT / SUM / AVG / MIN / MAX (glint.functions.aggregates.windowed)
WINDOW_AGGREGATES = DECOMPOSABLE[6:] + HOLISTIC
# BOOL_AND / BOOL_OR are MIN / MAX of BOOLEAN (FALSE < TRUE)
AS_EXTREME = {"min": "min", "max": "max", "bool_and": "min", "bool_or": "max"}


def decomposable(agg) -> bool:
    """Whether ``agg`` (an AggCall) combines from partial states."""
    if agg.distinct or agg.fn not in DECOMPOSABLE:
        return False
    return not (agg.fn in ORDERED and agg.order)


def duplicate_insensitive(agg) -> bool:
    """Whether repeating an input row (within its group) leaves ``agg`` unchanged."""
    return agg.distinct or agg.fn in DUPLICATE_INSENSITIVE


@dataclass(frozen=True, slots=True)
class Quantile:
    """The q of a quantile aggregate, as DuckDB keeps it: ``value`` is |q| as
    a double; a DECIMAL (or integer) q is also the exact fraction
    ``num / den``, from which the discrete position is computed in integers;
    ``descending`` when q < 0 or the values are ordered descending (WITHIN
    GROUP (ORDER BY x DESC)).

    >>> Quantile(0.25, 1, 4, False)
    0.25
    """

    value: float
    num: int | None
    den: int
    descending: bool

    def __repr__(self):
        return ("-" if self.descending else "") + repr(self.value)
