"""Which part of planning Parquet pages on the host scales over threads:
python3 bench/device/gilcheck.py SF. Times, on 1 and 16 threads, reading
lineitem's l_extendedprice column chunks (os.preadv), parsing page headers
(Python), and decompressing the pages (pa.Codec.decompress), each alone."""
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.parquet as pq

from glint.workloads import tpch
from glint.io import parquet_page_headers as ph
from glint.io import parquet_pages as pp

sf = float(sys.argv[1]) if len(sys.argv) > 1 else 10
path = str(tpch.ensure_tpch_data(sf, progress=False) / "lineitem.parquet")
meta = pq.read_metadata(path)
leaf = [i for i in range(meta.num_columns) if meta.schema.column(i).name == "l_extendedprice"][0]
ccs = [meta.row_group(rg).column(leaf) for rg in range(min(256, meta.num_row_groups))]
bufs = [ph.read_chunk_bytes(path, cc) for cc in ccs]
codec = pa.Codec("snappy")
pages = []                                   # (compressed view, uncompressed size)
for b in bufs:
    i = 0
    while i < len(b):
        d, j = ph._header_fields(b, i, ph._PAGE_STRUCTS)
        pages.append((memoryview(b)[j:j + d[3]], d[2]))
        i = j + d[3]
print(f"{len(ccs)} chunks, {len(pages)} pages, {sum(len(b) for b in bufs) / 1e6:.0f} MB")


def read(cc):
    ph.read_chunk_bytes(path, cc, reuse=True)


def headers(b):
    i = 0
    while i < len(b):
        d, j = ph._header_fields(b, i, ph._PAGE_STRUCTS)
        i = j + d[3]


def inflate(k):
    for raw, size in pages[k::64]:
        codec.decompress(raw, decompressed_size=size)


def inflate_bytes(k):
    for raw, size in pages[k::64]:
        codec.decompress(raw, decompressed_size=size, asbytes=True)


def plan(cc):
    pp.plan_pages(ph.parse_pages(ph.read_chunk_bytes(path, cc, reuse=True), "SNAPPY"),
                  ph.PHYSICAL_DTYPES["INT64"], 0, "x")


for name, fn, items in [("read", read, ccs), ("headers", headers, bufs), ("decompress", inflate, range(64)),
                        ("decompress asbytes", inflate_bytes, range(64)), ("whole plan", plan, ccs)]:
    out = []
    for threads in (1, 4, 16):
        with ThreadPoolExecutor(threads) as ex:
            list(ex.map(fn, list(items)[:4]))
            t0 = time.perf_counter()
            list(ex.map(fn, items))
            out.append(time.perf_counter() - t0)
    print(f"{name:20s} 1 / 4 / 16 threads {out[0] * 1e3:8.1f} / {out[1] * 1e3:8.1f} / {out[2] * 1e3:8.1f} ms, "
          f"speed-up {out[0] / out[1]:.1f}x / {out[0] / out[2]:.1f}x", flush=True)
def pyarrow_read(rg):
    pq.ParquetFile(path, metadata=meta).read_row_group(rg, columns=["l_extendedprice"], use_threads=False)


out = []
for threads in (1, 4, 16):
    with ThreadPoolExecutor(threads) as ex:
        t0 = time.perf_counter()
        list(ex.map(pyarrow_read, range(len(ccs))))
        out.append(time.perf_counter() - t0)
print(f"{'pyarrow read':20s} 1 / 4 / 16 threads {out[0] * 1e3:8.1f} / {out[1] * 1e3:8.1f} / {out[2] * 1e3:8.1f} ms")
print("pyarrow", pa.__version__, pa.default_memory_pool().backend_name)
