"""Column chunks decoded from their bytes as stored (glint.io.parquet_pages
.decode_raw; on CUDA glint.kernels.parquet_raw walks the page headers and
decompresses snappy on the GPU), compared with what pyarrow reads. The
kernels run interpreted on the CPU in tests/kernels/triton_interpreted.py, compiled
here for sm_90 without a GPU, and on CUDA where there is one."""

import logging
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

import glint
from glint.errors import GlintIOError
from glint.io import file_reads as fr
from glint.io import parquet_page_headers as ph
from glint.io import parquet_pages as pp
from glint.io import raw_chunks as rc
from glint.io import raw_decode as rd
from tests.io.test_parquet_pages import TPCH_LINEITEM, expected, random_array

CUDA = torch.cuda.is_available()
_ARROW = {"int32": pa.int32(), "int64": pa.int64(), "float32": pa.float32(), "float64": pa.float64()}


def raw_file(path, dtype, rng, version="1.0", codec="snappy", *args, **kwargs):
    """A file of one column ``x`` (required, or ``nullable``: optional
    without NULLs, its pages carrying definition levels) with row groups of
    several kinds (small and large dictionaries, a dictionary that falls
    back to PLAIN, one value): its raw chunks and pyarrow's values (the
    arguments: raw_file_with_nulls')."""
    chunks, want, _ = raw_file_with_nulls(path, dtype, rng, version, codec, *args, **kwargs)
    return chunks, want


