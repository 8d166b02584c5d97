"""The Triton string kernels under the Triton interpreter, against the torch
code they replace, and the Parquet page kernels against pyarrow. Run by
tests/kernels/test_string_kernels.py in a process started with
TRITON_INTERPRET=1 (the variable must be set before Triton is first imported);
not collected on its own (no test_ prefix)."""

from __future__ import annotations

import os
import random

import pytest
import torch

from glint.kernels.strings import counting, equality, hashing, search
from glint.kernels.strings import gather as G
from glint.kernels.strings.pieces import from_strings
from tests.kernels.test_string_kernels import GOLDEN, python_hash, random_strings, scattered

pytestmark = pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1", reason="needs TRITON_INTERPRET=1")


def test_gather():
    p = scattered(random_strings(7, n=60)).take(torch.randint(0, 60, (80,), generator=torch.Generator().manual_seed(2)))
    offsets = torch.zeros(81, dtype=torch.int64)
    offsets[1:] = torch.cumsum(p.lengths, 0)
    out = torch.empty(int(offsets[-1]), dtype=torch.uint8)
    G._gather_triton(p, offsets, out)
    ref = torch.empty_like(out)
    G._gather_torch(p, offsets, ref)
    assert torch.equal(out, ref)


def test_hash():
    strings = random_strings(8, n=80) + list(GOLDEN)
    p = scattered(strings)
    out = torch.empty(len(p), dtype=torch.int64)
    hashing._hash_triton(p, out)
    ref = torch.empty_like(out)
    hashing._hash_torch(p, ref)
    assert torch.equal(out, ref) and out.tolist() == [python_hash(s) for s in strings]


@pytest.mark.parametrize("what", [counting._CHARS, counting._NON_ASCII])
def test_counts(what):
    p = scattered(random_strings(9, n=80))
    out, ref = torch.zeros(len(p), dtype=torch.int64), torch.zeros(len(p), dtype=torch.int64)
    counting._count_triton(p, what, out)
    counting._count_torch(p, what, ref)
    assert torch.equal(out, ref)


@pytest.mark.parametrize("lit", ["special", "requests", "a", "é日", "ab" * 5, "\x00"])
def test_find(lit):
    strings = random_strings(10, n=80)
    p = scattered(strings)
    rng = random.Random(len(lit))
    pos = torch.tensor([rng.choice([-1, 0, 0, 2, 50]) for _ in strings])
    out = torch.full((len(p),), -1, dtype=torch.int64)
    search._find_triton(p, lit.encode(), pos, out)
    ref = torch.full((len(p),), -1, dtype=torch.int64)
    search._find_torch(p, lit.encode(), pos, ref)
    assert torch.equal(out, ref)


@pytest.mark.parametrize(
    "block, listed",
    [(16, 1), (1024, 1), (1024, 0), (1024, 10**6), (64, 10**6)],
    ids=["small blocks", "listed", "one pass", "always listed", "small blocks always listed"],
)
@pytest.mark.parametrize("lit", ["special", "requests", "a", "é日", "ab" * 5, "\x00", "ial"])
def test_find_in_contiguous_strings(lit, block, listed, monkeypatch):
    """The flat search, with its matches listed first and then looked up, and in one pass."""
    monkeypatch.setattr(search, "_FLAT_BLOCK", block)
    monkeypatch.setattr(search, "_FLAT_LISTED_PER_STRING", listed)
    strings = random_strings(12, n=80) + [""] * 40 + ["x" * 3000 + "special"] + random_strings(13, n=20)
    for pad in range(4):  # the literal at the buffer's end, with the buffer's length changing
        _find_in_contiguous_strings(strings + ["sp", "ab", "y" * pad + lit], lit)
    _find_in_contiguous_strings(["", ""], lit)  # no bytes at all


def _find_in_contiguous_strings(strings, lit):
    from glint.kernels.strings.pieces import Pieces

    full = from_strings(strings)
    p = Pieces(full.data, full.starts, full.lengths, contiguous=True).slice(min(3, len(strings) - 1), len(strings))
    rng = random.Random(len(lit))
    pos = torch.tensor([rng.choice([-1, 0, 0, 2, 50]) for _ in range(len(p) - 1)] + [0])
    out = torch.full((len(p),), -1, dtype=torch.int64)
    search._find_flat_triton(p, lit.encode(), pos, out)
    ref = torch.full((len(p),), -1, dtype=torch.int64)
    search._find_torch(p, lit.encode(), pos, ref)
    assert torch.equal(out, ref)


@pytest.mark.parametrize(
    "lits",
    [["special", "requests"], ["requests"], ["a"], ["é日", "ab"], ["ab" * 4], ["ab" * 5, "x"], ["\x00"], ["q" * 16]]
    + [["ial", "ial", "s"], ["sp", "ab", "ab", "y"]],
)
def test_find_seq(lits):
    """The per-string scan for literals in turn (one to sixteen bytes, both
    registers, overlapping and repeated literals) against the torch search of
    one literal after another, from varying start positions."""
    strings = random_strings(12, n=80) + [""] * 10 + ["x" * 300 + "special", "specialrequests", "requestsspecial"]
    strings += ["ab" * 9 + "x", "q" * 15, "q" * 17, "\x00\x00", "spabab" + "y", "ialialis", "ialials"]
    full = from_strings(strings)
    from glint.kernels.strings.pieces import Pieces

    for a in (0, 3):  # the whole buffer, and a slice of it (starts no longer at 0)
        p = Pieces(full.data, full.starts, full.lengths, contiguous=True).slice(a, len(strings))
        rng = random.Random(len(lits))
        pos = torch.tensor([rng.choice([-1, 0, 0, 2, 5]) for _ in range(len(p))])
        enc = [s.encode() for s in lits]
        out = torch.empty(len(p), dtype=torch.int64)
        search._find_seq_triton(p, enc, pos, out)
        ref = pos
        for lit in enc:
            start = torch.full((len(p),), -1, dtype=torch.int64)
            search._find_torch(p, lit, ref, start)
            ref = torch.where(start >= 0, start + len(lit), -1)
        assert torch.equal(out, ref), (lits, a)


def test_pair_equal():
    strings = random_strings(11, n=80)
    other = [s if i % 2 else s[::-1] for i, s in enumerate(strings)]
    a, b = scattered(strings), from_strings(other)
    got = equality._pair_equal_triton(a, b) & (a.lengths == b.lengths)
    assert got.tolist() == [x == y for x, y in zip(strings, other)]


