"""The host tier of column chunks as stored (glint.io.page_tier): placement,
eviction and pins, the layout of a scan chunk's bytes copied up from it
(runs of chunks that lie one after the other: one copy each), and TPC-H
read through it under a host tier small enough to evict, equal to DuckDB."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

import glint
from glint.io import file_reads as fr
from glint.io import raw_chunks as rc
from glint.io import raw_decode as rd
from glint.io.page_tier import PageTier, TierCopy
from glint.runtime.memory import HostCache, MemoryManager
from glint.testing.compare import compare_query_result
from glint.workloads import tpch

MIB = 1 << 20


def _place(tier, sizes, starts=None, path="f", admit=True):
    n = len(sizes)
    starts = np.arange(n, dtype=np.int64) * 10 * MIB if starts is None else np.asarray(starts, dtype=np.int64)
    return tier.place([path], np.zeros(n, np.int64), starts, np.asarray(sizes, dtype=np.int64), admit=admit)


def _file(tmp_path, n=8 * MIB):
    p = tmp_path / "f.bin"
    p.write_bytes(np.random.default_rng(0).integers(0, 256, n, dtype=np.uint8).tobytes())
    return str(p)


def test_chunks_are_placed_filled_found_and_evicted_least_recently_used(tmp_path):
    path = _file(tmp_path)
    tier = PageTier(3 * MIB, slab_bytes=MIB)
    data = open(path, "rb").read()
    # three chunks of 400 KiB: two fit a slab, the third opens the next
    first = _place(tier, [400 << 10] * 3, [0, MIB, 2 * MIB], path)
    assert first.fresh.all() and first.slab.tolist() == [0, 0, 1] and first.offset.tolist()[:2] == [0, 400 << 10]
    tier.fill(first)
    tier.release(first)
    again = _place(tier, [400 << 10] * 3, [0, MIB, 2 * MIB], path, admit=False)
    assert not again.fresh.any() and again.held().all() and again.hit_bytes() == 3 * (400 << 10)
    for i, start in enumerate((0, MIB, 2 * MIB)):
        got = tier.view(int(again.slab[i]), int(again.offset[i]), 400 << 10).numpy().tobytes()
        assert got == data[start : start + (400 << 10)]
    tier.release(again)
    # not admitted: a miss stays in its file
    miss = _place(tier, [10], [5 * MIB], path, admit=False)
    assert not miss.held().any() and not miss.pinned
    # a chunk larger than a slab never comes here
    assert not _place(tier, [MIB + 8], [0], path).held().any()
    # slabs 0 and 1 in use; a third fits the limit; a fourth reuses the least recently used
    third = _place(tier, [900 << 10], [3 * MIB], path)
    tier.fill(third)
    tier.release(third)
    assert tier.bytes == 3 * MIB and tier.evictions == 0
    hold = _place(tier, [400 << 10], [0], path)  # slab 0 used now: slab 1 is the oldest
    fourth = _place(tier, [900 << 10], [4 * MIB], path)
    assert tier.evictions == 1 and int(fourth.slab[0]) == 1 and tier.bytes == 3 * MIB
    tier.fill(fourth)
    tier.release(fourth)
    tier.release(hold)
    # the evicted slab's chunk is gone, the others are there
    look = _place(tier, [400 << 10] * 2, [0, 2 * MIB], path, admit=False)
    assert look.held().tolist() == [True, False]
    tier.release(look)


def test_a_slab_a_scan_holds_is_never_evicted(tmp_path):
    path = _file(tmp_path)
    tier = PageTier(MIB, slab_bytes=MIB)
    a = _place(tier, [600 << 10], [0], path)  # pinned until released
    b = _place(tier, [600 << 10], [MIB], path)  # no room, no free slab: stays in its file
    assert a.held().all() and not b.held().any()
    tier.fill(a)
    tier.release(a)
    c = _place(tier, [600 << 10], [MIB], path)
    assert c.held().all() and tier.evictions == 1
    tier.release(c)


def test_a_scan_chunk_found_whole_is_placed_again_from_memory(tmp_path):
    """A scan chunk whose chunks were all found is remembered: placed again
    the same (slabs, offsets, sizes, pins), until a slab is emptied (an
    eviction or a drop) or the file is rewritten."""
    path = _file(tmp_path)
    tier = PageTier(2 * MIB, slab_bytes=MIB)
    sizes, starts = [300 << 10] * 4, [0, MIB, 2 * MIB, 3 * MIB]
    first = _place(tier, sizes, starts, path)
    tier.fill(first)
    tier.release(first)
    looked = _place(tier, sizes, starts, path, admit=False)  # looked up one by one, then remembered
    tier.release(looked)
    assert len(tier._memo) == 1
    again = _place(tier, sizes, starts, path, admit=False)
    for name in ("slab", "offset", "room", "tsize", "tcodec", "fresh"):
        assert getattr(again, name).tolist() == getattr(looked, name).tolist(), name
    assert sorted(again.pinned) == [0, 0, 0, 1] and [s.pins for s in tier._slabs] == [3, 1]
    other = _place(tier, sizes[:2], starts[:2], path, admit=False)  # another scan chunk: looked up
    assert other.held().all() and len(tier._memo) == 2
    tier.release(other)
    tier.release(again)
    assert [s.pins for s in tier._slabs] == [0, 0] and tier.hits == 10
    # a slab emptied for another chunk: forgotten, and what it held is read again
    evict = _place(tier, [900 << 10], [5 * MIB], path)
    assert tier.evictions == 1 and not tier._memo
    tier.fill(evict)
    tier.release(evict)
    after = _place(tier, sizes, starts, path, admit=False)
    assert after.held().tolist() == [True, True, True, False]  # slab 1, the least recently used, went
    tier.release(after)
    tier.drop()
    assert not _place(tier, sizes, starts, path, admit=False).held().any()


def test_the_decoded_tier_and_the_pages_share_one_limit():
    holder = {}
    tier = PageTier(4 * MIB, slab_bytes=MIB, others=lambda: holder["host"].bytes)
    host = holder["host"] = HostCache(4 * MIB, others=lambda: tier.bytes)
    assert host.put("a", "A", 3 * MIB)
    got = _place(tier, [600 << 10, 600 << 10], [0, MIB])  # one slab fits beside the decoded 3 MiB
    assert got.slab.tolist() == [0, -1] and tier.bytes == MIB
    tier.release(got)
    assert not host.put("b", "B", 4 * MIB)  # not beside the slab
    assert host.put("c", "C", 2 * MIB) and host.get("a") is None  # the older decoded piece goes


def _raw_set(paths, chunks):
    """A RawSet of (file, start, size) chunks as stored uncompressed."""
    f, st, sz = (np.array(x, dtype=np.int64) for x in zip(*chunks))
    n = len(f)
    one = np.ones(n, dtype=np.int64)
    return rc.RawSet(torch.int64, paths, f, st, sz, one, 0 * one, sz.copy(), 0 * one, ["f"] * len(paths), np.arange(n))


def test_tier_runs_are_copied_up_whole_and_hold_each_chunks_bytes(tmp_path):
    """layout_raw_together with a tier: chunks it holds come after the file
    runs, one TierCopy per run of chunks lying one after the other in a
    slab; each chunk's offset in the buffer holds its bytes whichever way
    it came (file run, fresh tier copy, tier copy)."""
    paths = []
    for i in range(2):
        p = tmp_path / f"f{i}.bin"
        p.write_bytes(bytes((i * 7 + j) % 251 for j in range(10_000)))
        paths.append(str(p))

    def cols():
        return {
            "a": _raw_set(paths, [(0, 5000, 100), (0, 0, 10), (1, 0, 10)]),
            "b": _raw_set(paths, [(0, 20, 30), (0, 5200, 7), (1, 15, 1)]),
        }

    tier = PageTier(MIB, slab_bytes=1 << 16)
    for admit, fresh_runs in ((True, 1), (False, 0)):
        c = cols()
        lays, total, segments = rd.layout_raw_together(c, gap=0, tier=tier, admit=admit)
        copies = [(o, s) for o, s in segments if type(s) is TierCopy]
        assert len(copies) == 1 and sum(bool(s.fill) for _, s in copies) == fresh_runs
        assert not any(isinstance(s, fr.FileRuns) for _, s in segments)
        buf = np.zeros(total, dtype=np.uint8)
        for o, seg in copies:
            buf[o : o + len(seg)] = seg.run().numpy()
        copies[0][1].placement.tier.release(copies[0][1].placement)
        for name, chunks in c.items():
            for ch, at in zip(chunks, lays[name].at):
                assert buf[at : at + ch.source.size].tobytes() == ch.source.read()
    # a tier too small for one chunk: everything from the files, no copies
    small = PageTier(8, slab_bytes=8)
    lays, total, segments = rd.layout_raw_together(cols(), gap=0, tier=small, admit=True)
    assert not any(type(s) is TierCopy for _, s in segments)


def test_snappy_chunks_are_kept_with_their_pages_decompressed(tmp_path):
    """A snappy column chunk enters the tier with its page bodies
    decompressed (headers rewritten): its RawSet entry then says
    uncompressed, with the tier's size, and the pages are pyarrow's; a chunk
    the host cannot rewrite (a v2 data page) is kept as stored. Column z's
    dictionary page (11 BIGINTs: 88 bytes, stored in fewer than 64) needs
    one more varint byte for its size once decompressed: its header grows."""
    for (version, inflated), col in itertools.product((("1.0", True), ("2.0", False)), ("x", "z")):
        path = str(tmp_path / f"t{version}.parquet")
        schema = pa.schema([pa.field(c, pa.int64(), nullable=False) for c in ("x", "z")])
        t = pa.table({"x": np.arange(20_000) % 97, "z": np.arange(20_000) % 11}, schema=schema)
        pq.write_table(t, path, compression="snappy", row_group_size=5000, data_page_version=version)
        con = glint.connect(device="cpu")
        con.read_parquet(path, "t")
        rs = con.table("t").raw_set([0, 1, 2, 3], col)
        stored = rs.size.copy()
        assert (rs.codec == 1).all()
        tier = PageTier(MIB, slab_bytes=1 << 18)
        lays, total, segments = rd.layout_raw_together({col: rs}, tier=tier, admit=True)
        buf = np.zeros(total, dtype=np.uint8)
        for o, seg in segments:
            if type(seg) is TierCopy:
                buf[o : o + len(seg)] = seg.run().numpy()
        assert (rs.codec == (0 if inflated else 1)).all()
        assert (rs.size >= stored).all() if inflated else (rs.size == stored).all()
        chunks = list(rs)
        for ch, at in zip(chunks, lays[col].at):  # the reference decoder reads each chunk's own bytes
            ch.source = buf[at : at + ch.source.size].tobytes()
        got = rd.decode_raw(chunks, data=torch.from_numpy(buf), layout=lays[col])[0]
        assert got.numpy().tolist() == t.column(col).to_pylist()


@pytest.fixture(scope="module")
def small_groups(cached_tpch, tmp_path_factory):
    """TPC-H SF 0.01 rewritten in row groups of 1,000 rows (snappy): many
    column chunks per scan chunk, and a tier of a few MiB evicts."""
    src = cached_tpch(0.01)
    out = tmp_path_factory.mktemp("tpch_groups")
    for f in sorted(src.glob("*.parquet")):
        pq.write_table(pq.read_table(f), out / f.name, row_group_size=1000, compression="snappy")
    return out


@pytest.mark.parametrize("limit", ["2MB", "64MB"])
def test_tpch_through_the_page_tier_equals_duckdb(small_groups, device, limit):
    """Every TPC-H query twice, its columns decoded from their pages as
    stored, the device cache emptied before each run: the second run's
    pages come from the host tier (64 MB: all of them; 2 MB: slabs evicted
    and filled again). Results equal DuckDB's each time."""
    duck = tpch.duckdb_tpch_connection(small_groups)
    con = glint.connect(device=device, parquet_decode="raw", host_cache_limit=limit, chunk_rows=4096)
    tpch.load_tpch(con, directory=small_groups, progress=False)
    tier = con.memory.pages
    assert tier is not None
    hits = 0
    for n in range(1, 23):
        sql = tpch.tpch_query(n)
        want = tpch.duckdb_arrow(duck, sql)
        for _ in range(2):
            con.drop_cache()
            res = con.sql(sql)
            diffs = compare_query_result(sql, res.arrow(), want)
            assert not diffs, f"Q{n}:\n" + "\n".join(diffs)
            hits += res.io.tier_bytes
    assert hits > 0 and tier.filled_bytes > 0
    assert tier.bytes <= glint.runtime.memory.parse_size(limit)
    if limit == "2MB":
        assert tier.evictions > 0
    else:
        assert tier.evictions == 0
    duck.close()


