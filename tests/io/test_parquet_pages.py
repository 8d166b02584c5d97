"""glint.io.parquet_pages: column chunks decoded with torch, compared row
for row (NULLs included, floats bit for bit) with what pyarrow reads."""

import collections
import os
import random
import zlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from glint.errors import GlintIOError, NotSupported
from glint.io import parquet_page_headers as ph
from glint.io import parquet_pages as pp
from glint.io.parquet_meta import raw_footer
from glint.io.parquet_page_headers import (
    DATA_PAGE,
    DATA_PAGE_V2,
    DICTIONARY_PAGE,
    PLAIN,
    RLE_DICTIONARY,
    parse_pages,
    read_chunk_bytes,
)
from glint.io.parquet_pages import decode_column_chunk, decode_hybrid
from glint.workloads import tpch

# in the data cache: the tests that read it have the cached_tpch fixture generate it first
TPCH_LINEITEM = str(tpch.data_dir(0.01) / "lineitem.parquet")
_PHYSICAL = {"INT32": pa.int32(), "INT64": pa.int64(), "FLOAT": pa.float32(), "DOUBLE": pa.float64()}
_NP = {"int32": np.int32, "int64": np.int64, "float32": np.float32, "float64": np.float64}


def expected(pf: pq.ParquetFile, rg: int, column: int):
    """pyarrow's values of leaf ``column`` of row group ``rg`` as the physical
    type (NULLs as 0) and its validity."""
    meta = pf.metadata
    name = meta.schema.column(column).name
    arr = pf.read_row_group(rg, columns=[name]).column(0).combine_chunks()
    valid = np.asarray(arr.is_valid())
    physical = _PHYSICAL[meta.schema.column(column).physical_type]
    if arr.type != physical:
        arr = arr.view(physical)  # date32 -> int32, timestamp -> int64
    return np.asarray(arr.fill_null(0)), valid


def check_file(path: str, columns=None, pf: pq.ParquetFile | None = None, use_triton: bool | None = None):
    """Every (given) column of every row group of the file decodes as pyarrow reads it."""
    pf = pf or pq.ParquetFile(path)
    meta = pf.metadata
    columns = range(meta.num_columns) if columns is None else columns
    for rg in range(meta.num_row_groups):
        for c in columns:
            values, valid = decode_column_chunk(path, rg, c, metadata=meta, use_triton=use_triton)
            want, want_valid = expected(pf, rg, c)
            assert values.dtype == {4: torch.int32, 8: torch.int64}.get(want.itemsize) or values.is_floating_point()
            got = values.numpy()
            assert got.dtype == want.dtype, (rg, c)
            # bit for bit: NaNs compare equal, NULLs are 0
            assert got.tobytes() == want.tobytes(), (rg, c)
            if meta.schema.column(c).max_definition_level == 0:
                assert valid is None
            else:
                assert valid is not None and valid.dtype == torch.bool
                assert np.array_equal(valid.numpy(), want_valid), (rg, c)


def pages_of(path: str, rg: int = 0, column: int = 0):
    cc = pq.read_metadata(path).row_group(rg).column(column)
    codec = {"LZ4": "LZ4_RAW"}.get(cc.compression, cc.compression)
    return parse_pages(read_chunk_bytes(path, cc), codec)


