"""Columns held on the device as a table's source (glint.io.held): chunks of
any size read back the rows in order, fragments' bounds are exact with NULLs,
and a table that does not fit is refused."""

from __future__ import annotations

import pyarrow as pa
import pytest
import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.io.held import hold
from glint.io.table import Table
from glint.runtime.memory import MemoryManager

N = 5000


def _columns():
    g = torch.Generator().manual_seed(3)
    k = torch.randint(-(10**12), 10**12, (N,), generator=g)
    valid = torch.rand(N, generator=g) > 0.1
    day = torch.randint(0, 20000, (N,), generator=g, dtype=torch.int32)
    many = pa.array([f"s{i}-{'x' * (i % 7)}" if i % 5 else None for i in range(N)])
    few = pa.array([["b", "a", None, "c"][i % 4] for i in range(N)]).dictionary_encode()
    return {
        "k": Column(T.BIGINT, k, valid),
        "d": Column(T.DATE, day),
        "m": Column(T.DECIMAL(15, 2), k % 10**9),
        "x": Column(T.DOUBLE, torch.rand(N, generator=g, dtype=torch.float64)),
        "many": Column.from_arrow(many, T.VARCHAR),
        "few": Column.from_arrow(few, T.VARCHAR),
    }


TYPES = {"k": T.BIGINT, "d": T.DATE, "m": T.DECIMAL(15, 2), "x": T.DOUBLE, "many": T.VARCHAR, "few": T.VARCHAR}


@pytest.mark.parametrize("piece_rows", [1000, 1 << 20])
@pytest.mark.parametrize("chunk_rows", [700, 1000, 4096])
def test_chunks_of_any_size_read_the_rows_back(piece_rows, chunk_rows):
    cols = _columns()
    expected = pa.table({n: c.to_arrow() for n, c in cols.items()})
    src = hold(cols, TYPES, N, piece_rows, MemoryManager("cpu", 1 << 30))
    t = Table("t", src, types=TYPES)
    got = []
    for chunk in t.chunks(chunk_rows):
        part = src.columns(chunk.pieces, list(TYPES))
        assert all(len(c) == chunk.rows for c in part.values())
        got.append(pa.table({n: c.to_arrow() for n, c in part.items()}))
    assert pa.concat_tables(got).equals(expected)
    assert t.to_arrow().column("many").to_pylist() == expected.column("many").to_pylist()


@pytest.mark.parametrize("piece_rows", [250, 1000])
def test_a_chunk_read_in_part_reads_its_pieces_rows(piece_rows):
    """A chunk some of whose fragments statistics ruled out (pieces with gaps
    between them) reads exactly its pieces' rows, in order."""
    cols = _columns()
    expected = pa.table({n: c.to_arrow() for n, c in cols.items()})
    src = hold(cols, TYPES, N, piece_rows, MemoryManager("cpu", 1 << 30))
    t = Table("t", src, types=TYPES)
    (whole,) = t.chunks(N)
    for keep in ([0, 2, 3], [1], [0, 4], [3, 4], [0, 1, 4]):
        pieces = [whole.pieces[i] for i in sorted(set(keep))]
        part = src.columns(pieces, list(TYPES))
        want = pa.concat_tables([expected.slice(src._frag_starts[f] + s, e - s) for f, s, e in pieces])
        assert all(len(c) == want.num_rows for c in part.values())
        assert pa.table({n: c.to_arrow() for n, c in part.items()}).equals(want)


def test_fragment_bounds_are_exact():
    cols = _columns()
    src = hold(cols, TYPES, N, 1000, MemoryManager("cpu", 1 << 30))
    start = 0
    for f in src.fragments:
        k = cols["k"].data[start : start + f.rows]
        v = cols["k"].valid[start : start + f.rows]
        assert f.stats["k"] == (int(k[v].min()), int(k[v].max()), int((~v).sum()))
        assert f.stats["m"][:2] == (
            int(cols["m"].data[start : start + f.rows].min()),
            int(cols["m"].data[start : start + f.rows].max()),
        )
        assert "x" not in f.stats and "many" not in f.stats  # no bounds for doubles and strings
        start += f.rows
    t = Table("t", src, types=TYPES)
    s = t.stats("d")
    assert (s.min, s.max) == (float(cols["d"].data.min()), float(cols["d"].data.max()))


def test_few_distinct_strings_share_one_sorted_dictionary():
    src = hold(_columns(), TYPES, N, 1000, MemoryManager("cpu", 1 << 30))
    a = src.columns([(0, 0, 10)], ["few"])["few"].dictionary
    b = src.columns([(4, 0, 10)], ["few"])["few"].dictionary
    assert a is b and a.sorted_unique and a.to_pylist()[:3] == ["a", "b", "c"]


def test_a_table_that_does_not_fit_is_refused():
    mm = MemoryManager("cpu", 64 << 10)
    assert hold(_columns(), TYPES, N, 1000, mm) is None
    assert mm.reserved() == 0


def test_the_memory_is_given_back_with_the_table():
    import gc

    mm = MemoryManager("cpu", 1 << 30)
    t = Table("t", hold(_columns(), TYPES, N, 1000, mm), types=TYPES)
    assert mm.reserved() > 0
    del t
    gc.collect()
    assert mm.reserved() == 0
