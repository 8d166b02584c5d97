"""CAST between glint's types, with DuckDB's rounding, range checks and
error messages, and the conversions exact numerics share (DECIMAL to
DOUBLE, division rounded half away from zero).

>>> import torch
>>> from glint.columnar import types as T
>>> c = Column(T.DECIMAL(4, 1), torch.tensor([15, -25, 4]))
>>> cast_column(c, T.INTEGER).data.tolist(), cast_column(c, T.DOUBLE).data.tolist()
([2, -3, 0], [1.5, -2.5, 0.4])
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.errors import ExecutionError, NotSupported, TypeMismatch
from glint.functions.dates import timestamps
from glint.functions.registry import OPERATOR, SCALAR, Function
from glint.functions.strings import core as strings
from glint.kernels import wide as W
from glint.plan import typing as ty
from glint.plan.expr import Call, Literal

POW10 = [10**i for i in range(19)]


LIMIT_WIDE = 2**93  # wide values stay below this magnitude (kernels.wide.LIMIT)


def exact_div(v: torch.Tensor, k) -> torch.Tensor:
    """v / k correctly rounded. On CUDA, dividing by a Python number multiplies
    by its reciprocal (-9999 / 10 gives -999.9000000000001); dividing by a
    tensor divides."""
    return v / torch.tensor(float(k), dtype=v.dtype, device=v.device)


def decimal_to_double(v: torch.Tensor, scale: int, huge: bool = False) -> torch.Tensor:
    """Unscaled DECIMAL values (int64 or wide) as DOUBLE, rounded as DuckDB
    rounds them (TryCastDecimalToFloatingPoint): values up to 2**53 (or with
    scale 0) are converted and divided by 10**s; others are split by
    truncating division, double(v / 10**s) + double(v % 10**s) / 10**s
    (double(v) / 10**s differs in the last bit for about a quarter of
    18-digit values). ``huge``: DuckDB stores the type in 128 bits (DECIMAL
    over 18 digits, HUGEINT), whose conversion :func:`wide.to_double_duckdb`
    copies.

    >>> import torch
    >>> decimal_to_double(torch.tensor([-973484194847059795, 110429556731179690, -7]), 2).tolist()
    [-9734841948470596.0, 1104295567311796.9, -0.07]
    """
    huge = huge or v.dim() == 2
    conv = W.to_double_duckdb if huge else (lambda x: x.double())
    if scale == 0:
        return conv(v)
    p = 10**scale
    if v.dim() == 2:
        q = W.floordiv(v, p)
        r = W.narrow(W.sub(v, W.scale(q, p)))  # 0 <= r < p
        neg = (r != 0) & (v[:, 0] < 0)  # truncate toward zero, as C does
        q = torch.where(neg[:, None], W.add(q, torch.ones_like(r)), q)
        r = torch.where(neg, r - p, r)
        hi = v[:, 0]
        small = (hi >= -(1 << 21)) & ((hi < (1 << 21)) | ((hi == (1 << 21)) & (v[:, 1] == 0)))
    else:
        q = torch.div(v, p, rounding_mode="trunc")
        r = v - q * p
        small = v.abs() <= 2**53
    return torch.where(small, exact_div(conv(v), p), conv(q) + exact_div(r.double(), p))


def round_div(v: torch.Tensor, d: int) -> torch.Tensor:
    """v / d rounded half away from zero (integer tensors)."""
    if d >= 2**62:  # |v / d| < 2: decided exactly by comparing with d / 2
        half = d // 2
        big = (v.abs() >= half) if half < 2**63 else torch.zeros_like(v, dtype=torch.bool)
        return torch.where(big, torch.sign(v), torch.zeros_like(v))
    q = torch.div(v.abs() + d // 2, d, rounding_mode="floor")
    return torch.where(v < 0, -q, q)


def round_div_wide(v: torch.Tensor, d: int) -> torch.Tensor:
    """Wide v / d rounded half away from zero (d a power of ten above 1).

    >>> W.to_python(round_div_wide(W.to_wide(torch.tensor([15, -15, 14, -25])), 10))
    [2, -2, 1, -3]
    """
    neg = v[:, 0] < 0
    mag = torch.where(neg[:, None], W.neg(v), v)
    half = (
        W.to_wide(torch.full((v.shape[0],), d // 2, dtype=torch.int64, device=v.device))
        if d // 2 < 2**63
        else W.scale(torch.ones(v.shape[0], dtype=torch.int64, device=v.device), d // 2)
    )
    q = W.floordiv(W.add(mag, half), d)
    return torch.where(neg[:, None], W.neg(q), q)


def round_half_away(x: torch.Tensor) -> torch.Tensor:
    """Round half away from zero, keeping the sign of zero (ROUND(-0.01, 1) is -0.0)."""
    # as C's round(): floor(|x| + 0.5) is wrong above 2**52, where |x| + 0.5 itself rounds
    t = torch.trunc(x)
    return torch.copysign(torch.where((x - t).abs() >= 0.5, t + torch.sign(x), t), x)


class CastErrors:
    """Where a CAST fails. A CAST raises DuckDB's error for the first failing
    row (``safe`` False); a TRY_CAST (``safe`` True) collects the failing
    rows in ``rows``, which become NULL. A refusal (NotSupported: what glint
    cannot represent) raises either way."""

    __slots__ = ("safe", "rows")

    def __init__(self, safe: bool):
        self.safe = safe
        self.rows: torch.Tensor | None = None

    def fail(self, bad: torch.Tensor, valid, message) -> None:
        """Rows ``bad`` (where ``valid``) fail; ``message``: the error text,
        or a function of the valid failing rows' mask giving it."""
        if valid is not None:
            bad = bad & valid
        if self.safe:
            self.rows = bad if self.rows is None else self.rows | bad
        elif bool(bad.any()):
            raise ExecutionError(message if isinstance(message, str) else message(bad))