def test_parquet_hybrid_streams():
    """glint.kernels.hybrid (one program per RLE / bit-packed stream) against
    the host-parsed torch reference, on random streams of every width and on
    the dictionary-index streams of pages pyarrow wrote."""
    from tests.io.test_parquet_pages import hybrid_streams, page_index_streams

    data, starts, ends, widths, counts = hybrid_streams(seed=3, n=40)
    from glint.io.parquet_pages import decode_streams

    ref = decode_streams(data, starts, ends, widths, counts, use_triton=False)
    got = decode_streams(data, starts, ends, widths, counts, use_triton=True)
    assert torch.equal(got, ref)
    data, starts, ends, widths, counts = page_index_streams()
    assert torch.equal(
        decode_streams(data, starts, ends, widths, counts, use_triton=True),
        decode_streams(data, starts, ends, widths, counts, use_triton=False),
    )


def test_parquet_column_chunks_with_the_hybrid_kernel(tmp_path, monkeypatch):
    """decode_column_chunk with the pages decoded by the Triton kernel equals
    pyarrow: NULLs (v1 and v2 pages), wide dictionaries, a chunk that falls
    back to PLAIN pages, codecs."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from glint.kernels import hybrid
    from tests.io.test_parquet_pages import check_file, random_array

    calls = []
    real = hybrid.decode_pages_triton
    monkeypatch.setattr(hybrid, "decode_pages_triton", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(4)
    for i, (version, distinct, nulls, codec) in enumerate(
        [("1.0", 100, 0.2, "snappy"), ("2.0", 70000, 0.0, "zstd"), ("2.0", 3, 0.5, "none"), ("1.0", None, 0.1, "gzip")]
    ):
        t = pa.table(
            {
                "x": random_array(rng, "int64", 5000, distinct, nulls),
                "f": random_array(rng, "float64", 5000, distinct, nulls, nans=True),
                "d": random_array(rng, "int32", 5000, distinct, 0.0),
            }
        )
        path = str(tmp_path / f"t{i}.parquet")
        pq.write_table(
            t,
            path,
            data_page_version=version,
            compression=codec,
            data_page_size=1024,
            write_batch_size=128,
            row_group_size=3000,
            dictionary_pagesize_limit=4000,
        )
        check_file(path, use_triton=True)
    assert len(calls) >= 12  # every chunk, the PLAIN pages of the fallback included


def test_parquet_pages_kernel_many_chunks(tmp_path):
    """glint.kernels.hybrid's page kernel (indices decoded and values gathered
    per page, PLAIN pages copied) over the plans of many column chunks at
    once equals the torch reference and pyarrow: NULLs (v1 and v2 pages),
    dictionary-to-PLAIN fallback, widths 0 to 17, several files."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from glint.io import parquet_pages as pp
    from tests.io.test_parquet_pages import expected, random_array

    rng = np.random.default_rng(6)
    for dtype in ("int64", "float64", "int32"):
        plans, want, want_valid = [], [], []
        for i, (version, distinct, nulls) in enumerate(
            [("1.0", 100, 0.2), ("2.0", 70000, 0.0), ("2.0", 1, 0.5), ("1.0", None, 0.1), ("2.0", 3, 0.0)]
        ):
            t = pa.table({"x": random_array(rng, dtype, 4000, distinct, nulls, nans=True)})
            path = str(tmp_path / f"{dtype}{i}.parquet")
            pq.write_table(
                t,
                path,
                data_page_version=version,
                data_page_size=1024,
                write_batch_size=128,
                row_group_size=1500,
                dictionary_pagesize_limit=4000,
            )
            pf = pq.ParquetFile(path)
            for rg in range(pf.metadata.num_row_groups):
                plans.append(pp.plan_column_chunk(path, rg, 0, pf.metadata))
                v, ok = expected(pf, rg, 0)
                want.append(v)
                want_valid.append(ok)
        got, valid, err = pp.decode_plans(plans, use_triton=True)
        pp.check_decoded(err)
        ref, ref_valid, _ = pp.decode_plans(plans, use_triton=False)
        assert got.numpy().tobytes() == ref.numpy().tobytes() == np.concatenate(want).tobytes()
        assert torch.equal(valid, ref_valid) and valid.numpy().tolist() == np.concatenate(want_valid).tolist()


