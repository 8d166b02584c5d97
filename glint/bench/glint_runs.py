"""glint's side of ``glint bench``: the warm runs (tables registered once,
each query run first, warmed up and timed; with ``--profile`` once more under
torch.profiler) and the cold runs (each query on a fresh connection from
read_parquet through its result, by default in a fresh Python process), each
result checked against DuckDB's. On CUDA the device is synchronised before a
timer starts and before it is read."""

from __future__ import annotations

import datetime
import decimal
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import pyarrow as pa
import torch

import glint
from glint.bench.machine import device_name, slug
from glint.bench.profile import profile_run
from glint.bench.progress import Phase
from glint.bench.records import QueryRecord
from glint.bench.suites import Suite, get_suite
from glint.cli.common import result_arrow
from glint.engine.connection import resolve_device
from glint.errors import GlintError
from glint.io.parquet_source import ParquetSource
from glint.testing import compare


# ------------------------------------------------------------------ device
def sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def connect_device(device, opts: dict | None):
    """The device to give glint.connect: rank 0's device names the run's
    GPU, but a connection of several ranks takes the device type (one GPU
    per rank, ``cuda`` for ``cuda:0`` .. ``cuda:N-1``).

    >>> connect_device(torch.device("cuda:0"), {"ranks": 4}), connect_device(torch.device("cpu"), None)
    ('cuda', device(type='cpu'))
    """
    return device.type if (opts or {}).get("ranks") is not None else device


def reset_peak(device) -> int | None:
    """Reset the device's peak memory statistic; the bytes allocated now (None on the CPU)."""
    if device.type != "cuda":
        return None
    torch.cuda.reset_peak_memory_stats(device)
    return int(torch.cuda.memory_allocated(device))


def peak(device) -> int | None:
    if device.type != "cuda":
        return None
    return int(torch.cuda.max_memory_allocated(device))


