"""The VARCHAR layout (glint.columnar.column): Arrow-layout dictionaries as
tensors, loading without sorting, gathering only codes, compaction, moves,
concatenation, and the per-row keys built on it (hash64, equality keys,
order ranks) across dictionaries and chunks."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import torch

import glint
from glint.columnar import types as T
from glint.columnar.column import Column, Dictionary, concat_columns
from glint.functions.strings import core as S
from glint.functions.strings.like import like
from glint.io.table import Table
from glint.kernels.strings import columns as K
from tests.functions.test_functions_strings import assert_valid_dictionary
from tests.kernels.test_string_kernels import random_strings

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def rows(c: Column) -> list:
    return c.to_arrow().to_pylist()


# ---------------------------------------------------------------- from Arrow
def test_plain_array_is_its_own_dictionary():
    arr = pa.array(["b", None, "a", "b"])
    c = Column.from_arrow(arr)
    assert c.data.tolist() == [0, 1, 2, 3] and not c.dictionary.sorted_unique
    assert c.valid.tolist() == [True, False, True, True]
    assert rows(c) == ["b", None, "a", "b"]
    assert_valid_dictionary(c)


def test_plain_array_is_zero_copy():
    arr = pa.array(["hello", "world"] * 1000)
    c = Column.from_arrow(arr)
    assert c.dictionary.data.data_ptr() == arr.buffers()[2].address
    assert c.dictionary.offsets.data_ptr() == arr.buffers()[1].address


@pytest.mark.parametrize("typ", [pa.string(), pa.large_string(), pa.string_view()])
def test_sliced_and_typed_arrays(typ, device):
    values = random_strings(3, n=300)
    values = [None if i % 7 == 3 else v for i, v in enumerate(values)]
    arr = pa.array(values, typ).slice(17, 200)
    c = Column.from_arrow(arr).to(device)
    assert rows(c) == values[17:217]
    assert_valid_dictionary(c)
    chunked = pa.chunked_array([pa.array(values[:50], typ).slice(5), pa.array(values[50:], typ).slice(0, 40)])
    c = Column.from_arrow(chunked).to(device)
    assert rows(c) == values[5:50] + values[50:90]
    assert_valid_dictionary(c)


def test_dictionary_arrays_keep_their_indices_and_order(device):
    d1 = pa.array(["zeta", "alpha", "mid"])
    d2 = pa.array(["mid", "beta"])
    chunks = [
        pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 2, 1], pa.int32()), d1),
        pa.DictionaryArray.from_arrays(pa.array([1, 0, 0], pa.int32()), d2),
        pa.DictionaryArray.from_arrays(pa.array([2, 2], pa.int32()), d1),
    ]  # same dictionary again
    c = Column.from_arrow(pa.chunked_array(chunks)).to(device)
    assert rows(c) == ["zeta", "alpha", None, "mid", "alpha", "beta", "mid", "mid", "mid", "mid"]
    # the chunks' dictionaries merged by Arrow (each distinct entry once, first-seen order, unsorted)
    assert c.dictionary.to_pylist() == ["zeta", "alpha", "mid", "beta"]
    assert c.data[:2].tolist() == [0, 1] and c.data[5:7].tolist() == [3, 2]
    assert_valid_dictionary(c)


def test_dictionary_arrays_with_null_entries_and_garbage_null_indices():
    values = pa.array(["a", None, "c"])
    indices = pa.Array.from_buffers(
        pa.int32(),
        4,
        [
            pa.array([True, True, False, True]).buffers()[1],
            pa.py_buffer(np.array([0, 1, 12345, 2], np.int32).tobytes()),
        ],
    )
    c = Column.from_arrow(pa.DictionaryArray.from_arrays(indices, values))
    assert rows(c) == ["a", None, None, "c"]
    assert_valid_dictionary(c)


def test_all_null_and_empty_columns_keep_a_valid_code():
    for arr in (
        pa.array([None, None], pa.string()),
        pa.array([], pa.string()),
        pa.DictionaryArray.from_arrays(pa.array([None, None], pa.int32()), pa.array([], pa.string())),
    ):
        c = Column.from_arrow(arr)
        assert rows(c) == arr.to_pylist() if not pa.types.is_dictionary(arr.type) else [None, None]
        assert_valid_dictionary(c)


class _NoSorting:
    """Fails the test if anything sorts, de-duplicates or hashes while loading."""

    def __init__(self, monkeypatch):
        def boom(*a, **k):
            raise AssertionError("a sort / unique / dictionary_encode ran while loading strings")

        for name in ("sort", "argsort", "unique", "unique_consecutive"):
            monkeypatch.setattr(torch, name, boom)
        for name in ("sort_indices", "unique", "dictionary_encode", "array_sort_indices"):
            monkeypatch.setattr(pc, name, boom)
        monkeypatch.setattr(np, "searchsorted", boom)
        monkeypatch.setattr(np, "argsort", boom)


def test_loading_parquet_strings_does_not_sort(tmp_path, monkeypatch):
    """Parquet string columns as the loaders read them (Arrow dictionary
    arrays, one dictionary per row group, or plain strings) become columns
    without any sort, unique or hash table."""
    rng = random.Random(0)
    comments = [
        " ".join(rng.choice(["special", "requests", "pending", "foxes", "ironic"]) for _ in range(6))
        for _ in range(20000)
    ]
    modes = [rng.choice(["AIR", "RAIL", "SHIP", "MAIL"]) for _ in range(20000)]
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"c": comments, "m": modes}), path, row_group_size=3000)
    encoded = pq.read_table(path, read_dictionary=["c", "m"])
    plain = pq.read_table(path)
    assert pa.types.is_dictionary(encoded.column("m").type) and encoded.column("m").num_chunks > 1
    _NoSorting(monkeypatch)
    cols = {
        (name, kind): Column.from_arrow(t.column(name), T.VARCHAR)
        for kind, t in (("dict", encoded), ("plain", plain))
        for name in ("c", "m")
    }
    monkeypatch.undo()
    for (name, _), c in cols.items():
        assert rows(c) == (comments if name == "c" else modes)
        assert_valid_dictionary(c)
    assert len(cols["m", "dict"].dictionary) <= 4 * 7  # one small dictionary per row group, kept as they are
    assert torch.equal(cols["c", "plain"].data, torch.arange(20000, dtype=torch.int32))


def test_loading_time_is_linear():
    """A million distinct strings load in about the time of touching their
    bytes (no sort, no hash table)."""
    import time

    arr = pa.array([f"comment number {i:09d} with some text" for i in range(1_000_000)][::-1])
    t = time.perf_counter()
    c = Column.from_arrow(arr)
    assert time.perf_counter() - t < 0.5 and len(c.dictionary) == 1_000_000


# ------------------------------------------------------------- the Column API
def test_take_and_filter_gather_codes_only():
    c = Column.from_arrow(pa.array(["x", "y", "z"]))
    t = c.take(torch.tensor([2, 2, 0]))
    assert t.dictionary is c.dictionary and t.data.tolist() == [2, 2, 0]
    f = c.filter(torch.tensor([False, True, True]))
    assert f.dictionary is c.dictionary and rows(f) == ["y", "z"]


def test_compact(device):
    values = random_strings(4, n=500)
    c = Column.from_arrow(pa.array(values)).to(device)
    few = c.take(torch.tensor([400, 3, 3, 77, 400], device=device))
    valid = torch.tensor([True, False, True, True, True], device=device)
    few = Column(T.VARCHAR, few.data, valid, few.dictionary)
    k = few.compact()
    # the entries the rows use, in the old order, after one empty entry for the NULL rows;
    # rows that shared a code share one (the two rows of entry 400)
    assert len(k.dictionary) == 4 and k.data.tolist() == [3, 0, 1, 2, 3]
    assert rows(k) == [values[400], None, values[3], values[77], values[400]]
    assert k.dictionary.data.shape[0] == sum(len(values[i].encode()) for i in (400, 3, 77))
    no_nulls = Column(T.VARCHAR, few.data, None, few.dictionary).compact()
    assert len(no_nulls.dictionary) == 3 and no_nulls.data.tolist() == [2, 0, 0, 1, 2]
    assert k.nbytes() < few.nbytes()
    assert c.compact() is c  # nothing to gain
    assert_valid_dictionary(k)


def test_nbytes_counts_every_tensor():
    c = Column.from_arrow(pa.array(["ab", None, "cde"]))
    assert c.nbytes() == 3 * 4 + 3 + 4 * 4 + 5


def test_dictionary_tensors_round_trip(device):
    """Spilling moves a dictionary's tensors elsewhere and rebuilds it from them."""
    c = Column.from_arrow(pa.array(["héllo", "", "x" * 100, None])).to(device)
    d = c.dictionary
    back = Dictionary(d.offsets.cpu().clone(), d.data.cpu().clone(), d.sorted_unique).to(device)
    assert rows(Column(c.dtype, c.data, c.valid, back)) == rows(c)


