"""The math functions of DOUBLE (sqrt, exp, logarithms, powers, the
trigonometric functions, even, degrees and radians), sign, isnan / isinf /
isfinite, gcd / lcm, factorial and pi, with DuckDB 1.4's result types and
errors.

Arguments of the DOUBLE functions are cast to DOUBLE. DuckDB checks each row
as it computes it, so of several bad rows the first one names the error:
``sqrt(-1)`` is "cannot take square root of a negative number", ``ln(0)``
"cannot take logarithm of zero", ``sin('inf')`` "input value inf is out of
range for numeric function". NaN passes through every function.

>>> import torch
>>> x = Column(T.DOUBLE, torch.tensor([4.0, -0.0, float("nan")]))
>>> _double_fn("sqrt")(Call("sqrt", (), T.DOUBLE), [x]).data.tolist()[:2]
[2.0, -0.0]
>>> _double_fn("sqrt")(Call("sqrt", (), T.DOUBLE), [x.with_data(torch.tensor([1.0, -1.0, 0.0]))])
Traceback (most recent call last):
glint.errors.ExecutionError: Out of Range Error: cannot take square root of a negative number
>>> a, b = torch.tensor([12, -12, 0, 7]), torch.tensor([18, 18, 5, 0])
>>> gcd(a, b, None).tolist(), lcm(a, b, None).tolist()
([6, 6, 5, 7], [36, 36, 0, 0])
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.errors import ExecutionError, NotSupported, TypeMismatch
from glint.functions.dates.timestamps import infinite
from glint.functions.registry import SCALAR, Function
from glint.functions.validity import and_valid
from glint.kernels import wide as W
from glint.plan import typing as ty
from glint.plan.expr import Call, Expr, Literal

I64_MIN = -(2**63)


# ---------------------------------------------------------------- per-row errors
Check = tuple[torch.Tensor, Callable[[int], str]]


def raise_first(valid: torch.Tensor | None, checks: list[Check]) -> None:
    """Raise for the first valid row that fails a check: ``checks`` are
    (bad rows, message of row i) in the order DuckDB tests them on a row.
    One host synchronisation when every row passes."""
    bad = None
    for mask, _ in checks:
        bad = mask if bad is None else bad | mask
    if bad is None:
        return
    if valid is not None:
        bad = bad & valid
    if not bool(bad.any()):
        return
    i = int(bad.nonzero()[0, 0])
    for mask, message in checks:
        if bool(mask[i]):
            raise ExecutionError(message(i))


def _const(text: str) -> Callable[[int], str]:
    return lambda i: text


def _value_message(x: torch.Tensor, suffix: str = "") -> Callable[[int], str]:
    """DuckDB's "input value %lf is out of range for numeric function"."""
    return lambda i: f"Out of Range Error: input value {float(x[i]):f} is out of range for numeric function{suffix}"


_NEGATIVE_LOG = "Out of Range Error: cannot take logarithm of a negative number"
_ZERO_LOG = "Out of Range Error: cannot take logarithm of zero"


def _log_checks(x: torch.Tensor) -> list[Check]:
    return [(x < 0, _const(_NEGATIVE_LOG)), (x == 0, _const(_ZERO_LOG))]


def _finite_checks(x: torch.Tensor) -> list[Check]:
    """DuckDB's NoInfiniteDoubleWrapper: an infinity is an error (NaN passes)."""
    return [(torch.isinf(x), _value_message(x))]


def _range_checks(name: str):
    def checks(x: torch.Tensor) -> list[Check]:
        out_of_range = (x < -1) | (x > 1)
        return _finite_checks(x) + [(out_of_range, _const(f"Invalid Input Error: {name} is undefined outside [-1,1]"))]

    return checks


def _cot(x: torch.Tensor) -> torch.Tensor:
    return 1.0 / torch.tan(x)


def _cbrt(x: torch.Tensor) -> torch.Tensor:
    return torch.copysign(torch.pow(x.abs(), 1.0 / 3.0), x)