def test_parquet_pages_kernel_flags_bad_indices(tmp_path):
    """An index past the dictionary sets the kernel's error flag (and reads
    nothing); so does an index stream that ends before its page's values."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from glint.errors import GlintIOError
    from glint.io import parquet_pages as pp

    path = str(tmp_path / "t.parquet")
    pq.write_table(pa.table({"x": pa.array([i % 5 for i in range(1000)], pa.int64())}), path)
    plan = pp.plan_column_chunk(path, 0, 0)
    pp.check_decoded(pp.decode_plans([plan], use_triton=True)[2])
    small = pp.ChunkPlan(
        plan.dtype, plan.rows, plan.stored, 3, plan.hyb, plan.vals, plan.vals_bytes, plan.streams, plan.levels
    )  # a dictionary of 3 entries: indices 3, 4 are past it
    with pytest.raises(GlintIOError, match="past the dictionary"):
        pp.check_decoded(pp.decode_plans([small], use_triton=True)[2], "x")
    with pytest.raises(GlintIOError, match="'x'"):
        pp.decode_plans([small], use_triton=False, column="x")
    st, end, w, k = plan.streams[0]
    short = pp.ChunkPlan(
        plan.dtype,
        plan.rows,
        plan.stored,
        plan.dict_n,
        plan.hyb,
        plan.vals,
        plan.vals_bytes,
        [(st, st + 2, w, k)] + plan.streams[1:],
        plan.levels,
    )
    with pytest.raises(GlintIOError):
        pp.check_decoded(pp.decode_plans([short], use_triton=True)[2])


def test_parquet_raw_snappy():
    """glint.kernels.parquet_raw's snappy kernel against pa.Codec: literals
    of every length form, copies with 1-, 2- and 4-byte offsets, overlapping
    copies; a body whose size is not its header's, or that is cut short,
    sets the flag."""
    from tests.io.test_parquet_raw import inflate, snappy_cases

    cases = snappy_cases(small=True)
    got, err = inflate(cases, "cpu")
    assert err == 0 and got == cases
    assert inflate(cases[:3], "cpu", lambda r: r[2].__setitem__(3, r[2][3] - 1))[1] == 1
    assert inflate(cases[:3], "cpu", lambda r: r[2].__setitem__(1, r[2][1] - 3))[1] == 1


@pytest.mark.parametrize("dtype", ["int64", "float64", "int32", "float32"])
def test_parquet_raw_chunks(tmp_path, dtype):
    """decode_raw with the Triton kernels (headers walked, pages inflated,
    values gathered) equals pyarrow: v1 and v2 pages, snappy and
    uncompressed, dictionaries falling back to PLAIN, TPC-H's lineitem."""
    import numpy as np

    from glint.io import parquet_pages as pp
    from glint.io import raw_decode as rd
    from tests.io.test_parquet_raw import raw_file, tpch_raw_columns

    rng = np.random.default_rng(3)
    chunks, want = [], []
    for version, codec in (("1.0", "snappy"), ("2.0", "none")):
        c, w = raw_file(str(tmp_path / f"{version}{codec}"), dtype, rng, version, codec, (50, None, 1), n=1500)
        chunks += c
        want.append(w)
    got, _, err = rd.decode_raw(chunks, use_triton=True)
    pp.check_decoded(err)
    assert got.numpy().tobytes() == np.concatenate(want).tobytes()
    if dtype == "int64":
        for name, chunks, want in tpch_raw_columns():
            if name != "l_quantity":  # (a dictionary of 50: the interpreter is slow per element)
                continue
            got, _, err = rd.decode_raw(chunks[:1], use_triton=True, column=name)
            pp.check_decoded(err, name)
            assert got.numpy().tobytes() == want[: chunks[0].rows].tobytes(), name


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_parquet_raw_optional_columns(tmp_path, dtype):
    """decode_raw with the Triton kernels of optional columns without NULLs:
    v1 pages' definition levels checked and skipped by the page kernel
    (pages of up to 37 values: PLAIN values at odd offsets after the
    levels), v2 pages' levels left out by the walk; pyarrow's values. A
    chunk whose levels hold NULLs after all (its statistics said none) is
    an error: on v1 pages the page kernel's flag, on v2 pages the walk's."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from glint.errors import GlintIOError
    from glint.io import parquet_pages as pp
    from glint.io import raw_chunks as rc
    from glint.io import raw_decode as rd
    from tests.io.test_parquet_raw import _entry_ignoring_statistics, raw_file

    rng = np.random.default_rng(8)
    chunks, want = [], []
    for version, codec in (("1.0", "snappy"), ("2.0", "none"), ("1.0", "none")):
        c, w = raw_file(
            str(tmp_path / f"{version}{codec}"), dtype, rng, version, codec, (50, None), n=700, batch=37, nullable=True
        )
        chunks += c
        want.append(w)
    got, _, err = rd.decode_raw(chunks, use_triton=True)
    pp.check_decoded(err)
    assert got.numpy().tobytes() == np.concatenate(want).tobytes()
    for version in ("1.0", "2.0"):
        # levels bit-packed, an RLE run of 0s, one NULL (a dictionary page's bit-packed indices then
        # hold as many values as the page says, padding included: only the levels tell)
        for nulls in (lambda i: i % 50 == 7, lambda i: 100 <= i < 140, lambda i: i == 123):
            p = str(tmp_path / f"nulls{version}.parquet")
            x = pa.array([None if nulls(i) else i for i in range(300)], pa.int64())
            pq.write_table(pa.table({"x": x}), p, data_page_version=version)
            lying = rc.read_raw(p, _entry_ignoring_statistics(p), "nulls rg 0")
            with pytest.raises(GlintIOError, match="nulls rg 0|bad page data"):
                values, _, err = rd.decode_raw([lying], use_triton=True)
                pp.check_decoded(err)


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_parquet_raw_columns_with_nulls(tmp_path, dtype):
    """decode_raw with the Triton kernels of optional columns holding NULLs
    (scattered, in runs longer than a block, whole pages; v1 pages' levels
    in the decompressed buffer, v2 pages' in the bytes as stored;
    dictionary and PLAIN pages at any offset), beside chunks without NULLs
    (their rows kept in place): pyarrow's values and validity, exactly and
    without waiting; decode_raw_many with a column without NULLs beside."""
    import numpy as np

    from glint.io import parquet_pages as pp
    from glint.io import raw_decode as rd
    from tests.io.test_parquet_raw import raw_file, raw_file_with_nulls

    rng = np.random.default_rng(31)
    parts = [
        raw_file_with_nulls(
            str(tmp_path / f"{version}{codec}"), dtype, rng, version, codec, (50, None, 1), n=1500, nulls=True
        )
        for version, codec in (("1.0", "snappy"), ("2.0", "none"))
    ]
    c, w = raw_file(str(tmp_path / "ones"), dtype, rng, "1.0", "snappy", (50,), n=1500, nullable=True)
    parts.insert(1, (c, w, np.ones(len(w), dtype=bool)))
    chunks = [x for p in parts for x in p[0]]
    want = np.concatenate([p[1] for p in parts])
    valid = np.concatenate([p[2] for p in parts])
    for exact in (True, False):
        got, ok, err = rd.decode_raw(chunks, use_triton=True, exact=exact)
        pp.check_decoded(err)
        assert np.array_equal(ok.numpy(), valid)
        assert got.numpy()[valid].tobytes() == want[valid].tobytes()
        assert not got.numpy()[~valid].any()


def test_parquet_raw_all_null_chunks(tmp_path):
    from tests.io.test_parquet_raw import check_all_null_chunks

    check_all_null_chunks(tmp_path, use_triton=True)


def test_parquet_raw_columns_decoded_together(tmp_path):
    """decode_raw_many: columns of different value sizes (int64, int32,
    float64), some chunks with host-decompressed dictionaries, laid out one
    after the other in one buffer, decoded by one pass of the kernels:
    pyarrow's values, each column's own."""
    import numpy as np

    from glint.io import parquet_pages as pp
    from glint.io import raw_decode as rd
    from tests.io.test_parquet_raw import raw_file

    rng = np.random.default_rng(5)
    items, wants, bufs, base = [], [], [], 0
    for i, dtype in enumerate(["int64", "int32", "float64"]):
        chunks, want = raw_file(
            str(tmp_path / dtype), dtype, rng, ("1.0", "2.0")[i % 2], "snappy", (50, None, 1), n=1500
        )
        if i == 0:
            chunks = [c.with_host_dictionary() if c.dict_span else c for c in chunks]
        layout = rd.layout_raw(chunks)
        items.append((chunks, layout, base))
        wants.append(want)
        b = pp.fill_layout(layout)
        bufs.append(b)
        base += b.numel()
        bufs.append(torch.zeros(8, dtype=torch.uint8))  # not a multiple of 8: bases need not be
        base += 8 + 5
        bufs.append(torch.zeros(5, dtype=torch.uint8))
    data = torch.cat(bufs)
    import contextlib

    asked = []

    @contextlib.contextmanager
    def room(nbytes):  # the scan's memory manager makes room for this much (and holds its lock)
        asked.append(nbytes)
        yield

    got, _, err = rd.decode_raw_many(items, data, room)
    pp.check_decoded(err)
    assert [g.numpy().tobytes() for g in got] == [w.tobytes() for w in wants]
    assert len(asked) == 1 and asked[0] >= sum(g.numel() * g.element_size() for g in got)


def test_snappy_pages_split_into_blocks():
    """split_pages cuts a snappy page where an element starts at a multiple
    of 64 KiB of output (pa.Codec's encoder, like tpchgen's, compresses 64
    KiB at a time), found by the segment scan without walking the page from
    its start; a page with a copy reaching back past such a point, or whose
    blocks are not at 64 KiB, is decompressed whole; all come out as the
    input."""
    import numpy as np
    import pyarrow as pa

    from glint.kernels import parquet_raw as K

    rng = np.random.default_rng(4)
    x = rng.integers(0, 256, 70000, dtype=np.uint8).tobytes()
    y = rng.integers(0, 10**6, 9000).astype(np.int64).tobytes()  # short literals and copies
    # a literal of 64 KiB, then a copy of 64 bytes from 64 KiB back (a 4-byte offset)
    lit = rng.integers(0, 256, 65536, dtype=np.uint8).tobytes()
    z = (
        bytes([0xC0, 0x80, 0x04])
        + bytes([61 << 2])
        + (65535).to_bytes(2, "little")
        + lit
        + bytes([(63 << 2) | 3])
        + (65536).to_bytes(4, "little")
    )
    # a literal of 65,537 bytes: no element starts at 64 KiB
    w = rng.integers(0, 256, 65540, dtype=np.uint8).tobytes()
    v = (
        bytes([0x84, 0x80, 0x04])
        + bytes([62 << 2])
        + (65536).to_bytes(3, "little")
        + w[:65537]
        + bytes([2 << 2])
        + w[65537:]
    )
    codec = pa.Codec("snappy")
    streams = [codec.compress(x, asbytes=True), codec.compress(y, asbytes=True), z, v]
    outs = [x, y, lit + lit[:64], w]
    data, rows, o, d = b"", [], 3, 0
    for s, out in zip(streams, outs):
        rows.append([o, len(s), d, len(out), K.SNAPPY])
        data += bytes(3) + s
        o += len(s) + 3
        d += (len(out) + 7) // 8 * 8
    src = torch.frombuffer(bytearray(data + bytes(8)), dtype=torch.uint8)
    pages = torch.tensor(rows)
    blocks, owner, whole = K.split_pages(src, pages, d + 16)
    used = blocks[:, K.P_USIZE] > 0
    assert whole.tolist() == [0, 0, 0, 1]
    assert owner[used].tolist() == [0, 0, 1, 1] + [2, 2]
    assert blocks[used, K.P_USIZE].tolist() == [65536, 70000 - 65536, 65536, 72000 - 65536, 65536, 64]
    assert blocks[used][2, K.P_SRC] == rows[1][0] + 3  # after the 3-byte length
    assert blocks[used][4:, K.P_SRC].tolist() == [rows[2][0] + 3, rows[2][0] + len(z) - 5]
    dst = torch.zeros(d + 16, dtype=torch.uint8)
    err = torch.zeros(1, dtype=torch.int32)
    K.inflate_pages_triton(src, dst, pages, err)
    b = bytes(dst.numpy())
    assert int(err) == 0 and [b[r[2] : r[2] + len(out)] for r, out in zip(rows, outs)] == outs


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_parquet_raw_host_dictionaries(tmp_path, version):
    """Chunks whose dictionary page the host decompressed (the scan's way
    for large dictionaries: RawChunk.with_host_dictionary) decode to the
    same values, counted first or not, mixed with chunks left as stored."""
    import numpy as np

    from glint.io import parquet_pages as pp
    from glint.io import raw_decode as rd
    from tests.io.test_parquet_raw import raw_file

    rng = np.random.default_rng(8)
    chunks, want = raw_file(str(tmp_path / "d"), "int64", rng, version, "snappy", (50, None, 300, 1), n=1400)
    mixed = [c.with_host_dictionary() if i % 2 == 0 else c for i, c in enumerate(chunks)]
    assert sum(c.dictionary is not None for c in mixed) >= 2
    for exact in (True, False):
        got, _, err = rd.decode_raw(mixed, use_triton=True, exact=exact)
        pp.check_decoded(err)
        assert got.numpy().tobytes() == want.tobytes()


def test_parquet_raw_bad_header_names_the_chunk(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from glint.errors import GlintIOError
    from glint.io import raw_chunks as rc
    from glint.io import raw_decode as rd
    from tests.io.test_parquet_raw import _corrupt_header

    p = str(tmp_path / "h.parquet")
    pq.write_table(
        pa.table({"x": list(range(500))}, schema=pa.schema([pa.field("x", pa.int64(), nullable=False)])),
        p,
        use_dictionary=False,
    )
    _corrupt_header(p)
    c = rc.read_raw_chunk(p, 0, 0, where="Parquet file 'h.parquet', row group 0")
    with pytest.raises(GlintIOError, match=r"h\.parquet', row group 0.*'x'.*bad page headers"):
        rd.decode_raw([c], use_triton=True, column="x")


def test_parquet_raw_without_counting_first(tmp_path):
    """decode_raw(exact=False), the scan's way: tables of pages_cap pages a
    chunk, no wait for the device. A chunk with more pages sets the flag
    (and the exact decode then gives every value)."""
    import numpy as np

    from glint.io import parquet_page_headers as ph
    from glint.io import parquet_pages as pp
    from glint.io import raw_decode as rd
    from tests.io.test_parquet_raw import raw_file

    rng = np.random.default_rng(5)
    few, want_few = raw_file(str(tmp_path / "few"), "int64", rng, distincts=(50, None), n=1000)
    assert all(len(ph.parse_pages(c.buf, "SNAPPY")) <= c.pages_cap() for c in few)
    got, _, err = rd.decode_raw(few, use_triton=True, exact=False)
    assert int(err.item()) == 0 and got.numpy().tobytes() == want_few.tobytes()
    many, want_many = raw_file(str(tmp_path / "many"), "int32", rng, distincts=(None,), n=1400, page_size=64, batch=16)
    assert max(len(ph.parse_pages(c.buf, "SNAPPY")) - c.pages_cap() for c in many) > 0
    assert int(rd.decode_raw(many, use_triton=True, exact=False)[2].item()) != 0
    got, _, err = rd.decode_raw(many, use_triton=True)
    pp.check_decoded(err)
    assert got.numpy().tobytes() == want_many.tobytes()


def test_parquet_raw_string_codes(tmp_path):
    """A string column's codes decoded by the Triton kernels (the host's
    dictionary as int32 codes, the data pages' indices gathered through it)
    equal the reference's; a chunk with PLAIN pages (the writer's fallback)
    sets the flag, where the same kernels take a numeric column's PLAIN
    pages as values."""
    import numpy as np

    from glint.io import parquet_pages as pp
    from glint.io import raw_chunks as rc
    from glint.io import raw_decode as rd
    from tests.io.test_parquet_raw import _string_chunks, string_file

    path = str(tmp_path / "s.parquet")
    t = string_file(path, np.random.default_rng(6), n=3000)
    d, mapped = rc.string_codes(_string_chunks(path, 1))
    for exact in (True, False):
        got, _, err = rd.decode_raw(mapped, use_triton=True, exact=exact)
        pp.check_decoded(err)
        assert d.to_arrow(got).to_pylist() == t.column("s").to_pylist()
    bad = rc.string_codes(_string_chunks(path, 2)[1:2])[1]
    assert int(rd.decode_raw(bad, use_triton=True, exact=False)[2].item()) != 0


def test_parquet_raw_decode_of_raw_sets(tmp_path):
    """The page kernels (glint.kernels.parquet_raw: page walk, snappy,
    values) over one scan chunk's raw columns laid out together and staged
    as the GPU's scan does it (RawSets of three value sizes and a string
    column's codes, FileRuns read window by window): pyarrow's values, and
    the flag set only where a row group's writer fell back to PLAIN pages
    in a column decoded as codes."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    import glint
    from glint.io import file_reads as fr
    from glint.io import raw_decode as rd
    from glint.io.transfer import _fill_window, _raw_writes
    from tests.io.test_parquet_raw import WORDS

    rng = np.random.default_rng(3)
    n = 3000
    schema = pa.schema(
        [
            pa.field(c, t, nullable=False)
            for c, t in (
                ("k", pa.int64()),
                ("i", pa.int32()),
                ("f", pa.float64()),
                ("s", pa.string()),
                ("u", pa.string()),
            )
        ]
    )
    t = pa.table(
        {
            "k": np.arange(n, dtype=np.int64) * 7,
            "i": rng.integers(-5, 5, n).astype(np.int32),
            "f": rng.random(n),
            "s": [WORDS[j] for j in rng.integers(0, len(WORDS), n)],
            "u": [f"u{j % 3}" if j < 1500 else f"unique {j}" for j in range(n)],
        },
        schema=schema,
    )
    path = str(tmp_path / "t.parquet")
    pq.write_table(
        t, path, row_group_size=1500, compression="snappy", data_page_size=2048, dictionary_pagesize_limit=4000
    )
    con = glint.connect(device="cpu")
    con.read_parquet(path, "t")
    tb = con.table("t")
    sets = {c: tb.raw_set([0, 1], c) for c in ("k", "i", "f", "s", "u")}
    dicts = {}
    for c in ("s", "u"):
        dicts[c], sets[c] = sets[c].with_strings(fr.FileHandles(), {}).with_codes()
    lays, total, segments = rd.layout_raw_together(sets)
    buf = np.zeros(total, dtype=np.uint8)
    k = 0
    for w in range(0, total, 4096):
        k = _fill_window(buf[w : w + 4096], w, min(4096, total - w), _raw_writes(segments), k)
    data = torch.from_numpy(buf)
    names = ["k", "i", "f", "s"]
    values, _, err = rd.decode_raw_many([(sets[c], lays[c], 0) for c in names], data)
    assert int(err) == 0
    for c, v in zip(names, values):
        want = t.column(c).to_pylist()
        assert (dicts[c].to_arrow(v).to_pylist() if c == "s" else v.tolist()) == want, c
    (u,), _, err = rd.decode_raw_many([(sets["u"], lays["u"], 0)], data)
    assert int(err) == 1  # row group 1's PLAIN pages: flagged, never read as codes
    first = rd.RawLayout(total, lays["u"].at[:1], [], lays["u"].dict_at[:1])
    (u,), _, err = rd.decode_raw_many([(sets["u"][:1], first, 0)], data)
    assert int(err) == 0 and dicts["u"].to_arrow(u).to_pylist() == t.column("u").to_pylist()[:1500]


