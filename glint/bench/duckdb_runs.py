"""DuckDB's side of ``glint bench``: in-memory tables and views on the Parquet
files, the queries timed on each; its results are the reference glint's are
checked against. DuckDB runs before glint and is closed before glint starts,
so the two never hold the data at once."""

from __future__ import annotations

import gc
import time
from pathlib import Path

from glint.bench.progress import Phase
from glint.bench.records import QueryRecord
from glint.bench.suites import Suite
from glint.errors import GlintError
from glint.workloads.tpch import duckdb_arrow

COMPRESS_FROM_SF = 30  # DuckDB in-memory tables compressed from this scale factor on


def require_duckdb():
    try:
        import duckdb  # optional: pip install -e ".[bench]"
    except ImportError:
        raise GlintError(
            "DuckDB is not installed: pip install duckdb (or pip install -e '.[bench]'), or run with --no-duckdb"
        ) from None
    return duckdb


def _parquet_pattern(path: str) -> str:
    p = Path(path)
    pattern = str(p / "**" / "*.parquet") if p.is_dir() else str(p)
    return pattern.replace("'", "''")


def duckdb_connection(
    found: dict[str, str], tables: list[str], views: bool, compress: bool = False, phase: Phase | None = None
):
    """DuckDB over the Parquet files ``found`` (table -> path): views on
    read_parquet, or in-memory tables (in a compressed in-memory database with
    ``compress``). All host cores (DuckDB's default)."""
    duckdb = require_duckdb()
    con = duckdb.connect()
    try:
        if compress and not views:
            con.execute("ATTACH ':memory:' AS m (COMPRESS)")
            con.execute("USE m")
        for t in tables:
            if phase:
                phase.update(f"loading {t}")
            kind = "VIEW" if views else "TABLE"
            con.execute(f"CREATE {kind} \"{t}\" AS SELECT * FROM read_parquet('{_parquet_pattern(found[t])}')")
    except duckdb.Error as e:
        con.close()
        what = "create views over" if views else "load"
        raise GlintError(f"DuckDB could not {what} the Parquet files: {str(e).strip().splitlines()[0]}") from None
    return con


def duckdb_threads(con) -> int | None:
    try:
        return int(con.execute("SELECT current_setting('threads')").fetchone()[0])
    except Exception:  # noqa: BLE001
        return None


def run_duckdb(
    mode: str,
    con,
    suite: Suite,
    names: list[str],
    records: dict[str, QueryRecord],
    reference: dict,
    runs: int,
    warmup: int,
    phase: Phase,
) -> None:
    """``warmup`` + ``runs`` runs of each query on ``con``; the times into the
    records, the first result of each into ``reference``."""
    for name in names:
        r = records[name]
        phase.update(r.label)
        sql = suite.query(name)
        times = []
        try:
            for i in range(warmup + runs):
                t0 = time.perf_counter()
                tbl = duckdb_arrow(con, sql)
                dt = time.perf_counter() - t0
                if i >= warmup:
                    times.append(dt)
            reference.setdefault(name, tbl)
        except KeyboardInterrupt:
            raise
        except Exception as e:  # noqa: BLE001 - reported per query
            r.duckdb_errors.append(f"DuckDB {mode} failed: {type(e).__name__}: {str(e).strip()[:500]}")
            times = []
        if mode == "in-memory":
            r.duckdb_memory_runs_s = times
        else:
            r.duckdb_parquet_runs_s = times
        phase.advance()


def _memory_phase(found, tables, names, suite, records, reference, runs, warmup, sf, err, show, info) -> float:
    """DuckDB on in-memory tables; returns the seconds the tables took to load."""
    compress = float(sf) >= COMPRESS_FROM_SF
    info["duckdb_memory_compressed"] = compress
    t0 = time.perf_counter()
    what = "DuckDB: loading in-memory tables" + (" (compressed)" if compress else "")
    with Phase(err, what, len(tables), show) as ph:
        con = duckdb_connection(found, tables, views=False, compress=compress, phase=ph)
    load_s = time.perf_counter() - t0
    info["duckdb_threads"] = duckdb_threads(con)
    try:
        with Phase(err, "DuckDB in-memory", len(names), show) as ph:
            run_duckdb("in-memory", con, suite, names, records, reference, runs, warmup, ph)
    finally:
        con.close()
    return load_s


def _parquet_phase(found, tables, names, suite, records, reference, runs, warmup, err, show, info) -> None:
    con = duckdb_connection(found, tables, views=True)
    if info["duckdb_threads"] is None:
        info["duckdb_threads"] = duckdb_threads(con)
    try:
        with Phase(err, "DuckDB on Parquet", len(names), show) as ph:
            run_duckdb("on Parquet", con, suite, names, records, reference, runs, warmup, ph)
    finally:
        con.close()


def run_duckdb_phases(
    found: dict[str, str],
    tables: list[str],
    names: list[str],
    suite: Suite,
    records: dict[str, QueryRecord],
    reference: dict,
    runs: int,
    warmup: int,
    sf: float,
    err,
    show: bool,
    memory: bool = True,
    parquet: bool = True,
) -> tuple[float | None, dict]:
    """DuckDB in-memory (from SF 30 on in a compressed in-memory database),
    then on the Parquet files; a phase DuckDB cannot set up is skipped with a
    warning. Returns the in-memory tables' load seconds and the report's
    ``duckdb_info``."""
    info: dict = {
        "duckdb_threads": None,
        "duckdb_memory_compressed": None,
        "duckdb_memory_error": None,
        "duckdb_parquet_error": None,
    }
    load_s = None
    if memory:
        try:
            load_s = _memory_phase(found, tables, names, suite, records, reference, runs, warmup, sf, err, show, info)
        except GlintError as e:
            info["duckdb_memory_error"] = str(e)
            err.print(f"[yellow]DuckDB in-memory skipped:[/] {e}", highlight=False)
    gc.collect()
    if parquet:
        try:
            _parquet_phase(found, tables, names, suite, records, reference, runs, warmup, err, show, info)
        except GlintError as e:
            info["duckdb_parquet_error"] = str(e)
            err.print(f"[yellow]DuckDB on Parquet skipped:[/] {e}", highlight=False)
    return load_s, info
