"""glint.functions.fused_predicate: which predicates compile into one kernel,
and, on CUDA, that the kernel's rows are the node-by-node evaluator's for
every leaf and for random trees over them, with NULLs, NaN and -0.0. (Under
TRITON_INTERPRET=1 the same cases run on the CPU:
tests/kernels/triton_interpreted.py.)"""

from __future__ import annotations

import pyarrow as pa
import pytest
import torch

import glint
from glint.columnar import types as T
from glint.columnar.column import Dictionary
from glint.functions import fused_predicate as FP
from glint.functions.evaluate import evaluate
from glint.functions.validity import predicate_mask
from glint.plan.expr import Call, Literal
from tests.functions.fused_cases import STRINGS, C, batch, cmp, leaves, lit, random_trees


def check_trees(device, count: int = 120) -> None:
    """Every leaf and ``count`` random trees: the fused rows against the reference's."""
    for nulls in (True, False):
        b = batch(device, seed=3, nulls=nulls)
        for p in random_trees(count):
            got = FP.fused_mask(p, b)
            assert got is not None, p
            want = predicate_mask(evaluate(p, b))
            assert torch.equal(got, want), (p, int(got.sum()), int(want.sum()))


def test_every_leaf_kind_compiles():
    b = batch("cpu")
    for p in leaves():
        assert FP.lower(p, b) is not None, p


def test_what_does_not_compile_falls_back():
    b = batch("cpu")
    d, x, dt, ts = C["d"], C["x"], C["dt"], C["ts"]
    add = Call("add", (C["i"], lit(1, T.INTEGER)), T.INTEGER)
    for p in [
        cmp("lt", add, lit(3, T.INTEGER)),  # arithmetic
        cmp("eq", dt, ts),  # DATE against TIMESTAMP
        cmp("lt", d, Literal(10**30, T.DECIMAL(38, 0))),  # a constant beyond 64 bits
        cmp("lt", x, lit(1, T.INTEGER)),  # a DOUBLE against an INTEGER (the binder casts)
        cmp("eq", C["s"], C["s"]),  # two string columns
    ]:
        assert FP.lower(p, b) is None, p


def test_one_kernel_source_serves_every_constant():
    b = batch("cpu")
    one = FP.lower(cmp("lt", C["d"], lit(24, T.INTEGER)), b)
    two = FP.lower(cmp("lt", C["d"], lit(7, T.INTEGER)), b)
    assert one[0] == two[0] and one[1].params == [2400] and two[1].params == [700]


def check_later_chunks(device, count: int = 40) -> None:
    """A predicate lowered for one chunk serves the next chunks of the same
    shape from the cache (their own columns, dictionaries and NULLs), and a
    chunk of another shape (NULLs or not) gets its own kernel: the rows
    equal the reference's on every chunk."""
    cache = FP._LOWERED
    for p in random_trees(count):
        for seed, nulls in ((5, True), (6, True), (7, False), (8, True)):
            b = batch(device, seed=seed, nulls=nulls)
            if seed in (6, 8):  # (seed 5 lowered it for chunks with NULLs)
                assert cache.get(p, cache.key(p, b)) is not None, (p, seed)
            got = FP.fused_mask(p, b)
            assert got is not None, p
            assert torch.equal(got, predicate_mask(evaluate(p, b))), (p, seed)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_fused_rows_equal_the_evaluators_on_cuda():
    check_trees("cuda")
    check_later_chunks("cuda")


def test_a_cached_lowering_finds_a_later_chunks_arguments():
    """The recipe of a lowering, applied to another chunk of the same shape,
    gives the arguments a fresh lowering of that chunk would (the same
    tensors; a string test's results per dictionary entry equal), and its
    source is the same: the cache needs no new walk."""
    first, later = batch("cpu", seed=11), batch("cpu", seed=12)
    later.columns[5].dictionary = Dictionary.from_pylist(list(reversed(STRINGS)))
    for p in leaves() + random_trees(60):
        a = FP.lower(p, first)
        fresh = FP.lower(p, later)
        assert a is not None and fresh is not None, p
        assert a[0] == fresh[0] and a[1].params == fresh[1].params, p
        found = [FP.resolve(r, later) for r in a[1].recipe]
        assert len(found) == len(fresh[1].tensors), p
        for x, y in zip(found, fresh[1].tensors):
            assert x.dtype == y.dtype and (x is y or torch.equal(x, y)), p  # (a column's own tensor: NaN)