def null_mask(rng, n: int) -> np.ndarray:
    """NULLs in every pattern the levels take: scattered (bit-packed
    levels), runs of NULLs and of values longer than a kernel block (RLE),
    and a stretch of NULLs only."""
    mask = rng.random(n) < 0.3
    mask[n // 5 : n // 5 + 700] = True
    mask[n // 2 : n // 2 + 600] = False
    mask[-n // 8 :] = True
    return mask


def raw_file_with_nulls(
    path,
    dtype,
    rng,
    version="1.0",
    codec="snappy",
    distincts=(50, None, 3000, 1),
    n=3000,
    page_size=1024,
    batch=128,
    nullable=False,
    nulls=False,
):
    """raw_file, and with ``nulls`` an optional column holding NULLs
    (null_mask): (raw chunks, pyarrow's values with NULLs as 0, validity)."""
    chunks, want, valid = [], [], []
    schema = pa.schema([pa.field("x", _ARROW[dtype], nullable=nullable or nulls)])
    for i, distinct in enumerate(distincts):
        p = f"{path}{i}.parquet"
        x = random_array(rng, dtype, n, distinct, 0.0, nans=True)
        if nulls:
            x = pa.array(x.to_numpy(zero_copy_only=False), mask=null_mask(rng, n))
        t = pa.table({"x": x}, schema=schema)
        pq.write_table(
            t,
            p,
            compression=codec,
            data_page_version=version,
            data_page_size=page_size,
            write_batch_size=batch,
            row_group_size=1400,
            dictionary_pagesize_limit=4000,
        )
        pf = pq.ParquetFile(p)
        for rg in range(pf.metadata.num_row_groups):
            c = rc.read_raw_chunk(p, rg, 0, pf.metadata, where=f"{p} rg {rg}")
            mode = rc.LEVELS_NULLS if nulls else rc.LEVELS_ONES if nullable else rc.LEVELS_NONE
            assert c is not None and (c.levels == mode or (nulls and c.levels == rc.LEVELS_ONES))
            chunks.append(c)
            v, ok = expected(pf, rg, 0)
            want.append(v)
            valid.append(ok)
    return chunks, np.concatenate(want), np.concatenate(valid)


WORDS = ["AIR", "MAIL", "SHIP", "TRUCK", "RAIL", "FOB", "REG AIR", "", "ünï"]


def string_file(path, rng, n=4500, version="1.0", codec="snappy", first=0):
    """A file of low-cardinality required string columns, row groups of
    1,500 rows: ``s`` dictionary-encoded throughout; ``u`` too in its first
    row group, then with thousands of distinct values, so that the writer's
    dictionary fills up and it falls back to PLAIN pages (a chunk the GPU
    cannot decode as codes: flagged); ``k`` counts from ``first``. Returns
    the table written."""
    s = [WORDS[i] for i in rng.integers(0, len(WORDS), n)]
    u = [f"u{i % 3}" if i < 1500 else f"unique value {i}" for i in range(n)]
    schema = pa.schema(
        [
            pa.field("k", pa.int64(), nullable=False),
            pa.field("s", pa.string(), nullable=False),
            pa.field("u", pa.string(), nullable=False),
        ]
    )
    t = pa.table({"k": np.arange(first, first + n, dtype=np.int64), "s": s, "u": u}, schema=schema)
    pq.write_table(
        t,
        path,
        compression=codec,
        data_page_version=version,
        row_group_size=1500,
        dictionary_pagesize_limit=2000,
        data_page_size=1024,
        write_batch_size=128,
    )
    return t


def tpch_raw_columns():
    """(name, raw chunks, pyarrow's values) of the integer columns of TPC-H's
    lineitem at SF 0.01 (DECIMALs as their unscaled integers: read through
    a footer without the DECIMAL annotations)."""
    import os

    from glint.io.parquet_meta import raw_footer

    if not os.path.exists(TPCH_LINEITEM):
        pytest.skip("TPC-H sf0.01 lineitem.parquet not generated")
    raw = raw_footer(TPCH_LINEITEM)
    pf = pq.ParquetFile(TPCH_LINEITEM, metadata=raw.metadata if raw else None)
    meta = pf.metadata
    for c in range(meta.num_columns):
        if meta.schema.column(c).physical_type in ("INT32", "INT64"):
            chunks = [rc.read_raw_chunk(TPCH_LINEITEM, rg, c, meta) for rg in range(meta.num_row_groups)]
            want = np.concatenate([expected(pf, rg, c)[0] for rg in range(meta.num_row_groups)])
            yield meta.schema.column(c).name, chunks, want


@pytest.mark.parametrize("codec", ["snappy", "none"])
@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_reference_equals_pyarrow(tmp_path, dtype, version, codec):
    rng = np.random.default_rng(len(dtype) + len(version) + len(codec))
    chunks, want = raw_file(str(tmp_path / "t"), dtype, rng, version, codec)
    got, _, err = rd.decode_raw(chunks, use_triton=False)
    assert err is None and got.numpy().tobytes() == want.tobytes()


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_reference_of_optional_columns_without_nulls(tmp_path, dtype, version):
    """An optional column without NULLs: its pages' definition levels are
    read and skipped (pages of 1 to 128 values: levels of 2 to 4 bytes, so
    PLAIN values start at any offset); a chunk whose levels hold a NULL
    after all (its statistics said none) is an error naming it."""
    rng = np.random.default_rng(11)
    chunks, want = raw_file(str(tmp_path / "t"), dtype, rng, version, "snappy", nullable=True, batch=37)
    got, _, err = rd.decode_raw(chunks, use_triton=False)
    assert err is None and got.numpy().tobytes() == want.tobytes()
    p = str(tmp_path / "nulls.parquet")
    pq.write_table(pa.table({"x": pa.array([1, None, 3], pa.int64())}), p, data_page_version=version)
    assert rc._raw_entry(pq.read_metadata(p).row_group(0).column(0), torch.int64, False, True)[-1] == rc.LEVELS_NULLS
    lying = rc.read_raw(p, _entry_ignoring_statistics(p), "nulls.parquet rg 0")
    with pytest.raises(GlintIOError, match=r"Cannot read nulls\.parquet rg 0: .*1 NULLs .*statistics say it has none"):
        rd.decode_raw([lying], use_triton=False)


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_reference_of_columns_with_nulls(tmp_path, dtype, version):
    """Optional columns holding NULLs (scattered, in long runs, whole
    pages), dictionary and PLAIN pages: values and validity as pyarrow's."""
    rng = np.random.default_rng(12)
    chunks, want, valid = raw_file_with_nulls(str(tmp_path / "t"), dtype, rng, version, "snappy", nulls=True)
    got, ok, err = rd.decode_raw(chunks, use_triton=False)
    assert err is None and ok is not None and np.array_equal(ok.numpy(), valid)
    assert got.numpy()[valid].tobytes() == want[valid].tobytes()


def check_all_null_chunks(tmp_path, use_triton: bool, device="cpu") -> None:
    """Chunks that hold only NULLs, or a few values among them, as v1 and v2
    pages, dictionary-encoded and PLAIN: decode_raw's validity and values
    (exactly and without waiting) are pyarrow's."""
    t = pa.table(
        {"x": pa.array([None] * 300 + [5] * 10 + [None] * 50, pa.int64()), "y": pa.array([None] * 360, pa.float64())}
    )
    for version in ("1.0", "2.0"):
        for dictionary in (True, False):
            p = str(tmp_path / f"n{version}{dictionary}.parquet")
            pq.write_table(t, p, data_page_version=version, use_dictionary=dictionary, row_group_size=200)
            md = pq.read_metadata(p)
            for col in (0, 1):
                chunks = [rc.read_raw_chunk(p, g, col, md) for g in range(md.num_row_groups)]
                want = t.column(col).is_valid().to_numpy(zero_copy_only=False)
                for exact in (True, False):
                    v, ok, err = rd.decode_raw(chunks, device, use_triton=use_triton, exact=exact)
                    pp.check_decoded(err)
                    v, ok = v.cpu().numpy(), ok.cpu().numpy()
                    assert np.array_equal(ok, want) and (v[want] == 5).all() and not v[~want].any()


def test_all_null_chunks_reference(tmp_path):
    check_all_null_chunks(tmp_path, use_triton=False)


def _entry_ignoring_statistics(path: str) -> tuple:
    """read_raw's entry of column 0, row group 0, of an optional INT64
    column, as if its statistics counted no NULLs."""
    cc = pq.read_metadata(path).row_group(0).column(0)
    start = cc.dictionary_page_offset if cc.has_dictionary_page else cc.data_page_offset
    span = cc.data_page_offset - start
    return (
        torch.int64,
        start,
        cc.total_compressed_size,
        cc.num_values,
        rc.RAW_CODECS[cc.compression],
        cc.total_uncompressed_size,
        span,
        False,
        rc.LEVELS_ONES,
    )


def test_tpch_lineitem_reference(cached_tpch):
    cached_tpch(0.01)
    for name, chunks, want in tpch_raw_columns():
        got, _, _ = rd.decode_raw(chunks, use_triton=False, column=name)
        assert got.numpy().tobytes() == want.tobytes(), name


def test_which_chunks_are_raw(tmp_path):
    """Only flat numeric columns (their definition levels decoded where
    the statistics do not say that there is no NULL), snappy or
    uncompressed, PLAIN or dictionary pages: everything else is planned on
    the host (or read by pyarrow)."""
    schema = pa.schema(
        [
            pa.field("req", pa.int64(), nullable=False),
            pa.field("nul", pa.int64()),
            pa.field("s", pa.string(), nullable=False),
            pa.field("f", pa.float32(), nullable=False),
            pa.field("opt", pa.int64()),
        ]
    )
    t = pa.table(
        {
            "req": list(range(100)),
            "nul": [None if i % 9 == 0 else i for i in range(100)],
            "s": ["a"] * 100,
            "f": [float(i) for i in range(100)],
            "opt": list(range(100)),
        },
        schema=schema,
    )
    for codec, ok in [("snappy", True), ("none", True), ("zstd", False), ("gzip", False)]:
        p = str(tmp_path / f"{codec}.parquet")
        pq.write_table(t, p, compression=codec)
        meta = pq.read_metadata(p)
        assert [rc.raw_readable(meta, 0, c) for c in range(5)] == [ok] * 5, codec
        assert (rc.read_raw_chunk(p, 0, 0) is None) == (not ok)
        levels = [rc.read_raw_chunk(p, 0, c).levels for c in (0, 1, 4)] if ok else None
        assert ok is False or levels == [rc.LEVELS_NONE, rc.LEVELS_NULLS, rc.LEVELS_ONES]
        assert (rc.read_raw_chunk(p, 0, 2) is None) == (not ok)
        assert ok is False or rc.read_raw_chunk(p, 0, 2).codes
    p = str(tmp_path / "delta.parquet")
    pq.write_table(t, p, use_dictionary=False, column_encoding={"req": "DELTA_BINARY_PACKED"})
    meta = pq.read_metadata(p)
    assert not rc.raw_readable(meta, 0, 0)
    assert not rc.raw_readable(meta, 0, 2)  # strings without a dictionary page: not as codes
    # an optional column's chunk without statistics: its levels decoded, as if it had NULLs
    p = str(tmp_path / "nostats.parquet")
    pq.write_table(t, p, write_statistics=False)
    assert rc.read_raw_chunk(p, 0, 4).levels == rc.LEVELS_NULLS


def _corrupt_header(path: str) -> None:
    """Overwrite the first data page header's type field with a page kind
    that does not exist (7)."""
    cc = pq.read_metadata(path).row_group(0).column(0)
    raw = bytearray(open(path, "rb").read())
    off = cc.data_page_offset
    assert raw[off] == 0x15  # field 1 (type), i32
    raw[off + 1] = 14  # zigzag(7)
    open(path, "wb").write(bytes(raw))


@pytest.mark.parametrize(
    "device", ["cpu", pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(not CUDA, reason="needs CUDA")])]
)
def test_bad_page_header_names_the_file_and_row_group(tmp_path, monkeypatch, device):
    path = tmp_path / "hdr.parquet"
    schema = pa.schema([pa.field("x", pa.int64(), nullable=False)])
    pq.write_table(pa.table({"x": list(range(1000))}, schema=schema), path, use_dictionary=False)
    _corrupt_header(str(path))
    monkeypatch.setenv("GLINT_PARQUET_DECODE", "device")
    con = glint.connect(device=device)
    with pytest.raises(GlintIOError, match=r"hdr\.parquet.*row group 0.*'.*x'.*(bad page|page type)"):
        con.sql(f"SELECT sum(x) FROM read_parquet('{path}')").arrow()


def test_host_dictionaries_on_the_cpu(tmp_path):
    """RawChunk.with_host_dictionary: the dictionary page decompressed on
    the host, the data pages left in the file; the reference decodes such
    chunks to pyarrow's values, from bytes read or still in the file. A
    chunk whose dictionary span is not one dictionary page is an error
    naming it."""
    rng = np.random.default_rng(9)
    chunks, want = raw_file(str(tmp_path / "d"), "int64", rng, "1.0", "snappy", (50, 300, None), n=1400)
    host = [c.with_host_dictionary() for c in chunks]
    with_dict = [c for c in host if c.dictionary is not None]
    assert with_dict and all(c.dict_span == 0 and c.dict_n > 0 for c in with_dict)
    got, _, err = rd.decode_raw(host, use_triton=False)
    assert err is None and got.numpy().tobytes() == want.tobytes()
    pf = pq.ParquetFile(str(tmp_path / "d0.parquet"))
    entry = rc.raw_index(pf.metadata, 0)[0]
    lazy = rc.read_raw(str(tmp_path / "d0.parquet"), entry, "d0 rg 0", lazy=True)
    assert isinstance(lazy.source, fr.FileRange) and lazy.dict_span > 0
    h = lazy.with_host_dictionary()
    assert isinstance(h.source, fr.FileRange) and h.nbytes < lazy.nbytes + len(h.dictionary)
    assert rd.decode_raw([h], use_triton=False)[0].numpy().tobytes() == want[: lazy.rows].tobytes()
    bad = rc.RawChunk(
        lazy.dtype, lazy.rows, lazy.codec, lazy.usize, lazy.source, "d0 rg 0", lazy.dict_span + 7
    )  # the span runs into the first data page
    with pytest.raises(GlintIOError, match="Cannot read d0 rg 0: "):
        bad.with_host_dictionary()


@pytest.mark.parametrize(
    "fn,sig",
    [
        (
            "_walk_kernel",
            {
                "data": "*u8",
                "chunks": "*i64",
                "counts": "*i64",
                "pages": "*i64",
                "dec": "*i64",
                "lev": "*i64",
                "ITEM": "constexpr",
                "WRITE": "constexpr",
            },
        ),
        (
            "_inflate_kernel",
            {
                "src": "*u8",
                "dst": "*u8",
                "pages": "*i64",
                "err": "*i32",
                "whole": "*i32",
                "owner": "*i64",
                "BLOCK": "constexpr",
                "MODE": "constexpr",
            },
        ),
        (
            "_scan_kernel",
            {
                "src": "*u8",
                "segs": "*i64",
                "n": "i64",
                "mark": "*i32",
                "exits": "*i64",
                "outs": "*i64",
                "BLOCK": "constexpr",
            },
        ),
        (
            "_sync_kernel",
            {
                "src": "*u8",
                "streams": "*i64",
                "segs": "*i64",
                "mark": "*i32",
                "exits": "*i64",
                "outs": "*i64",
                "entry": "*i64",
                "outat": "*i64",
                "whole": "*i32",
            },
        ),
        ("_find_kernel", {"src": "*u8", "walks": "*i64", "n": "i64", "starts": "*i64", "BLOCK": "constexpr"}),
    ],
)
@pytest.mark.parametrize("variant", [0, 1, 2])
def test_kernels_compile_for_hopper_without_a_gpu(fn, sig, variant):
    """Compiled Triton type-checks what the interpreter does not (both
    branches of an `if` assigning one type, loop bounds): sm_90, on the CPU."""
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from glint.kernels import parquet_raw as K

    if fn == "_walk_kernel":
        consts = {"ITEM": (4, 8, 8)[variant], "WRITE": bool(variant)}
    elif fn == "_inflate_kernel":
        consts = {"BLOCK": K.INFLATE_BLOCK, "MODE": variant}
    elif fn == "_sync_kernel":
        consts = {}
    else:
        consts = {"BLOCK": K.SCAN_BLOCK}
    k = triton.compile(ASTSource(fn=getattr(K, fn), signature=sig, constexprs=consts), target=GPUTarget("cuda", 90, 32))
    assert "ptx" in k.asm


# ------------------------------------------------------------------ on CUDA
@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="needs CUDA")
@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_cuda_equals_pyarrow(tmp_path, dtype, version):
    """Required columns, optional ones without NULLs (their levels
    skipped; pages of 37 values: PLAIN values at odd offsets) and with
    NULLs (their levels decoded), exactly and without waiting
    (decode_raw_many); chunks of NULLs only."""
    rng = np.random.default_rng(7)
    chunks, want, valid = [], [], []
    for codec in ("snappy", "none"):
        for nullable, nulls in ((False, False), (True, False), (True, True)):
            c, w, v = raw_file_with_nulls(
                str(tmp_path / f"{codec}{nullable}{nulls}"),
                dtype,
                rng,
                version,
                codec,
                batch=37,
                nullable=nullable,
                nulls=nulls,
            )
            chunks += c
            want.append(w)
            valid.append(v)
    want, valid = np.concatenate(want), np.concatenate(valid)
    for exact in (True, False):
        got, ok, err = rd.decode_raw(chunks, "cuda", exact=exact)
        pp.check_decoded(err)
        assert np.array_equal(ok.cpu().numpy(), valid)
        assert got.cpu().numpy()[valid].tobytes() == want[valid].tobytes()
    check_all_null_chunks(tmp_path, True, "cuda")


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="needs CUDA")
def test_cuda_tpch_lineitem(cached_tpch):
    cached_tpch(0.01)
    for name, chunks, want in tpch_raw_columns():
        got, _, err = rd.decode_raw(chunks, "cuda", column=name)
        pp.check_decoded(err, name)
        assert got.cpu().numpy().tobytes() == want.tobytes(), name


