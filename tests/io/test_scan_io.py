"""The scan's IO path: Parquet read the way glint stores columns (DECIMAL as
unscaled integers, strings as plain ``string``), the host tier of the table
cache, and the working memory the memory manager keeps free for chunks."""

import decimal

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

import glint
from glint.io.parquet_meta import dictionary_entries, raw_footer
from glint.io.parquet_source import ParquetSource
from glint.runtime.memory import HostCache, MemoryManager
from glint.testing.compare import compare_query_result

D = decimal.Decimal
# the CPU, and CUDA where there is one
DEVICES = [
    "cpu",
    pytest.param(
        "cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")]
    ),
]


def _table(n=1000):
    return pa.table(
        {
            "k": pa.array(range(n), pa.int64()),
            "d64": pa.array([None if i % 7 == 0 else D(i * 37 - 5000) / 100 for i in range(n)], pa.decimal128(15, 2)),
            "d32": pa.array([D(-i) / 1000 for i in range(n)], pa.decimal128(9, 3)),
            "d18": pa.array([D(10) ** 17 + i for i in range(n)], pa.decimal128(18, 0)),
            "s": pa.array([None if i % 11 == 0 else f"text {i * 7919 % 1000}" for i in range(n)], pa.string()),
            "flag": pa.array(["AB"[i % 2] for i in range(n)], pa.string()),
            "sv": pa.array([f"v{i}" for i in range(n)], pa.string_view()),
        }
    )


@pytest.mark.parametrize("as_integer", [True, False])
def test_decimals_and_strings_read_raw_equal_duckdb(tmp_path, as_integer):
    path = str(tmp_path / "t.parquet")
    pq.write_table(_table(), path, row_group_size=128, store_decimal_as_integer=as_integer)
    raw = raw_footer(path)
    assert raw is not None and raw.dropped_arrow_schema
    assert raw.raw_decimals == ({"d64", "d32", "d18"} if as_integer else set())
    src = ParquetSource(path)
    got = src.read_run([0, 1, 2], ["d64", "d32", "s", "sv"])
    assert got.schema.field("d64").type == (pa.int64() if as_integer else pa.decimal128(15, 2))
    assert got.schema.field("sv").type == pa.string()
    con = glint.connect(device="cpu", chunk_rows=300)
    con.read_parquet(path, "t")
    sql = "SELECT k, d64, d32, d18, s, flag, sv, d64 * 2 AS x FROM t WHERE d64 > -10 OR d64 IS NULL ORDER BY k"
    want = duckdb.connect().execute(sql.replace("FROM t", f"FROM '{path}'")).fetchall()
    assert con.sql(sql).fetchall() == want


def test_files_with_and_without_a_rewrite_mix(tmp_path):
    """A table of several files reads each file its own way; the chunks agree."""
    d = tmp_path / "t"
    d.mkdir()
    t = _table(600)
    pq.write_table(t.slice(0, 300), str(d / "a.parquet"), row_group_size=100, store_decimal_as_integer=True)
    pq.write_table(t.slice(300), str(d / "b.parquet"), row_group_size=100, store_decimal_as_integer=False)
    con = glint.connect(device="cpu", chunk_rows=250)
    con.read_parquet(str(d), "t")
    sql = "SELECT sum(d64), min(d32), count(s), max(sv) FROM t"
    want = duckdb.connect().execute(sql.replace("FROM t", f"FROM '{d}/*.parquet'")).fetchall()
    assert con.sql(sql).fetchall() == want


def test_dictionary_detection(tmp_path):
    path = str(tmp_path / "t.parquet")
    pq.write_table(_table(4000), path, row_group_size=4000)
    cc = {
        pq.read_metadata(path).row_group(0).column(i).path_in_schema: pq.read_metadata(path).row_group(0).column(i)
        for i in range(7)
    }
    assert dictionary_entries(path, cc["flag"].dictionary_page_offset) == 2
    assert dictionary_entries(path, cc["k"].data_page_offset) is None  # not a dictionary page
    src = ParquetSource(path)
    assert "flag" in src._dict_columns and "sv" not in src._dict_columns and "s" not in src._dict_columns


def test_not_parquet_footers_are_left_alone(tmp_path):
    p = tmp_path / "x.parquet"
    p.write_bytes(b"PAR1" + b"\x00" * 20 + b"PAR1")
    assert raw_footer(str(p)) is None


def test_host_tier_serves_warm_runs_instead_of_the_file(tmp_path):
    path = str(tmp_path / "t.parquet")
    pq.write_table(_table(5000), path, row_group_size=500, store_decimal_as_integer=True)
    con = glint.connect(device="cpu", memory_limit="64KB", chunk_rows=1000, host_cache_limit="64MB")
    con.read_parquet(path, "t")
    sql = "SELECT flag, sum(d64) AS s, count(*) AS c FROM t GROUP BY flag ORDER BY flag"
    want = duckdb.connect().execute(sql.replace("FROM t", f"FROM '{path}'")).fetchall()
    first = con.sql(sql)
    assert first.fetchall() == want and first.io.decoded_bytes > 0 and first.io.host_cache_bytes == 0
    second = con.sql(sql)
    assert second.fetchall() == want
    assert second.io.decoded_bytes == 0 and second.io.host_cache_bytes > 0 and second.io.file_bytes == 0
    con.drop_cache(host=True)
    third = con.sql(sql)
    assert third.fetchall() == want and third.io.decoded_bytes > 0


def test_host_cache_is_bounded():
    h = HostCache(1000)
    for i in range(10):
        assert h.put(i, object(), 300)
        assert h.bytes <= 1000
    assert [k for k in range(10) if h.get(k) is not None] == [7, 8, 9]
    assert not h.put("big", object(), 1001)


class _FakeCuda(MemoryManager):
    """The CUDA accounting with a stand-in for the allocator's count."""

    def __init__(self, limit, headroom=0, capped=True):
        super().__init__(torch.device("cuda"), limit, headroom)
        self.live = 0  # a pipeline's working tensors
        self.allocator_capped = capped

    def used(self):
        return self._cache_bytes + self._reserved + self.live