def uploaded(up, fake_cuda) -> dict:
    """A StackedUpload's columns, its windows staged by three threads (CUDA stubbed)."""
    with fake_cuda.executor(3) as ex:
        up.start(ex)
        got, _ = up.finish()
    return got


def assert_chunks_in_place(buf, cols: dict, lays: dict) -> None:
    """Each raw chunk's bytes at its offset in the uploaded buffer ``buf``
    (``cols``: column -> its chunks; ``lays``: layout_raw_together's layouts)."""
    data = buf.numpy().copy()
    for name, chunks in cols.items():
        for ch, at in zip(chunks, lays[name].at):
            assert data[at : at + ch.source.size].tobytes() == ch.source.read()


@pytest.mark.parametrize("window", [64, 1 << 20])
def test_stacked_upload_copies_tier_runs_beside_the_windows(tmp_path, fake_cuda, window):
    """StackedUpload with a raw buffer whose chunks lie partly in files and
    partly in the tier (CUDA stubbed): the windows stop where the tier's
    runs start, every chunk's bytes land at its offset, and the slabs are
    free again once the upload is finished (or cancelled)."""
    from glint.io import transfer
    from glint.runtime.memory import MemoryManager

    path = tmp_path / "f.bin"
    path.write_bytes(bytes(j % 253 for j in range(50_000)))

    def cols():
        return {
            "a": _raw_set([str(path)], [(0, s, 700) for s in (0, 9000, 30_000)]),
            "b": _raw_set([str(path)], [(0, s, 90) for s in (800, 20_000, 40_000)]),
        }

    tier = PageTier(2048, slab_bytes=1024)  # room for some chunks only
    mem = MemoryManager(torch.device("cpu"), 1 << 30)
    for _ in range(3):
        c = cols()
        lays, total, segments = rd.layout_raw_together(c, gap=0, tier=tier, admit=True)
        kinds = {type(s) for _, s in segments}
        assert kinds == {TierCopy, fr.FileRuns}
        up = transfer.StackedUpload(fake_cuda.pool(window), mem, {}, "consumer stream", raw={"raw": (total, segments)})
        got = uploaded(up, fake_cuda)
        assert_chunks_in_place(got["raw"], c, lays)
        assert all(s.pins == 0 for s in tier._slabs)
    assert tier.hits > 0
    # cancelled before it ran: the slabs it placed chunks in are free again
    lays, total, segments = rd.layout_raw_together(cols(), gap=0, tier=tier, admit=True)
    up = transfer.StackedUpload(fake_cuda.pool(window), mem, {}, "consumer stream", raw={"raw": (total, segments)})
    up.cancel()
    assert all(s.pins == 0 for s in tier._slabs)


