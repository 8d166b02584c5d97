"""Evaluation of typed expressions over a batch, with SQL NULL semantics.

Every function works on whole columns with torch ops, on whatever device the
batch lives; string work is in glint.functions.strings.

>>> import torch
>>> from glint.columnar import types as T
>>> from glint.plan.expr import Call, ColRef, Field, Literal
>>> from glint.columnar.column import Batch, Column
>>> a = Field(1, "a", T.INTEGER)
>>> b = Batch({1: Column(T.INTEGER, torch.tensor([1, 2, 3], dtype=torch.int32))}, 3)
>>> evaluate(Call("gt", (ColRef(a), Literal(1, T.INTEGER)), T.BOOLEAN), b).data.tolist()
[False, True, True]
"""
from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.errors import ExecutionError, NotSupported
from glint.plan.expr import Call, Case, ColRef, Expr, Literal
from glint.kernels import wide as W
from glint.columnar.column import LIMB, Batch, Column, Dictionary, literal_value
from glint.functions.strings import core as strings
from glint.functions.dates import timestamps

I32_MIN, I32_MAX = -2**31, 2**31 - 1


def evaluate(e: Expr, batch: Batch) -> Column:
    if isinstance(e, ColRef):
        return batch[e.field.id]
    if isinstance(e, Literal):
        return constant(e.value, e.type, batch.num_rows, _device(batch))
    if isinstance(e, Case):
        return _case(e, batch)
    if isinstance(e, Call):
        fn = _FUNCS.get(e.fn)
        if fn is None:
            raise NotSupported(f"function {e.fn}")
        return fn(e, batch)
    raise NotSupported(f"expression {e!r}")


def constant_value(e: Expr):
    """The value of an expression without column references (a Literal's
    representation), computed by :func:`evaluate` on a one-row batch on the CPU:
    the constant folder's evaluator."""
    return literal_value(evaluate(e, Batch({}, 1, torch.device("cpu"))), 0)


def _device(batch: Batch) -> torch.device:
    return batch.device


def constant(value, dtype: T.DataType, n: int, device) -> Column:
    if value is None:
        return Column.nulls(dtype, n, device)
    if dtype.is_string:
        return Column(dtype, torch.zeros(n, dtype=torch.int32, device=device), None,
                      Dictionary.from_pylist([value], device))
    if dtype.kind == "INTERVAL":
        raise NotSupported("INTERVAL values outside date arithmetic")
    if isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**63:
        if not (dtype.is_decimal or dtype.kind == "HUGEINT"):
            raise ExecutionError(f"Out of Range Error: {value} does not fit {dtype}")
        limbs = torch.tensor([[value >> 32, value & (LIMB - 1)]], dtype=torch.int64, device=device)
        return Column(dtype, limbs.expand(n, 2).contiguous())
    return Column(dtype, torch.full((n,), value, dtype=dtype.torch_dtype, device=device))


def and_valid(*vs):
    """Combined validity of several masks (None means all valid)."""
    out = None
    for v in vs:
        if v is not None:
            out = v if out is None else out & v
    return out


def _args(e: Call, batch):
    return [evaluate(a, batch) for a in e.args]


# ---------------------------------------------------------------- casts
_POW10 = [10**i for i in range(19)]


LIMIT_WIDE = 2 ** 93       # wide values stay below this magnitude (kernels.wide.LIMIT)


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
    p = 10 ** scale
    if v.dim() == 2:
        q = W.floordiv(v, p)
        r = W.narrow(W.sub(v, W.scale(q, p)))          # 0 <= r < p
        neg = (r != 0) & (v[:, 0] < 0)                   # truncate toward zero, as C does
        q = torch.where(neg[:, None], W.add(q, torch.ones_like(r)), q)
        r = torch.where(neg, r - p, r)
        hi = v[:, 0]
        small = (hi >= -(1 << 21)) & ((hi < (1 << 21)) | ((hi == (1 << 21)) & (v[:, 1] == 0)))
    else:
        q = torch.div(v, p, rounding_mode="trunc")
        r = v - q * p
        small = v.abs() <= 2**53
    return torch.where(small, exact_div(conv(v), p), conv(q) + exact_div(r.double(), p))


