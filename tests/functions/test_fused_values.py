"""Arithmetic trees as one generated kernel (glint.functions.fused_values):
the kernel's values and NULLs equal the node-by-node evaluator's for random
trees of + - * and the binder's casts over INTEGER, BIGINT and DECIMAL
columns with and without NULLs; where any row might overflow the kernel
hands the chunk back, and the evaluator's error or 128-bit result stands.
The kernel runs under TRITON_INTERPRET=1 (tests/kernels/triton_interpreted.py)
and on CUDA; through SQL both settings equal DuckDB."""

from __future__ import annotations

import random
from decimal import Decimal

import pyarrow as pa
import pytest
import torch

import glint
from glint.columnar import types as T
from glint.columnar.column import Batch, Column
from glint.errors import ExecutionError
from glint.functions import fused_predicate as FP
from glint.functions import fused_values as FV
from glint.functions.evaluate import FUSED_ARITHMETIC, evaluate
from glint.plan import typing as ty
from glint.plan.expr import Call, ColRef, Field, Literal

N = 2000
F = {
    "i": Field(1, "i", T.INTEGER),
    "d": Field(2, "d", T.DECIMAL(15, 2)),
    "l": Field(3, "l", T.BIGINT),
    "e": Field(4, "e", T.DECIMAL(18, 2)),
    "q": Field(5, "q", T.DECIMAL(4, 3)),
}
C = {k: ColRef(f) for k, f in F.items()}


def batch(device, seed: int = 1, nulls: bool = True, big: int = 10**12) -> Batch:
    g = torch.Generator().manual_seed(seed)

    def valid():
        return (torch.rand(N, generator=g) > 0.2) if nulls else None

    cols = {
        1: Column(T.INTEGER, torch.randint(-3000, 3000, (N,), generator=g, dtype=torch.int32), valid()),
        2: Column(T.DECIMAL(15, 2), torch.randint(-(10**7), 10**7, (N,), generator=g), valid()),
        3: Column(T.BIGINT, torch.randint(-(2**30), 2**30, (N,), generator=g), None),
        4: Column(T.DECIMAL(18, 2), torch.randint(-big, big, (N,), generator=g), valid()),
        5: Column(T.DECIMAL(4, 3), torch.randint(-9999, 9999, (N,), generator=g), None),
    }
    return Batch({k: c.to(device) for k, c in cols.items()}, N)


def random_trees(count: int, seed: int = 5) -> list:
    """Arithmetic trees typed by the binder's rules (glint.plan.typing.arith):
    nested + - * over the columns and constants, with the casts it inserts."""
    rng = random.Random(seed)
    constants = [Literal(7, T.INTEGER), Literal(100, T.DECIMAL(3, 2)), Literal(-25, T.DECIMAL(4, 1))]

    def leaf():
        return rng.choice([*C.values(), *C.values(), *constants])

    def tree(depth):
        if depth == 0:
            return leaf()
        a = tree(depth - 1) if rng.random() < 0.7 else leaf()
        b = tree(depth - 1) if rng.random() < 0.4 else leaf()
        return ty.arith(rng.choice(["add", "sub", "mul"]), a, b)

    out = []
    while len(out) < count:
        e = tree(rng.randint(2, 3))
        if FV.arithmetic(e):
            out.append(e)
    return out


def _same(got: Column, want: Column) -> bool:
    if got.dtype != want.dtype or (got.valid is None) != (want.valid is None) or want.is_wide:
        return False
    if want.valid is None:
        return torch.equal(got.data, want.data)
    return torch.equal(got.valid, want.valid) and torch.equal(got.data[want.valid], want.data[want.valid])


def check_values(device, count: int = 150) -> None:
    """``count`` random trees: where the kernel answers, its column is the
    evaluator's; where it hands back, the evaluator widens or raises. Most
    trees must compile and most must be answered."""
    compiled = answered = raised = 0
    for nulls, big in ((True, 10**12), (False, 10**12), (True, 6 * 10**17)):
        b = batch(device, seed=3, nulls=nulls, big=big)
        for e in random_trees(count):
            try:
                want = evaluate(e, b)
            except ExecutionError:
                want = None
                raised += 1
            compiled += FV.lower(e, b) is not None
            got = FV.fused_value(e, b)
            if got is None:
                continue
            answered += 1
            assert want is not None and _same(got, want), e
    # (the 18-digit values overflow in many trees: each of those was handed back)
    assert compiled > count and answered > count // 2 and raised > count // 10, (compiled, answered, raised)
    # a sum past 18 digits that stays within 64 bits: only the 18-digit test sees it
    e = ty.arith("add", ty.arith("add", C["e"], C["e"]), C["e"])
    b = batch(device, seed=4, nulls=True, big=6 * 10**17)
    with pytest.raises(ExecutionError, match="Overflow in addition"):
        evaluate(e, b)
    assert FV.lower(e, b) is not None and FV.fused_value(e, b) is None