def test_the_lowering_cache_keys_by_expression_and_shape():
    cache = FP.LoweringCache(size=2)
    p, q = cmp("lt", C["d"], lit(24, T.INTEGER)), cmp("lt", C["d"], lit(24, T.INTEGER))
    nulls, none = batch("cpu", nulls=True), batch("cpu", nulls=False)
    cache.put(p, cache.key(p, nulls), "entry")
    assert cache.get(p, cache.key(p, nulls)) == "entry"
    assert cache.get(p, cache.key(p, none)) is None  # (no NULLs: another kernel)
    assert cache.get(q, cache.key(q, nulls)) is None  # (an equal tree, another object)
    cache.put(q, cache.key(q, nulls), "q")
    cache.put(p, cache.key(p, none), "p without NULLs")
    assert cache.get(p, cache.key(p, nulls)) is None  # (bounded: the oldest went)


def test_a_string_tests_results_are_kept_on_its_dictionary():
    b = batch("cpu")
    p = Call("in_list", (C["s"], lit("AIR", T.VARCHAR), lit("ß", T.VARCHAR)), T.BOOLEAN)
    d = b.columns[5].dictionary
    lut = FP.string_lut(p, 5, b.columns[5])
    assert lut.tolist() == [1 if s in ("AIR", "ß") else 0 for s in STRINGS]
    assert FP.string_lut(p, 5, b.columns[5]) is lut and d.memo[(FP._LUT_MEMO, p)] is lut


def test_filters_with_and_without_the_kernel_agree(device):
    """Through SQL on the test run's device (on CUDA the kernel runs; on the CPU
    both settings take the node-by-node path)."""
    rows = 5000
    t = pa.table(
        {
            "i": pa.array([None if k % 11 == 0 else k % 97 - 40 for k in range(rows)], pa.int32()),
            "x": pa.array([float("nan") if k % 13 == 0 else (k % 50) / 7 - 3 for k in range(rows)]),
            "s": pa.array([["AIR", "MAIL", None, "SHIP"][k % 4] for k in range(rows)]),
            "d": pa.array([k % 31 for k in range(rows)], pa.int64()),
        }
    )
    queries = [
        "SELECT count(*), sum(i) FROM t WHERE i > 3 AND (x < 1.5 OR s IN ('AIR', 'SHIP'))",
        "SELECT count(*) FROM t WHERE NOT (s = 'MAIL') OR i IS NULL",
        "SELECT count(*) FROM t WHERE x = 'NaN'::DOUBLE OR s LIKE '%I%'",
        "SELECT count(*) FROM t WHERE i BETWEEN -5 AND 5 AND CAST(d AS DECIMAL(10, 2)) < 7.5",
    ]
    duckdb = pytest.importorskip("duckdb")
    duck = duckdb.connect()
    duck.register("t", t)
    expected = [duck.sql(q).fetchall() for q in queries]
    for fused in (True, False):
        con = glint.connect(device=device, fused_filters=fused)
        con.register("t", t)
        assert [con.sql(q).fetchall() for q in queries] == expected, fused
        con.close()


def test_a_kernel_that_fails_to_build_turns_the_path_off(monkeypatch, caplog):
    monkeypatch.setattr(FP, "_BROKEN", [])

    def broken(source, name="predicate"):
        raise RuntimeError("no compiler here")

    monkeypatch.setattr(FP, "load_kernel", broken)
    b = batch("cpu")
    p = cmp("lt", C["d"], lit(24, T.INTEGER))
    assert FP.fused_mask(p, b) is None
    assert "no compiler here" in FP._BROKEN[0] and "fused filter kernels are off" in caplog.text
    assert FP.fused_mask(p, b) is None  # (and not tried again)