def test_working_reserve_keeps_the_cache_out_of_a_chunks_way():
    m = _FakeCuda(limit=16_000, headroom=100)
    m.chunk_rows = 4
    m.working_per_row = 500  # 2,000 bytes kept for a chunk
    assert m.working_reserve() == 2000
    assert m.slack() == 2000  # an eighth for what the allocator holds unseen
    assert m.cache_put("a", object(), 7000) and m.cache_put("b", object(), 5000)
    assert m.cache_bytes() == 12000  # 16,000 - 2,000 - 2,000
    assert not m.cache_put("c", object(), 5000)  # the run's own entries are not evicted for it
    m.begin_run()
    assert m.cache_put("c", object(), 5000)  # in the next run: evicts "a" to fit
    assert m.cache_get("a") is None and m.cache_bytes() == 10000
    r = m.reservation("Sort")
    assert r.grow(2000) and m.cache_bytes() == 10000  # beside the cache and the chunk's reserve
    assert r.grow(3000) and m.cache_bytes() == 5000  # the cache gives way, the reserve does not
    assert not r.grow(8000)
    # no cap on the allocator (no limit set by the user): no slack
    assert _FakeCuda(limit=16_000, capped=False).slack() == 0
    assert MemoryManager(torch.device("cpu"), 16_000).slack() == 0


def test_making_room_evicts_oldest_first_and_skips_kept_entries():
    m = _FakeCuda(limit=16_000)
    for k in "abcd":
        assert m.cache_put(k, object(), 3000)
    assert m.cache_get("a") is not None  # "a" is now the newest
    m.begin_run()  # (entries of earlier runs)
    assert m._make_room(5000, keep={"b"})  # 2,000 were free: "c" goes ("b" is kept)
    assert m.cache_keys() == ["b", "d", "a"]
    assert not m._make_room(50_000, keep={"b"}) and m.cache_keys() == ["b"]


def test_making_room_takes_the_runs_own_entries_in_their_order():
    """Past the entries of earlier runs, the run's own: those it has read,
    the longest ago first, then those its scans marked as theirs and have
    not read yet, newest first (needed last)."""
    m = _FakeCuda(limit=20_000)
    for k in ("a", "r1", "r2", "t1", "t2", "t3"):
        assert m.cache_put(k, object(), 2000)
    m.begin_run()
    m.cache_touch(["r1", "r2", "t1", "t2", "t3"])  # (as the run's scans start)
    assert m.cache_get("r1") is not None and m.cache_get("r2") is not None  # read
    assert m.cache_keys() == ["a", "t1", "t2", "t3", "r1", "r2"]
    # free: 20,000 - 2,500 (slack) - 12,000 = 5,500
    r = m.reservation("Join build")
    assert r.grow(5500 + 2000 + 2000 + 2000)  # "a", then "r1", "r2" (read, oldest first)
    assert m.cache_keys() == ["t1", "t2", "t3"]
    assert r.grow(2000) and m.cache_keys() == ["t1", "t2"]  # then the newest marked: "t3"
    assert m._make_room(2000, keep={"t2"}) and m.cache_keys() == ["t2"]


def test_looking_at_the_cache_is_not_reading_it():
    """A scan asking which of its chunks are cached (cache_peek) leaves them
    as marked, not read: room is then made from the chunks it needs last,
    not from the next ones it reads."""
    m = _FakeCuda(limit=20_000)
    keys = [("t", i) for i in range(5)]
    for k in keys:
        assert m.cache_put(k, object(), 3000)
    m.begin_run()
    m.cache_touch(keys)
    assert all(m.cache_peek(k) is not None for k in keys) and m.cache_peek(("t", 9)) is None
    assert m.cache_get(keys[0]) is not None  # the scan reads its first chunk
    assert m.cache_keys() == [*keys[1:], keys[0]]
    assert m.make_room(2500 + 3000 + 3000)  # free: 20,000 - 2,500 - 15,000 = 2,500
    assert m.cache_keys() == keys[1:4]  # the one read, then the one needed last
    assert not m.make_room(50_000, spare_this_run=True) and m.cache_keys() == keys[1:4]


def test_compact_chunks_only_while_short_of_room():
    m = MemoryManager(torch.device("cpu"), 1000)
    assert not m.short_of_room()
    assert m.cache_put("a", object(), 600) and not m.cache_put("b", object(), 600)  # ("a" is this run's)
    m.begin_run()
    assert m.cache_put("b", object(), 600) and m.short_of_room()  # "a" evicted for room
    for _ in range(8):
        m.begin_run()
    assert not m.short_of_room()  # no eviction in the last eight runs
    m.limit_set = True
    assert m.short_of_room()


def test_an_out_of_memory_step_raises_the_working_reserve():
    m = _FakeCuda(limit=10_000)
    m.chunk_rows = 10
    m.working_per_row = 100
    m.cache_put("a", object(), 6000)
    m.live = 3500  # the chunk needed more than the 1,000 kept for it
    m.note_oom(asked=500)
    assert m.working_per_row == (3500 + 500) * 5 // 4 // 10
    assert m.working_reserve() == 5000
    assert not m.cache_put("b", object(), 6000)  # a cache entry may no longer crowd a chunk out
    cpu = MemoryManager(torch.device("cpu"), 1000, 10)
    cpu.chunk_rows = 10
    cpu.note_oom(100)
    assert cpu.working_per_row == 0 and cpu.working_reserve() == 10


@pytest.mark.parametrize("window", [16, 48, 1 << 20])
def test_stacked_upload_layout_equals_concatenation(window):
    """The scan's stacked upload (parts written into windows of one buffer,
    codes and offsets rebased) builds the columns that concatenating the
    parts does, for every column kind, parts sliced out of larger buffers
    and windows that cut through components."""
    from glint.columnar.column import concat_columns
    from glint.io.transfer import stack_on_host

    t = _table(300)
    d = pa.array(["x", "yy", None, "x", "zzz"] * 60).dictionary_encode()
    parts = {
        "k": [t.column("k").chunk(0).slice(a, 50) for a in (0, 50, 100)],
        "d64": [t.column("d64").chunk(0).slice(a, 70) for a in (0, 70, 140)],  # strided, NULLs
        "s": [t.column("s").chunk(0).slice(a, 40) for a in (3, 100, 250)],  # sliced offsets, NULLs
        "dict": [d.slice(0, 90), d.slice(90, 100), d.slice(190, 7)],
        "b": [pa.array([True, None, False]), pa.array([False, True])],
        "f": [pa.array([1.5, None]), pa.array([float("nan"), -0.0, 2.0])],
        "empty": [pa.array([], pa.string()), pa.array(["only"])],
    }
    types = {
        "k": glint.columnar.types.BIGINT,
        "d64": glint.columnar.types.DECIMAL(15, 2),
        "s": glint.columnar.types.VARCHAR,
        "dict": glint.columnar.types.VARCHAR,
        "b": glint.columnar.types.BOOLEAN,
        "f": glint.columnar.types.DOUBLE,
        "empty": glint.columnar.types.VARCHAR,
    }
    from glint.columnar.column import Column

    cols = {k: [Column.from_arrow(a, types[k], False) for a in v] for k, v in parts.items()}
    got = stack_on_host(cols, window=window)
    # integers copied up narrowed (as the scan does where the file's statistics allow), then widened
    narrowed = stack_on_host(cols, window=window, narrow={"k": np.dtype(np.int16), "d64": np.dtype(np.int16)})
    for k, v in cols.items():
        want = concat_columns(v).to_arrow()
        assert repr(got[k].to_arrow().to_pylist()) == repr(want.to_pylist()), k  # NaN and -0.0 too
        assert got[k].to_arrow().type == want.type
        assert repr(narrowed[k].to_arrow().to_pylist()) == repr(want.to_pylist()), k
        assert narrowed[k].data.dtype == got[k].data.dtype