def snappy_cases(small: bool = False):
    """Inputs whose snappy forms have every kind of element: literals with
    their length in the tag and in 1-3 more bytes, copies with 1-, 2- and
    4-byte offsets (4: only past 64 KiB, not for ``small``: the interpreter
    takes a while per element), overlapping copies."""
    rng = np.random.default_rng(0)
    k = 10 if small else 1
    out = [
        b"",
        b"a",
        b"abcd" * (1000 // k),
        bytes(5000),
        rng.integers(0, 256, 70000, dtype=np.uint8).tobytes(),
        np.arange(3000 // k, dtype=np.int64).tobytes(),
        rng.integers(0, 10**6, 4000 // k).astype(np.int64).tobytes(),
        b"xyz" + bytes(300) + b"hello world " * 50 + rng.integers(0, 256, 300, dtype=np.uint8).tobytes() * 3,
    ]
    if not small:
        out.append(
            rng.integers(0, 256, 70, dtype=np.uint8).tobytes() * 4000
            + bytes(70000)
            + rng.integers(0, 256, 70, dtype=np.uint8).tobytes() * 100
        )
    return out


def inflate(inputs, device, damage=None):
    """The inputs compressed by pa.Codec('snappy'), decompressed by the
    kernel: (outputs, err). ``damage(rows)``: changes the page table first."""
    from glint.kernels import parquet_raw as K

    codec = pa.Codec("snappy")
    src, rows, o, outs = [], [], 0, 0
    for x in inputs:
        c = codec.compress(x, asbytes=True)
        rows.append([o, len(c), outs, len(x), K.SNAPPY])
        src.append(c)
        o += len(c)
        outs += (len(x) + 7) // 8 * 8
    if damage:
        damage(rows)
    data = torch.frombuffer(bytearray(b"".join(src) + bytes(8)), dtype=torch.uint8).to(device)
    dst = torch.zeros(outs + 16, dtype=torch.uint8, device=device)
    err = torch.zeros(1, dtype=torch.int32, device=device)
    K.inflate_pages_triton(data, dst, torch.tensor(rows, dtype=torch.int64).to(device), err)
    b = bytes(dst.cpu().numpy())
    return [b[r[2] : r[2] + len(x)] for x, r in zip(inputs, rows)], int(err.item())


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="needs CUDA")
def test_cuda_host_dictionaries(tmp_path):
    """On CUDA, chunks with host-decompressed dictionaries mixed with chunks
    as stored, read from the files through the layout: pyarrow's values."""
    rng = np.random.default_rng(10)
    chunks, want = raw_file(str(tmp_path / "d"), "int64", rng, "1.0", "snappy", (50, None, 300, 1), n=3000)
    mixed = [c.with_host_dictionary() if i % 2 else c for i, c in enumerate(chunks)]
    for exact in (True, False):
        got, _, err = rd.decode_raw(mixed, "cuda", exact=exact)
        pp.check_decoded(err)
        assert got.cpu().numpy().tobytes() == want.tobytes()


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="needs CUDA")
def test_cuda_snappy_equals_pyarrow():
    cases = snappy_cases()
    got, err = inflate(cases, "cuda")
    assert err == 0 and got == cases
    for damage in (
        lambda r: r[2].__setitem__(3, r[2][3] - 1),  # the header's size too small
        lambda r: r[2].__setitem__(1, r[2][1] - 3),
    ):  # the body cut short
        assert inflate(cases[:3], "cuda", damage)[1] == 1


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="needs CUDA")
def test_cuda_scan_of_chunks_with_many_pages(tmp_path, monkeypatch, caplog):
    """The scan decodes without counting pages first (tables of
    RawChunk.pages_cap pages a chunk); chunks with more pages fail the
    query's check at its end and are decoded again, exactly: the same
    answers as pyarrow's path."""
    rng = np.random.default_rng(11)
    schema = pa.schema([pa.field("x", pa.int64(), nullable=False), pa.field("y", pa.float64(), nullable=False)])
    t = pa.table(
        {"x": random_array(rng, "int64", 20000, 300, 0.0), "y": random_array(rng, "float64", 20000, None, 0.0)},
        schema=schema,
    )
    path = tmp_path / "many.parquet"
    pq.write_table(t, path, data_page_size=128, write_batch_size=32, row_group_size=5000)
    assert (
        max(
            len(ph.parse_pages(r.buf, "SNAPPY")) - r.pages_cap()
            for r in (rc.read_raw_chunk(str(path), 0, c) for c in (0, 1))
        )
        > 0
    )
    sql = f"SELECT x, y FROM read_parquet('{path}')"
    got = {}
    for mode in ("", "device"):
        monkeypatch.setenv("GLINT_PARQUET_DECODE", mode)
        with caplog.at_level(logging.INFO, logger="glint"):
            got[mode] = glint.connect(device="cuda", chunk_rows=7000).sql(sql).arrow()
    assert "failed its checks; running the query again" in caplog.text  # the checks at the end found them
    assert got[""].equals(got["device"])
    assert got[""].column("x").equals(t.column("x")) and got[""].column("y").equals(t.column("y"))