def test_parquet_raw_uncompressed_pages_copied_in_blocks(tmp_path):
    """Uncompressed pages larger than a block (SPLIT bytes) are copied in
    blocks side by side: every value equals pyarrow's."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    import glint
    from glint.io import raw_decode as rd
    from glint.io.transfer import _fill_window, _raw_writes
    from glint.kernels import parquet_raw as K

    rng = np.random.default_rng(7)
    n = 40_000
    schema = pa.schema([pa.field("k", pa.int64(), nullable=False)])
    t = pa.table({"k": rng.integers(-(2**62), 2**62, n)}, schema=schema)
    path = str(tmp_path / "t.parquet")
    pq.write_table(t, path, compression="none", use_dictionary=False, data_page_size=200_000, row_group_size=n)
    con = glint.connect(device="cpu")
    con.read_parquet(path, "t")
    rs = con.table("t").raw_set([0], "k")
    assert int(rs.codec[0]) == 0 and int(rs.usize[0]) > 2 * K.SPLIT
    lays, total, segments = rd.layout_raw_together({"k": rs})
    buf = np.zeros(total, dtype=np.uint8)
    k = 0
    for w in range(0, total, 1 << 20):
        k = _fill_window(buf[w : w + (1 << 20)], w, min(1 << 20, total - w), _raw_writes(segments), k)
    (v,), _, err = rd.decode_raw_many([(rs, lays["k"], 0)], torch.from_numpy(buf))
    assert int(err) == 0 and v.tolist() == t.column("k").to_pylist()


def test_parquet_raw_pages_with_padded_size_varints(tmp_path):
    """A snappy page of 2,047 random INT32 values: 8,188 bytes, stored as
    8,193 (snappy's literal), so its decompressed size needs one varint byte
    less than the header's compressed size had: the host tier writes it
    padded (glint.io.page_tier.inflate_pages), and the page walk reads it."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    import glint
    from glint.io import raw_decode as rd
    from glint.io.page_tier import PageTier, TierCopy, inflate_pages
    from glint.io.parquet_page_headers import parse_pages, read_chunk_bytes

    rng = np.random.default_rng(11)
    n = 2047 * 4
    schema = pa.schema([pa.field("k", pa.int32(), nullable=False)])
    t = pa.table({"k": rng.integers(-(2**31), 2**31 - 1, n).astype(np.int32)}, schema=schema)
    path = str(tmp_path / "t.parquet")
    pq.write_table(
        t, path, compression="snappy", use_dictionary=False, data_page_size=1, write_batch_size=2047, row_group_size=n
    )
    cc = pq.read_metadata(path).row_group(0).column(0)
    raw = bytes(read_chunk_bytes(path, cc))
    out = np.zeros(cc.total_uncompressed_size + 64, dtype=np.uint8)
    made = inflate_pages(raw, out)
    # four pages of 8,188 bytes, each stored in at least 8,192 (3 varint bytes, against 2 for 8,188)
    assert cc.total_compressed_size - cc.total_uncompressed_size >= 4 * 4
    assert made == cc.total_uncompressed_size  # the headers kept their widths
    con = glint.connect(device="cpu")
    con.read_parquet(path, "t")
    rs = con.table("t").raw_set([0], "k")
    tier = PageTier(1 << 20, slab_bytes=1 << 18)
    lays, total, segments = rd.layout_raw_together({"k": rs}, tier=tier, admit=True)
    buf = np.zeros(total, dtype=np.uint8)
    for o, seg in segments:
        assert type(seg) is TierCopy
        buf[o : o + len(seg)] = seg.run().numpy()
    assert int(rs.codec[0]) == 0 and int(rs.size[0]) == made
    assert [len(p.body) for p in parse_pages(out[:made].tobytes(), "UNCOMPRESSED")] == [8188] * 4
    (v,), _, err = rd.decode_raw_many([(rs, lays["k"], 0)], torch.from_numpy(buf))
    assert int(err) == 0 and v.tolist() == t.column("k").to_pylist()


def test_parquet_raw_columns_from_the_page_tier(tmp_path):
    """The same decode with part of the chunks held by the host tier of
    pages (glint.io.page_tier), their snappy undone by the host: the page
    walk takes them as uncompressed chunks, the others as stored, and every
    column equals pyarrow's, filled fresh and found again."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    import glint
    from glint.io import file_reads as fr
    from glint.io import raw_decode as rd
    from glint.io.page_tier import PageTier, TierCopy
    from glint.io.transfer import _fill_window, _raw_writes
    from tests.io.test_parquet_raw import WORDS

    rng = np.random.default_rng(5)
    n = 3000
    schema = pa.schema([pa.field("k", pa.int64(), nullable=False), pa.field("s", pa.string(), nullable=False)])
    t = pa.table({"k": rng.integers(0, 50, n), "s": [WORDS[j] for j in rng.integers(0, len(WORDS), n)]}, schema=schema)
    path = str(tmp_path / "t.parquet")
    pq.write_table(t, path, row_group_size=1000, compression="snappy", data_page_size=2048)
    con = glint.connect(device="cpu")
    con.read_parquet(path, "t")
    tb = con.table("t")
    tier = PageTier(6000, slab_bytes=3000)  # room for some chunks
    for _ in range(2):
        sets = {"k": tb.raw_set([0, 1, 2], "k")}
        d, sets["s"] = tb.raw_set([0, 1, 2], "s").with_strings(fr.FileHandles(), {}).with_codes()
        lays, total, segments = rd.layout_raw_together(sets, tier=tier, admit=True)
        assert any(type(seg) is TierCopy for _, seg in segments)
        buf = np.zeros(total, dtype=np.uint8)
        rest = [(o, seg) for o, seg in segments if type(seg) is not TierCopy]
        end = min([o for o, seg in segments if type(seg) is TierCopy])
        k = 0
        for w in range(0, end, 4096):
            k = _fill_window(buf[w : w + 4096], w, min(4096, end - w), _raw_writes(rest), k)
        for o, seg in segments:
            if type(seg) is TierCopy:
                buf[o : o + len(seg)] = seg.run().numpy()
                seg.placement.tier.release(seg.placement)
        values, _, err = rd.decode_raw_many([(sets[c], lays[c], 0) for c in ("k", "s")], torch.from_numpy(buf))
        assert int(err) == 0
        assert values[0].tolist() == t.column("k").to_pylist()
        assert d.to_arrow(values[1]).to_pylist() == t.column("s").to_pylist()
    assert tier.hits > 0


@pytest.mark.parametrize(
    "rows,groups,where",
    [
        (0, 2, False),
        (1, 1, False),
        (3000, 4, False),
        (140_000, 3, False),
        (2500, 17, False),
        (1200, 32, False),
        (0, 4096, False),
        (3000, 4096, False),
        (9000, 6000, False),
        (3000, 4, True),
        (2500, 1, True),
        (3000, 4096, True),
    ],
)
def test_group_sums(rows, groups, where):
    """kernels.group_reduce's Triton kernels (few groups: per-program
    accumulators; many: atomics) against their torch reference: exact limb
    sums of extreme BIGINTs, DOUBLE sums, counts with and without NULLs, one
    group without group ids, groups without rows, more columns than one launch
    reads; small values (a block summed in one reduction), values about the
    bound of that, and blocks of each kind in one column; with ``where``, a
    WHERE's mask that leaves rows out of every column."""
    from glint.kernels import group_reduce as R

    gen = torch.Generator().manual_seed(rows + groups)
    gid = None if groups == 1 else torch.randint(0, groups, (rows,), generator=gen)
    inputs = []
    for i in range(9):
        floating = i % 3 == 2
        if floating:
            v = torch.randn(rows, generator=gen, dtype=torch.float64) * 1e9
        else:
            v = torch.randint(-(2**63), 2**63 - 1, (rows,), generator=gen, dtype=torch.int64)
            if i == 3:
                v = torch.full((rows,), 2**63 - 1, dtype=torch.int64)  # the largest value, every row
            if i in (4, 6):
                v = torch.randint(-(10**12), 10**12, (rows,), generator=gen, dtype=torch.int64)
            if i == 6 and rows:
                v[::700] = -(2**63)  # a huge value in some blocks only
            if i == 7:
                # about the bound under which a block is summed in one reduction (2**51 .. 2**54)
                v = torch.randint(-1, 2, (rows,), generator=gen, dtype=torch.int64) * (2**53 + 5)
        valid = (torch.rand(rows, generator=gen) < 0.6) if i % 2 else None
        inputs.append(R.SumInput(v, valid, floating))
    mask = (torch.rand(rows, generator=gen) < 0.3) if where else None
    _check_group_sums(gid, groups, inputs, mask)
    if gid is not None and groups <= R.MAX_GROUPS:
        # group ids packed into int8, as a span of few groups comes (glint.exec.keys.group_key)
        _check_group_sums(gid.to(torch.int8), groups, inputs, mask)