def _even(x: torch.Tensor) -> torch.Tensor:
    """DuckDB's EvenOperator: away from zero to the next even integer."""
    pos = x >= 0
    value = torch.where(pos, torch.ceil(x), -torch.ceil(-x))
    odd = torch.floor(value / 2) * 2 != value
    return torch.where(odd, value + torch.where(pos, 1.0, -1.0), value)


# name -> (the function of a DOUBLE tensor, the row checks before it, documentation)
_UNARY: dict[str, tuple[Callable, Callable | None, str]] = {
    "sqrt": (
        torch.sqrt,
        lambda x: [(x < 0, _const("Out of Range Error: cannot take square root of a negative number"))],
        "Square root.",
    ),
    "cbrt": (_cbrt, None, "Cube root."),
    "exp": (torch.exp, None, "e to the power of the argument."),
    "ln": (torch.log, _log_checks, "Natural logarithm."),
    "log10": (torch.log10, _log_checks, "Logarithm to base 10."),
    "log2": (torch.log2, _log_checks, "Logarithm to base 2."),
    "sin": (torch.sin, _finite_checks, "Sine (radians)."),
    "cos": (torch.cos, _finite_checks, "Cosine (radians)."),
    "tan": (torch.tan, _finite_checks, "Tangent (radians)."),
    "cot": (
        _cot,
        lambda x: _finite_checks(x) + [(x == 0, _value_message(x, " cotangent"))],
        "Cotangent (radians).",
    ),
    "asin": (torch.asin, _range_checks("ASIN"), "Arcsine, in radians."),
    "acos": (torch.acos, _range_checks("ACOS"), "Arccosine, in radians."),
    "atan": (torch.atan, None, "Arctangent, in radians."),
    "sinh": (torch.sinh, None, "Hyperbolic sine."),
    "cosh": (torch.cosh, None, "Hyperbolic cosine."),
    "tanh": (torch.tanh, None, "Hyperbolic tangent."),
    "asinh": (torch.asinh, None, "Inverse hyperbolic sine."),
    "acosh": (torch.acosh, None, "Inverse hyperbolic cosine (NaN below 1)."),
    "atanh": (
        torch.atanh,
        lambda x: [((x < -1) | (x > 1), _const("Invalid Input Error: ATANH is undefined outside [-1,1]"))],
        "Inverse hyperbolic tangent.",
    ),
    "degrees": (lambda x: x * (180 / math.pi), None, "Radians converted to degrees."),
    "radians": (lambda x: x * (math.pi / 180), None, "Degrees converted to radians."),
    "even": (_even, None, "Rounded away from zero to the next even integer."),
}


def _double_fn(name: str):
    fn, checks, _ = _UNARY[name]

    def run(e: Call, cols: list[Column]) -> Column:
        (a,) = cols
        x = a.data
        if checks is not None:
            raise_first(a.valid, checks(x))
        return Column(T.DOUBLE, fn(x), a.valid)

    return run


def _log_base(e: Call, cols: list[Column]) -> Column:
    """log(b, x): log10(x) / log10(b), checking b, then b = 1, then x (DuckDB's LogBaseOperator)."""
    b, x = cols
    valid = and_valid(b.valid, x.valid)
    bd, xd = b.data, x.data
    divisor = torch.log10(bd)
    raise_first(
        valid,
        _log_checks(bd)
        + [(divisor == 0, _const("Out of Range Error: divison by zero in based logarithm"))]
        + _log_checks(xd),
    )
    return Column(T.DOUBLE, torch.log10(xd) / divisor, valid)


def _binary(fn):
    def run(e: Call, cols: list[Column]) -> Column:
        a, b = cols
        return Column(T.DOUBLE, fn(a.data, b.data), and_valid(a.valid, b.valid))

    return run