def _string_chunks(path, column):
    meta = pq.read_metadata(path)
    return [
        rc.read_raw(path, e, where=f"rg {g}", lazy=True).with_strings()
        for g, e in enumerate(rc.raw_index(meta, column))
    ]


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_string_codes_reference(tmp_path, version):
    """A string column's raw chunks (RawChunk.with_strings: the dictionary
    page's strings read on the host) mapped into one sorted dictionary
    (string_codes) decode to codes whose strings are pyarrow's; a chunk
    with PLAIN pages (the writer's fallback) is not codes: an error, never
    its string bytes taken for codes."""
    path = str(tmp_path / "s.parquet")
    t = string_file(path, np.random.default_rng(2), version=version)
    chunks = _string_chunks(path, 1)
    d, mapped = rc.string_codes(chunks)
    assert d.sorted_unique and d.to_pylist() == sorted(set(WORDS), key=str.encode)
    codes, _, err = rd.decode_raw(mapped)
    assert err is None and d.to_arrow(codes).to_pylist() == t.column("s").to_pylist()
    # one chunk at a time, each its own dictionary
    for g, c in enumerate(chunks):
        d1, (m1,) = rc.string_codes([c])
        assert d1.to_arrow(rd.decode_raw([m1])[0]).to_pylist() == t.column("s").to_pylist()[g * 1500 : (g + 1) * 1500]
    u = _string_chunks(path, 2)
    assert len(u[0].strings) == 3
    d, mapped = rc.string_codes(u[:1])
    assert d.to_arrow(rd.decode_raw(mapped)[0]).to_pylist() == t.column("u").to_pylist()[:1500]
    with pytest.raises(GlintIOError, match="PLAIN data page"):
        rd.decode_raw(rc.string_codes(u[1:2])[1], column="u")


