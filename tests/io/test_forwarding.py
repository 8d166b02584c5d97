"""IO forwarding (glint.io.forwarding): a copy's pieces over the executing
GPU's own link and over helper GPUs' links. On the CPU the forwarder's
logic runs with CUDA stubbed (tests/io/conftest.py's fake_cuda, the helper
"GPUs" being host memory): every byte lands where it belongs whichever link
took it, the upload waits for the helpers before it hands its columns out,
and a pinned buffer is reused only after every copy out of it. With two
GPUs or more the copies and a TPC-H run go through real peers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glint
from glint.errors import GlintError
from glint.io import forwarding as fw
from glint.io import raw_decode as rd
from glint.io import transfer
from glint.io.page_tier import PageTier
from glint.runtime.memory import MemoryManager
from glint.runtime.settings import Settings
from glint.testing.compare import compare_query_result
from glint.workloads import tpch
from tests.io.test_page_tier import _raw_set, assert_chunks_in_place, uploaded


class FakeStream:
    """A CUDA stream's interface: remembers the streams it was made to wait for."""

    def __init__(self, device=None, name="stream"):
        self.device, self.name = device, name
        self.waited: list = []

    def wait_event(self, ev):
        pass

    def wait_stream(self, other):
        self.waited.append(other)


@pytest.fixture
def fake_forwarding(fake_cuda, monkeypatch):
    """CUDA stubbed, with streams and helper GPUs that are host memory."""
    monkeypatch.setattr(torch.cuda, "Stream", FakeStream)
    monkeypatch.setattr(fw, "_helper_device", lambda k: torch.device("cpu"))
    return fake_cuda


@pytest.mark.parametrize("n,piece,links,turn", [(0, 8, 3, 0), (1, 8, 3, 2), (64, 8, 4, 1), (1000, 7, 3, 5)])
def test_pieces_cover_the_copy_and_take_the_links_in_turn(n, piece, links, turn):
    got = fw.pieces(n, piece, links, turn)
    assert [s for _, s, _ in got] == list(range(0, n, piece))
    assert all(e - s == min(piece, n - s) for _, s, e in got)
    assert [k for k, _, _ in got] == [(turn + i) % links for i in range(len(got))]


@pytest.mark.parametrize("size", [1, 15, 16, 17, 100, 333])
def test_forwarded_copies_land_whole(fake_forwarding, size):
    """Copies of every size, in pieces of 16 bytes over four links, many
    more pieces than a helper has bounce buffers: the destination holds
    the source, and the bytes counted as forwarded are the helpers' pieces."""
    f = fw.Forwarder(torch.device("cpu"), [1, 2, 3], piece=16)
    stream = FakeStream(name="copy")
    rng = np.random.default_rng(size)
    sent = 0
    for _ in range(3):
        src = torch.from_numpy(rng.integers(0, 256, size, dtype=np.uint8))
        dst = torch.zeros(size, dtype=torch.uint8)
        turn = f._turn
        forwarded, events = f.copy(dst, src, stream)
        assert torch.equal(dst, src)
        want = sum(e - s for k, s, e in fw.pieces(size, 16, 4, turn) if k)
        assert forwarded == want
        # a source buffer is free after an event per forwarded piece and one for the direct ones
        links = [k for k, _, _ in fw.pieces(size, 16, 4, turn)]
        assert len(events) == sum(1 for k in links if k) + (0 in links)
        sent += forwarded
    f.join(stream)
    assert stream.waited == [h.pull for h in f.helpers]
    assert sent > 0 or size <= 16


def test_an_upload_through_a_forwarder_equals_one_without(fake_forwarding, tmp_path):
    """StackedUpload of host columns and of Parquet chunks partly in files
    and partly in the host tier, with a forwarder and without: each chunk's
    bytes where they belong; with it, some went over the helpers; the copy stream waited for every
    helper before the columns were handed out; each pinned window was given
    back with the events of every copy out of it."""
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(j % 251 for j in range(60_000)))
    host = {"x": [glint.columnar.column.Column.from_arrow(__import__("pyarrow").array(list(range(3000))))]}

    def raw():
        return {
            "a": _raw_set([str(path)], [(0, s, 700) for s in (0, 9000, 30_000, 41_000)]),
            "b": _raw_set([str(path)], [(0, s, 90) for s in (800, 20_000, 40_000)]),
        }

    tier = PageTier(4096, slab_bytes=2048)
    mem = MemoryManager(torch.device("cpu"), 1 << 30)
    for forwarder in (None, fw.Forwarder(torch.device("cpu"), [1, 2], piece=256)):
        c = raw()
        lays, total, segments = rd.layout_raw_together(c, gap=0, tier=tier, admit=True)
        pool = fake_forwarding.pool(512)
        released = []
        release = pool.release
        pool.release = lambda buf, ev: (released.append(ev), release(buf, ev))
        copy = FakeStream(name="copy")
        up = transfer.StackedUpload(
            pool, mem, dict(host), "consumer", raw={"raw": (total, segments)}, copy_stream=copy, forwarder=forwarder
        )
        got = uploaded(up, fake_forwarding)
        assert_chunks_in_place(got["raw"], c, lays)
        assert got["x"].data.tolist() == list(range(3000))
        if forwarder is None:
            assert up.forwarded == 0 and copy.waited == []
            assert all(not isinstance(ev, list) for ev in released)
        else:
            assert 0 < up.forwarded < up.bytes
            assert copy.waited == [h.pull for h in forwarder.helpers]
            assert all(isinstance(ev, list) and ev for ev in released)


