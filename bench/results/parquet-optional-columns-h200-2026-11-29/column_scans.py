"""Cold scans of SSB lineorder files, glint on CUDA (default decoding, and
GLINT_PARQUET_DECODE=host, what optional columns had before) and DuckDB;
every answer compared.

    python3 column_scans.py optional ROWS   # SF 100's files as generated (required columns)
                                            # against the same rows rewritten with optional ones
    python3 column_scans.py nulls ROWS      # SF 10's rows rewritten with optional columns, without
                                            # NULLs and with NULLs (10% scattered and a run of
                                            # 300,000 rows, in eight columns)

MICRO_SF picks the scale factor, MICRO_DEVICE the device (a check on the CPU)."""
import glob
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

MODE = sys.argv[1]
ROWS = int(sys.argv[2])
DATA = os.environ.get("GLINT_DATA", "/tmp/glint-data")
SF = os.environ.get("MICRO_SF", "100" if MODE == "optional" else "10")
SRC = sorted(glob.glob(f"{DATA}/ssb/sf{SF}/lineorder/*.parquet"))
# the two data sets compared: (name, directory)
SETS = (("required", "/tmp/req"), ("optional", "/tmp/opt")) if MODE == "optional" else (
    ("optional", "/tmp/opt"), ("nulls", "/tmp/nul"))
NULL_COLS = ("lo_revenue", "lo_supplycost", "lo_tax", "lo_quantity", "lo_discount", "lo_extendedprice",
             "lo_shipmode", "lo_commitdate")
QUERIES = {
    "filter_sum": "SELECT sum(lo_extendedprice * lo_discount) AS revenue FROM read_parquet('{d}/*.parquet') "
    "WHERE lo_discount BETWEEN 1 AND 3 AND lo_quantity < 25",
    "group_8cols": "SELECT lo_shipmode, count(*), sum(lo_revenue), sum(lo_supplycost), sum(lo_tax), "
    "min(lo_orderdate), max(lo_commitdate), sum(lo_quantity) FROM read_parquet('{d}/*.parquet') "
    "GROUP BY lo_shipmode ORDER BY 1",
}


def _write(t, d, f, dicts):
    pq.write_table(t, f"{d}/{os.path.basename(f)}", row_group_size=1 << 20, compression="snappy", use_dictionary=dicts)


def rewrite(f):
    t = pq.read_table(f)
    t = t.cast(pa.schema([x.with_nullable(True) for x in t.schema]))
    md = pq.read_metadata(f)
    dicts = [md.schema.column(i).name for i in range(md.num_columns) if md.row_group(0).column(i).has_dictionary_page]
    if MODE == "optional":
        os.symlink(f, f"{SETS[0][1]}/{os.path.basename(f)}")
        _write(t, SETS[1][1], f, dicts)
        return t.num_rows
    _write(t, SETS[0][1], f, dicts)
    rng = np.random.default_rng(len(f))
    n = t.num_rows
    for c in NULL_COLS:
        mask = rng.random(n) < 0.1
        mask[n // 3 : n // 3 + 300_000] = True
        col = t.column(c).combine_chunks()
        masked = pa.array(col.to_numpy(zero_copy_only=False), type=col.type, mask=mask)
        t = t.set_column(t.schema.get_field_index(c), t.schema.field(c), masked)
    _write(t, SETS[1][1], f, dicts)
    return n


def cold_runs(sql, runs=3):
    """A fresh connection per run (the first a warm-up): the times of the others, the last answer."""
    import glint

    times = []
    for _ in range(runs):
        con = glint.connect(device=os.environ.get("MICRO_DEVICE", "cuda"))
        t = time.perf_counter()
        res = con.sql(sql).arrow()
        times.append(time.perf_counter() - t)
        con.close()
    return times[1:], res.to_pylist()


def main():
    for _, d in SETS:
        os.makedirs(d, exist_ok=True)
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
    import duckdb

    out = {"mode": MODE, "rows": rows, "files": len(files), "results": {}}
    for q, sql in QUERIES.items():
        answers = {}
        for name, d in SETS:
            for mode in ("", "host"):
                os.environ["GLINT_PARQUET_DECODE"] = mode
                times, answers[(name, mode)] = cold_runs(sql.format(d=d))
                key = f"{q} {name} glint {'host decode' if mode else 'default'}"
                out["results"][key] = {"runs_s": [round(x, 4) for x in times], "best_s": round(min(times), 4)}
                print(key, out["results"][key], flush=True)
            dd = duckdb.connect()
            dd.sql(sql.format(d=d)).fetchall()
            t = time.perf_counter()
            answers[(name, "duckdb")] = dd.sql(sql.format(d=d)).fetchall()
            out["results"][f"{q} {name} duckdb"] = {"best_s": round(time.perf_counter() - t, 4)}
            print(f"{q} {name} duckdb", out["results"][f"{q} {name} duckdb"], flush=True)
        names = [name for name, _ in SETS]
        same = all(answers[(x, "")] == answers[(x, "host")] for x in names)
        if MODE == "optional":  # the same rows both ways
            same = same and answers[(names[0], "")] == answers[(names[1], "")]
        duck = all(
            [tuple(r) for r in answers[(x, "duckdb")]] == [tuple(r.values()) for r in answers[(x, "")]] for x in names
        )
        out[f"{q} glint answers equal"], out[f"{q} equal to duckdb"] = same, duck
        print(q, "glint equal:", same, "duckdb equal:", duck, answers[(names[-1], "")][:2], flush=True)
    name = "optional-columns.json" if MODE == "optional" else "null-columns.json"
    json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), name), "w"), indent=1)


if __name__ == "__main__":
    main()