@pytest.mark.parametrize("window", [64, 1 << 20])
def test_stacked_upload_on_a_fake_device(fake_cuda, window):
    """StackedUpload end to end (one buffer per column, windows filled by
    several threads, the memory manager asked for room) with the CUDA calls
    stubbed: the columns equal the parts' concatenation."""
    from glint.columnar.column import Column, concat_columns
    from glint.io import transfer

    used = fake_cuda.streams
    t = _table(400)
    cols = {
        "k": [
            Column.from_arrow(t.column("k").chunk(0).slice(a, 100), glint.columnar.types.BIGINT, False)
            for a in (0, 100, 200)
        ],
        "d": [
            Column.from_arrow(t.column("d64").chunk(0).slice(a, 130), glint.columnar.types.DECIMAL(15, 2), False)
            for a in (0, 130)
        ],
        "s": [
            Column.from_arrow(t.column("s").chunk(0).slice(a, 90), glint.columnar.types.VARCHAR, False)
            for a in (5, 200)
        ],
    }
    pool = fake_cuda.pool(window)
    mem = MemoryManager(torch.device("cpu"), 1 << 30)
    wide = transfer.StackedUpload(pool, mem, cols, "consumer stream").bytes
    # BIGINT keys < 400 and DECIMAL(15,2) values (NULL slots too) in int16: 6 of 8 bytes less a value
    up = transfer.StackedUpload(
        pool, mem, cols, "consumer stream", narrow={"k": np.dtype(np.int16), "d": np.dtype(np.int16)}
    )
    assert up.bytes < wide - 6 * (300 + 260) + 64
    seen = []
    with fake_cuda.executor(3) as ex:
        up.start(ex, lambda n, s: seen.append(n))
        got, ev = up.finish()
    assert pool.out == 0 and sum(seen) == up.bytes
    assert got["k"].data.dtype == torch.int64 and got["d"].data.dtype == torch.int64
    # buffers allocated and windows copied on the consumer's stream (another
    # stream's copies could overwrite a block the consumer's kernels still read)
    assert set(used[:-1]) == {"consumer stream"} and used[-1] == "pool stream"  # the last: finish()
    for k, parts in cols.items():
        assert repr(got[k].to_arrow().to_pylist()) == repr(concat_columns(parts).to_arrow().to_pylist()), k
    assert got["k"].data.untyped_storage().data_ptr() != got["s"].data.untyped_storage().data_ptr()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_stacked_upload_never_overwrites_memory_the_compute_stream_still_reads():
    """A block freed on the compute stream goes back to the allocator while
    kernels queued before the free still read it; the upload's copies (on
    the pinned pool's stream) into a buffer the allocator hands out from that
    block must wait for them. Without the wait this read 1s instead of 7s."""
    from concurrent.futures import ThreadPoolExecutor

    from glint.columnar.column import Column
    from glint.io import pinned, transfer

    n = 1 << 21
    stream = torch.cuda.current_stream()
    parts = [Column(glint.columnar.types.BIGINT, torch.ones(n, dtype=torch.int64), None, None)]
    for _ in range(5):
        x = torch.full((n,), 7, dtype=torch.int64, device="cuda")
        torch.cuda._sleep(20_000_000)  # the compute stream is busy ...
        y = x.clone()  # ... then reads x
        del x  # freed while the read is still queued
        up = transfer.StackedUpload(pinned.pinned_pool(torch.device("cuda")), None, {"c": parts}, stream)
        with ThreadPoolExecutor(2) as ex:
            up.start(ex)
            cols, ev = up.finish()
        stream.wait_event(ev)
        assert int((y != 7).sum()) == 0
        assert int(cols["c"].data.sum()) == n


def test_columns_decoded_from_their_pages_equal_pyarrows(tmp_path, monkeypatch):
    """GLINT_PARQUET_DECODE=device on a file with NULLs in every kind of
    column the page decoder takes (INTEGER, BIGINT, DOUBLE from FLOAT and
    DOUBLE, DATE, DECIMAL stored as INT32 / INT64) and in ones it leaves to
    pyarrow (VARCHAR, DECIMAL as bytes, unsigned): the same answers."""
    import datetime

    import numpy as np

    from glint.io.parquet_source import ParquetSource
    from glint.runtime import trace

    rng = np.random.default_rng(9)
    n = 3000
    nulls = rng.random(n) < 0.2

    def col(values, typ):
        return pa.array([None if z else v for v, z in zip(values, nulls)], typ)

    ints = rng.integers(-1000, 1000, n).tolist()
    t = pa.table(
        {
            "i": col(ints, pa.int32()),
            "b": col([x * 10**9 for x in ints], pa.int64()),
            "f": col([x / 7 for x in ints], pa.float32()),
            "d": col([x / 3 for x in ints], pa.float64()),
            "dt": col([datetime.date(2000, 1, 1) + datetime.timedelta(days=x) for x in ints], pa.date32()),
            "p9": col([decimal.Decimal(x) / 100 for x in ints], pa.decimal128(9, 2)),
            "p18": col([decimal.Decimal(x * 10**9) / 1000 for x in ints], pa.decimal128(18, 3)),
            "u": col([abs(x) for x in ints], pa.uint32()),
            "s": col([f"s{x}" for x in ints], pa.string()),
            "g": col([x % 5 for x in ints], pa.int64()),
        }
    )
    path = tmp_path / "t.parquet"
    pq.write_table(t, path, row_group_size=700, store_decimal_as_integer=True, data_page_size=1024)
    src = ParquetSource(str(path))
    con = glint.connect(device="cpu")
    con.sql(f"CREATE VIEW t AS SELECT * FROM read_parquet('{path}')")
    tbl_types = {f.name: glint.columnar.types.from_arrow(f.type) for f in src.schema}
    decodable = sorted(c for c, ty in tbl_types.items() if src.device_decodable(c, ty))
    assert decodable == ["b", "d", "dt", "f", "g", "i", "p18", "p9"]
    sql = (
        "SELECT g, count(i), sum(i), sum(b), sum(f), sum(d), min(dt), max(dt), sum(p9), sum(p18), "
        "sum(u), count(s), count(*) FROM t WHERE dt IS NULL OR dt > DATE '1999-06-01' GROUP BY g ORDER BY g"
    )
    rows = "SELECT * FROM t ORDER BY b, i, s, u"
    for chunk_rows in (1000, 1 << 20):  # (the same chunks both ways: float sums follow their order)
        got = []
        for mode in ("", "device"):
            monkeypatch.setenv("GLINT_PARQUET_DECODE", mode)
            con = glint.connect(device="cpu", chunk_rows=chunk_rows)
            con.sql(f"CREATE VIEW t AS SELECT * FROM read_parquet('{path}')")
            trace.start()
            try:
                got.append((con.sql(sql).arrow(), con.sql(rows).arrow()))
            finally:
                decoded = {e["args"]["column"] for e in trace.stop() if e["name"] == "device decode"}
            assert decoded == (set(decodable) if mode else set())  # the columns the pages gave
        (want, want_rows), (agg, all_rows) = got
        assert want.num_rows == 6 and want_rows.num_rows == n  # g = 0..4 and NULL
        assert agg.equals(want) and all_rows.equals(want_rows)