def test_dictionary_page_strings_that_do_not_parse():
    with pytest.raises(ValueError, match="runs past"):
        rc.plain_strings(b"\x05\x00\x00\x00abc", 1)
    with pytest.raises(ValueError, match="2 strings"):
        rc.plain_strings(b"\x01\x00\x00\x00a", 2)


@pytest.mark.gpu
@pytest.mark.skipif(not CUDA, reason="needs CUDA")
def test_cuda_string_codes(tmp_path):
    """On the GPU: the codes equal the reference's; a PLAIN page in a chunk
    decoded as codes sets the flag (counted first: an error)."""
    path = str(tmp_path / "s.parquet")
    string_file(path, np.random.default_rng(2))
    d, mapped = rc.string_codes(_string_chunks(path, 1))
    want = rd.decode_raw(mapped)[0]
    for exact in (True, False):
        got, _, err = rd.decode_raw(mapped, "cuda", exact=exact)
        pp.check_decoded(err)
        assert torch.equal(got.cpu(), want)
    bad = rc.string_codes(_string_chunks(path, 2)[1:2])[1]
    assert int(rd.decode_raw(bad, "cuda", exact=False)[2].item()) != 0
    with pytest.raises(GlintIOError, match="bad page headers"):
        rd.decode_raw(bad, "cuda")


