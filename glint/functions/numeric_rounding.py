"""FLOOR, CEIL, ROUND and TRUNC with DuckDB 1.4's result types and values.

- DOUBLE stays DOUBLE: ``round`` rounds half away from zero to ``d`` digits
  (per row when ``d`` is a column), as DuckDB's RoundOperatorPrecision does,
  NaN and infinity included (``round(x, -1)`` of an infinity is 0, ``trunc``
  keeps it);
- DECIMAL(p, s) is exact: ``floor`` / ``ceil`` give DECIMAL(p, 0), ``round`` /
  ``trunc`` to d digits give DECIMAL(p, min(max(d, 0), s)), dividing the
  unscaled integers (int64 or wide) and scaling back for negative d;
- integers: ``floor`` / ``ceil`` give DOUBLE (DuckDB binds them to its DOUBLE
  form), ``round`` / ``trunc`` keep the type, and negative digits round in
  DuckDB's integer arithmetic, which wraps around on overflow as DuckDB's
  does (``round(2147483647, -1)`` is -2147483646).

>>> import torch
>>> d = Column(T.DECIMAL(5, 2), torch.tensor([155, -155, 149]))
>>> divide_rounded(d.data, 100, "floor").tolist(), divide_rounded(d.data, 100, "ceil").tolist()
([1, -2, 1], [2, -1, 2])
>>> divide_rounded(d.data, 100, "round").tolist(), divide_rounded(d.data, 100, "trunc").tolist()
([2, -2, 1], [1, -1, 1])
>>> x = Column(T.DOUBLE, torch.tensor([2.5, -2.5, float("inf")]))
>>> round_double(x.data, -1, "round").tolist(), round_double(x.data, -1, "trunc").tolist()
([0.0, -0.0, 0.0], [0.0, -0.0, inf])
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.errors import NotSupported, TypeMismatch
from glint.functions.casts import exact_div, round_div, round_div_wide, round_half_away
from glint.functions.registry import SCALAR, Function
from glint.functions.validity import and_valid
from glint.kernels import wide as W
from glint.plan import typing as ty
from glint.plan.expr import Call, Expr, Literal

MODES = ("floor", "ceil", "round", "trunc")
_BEYOND_WIDE = 2**94  # a divisor above every wide magnitude (kernels.wide.LIMIT is 2**93)


# ---------------------------------------------------------------- exact values
def divide_rounded(v: torch.Tensor, k: int, mode: str) -> torch.Tensor:
    """Unscaled exact values (int64, or wide (n, 2) limbs) divided by a
    positive Python int ``k``, rounded by ``mode`` (floor, ceil, round: half
    away from zero, trunc: toward zero); the layout of ``v`` is kept."""
    wide = v.dim() == 2
    sign_hi = v[:, 0] if wide else v
    if mode == "round" and not wide:
        return round_div(v, k)
    if k >= (_BEYOND_WIDE if wide else 2**63):  # |v| < k: the quotient is -1, 0 or 1
        if mode == "floor":
            out = torch.where(sign_hi < 0, -1, 0)
        elif mode == "ceil":
            pos = (v[:, 0] > 0) | ((v[:, 0] == 0) & (v[:, 1] > 0)) if wide else v > 0
            out = pos.long()
        else:  # trunc, and round of wide values: |v| < 2**93 < k / 2
            out = torch.zeros_like(sign_hi)
        out = out.to(torch.int64)
        return W.to_wide(out) if wide else out
    if k == 1:
        return v
    if not wide:
        q = torch.div(v, k, rounding_mode="trunc")
        if mode == "trunc":
            return q
        rest = v - q * k
        if mode == "floor":
            return q - ((rest != 0) & (v < 0)).long()
        return q + ((rest != 0) & (v > 0)).long()
    if mode == "round":
        return round_div_wide(v, k)
    floor = W.floordiv(v, k)
    if mode == "floor":
        return floor
    ceil = W.neg(W.floordiv(W.neg(v), k))
    if mode == "ceil":
        return ceil
    return torch.where((v[:, 0] < 0)[:, None], ceil, floor)


def _decimal_digits(a: Column, to: T.DataType, digits: int, mode: str) -> Column:
    """A DECIMAL(p, s) column rounded to ``digits`` digits after the point
    (negative: before it), as DECIMAL ``to``."""
    p, s = a.dtype.precision, a.dtype.scale
    drop = s - digits  # digits of the unscaled value dropped
    zeros = max(0, -digits)  # and put back as zeros
    if drop <= 0:
        return Column(to, a.data, a.valid)
    if digits <= s - p:
        # as many digits as the type has before the point, or more: DuckDB gives 0 (it
        # gives 0 for NULL too; here NULL stays NULL)
        return Column(to, torch.zeros_like(a.data), a.valid)
    v = a.data if a.is_wide or p <= 18 else W.to_wide(a.data)  # 38 digits: no int64 overflow in between
    q = divide_rounded(v, 10**drop, mode)
    if zeros:
        if q.dim() == 2 or to.precision > 18:
            q = W.scale(q, 10**zeros)
        else:
            q = q * 10**zeros
    return Column(to, q, a.valid)


# ---------------------------------------------------------------- doubles
def round_double(x: torch.Tensor, digits, mode: str) -> torch.Tensor:
    """DuckDB's RoundOperatorPrecision / TruncOperatorPrecision on doubles:
    scale by 10**|digits|, round (half away from zero) or truncate, scale
    back; a non-finite result is the input (0 for ``round`` to negative
    digits). ``digits``: a Python int or a per-row int tensor."""
    op = round_half_away if mode == "round" else torch.trunc
    if isinstance(digits, int):
        mag = abs(digits)
        m = torch.tensor(10.0**mag if mag <= 308 else float("inf"), dtype=torch.float64, device=x.device)
        if digits >= 0:
            out = exact_div(op(x * m), m) if digits else op(x)
            return torch.where(torch.isfinite(out), out, x)
        out = op(x / m) * m
        return torch.where(torch.isfinite(out), out, torch.zeros_like(x) if mode == "round" else x)
    d = digits.long()
    m = torch.pow(torch.full_like(x, 10.0), d.abs().double())
    up = op(x * m) / m
    down = op(x / m) * m
    fallback_down = torch.zeros_like(x) if mode == "round" else x
    return torch.where(
        d >= 0, torch.where(torch.isfinite(up), up, x), torch.where(torch.isfinite(down), down, fallback_down)
    )


# ---------------------------------------------------------------- integers
def round_integer(v: torch.Tensor, dtype: T.DataType, digits, mode: str) -> torch.Tensor:
    """round / trunc of INTEGER or BIGINT values to ``digits`` (a Python int
    or an int tensor per row) as DuckDB's RoundIntegerOperator: nothing for
    digits >= 0; else v + 10**k / 2 (signed) divided and multiplied by 10**k
    in int64, wrapping on overflow; 0 when 10**k is beyond int64."""
    x = v.long()
    if isinstance(digits, int):
        if digits >= 0:
            return v
        k = -digits
        if k >= 19:
            return torch.zeros_like(v)
        pw = torch.full_like(x, 10**k)
    else:
        k = torch.clamp(-digits.long(), 0, 18)
        pw = torch.pow(torch.full_like(x, 10), k)
    if mode == "round":
        half = torch.div(pw, 2, rounding_mode="trunc")
        x = x + torch.where(x < 0, -half, half)
    out = torch.div(x, pw, rounding_mode="trunc") * pw
    if not isinstance(digits, int):
        out = torch.where(digits.long() >= 0, v.long(), torch.where(-digits.long() >= 19, 0, out))
    return out.to(dtype.torch_dtype)


def _hugeint_digits(a: Column, digits: int, mode: str) -> Column:
    k = -digits
    if k >= 39:
        return Column(a.dtype, torch.zeros_like(a.data), a.valid)
    v = W.to_wide(a.data)
    q = divide_rounded(v, 10**k, mode)
    return Column(a.dtype, W.scale(q, 10**k), a.valid)


# ---------------------------------------------------------------- evaluators
def _floor_ceil(mode: str):
    def run(e: Call, cols: list[Column]) -> Column:
        (a,) = cols
        if a.dtype.is_decimal:
            return Column(e.type, divide_rounded(a.data, 10**a.dtype.scale, mode), a.valid)
        fn = torch.floor if mode == "floor" else torch.ceil
        return Column(e.type, fn(a.data), a.valid)

    return run


def _round_or_trunc(mode: str):
    def run(e: Call, cols: list[Column]) -> Column:
        a = cols[0]
        t = a.dtype
        if len(cols) > 1:  # digits per row
            d = cols[1]
            valid = and_valid(a.valid, d.valid)
            if t.kind == "DOUBLE":
                return Column(e.type, round_double(a.data, d.data, mode), valid)
            return Column(e.type, round_integer(a.data, t, d.data, mode), valid)
        digits = e.params[0]
        if t.is_decimal:
            return _decimal_digits(a, e.type, digits, mode)
        if t.kind == "DOUBLE":
            return a.with_data(round_double(a.data, digits, mode))
        if digits >= 0:
            return a
        if t.kind == "HUGEINT":
            return _hugeint_digits(a, digits, mode)
        if a.is_wide:
            raise NotSupported(f"{mode} of a value beyond 64 bits")
        return a.with_data(round_integer(a.data, t, digits, mode))

    return run


# ---------------------------------------------------------------- binding
def _number(v: Expr, fn: str) -> Expr:
    if not v.type.is_numeric:
        raise TypeMismatch(f"Type mismatch: {fn}() needs a number, got {ty.show(v)} of type {v.type}")
    return v


def null_decimal(v: Expr) -> bool:
    """A constant NULL of a DECIMAL type: DuckDB's DECIMAL functions (abs,
    floor, ceil, round, trunc) give it the NULL type, not a DECIMAL."""
    return isinstance(v, Literal) and v.value is None and v.type.is_decimal


def _bind_floor_ceil(mode: str):
    def bind(args, site):
        if len(args) != 1:
            raise NotSupported(f"{mode}() with a number of digits (DuckDB's {mode} takes one argument)")
        v = args[0]
        if v.type.kind == "NULL":
            return Literal(None, T.DOUBLE)
        if null_decimal(v):
            return Literal(None, T.NULLTYPE)
        v = _number(v, mode)
        if v.type.is_decimal:
            if v.type.scale == 0:
                return v
            return Call(mode, (v,), T.DECIMAL(v.type.precision, 0))
        return Call(mode, (ty.cast(v, T.DOUBLE),), T.DOUBLE)

    return bind


def _digits_arg(e: Expr | None, fn: str):
    """ROUND / TRUNC's digits: an int (0 when absent), None for a NULL
    constant, or the expression of per-row digits (an INTEGER)."""
    if e is None:
        return 0
    if isinstance(e, Literal):
        if e.value is None:
            return None
        if e.type.is_string:
            try:
                return int(e.value.strip())
            except ValueError:
                raise TypeMismatch(f"Could not convert string '{e.value}' to INT32") from None
        if e.type.kind == "INTEGER":
            return e.value
    if e.type.kind != "INTEGER":
        raise TypeMismatch(f"Type mismatch: {fn}() takes INTEGER digits, got {ty.show(e)} of type {e.type}")
    return e


def _bind_round_or_trunc(mode: str):
    def bind(args, site):
        if len(args) not in (1, 2):
            raise TypeMismatch(f"{mode}() takes a number and optional digits")
        v = args[0]
        digits = _digits_arg(args[1] if len(args) > 1 else None, mode)
        if v.type.kind == "NULL":
            return Literal(None, T.BIGINT)  # DuckDB: round(NULL, n) is BIGINT
        if null_decimal(v):
            return Literal(None, T.NULLTYPE)
        v = _number(v, mode)
        if digits is None:
            return Literal(None, T.NULLTYPE if v.type.is_decimal else v.type)
        if isinstance(digits, Expr):
            if v.type.is_decimal:
                raise NotSupported(f"{mode.upper()}(DECIMAL, INTEGER) with non-constant precision")
            if v.type.kind == "HUGEINT":
                raise NotSupported(f"{mode.upper()}(HUGEINT, INTEGER) with non-constant precision")
            return Call(mode, (v, digits), v.type)
        if v.type.is_decimal:
            s = max(0, min(digits, v.type.scale))
            if digits >= v.type.scale:
                return v
            return Call(mode, (v,), T.DECIMAL(v.type.precision, s), (digits,))
        if v.type.is_integer and digits >= 0:
            return v
        return Call(mode, (v,), v.type, (digits,))

    return bind


FUNCTIONS = [
    Function(
        "floor",
        SCALAR,
        "math",
        "floor(NUMERIC) -> DOUBLE | DECIMAL(p, 0)",
        "Largest integer value not above the argument (a DECIMAL keeps its precision, scale 0).",
        bind=_bind_floor_ceil("floor"),
        evaluate=_floor_ceil("floor"),
        strict=True,
    ),
    Function(
        "ceil",
        SCALAR,
        "math",
        "ceil(NUMERIC) -> DOUBLE | DECIMAL(p, 0)",
        "Smallest integer value not below the argument (a DECIMAL keeps its precision, scale 0).",
        aliases=("ceiling",),
        bind=_bind_floor_ceil("ceil"),
        evaluate=_floor_ceil("ceil"),
        strict=True,
    ),
    Function(
        "round",
        SCALAR,
        "math",
        "round(NUMERIC [, INTEGER digits]) -> NUMERIC",
        "Rounded half away from zero to digits after the point (0 by default; negative: before it).",
        bind=_bind_round_or_trunc("round"),
        evaluate=_round_or_trunc("round"),
        strict=True,
    ),
    Function(
        "trunc",
        SCALAR,
        "math",
        "trunc(NUMERIC [, INTEGER digits]) -> NUMERIC",
        "Truncated toward zero to digits after the point (0 by default; negative: before it).",
        bind=_bind_round_or_trunc("trunc"),
        evaluate=_round_or_trunc("trunc"),
        strict=True,
    ),
]