def cast_column(c: Column, to: T.DataType, errors: CastErrors | None = None) -> Column:
    """CAST(c AS to); with ``errors`` safe, TRY_CAST (see :func:`try_cast_column`)."""
    errors = errors if errors is not None else CastErrors(False)
    src = c.dtype
    if src == to:
        return c
    if src.kind == "NULL":
        return Column.nulls(to, len(c), c.device)
    if to.is_string:
        return strings.to_varchar(c)
    if src.is_string:
        try:
            return strings.from_varchar(c, to, safe=errors.safe)
        except OverflowError:
            raise NotSupported(f"CAST of text with more than 18 digits to {to}") from None
    if c.is_wide:
        return _cast_wide(c, to, errors)
    d = c.data
    if to.kind == "DOUBLE":
        if src.is_decimal or src.kind == "HUGEINT":
            huge = src.kind == "HUGEINT" or src.precision > 18
            return Column(to, decimal_to_double(d, scale_of(src), huge), c.valid)
        return Column(to, d.double(), c.valid)
    if to.is_decimal:
        return _cast_to_decimal(c, to, errors)
    if to.is_integer:
        if src.is_decimal:
            v = round_div(d, 10**src.scale)
        elif src.kind == "DOUBLE":
            _check_finite(d, c.valid, to, errors)
            v = torch.round(d)  # DuckDB rounds doubles half to even here
            _check_range(v, 2**63 if to.kind != "INTEGER" else 2**31, c.valid, f"DOUBLE to {to}", errors)
        elif src.kind in ("DATE", "TIMESTAMP"):
            raise NotSupported(f"CAST from {src} to {to}")
        else:
            v = d
        if to.kind == "INTEGER":
            _check_range(v, 2**31, c.valid, f"{src} to INTEGER", errors)
        return Column(to, v.to(to.torch_dtype), c.valid)
    if to.kind == "BOOLEAN" and src.is_numeric:
        return Column(to, d != 0, c.valid)
    if to.kind == "TIMESTAMP" and src.kind == "DATE":
        return timestamps.from_date(c, safe=errors.safe)
    if to.kind == "DATE" and src.kind == "TIMESTAMP":
        return timestamps.to_date(c)
    raise NotSupported(f"CAST from {src} to {to}")