def test_uncompressed_pages_larger_than_a_block_equal_duckdb(tmp_path, device):
    """Uncompressed pages of 200 KB (copied in 64 KiB blocks on the GPU),
    read from their file and then from the tier: equal to DuckDB."""
    import duckdb

    rng = np.random.default_rng(2)
    n = 300_000
    schema = pa.schema([pa.field("k", pa.int64(), nullable=False), pa.field("g", pa.int32(), nullable=False)])
    t = pa.table({"k": rng.integers(-(2**40), 2**40, n), "g": rng.integers(0, 7, n).astype(np.int32)}, schema=schema)
    path = str(tmp_path / "t.parquet")
    pq.write_table(t, path, compression="none", use_dictionary=["g"], data_page_size=200_000, row_group_size=100_000)
    sql = "SELECT g, sum(k), count(*), min(k), max(k) FROM t GROUP BY g ORDER BY g"
    want = duckdb.connect().execute(sql.replace("FROM t", f"FROM '{path}'")).arrow()
    if hasattr(want, "read_all"):
        want = want.read_all()
    con = glint.connect(device=device, parquet_decode="raw", host_cache_limit="64MB")
    con.read_parquet(path, "t")
    # On CUDA the tier's slabs are pinned by a thread its first scan starts and
    # never waited for: the first run reads the file alone, the next places the
    # chunks in the tier, and a later one reads them from there.
    served = []
    for _ in range(5):
        con.drop_cache()
        res = con.sql(sql)
        diffs = compare_query_result(sql, res.arrow(), want)
        assert not diffs, "\n".join(diffs)
        served.append(res.io.tier_bytes)
        if res.io.tier_bytes:
            break
    assert served[-1] > 0, served