def random_array(rng, dtype: str, n: int, distinct: int | None, null_fraction: float, nans: bool = False):
    """n values of numpy dtype drawn from ``distinct`` random values (all
    different when None); some NULLs, some NaNs in floats."""
    np_type = _NP[dtype]
    if np.issubdtype(np_type, np.integer):
        info = np.iinfo(np_type)
        pool = rng.integers(info.min, info.max, size=distinct or n, dtype=np_type, endpoint=True)
    else:
        pool = (rng.standard_normal(distinct or n) * 1e6).astype(np_type)
        if nans:
            pool[:: max(1, len(pool) // 7)] = np.nan
    vals = pool[rng.integers(0, len(pool), n)] if distinct else pool
    mask = rng.random(n) < null_fraction if null_fraction else None
    return pa.array(vals, mask=mask)


# ------------------------------------------------------------------ the matrix
@pytest.mark.parametrize("compression", ["snappy", "zstd", "gzip", "none"])
@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("dictionary", [True, False])
@pytest.mark.parametrize("nulls", [False, True])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_matrix(tmp_path, dtype, nulls, dictionary, version, compression):
    rng = np.random.default_rng(zlib.crc32(f"{dtype}{nulls}{dictionary}{version}{compression}".encode()))
    n = 1500
    t = pa.table(
        {
            "x": random_array(rng, dtype, n, 40, 0.25 if nulls else 0.0, nans=True),
            "y": random_array(rng, dtype, n, None, 0.1 if nulls else 0.0),
        }
    )
    path = str(tmp_path / "t.parquet")
    pq.write_table(
        t,
        path,
        compression=compression,
        use_dictionary=dictionary,
        data_page_version=version,
        data_page_size=256,
        write_batch_size=64,
        row_group_size=600,
    )  # 3 row groups, many pages each
    check_file(path)
    ps = pages_of(path)
    kinds = collections.Counter(p.kind for p in ps)
    assert kinds[DATA_PAGE_V2 if version == "2.0" else DATA_PAGE] >= 4
    assert kinds[DICTIONARY_PAGE] == (1 if dictionary else 0)


def test_required_columns(tmp_path):
    """Non-nullable fields: max definition level 0, no levels in the pages, valid None."""
    rng = np.random.default_rng(1)
    schema = pa.schema([pa.field("a", pa.int32(), nullable=False), pa.field("b", pa.float64(), nullable=False)])
    t = pa.table(
        {
            "a": random_array(rng, "int32", 3000, 100, 0.0),
            "b": random_array(rng, "float64", 3000, None, 0.0, nans=True),
        },
        schema=schema,
    )
    for version in ("1.0", "2.0"):
        path = str(tmp_path / f"r{version}.parquet")
        pq.write_table(t, path, data_page_version=version, data_page_size=1024, write_batch_size=100)
        check_file(path)


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_dictionary_falls_back_to_plain(tmp_path, version):
    rng = np.random.default_rng(2)
    t = pa.table(
        {
            "x": random_array(rng, "int64", 6000, None, 0.1),
            "f": random_array(rng, "float32", 6000, None, 0.0, nans=True),
        }
    )
    path = str(tmp_path / "t.parquet")
    pq.write_table(
        t,
        path,
        data_page_version=version,
        dictionary_pagesize_limit=2000,
        data_page_size=2048,
        write_batch_size=128,
        row_group_size=4000,
    )
    check_file(path)
    for c in range(2):
        encodings = [p.encoding for p in pages_of(path, 0, c) if p.kind != DICTIONARY_PAGE]
        assert encodings[0] == RLE_DICTIONARY and encodings[-1] == PLAIN  # the switch mid-chunk
        assert len(encodings) > 4


@pytest.mark.parametrize("distinct,width", [(1, 1), (2, 1), (3, 2), (1000, 10), (70000, 17)])
def test_dictionary_widths(tmp_path, distinct, width):
    """pyarrow writes index bit width max(1, bit length of entries - 1): 1, not
    0, for a one-entry dictionary (width 0: test_dictionary_width_zero)."""
    rng = np.random.default_rng(distinct)
    n = max(3000, distinct + distinct // 4)
    pool = np.arange(distinct, dtype=np.int32) * 7 - 1000
    vals = np.concatenate([pool, pool[rng.integers(0, distinct, n - distinct)]])  # every entry used
    mask = np.arange(n) >= distinct
    mask[mask] = rng.random(n - distinct) < 0.05  # NULLs after those
    t = pa.table({"x": pa.array(vals, mask=mask)})
    path = str(tmp_path / "t.parquet")
    pq.write_table(t, path, data_page_size=4096, write_batch_size=256, row_group_size=n)
    check_file(path)
    ps = pages_of(path)
    assert ps[0].kind == DICTIONARY_PAGE and ps[0].num_values == distinct
    data = [p for p in ps if p.kind != DICTIONARY_PAGE]
    assert all(p.encoding == RLE_DICTIONARY for p in data)
    # v1: levels with their length, then the index width, which pyarrow sizes to the
    # dictionary as it stands when the page is written: widths grow page by page
    widths = [p.body[4 + int.from_bytes(p.body[:4], "little")] for p in data]
    assert widths == sorted(widths) and widths[-1] == width
    if distinct == 70000:
        assert len(set(widths)) > 3


def test_dictionary_width_zero(tmp_path):
    """A one-entry dictionary with index bit width 0 (legal, pyarrow writes 1):
    an uncompressed v2 file patched in place, same length, no page checksums."""
    path = str(tmp_path / "t.parquet")
    pq.write_table(pa.table({"x": pa.array([5] * 100, pa.int32())}), path, data_page_version="2.0", compression="none")
    page = [p for p in pages_of(path) if p.kind == DATA_PAGE_V2][0]
    assert page.body == bytes([1, 0xC8, 0x01, 0])  # width 1, RLE run of 100, value 0
    raw = open(path, "rb").read()
    assert raw.count(page.body) == 1
    with open(path, "wb") as f:
        f.write(raw.replace(page.body, bytes([0, 0xC8, 0x01, 0])))  # width 0: no value byte
    assert pages_of(path)[1].body[0] == 0
    check_file(path)
    assert decode_column_chunk(path, 0, 0)[0].tolist() == [5] * 100


def test_all_nulls_and_empty_pages(tmp_path):
    t = pa.table(
        {
            "i": pa.nulls(1000, pa.int32()),
            "d": pa.nulls(1000, pa.float64()),
            "h": pa.array([None] * 999 + [5], pa.int64()),
        }
    )
    for version in ("1.0", "2.0"):
        for dictionary in (True, False):
            path = str(tmp_path / f"n{version}{dictionary}.parquet")
            pq.write_table(
                t, path, data_page_version=version, use_dictionary=dictionary, write_batch_size=64, data_page_size=256
            )
            check_file(path)
            values, valid = decode_column_chunk(path, 0, 0)
            assert not valid.any() and not values.any() and values.dtype == torch.int32


def test_nan_bits_and_extremes(tmp_path):
    nan_payload = np.array([0x7FF8000000000123], dtype=np.uint64).view(np.float64)[0]
    d = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, nan_payload, 1e-310], dtype=np.float64)
    i64 = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, -1, 0, 1, 2, 3, 4], dtype=np.int64)
    i32 = np.array([np.iinfo(np.int32).min, np.iinfo(np.int32).max, -1, 0, 1, 2, 3, 4], dtype=np.int32)
    t = pa.table(
        {"d": np.tile(d, 50), "f": np.tile(d.astype(np.float32), 50), "i": np.tile(i64, 50), "j": np.tile(i32, 50)}
    )
    for dictionary in (True, False):
        path = str(tmp_path / f"e{dictionary}.parquet")
        pq.write_table(t, path, use_dictionary=dictionary)
        check_file(path)


