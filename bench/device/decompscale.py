"""Does snappy decompression of lineitem's dictionary pages (pa.Codec) scale
over the host's threads? python3 bench/device/decompscale.py SF
For 1, 4, 8 and 16 threads: pa.Codec.decompress alone (results dropped at
once), then RawChunk.with_host_dictionary (read, parse, decompress, copy);
and 16 threads beside a pure-Python busy thread (holding the GIL)."""
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.parquet as pq

from glint.workloads import tpch
from glint.io import file_reads as fr
from glint.io import raw_chunks as rc
from glint.io.parquet_page_headers import _header_fields, _PAGE_STRUCTS

sf = float(sys.argv[1]) if len(sys.argv) > 1 else 10
path = str(tpch.ensure_tpch_data(sf, progress=False) / "lineitem.parquet")
meta = pq.read_metadata(path)
leaf = [meta.schema.column(i).name for i in range(meta.num_columns)].index("l_extendedprice")
raws = [rc.read_raw(path, e, lazy=True) for e in rc.raw_index(meta, leaf)]
bodies = []
for r in raws:
    h = fr.read_bytes(r.source.path, r.source.start, r.dict_span)
    d, j = _header_fields(h, 0, _PAGE_STRUCTS)
    bodies.append((bytes(h[j:]), d[2]))
codec = pa.Codec("snappy")
print(f"{len(bodies)} dictionary pages, {sum(len(b) for b, _ in bodies) / 1e6:.0f} MB as stored, "
      f"{sum(u for _, u in bodies) / 1e6:.0f} MB decompressed", flush=True)


def timed(fn, items, threads):
    with ThreadPoolExecutor(threads) as ex:
        list(ex.map(fn, items[:threads]))          # threads started
        t0 = time.perf_counter()
        list(ex.map(fn, items))
        return time.perf_counter() - t0


stop = False


def busy():
    x = 0
    while not stop:
        x += 1


for what, fn, items in [("decompress", lambda b: len(codec.decompress(b[0], decompressed_size=b[1])), bodies),
                        ("with_host_dictionary", lambda r: r.with_host_dictionary().release(), raws)]:
    for threads in (1, 4, 8, 16):
        dt = timed(fn, items, threads)
        print(f"{what:22s} {threads:2d} threads: {dt:.3f} s wall, {dt * threads / len(items) * 1e3:.2f} ms "
              f"thread-time a page, {sum(u for _, u in bodies) / dt / 1e9:.2f} GB/s out", flush=True)
    t = threading.Thread(target=busy)
    t.start()
    dt = timed(fn, items, 16)
    stop = True
    t.join()
    stop = False
    print(f"{what:22s} 16 threads beside a busy Python thread: {dt:.3f} s wall", flush=True)