@pytest.mark.parametrize("rows,groups", [(3000, 4), (5000, 7), (2500, 1)])
def test_group_sums_of_small_values(rows, groups):
    """Every column of a launch small (the blocks summed in one reduction per
    group, decided for all the columns of a block at once), with and without
    NULLs, beside DOUBLEs; then one column's single huge value making its block
    take the limbs in every column."""
    from glint.kernels import group_reduce as R

    gen = torch.Generator().manual_seed(rows + groups)
    gid = None if groups == 1 else torch.randint(0, groups, (rows,), generator=gen)
    inputs = []
    for i in range(6):
        if i == 2:
            v, floating = torch.randn(rows, generator=gen, dtype=torch.float64) * 1e9, True
        else:
            v, floating = torch.randint(-(10**12), 10**12, (rows,), generator=gen, dtype=torch.int64), False
        valid = (torch.rand(rows, generator=gen) < 0.7) if i in (1, 4) else None
        inputs.append(R.SumInput(v, valid, floating))
    _check_group_sums(gid, groups, inputs)
    inputs[3].values[rows // 2] = 2**63 - 1
    _check_group_sums(gid, groups, inputs)


def _check_group_sums(gid, groups, inputs, rows=None):
    from glint.kernels import group_reduce as R

    if groups <= R.MAX_GROUPS:
        got = R.group_sums_triton(gid, groups, inputs, rows)
    else:
        got = R.group_sums_atomic_triton(gid, groups, R._restricted(inputs, rows))
    # the reference: the rows the mask keeps, alone
    keep = None if rows is None else rows.nonzero().squeeze(1)
    if keep is not None:
        gid = None if gid is None else gid[keep]
        inputs = [R.SumInput(x.values[keep], None if x.valid is None else x.valid[keep], x.floating) for x in inputs]
    want = R.group_sums_torch(gid, groups, inputs)
    for (s, c), (rs, rc), x in zip(got, want, inputs):
        assert torch.equal(c, rc)
        if x.floating:
            assert torch.allclose(s, rs, rtol=1e-12)
        else:
            assert torch.equal(s, rs)


def _hash_cases():
    from tests.kernels.hash_cases import key_cases

    return key_cases()


@pytest.mark.parametrize("case", _hash_cases(), ids=lambda c: c[0])
def test_hash_table(case):
    """kernels.hash_table's Triton insert and probe kernels against the sorted
    reference: the same keys together, the same keys found, for empty,
    duplicate, extreme (the free-slot marker included), strided and skewed keys."""
    from glint.kernels import hash_table as H
    from glint.kernels import join as J
    from tests.kernels.hash_cases import same_partition

    _, build, probe = case
    s, ids = H.key_set(build, hashed=True)
    r, ref = H.key_set(build, hashed=False)
    assert s.size == r.size and same_partition(ids, ref)
    valid = torch.arange(probe.shape[0]) % 3 != 1
    got, want = s.lookup(probe, valid), r.lookup(probe, valid)
    assert torch.equal(got >= 0, want >= 0)
    assert same_partition(torch.cat([ids, got[got >= 0]]), torch.cat([ref, want[want >= 0]]))
    hb = J.HashBuild(build, torch.arange(build.shape[0]))
    pi, bi = J.expand_matches(hb, *J.match_counts(hb, probe, None))
    assert sorted(zip(pi.tolist(), bi.tolist())) == sorted(
        zip(*[t.tolist() for t in J.match_pairs(build, None, probe, None)])
    )


@pytest.mark.parametrize("case", _hash_cases(), ids=lambda c: c[0])
@pytest.mark.parametrize("build_kind", ["direct", "hashed"])
def test_match_offsets(case, build_kind):
    """The join probe that takes a key column as it is (its offset part, the
    range test, the table lookup and the counts in one kernel) against the
    encoding and match_counts it replaces: NULL keys, values outside the build's
    range, narrow integer columns, unique and repeated build keys."""
    from glint.kernels import join as J

    name, build, probe = case
    build = build[(build > -(2**61)) & (build < 2**61)]  # (parts are offsets below 2**62)
    lo, hi = (int(build.min()), int(build.max())) if build.numel() else (0, -1)
    part = build - lo
    rows = torch.arange(part.shape[0])
    if build_kind == "direct":
        if not part.numel() or int(part.max()) > 1 << 20:
            pytest.skip("keys too sparse for a direct build")
        b = J.DirectBuild(part, rows, int(part.min()), int(part.max()) - int(part.min()) + 1)
    else:
        b = J.HashBuild(part, rows)
    probe = torch.cat([probe, build[:50], torch.tensor([lo - 1, hi + 1, lo, hi])])
    valid = torch.arange(probe.shape[0]) % 5 != 3
    narrow = probe.to(torch.int32) if probe.abs().max() < 2**31 else probe
    for raw in (probe, narrow):
        for v in (None, valid):
            got = J._match_offsets_triton(b, raw, v, lo, hi)
            want = J.match_offsets_torch(b, raw, v, lo, hi)
            assert torch.equal(got[1], want[1]), (name, raw.dtype, v is None)
            hit = want[1] > 0
            assert torch.equal(got[0][hit], want[0][hit])
            pairs = J.expand_matches(b, *got)
            assert sorted(zip(*[t.tolist() for t in pairs])) == sorted(
                zip(*[t.tolist() for t in J.expand_matches(b, *want)])
            )


def test_fused_predicates():
    from tests.functions.test_fused_predicate import check_later_chunks, check_trees

    check_trees("cpu", count=40)
    check_later_chunks("cpu", count=12)


def test_fused_values():
    from tests.functions.test_fused_values import check_values

    check_values("cpu", count=40)


def test_fused_sums():
    from tests.functions.test_fused_sums import check_sums

    check_sums("cpu")


def test_fused_value_flags_queued():
    from tests.functions.test_deferred_checks import check_queued_kernel_flags

    check_queued_kernel_flags("cpu")


def test_partition_order():
    from tests.kernels.test_partition import check_triton_kernels

    check_triton_kernels()


@pytest.mark.parametrize(
    "rows,span,missing", [(1, 1, ()), (5000, 4, ()), (4000, 8, (2, 7)), (3000, 32, (0,)), (2500, 17, (16,))]
)
def test_few_group_ids(rows, span, missing):
    """kernels.group_reduce's first rows per group and the group ids built on
    them against torch.unique: every key of the span present or some absent
    (renumbered), keys offset from zero, first rows exact."""
    from glint.kernels import group_reduce as R
    from glint.kernels import groupby as G

    gen = torch.Generator().manual_seed(rows + span)
    k = torch.randint(0, span, (rows,), generator=gen)
    for m in missing:
        k[k == m] = (m + 1) % span
    key = k + 1000
    assert torch.equal(R.first_rows_triton(k, span), G.first_rows(k, span))
    assert torch.equal(R.first_rows_triton(k.to(torch.int8), span), G.first_rows(k, span))
    gid, n, first = R.few_group_ids_triton(key, 1000, 1000 + span - 1)
    uniq, inverse = torch.unique(key, return_inverse=True)
    assert n == uniq.shape[0] and torch.equal(gid, inverse)
    assert torch.equal(first, G.first_rows(inverse, n))
    # every value of the span a group, the absent ones included (no host synchronisation)
    got, want = R.span_group_ids_triton(key, 1000, 1000 + span - 1), R.span_group_ids_torch(key, 1000, 1000 + span - 1)
    assert got[1] == want[1] == span and torch.equal(got[0], want[0]) and torch.equal(got[2], want[2])
    # a narrow key from zero (TPC-H Q1's packed flags): the ids are the key itself, no copy
    got = R.span_group_ids_triton(k.to(torch.int8), 0, span - 1)
    assert got[0].dtype == torch.int8 and torch.equal(got[0].long(), k) and torch.equal(got[2], want[2])


@pytest.mark.parametrize("n,most", [(1, 1), (300, 0), (700, 5), (1000, 40), (257, 256)])
def test_expand_matches(n, most):
    """kernels.join's Triton expansion of match ranges into (probe, build)
    pairs against its torch reference: rows without matches, one row, many
    matches a row, ranges anywhere in the build's row order."""
    from glint.kernels import join as J

    gen = torch.Generator().manual_seed(n + most)
    counts = torch.randint(0, most + 1, (n,), generator=gen)
    rows = torch.randperm(4 * most + 10, generator=gen)
    lo = torch.randint(0, 3 * most + 10, (n,), generator=gen)
    total = int(counts.sum())
    got = J.expand_triton(rows, lo, counts, total)
    want = J.expand_torch(rows, lo, counts, total)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])