def test_lowering_compiles_the_binders_trees_and_refuses_the_rest():
    b = batch("cpu")
    price, disc, tax = C["d"], C["q"], C["d"]
    one = Literal(100, T.DECIMAL(3, 2))
    charge = ty.arith("mul", ty.arith("mul", price, ty.arith("sub", one, disc)), ty.arith("add", one, tax))
    assert FV.arithmetic(charge) and FV.lower(charge, b) is not None
    assert not FV.arithmetic(ty.arith("mul", price, disc))  # one operator: node by node (not measured as a kernel yet)
    refused = [
        ty.arith("add", ty.arith("add", C["d"], Literal(1.5, T.DOUBLE)), C["d"]),  # DOUBLE
        ty.arith("mul", ty.arith("mul", Call("cast", (C["l"],), T.INTEGER), C["i"]), C["i"]),  # a narrowing cast
        ty.arith("add", ty.arith("add", C["l"], Literal(10**30, T.DECIMAL(38, 0))), C["l"]),
    ]
    for e in refused:
        assert FV.lower(e, b) is None, e


def test_an_overflow_is_left_to_the_evaluator(monkeypatch):
    """Rows past 18 digits: the kernel hands back (not an answer) and the
    evaluator raises DuckDB's error, with or without the kernel; the evaluator
    asks for the kernel only on a GPU while the setting is on."""
    b = batch("cpu", big=6 * 10**17)
    e = ty.arith("add", ty.arith("add", C["e"], C["e"]), C["e"])  # DECIMAL(18, 2) sums past 18 digits
    with pytest.raises(ExecutionError, match="Overflow in addition"):
        evaluate(e, b)
    seen = []
    monkeypatch.setattr(FV, "fused_value", lambda e, b: seen.append(e))
    monkeypatch.setattr(FV, "triton_enabled", lambda: True)
    cuda = Batch(b.columns, b.num_rows, torch.device("cuda"))  # (only the device's type is read)
    token = FUSED_ARITHMETIC.set(FV.fused_if_worth)
    try:
        with pytest.raises(ExecutionError, match="Overflow in addition"):
            evaluate(e, cuda)
        with pytest.raises(ExecutionError, match="Overflow in addition"):
            evaluate(e, b)  # (the CPU: not asked)
    finally:
        FUSED_ARITHMETIC.reset(token)
    assert seen == [e]  # (its inner sum, a single operator, is not worth a kernel)
    with pytest.raises(ExecutionError, match="Overflow in addition"):
        evaluate(e, cuda)  # (the setting off: not asked)
    assert seen == [e]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_fused_values_equal_the_evaluators_on_cuda():
    check_values("cuda")


def test_sql_with_and_without_the_kernel_equals_duckdb(device):
    """TPC-H Q1's arithmetic and mixed scales, NULLs, INTEGER products and an
    overflow through SQL on the test run's device (on CUDA the kernel runs)."""
    rows = 5000

    def dec(values, precision):
        return pa.array([None if v is None else Decimal(v).scaleb(-2) for v in values], pa.decimal128(precision, 2))

    t = pa.table(
        {
            "i": pa.array([None if k % 11 == 0 else k % 97 - 40 for k in range(rows)], pa.int32()),
            "price": dec([None if k % 13 == 0 else (k * 7919) % 10**6 for k in range(rows)], 15),
            "disc": dec([k % 11 for k in range(rows)], 15),
            "big": dec([9 * 10**17 + k for k in range(rows)], 18),
        }
    )
    duckdb = pytest.importorskip("duckdb")
    duck = duckdb.connect()
    duck.register("t", t)
    queries = [
        "SELECT sum(price * (1 - disc)), sum(price * (1 - disc) * (1 + disc)), avg(price * (1 - disc)) FROM t",
        "SELECT i % 5 AS k, sum(i * 3 + i * i), sum(price * 2 - disc * i) FROM t GROUP BY k ORDER BY k",
        "SELECT i * 1000 + i AS x, price * (1 - disc) + 0.5 AS y FROM t ORDER BY x NULLS FIRST, y NULLS FIRST",
    ]
    expected = [duck.sql(q).fetchall() for q in queries]
    overflow = "SELECT sum(big + big + big) FROM t"
    with pytest.raises(duckdb.Error, match="Overflow"):
        duck.sql(overflow).fetchall()
    for fused in (True, False):
        con = glint.connect(device=device, fused_expressions=fused)
        con.register("t", t)
        assert [con.sql(q).fetchall() for q in queries] == expected, fused
        with pytest.raises(glint.GlintError, match="Overflow"):
            con.sql(overflow).fetchall()
        con.close()


def test_a_kernel_that_fails_to_build_turns_the_path_off(monkeypatch, caplog):
    """A Triton that cannot compile the generated source: logged once, the
    evaluator answers from then on (the same values)."""
    monkeypatch.setattr(FV, "_BROKEN", [])

    def broken(source, name="values"):
        raise RuntimeError("no compiler here")

    monkeypatch.setattr(FP, "load_kernel", broken)
    b = batch("cpu")
    e = ty.arith("mul", ty.arith("sub", C["d"], C["q"]), C["d"])  # (columns only: no constant on "cuda")
    assert FV.fused_value(e, b) is None
    assert "no compiler here" in FV._BROKEN[0] and "fused expression kernels are off" in caplog.text
    assert FV.fused_value(e, b) is None  # (and not tried again)
    monkeypatch.setattr(FV, "triton_enabled", lambda: True)
    cuda = Batch(b.columns, b.num_rows, torch.device("cuda"))  # (only the device's type is read)
    token = FUSED_ARITHMETIC.set(FV.fused_if_worth)
    try:
        got = evaluate(e, cuda)  # the evaluator's own answer
    finally:
        FUSED_ARITHMETIC.reset(token)
    want = evaluate(e, b)
    assert want.valid is not None and _same(got, want)
