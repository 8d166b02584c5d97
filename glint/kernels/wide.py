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

from ..errors import ExecutionError

BITS = 32
MASK = (1 << BITS) - 1
LIMIT = 2.0 ** 93          # magnitudes kept clear of the hi limb's int64 range


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
    t0 = a0l * b0                        # < 2**48
    t1 = a0h * b0                        # < 2**48, weight 2**16
    lo = t0 + ((t1 & 0xFFFF) << 16)      # < 2**49
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
    for step in _steps(k):      # floor(floor(a / p) / q) == floor(a / (p*q))
        hi, lo = out[:, 0], out[:, 1]
        q_hi = torch.div(hi, step, rounding_mode="floor")
        r = hi - q_hi * step                       # 0 <= r < step
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