def test_to_moves_the_strings(device):
    arr = pa.array(["a", "bb", None, "ccc"] * 50).slice(3, 100)
    c = Column.from_arrow(arr).to(device)
    assert c.dictionary.data.device.type == torch.device(device).type
    assert c.dictionary.data.shape[0] <= arr.nbytes  # only the bytes the slice spans
    assert rows(c) == arr.to_pylist()


def test_large_offsets_are_kept_only_when_needed():
    c = Column.from_arrow(pa.array(["a", "b"], pa.large_string()))
    assert c.dictionary.offsets.dtype == torch.int32


def test_concat_columns_appends_dictionaries(device):
    a = Column.from_arrow(pa.array(["x", None, "y"])).to(device)
    b = Column.from_arrow(pa.array(["y", "z"])).to(device)
    c = concat_columns([a, b, a])
    assert rows(c) == ["x", None, "y", "y", "z", "x", None, "y"]
    assert len(c.dictionary) == 5  # a's entries once, then b's: nothing merged
    assert_valid_dictionary(c)


def test_nulls_column():
    c = Column.nulls(T.VARCHAR, 3, "cpu")
    assert rows(c) == [None] * 3
    assert_valid_dictionary(c)


# ------------------------------------------------------------- keys and ranks
def test_hash64_is_the_same_whatever_the_layout(device):
    values = random_strings(5, n=300)
    plain = Column.from_arrow(pa.array(values)).to(device)
    encoded = Column.from_arrow(
        pa.chunked_array([pa.array(values[:100]).dictionary_encode(), pa.array(values[100:]).dictionary_encode()])
    ).to(device)
    few = plain.take(torch.tensor([5, 250], device=device))  # per-row work: dictionary larger than rows
    h = K.hash64(plain)
    assert torch.equal(h, K.hash64(encoded))
    assert K.hash64(few).tolist() == h[[5, 250]].tolist()
    assert K.hash64(plain.to("cpu")).tolist() == h.tolist()


