"""Cold scans of SSB lineorder files rewritten by pyarrow with optional
columns, without NULLs and with NULLs (10% scattered, and a run of 300,000
rows, in eight columns), glint on CUDA (default decoding, and
GLINT_PARQUET_DECODE=host, what such columns had before) and DuckDB; every
answer compared."""
import glob, json, os, sys, time
from concurrent.futures import ProcessPoolExecutor

import pyarrow as pa
import pyarrow.parquet as pq

DATA = os.environ.get("GLINT_DATA", "/tmp/glint-data")
SRC = sorted(glob.glob(f"{DATA}/ssb/sf{os.environ.get('MICRO_SF', '10')}/lineorder/*.parquet"))
REQ, OPT = "/tmp/opt", "/tmp/nul"
NULL_COLS = ("lo_revenue", "lo_supplycost", "lo_tax", "lo_quantity", "lo_discount", "lo_extendedprice",
             "lo_shipmode", "lo_commitdate")
ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 120_000_000


def rewrite(f):
    import numpy as np
    t = pq.read_table(f)
    t = t.cast(pa.schema([x.with_nullable(True) for x in t.schema]))
    md = pq.read_metadata(f)
    dicts = [md.schema.column(i).name for i in range(md.num_columns) if md.row_group(0).column(i).has_dictionary_page]
    pq.write_table(t, f"{REQ}/{os.path.basename(f)}", row_group_size=1 << 20, compression="snappy", use_dictionary=dicts)
    rng = np.random.default_rng(len(f))
    n = t.num_rows
    for c in NULL_COLS:
        mask = rng.random(n) < 0.1
        mask[n // 3 : n // 3 + 300_000] = True
        i = t.schema.get_field_index(c)
        col = t.column(c).combine_chunks()
        t = t.set_column(i, t.schema.field(c), pa.array(col.to_numpy(zero_copy_only=False), type=col.type, mask=mask))
    pq.write_table(t, f"{OPT}/{os.path.basename(f)}", row_group_size=1 << 20, compression="snappy", use_dictionary=dicts)
    return t.num_rows


def main():
    os.makedirs(REQ, exist_ok=True)
    os.makedirs(OPT, exist_ok=True)
    files, n = [], 0
    for f in SRC:
        files.append(f)
        n += pq.read_metadata(f).num_rows
        if n >= ROWS:
            break
    t0 = time.perf_counter()
    with ProcessPoolExecutor(16) as ex:
        rows = sum(ex.map(rewrite, files))
    print(f"rewrote {len(files)} files, {rows} rows, in {time.perf_counter() - t0:.1f} s", flush=True)
    md = pq.read_metadata(f"{OPT}/{os.path.basename(files[0])}")
    print("nulls:", {c: md.row_group(0).column(md.schema.names.index(c)).statistics.null_count for c in NULL_COLS[:3]})
    queries = {
        "filter_sum": "SELECT sum(lo_extendedprice * lo_discount) AS revenue FROM read_parquet('{d}/*.parquet') "
        "WHERE lo_discount BETWEEN 1 AND 3 AND lo_quantity < 25",
        "group_8cols": "SELECT lo_shipmode, count(*), sum(lo_revenue), sum(lo_supplycost), sum(lo_tax), "
        "min(lo_orderdate), max(lo_commitdate), sum(lo_quantity) FROM read_parquet('{d}/*.parquet') "
        "GROUP BY lo_shipmode ORDER BY 1",
    }
    import duckdb
    import glint

    out = {"rows": rows, "files": len(files), "results": {}}
    answers = {}
    for q, sql in queries.items():
        for name, d in (("optional", REQ), ("nulls", OPT)):
            for mode in ("", "host"):
                os.environ["GLINT_PARQUET_DECODE"] = mode
                times = []
                for i in range(3):
                    con = glint.connect(device=os.environ.get("MICRO_DEVICE", "cuda"))
                    t = time.perf_counter()
                    res = con.sql(sql.format(d=d)).arrow()
                    times.append(time.perf_counter() - t)
                    con.close()
                answers[(q, name, mode)] = res.to_pylist()
                key = f"{q} {name} glint {'host decode' if mode else 'default'}"
                out["results"][key] = {"runs_s": [round(x, 4) for x in times[1:]], "best_s": round(min(times[1:]), 4)}
                print(key, out["results"][key], flush=True)
            dd = duckdb.connect()
            dd.sql(sql.format(d=d)).fetchall()
            t = time.perf_counter()
            dres = dd.sql(sql.format(d=d)).fetchall()
            key = f"{q} {name} duckdb"
            out["results"][key] = {"best_s": round(time.perf_counter() - t, 4)}
            print(key, out["results"][key], flush=True)
            answers[(q, name, "duckdb")] = dres
        same = all(answers[(q, n, "")] == answers[(q, n, "host")] for n in ("optional", "nulls"))
        out[f"{q} glint answers equal"] = same
        out[f"{q} equal to duckdb"] = all(
            [tuple(x) for x in answers[(q, n, "duckdb")]] == [tuple(r.values()) for r in answers[(q, n, "")]]
            for n in ("optional", "nulls")
        )
        base = answers[(q, "nulls", "")]
        print(q, "glint equal:", same, "duckdb equal:", out[f"{q} equal to duckdb"], base[:2], flush=True)
    json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), "null-columns.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
