"""Batches and predicate trees for the fused filter kernel's tests: columns of
every type it compiles (with NULLs, NaN, -0.0, a string dictionary), leaves
of every kind, and random trees of AND / OR / NOT over them."""

from __future__ import annotations

import random

import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column, Dictionary
from glint.plan.expr import Call, ColRef, Field, Literal

N = 3000
STRINGS = ["AIR", "MAIL", "SHIP", "AIR REG", "special requests", "", "TRUCK", "ß"]

F = {
    "i": Field(1, "i", T.INTEGER),
    "d": Field(2, "d", T.DECIMAL(15, 2)),
    "x": Field(3, "x", T.DOUBLE),
    "dt": Field(4, "dt", T.DATE),
    "s": Field(5, "s", T.VARCHAR),
    "b": Field(6, "b", T.BOOLEAN),
    "l": Field(7, "l", T.BIGINT),
    "ts": Field(8, "ts", T.TIMESTAMP),
}
C = {k: ColRef(f) for k, f in F.items()}


def batch(device, seed: int = 1, nulls: bool = True) -> Batch:
    g = torch.Generator().manual_seed(seed)

    def valid():
        return (torch.rand(N, generator=g) > 0.2) if nulls else None

    x = torch.randn(N, generator=g, dtype=torch.float64)
    x[::17] = float("nan")
    x[::23] = 0.0
    x[::29] = -0.0
    cols = {
        1: Column(T.INTEGER, torch.randint(-50, 50, (N,), generator=g, dtype=torch.int32), valid()),
        2: Column(T.DECIMAL(15, 2), torch.randint(-1000, 1000, (N,), generator=g), valid()),
        3: Column(T.DOUBLE, x, valid()),
        4: Column(T.DATE, torch.randint(8000, 10000, (N,), generator=g, dtype=torch.int32), valid()),
        5: Column(
            T.VARCHAR,
            torch.randint(0, len(STRINGS), (N,), generator=g, dtype=torch.int32),
            valid(),
            Dictionary.from_pylist(STRINGS),
        ),
        6: Column(T.BOOLEAN, torch.rand(N, generator=g) > 0.5, valid()),
        7: Column(T.BIGINT, torch.randint(-(2**40), 2**40, (N,), generator=g), None),
        8: Column(T.TIMESTAMP, torch.randint(0, 10**12, (N,), generator=g), valid()),
    }
    return Batch({k: c.to(device) for k, c in cols.items()}, N)


def cmp(op, a, b):
    return Call(op, (a, b), T.BOOLEAN)


def lit(v, t):
    return Literal(v, t)


def leaves() -> list:
    i, d, x, dt, s, b, lg, ts = (C[k] for k in ("i", "d", "x", "dt", "s", "b", "l", "ts"))
    return [
        cmp("ge", dt, lit(8766, T.DATE)),
        cmp("lt", dt, lit(9131, T.DATE)),
        cmp("ge", d, lit(5, T.DECIMAL(3, 2))),
        cmp("lt", d, lit(24, T.INTEGER)),
        cmp("lt", d, lit(2455, T.DECIMAL(5, 3))),
        cmp("eq", d, lit(2450, T.DECIMAL(5, 3))),
        cmp("ne", d, lit(2455, T.DECIMAL(5, 3))),
        cmp("gt", lit(3, T.INTEGER), i),
        cmp("le", i, lg),
        cmp("eq", i, i),
        cmp("gt", x, lit(0.5, T.DOUBLE)),
        cmp("eq", x, lit(float("nan"), T.DOUBLE)),
        cmp("lt", x, lit(float("nan"), T.DOUBLE)),
        cmp("ge", x, x),
        cmp("eq", x, lit(-0.0, T.DOUBLE)),
        cmp("lt", ts, lit(5 * 10**11, T.TIMESTAMP)),
        Call("in_list", (i, lit(1, T.INTEGER), lit(2, T.INTEGER), lit(40, T.INTEGER)), T.BOOLEAN),
        Call("in_list", (s, lit("AIR", T.VARCHAR), lit("AIR REG", T.VARCHAR)), T.BOOLEAN),
        cmp("eq", s, lit("SHIP", T.VARCHAR)),
        cmp("lt", lit("MAIL", T.VARCHAR), s),
        Call("like", (s,), T.BOOLEAN, ("%R%", None, False)),
        Call("like", (s,), T.BOOLEAN, ("a%", None, True)),
        Call("is_null", (i,), T.BOOLEAN),
        Call("is_null", (x,), T.BOOLEAN),
        b,
        lit(True, T.BOOLEAN),
        lit(None, T.BOOLEAN),
    ]


def random_trees(count: int, seed: int = 7) -> list:
    rng = random.Random(seed)
    base = leaves()

    def tree(depth):
        if depth == 0 or rng.random() < 0.3:
            return rng.choice(base)
        r = rng.random()
        if r < 0.2:
            return Call("not", (tree(depth - 1),), T.BOOLEAN)
        return Call("and" if r < 0.6 else "or", (tree(depth - 1), tree(depth - 1)), T.BOOLEAN)

    return base + [tree(3) for _ in range(count)]