def release_device(device) -> None:
    """Collect garbage and give the device's cached blocks back."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()


# ------------------------------------------------------------------ one query
def error_text(e: BaseException) -> str:
    if isinstance(e, GlintError):
        return f"{type(e).__name__}: {e}"
    text = f"internal error: {type(e).__name__}: {e}"
    if os.environ.get("GLINT_DEBUG"):
        text += "\n" + traceback.format_exc()
    return text


def glint_query(con, sql: str, io: list | None = None, ranks: list | None = None, plans: list | None = None):
    """Run sql and return its Arrow result, the device synchronised after;
    the run's data movement is appended to ``io``, a distributed run's
    per-rank breakdown to ``ranks``, and (whether its plan was reused, the
    seconds planning took) to ``plans`` when given."""
    res = con.sql(sql)
    tbl = result_arrow(res)
    sync(con.device)
    if plans is not None:
        timings = getattr(res, "timings", None) or {}
        plans.append((bool(getattr(res, "plan_cached", False)), sum(v for k, v in timings.items() if k != "execute")))
    if io is not None and getattr(res, "io", None) is not None:
        io.append({**res.io.as_dict(), "oom_retries": list(getattr(res, "retries", None) or [])})
    if ranks is not None and getattr(res, "rank_stats", None):
        ranks.append(res.rank_stats)
    return tbl


def timed(fn, device):
    sync(device)
    t0 = time.perf_counter()
    out = fn()
    sync(device)
    return out, time.perf_counter() - t0


def check_result(r: QueryRecord, which: str, sql: str, got, reference: dict) -> None:
    """Compare glint's result with DuckDB's (when there is one) into the record."""
    expected = reference.get(r.name)
    if expected is None:
        return
    diffs = compare.compare_query_result(sql, got, expected)
    if diffs:
        r.diffs.append(f"glint {which} differs from DuckDB:")
        r.diffs.extend("  " + d for d in diffs)
    else:
        r.checked.append(which)


def register_tables(
    con, found: dict[str, str], tables: list[str], eager: bool, phase: Phase | None, partition_keys: dict | None = None
) -> None:
    """read_parquet of each table: lazily (footers now, a column's data when a
    query first reads it) or, with eager, every column now; on a distributed
    connection, hash-partitioned on ``partition_keys`` (table -> column)."""
    for t in tables:
        if phase:
            phase.update(f"loading {t}" if eager else f"registering {t}")
        cols = list(ParquetSource(found[t]).schema.names) if eager else None
        key = (partition_keys or {}).get(t)
        if key is None:
            con.read_parquet(found[t], t, columns=cols)
        else:
            con.read_parquet(found[t], t, columns=cols, partition_by=key)


# ------------------------------------------------------------------ warm
def _warm_query(
    con, device, r: QueryRecord, sql: str, runs: int, warmup: int, ph: Phase, reference: dict, drop: bool = False
) -> None:
    """One query's first run, warm-ups and timed runs into its record
    (``drop``: each timed run after the device cache was dropped)."""
    r.gpu_baseline_bytes = reset_peak(device)
    try:
        ph.update(f"{r.label} first run")
        plans: list = []
        got, r.glint_first_s = timed(lambda: glint_query(con, sql, plans=plans), device)
        r.plan_s = plans[0][1] if plans else None
        for i in range(warmup):
            ph.update(f"{r.label} warm-up {i + 1}/{warmup}")
            timed(lambda: glint_query(con, sql), device)
        io: list = []
        ranks: list = []
        for i in range(runs):
            ph.update(f"{r.label} run {i + 1}/{runs}")
            if drop:
                con.drop_cache(release=False)  # (as after the cache's own evictions)
            got, dt = timed(lambda: glint_query(con, sql, io, ranks, plans), device)
            r.glint_warm_runs_s.append(dt)
        r.warm_plan_reused = len(plans) > 1 and all(cached for cached, _ in plans[1:])
        r.warm_io = io[-1] if io else None
        r.rank_stats = ranks[-1] if ranks else None
        r.rows = got.num_rows
    except KeyboardInterrupt:
        raise
    except Exception as e:  # noqa: BLE001 - reported per query
        r.errors.append("glint warm: " + error_text(e))
        r.glint_warm_runs_s = []
        release_device(device)
    else:
        check_result(r, "warm", sql, got, reference)
    r.peak_gpu_bytes = peak(device)


def run_glint_warm(
    device,
    suite: Suite,
    names,
    records,
    reference,
    found,
    tables,
    eager,
    runs,
    warmup,
    err,
    show,
    opts=None,
    partition_keys=None,
    profile: bool = False,
    drop_device_cache: bool = False,
) -> float:
    """The warm phase on one connection; returns the seconds the tables took
    to register (or load). ``drop_device_cache``: each timed run begins with
    no table chunks on the device."""
    con = glint.connect(device=connect_device(device, opts), **(opts or {}))
    try:
        t0 = time.perf_counter()
        what = "loading" if eager else "registering"
        with Phase(err, f"glint: {what} {len(tables)} tables", len(tables), show) as ph:
            register_tables(con, found, tables, eager, ph, partition_keys)
        load_s = time.perf_counter() - t0
        with Phase(err, f"glint warm ({device_name(device)})", len(names), show) as ph:
            for name in names:
                _warm_query(
                    con, device, records[name], suite.query(name), runs, warmup, ph, reference, drop_device_cache
                )
                ph.advance()
        if profile:
            # after every query's timed runs: a run under torch.profiler slows the host work of
            # the runs after it in the process (TPC-H SF 100 on an H200: Q18 141 ms timed after
            # the other queries' profiled runs took 161-177 ms)
            with Phase(err, "glint profiled runs", len(names), show) as ph:
                for name in names:
                    r = records[name]
                    if not r.errors:
                        ph.update(f"{r.label} profiled run")
                        r.profile = profile_run(lambda: glint_query(con, suite.query(name)), device)
                    ph.advance()
    finally:
        con.close()  # drops the tables and their device copies
        release_device(device)
    return load_s


# ------------------------------------------------------------------ cold
def cold_queries(device, suite_key: str, names, found, tables_of, eager, opts, result_dir, partition_keys=None):
    """The cold runs (each query on a fresh connection: read_parquet through
    the result; the connection's start, rank processes included, is not
    timed); returns per query a dict of times, peak memory, data movement and
    the result's path (Arrow IPC) or an error."""
    suite = get_suite(suite_key)
    out = {}
    for name in names:
        sql = suite.query(name)
        release_device(device)
        reset_peak(device)
        rec: dict = {}
        con = None
        try:
            con = glint.connect(device=connect_device(device, opts), **opts)
            sync(device)
            t0 = time.perf_counter()
            register_tables(con, found, tables_of[name], eager, None, partition_keys)
            rec["load_s"] = time.perf_counter() - t0
            io: list = []
            got = glint_query(con, sql, io)
            rec["s"] = time.perf_counter() - t0
            rec["io"] = io[-1] if io else None
            path = Path(result_dir) / f"{slug(name)}.arrow"
            with pa.OSFile(str(path), "wb") as f, pa.ipc.new_file(f, got.schema) as w:
                w.write_table(got)
            rec["result"] = str(path)
        except KeyboardInterrupt:
            raise
        except Exception as e:  # noqa: BLE001 - reported per query
            rec["error"] = error_text(e)
        finally:
            rec["peak"] = peak(device)
            if con is not None:
                con.close()
            del con
        out[name] = rec
    release_device(device)
    return out


