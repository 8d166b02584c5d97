"""Exact integers beyond int64, as (n, 2) int64 [hi, lo] limbs with
value = hi * 2**32 + lo and 0 <= lo < 2**32 (about 95 bits of range).

DECIMAL results in DuckDB are 128-bit; glint keeps int64 and widens only the
values that need it: a product of two int64 decimals, a rescale, a large SUM.

>>> import torch
>>> a = torch.tensor([3_000_000_000_000, -7])
>>> b = torch.tensor([5_000_000_000_000, 9])
>>> to_python(mul(a, b))
[15000000000000000000000000, -63]
>>> to_python(add(mul(a, b), to_wide(torch.tensor([1, 1]))))
[15000000000000000000000001, -62]
>>> to_python(scale(to_wide(torch.tensor([-123])), 10**12))
[-123000000000000]
"""

from __future__ import annotations

import torch

from glint.errors import ExecutionError

BITS = 32
MASK = (1 << BITS) - 1
LIMIT = 2.0**93  # magnitudes kept clear of the hi limb's int64 range


def to_wide(v: torch.Tensor) -> torch.Tensor:
    if v.dim() == 2:
        return v
    v = v.long()
    return torch.stack([v >> BITS, v & MASK], dim=1)


def normalize(hi: torch.Tensor, lo: torch.Tensor) -> torch.Tensor:
    """Carry lo's excess (either sign) into hi."""
    return torch.stack([hi + (lo >> BITS), lo & MASK], dim=1)


def add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a, b = to_wide(a), to_wide(b)
    return normalize(a[:, 0] + b[:, 0], a[:, 1] + b[:, 1])


def neg(a: torch.Tensor) -> torch.Tensor:
    a = to_wide(a)
    return normalize(-a[:, 0], -a[:, 1])


