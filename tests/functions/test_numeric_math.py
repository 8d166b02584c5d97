"""The math functions' kernels on random values against Python's exact
arithmetic: exact DECIMAL division in each rounding mode (int64 and wide),
DuckDB's wrapping integer round, gcd / lcm, and round / trunc of doubles."""

from __future__ import annotations

import math
import random

import pytest
import torch

from glint.columnar import types as T
from glint.errors import ExecutionError
from glint.functions.numeric_math import gcd, lcm
from glint.functions.numeric_rounding import divide_rounded, round_double, round_integer
from glint.kernels import wide as W


def _python_divide(v: int, k: int, mode: str) -> int:
    q, r = divmod(v, k)  # floor
    if mode == "floor":
        return q
    if mode == "ceil":
        return q + (r != 0)
    if mode == "trunc":
        return q + (r != 0 and v < 0)
    mag = (abs(v) + k // 2) // k  # half away from zero
    return mag if v >= 0 else -mag


@pytest.mark.parametrize("mode", ["floor", "ceil", "round", "trunc"])
@pytest.mark.parametrize("wide", [False, True])
def test_divide_rounded_is_exact(mode, wide):
    rng = random.Random(7)
    bound = 2**90 if wide else 2**62
    values = [rng.randrange(-bound, bound) for _ in range(300)] + [0, 1, -1, 5, -5, 15, -15, 25, -25]
    for k in (1, 10, 100, 10**9, 10**18, 10**19, 10**27, 10**30):
        if wide:
            data = torch.tensor([[v >> W.BITS, v & W.MASK] for v in values], dtype=torch.int64)
        else:
            data = torch.tensor(values, dtype=torch.int64)
        out = divide_rounded(data, k, mode)
        got = W.to_python(out) if out.dim() == 2 else out.tolist()
        assert got == [_python_divide(v, k, mode) for v in values], (mode, k)


def _duck_round_int64(v: int, k: int, mode: str, bits: int) -> int:
    """DuckDB's RoundIntegerOperator in int64 (wrapping), cast to the type."""

    def wrap(x: int, b: int = 64) -> int:
        x &= (1 << b) - 1
        return x - (1 << b) if x >> (b - 1) else x

    p = 10**k
    if mode == "round":
        v = wrap(v + (-(p // 2) if v < 0 else p // 2))
    q = abs(v) // p * (1 if v >= 0 else -1)
    return wrap(wrap(q * p), bits)


@pytest.mark.parametrize("mode", ["round", "trunc"])
@pytest.mark.parametrize("dtype", [T.INTEGER, T.BIGINT])
def test_integer_round_wraps_as_duckdb(mode, dtype):
    rng = random.Random(3)
    bits = 32 if dtype == T.INTEGER else 64
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    values = [rng.randint(lo, hi) for _ in range(200)] + [lo, hi, 0, 5, -5, 15, -15]
    data = torch.tensor(values, dtype=dtype.torch_dtype)
    for k in (1, 2, 9, 10, 18):
        got = round_integer(data, dtype, -k, mode).tolist()
        assert got == [_duck_round_int64(v, k, mode, bits) for v in values], (mode, k)
    assert round_integer(data, dtype, -19, mode).tolist() == [0] * len(values)
    per_row = torch.tensor([-1, -2, 3, -19] * (len(values) // 4 + 1))[: len(values)]
    got = round_integer(data, dtype, per_row, mode).tolist()
    want = [
        v if d >= 0 else 0 if -d >= 19 else _duck_round_int64(v, -d, mode, bits)
        for v, d in zip(values, per_row.tolist())
    ]
    assert got == want


def test_gcd_and_lcm_match_python():
    rng = random.Random(5)
    a = [rng.randint(-(10**12), 10**12) for _ in range(300)] + [0, 0, 7, -7, 2**40, -(2**40)]
    b = [rng.choice([rng.randint(-(10**6), 10**6), 0, 1, -1, 12]) for _ in range(300)] + [0, 5, 0, 21, 6, -4]
    ta, tb = torch.tensor(a), torch.tensor(b)
    assert gcd(ta, tb, None).tolist() == [math.gcd(x, y) for x, y in zip(a, b)]
    assert lcm(ta, tb, None).tolist() == [math.lcm(x, y) for x, y in zip(a, b)]
    assert gcd(torch.tensor([-(2**63), -1]), torch.tensor([-1, -(2**63)]), None).tolist() == [1, 1]
    valid = torch.tensor([True, False])
    assert gcd(torch.tensor([6, -(2**63)]), torch.tensor([4, 0]), valid).tolist()[0] == 2  # a NULL row never errs
    with pytest.raises(ExecutionError, match="Overflow on abs"):
        gcd(torch.tensor([-(2**63)]), torch.tensor([0]), None)
    with pytest.raises(ExecutionError, match="lcm value is out of range"):
        lcm(torch.tensor([2**62]), torch.tensor([3]), None)


def _c_round(x: float) -> float:
    return math.copysign(math.floor(abs(x) + 0.5) if abs(x) < 2**52 else abs(x), x)


@pytest.mark.parametrize("mode", ["round", "trunc"])
def test_double_round_matches_duckdbs_formula(mode):
    rng = random.Random(11)
    xs = [rng.uniform(-1e6, 1e6) for _ in range(200)] + [2.5, -2.5, 0.5, -0.5, 1e300, float("inf"), float("nan")]
    op = _c_round if mode == "round" else math.trunc
    for d in (-3, -1, 0, 1, 2, 5):
        m = 10.0 ** abs(d)
        got = round_double(torch.tensor(xs, dtype=torch.float64), d, mode).tolist()
        for x, g in zip(xs, got):
            if not math.isfinite(x):
                want = 0.0 if mode == "round" and d < 0 else x
            else:
                r = op(x * m) / m if d >= 0 else op(x / m) * m
                want = float(r)
            assert (math.isnan(g) and math.isnan(want)) or g == want, (x, d, g, want)