def try_cast_column(c: Column, to: T.DataType) -> Column:
    """TRY_CAST(c AS to): NULL where CAST raises (a string that does not
    parse, a value out of the type's range), row by row.

    >>> import torch
    >>> x = Column(T.DOUBLE, torch.tensor([2.5, 3e9, float("nan")]))
    >>> try_cast_column(x, T.INTEGER).to_arrow().to_pylist()
    [2, None, None]
    """
    errors = CastErrors(True)
    out = cast_column(c, to, errors)
    if errors.rows is None:
        return out
    valid = ~errors.rows if out.valid is None else out.valid & ~errors.rows
    return Column(out.dtype, out.data, valid, out.dictionary)


def _out_of_range_message(src: T.DataType, to: T.DataType) -> str:
    return f"Conversion Error: value out of range in CAST from {src} to {to}"


def _cast_wide(c: Column, to: T.DataType, errors: CastErrors) -> Column:
    """CAST of a value held beyond int64 (wide limbs)."""
    src = c.dtype
    if to.kind == "DOUBLE":
        return Column(to, decimal_to_double(c.data, scale_of(src), huge=True), c.valid)
    if to.is_decimal and to.precision > 18 and to.scale >= scale_of(src):
        W.check_magnitude(W.to_double(c.data) * float(10 ** (to.scale - scale_of(src))), c.valid, f"CAST to {to}")
        return Column(to, W.scale(c.data, 10 ** (to.scale - scale_of(src))), c.valid)
    if (to.kind == "HUGEINT" or to.is_decimal) and to.scale == scale_of(src):
        if to.is_decimal and 10**to.precision < LIMIT_WIDE:
            lim = W.to_wide(torch.tensor([10**to.precision], device=c.data.device)).expand(len(c), 2)
            bad = W.compare("ge", c.data, lim) | W.compare("le", c.data, W.neg(lim))
            errors.fail(bad, c.valid, _out_of_range_message(src, to))
            if to.precision <= 18:
                return Column(to, W.narrow(c.data), c.valid)
        return Column(to, c.data, c.valid)
    to_scale = to.scale if to.is_decimal else 0
    if (to.is_decimal or to.kind in ("INTEGER", "BIGINT")) and to_scale < scale_of(src):
        # fewer digits after the point (an integer has none): rounded half away from zero
        # as DuckDB rounds, then cast at the same scale
        data = c.data
        if to.is_decimal and scale_down_bound(to, scale_of(src)) < W.LIMIT:
            bound = scale_down_bound(to, scale_of(src))
            lim = torch.tensor([[bound >> 32, bound & 0xFFFFFFFF]], dtype=data.dtype, device=data.device)
            lim = lim.expand(len(c), 2)
            bad = W.compare("ge", data, lim) | W.compare("le", data, W.neg(lim))
            errors.fail(bad, c.valid, _out_of_range_message(src, to))
            data = torch.where(bad[:, None], torch.zeros_like(data), data)
        v = round_div_wide(data, 10 ** (scale_of(src) - to_scale))
        mid = T.DECIMAL(38, to_scale) if to.is_decimal else T.HUGEINT
        return cast_column(Column(mid, v, c.valid), to, errors)
    if to.kind in ("INTEGER", "BIGINT"):
        fits = (c.data[:, 0] >= -(1 << 31)) & (c.data[:, 0] < (1 << 31))
        errors.fail(~fits, c.valid, _out_of_range_message(src, to))
        return cast_column(Column(T.BIGINT, W.narrow(c.data), c.valid), to, errors)
    if to.is_decimal and to.precision <= 18 and to.scale > scale_of(src):
        # more digits after the point, at most 18 in all: a value fits where it has at most
        # precision - (added digits) digits at its own scale; those then scale within int64
        data = c.data
        limit = 10 ** max(to.precision - (to.scale - scale_of(src)), 0)
        if limit < W.LIMIT:
            lim = torch.tensor([[limit >> 32, limit & 0xFFFFFFFF]], dtype=data.dtype, device=data.device)
            lim = lim.expand(len(c), 2)
            bad = W.compare("ge", data, lim) | W.compare("le", data, W.neg(lim))
            errors.fail(bad, c.valid, _out_of_range_message(src, to))
            data = torch.where(bad[:, None], torch.zeros_like(data), data)
        return Column(to, W.narrow(data) * 10 ** (to.scale - scale_of(src)), c.valid)
    raise NotSupported(f"CAST of a value beyond 64 bits to {to}")


