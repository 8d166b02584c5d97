"""Cold scans of SSB lineorder files written with required columns (glint's
generator) against the same rows rewritten by pyarrow with optional columns
(its default), glint on CUDA (default decoding, and GLINT_PARQUET_DECODE=host)
and DuckDB; every answer compared."""
import glob, json, os, sys, time
from concurrent.futures import ProcessPoolExecutor

import pyarrow as pa
import pyarrow.parquet as pq

DATA = os.environ.get("GLINT_DATA", "/tmp/glint-data")
SRC = sorted(glob.glob(f"{DATA}/ssb/sf100/lineorder/*.parquet"))
REQ, OPT = "/tmp/req", "/tmp/opt"
ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 120_000_000


def rewrite(f):
    t = pq.read_table(f)
    t = t.cast(pa.schema([x.with_nullable(True) for x in t.schema]))
    md = pq.read_metadata(f)
    dicts = [md.schema.column(i).name for i in range(md.num_columns) if md.row_group(0).column(i).has_dictionary_page]
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
    for f in files:
        dst = f"{REQ}/{os.path.basename(f)}"
        if not os.path.exists(dst):
            os.symlink(f, dst)
    t0 = time.perf_counter()
    with ProcessPoolExecutor(16) as ex:
        rows = sum(ex.map(rewrite, files))
    print(f"rewrote {len(files)} files, {rows} rows, in {time.perf_counter() - t0:.1f} s", flush=True)
    md = pq.read_metadata(f"{OPT}/{os.path.basename(files[0])}")
    print("optional:", md.schema.column(0).max_definition_level, md.row_group(0).column(0).statistics.null_count)
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
        for name, d in (("required", REQ), ("optional", OPT)):
            for mode in ("", "host"):
                os.environ["GLINT_PARQUET_DECODE"] = mode
                times = []
                for i in range(3):
                    con = glint.connect(device="cuda")
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
        base = answers[(q, "required", "")]
        same = all(answers[(q, n, m)] == base for n in ("required", "optional") for m in ("", "host"))
        dk = [tuple(r.values()) for r in base]
        out[f"{q} glint answers equal"] = same
        out[f"{q} equal to duckdb"] = [tuple(x) for x in answers[(q, "optional", "duckdb")]] == dk
        print(q, "glint equal:", same, "duckdb equal:", out[f"{q} equal to duckdb"], base[:2], flush=True)
    json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), "optional-columns.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