@pytest.mark.parametrize("rows,parts", [(1, 1), (3000, 2), (2500, 4), (1100, 6)])
def test_pack(rows, parts):
    """kernels.pack's Triton kernel against its torch reference: int32, int64
    and boolean parts, offsets, more parts than one launch reads."""
    from glint.kernels import pack as K

    gen = torch.Generator().manual_seed(rows + parts)
    cols, los, needs = [], [], []
    for i in range(parts):
        lo = [-5, 0, 1000][i % 3]
        if i % 3 == 1:
            cols.append(torch.rand(rows, generator=gen) < 0.5)
            lo, need = 0, 1
        else:
            span = [7, 40000, 3][i % 3]
            cols.append(
                torch.randint(lo, lo + span, (rows,), generator=gen, dtype=torch.int32 if i % 2 else torch.int64)
            )
            need = (span - 1).bit_length()
        los.append(lo)
        needs.append(need)
    shifts = [sum(needs[j + 1 :]) for j in range(parts)]
    assert torch.equal(K.pack_triton(cols, los, shifts), K.pack_torch(cols, los, shifts))
    if sum(needs) < 8:
        # keys below 128 packed into int8 (the group ids of a few groups' span)
        narrow = K.pack_triton(cols, los, shifts, torch.int8)
        assert narrow.dtype == torch.int8 and torch.equal(narrow.long(), K.pack_torch(cols, los, shifts))