@pytest.mark.parametrize("device", DEVICES)
def test_optional_columns_decoded_as_stored(tmp_path, monkeypatch, device):
    """Optional columns (pyarrow's default) are decoded from their bytes as
    stored: in row groups without NULLs their definition levels, all 1, are
    checked and skipped; in the row group with NULLs decoded into the
    values' validity: with
    GLINT_PARQUET_DECODE=device the answers equal pyarrow's way and
    DuckDB's, over v1 and v2 pages, dictionary and PLAIN (a dictionary
    that fills up), low-cardinality strings as codes."""
    rng = np.random.default_rng(21)
    n, rg = 4000, 1000
    ints = rng.integers(-1000, 1000, n)
    nulls = np.zeros(n, dtype=bool)
    nulls[2000:3000] = rng.random(1000) < 0.3  # the third row group only

    def col(values, typ, with_nulls=True):
        return pa.array(values, typ, mask=nulls if with_nulls else None)

    t = pa.table(
        {
            "i": col(ints.astype(np.int32), pa.int32()),
            "b": col(ints * 10**9 + np.arange(n), pa.int64(), False),
            "d": col(ints / 3, pa.float64()),
            "f": col((ints / 7).astype(np.float32), pa.float32(), False),
            "dt": col(ints + 11000, pa.int32()).cast(pa.date32()),
            "p": col([decimal.Decimal(int(x)) / 100 for x in ints], pa.decimal128(9, 2)),
            "s": col([["AIR", "MAIL", "SHIP"][x % 3] for x in ints], pa.string()),
            "g": col(ints % 5, pa.int64(), False),
        }
    )
    for version in ("1.0", "2.0"):
        path = tmp_path / f"opt{version}.parquet"
        pq.write_table(
            t,
            path,
            row_group_size=rg,
            data_page_version=version,
            store_decimal_as_integer=True,
            data_page_size=2048,
            dictionary_pagesize_limit=3000,
        )
        sql = (
            f"SELECT g, count(i), sum(i), sum(b), sum(d), sum(f), min(dt), max(dt), sum(p), count(s), min(s), "
            f"count(*) FROM read_parquet('{path}') WHERE dt IS NULL OR dt > DATE '2000-01-01' GROUP BY g ORDER BY g"
        )
        got = []
        for mode in ("", "device"):
            monkeypatch.setenv("GLINT_PARQUET_DECODE", mode)
            con = glint.connect(device=device, chunk_rows=rg)
            got.append(con.sql(sql).arrow())
        con.read_parquet(str(path), "t")
        tbl = con.table("t")
        assert sorted(tbl.raw_columns(list(t.column_names))) == sorted(t.column_names)
        frags = list(range(len(tbl.fragments)))
        assert all(tbl.has_raw(g, c) for g in frags for c in t.column_names)
        assert tbl.raw_set(frags, "i").levels.tolist() == [1, 1, 2, 1]  # the third row group's levels decoded
        assert tbl.raw_set(frags, "b").levels.tolist() == [1, 1, 1, 1]
        want = duckdb.sql(sql).arrow()
        want = want.read_all() if hasattr(want, "read_all") else want
        assert compare_query_result(sql, got[0], want) == [] and compare_query_result(sql, got[1], want) == []


def test_bad_page_data_names_the_file_and_row_group(tmp_path, monkeypatch):
    """A dictionary-index bit width past 32 in a data page: with the pages
    decoded by glint (GLINT_PARQUET_DECODE=device) the error names the file,
    the row group and the column, not a traceback from inside the decoder."""
    from glint.errors import GlintIOError
    from glint.io.parquet_meta import _fields

    monkeypatch.setenv("GLINT_PARQUET_DECODE", "device")
    for nullable, at, what in [(False, 0, "bit width"), (True, 1, "definition levels longer than the page")]:
        # required: the body starts with the indices' bit width; optional (no
        # NULLs, so its pages are decoded as stored too): with the levels'
        # 4-byte length, whose second byte makes it 16 KiB and more
        path = tmp_path / "bad.parquet"
        schema = pa.schema([pa.field("x", pa.int64(), nullable=nullable)])
        pq.write_table(pa.table({"x": [i % 7 for i in range(1000)]}, schema=schema), path, compression="none")
        off = pq.read_metadata(path).row_group(0).column(0).data_page_offset
        raw = bytearray(path.read_bytes())
        _, body = _fields(bytes(raw[off : off + 4096]), 0)  # the data page's header ends here
        raw[off + body + at] = 0x40
        path.write_bytes(bytes(raw))
        con = glint.connect(device="cpu")
        with pytest.raises(GlintIOError, match=rf"bad\.parquet.*row group 0.*'x'.*{what}"):
            con.sql(f"SELECT sum(x) FROM read_parquet('{path}')").arrow()


