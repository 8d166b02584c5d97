"""Results over a whole dictionary remembered on it (Dictionary.memo,
glint.kernels.strings.columns.per_entry): every chunk that uses the
dictionary again gets the same answers as computing them afresh, NULL rows
and rows working per row included, and different tests never share a
result."""

from __future__ import annotations

import pyarrow as pa
import torch

from glint.columnar.column import Column
from glint.functions.strings import core
from glint.functions.strings.like import like
from glint.kernels.strings import columns as K

WORDS = ["SM CASE", "SM BOX", "LG PACK", "MED BAG", "", "SM PKG", "JUMBO JAR", "SM CASE "]


def _column(n: int, seed: int) -> Column:
    gen = torch.Generator().manual_seed(seed)
    codes = torch.randint(0, len(WORDS), (n,), generator=gen).tolist()
    nulls = (torch.rand(n, generator=gen) < 0.2).tolist()
    return Column.from_arrow(pa.array([None if z else WORDS[c] for c, z in zip(codes, nulls)]))


def _fresh(col: Column) -> Column:
    """The same rows on a copy of the dictionary (no memo)."""
    return col.compact(force=True)


def _chunks(col: Column, rows: int, seed: int) -> list[Column]:
    gen = torch.Generator().manual_seed(seed)
    return [col.take(torch.randint(0, len(col), (rows,), generator=gen)) for _ in range(4)]


def _tests(c: Column) -> list[list]:
    return [
        core.compare_literal("eq", c, "SM CASE").to_arrow().to_pylist(),
        core.compare_literal("ne", c, "SM CASE").to_arrow().to_pylist(),
        core.compare_literal("lt", c, "MED").to_arrow().to_pylist(),
        core.compare_literal("eq", c, "SM BOX").to_arrow().to_pylist(),
        [
            v if ok else None
            for v, ok in zip(core.in_literals(c, ["SM CASE", "SM PKG"]).tolist(), c.validity().tolist())
        ],
        core.starts_with(c, "SM").to_arrow().to_pylist(),
        core.contains(c, "A").to_arrow().to_pylist(),
        core.length(c).to_arrow().to_pylist(),
        like(c, "%A_E%").to_arrow().to_pylist(),
        [v if ok else None for v, ok in zip(core.hash64(c).tolist(), c.validity().tolist())],
    ]


def test_chunks_sharing_a_dictionary_get_fresh_answers():
    build = _column(300, 1)  # a build side held once: its dictionary is per row (300 entries)
    for rows in (40, 600):  # chunks of pairs fewer than the entries (per row), then more
        for chunk in _chunks(build, rows, rows):
            assert _tests(chunk) == _tests(_fresh(chunk))
    memo = build.dictionary.memo
    keys = [k for k in memo if k != "asked"]
    assert ("compare", "eq", b"SM CASE") in keys and ("compare", "eq", b"SM BOX") in keys and ("hash64",) in keys
    assert all(v.shape[0] == len(build.dictionary) for k, v in memo.items() if k != "asked")


def test_memo_is_bounded_and_skips_large_dictionaries(monkeypatch):
    c = _column(500, 2)
    for i in range(K.MEMO_KEYS + 10):
        core.compare_literal("eq", c, f"w{i}")
    assert len([k for k in c.dictionary.memo if k != "asked"]) <= K.MEMO_KEYS
    monkeypatch.setattr(K, "MEMO_MAX_ENTRIES", 10)
    d = _column(50, 3)
    want = _tests(_fresh(d))
    assert _tests(d) == want and d.dictionary.memo is None
