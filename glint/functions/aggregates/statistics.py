"""CORR, COVAR_POP / COVAR_SAMP, the REGR_* family, SKEWNESS, KURTOSIS and
KURTOSIS_POP: their states (glint.kernels.central_moments) and DuckDB 1.4's
finishing formulas, NULLs, NaNs and "out of range" errors.

The pair aggregates f(y, x) see the rows where both y and x are present;
their state is [count, mean_y, mean_x, M2_y, M2_x, C]. With n the count,
var_x = M2_x / n (0 for one pair) and cov = C / n:

- COVAR_POP = cov (NULL for no pairs), COVAR_SAMP = C / (n - 1) (NULL below
  two pairs);
- CORR = cov / (sqrt(var_x) * sqrt(var_y)), NaN when a deviation is 0;
  "STDDEV_POP for X (Y) is out of range!" when one is not finite;
- REGR_SLOPE = cov / var_x (NaN when var_x is 0; "VARPOP is out of range!"
  when it is not finite), REGR_INTERCEPT = avg(y) - slope * avg(x) (NULL
  where the slope is NaN);
- REGR_R2: NULL when var_x is 0, 1 when var_y is 0, else CORR squared;
  "VARPOP(X) / VARPOP(Y) is out of range!";
- REGR_COUNT = n; REGR_AVGX / REGR_AVGY: the means; REGR_SXX / REGR_SYY =
  n * var ("VARPOP is out of range!"); REGR_SXY = n * cov.

SKEWNESS, KURTOSIS and KURTOSIS_POP have the state [count, mean, M2, M3,
M4]; with m_k = M_k / n: skewness = sqrt(n (n - 1)) / (n - 2) * m3 /
m2**1.5 (NULL below three values, NaN when m2 is 0); kurtosis_pop = m4 /
m2**2 - 3 (NULL below two values or when m2 is 0), kurtosis = (n - 1) *
((n + 1) * m4 / m2**2 - 3 (n - 1)) / ((n - 2) (n - 3)) (NULL below four
values); a result that is not finite is DuckDB's "out of range" error.

>>> import torch, pyarrow as pa
>>> from glint.kernels.groupby import Slots
>>> from glint.plan.expr import AggCall
>>> y = Column.from_arrow(pa.array([1.0, 2.0, 4.0, 7.0]))
>>> x = Column.from_arrow(pa.array([1.0, 2.0, 3.0, None]))
>>> s = Slots(torch.tensor([0, 0, 0, 0]), 1)
>>> st = pair_states(None, [y, x], s)
>>> [round(pair_final(AggCall(f, (), T.DOUBLE), st).to_arrow()[0].as_py(), 6) for f in ("corr", "regr_slope", "regr_intercept")]
[0.981981, 1.5, -0.666667]
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.errors import ExecutionError
from glint.kernels import central_moments as CM


def _out_of_range(what: str):
    return ExecutionError(f"Out of Range Error: {what} is out of range!")


def _check_finite(values: torch.Tensor, where: torch.Tensor, what: str) -> None:
    if bool((where & ~torch.isfinite(values)).any()):
        raise _out_of_range(what)


def _doubles(cols) -> list[Column]:
    return [Column(T.BIGINT, cols[0])] + [Column(T.DOUBLE, c) for c in cols[1:]]


# ------------------------------------------------------------------ CORR, COVAR_*, REGR_*
def pair_states(agg, cols: list[Column], slots) -> list[Column]:
    y, x = cols
    ok = y.validity() & x.validity()
    return _doubles(CM.comoments(y.data.double(), x.data.double(), ok, slots))


def pair_combine(agg, cols: list[Column], slots) -> list[Column]:
    return _doubles(CM.merge_comoments(*(c.data for c in cols), slots))


def pair_final(agg, cols: list[Column]) -> Column:
    n, my, mx, m2y, m2x, c = (col.data for col in cols)
    fn = agg.fn
    nd = n.double().clamp(min=1.0)
    has = n > 0
    zero = torch.zeros_like(my)
    var_x = torch.where(n > 1, m2x / nd, zero)
    var_y = torch.where(n > 1, m2y / nd, zero)
    cov = c / nd
    if fn == "regr_count":
        return Column(agg.type, n)
    if fn in ("regr_avgx", "regr_avgy"):
        return _result(mx if fn == "regr_avgx" else my, has)
    if fn == "covar_pop":
        return _result(cov, has)
    if fn == "covar_samp":
        return _result(c / (nd - 1.0).clamp(min=1.0), n > 1)
    if fn == "regr_sxy":
        return _result(cov * n.double(), has)
    if fn in ("regr_sxx", "regr_syy"):
        var = var_x if fn == "regr_sxx" else var_y
        _check_finite(var, has, "VARPOP")
        return _result(n.double() * var, has)
    if fn in ("regr_slope", "regr_intercept"):
        _check_finite(var_x, has, "VARPOP")
        slope = torch.where(var_x != 0, cov / torch.where(var_x != 0, var_x, 1.0), torch.full_like(cov, torch.nan))
        if fn == "regr_slope":
            return _result(slope, has)
        return _result(my - slope * mx, has & ~torch.isnan(slope))
    if fn == "regr_r2":
        _check_finite(var_x, has, "VARPOP(X)")
        valid = has & (var_x != 0)
        _check_finite(var_y, valid, "VARPOP(Y)")
        r = _corr(cov, var_x, var_y, valid & (var_y != 0))
        return _result(torch.where(var_y == 0, torch.ones_like(r), r * r), valid)
    return _result(_corr(cov, var_x, var_y, has), has)  # corr


def _corr(cov, var_x, var_y, valid) -> torch.Tensor:
    std_x, std_y = torch.sqrt(var_x), torch.sqrt(var_y)
    _check_finite(std_x, valid, "STDDEV_POP for X")
    _check_finite(std_y, valid, "STDDEV_POP for Y")
    den = std_x * std_y
    return torch.where(den != 0, cov / torch.where(den != 0, den, 1.0), torch.full_like(cov, torch.nan))


def _result(values: torch.Tensor, valid: torch.Tensor) -> Column:
    return Column(T.DOUBLE, torch.where(valid, values, torch.zeros_like(values)), valid)


# ------------------------------------------------------------------ SKEWNESS, KURTOSIS
def shape_states(agg, x: Column, slots) -> list[Column]:
    return _doubles(CM.moments4(x.data.double(), x.valid, slots))


def shape_combine(agg, cols: list[Column], slots) -> list[Column]:
    return _doubles(CM.merge4(*(c.data for c in cols), slots))


def shape_final(agg, cols: list[Column]) -> Column:
    n, _, m2, m3, m4 = (c.data for c in cols)
    nd = n.double().clamp(min=1.0)
    m2n, m3n, m4n = m2 / nd, m3 / nd, m4 / nd
    if agg.fn == "skewness":
        valid = n > 2
        div = torch.sqrt(torch.pow(m2n, 3).clamp(min=0.0))
        k = torch.sqrt(nd * (nd - 1.0)) / (nd - 2.0).clamp(min=1.0)
        value = torch.where(div != 0, k * m3n / torch.where(div != 0, div, 1.0), torch.full_like(div, torch.nan))
        _check_finite(value, valid & (div != 0), "SKEW")
        return _result(value, valid)
    valid = (n > 1) & (m2 != 0) & ~(m2n <= 0)
    ratio = m4n / torch.where(valid, m2n * m2n, 1.0)
    if agg.fn == "kurtosis_pop":
        value = ratio - 3.0
    else:
        valid = valid & (n > 3)
        den = ((nd - 2.0) * (nd - 3.0)).clamp(min=1.0)
        value = (nd - 1.0) * ((nd + 1.0) * ratio - 3.0 * (nd - 1.0)) / den
    _check_finite(value, valid, "Kurtosis")
    return _result(value, valid)