def test_decode_threads_from_the_environment():
    """GLINT_DECODE_THREADS (the decode_threads setting) sets the decoding
    pool's size when the first connection's scan makes it (a fresh process:
    the pool is made once); 0 is one per core; a value that is not a whole
    number is an error naming the variable."""
    import os
    import subprocess
    import sys

    code = (
        "import glint\nfrom glint.io.parquet_source import decode_pool\n"
        "try:\n    con = glint.connect(device='cpu')\nexcept glint.GlintError as e:\n    print('ERR', e)\n"
        "else:\n    print(decode_pool(con.settings.decode_threads)._max_workers)\n"
    )
    for value, want in [
        ("3", "3"),
        ("zero", "ERR GLINT_DECODE_THREADS must be a whole number, got 'zero'"),
        ("0", str(max(2, os.cpu_count() or 2))),
    ]:
        out = subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "GLINT_DECODE_THREADS": value},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert out.strip() == want


@pytest.mark.parametrize("device", DEVICES)
def test_dictionary_index_past_the_dictionary_names_the_file(tmp_path, monkeypatch, device):
    """Pages whose dictionary indices point past the dictionary (here: the
    plan made to claim a 3-entry dictionary for indices 0-4): on the CPU the
    torch decoder raises, on CUDA the kernel's flag is checked before the
    chunk is handed on; both name the file, the row group and the column."""
    from glint.errors import GlintIOError
    from glint.io import parquet_pages as pp
    from glint.io.parquet_source import ParquetSource

    path = tmp_path / "idx.parquet"
    # (zstd: never decoded as stored, so the scan plans its pages on the host)
    pq.write_table(pa.table({"x": pa.array([i % 5 for i in range(1000)], pa.int64())}), path, compression="zstd")
    real = ParquetSource.plan_device

    def shrunk(self, fragment, name, dtype, raw=False):
        p = real(self, fragment, name, dtype)  # (a plan made on the host, never a raw chunk)
        return pp.ChunkPlan(p.dtype, p.rows, p.stored, 3, p.hyb, p.vals, p.vals_bytes, p.streams, p.levels)

    monkeypatch.setattr(ParquetSource, "plan_device", shrunk)
    monkeypatch.setenv("GLINT_PARQUET_DECODE", "device")
    con = glint.connect(device=device)
    with pytest.raises(GlintIOError, match=r"idx\.parquet.*row group 0.*(past the dictionary|out of range)"):
        con.sql(f"SELECT sum(x) FROM read_parquet('{path}')").arrow()
    monkeypatch.setattr(ParquetSource, "plan_device", real)
    assert con.sql(f"SELECT sum(x) FROM read_parquet('{path}')").arrow().column(0)[0].as_py() == 2000


def _three_tables(tmp_path, rows=3000):
    """Parquet files of a small star: fact f, dimensions a and b."""
    f = pa.table(
        {
            "fa": pa.array([i % 50 for i in range(rows)], pa.int64()),
            "fb": pa.array([i % 7 for i in range(rows)], pa.int64()),
            "v": pa.array([D(i) / 100 for i in range(rows)], pa.decimal128(12, 2)),
        }
    )
    a = pa.table({"ak": pa.array(range(50), pa.int64()), "an": pa.array([f"a{i % 5}" for i in range(50)])})
    b = pa.table({"bk": pa.array(range(7), pa.int64()), "bn": pa.array([f"b{i}" for i in range(7)])})
    paths = {}
    for name, t in (("f", f), ("a", a), ("b", b)):
        paths[name] = str(tmp_path / f"{name}.parquet")
        pq.write_table(t, paths[name], row_group_size=500)
    return paths


STAR = (
    "SELECT an, bn, sum(v) AS s, count(*) AS n FROM f JOIN a ON fa = ak JOIN b ON fb = bk "
    "WHERE bn <> 'b3' GROUP BY an, bn ORDER BY an, bn"
)


def _scan_threads():
    import threading

    return [t for t in threading.enumerate() if t.name.startswith("glint-scan") and t.is_alive()]


def _star_with_spy(tmp_path, monkeypatch, **connect):
    """A connection over the star's files whose runs record which scans they
    read ahead (table, chunks), and STAR's answer from DuckDB."""
    from glint.exec import scan as S

    paths = _three_tables(tmp_path)
    con = glint.connect(device="cpu", chunk_rows=700, **connect)
    for n, p in paths.items():
        con.read_parquet(p, n)
    started = []
    real = S.start_scans

    def spy(ctx, root):
        real(ctx, root)
        started.append([(r.table.name, len(r.chunks)) for r in ctx.read_ahead.values()])

    monkeypatch.setattr("glint.engine.connection.start_scans", spy)
    duck = duckdb.connect()
    for n, p in paths.items():
        duck.execute(f"CREATE VIEW {n} AS SELECT * FROM '{p}'")
    return con, started, duck.execute(STAR).fetchall()


@pytest.mark.parametrize("read_ahead", ["1", "0"])
def test_scans_read_ahead_from_the_start_of_the_run(tmp_path, monkeypatch, read_ahead):
    """Every scan of a multi-table query starts reading when the run starts
    (build sides first, one reader per table); results equal DuckDB's either
    way, and no reader thread outlives the run."""
    monkeypatch.setenv("GLINT_READ_AHEAD", read_ahead)
    con, started, want = _star_with_spy(tmp_path, monkeypatch)
    assert con.sql(STAR).fetchall() == want
    if read_ahead == "1":
        f_chunks = len(con.table("f").chunks(700))
        assert sorted(started[0]) == [("a", 1), ("b", 1), ("f", f_chunks)] and f_chunks > 1
    else:
        assert started == [[]]
    assert not _scan_threads()
    # warm: every first chunk is cached, nothing is read ahead
    assert con.sql(STAR).fetchall() == want
    assert started[-1] == []


def test_a_run_marks_its_scans_cached_chunks_as_its_own(tmp_path, monkeypatch):
    """As a run starts, the device cache's chunks of its scans become the
    newest, the probe side's (read last) after the build sides': what its
    joins reserve is taken from other queries' chunks first, then from the
    build sides' (already read), and the probe side finds its chunks."""
    from glint.exec import scan as S

    con, _, want = _star_with_spy(tmp_path, monkeypatch)
    orders = []
    real = S.start_scans

    def spy(ctx, root):
        real(ctx, root)
        names = {con.table(n).uid: n for n in ("a", "b", "f")}
        orders.append([names[k[1]] for k in ctx.memory.cache_keys()])

    monkeypatch.setattr("glint.engine.connection.start_scans", spy)
    assert con.sql(STAR).fetchall() == want
    assert con.sql("SELECT count(*) FROM f").fetchall()[0][0] > 0
    assert con.sql("SELECT max(an) FROM a").fetchall()[0][0] is not None  # a's chunks now the newest
    assert orders[-1][-1] == "a"
    assert con.sql(STAR).fetchall() == want
    order = orders[-1]
    f_keys = order.count("f")
    assert f_keys > 1 and order[-f_keys:] == ["f"] * f_keys, order