def scale_down_bound(to: T.DataType, src_scale: int) -> int:
    """DuckDB's limit for a CAST to a DECIMAL of fewer digits after the point,
    in the source's units: the value must stay below 10**(p - s) - 0.5 in
    magnitude (999.50 does not become DECIMAL(4,1), though 999.5 would fit;
    999.96 would round to 1000.0, which does not fit either).

    >>> scale_down_bound(T.DECIMAL(4, 1), 2)
    99950
    """
    return 10 ** (to.precision - to.scale + src_scale) - 5 * 10 ** (src_scale - 1)


def _cast_to_decimal(c: Column, to: T.DataType, errors: CastErrors) -> Column:
    """CAST of an int64-held value to DECIMAL (widened beyond int64 where the type allows)."""
    src, d = c.dtype, c.data
    if src.is_decimal or src.kind == "HUGEINT":
        ds = to.scale - scale_of(src)
        src_whole = 38 if src.kind == "HUGEINT" else src.precision - src.scale
        if ds < 0:
            bound = scale_down_bound(to, scale_of(src))
            if bound < 2**63:
                _check_range(d, bound, c.valid, f"{src} to {to}", errors, True)
        if to.precision - to.scale < src_whole:
            bound = 10 ** (to.precision - to.scale + scale_of(src))
            _check_range(d, bound, c.valid, f"{src} to {to}", errors, True)
        if ds > 0 and _out_of_range(d, 2**63 // 10**ds, c.valid):
            if to.precision > 18:
                return Column(to, W.scale(d, 10**ds), c.valid)  # beyond int64: widen
            errors.fail(_range_mask(d, 2**63 // 10**ds), c.valid, _out_of_range_message(src, to))
        v = d * 10**ds if ds >= 0 else round_div(d, 10**-ds)
    elif src.kind == "DOUBLE":
        _check_finite(d, c.valid, to, errors)
        v = round_half_away(d * float(10**to.scale))
        if to.precision > 18 and _out_of_range(v, 2**63, c.valid):
            # the double's exact integer value, split into limbs (division by 2**32 is exact)
            _check_range(v, 10**to.precision, c.valid, f"DOUBLE to {to}", errors, True)
            v = torch.where(torch.isfinite(v) & (v.abs() < float(10**to.precision)), v, torch.zeros_like(v))
            W.check_magnitude(v, c.valid, f"CAST to {to}")  # beyond glint's wide values
            hi = torch.floor(v / 4294967296.0)
            return Column(to, torch.stack([hi.long(), (v - hi * 4294967296.0).long()], dim=1), c.valid)
        _check_range(v, min(2**63, 10**to.precision), c.valid, f"DOUBLE to {to}", errors, to.precision <= 18)
        v = torch.where(torch.isfinite(v), v, torch.zeros_like(v)).long()
    elif src.is_integer or src.kind == "BOOLEAN":
        if src.kind != "BOOLEAN" and to.precision - to.scale < 19:
            _check_range(d.long(), 10 ** (to.precision - to.scale), c.valid, f"{src} to {to}", errors, True)
        if to.scale and src.kind != "BOOLEAN" and _out_of_range(d.long(), 2**63 // 10**to.scale, c.valid):
            if to.precision > 18:
                return Column(to, W.scale(d.long(), 10**to.scale), c.valid)  # beyond int64: widen
            errors.fail(_range_mask(d.long(), 2**63 // 10**to.scale), c.valid, _out_of_range_message(src, to))
        v = d.long() * 10**to.scale
    else:
        raise NotSupported(f"CAST from {src} to {to}")
    return Column(to, v, c.valid)


def _check_finite(v: torch.Tensor, valid, to: T.DataType, errors: CastErrors) -> None:
    errors.fail(
        ~torch.isfinite(v), valid, lambda bad: f"Conversion Error: Could not cast value {float(v[bad][0])} to {to}"
    )


def _range_mask(v: torch.Tensor, bound: int, digits: bool = False) -> torch.Tensor:
    """Values outside -bound <= v < bound (a two's-complement range: 2**31,
    2**63), or with ``digits`` (a DECIMAL's 10**p) outside |v| < bound on
    both sides: -1000 does not fit DECIMAL(4,1)."""
    if bound >= 2**63 and not v.is_floating_point():
        return torch.zeros_like(v, dtype=torch.bool)  # no int64 value reaches it
    if v.is_floating_point():
        bound = float(bound)
    return (v >= bound) | ((v <= -bound) if digits else (v < -bound))


def _out_of_range(v: torch.Tensor, bound: int, valid, digits: bool = False) -> bool:
    """Whether a valid value is out of range (:func:`_range_mask`)."""
    bad = _range_mask(v, bound, digits)
    if valid is not None:
        bad &= valid
    return bool(bad.any())


def _check_range(v: torch.Tensor, bound: int, valid, what: str, errors: CastErrors, digits: bool = False):
    if v.dim() == 2:
        return  # wide values are range-checked where they are made
    errors.fail(_range_mask(v, bound, digits), valid, f"Conversion Error: value out of range in CAST from {what}")


def scale_of(t: T.DataType) -> int:
    """The scale of an exact number's representation (0 unless DECIMAL)."""
    return t.scale if t.is_decimal else 0


# ---------------------------------------------------------------- definitions
_TEMPORAL = ("DATE", "TIMESTAMP")


def check_cast(src: T.DataType, to: T.DataType) -> None:
    """DuckDB's binder error for a CAST between a date type and a number."""
    kinds = {src.kind, to.kind}
    if (
        kinds & set(_TEMPORAL)
        and src != to
        and src.kind not in ("NULL", "VARCHAR")
        and to.kind != "VARCHAR"
        and kinds != set(_TEMPORAL)
    ):
        raise TypeMismatch(f"Conversion Error: Unimplemented type for cast ({src} -> {to})")


def _bind_cast(args, site):
    """CAST(x AS t): ``site.options["to"]`` is t."""
    to = site.options["to"]
    v = args[0]
    check_cast(v.type, to)
    return ty.cast(v, to)


def _bind_try_cast(args, site):
    """TRY_CAST(x AS t): a cast DuckDB does not implement (a DATE to a
    number) is NULL rather than an error."""
    to = site.options["to"]
    v = args[0]
    try:
        check_cast(v.type, to)
    except TypeMismatch:
        return Literal(None, to)
    if v.type == to:
        return v
    if v.type.kind == "NULL":
        return Literal(None, to)
    return Call("try_cast", (v,), to)


def _bind_typeof(args, site):
    """typeof(x): the name of x's type as DuckDB spells it (a constant; x is
    bound for its type and never evaluated)."""
    t = args[0].type
    return Literal('"NULL"' if t.kind == "NULL" else str(t), T.VARCHAR)


FUNCTIONS = [
    Function(
        "cast",
        OPERATOR,
        "cast",
        "CAST(x AS type), x::type",
        "x converted to another type (DuckDB's rules and errors).",
        bind=_bind_cast,
        evaluate=lambda call, cols: cast_column(cols[0], call.type),
        strict=True,
    ),
    Function(
        "try_cast",
        OPERATOR,
        "cast",
        "TRY_CAST(x AS type)",
        "x converted to another type as CAST does, NULL where CAST raises.",
        bind=_bind_try_cast,
        evaluate=lambda call, cols: try_cast_column(cols[0], call.type),
        strict=True,
    ),
    Function(
        "typeof",
        SCALAR,
        "types",
        "typeof(ANY) -> VARCHAR",
        "The name of the argument's type.",
        bind=_bind_typeof,
        rewrites_to=(),
    ),
]