def _round_div(v: torch.Tensor, d: int) -> torch.Tensor:
    """v / d rounded half away from zero (integer tensors)."""
    if d >= 2**62:          # |v / d| < 2: decided exactly by comparing with d / 2
        half = d // 2
        big = (v.abs() >= half) if half < 2**63 else torch.zeros_like(v, dtype=torch.bool)
        return torch.where(big, torch.sign(v), torch.zeros_like(v))
    q = torch.div(v.abs() + d // 2, d, rounding_mode="floor")
    return torch.where(v < 0, -q, q)


def _round_div_wide(v: torch.Tensor, d: int) -> torch.Tensor:
    """Wide v / d rounded half away from zero (d a power of ten above 1).

    >>> W.to_python(_round_div_wide(W.to_wide(torch.tensor([15, -15, 14, -25])), 10))
    [2, -2, 1, -3]
    """
    neg = v[:, 0] < 0
    mag = torch.where(neg[:, None], W.neg(v), v)
    half = W.to_wide(torch.full((v.shape[0],), d // 2, dtype=torch.int64, device=v.device)) \
        if d // 2 < 2**63 else W.scale(torch.ones(v.shape[0], dtype=torch.int64, device=v.device), d // 2)
    q = W.floordiv(W.add(mag, half), d)
    return torch.where(neg[:, None], W.neg(q), q)


def _round_half_away(x: torch.Tensor) -> torch.Tensor:
    """Round half away from zero, keeping the sign of zero (ROUND(-0.01, 1) is -0.0)."""
    # as C's round(): floor(|x| + 0.5) is wrong above 2**52, where |x| + 0.5 itself rounds
    t = torch.trunc(x)
    return torch.copysign(torch.where((x - t).abs() >= 0.5, t + torch.sign(x), t), x)


def cast_column(c: Column, to: T.DataType) -> Column:
    src = c.dtype
    if src == to:
        return c
    if src.kind == "NULL":
        return Column.nulls(to, len(c), c.device)
    if to.is_string:
        return strings.to_varchar(c)
    if src.is_string:
        try:
            return strings.from_varchar(c, to)
        except OverflowError:
            raise NotSupported(f"CAST of text with more than 18 digits to {to}") from None
    if c.is_wide:
        if to.kind == "DOUBLE":
            return Column(to, decimal_to_double(c.data, _scale(src), huge=True), c.valid)
        if to.is_decimal and to.precision > 18 and to.scale >= _scale(src):
            W.check_magnitude(W.to_double(c.data) * float(10 ** (to.scale - _scale(src))), c.valid, f"CAST to {to}")
            return Column(to, W.scale(c.data, 10 ** (to.scale - _scale(src))), c.valid)
        if (to.kind == "HUGEINT" or to.is_decimal) and to.scale == _scale(src):
            if to.is_decimal and 10 ** to.precision < LIMIT_WIDE:
                lim = W.to_wide(torch.tensor([10 ** to.precision], device=c.data.device)).expand(len(c), 2)
                bad = W.compare("ge", c.data, lim) | W.compare("le", c.data, W.neg(lim))
                if c.valid is not None:
                    bad &= c.valid
                if bool(bad.any()):
                    raise ExecutionError(f"Conversion Error: value out of range in CAST from {src} to {to}")
                if to.precision <= 18:
                    return Column(to, W.narrow(c.data), c.valid)
            return Column(to, c.data, c.valid)
        to_scale = to.scale if to.is_decimal else 0
        if (to.is_decimal or to.kind in ("INTEGER", "BIGINT")) and to_scale < _scale(src):
            # fewer digits after the point (an integer has none): rounded half away from zero
            # as DuckDB rounds, then cast at the same scale
            v = _round_div_wide(c.data, 10 ** (_scale(src) - to_scale))
            mid = T.DECIMAL(38, to_scale) if to.is_decimal else T.HUGEINT
            return cast_column(Column(mid, v, c.valid), to)
        if to.kind in ("INTEGER", "BIGINT"):
            fits = (c.data[:, 0] >= -(1 << 31)) & (c.data[:, 0] < (1 << 31))
            if c.valid is not None:
                fits |= ~c.valid
            if not bool(fits.all()):
                raise ExecutionError(f"Conversion Error: value out of range in CAST from {src} to {to}")
            return cast_column(Column(T.BIGINT, W.narrow(c.data), c.valid), to)
        raise NotSupported(f"CAST of a value beyond 64 bits to {to}")
    d = c.data
    if to.kind == "DOUBLE":
        if src.is_decimal or src.kind == "HUGEINT":
            huge = src.kind == "HUGEINT" or src.precision > 18
            return Column(to, decimal_to_double(d, _scale(src), huge), c.valid)
        return Column(to, d.double(), c.valid)
    if to.is_decimal:
        if src.is_decimal or src.kind == "HUGEINT":
            ds = to.scale - _scale(src)
            src_whole = 38 if src.kind == "HUGEINT" else src.precision - src.scale
            if to.precision - to.scale < src_whole:
                _check_range(d, 10 ** (to.precision - to.scale + _scale(src)), c.valid, f"{src} to {to}", True)
            if ds > 0 and _out_of_range(d, 2**63 // 10 ** ds, c.valid):
                if to.precision <= 18:
                    raise ExecutionError(f"Conversion Error: value out of range in CAST from {src} to {to}")
                return Column(to, W.scale(d, 10 ** ds), c.valid)     # beyond int64: widen
            v = d * 10 ** ds if ds >= 0 else _round_div(d, 10 ** -ds)
        elif src.kind == "DOUBLE":
            _check_finite(d, c.valid, to)
            v = _round_half_away(d * float(10 ** to.scale))
            if to.precision > 18 and _out_of_range(v, 2**63, c.valid):
                # the double's exact integer value, split into limbs (division by 2**32 is exact)
                _check_range(v, 10 ** to.precision, c.valid, f"DOUBLE to {to}", True)
                v = torch.where(torch.isfinite(v), v, torch.zeros_like(v))
                hi = torch.floor(v / 4294967296.0)
                return Column(to, torch.stack([hi.long(), (v - hi * 4294967296.0).long()], dim=1), c.valid)
            _check_range(v, min(2**63, 10 ** to.precision), c.valid, f"DOUBLE to {to}", to.precision <= 18)
            v = v.long()
        elif src.is_integer or src.kind == "BOOLEAN":
            if src.kind != "BOOLEAN" and to.precision - to.scale < 19:
                _check_range(d.long(), 10 ** (to.precision - to.scale), c.valid, f"{src} to {to}", True)
            if to.scale and src.kind != "BOOLEAN" and _out_of_range(d.long(), 2**63 // 10 ** to.scale, c.valid):
                if to.precision <= 18:
                    raise ExecutionError(f"Conversion Error: value out of range in CAST from {src} to {to}")
                return Column(to, W.scale(d.long(), 10 ** to.scale), c.valid)   # beyond int64: widen
            v = d.long() * 10 ** to.scale
        else:
            raise NotSupported(f"CAST from {src} to {to}")
        return Column(to, v, c.valid)
    if to.is_integer:
        if src.is_decimal:
            v = _round_div(d, 10 ** src.scale)
        elif src.kind == "DOUBLE":
            _check_finite(d, c.valid, to)
            v = torch.round(d)   # DuckDB rounds doubles half to even here
            _check_range(v, 2**63 if to.kind != "INTEGER" else 2**31, c.valid, f"DOUBLE to {to}")
        elif src.kind in ("DATE", "TIMESTAMP"):
            raise NotSupported(f"CAST from {src} to {to}")
        else:
            v = d
        if to.kind == "INTEGER":
            _check_range(v, 2**31, c.valid, f"{src} to INTEGER")
        return Column(to, v.to(to.torch_dtype), c.valid)
    if to.kind == "BOOLEAN" and src.is_numeric:
        return Column(to, d != 0, c.valid)
    if to.kind == "TIMESTAMP" and src.kind == "DATE":
        return timestamps.from_date(c)
    if to.kind == "DATE" and src.kind == "TIMESTAMP":
        return timestamps.to_date(c)
    raise NotSupported(f"CAST from {src} to {to}")


def _check_finite(v: torch.Tensor, valid, to: T.DataType) -> None:
    bad = ~torch.isfinite(v)
    if valid is not None:
        bad &= valid
    if bool(bad.any()):
        x = float(v[bad][0])
        raise ExecutionError(f"Conversion Error: Could not cast value {x} to {to}")


def _out_of_range(v: torch.Tensor, bound: int, valid, digits: bool = False) -> bool:
    """Whether a valid value is outside -bound <= v < bound (a two's-complement
    range: 2**31, 2**63), or with ``digits`` (a DECIMAL's 10**p) outside
    |v| < bound on both sides: -1000 does not fit DECIMAL(4,1)."""
    if bound >= 2**63 and not v.is_floating_point():
        return False            # no int64 value reaches it
    if v.is_floating_point():
        bound = float(bound)
    bad = (v >= bound) | ((v <= -bound) if digits else (v < -bound))
    if valid is not None:
        bad &= valid
    return bool(bad.any())


def _check_range(v: torch.Tensor, bound: int, valid, what: str, digits: bool = False):
    if v.dim() == 2:
        return                  # wide values are range-checked where they are made
    if _out_of_range(v, bound, valid, digits):
        raise ExecutionError(f"Conversion Error: value out of range in CAST from {what}")


def _cast(e: Call, batch):
    return cast_column(evaluate(e.args[0], batch), e.type)


# ---------------------------------------------------------------- arithmetic
def _no_wide(*cols):
    for c in cols:
        if c.is_wide:
            raise NotSupported("arithmetic on a DECIMAL/HUGEINT value beyond 64 bits")


def _x86_nan(out: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """A NaN made from two numbers (0/0, inf - inf, 0 * inf) as x86 makes it,
    with the sign bit set, on every device (whatever the op gives there): DuckDB prints
    it as '-nan'."""
    if not out.is_floating_point():
        return out
    new = torch.isnan(out) & ~torch.isnan(x) & ~torch.isnan(y)
    # filled on the device from its bits: no host-to-device copy per batch
    nan = torch.full((), _NEG_NAN_BITS, dtype=torch.int64, device=out.device).view(torch.float64)
    return torch.where(new, nan.to(out.dtype), out)


_NEG_NAN_BITS = -(1 << 51)          # 0xFFF8000000000000: x86's default NaN, sign bit set
_SIGN_BIT = -(1 << 63)


def _flip_sign(x: torch.Tensor) -> torch.Tensor:
    """-x for doubles as a sign-bit flip (x86 negates a NaN's sign, CUDA's
    torch.neg leaves a NaN as it is)."""
    return (x.view(torch.int64) ^ _SIGN_BIT).view(torch.float64)


def _clear_sign(x: torch.Tensor) -> torch.Tensor:
    return (x.view(torch.int64) & ~_SIGN_BIT).view(torch.float64)


def _arith(op):
    def run(e: Call, batch):
        a, b = _args(e, batch)
        valid = and_valid(a.valid, b.valid)
        t = e.type
        if a.is_wide or b.is_wide:
            return _wide_arith(op, a, b, t, valid)
        x, y = a.data, b.data
        if t.kind == "DOUBLE":
            if op == "div":
                out = x / y
            elif op == "intdiv":            # DuckDB's // of DOUBLEs: a division, NULL by 0
                zero = y == 0
                out = x / torch.where(zero, torch.ones_like(y), y)
                valid = and_valid(valid, ~zero)
            elif op == "mod":               # fmod: x % 0 is NaN for DOUBLEs in DuckDB (NULL for integers)
                out = torch.fmod(x, y)
            else:
                out = {"add": torch.add, "sub": torch.sub, "mul": torch.mul}[op](x, y)
            return Column(t, _x86_nan(out, x, y), valid)
        if op in ("intdiv", "mod"):
            if t.is_decimal and a.dtype.scale != b.dtype.scale:
                raise NotSupported("// and % on DECIMALs of different scales")
            zero = y == 0
            # MIN // -1 overflows (and traps in integer division): DuckDB reports an overflow
            minimum = torch.iinfo(x.dtype).min
            _check_flag((y == -1) & (x == minimum), valid, "Out of Range Error: Overflow in division")
            ys = torch.where(zero | (y == -1), torch.ones_like(y), y)
            if op == "intdiv":
                out = torch.div(x, ys, rounding_mode="trunc")
                out = torch.where(y == -1, -x, out)
            else:
                out = torch.where(y == -1, torch.zeros_like(x), torch.fmod(x, ys))
            return Column(t, out.to(t.torch_dtype), and_valid(valid, ~zero))
        wide_x, wide_y = x.long(), y.long()
        out = {"add": torch.add, "sub": torch.sub, "mul": torch.mul}[op](wide_x, wide_y)
        if t.kind == "INTEGER":
            _check_overflow(out, valid, I32_MIN, I32_MAX, op, "INT32")
            out = out.int()
        elif op in ("add", "sub"):
            # two's complement overflow: the result's sign disagrees with both inputs' (add)
            flip = wide_y if op == "add" else ~wide_y
            over = ((wide_x ^ out) & (flip ^ out)) < 0
            if valid is not None:
                over &= valid
            if bool(over.any()):
                if not (t.is_decimal and t.precision > 18 or t.kind == "HUGEINT"):
                    raise ExecutionError(f"Out of Range Error: Overflow in "
                                         f"{'addition' if op == 'add' else 'subtraction'} of {_duck_name(t)}")
                out = W.add(wide_x, wide_y) if op == "add" else W.sub(wide_x, wide_y)
        elif op == "mul":
            est = wide_x.double() * wide_y.double()
            near = est.abs() >= 2.0 ** 62     # the estimate only says where to look exactly
            if valid is not None:
                near &= valid
            if bool(near.any()):
                W.check_magnitude(est, valid, f"multiplication of {t}")
                exact = W.mul(wide_x, wide_y)
                fits = (exact[:, 0] >= -(1 << 31)) & (exact[:, 0] < (1 << 31))
                if valid is not None:
                    fits |= ~valid
                if bool(fits.all()):
                    out = W.narrow(exact)
                elif t.is_decimal and t.precision > 18 or t.kind == "HUGEINT":
                    out = exact
                else:
                    raise ExecutionError(f"Out of Range Error: Overflow in multiplication of {_duck_name(t)}")
        return Column(t, out, valid)
    return run


def _wide_arith(op, a: Column, b: Column, t: T.DataType, valid) -> Column:
    """+, -, * where an operand is already beyond int64."""
    if op in ("add", "sub"):
        out = W.add(a.data, b.data) if op == "add" else W.sub(a.data, b.data)
        return Column(t, out, valid)
    if op == "mul" and (t.is_decimal or t.kind == "HUGEINT"):
        x, y = (a, b) if a.is_wide else (b, a)
        if not y.is_wide:
            est = W.to_double(x.data) * y.data.double()
            W.check_magnitude(est, valid, f"multiplication of {t}")
            # (hi*2**32 + lo) * y = (hi*y)*2**32 + lo*y, each product exact below the limit
            y64 = y.data.long()
            out = W.add(_shift32(W.mul(x.data[:, 0], y64)), W.mul(x.data[:, 1], y64))
            return Column(t, out, valid)
    if t.kind == "DOUBLE":
        x, y = _to_double(a), _to_double(b)
        if op == "intdiv":                  # as in _arith: NULL where the divisor is 0
            zero = y == 0
            return Column(t, x / torch.where(zero, torch.ones_like(y), y), and_valid(valid, ~zero))
        return Column(t, _x86_nan({"div": torch.div, "mul": torch.mul}[op](x, y), x, y), valid)
    if op == "mod" and not a.is_wide:
        # |a| < 2**63 <= |b| where b does not fit int64: a % b is a itself
        fits = (b.data[:, 0] >= -(1 << 31)) & (b.data[:, 0] < (1 << 31))
        bn = torch.where(fits, W.narrow(b.data), torch.ones_like(b.data[:, 0]))
        zero = bn == 0
        bn = torch.where(zero | (bn == -1), torch.ones_like(bn), bn)
        out = torch.where(fits, torch.fmod(a.data.long(), bn), a.data.long())
        return Column(t, out, and_valid(valid, ~(zero & fits)))
    if op in ("mod", "intdiv"):
        return _wide_divmod(op, a, b, t, valid)
    if op == "mul":
        W.check_magnitude(_to_double(a) * _to_double(b), valid, f"multiplication of {t}")
    raise NotSupported(f"{op} of two DECIMAL/HUGEINT values that are both beyond 64 bits")


def _wide_divmod(op, a: Column, b: Column, t: T.DataType, valid) -> Column:
    """// and % of wide values (both beyond int64), truncated toward zero as the
    int64 forms; x // 0 and x % 0 are NULL. Rare (values past 18 digits on both
    sides), so done exactly with Python integers on the host.

    >>> x = Column(T.HUGEINT, W.scale(torch.tensor([-7, 7, 5]), 10**12))
    >>> y = Column(T.HUGEINT, W.scale(torch.tensor([2, -2, 0]), 10**12))
    >>> W.to_python(_wide_divmod("intdiv", x, y, T.HUGEINT, None).data)
    [-3, -3, 0]
    >>> c = _wide_divmod("mod", x, y, T.HUGEINT, None); W.to_python(c.data), c.valid.tolist()
    ([-1000000000000, 1000000000000, 0], [True, True, False])
    """
    if t.is_decimal and a.dtype.is_decimal and b.dtype.is_decimal and a.dtype.scale != b.dtype.scale:
        raise NotSupported("// and % on DECIMALs of different scales")
    xs, ys = W.to_python(W.to_wide(a.data)), W.to_python(W.to_wide(b.data))
    out, ok = [], []
    for x, y in zip(xs, ys):
        if y == 0:
            out.append(0)
            ok.append(False)
            continue
        q = abs(x) // abs(y)
        q = q if (x < 0) == (y < 0) else -q              # toward zero
        out.append(q if op == "intdiv" else x - q * y)   # the remainder has x's sign
        ok.append(True)
    data = torch.tensor([[v >> W.BITS, v & W.MASK] for v in out], dtype=torch.int64).reshape(-1, 2)
    zero_ok = torch.tensor(ok, dtype=torch.bool)
    dev = a.data.device
    return Column(t, data.to(dev), and_valid(valid, zero_ok.to(dev)))


def _shift32(w: torch.Tensor) -> torch.Tensor:
    """A wide value times 2**32: [hi, lo] -> [hi * 2**32 + lo, 0]."""
    return torch.stack([(w[:, 0] << 32) + w[:, 1], torch.zeros_like(w[:, 1])], dim=1)


def _to_double(c: Column) -> torch.Tensor:
    return cast_column(c, T.DOUBLE).data


def _duck_name(t: T.DataType) -> str:
    return {"BIGINT": "INT64", "INTEGER": "INT32", "HUGEINT": "INT128"}.get(t.kind, str(t))


def _check_flag(bad: torch.Tensor, valid, message: str) -> None:
    if valid is not None:
        bad = bad & valid
    if bool(bad.any()):
        raise ExecutionError(message)


def _check_overflow(v, valid, lo, hi, op, tname):
    bad = (v < lo) | (v > hi)
    if valid is not None:
        bad &= valid
    if bool(bad.any()):
        names = {"add": "addition", "sub": "subtraction", "mul": "multiplication"}
        raise ExecutionError(f"Out of Range Error: Overflow in {names.get(op, op)} of {tname}")


def _negatable(a: Column, what: str) -> Column:
    """a, widened when negating its minimum value needs it; an overflow error
    when the type cannot hold the result (INTEGER, BIGINT, DECIMAL(<=18))."""
    t = a.dtype
    if a.is_wide or t.kind == "DOUBLE" or a.data.dtype == torch.bool:
        return a
    bad = a.data == torch.iinfo(a.data.dtype).min
    if a.valid is not None:
        bad &= a.valid
    if bool(bad.any()):
        if t.kind == "HUGEINT" or t.is_decimal and t.precision > 18:
            return a.with_data(W.to_wide(a.data))
        raise ExecutionError(f"Out of Range Error: Overflow in {what} of {_duck_name(t)}")
    return a


def _neg(e, batch):
    (a,) = _args(e, batch)
    a = _negatable(a, "negation")
    if a.is_wide:
        return a.with_data(W.neg(a.data))
    return a.with_data(_flip_sign(a.data) if a.data.dtype == torch.float64 else -a.data)


def _abs(e, batch):
    (a,) = _args(e, batch)
    a = _negatable(a, "ABS")
    if a.is_wide:
        return a.with_data(torch.where((a.data[:, 0] < 0)[:, None], W.neg(a.data), a.data))
    return a.with_data(_clear_sign(a.data) if a.data.dtype == torch.float64 else a.data.abs())


def _floor(e, batch):
    (a,) = _args(e, batch)
    return a.with_data(torch.floor(a.data))


def _round(e, batch):
    (a,) = _args(e, batch)
    digits = e.params[0]
    if a.dtype.is_decimal:
        drop = a.dtype.scale - e.type.scale
        if a.is_wide:
            v = _round_div_wide(a.data, 10 ** drop) if drop > 0 else a.data
        else:
            v = _round_div(a.data, _POW10[drop]) if drop > 0 else a.data
        if digits < e.type.scale or digits < 0:
            raise NotSupported("ROUND of a DECIMAL to negative digits")
        return Column(e.type, v, a.valid)
    if a.dtype.kind == "DOUBLE":
        f = 10.0 ** digits
        scaled = a.data * f
        # values too large to have digits below 10**-digits are already rounded
        return a.with_data(torch.where(torch.isfinite(scaled), exact_div(_round_half_away(scaled), f), a.data))
    return a


def _date_add_days(e, batch):
    d, n = _args(e, batch)
    return Column(T.DATE, (d.data.long() + e.params[0] * n.data).int(), and_valid(d.valid, n.valid))


def _date_diff(e, batch):
    a, b = _args(e, batch)
    return Column(T.BIGINT, a.data.long() - b.data.long(), and_valid(a.valid, b.valid))


def _add_interval(e, batch):
    (d,) = _args(e, batch)
    return timestamps.add_interval(d, *e.params)


# ---------------------------------------------------------------- comparisons
_TORCH_CMP = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge}


def _compare(op):
    def run(e: Call, batch):
        a, b = e.args
        if a.type.is_string and isinstance(b, Literal) and b.value is not None:
            return compare_string_literal(op, evaluate(a, batch), b.value)
        if b.type.is_string and isinstance(a, Literal) and a.value is not None:
            return compare_string_literal(_FLIP[op], evaluate(b, batch), a.value)
        x, y = evaluate(a, batch), evaluate(b, batch)
        return compare_columns(op, x, y)
    return run


_FLIP = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def compare_columns(op: str, x: Column, y: Column) -> Column:
    if x.dtype.is_string and y.dtype.is_string:
        return strings.compare_columns(op, x, y)
    if x.is_wide or y.is_wide:
        xd, yd, sx, sy = x.data, y.data, _scale(x.dtype), _scale(y.dtype)
        if sx != sy:
            return Column(T.BOOLEAN, W.compare_scaled(op, xd, sx, yd, sy), and_valid(x.valid, y.valid))
        return Column(T.BOOLEAN, W.compare(op, xd, yd), and_valid(x.valid, y.valid))
    if x.data.is_floating_point() or y.data.is_floating_point():
        return Column(T.BOOLEAN, _float_compare(op, x.data.double(), y.data.double()), and_valid(x.valid, y.valid))
    sx, sy = _scale(x.dtype), _scale(y.dtype)
    if sx != sy:
        out = compare_scaled(op, x.data.long(), sx, y.data.long(), sy)
        return Column(T.BOOLEAN, out, and_valid(x.valid, y.valid))
    return Column(T.BOOLEAN, _TORCH_CMP[op](x.data, y.data), and_valid(x.valid, y.valid))


def _float_compare(op: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Comparisons where NaN equals NaN and is greater than any number (DuckDB's order)."""
    nx, ny = torch.isnan(x), torch.isnan(y)
    if op in ("eq", "ne"):
        eq = (nx & ny) | (x == y)
        return eq if op == "eq" else ~eq
    if op in ("gt", "ge"):
        return _float_compare({"gt": "lt", "ge": "le"}[op], y, x)
    lt = torch.where(nx, torch.zeros_like(nx), ny | (x < y))
    if op == "lt":
        return lt
    return lt | (nx & ny) | (x == y)


def _scale(t: T.DataType) -> int:
    return t.scale if t.is_decimal else 0


def compare_scaled(op: str, x: torch.Tensor, sx: int, y: torch.Tensor, sy: int) -> torch.Tensor:
    """x * 10**-sx  op  y * 10**-sy, exactly, without scaling either side up:
    with K = 10**(sy - sx) > 0, x*K > y  <=>  x > floor(y / K), and so on.

    >>> compare_scaled("gt", torch.tensor([3]), 0, torch.tensor([2999]), 3).tolist()
    [True]
    """
    if sx > sy:
        return compare_scaled(_FLIP[op], y, sy, x, sx)
    k = 10 ** (sy - sx)
    if k >= 2**63:          # |y| < k: floor is 0 or -1, ceiling 0 or 1
        fl = torch.where(y >= 0, torch.zeros_like(y), torch.full_like(y, -1))
        ce = (y > 0).to(y.dtype)
    else:
        fl = torch.div(y, k, rounding_mode="floor")
        ce = -torch.div(-y, k, rounding_mode="floor")
    if op == "lt":
        return x < ce
    if op == "le":
        return x <= fl
    if op == "gt":
        return x > fl
    if op == "ge":
        return x >= ce
    eq = (fl == ce) & (x == fl)
    return eq if op == "eq" else ~eq


def compare_string_literal(op: str, c: Column, s: str) -> Column:
    """Compare a VARCHAR column with a literal (byte order, as DuckDB)."""
    return strings.compare_literal(op, c, s)


# ---------------------------------------------------------------- boolean logic
def _and(e, batch):
    a, b = _args(e, batch)
    return and3(a, b)


def and3(a: Column, b: Column) -> Column:
    """Three-valued AND: FALSE wins over NULL."""
    if a.valid is None and b.valid is None:
        return Column(T.BOOLEAN, a.data & b.data)
    va, vb = a.validity(), b.validity()
    false_a, false_b = va & ~a.data, vb & ~b.data
    data = a.data & b.data
    valid = (va & vb) | false_a | false_b
    return Column(T.BOOLEAN, data & valid, valid)


def or3(a: Column, b: Column) -> Column:
    """Three-valued OR: TRUE wins over NULL."""
    if a.valid is None and b.valid is None:
        return Column(T.BOOLEAN, a.data | b.data)
    va, vb = a.validity(), b.validity()
    true_a, true_b = va & a.data, vb & b.data
    valid = (va & vb) | true_a | true_b
    return Column(T.BOOLEAN, true_a | true_b, valid)


def _or(e, batch):
    a, b = _args(e, batch)
    return or3(a, b)


def _not(e, batch):
    (a,) = _args(e, batch)
    return a.with_data(~a.data)


def _is_null(e, batch):
    (a,) = _args(e, batch)
    if a.valid is None:
        return Column(T.BOOLEAN, torch.zeros(len(a), dtype=torch.bool, device=a.device))
    return Column(T.BOOLEAN, ~a.valid)


def _distinct(negate: bool):
    def run(e, batch):
        x, y = _args(e, batch)
        eq = compare_columns("eq", x, y)
        vx, vy = x.validity(), y.validity()
        same = torch.where(vx & vy, eq.data, ~vx & ~vy)
        return Column(T.BOOLEAN, ~same if negate else same)
    return run


def _in_list(e, batch):
    v, *items = e.args
    x = evaluate(v, batch)
    const = [i for i in items if isinstance(i, Literal)]
    result = None
    saw_null = False
    if x.dtype.is_string and len(const) == len(items):
        saw_null = any(i.value is None for i in items)
        hit = strings.in_literals(x, [i.value for i in items if i.value is not None])
        result = Column(T.BOOLEAN, hit, x.valid)
    elif len(const) == len(items) and not x.dtype.is_string and not x.is_wide and \
            all(i.value is None or -2**63 <= i.value < 2**63 for i in items if isinstance(i.value, int)):
        vals = [i.value for i in items if i.value is not None]
        saw_null = len(vals) < len(items)
        hit = torch.isin(x.data, torch.tensor(vals, dtype=x.data.dtype, device=x.device)) if vals else \
            torch.zeros(len(x), dtype=torch.bool, device=x.device)
        result = Column(T.BOOLEAN, hit, x.valid)
    else:
        for i in items:
            c = compare_columns("eq", x, evaluate(i, batch))
            result = c if result is None else or3(result, c)
    if saw_null:
        result = or3(result, Column.nulls(T.BOOLEAN, len(x), x.device))
    return result


# ---------------------------------------------------------------- CASE, COALESCE
def _same_layout(values: list[Column], dtype: T.DataType) -> list[Column]:
    """Branches of one result: strings on one dictionary, all wide if one is."""
    if dtype.is_string:
        return strings.share_dictionary(values)
    if any(v.is_wide for v in values):
        return [v if v.is_wide else v.with_data(W.to_wide(v.data)) for v in values]
    return values


def choose(take: torch.Tensor, a: Column, b: Column, dtype: T.DataType) -> Column:
    """Rows of ``a`` where ``take`` is set, of ``b`` elsewhere, as one column of ``dtype``."""
    a, b = _same_layout([a, b], dtype)
    data = torch.where(take if a.data.dim() == 1 else take[:, None], a.data, b.data)
    valid = torch.where(take, a.validity(), b.validity())
    return Column(dtype, data, None if bool(valid.all()) else valid, b.dictionary)


def _case(e: Case, batch) -> Column:
    try:
        values = [evaluate(v, batch) for _, v in e.whens] + [evaluate(e.default, batch)]
    except ExecutionError:
        # an error (overflow, bad cast) may come from rows a branch does not take: SQL
        # evaluates each branch only for its own rows, so do that, the slow way
        return _case_by_rows(e, batch)
    values = _same_layout(values, e.type)
    out = values[-1]
    data, valid = out.data, out.validity()
    for (cond, _), val in reversed(list(zip(e.whens, values[:-1]))):
        c = evaluate(cond, batch)
        take = c.data if c.valid is None else c.data & c.valid
        data = torch.where(take, val.data, data) if data.dim() == 1 else torch.where(take[:, None], val.data, data)
        valid = torch.where(take, val.validity(), valid)
    return Column(e.type, data, None if bool(valid.all()) else valid, values[-1].dictionary)


def _case_by_rows(e: Case, batch) -> Column:
    n = batch.num_rows
    remaining = torch.ones(n, dtype=torch.bool, device=batch.device)
    pieces = []                                   # (row positions, values for them)
    for cond, val in e.whens:
        c = evaluate(cond, batch)
        take = predicate_mask(c) & remaining
        remaining &= ~take
        idx = take.nonzero().squeeze(1)
        pieces.append((idx, evaluate(val, batch.take(idx))))
    idx = remaining.nonzero().squeeze(1)
    pieces.append((idx, evaluate(e.default, batch.take(idx))))
    return _in_row_order(pieces, n, e.type, batch.device)


def _in_row_order(pieces, n: int, dtype: T.DataType, device) -> Column:
    """One column of n rows from (row positions, values for them) pieces that
    cover every row once."""
    cols = _same_layout([p[1] for p in pieces], dtype)
    from glint.columnar.column import concat_columns
    whole = concat_columns(cols)
    order = torch.empty(n, dtype=torch.int64, device=device)
    order[torch.cat([p[0] for p in pieces])] = torch.arange(n, device=device)
    return whole.take(order)


def _coalesce_by_rows(e, batch) -> Column:
    """COALESCE evaluating each argument only for the rows all earlier ones left
    NULL, as SQL defines it (CASE WHEN a IS NOT NULL THEN a ELSE ... END): an
    overflow in COALESCE(x, CAST(y AS INTEGER)) on a row where x is set is not one."""
    n = batch.num_rows
    remaining = torch.ones(n, dtype=torch.bool, device=batch.device)
    pieces = []
    last = len(e.args) - 1
    for i, a in enumerate(e.args):
        idx = remaining.nonzero().squeeze(1)
        v = evaluate(a, batch.take(idx))
        if i < last:
            has = v.validity().nonzero().squeeze(1)
            pieces.append((idx[has], v.take(has)))
            remaining[idx[has]] = False
        else:
            pieces.append((idx, v))
    return _in_row_order(pieces, n, e.type, batch.device)


def _coalesce(e, batch):
    try:
        values = _same_layout([evaluate(a, batch) for a in e.args], e.type)
    except ExecutionError:
        # as CASE: an error may come from rows an argument is not needed for
        return _coalesce_by_rows(e, batch)
    out = values[-1]
    data, valid = out.data, out.validity()
    for v in reversed(values[:-1]):
        vv = v.validity()
        data = torch.where(vv if data.dim() == 1 else vv[:, None], v.data, data)
        valid = vv | valid
    return Column(e.type, data, valid, values[-1].dictionary)


def _grouping(e, batch):
    """GROUPING(...) from the grouping set's number: e.params[0] holds its value per set."""
    (s,) = _args(e, batch)
    table = torch.tensor(e.params[0], dtype=torch.int64, device=s.device)
    return Column(T.BIGINT, table[s.data.long()])


_FUNCS = {
    "cast": _cast, "neg": _neg, "abs": _abs, "round": _round, "floor": _floor,
    "add": _arith("add"), "sub": _arith("sub"), "mul": _arith("mul"), "div": _arith("div"),
    "intdiv": _arith("intdiv"), "mod": _arith("mod"),
    "date_add_days": _date_add_days, "date_diff_days": lambda e, b: _date_diff(e, b), "add_interval": _add_interval,
    "and": _and, "or": _or, "not": _not, "is_null": _is_null,
    "is_not_distinct": _distinct(False), "is_distinct": _distinct(True), "in_list": _in_list,
    "coalesce": _coalesce, "grouping": _grouping,
}
for _op in _TORCH_CMP:
    _FUNCS[_op] = _compare(_op)
for _name, _fn in timestamps.CALLS.items():
    _FUNCS[_name] = lambda e, batch, _fn=_fn: _fn(e, _args(e, batch))


def predicate_mask(c: Column) -> torch.Tensor:
    """Rows where a BOOLEAN column is TRUE (NULL counts as not TRUE)."""
    return c.data if c.valid is None else c.data & c.valid


from glint.exec.eval_strings import STRING_FUNCS  # noqa: E402  (they evaluate their arguments with evaluate)

_FUNCS.update(STRING_FUNCS)