def test_scans_in_run_order_read_build_sides_first(tmp_path):
    paths = _three_tables(tmp_path)
    con = glint.connect(device="cpu")
    for n, p in paths.items():
        con.read_parquet(p, n)
    from glint.exec.join import JoinExec
    from glint.exec.scan import _scans_in_run_order

    physical = con.sql(STAR).physical

    def first_asked(node, out):  # what the run opens first: a join's build side
        kids = list(node.children)
        if isinstance(node, JoinExec) and node.build_right:
            kids.reverse()
        if not kids:
            out.append(node)
        for k in kids:
            first_asked(k, out)
        return out

    order = [s.table for s in _scans_in_run_order(physical, [])]
    assert order == [s.table for s in first_asked(physical, []) if hasattr(s, "table")]
    assert order[-1] == "f"  # the fact table is probed, after both dimensions are built


def test_an_unread_read_ahead_is_closed_with_the_run(tmp_path, monkeypatch):
    """A scan that the run never asks for (an empty build side ends the
    join) is stopped when the run ends, and the result is still right."""
    monkeypatch.setenv("GLINT_READ_AHEAD", "1")
    paths = _three_tables(tmp_path)
    con = glint.connect(device="cpu", chunk_rows=700)
    for n, p in paths.items():
        con.read_parquet(p, n)
    sql = "SELECT count(*) FROM f JOIN a ON fa = ak JOIN b ON fb = bk WHERE bn = 'none'"
    assert con.sql(sql).fetchall() == [(0,)]
    assert not _scan_threads()


def test_planner_statistics_are_computed_side_by_side(tmp_path, monkeypatch):
    """The columns that filters, join conditions and grouping keys read get
    their statistics before the rules run (in parallel), and the plan is the
    one the rules choose when they compute them one at a time."""
    import glint.plan.optimizer as O

    paths = _three_tables(tmp_path)

    def plan(prefetch):
        con = glint.connect(device="cpu")
        for n, p in paths.items():
            con.read_parquet(p, n)
        if not prefetch:
            monkeypatch.setattr(O, "prefetch_stats", lambda *a: None)
        seen = {}
        real = dict(O.RULES)["reorder_joins"]

        def first_rule(plan_, catalog, evaluate):
            seen.update({n: set(catalog.table(n)._stats) for n in paths})
            return real(plan_, catalog, evaluate)

        if prefetch:
            rules = [(n, first_rule if n == "reorder_joins" else r) for n, r in O.RULES]
            monkeypatch.setattr(O, "RULES", rules)
        r = con.sql(STAR)
        monkeypatch.undo()
        return r.physical.explain(), seen

    with_prefetch, seen = plan(True)
    without, _ = plan(False)
    assert with_prefetch == without
    assert {"fa", "fb"} <= seen["f"] and "ak" in seen["a"] and {"bk", "bn"} <= seen["b"]
    assert "v" not in seen["f"]  # only aggregated: no statistics asked for


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_pinned_buffers_are_pinned_in_the_background():
    """A fresh pool fills itself on its own thread; acquire() meanwhile
    waits for a buffer or pins one, never more than the pool's count."""
    import time as _time

    from glint.io.pinned import PinnedPool

    pool = PinnedPool(torch.device("cuda", torch.cuda.current_device()), buffer_bytes=1 << 20, count=4)
    pool.fill_in_background()
    pool.fill_in_background()  # once
    got = [pool.acquire() for _ in range(4)]
    assert all(b.is_pinned() and b.numel() == 1 << 20 for b in got)
    assert pool._made == 4
    for b in got:
        pool.release(b, None)
    deadline = _time.time() + 10
    while len(pool._free) < 4 and _time.time() < deadline:
        _time.sleep(0.01)
    assert len(pool._free) == 4 and pool._made == 4


def test_default_host_tier_holds_pieces_once_the_device_cache_evicts(tmp_path):
    """With the default budget the host tier keeps decoded pieces only after
    the device cache has had to evict (until then a host copy only keeps the
    decoded memory from being reused); with a limit given, always."""
    path = str(tmp_path / "t.parquet")
    pq.write_table(_table(5000), path, row_group_size=500, store_decimal_as_integer=True)
    sql = "SELECT flag, sum(d64) AS s, count(*) AS c FROM t GROUP BY flag ORDER BY flag"
    want = duckdb.connect().execute(sql.replace("FROM t", f"FROM '{path}'")).fetchall()
    con = glint.connect(device="cpu", chunk_rows=1000)
    con.read_parquet(path, "t")
    con.memory.host = HostCache(64 << 20, always=False)  # as a CUDA connection's default tier
    assert con.sql(sql).fetchall() == want
    assert con.memory.evictions == 0 and con.memory.host.bytes == 0
    con.memory.evictions = 1  # the device cache has evicted
    con.memory.cache_drop()
    assert con.sql(sql).fetchall() == want
    assert con.memory.host.bytes > 0
    assert HostCache(1, always=True).admits(MemoryManager(torch.device("cpu"), 1 << 20))