def warm_up_process(device) -> None:
    """What a process does once, before its first query, out of the cold
    runs' times (as the imports and the CUDA context are): loading the GPU
    kernels' modules, Triton's cache key and compiled kernels, the allocator's
    first blocks. A few queries over a small in-memory table touch the same
    kinds of operators and kernels as the benchmarks."""
    n = 20_000
    t = pa.table(
        {
            "k": pa.array([i % 1000 for i in range(n)], pa.int64()),
            "g": pa.array([i % 7 for i in range(n)], pa.int32()),
            "d": pa.array([decimal.Decimal(i % 997) / 100 for i in range(n)], pa.decimal128(15, 2)),
            "dt": pa.array([datetime.date(1995, 1, 1) + datetime.timedelta(days=i % 900) for i in range(n)]),
            "s": pa.array([f"word{i % 13} text {i % 101}" for i in range(n)]),
        }
    )
    con = glint.connect(device=device)
    try:
        con.register("w", t)
        for sql in [
            "SELECT g, sum(d * (1 - d)), avg(d), count(*), min(dt) FROM w WHERE dt <= DATE '1996-06-01' "
            "GROUP BY g ORDER BY g",
            "SELECT a.g, count(DISTINCT b.k) FROM w a JOIN w b ON a.k = b.k AND a.g = b.g "
            "WHERE a.s LIKE '%word3%' GROUP BY a.g ORDER BY 2 DESC LIMIT 5",
            "SELECT s, substring(s, 1, 5), length(s) FROM w WHERE s NOT LIKE 'word1%' ORDER BY s LIMIT 3",
            "SELECT k FROM w WHERE k IN (SELECT k FROM w WHERE g = 3) AND NOT EXISTS "
            "(SELECT 1 FROM w x WHERE x.k = w.k AND x.g > 5) ORDER BY k LIMIT 1",
        ]:
            con.sql(sql).arrow()
    finally:
        con.close()
    release_device(device)


def cold_worker(import_s: float = 0.0) -> None:  # pragma: no cover - the cold phase's fresh process
    """Entry of the cold phase's process: arguments as JSON on stdin, results as JSON on stdout."""
    t0 = time.perf_counter()
    job = json.loads(sys.stdin.read())
    device = resolve_device(job["device"])
    if device.type == "cuda":
        torch.zeros(1, device=device)  # CUDA context: part of the process start
    warm_up_process(device)
    start_s = time.perf_counter() - t0 + import_s
    recs = cold_queries(
        device,
        job["suite"],
        job["names"],
        job["found"],
        job["tables_of"],
        job["eager"],
        job["opts"],
        job["result_dir"],
        job.get("partition_keys"),
    )
    sys.stdout.write(json.dumps({"start_s": start_s, "queries": recs}))


def _cold_in_fresh_process(job: dict) -> tuple[float, dict]:
    code = (
        "import time; t0 = time.perf_counter(); import torch, glint.bench.glint_runs as g; "
        "g.cold_worker(time.perf_counter() - t0)"
    )
    p = subprocess.run([sys.executable, "-c", code], input=json.dumps(job), capture_output=True, text=True)
    if p.returncode != 0:
        raise GlintError(f"the cold-run process failed (exit {p.returncode}): {p.stderr.strip()[-2000:]}")
    done = json.loads(p.stdout)
    return done["start_s"], done["queries"]


def run_glint_cold(
    device,
    suite: Suite,
    names,
    records,
    reference,
    found,
    eager,
    err,
    show,
    opts=None,
    fresh_process: bool = True,
    partition_keys=None,
) -> float | None:
    """Cold runs, by default in a fresh Python process (nothing imported,
    compiled or pinned yet; the OS page cache is not dropped). Returns that
    process's start-up time (imports, CUDA context and warm_up_process), not
    in the query times."""
    tables_of = {n: records[n].tables for n in names}
    with (
        tempfile.TemporaryDirectory(prefix="glint-cold-") as tmp,
        Phase(
            err, f"glint cold ({device_name(device)}{', fresh process' if fresh_process else ''})", len(names), show
        ) as ph,
    ):
        if fresh_process:
            start_s, recs = _cold_in_fresh_process(
                {
                    "device": str(device),
                    "suite": suite.key,
                    "names": list(names),
                    "found": found,
                    "tables_of": tables_of,
                    "eager": eager,
                    "opts": opts or {},
                    "result_dir": tmp,
                    "partition_keys": partition_keys,
                }
            )
        else:
            start_s, recs = (
                None,
                cold_queries(device, suite.key, names, found, tables_of, eager, opts or {}, tmp, partition_keys),
            )
        for name in names:
            r, rec = records[name], recs[name]
            ph.update(r.label)
            r.cold_peak_gpu_bytes = rec.get("peak")
            if "error" in rec:
                r.errors.append("glint cold: " + rec["error"])
            else:
                r.glint_cold_load_s, r.glint_cold_s, r.cold_io = rec["load_s"], rec["s"], rec["io"]
                with pa.memory_map(rec["result"]) as f:
                    got = pa.ipc.open_file(f).read_all()
                if r.rows is None:
                    r.rows = got.num_rows
                check_result(r, "cold", suite.query(name), got, reference)
            ph.advance()
    return start_s