@pytest.mark.parametrize("compression", ["brotli", "lz4"])
def test_other_codecs(tmp_path, compression):
    rng = np.random.default_rng(3)
    t = pa.table({"x": random_array(rng, "int64", 2000, 30, 0.2)})
    for version in ("1.0", "2.0"):
        path = str(tmp_path / f"c{version}.parquet")
        pq.write_table(
            t, path, compression=compression, data_page_version=version, write_batch_size=100, data_page_size=512
        )
        check_file(path)


def test_tpch_lineitem_integer_columns(cached_tpch):
    cached_tpch(0.01)
    if not os.path.exists(TPCH_LINEITEM):
        pytest.skip("TPC-H sf0.01 lineitem.parquet not generated")
    # a footer without the DECIMAL annotations: pyarrow then reads the unscaled integers
    raw = raw_footer(TPCH_LINEITEM)
    pf = pq.ParquetFile(TPCH_LINEITEM, metadata=raw.metadata if raw else None)
    meta = pf.metadata
    ints = [c for c in range(meta.num_columns) if meta.schema.column(c).physical_type in ("INT32", "INT64")]
    assert len(ints) >= 10
    check_file(TPCH_LINEITEM, ints, pf=pf)


# ------------------------------------------------------------------ hybrid streams
def pack(values, width: int) -> bytes:
    """Values bit-packed LSB first (a reference encoder)."""
    acc = 0
    for k, v in enumerate(values):
        acc |= v << (k * width)
    return acc.to_bytes((len(values) * width + 7) // 8, "little")


def test_decode_hybrid_hand_made():
    # RLE run: header 5 << 1 = 10, value 300 in two little-endian bytes (width 9)
    assert decode_hybrid(bytes([10, 0x2C, 0x01]), 9, 5).tolist() == [300] * 5
    assert decode_hybrid(bytes([10, 0x2C, 0x01]), 9, 3).tolist() == [300] * 3  # fewer than the run holds
    # bit-packed run of one group (8 values), only 5 asked for: the padding is dropped
    vals = [1, 2, 3, 4, 5, 0, 0, 0]
    assert decode_hybrid(bytes([0x03]) + pack(vals, 3), 3, 5).tolist() == [1, 2, 3, 4, 5]
    # bit width 0: RLE runs without value bytes, and a bit-packed run of no bytes
    assert decode_hybrid(bytes([8]), 0, 4).tolist() == [0, 0, 0, 0]
    assert decode_hybrid(bytes([0x03]), 0, 8).tolist() == [0] * 8
    # RLE, bit-packed, RLE; a two-byte varint header (200 << 1 = 400 = 0x90 0x03)
    stream = bytes([4, 7]) + bytes([0x05]) + pack(list(range(16)), 4) + bytes([0x90, 0x03, 9])
    out = decode_hybrid(stream, 4, 2 + 16 + 200)
    assert out.dtype == torch.int32
    assert out.tolist() == [7, 7] + list(range(16)) + [9] * 200
    # a uint8 tensor works too
    t = torch.tensor(list(stream), dtype=torch.uint8)
    assert torch.equal(decode_hybrid(t, 4, 218), out)


@pytest.mark.parametrize("width", [1, 2, 5, 7, 8, 13, 17, 24, 31, 32])
def test_decode_hybrid_widths(width):
    rng = np.random.default_rng(width)
    vals = [int(v) for v in rng.integers(0, 1 << width, 8 * 37)]
    count = len(vals) - 5  # the last group padded
    stream = bytes([(37 << 1) | 1]) + pack(vals, width)
    assert decode_hybrid(stream, width, count).tolist() == [v - (1 << 32) if v >= 1 << 31 else v for v in vals[:count]]


def test_decode_hybrid_truncated():
    with pytest.raises(ValueError):
        decode_hybrid(bytes([10, 1]), 1, 6)  # RLE run of 5, 6 asked for
    with pytest.raises(ValueError):
        decode_hybrid(bytes([0x05, 0xFF]), 8, 16)  # bit-packed run of 16 with 1 byte


# ------------------------------------------------------------------ out of scope
def test_not_supported_columns(tmp_path):
    t = pa.table(
        {
            "strcol": ["a", "b", None],
            "listcol": pa.array([[1, 2], [], None], pa.list_(pa.int32())),
            "structcol": pa.array([{"inner": 1}, None, {"inner": None}], pa.struct([("inner", pa.int64())])),
            "boolcol": [True, False, None],
            "okcol": pa.array([1, None, 3], pa.int32()),
        }
    )
    path = str(tmp_path / "t.parquet")
    pq.write_table(t, path)
    meta = pq.read_metadata(path)
    by_name = {meta.schema.column(c).path: c for c in range(meta.num_columns)}
    for name in ("strcol", "listcol", "structcol", "boolcol"):
        c = next(c for p, c in by_name.items() if p.split(".")[0] == name)
        with pytest.raises(NotSupported, match=name):
            decode_column_chunk(path, 0, c)
    values, valid = decode_column_chunk(path, 0, by_name["okcol"])
    assert values.tolist() == [1, 0, 3] and valid.tolist() == [True, False, True]


def test_hadoop_lz4_and_unknown_codecs():
    with pytest.raises(NotSupported, match="Hadoop"):
        parse_pages(b"", "LZ4", column="c")
    with pytest.raises(NotSupported, match="'c'.*LZO"):
        parse_pages(b"", "LZO", column="c")


def test_corrupt_chunk(tmp_path):
    path = str(tmp_path / "t.parquet")
    pq.write_table(pa.table({"x": list(range(100))}), path, use_dictionary=False, compression="none")
    cc = pq.read_metadata(path).row_group(0).column(0)
    b = read_chunk_bytes(path, cc)
    with pytest.raises(GlintIOError, match="'x'"):
        parse_pages(b[:-10], "UNCOMPRESSED", column="x")


# ------------------------------------------------------------------ many streams at once (the GPU kernel's input)
def _encode_hybrid(rng, width: int, count: int) -> tuple[bytes, list[int]]:
    """A random RLE / bit-packed hybrid stream of ``count`` values and the values."""

    def varint(v):
        out = bytearray()
        while True:
            if v < 0x80:
                return bytes(out + bytes([v]))
            out.append((v & 0x7F) | 0x80)
            v >>= 7

    out, values = bytearray(), []
    while len(values) < count:
        if rng.random() < 0.5:  # RLE
            n = rng.randint(1, 300)
            v = rng.getrandbits(width) if width else 0
            out += varint(n << 1) + v.to_bytes((width + 7) // 8, "little")
            values += [v] * n
        else:  # bit-packed, groups of 8
            groups = rng.randint(1, 70)
            vs = [rng.getrandbits(width) if width else 0 for _ in range(groups * 8)]
            packed = 0
            for i, v in enumerate(vs):
                packed |= v << (i * width)
            out += varint((groups << 1) | 1) + packed.to_bytes(groups * width, "little")
            values += vs
    return bytes(out), values[:count]


def hybrid_streams(seed: int, n: int):
    """n random streams in one buffer: (data, starts, ends, widths, counts) and
    the expected values are what decode_streams' reference gives (checked in
    test_decode_streams_reference)."""
    rng = random.Random(seed)
    buf, starts, ends, widths, counts = bytearray(), [], [], [], []
    for s in range(n):
        w = [0, 1, 2, 3, 7, 8, 9, 13, 16, 17, 24, 31, 32][s % 13]
        b, vals = _encode_hybrid(rng, w, rng.randint(1, 3000))
        starts.append(len(buf))
        buf += b
        ends.append(len(buf))
        widths.append(w)
        counts.append(len(vals))
        buf += bytes(rng.randint(0, 5))  # gaps between streams
    data = torch.frombuffer(bytearray(buf + bytes(8)), dtype=torch.uint8)
    return data, starts, ends, widths, counts


def page_index_streams(tmp=None):
    """The dictionary-index streams of the data pages of a file pyarrow wrote
    (no NULLs: each page's count is its number of values)."""
    import tempfile

    rng = random.Random(5)
    d = tmp or tempfile.mkdtemp()
    path = f"{d}/streams.parquet"
    pq.write_table(
        pa.table({"x": pa.array([rng.randint(0, 5000) for _ in range(30_000)], pa.int64())}),
        path,
        data_page_size=2048,
        write_batch_size=256,
        compression="snappy",
    )
    cc = pq.read_metadata(path).row_group(0).column(0)
    buf, starts, ends, widths, counts = bytearray(), [], [], [], []
    for p in ph.parse_pages(ph.read_chunk_bytes(path, cc), "SNAPPY"):
        if p.kind == ph.DICTIONARY_PAGE or p.encoding not in (ph.PLAIN_DICTIONARY, ph.RLE_DICTIONARY):
            continue
        body = p.body
        if p.kind == ph.DATA_PAGE:  # v1: the optional column's levels first
            ln = int.from_bytes(body[:4], "little")
            body = body[4 + ln :]
        widths.append(body[0])
        starts.append(len(buf))
        buf += body[1:]
        ends.append(len(buf))
        counts.append(p.num_values)
    return torch.frombuffer(bytearray(buf + bytes(8)), dtype=torch.uint8), starts, ends, widths, counts


def test_decode_streams_reference():
    rng = random.Random(11)
    for w in (0, 1, 5, 8, 12, 32):
        b, vals = _encode_hybrid(rng, w, 2000)
        data = torch.frombuffer(bytearray(b + bytes(8)), dtype=torch.uint8)
        assert pp.decode_streams(data, [0], [len(b)], [w], [2000], use_triton=False).tolist() == [
            v - (1 << 32) if v >= 1 << 31 else v for v in vals
        ]  # int32
    data, starts, ends, widths, counts = hybrid_streams(seed=1, n=26)
    got = pp.decode_streams(data, starts, ends, widths, counts, use_triton=False)
    one_by_one = torch.cat([pp.decode_hybrid(data[s:e], w, c) for s, e, w, c in zip(starts, ends, widths, counts)])
    assert torch.equal(got, one_by_one) and got.numel() == sum(counts)
    data, starts, ends, widths, counts = page_index_streams()
    assert len(starts) > 10 and sum(counts) == 30_000
    idx = pp.decode_streams(data, starts, ends, widths, counts, use_triton=False)
    assert int(idx.min()) >= 0


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_decode_streams_on_cuda_equal_the_reference():
    for data, starts, ends, widths, counts in [hybrid_streams(seed=7, n=300), page_index_streams()]:
        ref = pp.decode_streams(data, starts, ends, widths, counts, use_triton=False)
        got = pp.decode_streams(data.cuda(), starts, ends, widths, counts)
        assert torch.equal(got.cpu(), ref)


def test_hybrid_kernel_compiles_for_hopper_without_a_gpu():
    """The interpreter does not type-check what compiled Triton does (the
    names both branches of an `if` assign must agree in type, loop bounds
    must be integers, ...): compile the kernel's bare-stream form for sm_90
    on the CPU (the page form: the next test)."""
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from glint.kernels.hybrid import _pages_kernel

    sig = {
        "data": "*u8",
        "values": "*i32",
        "table": "*i64",
        "out": "*i32",
        "err": "*i32",
        "BLOCK": "constexpr",
        "GATHER": "constexpr",
        "ITEM": "constexpr",
    }
    k = triton.compile(
        ASTSource(fn=_pages_kernel, signature=sig, constexprs={"BLOCK": 512, "GATHER": False, "ITEM": 4}),
        target=GPUTarget("cuda", 90, 32),
    )
    assert "ptx" in k.asm


@pytest.mark.parametrize("vt", ["i32", "i64", "fp32", "fp64"])
def test_pages_kernel_compiles_for_hopper_without_a_gpu(vt):
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from glint.kernels.hybrid import _pages_kernel

    sig = {
        "data": "*u8",
        "values": f"*{vt}",
        "table": "*i64",
        "out": f"*{vt}",
        "err": "*i32",
        "BLOCK": "constexpr",
        "GATHER": "constexpr",
        "ITEM": "constexpr",
    }
    item = 8 if vt in ("i64", "fp64") else 4
    k = triton.compile(
        ASTSource(fn=_pages_kernel, signature=sig, constexprs={"BLOCK": 512, "GATHER": True, "ITEM": item}),
        target=GPUTarget("cuda", 90, 32),
    )
    assert "ptx" in k.asm


def test_levels_kernel_compiles_for_hopper_without_a_gpu():
    """The levels kernel of optional column chunks with NULLs (see the two
    tests above)."""
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from glint.kernels.hybrid import _levels_kernel

    sig = dict.fromkeys(("data", "buf"), "*u8") | dict.fromkeys(("lev", "dec", "src"), "*i64")
    sig |= {"err": "*i32", "BLOCK": "constexpr"}
    target = GPUTarget("cuda", 90, 32)
    assert "ptx" in triton.compile(ASTSource(_levels_kernel, sig, {"BLOCK": 512}), target=target).asm


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_decode_plans_on_cuda_equal_pyarrow(tmp_path):
    rng = np.random.default_rng(9)
    for dtype in ("int32", "int64", "float32", "float64"):
        plans, want = [], []
        for i, (distinct, nulls) in enumerate([(50, 0.0), (None, 0.2), (70000, 0.0), (2, 0.5)]):
            path = str(tmp_path / f"{dtype}{i}.parquet")
            pq.write_table(
                pa.table({"x": random_array(rng, dtype, 5000, distinct, nulls, nans=True)}),
                path,
                data_page_size=2048,
                row_group_size=2000,
                dictionary_pagesize_limit=8000,
            )
            pf = pq.ParquetFile(path)
            for rg in range(pf.metadata.num_row_groups):
                plans.append(pp.plan_column_chunk(path, rg, 0, pf.metadata))
                want.append(expected(pf, rg, 0)[0])
        got, valid, err = pp.decode_plans(plans, "cuda")
        pp.check_decoded(err)
        assert got.cpu().numpy().tobytes() == np.concatenate(want).tobytes()