def test_narrow_types_come_from_the_files_statistics(tmp_path):
    """Which columns of a chunk the scan copies up narrowed: integer kinds
    whose chunk min/max (Parquet statistics) fit a smaller integer type."""
    import datetime

    from glint.exec.base import ExecContext
    from glint.io.chunk_reader import ChunkReader

    n = 1000
    t = pa.table(
        {
            "small": pa.array([i % 100 for i in range(n)], pa.int64()),  # int8
            "mid": pa.array([i * 40 - 20000 for i in range(n)], pa.int64()),  # int16
            "big": pa.array([i << 33 for i in range(n)], pa.int64()),  # stays
            "i32": pa.array([i for i in range(n)], pa.int32()),  # int16
            "price": pa.array([D(i * 1000) / 100 for i in range(n)], pa.decimal128(15, 2)),  # int32
            "day": pa.array([datetime.date(1995, 1, 1) + datetime.timedelta(days=i) for i in range(n)]),  # int16
            "f": pa.array([float(i) for i in range(n)]),  # floats: never
            "allnull": pa.array([None] * n, pa.int64()),  # no min / max
        }
    )
    path = str(tmp_path / "t.parquet")
    pq.write_table(t, path, row_group_size=250, store_decimal_as_integer=True)
    con = glint.connect(device="cpu", chunk_rows=500)
    con.read_parquet(path, "t")
    table = con.table("t")
    ctx = ExecContext(torch.device("cpu"), con)
    chunks = table.chunks(500)
    reader = ChunkReader(ctx, table, t.column_names, chunks)
    from glint.columnar.column import Column

    host = {c: [Column.from_arrow(t.column(c).slice(0, 500).combine_chunks())] for c in t.column_names}
    got = {c: str(d) for c, d in reader.uploader._narrow_types(chunks[0], host).items()}
    assert got == {"small": "int8", "mid": "int16", "i32": "int16", "price": "int32", "day": "int16"}
    # the values are checked too: a part past the statistics' range travels as it is
    host["small"].append(Column.from_arrow(pa.array([1000], pa.int64())))
    got = {c: str(d) for c, d in reader.uploader._narrow_types(chunks[0], host).items()}
    assert got == {"mid": "int16", "i32": "int16", "price": "int32", "day": "int16"}
    host = {c: [Column.from_arrow(t.column(c).slice(500, 500).combine_chunks())] for c in t.column_names}
    got = {c: str(d) for c, d in reader.uploader._narrow_types(chunks[1], host).items()}
    assert got["mid"] == "int16" and got["small"] == "int8" and got["price"] == "int32"


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_narrowed_uploads_equal_duckdb_and_move_fewer_bytes(tmp_path, monkeypatch):
    """On CUDA, integer columns travel narrowed where the statistics allow
    (NULLs included), equal DuckDB's, and fewer bytes cross the bus."""
    import datetime

    n = 20000
    t = pa.table(
        {
            "k": pa.array([None if i % 13 == 0 else i % 300 for i in range(n)], pa.int64()),
            "p": pa.array([None if i % 7 == 0 else D(i * 37 - 5000) / 100 for i in range(n)], pa.decimal128(15, 2)),
            "d": pa.array([datetime.date(1992, 1, 1) + datetime.timedelta(days=i % 2500) for i in range(n)]),
            "big": pa.array([(i << 35) - (1 << 40) for i in range(n)], pa.int64()),
        }
    )
    path = str(tmp_path / "t.parquet")
    # (zstd: decoded on the host and copied up as values, which narrowing is
    # for; snappy pages would travel as stored)
    pq.write_table(t, path, row_group_size=3000, store_decimal_as_integer=True, compression="zstd")
    sql = (
        "SELECT k, count(*) AS c, sum(p) AS s, min(d) AS lo, max(d) AS hi, sum(big) AS b FROM t "
        "GROUP BY k ORDER BY k NULLS FIRST"
    )
    want = duckdb.connect().execute(sql.replace("FROM t", f"FROM '{path}'")).fetchall()
    moved = {}
    for flag in ("1", "0"):
        monkeypatch.setenv("GLINT_NARROW_UPLOADS", flag)
        con = glint.connect(device="cuda", chunk_rows=4096)
        con.read_parquet(path, "t")
        r = con.sql(sql)
        assert r.fetchall() == want, flag
        moved[flag] = r.io.h2d_bytes
        con.close()
    assert moved["1"] < moved["0"] * 0.75


def test_read_ahead_stays_within_a_quarter_of_the_free_memory(tmp_path, monkeypatch):
    """Under a small budget the run does not read ahead (the chunks held
    ahead would not fit in a quarter of what the cache could still take);
    the result is the same."""
    monkeypatch.setenv("GLINT_READ_AHEAD", "1")
    con, started, want = _star_with_spy(tmp_path, monkeypatch, memory_limit="128KB")
    assert con.sql(STAR).fetchall() == want
    assert started and 0 < len(started[0]) < 3  # the dimensions, not the fact table
    assert not _scan_threads()


def test_decoding_checks_at_the_end_name_the_failed_columns():
    """ExecContext.verify_decoding: the flags collected during a run are
    read once; a set one raises DecodeRedo naming its table and column, a
    run without collected checks has nothing to verify."""
    from glint.exec.base import DecodeRedo, ExecContext

    class T:
        name = "t"

    t = T()
    ctx = ExecContext("cpu", None)
    ctx.verify_decoding()  # checks not collected: nothing to do
    ctx.decode_checks = [
        (torch.tensor([0], dtype=torch.int32), t, "a"),
        (torch.tensor([2], dtype=torch.int32), t, "b"),
        (torch.tensor([0], dtype=torch.int32), t, "b"),
    ]
    with pytest.raises(DecodeRedo, match=r"^t\.b$") as e:
        ctx.verify_decoding()
    assert e.value.columns == {(t, "b")}
    assert ctx.decode_checks == []  # read once
    ctx.verify_decoding()


def test_a_failed_decoding_check_runs_the_query_again(tmp_path, monkeypatch, caplog):
    """A run whose device decoding failed a check at its end is run again
    with those columns checked chunk by chunk (Table.exact_decode), nothing
    cached from the failed run; the result is the query's. A check that
    fails again for the same columns is an error, not a loop."""
    import logging

    from glint.errors import GlintError
    from glint.exec.base import DecodeRedo, ExecContext

    path = tmp_path / "t.parquet"
    pq.write_table(_table(), path)
    con = glint.connect(device="cpu", chunk_rows=300)
    con.read_parquet(str(path), "t")
    table = con.table("t")
    sql = "SELECT flag, count(*), sum(d64) FROM t GROUP BY flag ORDER BY flag"
    want = duckdb.sql(f"SELECT flag, count(*), sum(d64) FROM '{path}' GROUP BY flag ORDER BY flag").fetchall()
    real = ExecContext.verify_decoding
    runs = []

    def failing_once(self):
        runs.append(self)
        real(self)
        if len(runs) == 1:
            raise DecodeRedo({(table, "d64")})

    monkeypatch.setattr(ExecContext, "verify_decoding", failing_once)
    with caplog.at_level(logging.INFO, logger="glint"):
        assert con.sql(sql).fetchall() == want
    assert len(runs) == 2 and "failed its checks; running the query again" in caplog.text
    assert table.exact_decode == {"d64"}

    def always_failing(self):
        raise DecodeRedo({(table, "d64")})

    monkeypatch.setattr(ExecContext, "verify_decoding", always_failing)
    with pytest.raises(GlintError, match=r"decoding .*d64 failed its checks twice"):
        con.sql(sql).fetchall()


