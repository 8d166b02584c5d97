"""Does the host allocator limit Parquet decoding on many threads?
python3 bench/device/decodebench.py SF   (on the device; one child process per allocator setting)

Each child decodes lineitem's Q1 columns (runs of 4 row groups per task, as
glint's scan does) on 1, 4 and 16 threads and reports GB/s of Arrow output,
user / system CPU seconds and minor page faults; then a glint cold Q1 and Q6
(fresh connection) in the same process. The settings differ only in the
environment (the allocator is chosen when pyarrow loads)."""
import json
import os
import resource
import subprocess
import sys
import time

CONFIGS = {
    "default": {},
    "system": {"ARROW_DEFAULT_MEMORY_POOL": "system"},
    "system-nommap": {"ARROW_DEFAULT_MEMORY_POOL": "system", "MALLOC_MMAP_THRESHOLD_": str(1 << 30),
                      "MALLOC_TRIM_THRESHOLD_": str(1 << 36), "MALLOC_TOP_PAD_": str(1 << 28)},
    "jemalloc-retain": {"ARROW_DEFAULT_MEMORY_POOL": "jemalloc", "GLINT_JE_DECAY": "-1"},
    "mimalloc-retain": {"ARROW_DEFAULT_MEMORY_POOL": "mimalloc", "MIMALLOC_PURGE_DELAY": "-1",
                        "MIMALLOC_ALLOW_LARGE_OS_PAGES": "0"},
}


def child(sf: float, cuda: bool) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from concurrent.futures import ThreadPoolExecutor
    if os.environ.get("GLINT_JE_DECAY"):
        pa.jemalloc_set_decay_ms(int(os.environ["GLINT_JE_DECAY"]))
    from glint.workloads import tpch
    d = tpch.ensure_tpch_data(sf, progress=False)
    f = str(d / "lineitem.parquet")
    cols = ["l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate"]
    meta = pq.read_metadata(f)
    n = meta.num_row_groups
    runs = [list(range(i, min(n, i + 4))) for i in range(0, n, 4)]

    def read(gs):
        t = pq.ParquetFile(f, metadata=meta).read_row_groups(gs, columns=cols, use_threads=False)
        return t.nbytes

    out = {"pool": pa.default_memory_pool().backend_name}
    for threads in (1, 4, 16):
        use = runs if threads > 1 else runs[: max(1, len(runs) // 8)]
        with ThreadPoolExecutor(threads) as ex:
            best = None
            for _ in range(2):
                r0 = resource.getrusage(resource.RUSAGE_SELF)
                t0 = time.perf_counter()
                nbytes = sum(ex.map(read, use))
                dt = time.perf_counter() - t0
                r1 = resource.getrusage(resource.RUSAGE_SELF)
                row = {"gbps": round(nbytes / dt / 1e9, 3), "s": round(dt, 3),
                       "user_s": round(r1.ru_utime - r0.ru_utime, 2), "sys_s": round(r1.ru_stime - r0.ru_stime, 2),
                       "minflt": r1.ru_minflt - r0.ru_minflt}
                if best is None or row["s"] < best["s"]:
                    best = row
        out[f"threads{threads}"] = best
    # raw snappy: how fast the pages' compression alone could be undone
    data = pq.read_table(f, columns=["l_extendedprice"]).column(0).combine_chunks().buffers()[1]
    codec = pa.Codec("snappy")
    comp = [codec.compress(data.slice(o, 1 << 20)) for o in range(0, min(data.size, 256 << 20) - (1 << 20) + 1, 1 << 20)]
    with ThreadPoolExecutor(16) as ex:
        t0 = time.perf_counter()
        list(ex.map(lambda b: codec.decompress(b, decompressed_size=1 << 20), comp * 4))
        dt = time.perf_counter() - t0
    out["snappy16_gbps"] = round(len(comp) * 4 * (1 << 20) / dt / 1e9, 2)
    if cuda:
        import glint
        for q in (1, 6):
            con = glint.connect(device="cuda")
            tpch.load_tpch(con, directory=d, progress=False)
            t0 = time.perf_counter()
            con.sql(tpch.tpch_query(q)).arrow()
            out[f"glint_cold_q{q}_s"] = round(time.perf_counter() - t0, 3)
            t0 = time.perf_counter()
            con.sql(tpch.tpch_query(q)).arrow()
            out[f"glint_warm_q{q}_s"] = round(time.perf_counter() - t0, 3)
            con.close()
    return out


if __name__ == "__main__":
    sf = float(sys.argv[1])
    if len(sys.argv) > 2 and sys.argv[2] == "--child":
        import torch
        print("RESULT " + json.dumps(child(sf, torch.cuda.is_available())), flush=True)
        sys.exit(0)
    names = sys.argv[2:] or list(CONFIGS)
    results = {}
    for name in names:
        env = dict(os.environ, **CONFIGS[name])
        p = subprocess.run([sys.executable, __file__, str(sf), "--child"], env=env, capture_output=True, text=True)
        line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
        results[name] = json.loads(line[-1][7:]) if line else {"error": (p.stderr or p.stdout)[-1500:]}
        print(name, json.dumps(results[name]), flush=True)
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, f"decodebench_sf{sys.argv[1]}.json"), "w") as fh:
            json.dump(results, fh, indent=1)