def test_a_rewritten_file_is_not_served_from_the_tier(tmp_path):
    """The tier's chunks are keyed by the file's size, modification time and
    inode as well: a file rewritten at the same path, same offsets, is read
    again; and chunks filled after a drop do not come back."""
    import os

    path = tmp_path / "f.bin"
    path.write_bytes(b"a" * 4096)
    tier = PageTier(MIB, slab_bytes=1 << 16)
    first = _place(tier, [100], [0], str(path))
    tier.fill(first)
    tier.release(first)
    path.write_bytes(b"b" * 4096)
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # (a coarse clock could keep the time)
    again = _place(tier, [100], [0], str(path))
    assert again.fresh.all()
    tier.fill(again)
    tier.release(again)
    hit = _place(tier, [100], [0], str(path), admit=False)
    assert hit.held().all() and tier.view(int(hit.slab[0]), int(hit.offset[0]), 100).numpy().tobytes() == b"b" * 100
    tier.release(hit)
    # placed, then the tier dropped, then filled: used by its scan, not kept
    late = _place(tier, [100], [200], str(path))
    tier.drop()
    tier.fill(late)
    tier.release(late)
    assert not _place(tier, [100], [200], str(path), admit=False).held().any()


def test_the_default_host_tier_is_shared_by_the_ranks_of_a_host(monkeypatch):
    from glint.runtime import memory

    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    monkeypatch.delenv("GLINT_DIST_WORLD", raising=False)
    total = memory.host_memory_total()
    monkeypatch.setattr(memory, "host_memory_available", lambda: total)  # a host with all of it free
    one = memory.default_host_cache_limit(torch.device("cuda"))
    assert one == int(total * 0.4)
    monkeypatch.setenv("GLINT_DIST_WORLD", "4")
    assert memory.default_host_cache_limit(torch.device("cuda")) == one // 4
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")  # torchrun's count of this host's ranks
    assert memory.default_host_cache_limit(torch.device("cuda")) == one // 2
    assert memory.default_host_cache_limit(torch.device("cpu")) == 0
    # less free than 40% / 0.6: 60% of what is free (another program holding the rest)
    monkeypatch.setattr(memory, "host_memory_available", lambda: total // 2)
    assert memory.default_host_cache_limit(torch.device("cuda")) == int(total // 2 * 0.6) // 2


def test_pinned_slabs_come_from_the_pinning_thread_without_waiting(monkeypatch, tmp_path):
    """With pinned slabs (CUDA), a scan never waits for pinning: its first
    chunks stay in their files while the pinning thread makes spare slabs,
    which later chunks take; the limit bounds spare slabs too; close() stops
    the thread. (Pinning is stubbed: plain memory.)"""
    import time

    from glint.io import page_tier

    real = torch.empty
    monkeypatch.setattr(page_tier.torch, "empty", lambda *a, pin_memory=False, **k: real(*a, **k))
    path = _file(tmp_path)
    tier = PageTier(3 * MIB, slab_bytes=MIB)
    tier.pinned = True
    first = _place(tier, [1000], [0], path)
    assert not first.held().any()  # no spare slab yet: read from the file
    deadline = time.monotonic() + 10
    while tier.bytes < 3 * MIB and time.monotonic() < deadline:
        time.sleep(0.01)
    assert tier.bytes == 3 * MIB  # spare slabs up to the limit, no further
    later = _place(tier, [1000, 2000], [0, 5000], path)
    assert later.held().all()
    tier.fill(later)
    tier.release(later)
    tier.close()
    assert not tier._pinner.is_alive() and tier not in page_tier._OPEN


def test_runs_with_many_fresh_chunks_are_filled_in_pieces(tmp_path, monkeypatch):
    """A run of fresh chunks is cut into pieces of about FILL_PIECE_BYTES,
    each its own TierCopy (filled side by side); a run found whole in the
    tier is one copy again; every chunk's bytes land at its offset."""
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(j % 241 for j in range(40_000)))
    monkeypatch.setattr(rd, "FILL_PIECE_BYTES", 1000)

    def cols():
        return {"a": _raw_set([str(path)], [(0, s, 300) for s in range(0, 30_000, 1000)])}

    tier = PageTier(MIB, slab_bytes=1 << 16)
    for fresh_pieces in (True, False):
        c = cols()
        lays, total, segments = rd.layout_raw_together(c, gap=0, tier=tier, admit=True)
        copies = [(o, seg) for o, seg in segments if type(seg) is TierCopy]
        assert len(copies) == (8 if fresh_pieces else 1)  # 30 chunks of 300 bytes: 4 a piece
        buf = np.zeros(total, dtype=np.uint8)
        for o, seg in copies:
            buf[o : o + len(seg)] = seg.run().numpy()
        copies[0][1].placement.tier.release(copies[0][1].placement)
        for ch, at in zip(c["a"], lays["a"].at):
            assert buf[at : at + 300].tobytes() == ch.source.read()


def test_a_drop_asked_for_is_not_an_eviction():
    """Dropping a table's chunks (a table replaced, the cache emptied) does not
    tell the tiers that the device is short of room: they keep taking chunks
    only once the cache has had to evict for room."""
    mm = MemoryManager("cpu", 1 << 20)
    tier = PageTier(1 << 20, always=False)
    assert mm.cache_put(("table", 1, 0, 0, "a"), object(), 1000)
    assert mm.cache_drop(lambda k: k[1] == 1) == 1000
    assert mm.evictions == 0 and not tier.admits(mm)
    assert mm.cache_put(("table", 2, 0, 0, "a"), object(), 600_000)
    mm.begin_run()
    assert mm.cache_put(("table", 3, 0, 0, "a"), object(), 600_000)  # evicts table 2's chunk for room
    assert mm.evictions == 1 and tier.admits(mm)


def test_a_memory_limit_set_fills_the_tiers_from_the_first_scan():
    """Under a device memory limit the user set, the tables are expected not to
    fit: both halves of the host tier take chunks before any eviction, so a
    chunk the device cache held first and evicted later is not read from its
    file again. Under the default budget they wait for an eviction."""
    mm = MemoryManager("cpu", 1 << 20)
    tier, host = PageTier(1 << 20, always=False), HostCache(1 << 20, always=False)
    assert not tier.admits(mm) and not host.admits(mm)
    mm.limit_set = True
    assert tier.admits(mm) and host.admits(mm)
    con = glint.connect(device="cpu", memory_limit="256MB")
    default = glint.connect(device="cpu")
    assert con.memory.limit_set and not default.memory.limit_set
    default.sql("SET memory_limit = '512MB'")
    assert default.memory.limit_set
    default.sql("RESET memory_limit")
    assert not default.memory.limit_set