def test_civil_fields():
    """kernels.calendar's one-pass year / month / day / quarter against
    civil_from_days: days before 0000-03-01 (floor division), leap days,
    the ends of DATE's range, int32 and int64 input."""
    from glint.kernels import calendar as C

    gen = torch.Generator().manual_seed(7)
    days = torch.cat(
        [
            torch.randint(-800_000, 800_000, (3000,), generator=gen),
            torch.tensor([0, -1, 11016, 11017, -719468, -719469, -719528, 2**31 - 2, -(2**31) + 2]),
        ]
    )
    for d in (days, days.to(torch.int32)):
        for field in C.FIELDS:
            assert torch.equal(C.civil_field_triton(d, field), C.civil_field_torch(d, field)), field


@pytest.mark.parametrize("n,at", [(1, 0), (7, 3), (4096, 0), (4100, 4), (70_001, 8), (65_536, 1)])
def test_peer_copy(n, at):
    """glint.kernels.peer_copy's kernel (in 8-, 4- and 1-byte words, by the
    alignment of the ranges) against torch's copy."""
    from glint.kernels.peer_copy import pull

    src = torch.randint(0, 256, (n + at,), dtype=torch.uint8, generator=torch.Generator().manual_seed(n))[at:]
    dst = torch.zeros(n + 16, dtype=torch.uint8)
    pull(dst[at : at + n], src, interpret=True)
    assert torch.equal(dst[at : at + n], src) and not dst[:at].any() and not dst[at + n :].any()