def test_hash64_of_nulls():
    c = Column.from_arrow(pa.array(["a", None]))
    assert K.hash64(c)[1].item() == K.NULL_HASH


def test_equality_keys_across_dictionaries(device):
    rng = random.Random(6)
    pool = random_strings(6, n=60)
    cols = [Column.from_arrow(pa.array([rng.choice(pool) for _ in range(n)])).to(device) for n in (5, 200, 40)]
    cols.append(cols[1].take(torch.tensor([3, 3, 9], device=device)))
    keys = K.equality_keys(cols)
    flat = [(v, k) for c, ks in zip(cols, keys) for v, k in zip(rows(c), ks.tolist())]
    by_value = {}
    for v, k in flat:
        assert by_value.setdefault(v, k) == k
    assert len(set(by_value.values())) == len(by_value)


def test_order_ranks_across_dictionaries(device):
    pool = random_strings(7, n=80)
    a = Column.from_arrow(pa.array(pool[:50])).to(device)
    b = Column.from_arrow(pa.array(pool[30:]).dictionary_encode()).to(device)
    ra, rb = K.order_ranks([a, b])
    pairs = sorted(zip(ra.tolist() + rb.tolist(), pool[:50] + pool[30:]))
    assert [p[1].encode() for p in pairs] == sorted(v.encode() for v in pool[:50] + pool[30:])


def test_sorted_unique_dictionary_uses_codes():
    d = Dictionary.from_pylist(["a", "b", "c"])
    assert d.sorted_unique
    c = Column(T.VARCHAR, torch.tensor([2, 0, 1], dtype=torch.int32), None, d)
    assert K.order_ranks([c])[0].tolist() == [2, 0, 1]
    assert not Dictionary.from_pylist(["b", "a"]).sorted_unique


def test_one_columns_order_ranks_are_remembered_on_its_dictionary(device):
    """ORDER BY one VARCHAR column: its entries' ranks are kept on the
    dictionary, and a later sort of the same or of a few rows of it gathers
    them; the ranks order the rows as their strings (NULL rows aside)."""
    values = random_strings(14, n=300)
    col = Column.from_arrow(pa.array(values, mask=[i % 17 == 0 for i in range(len(values))])).to(device)
    d = col.dictionary
    assert not d.sorted_unique
    first = K.order_ranks([col])[0]
    assert ("order_ranks",) in d.memo
    again = K.order_ranks([col])[0]
    assert torch.equal(first, again)
    few = col.take(torch.tensor([5, 250, 17, 3], device=device))  # a few rows of the large dictionary
    for c in (col, few, few):  # (a few rows take the remembered ranks too)
        r = K.order_ranks([c])[0].tolist()
        strings = c.to_arrow().to_pylist()
        kept = [(s.encode(), x) for s, x in zip(strings, r) if s is not None]
        assert [x for _, x in sorted(kept)] == sorted(x for _, x in kept)
        assert all((a < b) == (x < y) for a, x in kept for b, y in kept)