# ---------------------------------------------------------------- sign, isnan / isinf / isfinite
def _sign(e: Call, cols: list[Column]) -> Column:
    (a,) = cols
    v = a.data
    if a.is_wide:
        hi, lo = v[:, 0], v[:, 1]
        out = torch.where(hi < 0, -1, torch.where((hi > 0) | (lo > 0), 1, 0))
    elif v.is_floating_point():
        out = (v > 0).int() - (v < 0).int()  # NaN and -0.0: 0
    else:
        out = torch.sign(v)
    return Column(e.type, out.to(torch.int32), a.valid)


def _signbit(e: Call, cols: list[Column]) -> Column:
    (a,) = cols
    return Column(T.BOOLEAN, torch.signbit(a.data), a.valid)


def _float_test(name: str):
    def run(e: Call, cols: list[Column]) -> Column:
        (a,) = cols
        v = a.data
        if a.dtype.kind == "DOUBLE":
            out = {"isnan": torch.isnan, "isinf": torch.isinf, "isfinite": torch.isfinite}[name](v)
        elif a.dtype.kind in ("DATE", "TIMESTAMP"):
            out = infinite(v) if name == "isinf" else ~infinite(v)
        else:  # exact numbers are finite
            out = torch.full((len(a),), name == "isfinite", dtype=torch.bool, device=a.device)
        return Column(T.BOOLEAN, out, a.valid)

    return run


# ---------------------------------------------------------------- gcd, lcm, factorial
def _abs_overflow(v: torch.Tensor, valid) -> None:
    raise_first(valid, [(v == I64_MIN, _const(f"Out of Range Error: Overflow on abs({I64_MIN})"))])


def _safe_divisor(d: torch.Tensor) -> torch.Tensor:
    """d with 0 and -1 made 1: MIN % -1 traps in C (the remainder is 0), x % 0 is not needed."""
    return torch.where((d == 0) | (d == -1), torch.ones_like(d), d)