@pytest.mark.parametrize("rows,parts", [(1, 1), (3000, 2), (2500, 3), (1100, 4)])
def test_pack_checked(rows, parts):
    """kernels.pack's checked packing (a join's probe keys against the build's
    ranges) against its torch reference: int32, int64 and boolean parts,
    values below, inside and above each range, NULL masks on some parts."""
    from glint.kernels import pack as K

    gen = torch.Generator().manual_seed(rows * 7 + parts)
    cols, valids, los, his, needs = [], [], [], [], []
    for i in range(parts):
        if i % 3 == 1:
            cols.append(torch.rand(rows, generator=gen) < 0.5)
            lo, hi = 0, 1
        else:
            lo = [-5, 0, 2**40][i % 3]
            hi = lo + [7, 40000, 3][i % 3]
            dtype = torch.int64 if lo > 2**31 or i % 2 == 0 else torch.int32
            cols.append(torch.randint(lo - 4, hi + 5, (rows,), generator=gen, dtype=dtype))
        valids.append(torch.rand(rows, generator=gen) < 0.8 if i % 2 else None)
        los.append(lo)
        his.append(hi)
        needs.append(max(1, (hi - lo).bit_length()))
    shifts = [sum(needs[j + 1 :]) for j in range(parts)]
    key, ok = K.pack_checked_triton(cols, valids, los, his, shifts)
    want_key, want_ok = K.pack_checked_torch(cols, valids, los, his, shifts)
    assert torch.equal(ok, want_ok) and torch.equal(key, want_key)
    if rows > 1:
        assert 0 < int(ok.sum()) < rows  # both kinds of rows are there


@pytest.mark.parametrize("unique", [True, False])
def test_direct_build(unique):
    """kernels.join's direct build (counts by atomics, a flag for a key seen
    twice, unique keys' rows placed by a second kernel) against its torch
    reference: the same counts, starts, uniqueness and row order."""
    from glint.kernels import join as J

    gen = torch.Generator().manual_seed(5 + unique)
    lo, span = 1000, 3000
    if unique:
        key = torch.randperm(span, generator=gen)[:2000] + lo
    else:
        key = torch.randint(lo, lo + span, (2500,), generator=gen)
    rows = torch.randperm(5000, generator=gen)[: key.shape[0]]
    got, want = J.DirectBuild.__new__(J.DirectBuild), J.DirectBuild.__new__(J.DirectBuild)
    for b in (got, want):
        b.lo, b.span = lo, span
    got._place_triton(key, rows)
    want._place_torch(key, rows)
    assert got.unique == want.unique == unique
    assert torch.equal(got.counts, want.counts) and torch.equal(got.starts, want.starts)
    assert torch.equal(got.rows, want.rows)