def test_raw_columns_are_those_the_gpu_decodes_as_stored(tmp_path):
    """Table.raw_columns (the columns a CUDA scan decodes on the GPU from
    their bytes as stored, by default): flat numeric columns, with NULLs or
    without, snappy or uncompressed; not high-cardinality strings, unsigned
    integers, a zstd file's columns; by each file's first row group."""
    n = 500
    ints = pa.array(range(n), pa.int64())
    t = pa.table(
        {
            "k": ints,
            "p": pa.array([x * 25 for x in range(n)], pa.decimal128(12, 2)),
            "z": pa.array([None if x % 7 == 0 else x for x in range(n)], pa.int32()),
            "s": pa.array([str(x) for x in range(n)]),
            "u": pa.array(range(n), pa.uint32()),
        }
    )
    schema = t.schema.set(0, pa.field("k", pa.int64(), nullable=False)).set(
        1, pa.field("p", pa.decimal128(12, 2), nullable=False)
    )
    t = t.cast(schema)
    pq.write_table(
        t, tmp_path / "snappy.parquet", compression="snappy", row_group_size=200, store_decimal_as_integer=True
    )  # (as tpchgen does: INT64)
    pq.write_table(t, tmp_path / "zstd.parquet", compression="zstd")
    con = glint.connect(device="cpu")
    con.read_parquet(str(tmp_path / "snappy.parquet"), "a")
    con.read_parquet(str(tmp_path / "zstd.parquet"), "b")
    cols = ["k", "p", "z", "s", "u"]
    assert con.table("a").raw_columns(cols) == ["k", "p", "z"]
    assert con.table("a").device_columns(cols) == ["k", "p", "z"]
    assert con.table("b").raw_columns(cols) == []
    con.close()


@pytest.mark.parametrize(
    "device,chunk_rows",
    [
        ("cpu", 1000),
        ("cpu", 4000),
        pytest.param(
            "cuda",
            1000,
            marks=[pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")],
        ),
    ],
)
def test_string_codes_decoded_from_pages_equal_duckdb(tmp_path, monkeypatch, device, chunk_rows):
    """Low-cardinality string columns decoded from their pages as codes
    (GLINT_PARQUET_DECODE=raw: on the CPU the reference decoder; on CUDA the
    default): each scan chunk gets one sorted dictionary of its row groups'
    strings. Chunks that cut row groups, row groups whose writer fell back
    to PLAIN pages (read by pyarrow instead, for that chunk only): DuckDB's
    answers."""
    from glint.io.chunk_upload import ChunkUploader
    from tests.io.test_parquet_raw import string_file

    rng = np.random.default_rng(9)
    for i in range(2):
        string_file(str(tmp_path / f"f{i}.parquet"), rng, version=("1.0", "2.0")[i], first=i * 10**6)
    if device == "cpu":
        monkeypatch.setenv("GLINT_PARQUET_DECODE", "raw")
    else:
        monkeypatch.delenv("GLINT_PARQUET_DECODE", raising=False)
    fallbacks = []
    real = ChunkUploader._host_column

    def counted(self, chunk, column):
        fallbacks.append(column)
        return real(self, chunk, column)

    monkeypatch.setattr(ChunkUploader, "_host_column", counted)
    con = glint.connect(device=device, chunk_rows=chunk_rows)
    con.read_parquet(str(tmp_path), "x")
    assert con.table("x").raw_columns(["k", "s", "u"]) == ["k", "s", "u"]
    src = f"read_parquet('{tmp_path}/*.parquet')"
    for sql in [
        "SELECT s, u, count(*), sum(k) FROM {} GROUP BY s, u ORDER BY s, u",
        "SELECT s, min(u), max(u), count(*) FROM {} WHERE s >= 'MAIL' GROUP BY s ORDER BY s",
        "SELECT k, s, u, length(s) FROM {} WHERE k % 97 = 0 ORDER BY k",
        "SELECT s FROM {} WHERE s LIKE '%AI%' ORDER BY k DESC LIMIT 20",
    ]:
        assert con.sql(sql.format("x")).fetchall() == duckdb.sql(sql.format(src)).fetchall(), sql
    assert fallbacks and set(fallbacks) == {"u"}
    con.close()


def test_bad_string_dictionary_page_names_the_file(tmp_path, monkeypatch):
    """A string column decoded as codes whose dictionary page does not hold
    its strings: a GlintIOError naming the file and row group."""
    from glint.errors import GlintIOError

    path = tmp_path / "d.parquet"
    schema = pa.schema([pa.field("s", pa.string(), nullable=False)])
    pq.write_table(pa.table({"s": ["alpha", "beta"] * 500}, schema=schema), path, compression="none")
    cc = pq.read_metadata(path).row_group(0).column(0)
    raw = bytearray(path.read_bytes())
    at = raw.index(b"\x05\x00\x00\x00alpha", cc.dictionary_page_offset, cc.data_page_offset)
    raw[at] = 0x7F  # the first string's length: past the page
    path.write_bytes(bytes(raw))
    monkeypatch.setenv("GLINT_PARQUET_DECODE", "raw")
    con = glint.connect(device="cpu")
    con.read_parquet(str(path), "d")
    assert con.table("d").raw_columns(["s"]) == ["s"]
    with pytest.raises(GlintIOError, match=r"d\.parquet'?, row group 0.*bad dictionary page"):
        con.sql("SELECT count(*), min(s) FROM d").fetchall()
    con.close()


@pytest.mark.parametrize(
    "var,value,message",
    [
        ("GLINT_READ_GAP", "1MB", "GLINT_READ_GAP must be a whole number, got '1MB'"),
        ("GLINT_SCAN_PRIORITY", "3", "GLINT_SCAN_PRIORITY must be between 0 and 2, got 3"),
        ("GLINT_RAW_INDEX_BLOCK", "0", "GLINT_RAW_INDEX_BLOCK must be at least 1, got 0"),
    ],
)
def test_a_bad_tuning_variable_is_named(var, value, message):
    """The scan's GLINT_* knobs are checked when a connection reads its
    settings (none is read when glint is imported): a bad value is a
    GlintError naming the variable, not a ValueError or a silent
    misreading."""
    import os
    import subprocess
    import sys

    code = (
        "import glint, glint.io.chunk_reader, glint.io.transfer\ntry:\n    glint.connect(device='cpu')\n"
        "except glint.GlintError as e:\n    print('ERR', e)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, var: value}, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0 and f"ERR {message}" in r.stdout, r.stdout + r.stderr


def test_offsets_moved_past_2gb_into_int64():
    """A chunk's string bytes past 2**31: its dictionaries' int32 offsets are
    moved by the bytes before them into the chunk's int64 offsets (the move
    itself larger than int32 holds)."""
    from glint.io.transfer import _fill_window, _Write

    src = np.array([0, 5, 10], dtype=np.int32)
    buf = np.zeros(32, dtype=np.uint8)
    writes = [_Write(0, np.int64, src=src, add=(1 << 31) + 7)]
    assert _fill_window(buf, 0, 32, writes, 0) == 1
    assert buf[:24].view(np.int64).tolist() == [(1 << 31) + 7, (1 << 31) + 12, (1 << 31) + 17]