def test_file_ranges_name_the_file_when_it_changed(tmp_path):
    """A raw chunk's bytes are read from the file when they are staged:
    a file gone or cut short since registration is a GlintIOError naming it."""
    p = tmp_path / "f.bin"
    p.write_bytes(bytes(range(100)))
    out = np.zeros(10, dtype=np.uint8)
    fr.FileRange(str(p), 40, 10).read_into(out)
    assert out.tolist() == list(range(40, 50))
    fr.FileRange(str(p), 40, 10).read_into(out[:4], 6)
    assert out[:4].tolist() == [46, 47, 48, 49]
    with pytest.raises(GlintIOError, match=r"f\.bin: the bytes at 95\.\.105 run past the end of the file"):
        fr.FileRange(str(p), 95, 10).read_into(out)
    with pytest.raises(GlintIOError, match=r"No such file: .*gone\.bin"):
        fr.FileRange(str(tmp_path / "gone.bin"), 0, 10).read_into(out)


def test_large_string_dictionaries_are_not_codes(tmp_path):
    """A string column chunk whose dictionary page is over
    STRING_DICTIONARY_BYTES is not decoded as codes (its strings would be
    mapped one by one in Python): pyarrow reads it."""
    p = str(tmp_path / "big.parquet")
    schema = pa.schema([pa.field("s", pa.string(), nullable=False)])
    pq.write_table(pa.table({"s": [f"clerk#{i:012d}" for i in range(8000)] * 2}, schema=schema), p, compression="none")
    meta = pq.read_metadata(p)
    cc = meta.row_group(0).column(0)
    assert cc.has_dictionary_page and cc.data_page_offset - cc.dictionary_page_offset > rc.STRING_DICTIONARY_BYTES
    assert not rc.raw_readable(meta, 0, 0) and rc.read_raw_chunk(p, 0, 0) is None


def _staged(segments, total, window, files):
    """The buffer the staging fills from layout segments, a window at a time
    (transfer._fill_window over transfer._raw_writes)."""
    from glint.io.transfer import _fill_window, _raw_writes

    writes = _raw_writes(segments)
    got = np.zeros(total, dtype=np.uint8)
    k = 0
    for w in range(0, total, window):
        buf = np.zeros(window, dtype=np.uint8)
        k = _fill_window(buf, w, min(window, total - w), writes, k, files)
        got[w : w + window] = buf[: min(window, total - w)]
    assert k == len(writes)
    return got