def sub(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return add(a, neg(b))


def to_double(a: torch.Tensor) -> torch.Tensor:
    a = to_wide(a)
    return a[:, 0].double() * float(1 << BITS) + a[:, 1].double()


def check_magnitude(estimate: torch.Tensor, valid, what: str) -> None:
    bad = estimate.abs() >= LIMIT
    if valid is not None:
        bad &= valid
    if bool(bad.any()):
        raise ExecutionError(f"Out of Range Error: Overflow in {what}")


def mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Exact products of two int64 tensors (the caller checks the magnitude).

    With a = a1*2**32 + a0 and a0 = a0h*2**16 + a0l, every partial product
    fits in int64 as long as |a*b| < 2**93."""
    a, b = a.long(), b.long()
    a1, a0 = a >> BITS, a & MASK
    b1, b0 = b >> BITS, b & MASK
    a0h, a0l = a0 >> 16, a0 & 0xFFFF
    t0 = a0l * b0  # < 2**48
    t1 = a0h * b0  # < 2**48, weight 2**16
    lo = t0 + ((t1 & 0xFFFF) << 16)  # < 2**49
    hi = ((a1 * b1) << BITS) + a1 * b0 + a0 * b1 + (t1 >> 16)
    return normalize(hi, lo)


def _steps(k: int) -> list[int]:
    """k as factors below 2**31 (powers of ten split into 10**9 pieces), so
    every partial product of a limb stays inside int64."""
    steps = []
    while k >= 10**9 and k % 10**9 == 0:
        steps.append(10**9)
        k //= 10**9
    if k > 1:
        if k >= 1 << 31:
            raise ExecutionError(f"Out of Range Error: cannot scale by {k}")
        steps.append(k)
    return steps


def scale(a: torch.Tensor, k: int) -> torch.Tensor:
    """a * k for a positive Python int k (a power of ten when rescaling), in
    steps of at most 10**9 so no partial product leaves int64."""
    out = to_wide(a)
    for step in _steps(k):
        hi, lo = out[:, 0], out[:, 1]
        t = lo * step
        out = normalize(hi * step + (t >> BITS), t & MASK)
    return out


def floordiv(a: torch.Tensor, k: int) -> torch.Tensor:
    """floor(a / k) for a positive Python int k, in steps below 2**31."""
    out = to_wide(a)
    for step in _steps(k):  # floor(floor(a / p) / q) == floor(a / (p*q))
        hi, lo = out[:, 0], out[:, 1]
        q_hi = torch.div(hi, step, rounding_mode="floor")
        r = hi - q_hi * step  # 0 <= r < step
        q_lo = torch.div((r << BITS) + lo, step, rounding_mode="floor")
        out = normalize(q_hi, q_lo)
    return out


def compare_scaled(op: str, a: torch.Tensor, sa: int, b: torch.Tensor, sb: int) -> torch.Tensor:
    """a * 10**-sa  op  b * 10**-sb exactly, dividing the finer side down
    (floor / ceiling) instead of scaling the coarser one up."""
    if sa > sb:
        flip = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}[op]
        return compare_scaled(flip, b, sb, a, sa)
    k = 10 ** (sb - sa)
    fl = floordiv(b, k)
    ce = neg(floordiv(neg(b), k))
    if op in ("lt", "ge"):
        return compare(op, a, ce)
    if op in ("le", "gt"):
        return compare(op, a, fl)
    eq = compare("eq", fl, ce) & compare("eq", a, fl)
    return eq if op == "eq" else ~eq


def compare(op: str, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a, b = to_wide(a), to_wide(b)
    f = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge}[op]
    same_hi = a[:, 0] == b[:, 0]
    return torch.where(same_hi, f(a[:, 1], b[:, 1]), f(a[:, 0], b[:, 0]))


def fits_int64(a: torch.Tensor) -> bool:
    hi = a[:, 0]
    return bool(((hi >= -(1 << 31)) & (hi < (1 << 31))).all()) if a.shape[0] else True


def narrow(a: torch.Tensor) -> torch.Tensor:
    return (a[:, 0] << BITS) | a[:, 1]


def to_python(a: torch.Tensor) -> list[int]:
    return [hi * (1 << BITS) + lo for hi, lo in to_wide(a).tolist()]


def from_double(v: torch.Tensor) -> torch.Tensor:
    """Wide form of integer-valued doubles (|v| < 2**93): exact, the
    division by 2**32 is."""
    hi = torch.floor(v / float(1 << BITS))
    return torch.stack([hi.long(), (v - hi * float(1 << BITS)).long()], dim=1)


def _split(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """a (wide) as hi + lo doubles with hi = a rounded and lo = a - hi exactly."""
    hi = to_double(a)
    return hi, narrow(sub(a, from_double(hi))).double()


def _two_prod(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """p + e == a * b exactly (Dekker's product with Veltkamp splits; no FMA
    needed, and each torch op rounds on its own)."""

    def veltkamp(x):
        c = x * 134217729.0  # 2**27 + 1
        h = c - (c - x)
        return h, x - h

    p = a * b
    ah, al = veltkamp(a)
    bh, bl = veltkamp(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _ulp_toward(x: torch.Tensor, direction: torch.Tensor) -> torch.Tensor:
    """The gap between x and the next double on the side of ``direction``'s sign."""
    inf = torch.full_like(x, float("inf"))
    return torch.where(direction >= 0, torch.nextafter(x, inf) - x, x - torch.nextafter(x, -inf))


def quotient_ld(n: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """n / d as DuckDB computes AVG: in x87 extended precision (a 64-bit
    significand) and then rounded to double, i.e. RN53(RN64(n / d)) -- not the
    correctly rounded quotient, nor double(n) / double(d) when n needs more
    than 53 bits. n, d: exact integers (int64 or wide), 0 < d < 2**64.

    The quotient is carried as a double-double q1 + q2 (about 100 bits), then
    rounded on the 64-bit grid next to q1 and from there to 53 bits, ties to
    even both times.

    >>> import torch
    >>> n = to_wide(torch.tensor([2**62 + 3, 1, -7, 0]))
    >>> quotient_ld(n, torch.tensor([3, 3, 2, 5])).tolist() == [(2**62 + 3) / 3, 1 / 3, -3.5, 0.0]
    True
    """
    n, d = to_wide(n), to_wide(d)
    n_hi, n_lo = _split(n)
    # DuckDB first converts the sum to long double: beyond 2**64 it is rounded to 64 bits
    g = _ulp_toward(n_hi, n_lo) / 2048.0
    n_lo = torch.where(n_hi.abs() >= 2.0**64, torch.round(n_lo / g) * g, n_lo)
    d_hi, d_lo = _split(d)
    q1 = n_hi / d_hi
    p, e = _two_prod(q1, d_hi)
    q2 = ((((n_hi - p) - e) + n_lo) - q1 * d_lo) / d_hi
    u = _ulp_toward(q1, q2)
    k = torch.round(q2 / (u / 2048.0))  # x on the 64-bit grid next to q1, in steps of u / 2**11
    j0 = torch.floor(k / 2048.0)
    rem = k - j0 * 2048.0
    low = q1 + j0 * u
    odd = (low.view(torch.int64) & 1).bool()
    j = j0 + ((rem > 1024.0) | ((rem == 1024.0) & odd)).to(q1.dtype)
    out = q1 + j * u
    return torch.where(torch.isfinite(out), out, q1)


def to_double_duckdb(a: torch.Tensor) -> torch.Tensor:
    """a as DOUBLE the way DuckDB converts a HUGEINT (CastBigintToFloating):
    its 128-bit halves are converted apart, double(lower) + upper * 2**64,
    and an upper half of -1 as -double(2**64 - 1 - lower) - 1. That is not
    always the nearest double, so the conversion is copied, not improved.

    >>> import torch
    >>> to_double_duckdb(to_wide(torch.tensor([5, -3]))).tolist()
    [5.0, -3.0]
    >>> w = torch.tensor([[-(2**32) + 0, 2**11 + 1]])        # -2**64 + 2**11 + 1: upper half -1
    >>> to_double_duckdb(w).item() == -float(2**64 - 1 - (2**11 + 1)) - 1.0
    True
    """
    a = to_wide(a)
    hi, lo = a[:, 0], a[:, 1]
    upper = hi >> BITS  # value >> 64
    mid = hi & MASK  # bits 32..63 of the 64-bit lower half
    two32 = float(1 << BITS)
    lower = mid.double() * two32 + lo.double()  # double(lower): one rounding
    neg_lower = (MASK - mid).double() * two32 + (MASK - lo).double()  # double(2**64 - 1 - lower)
    return torch.where(upper == -1, -neg_lower - 1.0, lower + upper.double() * (two32 * two32))