def _euclid(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """DuckDB's GreatestCommonDivisor loop on int64 before its final abs():
    b %= a, a %= b with C remainders, until one is 0; the other is returned
    (signed). MIN and -1 give 1 (the loop would trap)."""
    special = ((a == I64_MIN) & (b == -1)) | ((a == -1) & (b == I64_MIN))
    out = torch.zeros_like(a)
    done = torch.zeros_like(a, dtype=torch.bool)
    while True:
        hit = ~done & (a == 0)
        out = torch.where(hit, b, out)
        done |= hit
        b = torch.where(done, b, torch.where(a == -1, 0, torch.fmod(b, _safe_divisor(a))))
        hit = ~done & (b == 0)
        out = torch.where(hit, a, out)
        done |= hit
        if bool(done.all()):
            break
        a = torch.where(done, a, torch.where(b == -1, 0, torch.fmod(a, _safe_divisor(b))))
    return torch.where(special, torch.ones_like(out), out)


def _ones_where_null(v: torch.Tensor, valid) -> torch.Tensor:
    v = v.long()
    return v if valid is None else torch.where(valid, v, 1)


def gcd(a: torch.Tensor, b: torch.Tensor, valid) -> torch.Tensor:
    """gcd of int64 values, DuckDB's: gcd(x, 0) = |x|, an overflow error
    where the result would be 2**63."""
    g = _euclid(_ones_where_null(a, valid), _ones_where_null(b, valid))
    _abs_overflow(g, valid)
    return g.abs()


def _lcm_factors(a: torch.Tensor, b: torch.Tensor):
    """(where either is 0, a with 1 there, b / |gcd(a, b)|): the lcm is
    |a1 * step|. The quotient is by |gcd| because the signed gcd may be -1,
    and INT64_MIN / -1 traps (SIGFPE) in integer division; gcd(MIN, MIN) =
    MIN stays (MIN / MIN = 1, and the product MIN is 2**63 in absolute value)."""
    zero = (a == 0) | (b == 0)
    a1, b1 = torch.where(zero, 1, a), torch.where(zero, 1, b)
    g = _euclid(a1, b1)
    g = torch.where(g == I64_MIN, g, g.abs())
    return zero, a1, torch.div(b1, g, rounding_mode="trunc")


def lcm(a: torch.Tensor, b: torch.Tensor, valid) -> torch.Tensor:
    """lcm of int64 values: 0 when either is 0; else |a * (b / gcd)| with
    DuckDB's errors when the product or its abs() leaves int64."""
    a, b = _ones_where_null(a, valid), _ones_where_null(b, valid)
    zero, a1, step = _lcm_factors(a, b)
    exact = W.mul(a1, step)
    over = ~zero & ((exact[:, 0] < -(1 << 31)) | (exact[:, 0] >= (1 << 31)))
    raise_first(valid, [(over, _const("Out of Range Error: lcm value is out of range"))])
    prod = torch.where(zero, 0, a1 * step)
    _abs_overflow(prod, valid)
    return prod.abs()


def _gcd_lcm(fn):
    def run(e: Call, cols: list[Column]) -> Column:
        a, b = cols
        if a.is_wide or b.is_wide:
            raise NotSupported(f"{e.fn} of HUGEINT values beyond 64 bits")
        valid = and_valid(a.valid, b.valid)
        if e.type.kind == "HUGEINT":
            return _hugeint_gcd_lcm(fn, a.data.long(), b.data.long(), valid, e.type)
        return Column(e.type, fn(a.data.long(), b.data.long(), valid), valid)

    return run


def _hugeint_gcd_lcm(fn, a: torch.Tensor, b: torch.Tensor, valid, t: T.DataType) -> Column:
    """gcd / lcm of HUGEINTs held in int64: the same, except that a result
    of 2**63 or a product beyond int64 is a value, not an error."""
    if fn is gcd:
        g = _euclid(a, b)
        big = g == I64_MIN
        if bool(big.any()):
            w = torch.where(big[:, None], W.neg(W.to_wide(g)), W.to_wide(g.abs()))
            return Column(t, w, valid)
        return Column(t, g.abs(), valid)
    zero, a1, step = _lcm_factors(a, b)
    w = W.mul(a1, step)
    w = torch.where((w[:, 0] < 0)[:, None], W.neg(w), w)
    w = torch.where(zero[:, None], torch.zeros_like(w), w)
    return Column(t, W.narrow(w) if W.fits_int64(w) else w, valid)


_FACTORIALS = [math.factorial(n) for n in range(34)]
_WIDE_FACTORIAL = 26  # 27! is beyond glint's 93-bit wide values


def _factorial(e: Call, cols: list[Column]) -> Column:
    """factorial(n) as HUGEINT: 1 for n <= 1; DuckDB's "Value out of range" past 33."""
    (a,) = cols
    n = a.data.long()
    raise_first(a.valid, [(n > 33, _const("Out of Range Error: Value out of range"))])
    ok = n if a.valid is None else torch.where(a.valid, n, 0)
    if bool((ok > _WIDE_FACTORIAL).any()):
        raise NotSupported(f"factorial of more than {_WIDE_FACTORIAL} (a HUGEINT beyond 93 bits)")
    idx = torch.clamp(ok, 0, _WIDE_FACTORIAL)
    if bool((idx > 20).any()):
        limbs = [[f >> W.BITS, f & W.MASK] for f in _FACTORIALS[: _WIDE_FACTORIAL + 1]]
        table = torch.tensor(limbs, dtype=torch.int64, device=a.device)
        return Column(T.HUGEINT, table[idx], a.valid)
    table = torch.tensor(_FACTORIALS[:21], dtype=torch.int64, device=a.device)
    return Column(T.HUGEINT, table[idx], a.valid)


# ---------------------------------------------------------------- binding
def _arity(args, site, n: int | tuple[int, ...]) -> None:
    counts = (n,) if isinstance(n, int) else n
    if len(args) not in counts:
        raise TypeMismatch(f"{site.name}() takes {' or '.join(map(str, counts))} argument(s), got {len(args)}")


def double_arg(v: Expr, fn: str) -> Expr:
    """v as a DOUBLE argument: a number, or a string constant cast to DOUBLE."""
    if v.type.is_numeric or v.type.kind == "NULL" or (isinstance(v, Literal) and v.type.is_string):
        return ty.cast(v, T.DOUBLE)
    raise TypeMismatch(f"Type mismatch: {fn}() needs a number, got {ty.show(v)} of type {v.type}")


def _bind_unary(name: str):
    def bind(args, site):
        _arity(args, site, 1)
        v = double_arg(args[0], name)
        if isinstance(v, Literal) and v.value is None:
            return Literal(None, T.DOUBLE)
        return Call(name, (v,), T.DOUBLE)

    return bind


def _bind_log_of(name: str):
    """log10(x) / log2(x); sqlglot reads both as log(base, x), so the base comes first then."""

    def bind(args, site):
        _arity(args, site, (1, 2))
        return _bind_unary(name)([args[-1]], site)

    return bind


def _bind_log(args, site):
    """log(x) (base 10, as DuckDB) or log(b, x)."""
    _arity(args, site, (1, 2))
    if len(args) == 1:
        return _bind_unary("log10")(args, site)
    b, x = double_arg(args[0], "log"), double_arg(args[1], "log")
    if any(isinstance(v, Literal) and v.value is None for v in (b, x)):
        return Literal(None, T.DOUBLE)
    return Call("log_base", (b, x), T.DOUBLE)


def _bind_binary(name: str):
    def bind(args, site):
        _arity(args, site, 2)
        a, b = double_arg(args[0], name), double_arg(args[1], name)
        if any(isinstance(v, Literal) and v.value is None for v in (a, b)):
            return Literal(None, T.DOUBLE)
        return Call(name, (a, b), T.DOUBLE)

    return bind


def _bind_pi(args, site):
    _arity(args, site, 0)
    return Literal(math.pi, T.DOUBLE)


def _bind_sign(args, site):
    _arity(args, site, 1)
    v = args[0]
    if v.type.kind == "NULL":
        return Literal(None, T.INTEGER)
    if not v.type.is_numeric:
        raise TypeMismatch(f"Type mismatch: sign() needs a number, got {ty.show(v)} of type {v.type}")
    return Call("sign", (v,), T.INTEGER)


def _bind_signbit(args, site):
    _arity(args, site, 1)
    v = double_arg(args[0], "signbit")
    if isinstance(v, Literal) and v.value is None:
        return Literal(None, T.BOOLEAN)
    return Call("signbit", (v,), T.BOOLEAN)


def _bind_float_test(name: str):
    def bind(args, site):
        _arity(args, site, 1)
        v = args[0]
        if v.type.kind == "NULL":
            return Literal(None, T.BOOLEAN)
        temporal = v.type.kind in ("DATE", "TIMESTAMP") and name != "isnan"
        if not temporal:
            v = double_arg(v, name) if not v.type.is_numeric else v
        return Call(name, (v,), T.BOOLEAN)

    return bind


def _bind_gcd_lcm(name: str):
    def bind(args, site):
        _arity(args, site, 2)
        a, b = args[0], args[1]
        for v in (a, b):
            if not (v.type.is_integer or v.type.kind == "NULL"):
                raise TypeMismatch(
                    f"Type mismatch: {name}() takes BIGINT or HUGEINT arguments, got {ty.show(v)} of type {v.type}"
                )
        t = T.HUGEINT if "HUGEINT" in (a.type.kind, b.type.kind) else T.BIGINT
        if any(isinstance(v, Literal) and v.value is None for v in (a, b)):
            return Literal(None, t)
        return Call(name, (ty.cast(a, t), ty.cast(b, t)), t)

    return bind


def _bind_factorial(args, site):
    _arity(args, site, 1)
    v = args[0]
    if v.type.kind == "NULL":
        return Literal(None, T.HUGEINT)
    fits = isinstance(v, Literal) and v.type.kind == "BIGINT" and -(2**31) <= v.value < 2**31
    if v.type.kind != "INTEGER" and not fits:
        raise TypeMismatch(f"Type mismatch: factorial() takes an INTEGER, got {ty.show(v)} of type {v.type}")
    return Call("factorial", (ty.cast(v, T.INTEGER),), T.HUGEINT)


# ---------------------------------------------------------------- definitions
def _math(name, signature, doc, bind, evaluate=None, aliases=(), strict=True, rewrites_to=None):
    return Function(
        name,
        SCALAR,
        "math",
        signature,
        doc,
        aliases=aliases,
        bind=bind,
        evaluate=evaluate,
        strict=strict if evaluate is not None else False,
        rewrites_to=rewrites_to,
    )


FUNCTIONS = [
    *(
        _math(
            name,
            f"{name}(DOUBLE) -> DOUBLE",
            doc,
            _bind_log_of(name) if name in ("log10", "log2") else _bind_unary(name),
            _double_fn(name),
        )
        for name, (_, _, doc) in _UNARY.items()
    ),
    _math(
        "log",
        "log(DOUBLE x) -> DOUBLE; log(DOUBLE base, DOUBLE x) -> DOUBLE",
        "Logarithm to base 10, or to the given base.",
        _bind_log,
        rewrites_to=("log10", "log_base"),
    ),
    Function(
        "log_base",
        SCALAR,
        "math",
        "log_base(DOUBLE base, DOUBLE x) -> DOUBLE",
        "log(base, x).",
        evaluate=_log_base,
        strict=True,
        internal=True,
    ),
    _math(
        "pow",
        "pow(DOUBLE, DOUBLE) -> DOUBLE; a ** b; a ^ b",
        "a to the power of b.",
        _bind_binary("pow"),
        _binary(torch.pow),
        aliases=("power",),
    ),
    _math(
        "atan2",
        "atan2(DOUBLE y, DOUBLE x) -> DOUBLE",
        "Arctangent of y / x, in radians.",
        _bind_binary("atan2"),
        _binary(torch.atan2),
    ),
    _math("pi", "pi() -> DOUBLE", "The number π.", _bind_pi, rewrites_to=()),
    _math(
        "sign",
        "sign(NUMERIC) -> INTEGER",
        "-1, 0 or 1 as the argument is negative, zero (or NaN) or positive.",
        _bind_sign,
        _sign,
    ),
    _math(
        "signbit",
        "signbit(DOUBLE) -> BOOLEAN",
        "Whether the sign bit is set (true for -0.0).",
        _bind_signbit,
        _signbit,
    ),
    _math(
        "isnan",
        "isnan(DOUBLE) -> BOOLEAN",
        "Whether the value is NaN.",
        _bind_float_test("isnan"),
        _float_test("isnan"),
    ),
    _math(
        "isinf",
        "isinf(DOUBLE | DATE | TIMESTAMP) -> BOOLEAN",
        "Whether the value is infinite.",
        _bind_float_test("isinf"),
        _float_test("isinf"),
    ),
    _math(
        "isfinite",
        "isfinite(DOUBLE | DATE | TIMESTAMP) -> BOOLEAN",
        "Whether the value is neither infinite nor NaN.",
        _bind_float_test("isfinite"),
        _float_test("isfinite"),
    ),
    _math(
        "gcd",
        "gcd(BIGINT, BIGINT) -> BIGINT; gcd(HUGEINT, HUGEINT) -> HUGEINT",
        "Greatest common divisor.",
        _bind_gcd_lcm("gcd"),
        _gcd_lcm(gcd),
        aliases=("greatest_common_divisor",),
    ),
    _math(
        "lcm",
        "lcm(BIGINT, BIGINT) -> BIGINT; lcm(HUGEINT, HUGEINT) -> HUGEINT",
        "Least common multiple.",
        _bind_gcd_lcm("lcm"),
        _gcd_lcm(lcm),
        aliases=("least_common_multiple",),
    ),
    _math("factorial", "factorial(INTEGER) -> HUGEINT", "n! (1 for n <= 1).", _bind_factorial, _factorial),
]
