"""Arithmetic: + - * / // % on INTEGER, BIGINT, HUGEINT, DECIMAL and DOUBLE
with DuckDB's result types, exact DECIMAL and integer results (int64, and
two int64 limbs beyond it: glint.kernels.wide), its overflow errors and its
NaN and signed-zero behaviour; negation and ABS.

>>> import torch
>>> x = Column(T.INTEGER, torch.tensor([2**31 - 1, 5], dtype=torch.int32))
>>> _arith("add")(Call("add", (), T.INTEGER), [x, x])
Traceback (most recent call last):
glint.errors.ExecutionError: Out of Range Error: Overflow in addition of INT32
>>> y = Column(T.DOUBLE, torch.tensor([1.0, 0.0]))
>>> _arith("div")(Call("div", (), T.DOUBLE), [y, Column(T.DOUBLE, torch.tensor([0.0, 0.0]))]).data.tolist()
[inf, nan]
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.errors import ExecutionError, NotSupported, TypeMismatch
from glint.functions.casts import cast_column
from glint.functions.deferred import DEFERRED, check
from glint.functions.registry import OPERATOR, SCALAR, Function
from glint.functions.validity import and_valid
from glint.kernels import wide as W
from glint.plan import typing as ty
from glint.plan.expr import Call, Case, Literal

I32_MIN, I32_MAX = -(2**31), 2**31 - 1


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


_NEG_NAN_BITS = -(1 << 51)  # 0xFFF8000000000000: x86's default NaN, sign bit set
_SIGN_BIT = -(1 << 63)


def _flip_sign(x: torch.Tensor) -> torch.Tensor:
    """-x for doubles as a sign-bit flip (x86 negates a NaN's sign, CUDA's
    torch.neg leaves a NaN as it is)."""
    return (x.view(torch.int64) ^ _SIGN_BIT).view(torch.float64)


def _clear_sign(x: torch.Tensor) -> torch.Tensor:
    return (x.view(torch.int64) & ~_SIGN_BIT).view(torch.float64)


def _arith(op):
    def run(e: Call, cols: list[Column]) -> Column:
        a, b = cols
        valid = and_valid(a.valid, b.valid)
        t = e.type
        if a.is_wide or b.is_wide:
            return _wide_arith(op, a, b, t, valid)
        x, y = a.data, b.data
        if t.kind == "DOUBLE":
            if op == "div":
                out = x / y
            elif op == "intdiv":  # DuckDB's // of DOUBLEs: a division, NULL by 0
                zero = y == 0
                out = x / torch.where(zero, torch.ones_like(y), y)
                valid = and_valid(valid, ~zero)
            elif op == "mod":  # fmod: x % 0 is NaN for DOUBLEs in DuckDB (NULL for integers)
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
            if _eighteen_digits(t):
                over |= (out > DEC18_MAX) | (out < -DEC18_MAX)
            if valid is not None:
                over &= valid
            if not _widens(t):
                # an overflow is an error: the test may wait for the end of the run (deferred)
                what = "addition" if op == "add" else "subtraction"
                check(over, f"Out of Range Error: Overflow in {what} of {_duck_name(t)}")
            elif bool(over.any()):
                out = W.add(wide_x, wide_y) if op == "add" else W.sub(wide_x, wide_y)
        elif op == "mul":
            est = wide_x.double() * wide_y.double()
            # the estimate only says where to look exactly (a DECIMAL(18, s) result must also
            # stay within 18 digits: the estimate's error is far below the margin)
            near = est.abs() >= (0.99e18 if _eighteen_digits(t) else 2.0**62)
            if valid is not None:
                near &= valid
            if not _widens(t) and DEFERRED.get() is not None:
                # a product near the limit is looked at exactly only in a run that makes
                # its checks at once: this one is done again that way if any row is near
                check(near, f"Out of Range Error: Overflow in multiplication of {_duck_name(t)}")
            elif bool(near.any()):
                W.check_magnitude(est, valid, f"multiplication of {_duck_name(t)}")
                exact = W.mul(wide_x, wide_y)
                fits = (exact[:, 0] >= -(1 << 31)) & (exact[:, 0] < (1 << 31))
                if _eighteen_digits(t):
                    narrow = W.narrow(exact)
                    fits &= (narrow <= DEC18_MAX) & (narrow >= -DEC18_MAX)
                if valid is not None:
                    fits |= ~valid
                if bool(fits.all()):
                    out = W.narrow(exact)
                elif _widens(t):
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
        if op == "intdiv":  # as in _arith: NULL where the divisor is 0
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
        q = q if (x < 0) == (y < 0) else -q  # toward zero
        out.append(q if op == "intdiv" else x - q * y)  # the remainder has x's sign
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


DEC18_MAX = 10**18 - 1  # the largest unscaled value of an 18-digit DECIMAL


def _eighteen_digits(t: T.DataType) -> bool:
    """A DECIMAL(18, s): 64 bits that DuckDB holds to 18 digits (a sum or a
    product of narrower DECIMALs capped there, with an overflow error past it)."""
    return t.is_decimal and t.precision == 18


def _duck_name(t: T.DataType) -> str:
    return {"BIGINT": "INT64", "INTEGER": "INT32", "HUGEINT": "INT128"}.get(t.kind, str(t))


def _widens(t: T.DataType) -> bool:
    """Whether an overflowing result of type ``t`` is held in 128 bits (no error)."""
    return t.is_decimal and t.precision > 18 or t.kind == "HUGEINT"


def _check_flag(bad: torch.Tensor, valid, message: str) -> None:
    if valid is not None:
        bad = bad & valid
    check(bad, message)


def _check_overflow(v, valid, lo, hi, op, tname):
    bad = (v < lo) | (v > hi)
    if valid is not None:
        bad &= valid
    names = {"add": "addition", "sub": "subtraction", "mul": "multiplication"}
    check(bad, f"Out of Range Error: Overflow in {names.get(op, op)} of {tname}")


def _negatable(a: Column, what: str) -> Column:
    """a, widened when negating its minimum value needs it; an overflow error
    when the type cannot hold the result (INTEGER, BIGINT, DECIMAL(<=18)):
    ``what`` names the operation ("negation"; "abs" gives DuckDB's
    "Overflow on abs(-2147483648)")."""
    t = a.dtype
    if a.is_wide or t.kind == "DOUBLE" or a.data.dtype == torch.bool:
        return a
    minimum = torch.iinfo(a.data.dtype).min
    bad = a.data == minimum
    if a.valid is not None:
        bad &= a.valid
    if bool(bad.any()):
        if t.kind == "HUGEINT" or t.is_decimal and t.precision > 18:
            return a.with_data(W.to_wide(a.data))
        if what == "abs":
            raise ExecutionError(f"Out of Range Error: Overflow on abs({minimum})")
        raise ExecutionError(f"Out of Range Error: Overflow in {what} of {_duck_name(t)}")
    return a


def _neg(e: Call, cols: list[Column]) -> Column:
    (a,) = cols
    a = _negatable(a, "negation")
    if a.is_wide:
        return a.with_data(W.neg(a.data))
    return a.with_data(_flip_sign(a.data) if a.data.dtype == torch.float64 else -a.data)


def _abs(e: Call, cols: list[Column]) -> Column:
    (a,) = cols
    a = _negatable(a, "abs")
    if a.is_wide:
        return a.with_data(torch.where((a.data[:, 0] < 0)[:, None], W.neg(a.data), a.data))
    return a.with_data(_clear_sign(a.data) if a.data.dtype == torch.float64 else a.data.abs())


# ---------------------------------------------------------------- definitions
def _null_constant(e) -> bool:
    return isinstance(e, Literal) and e.value is None


def _bind_arith(op: str):
    def bind(args, site):
        e = ty.arith(op, args[0], args[1])
        if op == "mod" and e.type.kind == "DOUBLE" and all(a.type.is_numeric and a.type.kind != "DOUBLE" for a in args):
            # exact numbers taken modulo as DOUBLEs (a DECIMAL and a HUGEINT): DuckDB gives NULL
            # for x % 0 there, not the NaN of DOUBLE % 0
            b = args[1]
            b = Case(((ty.compare("eq", b, Literal(0, T.INTEGER)), Literal(None, b.type)),), b, b.type)
            e = ty.arith(op, args[0], b)
        if op in ("add", "sub", "mul", "mod") and e.type.is_decimal and any(_null_constant(a) for a in args):
            # DuckDB's DECIMAL arithmetic types a constant NULL operand's result as NULL
            # (which then decides a ROUND's or a SUM's type over it)
            return Literal(None, T.NULLTYPE)
        return e

    return bind


def _bind_neg(args, site):
    v = args[0]
    if v.type.kind == "NULL":
        return Literal(None, T.BIGINT)  # DuckDB: -NULL is BIGINT
    if _null_constant(v) and v.type.is_decimal:
        return Literal(None, T.NULLTYPE)  # (as DECIMAL arithmetic: _bind_arith)
    if isinstance(v, Literal) and isinstance(v.value, (int, float)) and v.type.is_numeric:
        return Literal(-v.value, v.type)
    if isinstance(v, Literal) and v.type.kind == "INTERVAL":
        return Literal(tuple(-x for x in v.value), T.INTERVAL)
    if not v.type.is_numeric:
        raise TypeMismatch(f"Type mismatch: cannot negate {ty.show(v)} of type {v.type}")
    return Call("neg", (v,), v.type)


def _bind_abs(args, site):
    v = args[0]
    if v.type.kind == "NULL":
        return Literal(None, T.BIGINT)  # DuckDB: abs(NULL) is BIGINT
    if _null_constant(v) and v.type.is_decimal:
        return Literal(None, T.NULLTYPE)  # (as DECIMAL arithmetic: _bind_arith)
    if not v.type.is_numeric:
        raise TypeMismatch(f"Type mismatch: ABS needs a number, got {v.type}")
    return Call("abs", (v,), v.type)


_OPERATORS = (
    ("add", "a + b", "Sum; a DATE or TIMESTAMP plus days or an INTERVAL."),
    ("sub", "a - b", "Difference; of two DATEs in days; a DATE or TIMESTAMP minus days or an INTERVAL."),
    ("mul", "a * b", "Product."),
    ("div", "a / b", "Quotient, as a DOUBLE."),
    ("intdiv", "a // b", "Integer quotient, truncated toward zero (NULL when b is 0)."),
    ("mod", "a % b", "Remainder of the truncated division, with a's sign (NULL when b is 0)."),
)

FUNCTIONS = [
    *(
        Function(op, OPERATOR, "math", sig, doc, bind=_bind_arith(op), evaluate=_arith(op), strict=True)
        for op, sig, doc in _OPERATORS
    ),
    Function("neg", OPERATOR, "math", "-a", "The number negated.", bind=_bind_neg, evaluate=_neg, strict=True),
    Function(
        "abs", SCALAR, "math", "abs(NUMERIC) -> NUMERIC", "Absolute value.", bind=_bind_abs, evaluate=_abs, strict=True
    ),
]