def test_forwarding_is_off_where_it_cannot_help(monkeypatch):
    """No forwarder on the CPU, with io_forwarding off, or on a rank of a
    distributed run; the setting takes auto, on and off only."""
    assert fw.forwarder(torch.device("cpu"), "on") is None
    assert fw.forwarder(torch.device("cpu"), "auto") is None
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert fw.in_distributed_run()
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert not fw.in_distributed_run()
    assert Settings().io_forwarding == "off"
    assert Settings.build({"io_forwarding": "off"}).io_forwarding == "off"
    with pytest.raises(GlintError, match="io_forwarding"):
        Settings.build({"io_forwarding": "sideways"})
    con = glint.connect(device="cpu")
    assert con.sql("SELECT current_setting('io_forwarding')").arrow().column(0).to_pylist() == ["off"]


two_gpus = pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs two CUDA devices"
)


@pytest.mark.gpu
@two_gpus
def test_forwarded_copies_on_peers():
    """Real peers: copies of odd sizes from pinned memory, from four
    threads at once, equal their sources once the stream has joined."""
    from concurrent.futures import ThreadPoolExecutor

    f = fw.Forwarder(torch.device("cuda:0"), fw.peers(torch.device("cuda:0")), piece=1 << 20)
    assert f.helpers
    stream = torch.cuda.Stream("cuda:0")
    gen = torch.Generator().manual_seed(0)
    sizes = [1, (1 << 20) - 1, 1 << 20, 5 * (1 << 20) + 7, 37 * (1 << 20) + 3]
    srcs = [torch.randint(0, 256, (n,), dtype=torch.uint8, generator=gen).pin_memory() for n in sizes * 4]
    dsts = [torch.empty(s.numel(), dtype=torch.uint8, device="cuda:0") for s in srcs]
    with ThreadPoolExecutor(4) as ex:
        done = list(ex.map(lambda i: f.copy(dsts[i], srcs[i], stream), range(len(srcs))))
    f.join(stream)
    stream.synchronize()
    assert sum(n for n, _ in done) > 0
    for s, d in zip(srcs, dsts):
        assert torch.equal(d.cpu(), s)
    f.calibrate(64 << 20, 1)
    assert f.direct_gbps > 0 and f.forwarded_gbps > 0


@pytest.mark.gpu
@two_gpus
def test_tpch_forwarded_from_the_host_tier_equals_duckdb(cached_tpch):
    """TPC-H with io_forwarding on, the device cache dropped before each
    run so that every chunk crosses from the host tier: results equal
    DuckDB's, and some of the bytes went over other GPUs' links."""
    d = cached_tpch(0.1)
    duck = tpch.duckdb_tpch_connection(d)
    con = glint.connect(device="cuda:0", io_forwarding="on", host_cache_limit="4GB", chunk_rows=1 << 18)
    tpch.load_tpch(con, directory=d, progress=False)
    forwarded = 0
    for n in range(1, 23):
        sql = tpch.tpch_query(n)
        want = tpch.duckdb_arrow(duck, sql)
        for _ in range(2):
            con.drop_cache()
            res = con.sql(sql)
            assert compare_query_result(sql, res.arrow(), want) == [], n
            forwarded += res.io.forwarded_bytes
    assert forwarded > 0


def test_a_forwarder_that_cannot_be_made_leaves_copies_on_the_own_link(fake_forwarding, monkeypatch):
    """Where the forwarder's set-up fails (its calibration raises), auto
    copies over the device's own link, on is an error that says why, and
    the bench reports it."""
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)
    monkeypatch.setattr(fw, "peers", lambda d: [1, 2, 3])
    monkeypatch.setattr(fw, "_FORWARDERS", {})
    monkeypatch.setattr(fw, "FAILED", {})
    monkeypatch.delenv("WORLD_SIZE", raising=False)

    def broken(self, *a):
        raise RuntimeError("peer access refused")

    monkeypatch.setattr(fw.Forwarder, "calibrate", broken)
    cuda0 = torch.device("cuda", 0)
    assert fw.forwarder(cuda0, "auto") is None
    with pytest.raises(GlintError, match="io_forwarding = on.*peer access refused"):
        fw.forwarder(cuda0, "on")
    assert fw.forwarding_info(cuda0, "auto")["error"].endswith("peer access refused")
    assert fw.forwarder(cuda0, "off") is None