@pytest.mark.parametrize("window", [1 << 20, 4096, 1000])
def test_raw_columns_laid_out_together_and_read_in_runs(tmp_path, monkeypatch, window):
    """layout_raw_together: several columns' raw chunks in one buffer, the
    host's bytes (string codes) first, then the file's bytes as they lie
    there, in runs: a row group's columns, the dictionary page between, and
    the next row groups' (gaps under RUN_GAP) in one range, one pread per
    range and window; windows that cut ranges anywhere; the file handles of
    a scan (FileHandles) or a fresh open per read. Every column decodes from
    the buffer to pyarrow's values, given as chunk lists or as a RawSet."""
    import os

    import glint

    path = str(tmp_path / "t.parquet")
    t = string_file(path, np.random.default_rng(4), n=4500)
    meta = pq.read_metadata(path)
    con = glint.connect(device="cpu")
    con.read_parquet(path, "t")
    k_set, s_set = con.table("t").raw_set([0, 1, 2], "k"), con.table("t").raw_set([0, 1, 2], "s")
    assert isinstance(k_set, rc.RawSet) and len(k_set) == 3 and not k_set.codes and s_set.codes
    for as_sets in (False, True):
        if as_sets:
            cols = {"k": k_set, "s": s_set.with_strings(fr.FileHandles(), {})}

            def fields(c):
                return c.source, c.rows, c.codec, c.usize, c.dict_n, c.codes, c.strings

            # the same chunks as one by one, made on demand
            assert [fields(c) for c in cols["s"]] == [fields(c) for c in _string_chunks(path, 1)]
            d, cols["s"] = cols["s"].with_codes()
        else:
            cols = {"k": [rc.read_raw(path, e, lazy=True) for e in rc.raw_index(meta, 0)], "s": _string_chunks(path, 1)}
            d, cols["s"] = rc.string_codes(cols["s"])
        lays, total, segments = rd.layout_raw_together(cols)
        assert lays["k"].total == lays["s"].total == total
        # the codes first, then one range: the file from row group 0's k to row group 2's s
        runs = segments[-1][1]
        assert (
            isinstance(runs, fr.FileRuns)
            and len(runs.start) == 1
            and all(isinstance(s_, bytes) for _, s_ in segments[:-1])
        )
        assert lays["k"].at < lays["s"].at and lays["s"].at[0] < lays["k"].at[1]
        want = np.zeros(total, dtype=np.uint8)
        for o, seg in segments:
            want[o : o + len(seg)] = np.frombuffer(seg.read() if isinstance(seg, fr.FileRuns) else seg, dtype=np.uint8)
        calls = []
        real = os.preadv
        monkeypatch.setattr(os, "preadv", lambda fd, bufs, at: calls.append(len(bufs)) or real(fd, bufs, at))
        for files in (fr.FileHandles(), None):
            calls.clear()
            got = _staged(segments, total, window, files)
            assert np.array_equal(got, want)
            assert len(calls) == -(-total // window) + (window < total) or len(calls) <= -(-total // window) + 2
            if window == 1 << 20:
                assert calls == [1]
            if files is not None:
                files.close()
        monkeypatch.setattr(os, "preadv", real)
        data = torch.from_numpy(got)
        assert (
            rd.decode_raw(list(cols["k"]), data=data, layout=lays["k"])[0].numpy().tolist() == t.column("k").to_pylist()
        )
        codes = rd.decode_raw(list(cols["s"]), data=data, layout=lays["s"])[0]
        assert d.to_arrow(codes).to_pylist() == t.column("s").to_pylist()
        table = rd._chunk_table(cols["s"], lays["s"], 0, 0, 0)
        assert np.array_equal(table, rd._chunk_table(list(cols["s"]), lays["s"], 0, 0, 0))


def test_runs_cut_at_gaps_and_files(tmp_path):
    """layout_raw_together's runs: a gap of more than ``gap`` bytes between
    two chunks' ranges starts a new range, a range never spans two files,
    chunks given out of file order are laid out in it, and each chunk's
    offset in the buffer holds its bytes."""
    paths = []
    for i in range(2):
        p = tmp_path / f"f{i}.bin"
        p.write_bytes(bytes((i * 7 + j) % 251 for j in range(10_000)))
        paths.append(str(p))

    def chunk(f, start, size):
        return rc.RawChunk(torch.int64, 1, 0, size, fr.FileRange(paths[f], start, size))

    cols = {
        "a": [chunk(0, 5000, 100), chunk(0, 0, 10), chunk(1, 0, 10)],
        "b": [chunk(0, 20, 30), chunk(0, 5200, 7), chunk(1, 15, 1)],
    }
    for gap, n_runs in ((0, 6), (5, 5), (150, 3), (10_000, 2)):
        lays, total, segments = rd.layout_raw_together(cols, gap=gap)
        ((o, runs),) = segments
        assert len(runs.start) == n_runs and list(np.unique(runs.file)) == [0, 1]
        assert all(a % 8 == 0 for a in runs.off) and total >= o + len(runs) + 8
        got = _staged(segments, total, 64, None)
        for c, chunks in cols.items():
            for ch, at in zip(chunks, lays[c].at):
                assert got[at : at + ch.source.size].tobytes() == ch.source.read()


def test_raw_set_equals_raw_chunks(tmp_path):
    """Table.raw_set: a scan chunk's numeric column as arrays, the same
    chunks as raw_chunks (over two files, in any order); None for a string
    column (optional columns with and without NULLs: their levels told apart); a row count that differs
    from the fragment's is a clear error."""
    import glint

    for i in range(2):
        rng = np.random.default_rng(i)
        schema = pa.schema([pa.field("a", pa.int64(), nullable=False), pa.field("f", pa.float64(), nullable=True)])
        f = rng.random(900)
        pq.write_table(
            pa.table({"a": rng.integers(0, 1000, 900), "f": pa.array(f, mask=(f < 0.1) if i else None)}, schema=schema),
            str(tmp_path / f"p{i}.parquet"),
            row_group_size=200,
            compression=["snappy", "none"][i],
        )
    con = glint.connect(device="cpu")
    con.read_parquet(str(tmp_path / "*.parquet"), "t")
    t = con.table("t")
    frags = list(range(len(t.fragments)))[::-1] + [0, 3]
    got = t.raw_set(frags, "a")
    assert list(got) == t.raw_chunks(frags, "a") and got.nbytes == sum(len(c.source) for c in got)
    assert got[0].where.startswith("Parquet file '") and got[0].where.endswith("p1.parquet', row group 4")
    # f: optional, NULLs in p1 only: p0's chunks' levels are all 1, p1's decoded
    chunks = t.raw_chunks(frags, "f")
    nulls = ["p1.parquet" in t.describe_fragments([g]) for g in frags]
    assert [c.levels for c in chunks] == [rc.LEVELS_NULLS if x else rc.LEVELS_ONES for x in nulls]
    assert list(t.raw_set(frags, "f")) == chunks
    t._src._leaves[(0, "a")][1]._fields[2, 1] += 1  # a row group's rows, as if the file changed
    t._src._where_np = None
    with pytest.raises(glint.GlintError, match="changed on disk"):
        t.raw_set([0, 1], "a")


def test_file_handles_close_once_unused(tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(bytes(range(100)))
    files = fr.FileHandles()
    out = np.zeros(4, dtype=np.uint8)
    with files.fd(str(p)) as fd:
        files.close()  # in use: closed when the read is done
        assert os.pread(fd, 2, 10) == bytes([10, 11])
    assert files._fds == {}
    fr.read_file_into(str(p), 20, out, files)  # after close: a fresh open of its own
    assert out.tolist() == [20, 21, 22, 23]


def test_file_handles_threads_and_close(tmp_path):
    """FileHandles takes no lock on a read's way: threads read through one
    scan's handles while it is closed midway; every read gets its bytes,
    and once all are done no file is left open."""
    import threading

    paths = []
    for i in range(3):
        p = tmp_path / f"f{i}.bin"
        p.write_bytes(bytes((i * 7 + j) % 256 for j in range(4096)))
        paths.append(str(p))
    fds_before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    files = fr.FileHandles()
    errors = []
    started = threading.Barrier(9)

    def reader(k):
        started.wait()
        out = np.zeros(16, dtype=np.uint8)
        for n in range(400):
            i = (k + n) % 3
            at = (k * 31 + n * 17) % 4000
            fr.read_file_into(paths[i], at, out, files)
            if out.tolist() != [(i * 7 + at + j) % 256 for j in range(16)]:
                errors.append((k, n))

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    started.wait()
    files.close()
    for t in threads:
        t.join()
    assert not errors
    assert files._fds == {} and not files._active
    if fds_before is not None:
        assert len(os.listdir("/proc/self/fd")) == fds_before


def test_raw_index_is_made_block_by_block(tmp_path, monkeypatch):
    """RawIndex: a row group's entry made on first use, raw_index_block row
    groups at a time (a cold scan's first chunk waited for the whole file's),
    the same entries as the footer says."""
    path = str(tmp_path / "t.parquet")
    schema = pa.schema([pa.field("a", pa.int64(), nullable=False), pa.field("s", pa.string(), nullable=False)])
    pq.write_table(
        pa.table({"a": np.arange(1000, dtype=np.int64), "s": ["x", "y"] * 500}, schema=schema),
        path,
        row_group_size=50,
        compression="snappy",
    )
    meta = pq.read_metadata(path)
    for column in (0, 1):
        dtype, codes, levels = rc._raw_kind(meta, column)
        want = [
            rc._raw_entry(meta.row_group(g).column(column), dtype, codes, levels) for g in range(meta.num_row_groups)
        ]
        idx = rc.raw_index(meta, column, block=4)
        assert len(idx) == 20 and bytes(idx._done) == bytes(5)
        assert idx[9] == want[9] and bytes(idx._done) == b"\0\0\1\0\0"  # only row groups 8-11 made
        assert idx[-1] == want[-1] and idx[3:7] == want[3:7] and list(idx) == want and all(idx._done)
        assert all(e is not None for e in want)


def test_raw_chunks_in_one_call_equal_one_by_one(tmp_path):
    """Table.raw_chunks (a cold scan chunk's thousands of row groups in one
    loop) gives what raw_chunk gives fragment by fragment: the same lazy
    chunks (file, offset, sizes, codec, dictionary span, codes), None where
    the device cannot decode one, over several files."""
    import glint

    for i in range(2):
        rng = np.random.default_rng(i)
        schema = pa.schema(
            [
                pa.field("a", pa.int64(), nullable=False),
                pa.field("s", pa.string(), nullable=False),
                pa.field("f", pa.float64(), nullable=False),
            ]
        )
        pq.write_table(
            pa.table(
                {
                    "a": rng.integers(0, 1000, 900),
                    "s": [f"v{x}" for x in rng.integers(0, 5, 900)],
                    "f": rng.random(900),
                },
                schema=schema,
            ),
            str(tmp_path / f"p{i}.parquet"),
            row_group_size=200,
            compression=["snappy", "none"][i],
        )
    con = glint.connect(device="cpu")
    con.read_parquet(str(tmp_path / "*.parquet"), "t")
    t = con.table("t")
    frags = list(range(len(t.fragments)))[::-1] + [0, 3]
    assert len(t.fragments) == 10
    for c in ("a", "s", "f"):
        got = t.raw_chunks(frags, c)
        want = [t.raw_chunk(f, c) for f in frags]
        assert got == want and all(g is not None for g in got), c
        assert {g.source.path for g in got} == {str(tmp_path / f"p{i}.parquet") for i in range(2)}
    # the IO counter's bytes (ParquetSource.bytes_of: an array per column), a fragment counted as often as named
    metas = [pq.read_metadata(str(tmp_path / f"p{i}.parquet")) for i in range(2)]
    sizes = [
        m.row_group(g).column(j).total_compressed_size for m in metas for g in range(m.num_row_groups) for j in (0, 2)
    ]
    per_frag = [sizes[2 * f] + sizes[2 * f + 1] for f in range(10)]
    assert t._src.bytes_of(frags, ["a", "f"]) == sum(per_frag[f] for f in frags)
    assert t._src.bytes_of([], ["a"]) == 0 and t._src.bytes_of([1], ["nope"]) == 0


def test_string_set_errors_name_the_row_group(tmp_path):
    """RawSet.with_strings: a dictionary page that does not parse is a
    GlintIOError naming the file and row group; pages seen before (the
    scan's ``seen``) are not parsed again; FileRuns past a file's end (it
    was cut short) is a GlintIOError naming the file."""
    import glint

    path = str(tmp_path / "t.parquet")
    string_file(path, np.random.default_rng(5), n=3000)
    con = glint.connect(device="cpu")
    con.read_parquet(path, "t")
    rs = con.table("t").raw_set([0, 1], "s")
    seen: dict = {}
    got = rs.with_strings(None, seen)
    assert len(seen) == len(got.pages) and sorted(got.page_of.tolist()) == got.page_of.tolist()
    fake = {k: [b"from seen"] * len(v) for k, v in seen.items()}
    assert all(p[0] == b"from seen" for p in rs.with_strings(None, fake).pages)
    bad = rs._like(rs.start, rs.size, rs.dict_span)
    bad.start = rs.start + 1  # the dictionary page's header read from its second byte
    with pytest.raises(GlintIOError, match=r"Cannot read Parquet file '.*t\.parquet', row group 0: "):
        bad.with_strings()
    runs = fr.FileRuns([path], np.array([0]), np.array([os.path.getsize(path) - 4]), np.array([0]), np.array([8]), 8)
    with pytest.raises(GlintIOError, match=r"t\.parquet: the bytes at .* run past the end of the file"):
        runs.read_into(np.zeros(8, dtype=np.uint8), 0, fr.FileHandles())