def test_a_large_sorted_dictionary_is_known_sorted():
    """A dictionary of TPC-H SF 10's supplier names (100,000 sorted entries, a
    Parquet dictionary page's values) is known sorted, so ORDER BY s_name
    orders by codes; one entry out of place, and it is not."""
    names = [f"Supplier#{i:09d}" for i in range(1, 100_001)]
    c = Column.from_arrow(pa.array(names).dictionary_encode())
    assert c.dictionary.sorted_unique and len(c.dictionary) == 100_000
    names[500], names[501] = names[501], names[500]
    assert not Column.from_arrow(pa.array(names).dictionary_encode()).dictionary.sorted_unique


def test_per_row_and_per_entry_work_agree(device):
    """A few rows of a large dictionary are worked on per row, a large column
    of a small dictionary per entry: the answers are the same."""
    values = random_strings(8, n=400)
    big = Column.from_arrow(pa.array(values)).to(device)
    idx = torch.tensor([0, 399, 17, 17, 250], device=device)
    few = big.take(idx)
    assert K.per_row(few) and not K.per_row(big)
    want = [values[i] for i in idx.tolist()]
    assert rows(S.upper(few)) == [
        v.upper() if v.isascii() else rows(S.upper(Column.from_arrow(pa.array([v]))))[0] for v in want
    ]
    assert rows(S.length(few)) == [len(v) for v in want]
    assert rows(like(few, "%special%")) == ["special" in v for v in want]
    assert rows(S.substring(few, 2, 3)) == [v[1:4] for v in want]


def test_ndv_statistics_count_strings_not_entries():
    t = Table.from_arrow("t", pa.table({"s": pa.array(["x", "y", "x", "x", None] * 100)}))
    assert t.stats("s").ndv == 2 and t.stats("s").null_count == 100


# ------------------------------------------------------------------- end to end
def test_queries_over_parquet_dictionaries(tmp_path, device):
    rng = random.Random(1)
    n = 5000
    s = [rng.choice(["b", "a", "c", "ab", "é", ""]) + rng.choice(["", "x", "special requests"]) for _ in range(n)]
    pq.write_table(pa.table({"s": s, "i": list(range(n))}), tmp_path / "t.parquet", row_group_size=700)
    con = glint.connect(device=device)
    con.read_parquet(str(tmp_path / "t.parquet"), "t")
    import duckdb

    duck = duckdb.connect()
    for q in [
        "SELECT s, count(*), min(i) FROM t GROUP BY s ORDER BY s",
        "SELECT min(s), max(s), count(DISTINCT s) FROM t",
        "SELECT s FROM t WHERE s > 'ab' AND s NOT LIKE '%special%' ORDER BY s DESC, i LIMIT 7",
        "SELECT upper(s) || '-' || length(s), count(*) FROM t GROUP BY 1 ORDER BY 1",
        "SELECT a.s, count(*) FROM t a JOIN (SELECT DISTINCT s FROM t WHERE i < 50) b ON a.s = b.s GROUP BY 1 ORDER BY 1",
    ]:
        want = duck.sql(q.replace("FROM t", f"FROM '{tmp_path / 't.parquet'}'")).fetchall()
        assert con.sql(q).fetchall() == want, q


def test_folding_chunks_keeps_dictionaries_small():
    """Top-k and partial aggregation fold each chunk into a running result
    (concatenate, keep a few rows, concatenate again): the dictionary of the
    result holds its rows' strings, not every string every chunk brought."""
    from glint.columnar.column import Column, concat_columns

    best = None
    for k in range(50):
        chunk = Column.from_arrow(pa.array([f"c{k}-{i}" for i in range(3000)]))
        best = chunk if best is None else concat_columns([best, chunk])
        best = best.take(torch.tensor([0, len(best) - 1]))  # keep two rows
    assert best.to_arrow().to_pylist() == ["c0-0", "c49-2999"]
    assert len(best.dictionary) < 2 * 3000 + 1024 + 2


def test_shared_dictionaries_counted_once():
    from glint.columnar.column import Batch, Column
    from glint.runtime.spill import batch_nbytes, batches_nbytes, compact_strings

    col = Column.from_arrow(pa.array([f"s{i}" for i in range(5000)]))
    parts = [Batch({"s": col.take(torch.arange(i, i + 10))}, 10) for i in range(0, 50, 10)]
    one = batch_nbytes(parts[0])
    assert batches_nbytes(parts) == one + 4 * (one - col.dictionary.nbytes())
    small = compact_strings(parts[1])
    assert len(small["s"].dictionary) == 10 and small["s"].to_arrow().to_pylist() == [f"s{i}" for i in range(10, 20)]
