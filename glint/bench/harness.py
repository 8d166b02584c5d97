"""``glint bench tpch|ssb``: glint (warm and cold) against DuckDB (in-memory and
on the Parquet files), every glint result checked against DuckDB's.

What is measured, per query (times in seconds, wall clock; on CUDA the device is
synchronised before a timer starts and before it is read):

- **glint warm**: the tables are registered once with ``read_parquet`` (lazy:
  glint reads a column's data when a query first needs it; ``--eager`` reads
  every column up front). Each query is run once (this reads the columns it
  needs and copies them to the device, where they stay: ``glint_first_s``),
  ``--warmup`` times untimed, then ``--runs`` times timed; the median is
  reported. Data resident on the device, as the warm runs of "Terabyte-scale
  analytics in the blink of an eye".
- **glint cold**: after the warm phase has released everything, a fresh
  connection per query, timed from ``read_parquet`` of the tables the query
  reads through its result: Parquet -> host -> device -> result, once (the
  paper's cold runs, plus the Parquet decode). The OS page cache is not
  dropped, so the files usually come from memory rather than disk.
- **DuckDB in-memory**: the tables loaded into DuckDB (all host cores; from
  SF 30 on into ``ATTACH ':memory:' AS m (COMPRESS)``, since plain in-memory
  tables do not fit at SF 100), ``--warmup`` runs, then the median of ``--runs``.
- **DuckDB on Parquet**: the same over views on ``read_parquet``.

DuckDB runs first and is closed before glint starts, so the two never hold the
data at once. Every glint result (warm and cold) is compared with DuckDB's
(:func:`~glint.testing.compare.compare_query_result`); a difference, a glint
error or a result that could not be checked marks the query failed and makes
the command exit with 1. Peak GPU memory per query: ``peak_gpu_bytes`` is
``torch.cuda.max_memory_allocated`` over the query's warm runs (it includes
the columns resident from earlier queries, ``gpu_baseline_bytes``);
``cold_peak_gpu_bytes`` that of its cold run alone.

Writes ``<out>/<benchmark>_sf<sf>_<device>.json``, ``.md`` and ``.png``.
"""
from __future__ import annotations

import datetime as _dt
import gc
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from glint.errors import GlintError, GlintIOError

__all__ = ["BENCHMARKS", "add_arguments", "cmd_bench", "run_bench", "get_suite", "parse_query_names",
           "query_tables", "machine_info", "write_markdown", "SCHEMA_VERSION"]

BENCHMARKS = ("tpch", "ssb")
SCHEMA_VERSION = 1
COMPRESS_FROM_SF = 30        # DuckDB in-memory tables compressed from this scale factor on
MiB = 1 << 20


# ------------------------------------------------------------------ benchmarks
@dataclass(frozen=True)
class Suite:
    key: str                                    # "tpch" | "ssb"
    title: str                                  # "TPC-H" | "SSB"
    names: tuple[str, ...]                      # all query names, in order
    query: Callable[[str], str]                 # name -> SQL
    ensure_data: Callable[..., Path]            # (sf, progress=) -> directory of Parquet files
    label: Callable[[str], str]                 # name -> "Q01" / "Q1.1"
    parse: Callable[[str | None], list[str]]    # --queries text -> names
    partition_keys: dict = field(default_factory=dict)   # table -> column for --hash-partition


def get_suite(key: str) -> Suite:
    """The benchmark named ``key`` ("tpch" or "ssb")."""
    if key == "tpch":
        from glint.workloads import tpch

        names = tuple(str(n) for n in range(1, tpch.NUM_QUERIES + 1))

        def parse(text):
            from glint.cli.common import parse_query_list

            return [str(n) for n in parse_query_list(text)]
        return Suite("tpch", "TPC-H", names, lambda n: tpch.tpch_query(int(n)),
                     lambda sf, progress=True: tpch.ensure_tpch_data(sf, progress=progress),
                     lambda n: f"Q{int(n):02d}", parse, tpch.PARTITION_KEYS)
    if key == "ssb":
        try:
            from glint.workloads import ssb
        except ModuleNotFoundError as e:
            if e.name and e.name.endswith("ssb"):
                raise GlintError("the SSB benchmark (glint.workloads.ssb) is not part of this glint installation") \
                    from None
            raise GlintError(f"the SSB benchmark cannot be loaded: {e}") from None
        names = tuple(ssb.ssb_queries())
        return Suite("ssb", "SSB", names, ssb.ssb_query,
                     lambda sf, progress=True: ssb.ensure_ssb_data(sf, progress=progress),
                     lambda n: f"Q{n}", lambda text: parse_query_names(text, names, "SSB"))
    raise GlintError(f"unknown benchmark {key!r}: use one of {', '.join(BENCHMARKS)}")


def parse_query_names(text: str | None, names, title: str = "the benchmark") -> list[str]:
    """Query names out of '1.1,3.2', flights ('2' = 2.1, 2.2, ...), ranges
    ('1.2-2.1', in benchmark order); None or '' -> all.

    >>> n = ("1.1", "1.2", "1.3", "2.1", "2.2")
    >>> parse_query_names("q2, 1.2-1.3", n), parse_query_names(None, n) == list(n)
    (['2.1', '2.2', '1.2', '1.3'], True)
    """
    names = list(names)
    if text is None or not text.strip():
        return names
    lower = [n.lower() for n in names]

    def one(item: str) -> list[str]:
        item = item.strip().lower()
        item = item[1:] if item.startswith("q") else item
        if item in lower:
            return [names[lower.index(item)]]
        flight = [n for n, lo in zip(names, lower) if lo.startswith(item + ".")]
        if flight:
            return flight
        raise GlintError(f"there is no {title} query {item!r}: the queries are {', '.join(names)}")

    out: list[str] = []
    for part in text.split(","):
        if not part.strip():
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            lo, hi = one(a), one(b)
            i, j = names.index(lo[0]), names.index(hi[-1])
            if i > j:
                raise GlintError(f"empty query range {part.strip()!r}")
            picked = names[i:j + 1]
        else:
            picked = one(part)
        out.extend(n for n in picked if n not in out)
    if not out:
        raise GlintError(f"invalid query list {text!r}")
    return out


# ------------------------------------------------------------------ tables a query reads
def query_tables(sql: str, tables) -> list[str]:
    """The names among ``tables`` that ``sql`` reads (its table references;
    CTE and view names are not in ``tables``), in the order of ``tables``.

    >>> query_tables("WITH x AS (SELECT * FROM t) SELECT * FROM x, u", ["t", "u", "v"])
    ['t', 'u']
    """
    tables = list(tables)
    lower = {t.lower() for t in tables}
    try:
        import sqlglot
        import sqlglot.expressions as exp

        refs = {t.name.lower() for s in sqlglot.parse(sql, read="duckdb") if s is not None
                for t in s.find_all(exp.Table)}
    except Exception:  # noqa: BLE001 - unparsable here (glint will say why): every table named in it
        refs = set(re.findall(r"[a-z_][a-z0-9_]*", sql.lower())) & lower
    return [t for t in tables if t.lower() in refs]


# ------------------------------------------------------------------ machine
def _run_quiet(cmd: list[str], timeout: float = 10) -> str | None:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _ram_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def machine_info(device) -> dict:
    """Host, CPU, RAM, GPU and library versions of this run."""
    import pyarrow
    import torch

    from glint import __version__

    info = {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "ram_bytes": _ram_bytes(),
        "gpu_name": None, "gpu_count": 0, "gpu_memory_bytes": None, "gpu_driver_version": None,
        "cuda_version": torch.version.cuda,
        "torch_version": torch.__version__,
        "pyarrow_version": pyarrow.__version__,
        "duckdb_version": None,
        "glint_version": __version__,
        "glint_commit": None,
    }
    try:
        import duckdb

        info["duckdb_version"] = duckdb.__version__
    except ImportError:
        pass
    if torch.cuda.is_available():
        try:
            d = device if getattr(device, "type", None) == "cuda" else torch.device("cuda")
            props = torch.cuda.get_device_properties(d)
            info.update(gpu_name=props.name, gpu_count=torch.cuda.device_count(),
                        gpu_memory_bytes=int(props.total_memory))
        except Exception:  # noqa: BLE001 - informational only
            pass
        smi = _run_quiet(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
        if smi:
            info["gpu_driver_version"] = smi.splitlines()[0].strip()
    commit = _run_quiet(["git", "-C", str(Path(__file__).resolve().parent), "rev-parse", "--short", "HEAD"], 5)
    if commit:
        dirty = _run_quiet(["git", "-C", str(Path(__file__).resolve().parent), "status", "--porcelain",
                            "--untracked-files=no"], 5)
        info["glint_commit"] = commit + ("-dirty" if dirty else "")
    return info


def _device_name(device) -> str:
    if device.type == "cuda":
        import torch

        return torch.cuda.get_device_name(device)
    return "cpu"


def _slug(text: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "device"


# ------------------------------------------------------------------ per-query record
@dataclass
class QueryRecord:
    name: str
    label: str
    rows: int | None = None
    glint_first_s: float | None = None
    glint_warm_runs_s: list[float] = field(default_factory=list)
    glint_cold_s: float | None = None
    glint_cold_load_s: float | None = None
    duckdb_memory_runs_s: list[float] = field(default_factory=list)
    duckdb_parquet_runs_s: list[float] = field(default_factory=list)
    peak_gpu_bytes: int | None = None
    gpu_baseline_bytes: int | None = None
    cold_peak_gpu_bytes: int | None = None
    warm_io: dict | None = None          # data movement of the last warm run (ExecContext.io)
    cold_io: dict | None = None          # ... of the cold run
    rank_stats: list | None = None       # a distributed run: per rank breakdown of the last warm run
    tables: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)     # what was compared with DuckDB: "warm", "cold"
    errors: list[str] = field(default_factory=list)      # glint errors (warm / cold)
    duckdb_errors: list[str] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)

    @staticmethod
    def _median(xs):
        return statistics.median(xs) if xs else None

    @property
    def glint_warm_s(self):
        return self._median(self.glint_warm_runs_s)

    @property
    def duckdb_memory_s(self):
        return self._median(self.duckdb_memory_runs_s)

    @property
    def duckdb_parquet_s(self):
        return self._median(self.duckdb_parquet_runs_s)

    @property
    def speedup(self):
        w, d = self.glint_warm_s, self.duckdb_memory_s
        return d / w if w and d is not None else None

    def status(self, duckdb: bool) -> str:
        """ok | diff | error | unchecked (DuckDB off) | not checked (DuckDB failed)."""
        if self.errors:
            return "error"
        if self.diffs:
            return "diff"
        if not duckdb:
            return "unchecked"
        return "ok" if self.checked else "not checked"

    def correct(self, duckdb: bool):
        s = self.status(duckdb)
        return True if s == "ok" else (None if s == "unchecked" else False)

    def to_json(self, duckdb: bool) -> dict:
        return {
            "query": self.name, "label": self.label,
            "correct": self.correct(duckdb), "status": self.status(duckdb),
            "rows": self.rows,
            "glint_warm_s": self.glint_warm_s, "glint_cold_s": self.glint_cold_s,
            "duckdb_memory_s": self.duckdb_memory_s, "duckdb_parquet_s": self.duckdb_parquet_s,
            "speedup": self.speedup,
            "peak_gpu_bytes": self.peak_gpu_bytes,
            "glint_first_s": self.glint_first_s,
            "glint_warm_min_s": min(self.glint_warm_runs_s) if self.glint_warm_runs_s else None,
            "glint_warm_runs_s": self.glint_warm_runs_s,
            "glint_cold_load_s": self.glint_cold_load_s,
            "duckdb_memory_runs_s": self.duckdb_memory_runs_s,
            "duckdb_parquet_runs_s": self.duckdb_parquet_runs_s,
            "gpu_baseline_bytes": self.gpu_baseline_bytes,
            "cold_peak_gpu_bytes": self.cold_peak_gpu_bytes,
            "warm_io": self.warm_io,
            "cold_io": self.cold_io,
            "breakdown": _breakdown(self.rank_stats),
            "rank_stats": self.rank_stats,
            "touched_bytes": (self.cold_io or self.warm_io or {}).get("scanned_bytes"),
            "warm_h2d_bytes": (self.warm_io or {}).get("h2d_bytes"),
            "cold_h2d_bytes": (self.cold_io or {}).get("h2d_bytes"),
            "tables": self.tables,
            "checked": self.checked,
            "errors": self.errors + self.duckdb_errors,
            "diffs": self.diffs,
        }


def _breakdown(rank_stats) -> dict | None:
    """Compute / shuffle / broadcast / gather / wait seconds of the slowest
    rank, bytes and messages between ranks (glint.distributed.stats.summary)."""
    if not rank_stats:
        return None
    from glint.distributed.stats import summary
    return summary(rank_stats)


# ------------------------------------------------------------------ progress
class _Phase:
    """A transient rich progress bar on stderr (when it is a terminal), else
    one log line per step with the seconds since the phase began (so that a
    run cut off by a time limit still shows how far it got and where the time
    went); one summary line when the phase ends."""

    def __init__(self, err, title: str, total: int, show: bool):
        self.err, self.title, self.total, self.show = err, title, total, show
        self.bar = self.task = None
        self.log = not show and os.environ.get("GLINT_BENCH_LOG", "") not in ("", "0")

    def __enter__(self):
        self.t0 = time.perf_counter()
        if self.show:
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                       TimeElapsedColumn)
            self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=self.err, transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.title, total=self.total)
        return self

    def update(self, what: str) -> None:
        if self.bar is not None:
            self.bar.update(self.task, description=f"{self.title}: {what}")
        elif self.log:
            self.err.print(f"{self.title}: {what} (+{time.perf_counter() - self.t0:.1f} s)", style="dim",
                           markup=False, highlight=False)

    def advance(self) -> None:
        if self.bar is not None:
            self.bar.advance(self.task)

    def __exit__(self, exc_type, *_):
        if self.bar is not None:
            self.bar.stop()
        if exc_type is None:
            self.err.print(f"{self.title}: {time.perf_counter() - self.t0:.1f} s", style="dim", markup=False,
                           highlight=False)
        return False


# ------------------------------------------------------------------ DuckDB
def _duckdb():
    try:
        import duckdb
    except ImportError:
        raise GlintError("DuckDB is not installed: pip install duckdb (or pip install -e '.[bench]'), "
                         "or run with --no-duckdb") from None
    return duckdb


def _parquet_pattern(path: str) -> str:
    p = Path(path)
    pattern = str(p / "**" / "*.parquet") if p.is_dir() else str(p)
    return pattern.replace("'", "''")


def duckdb_connection(found: dict[str, str], tables: list[str], views: bool, compress: bool = False,
                      phase: _Phase | None = None):
    """DuckDB over the Parquet files ``found`` (table -> path): views on
    read_parquet, or in-memory tables (in a compressed in-memory database with
    ``compress``). All host cores (DuckDB's default)."""
    duckdb = _duckdb()
    con = duckdb.connect()
    try:
        if compress and not views:
            con.execute("ATTACH ':memory:' AS m (COMPRESS)")
            con.execute("USE m")
        for t in tables:
            if phase:
                phase.update(f"loading {t}")
            kind = "VIEW" if views else "TABLE"
            con.execute(f'CREATE {kind} "{t}" AS SELECT * FROM read_parquet(\'{_parquet_pattern(found[t])}\')')
    except duckdb.Error as e:
        con.close()
        what = "create views over" if views else "load"
        raise GlintError(f"DuckDB could not {what} the Parquet files: {str(e).strip().splitlines()[0]}") from None
    return con


def _duckdb_threads(con) -> int | None:
    try:
        return int(con.execute("SELECT current_setting('threads')").fetchone()[0])
    except Exception:  # noqa: BLE001
        return None


def _run_duckdb(mode: str, con, suite: Suite, names: list[str], records: dict[str, QueryRecord],
                reference: dict, runs: int, warmup: int, phase: _Phase) -> None:
    from glint.workloads.tpch import duckdb_arrow

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


# ------------------------------------------------------------------ glint
def _sync(device) -> None:
    if device.type == "cuda":
        import torch

        torch.cuda.synchronize(device)


def _reset_peak(device) -> int | None:
    if device.type != "cuda":
        return None
    import torch

    torch.cuda.reset_peak_memory_stats(device)
    return int(torch.cuda.memory_allocated(device))


def _peak(device) -> int | None:
    if device.type != "cuda":
        return None
    import torch

    return int(torch.cuda.max_memory_allocated(device))


def _release(device) -> None:
    gc.collect()
    if device.type == "cuda":
        import torch

        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()


def _error_text(e: BaseException) -> str:
    if isinstance(e, GlintError):
        return f"{type(e).__name__}: {e}"
    text = f"internal error: {type(e).__name__}: {e}"
    if os.environ.get("GLINT_DEBUG"):
        text += "\n" + traceback.format_exc()
    return text


def _glint_query(con, sql: str, io: list | None = None, ranks: list | None = None):
    """Run sql and return its Arrow result, the device synchronised after;
    the run's data movement is appended to ``io`` and a distributed run's
    per-rank breakdown to ``ranks`` when given."""
    from glint.cli.common import result_arrow as _result_arrow

    res = con.sql(sql)
    tbl = _result_arrow(res)
    _sync(con.device)
    if io is not None and getattr(res, "io", None) is not None:
        io.append({**res.io.as_dict(), "oom_retries": list(getattr(res, "retries", None) or [])})
    if ranks is not None and getattr(res, "rank_stats", None):
        ranks.append(res.rank_stats)
    return tbl


def _timed(fn, device):
    _sync(device)
    t0 = time.perf_counter()
    out = fn()
    _sync(device)
    return out, time.perf_counter() - t0


def _check(r: QueryRecord, which: str, sql: str, got, reference: dict) -> None:
    from glint.testing.compare import compare_query_result

    expected = reference.get(r.name)
    if expected is None:
        return
    diffs = compare_query_result(sql, got, expected)
    if diffs:
        r.diffs.append(f"glint {which} differs from DuckDB:")
        r.diffs.extend("  " + d for d in diffs)
    else:
        r.checked.append(which)


def _register_glint(con, found: dict[str, str], tables: list[str], eager: bool, phase: _Phase | None,
                    partition_keys: dict | None = None) -> None:
    """read_parquet of each table: lazily (footers now, a column's data when a
    query first reads it) or, with eager, every column now; on a distributed
    connection, hash-partitioned on ``partition_keys`` (table -> column)."""
    from glint.io.parquet_source import ParquetSource

    for t in tables:
        if phase:
            phase.update(f"loading {t}" if eager else f"registering {t}")
        cols = list(ParquetSource(found[t]).schema.names) if eager else None
        key = (partition_keys or {}).get(t)
        if key is None:
            con.read_parquet(found[t], t, columns=cols)
        else:
            con.read_parquet(found[t], t, columns=cols, partition_by=key)


def _run_glint_warm(device, suite: Suite, names, records, reference, found, tables, eager, runs, warmup, err,
                    show, opts=None, partition_keys=None):
    import glint

    con = glint.connect(device=device, **(opts or {}))
    try:
        t0 = time.perf_counter()
        what = "loading" if eager else "registering"
        with _Phase(err, f"glint: {what} {len(tables)} tables", len(tables), show) as ph:
            _register_glint(con, found, tables, eager, ph, partition_keys)
        load_s = time.perf_counter() - t0
        with _Phase(err, f"glint warm ({_device_name(device)})", len(names), show) as ph:
            for name in names:
                r = records[name]
                sql = suite.query(name)
                r.gpu_baseline_bytes = _reset_peak(device)
                try:
                    ph.update(f"{r.label} first run")
                    got, r.glint_first_s = _timed(lambda: _glint_query(con, sql), device)
                    for i in range(warmup):
                        ph.update(f"{r.label} warm-up {i + 1}/{warmup}")
                        _timed(lambda: _glint_query(con, sql), device)
                    io: list = []
                    ranks: list = []
                    for i in range(runs):
                        ph.update(f"{r.label} run {i + 1}/{runs}")
                        got, dt = _timed(lambda: _glint_query(con, sql, io, ranks), device)
                        r.glint_warm_runs_s.append(dt)
                    r.warm_io = io[-1] if io else None
                    r.rank_stats = ranks[-1] if ranks else None
                    r.rows = got.num_rows
                except KeyboardInterrupt:
                    raise
                except Exception as e:  # noqa: BLE001 - reported per query
                    r.errors.append("glint warm: " + _error_text(e))
                    r.glint_warm_runs_s = []
                    _release(device)
                else:
                    _check(r, "warm", sql, got, reference)
                r.peak_gpu_bytes = _peak(device)
                ph.advance()
    finally:
        con.close()             # drops the tables and their device copies
        _release(device)
    return load_s


def _cold_queries(device, suite_key: str, names, found, tables_of, eager, opts, result_dir, partition_keys=None):
    """The cold runs (each query on a fresh connection: read_parquet through
    the result; the connection's start, rank processes included, is not
    timed); returns per query a dict of times, peak memory, data movement and
    the result's path (Arrow IPC) or an error."""
    import glint
    import pyarrow as pa

    suite = get_suite(suite_key)
    out = {}
    for name in names:
        sql = suite.query(name)
        _release(device)
        _reset_peak(device)
        rec: dict = {}
        con = None
        try:
            con = glint.connect(device=device, **opts)
            _sync(device)
            t0 = time.perf_counter()
            _register_glint(con, found, tables_of[name], eager, None, partition_keys)
            rec["load_s"] = time.perf_counter() - t0
            io: list = []
            got = _glint_query(con, sql, io)
            rec["s"] = time.perf_counter() - t0
            rec["io"] = io[-1] if io else None
            path = Path(result_dir) / f"{_slug(name)}.arrow"
            with pa.OSFile(str(path), "wb") as f, pa.ipc.new_file(f, got.schema) as w:
                w.write_table(got)
            rec["result"] = str(path)
        except KeyboardInterrupt:
            raise
        except Exception as e:  # noqa: BLE001 - reported per query
            rec["error"] = _error_text(e)
        finally:
            rec["peak"] = _peak(device)
            if con is not None:
                con.close()
            del con
        out[name] = rec
    _release(device)
    return out


def warm_up_process(device) -> None:
    """What a process does once, before its first query, out of the cold
    runs' times (as the imports and the CUDA context are): loading the GPU
    kernels' modules, Triton's cache key and compiled kernels, the allocator's
    first blocks. A few queries over a small in-memory table touch the same
    kinds of operators and kernels as the benchmarks."""
    import datetime
    import decimal

    import glint
    import pyarrow as pa

    n = 20_000
    t = pa.table({
        "k": pa.array([i % 1000 for i in range(n)], pa.int64()),
        "g": pa.array([i % 7 for i in range(n)], pa.int32()),
        "d": pa.array([decimal.Decimal(i % 997) / 100 for i in range(n)], pa.decimal128(15, 2)),
        "dt": pa.array([datetime.date(1995, 1, 1) + datetime.timedelta(days=i % 900) for i in range(n)]),
        "s": pa.array([f"word{i % 13} text {i % 101}" for i in range(n)]),
    })
    con = glint.connect(device=device)
    try:
        con.register("w", t)
        for sql in ["SELECT g, sum(d * (1 - d)), avg(d), count(*), min(dt) FROM w WHERE dt <= DATE '1996-06-01' "
                    "GROUP BY g ORDER BY g",
                    "SELECT a.g, count(DISTINCT b.k) FROM w a JOIN w b ON a.k = b.k AND a.g = b.g "
                    "WHERE a.s LIKE '%word3%' GROUP BY a.g ORDER BY 2 DESC LIMIT 5",
                    "SELECT s, substring(s, 1, 5), length(s) FROM w WHERE s NOT LIKE 'word1%' ORDER BY s LIMIT 3",
                    "SELECT k FROM w WHERE k IN (SELECT k FROM w WHERE g = 3) AND NOT EXISTS "
                    "(SELECT 1 FROM w x WHERE x.k = w.k AND x.g > 5) ORDER BY k LIMIT 1"]:
            con.sql(sql).arrow()
    finally:
        con.close()
    _release(device)


def cold_worker(import_s: float = 0.0) -> None:    # pragma: no cover - the cold phase's fresh process
    """Entry of the cold phase's process: arguments as JSON on stdin, results as JSON on stdout."""
    t0 = time.perf_counter()
    job = json.loads(sys.stdin.read())
    from glint.engine.connection import resolve_device
    device = resolve_device(job["device"])
    if device.type == "cuda":
        import torch
        torch.zeros(1, device=device)            # CUDA context: part of the process start
    warm_up_process(device)
    start_s = time.perf_counter() - t0 + import_s
    recs = _cold_queries(device, job["suite"], job["names"], job["found"], job["tables_of"], job["eager"],
                         job["opts"], job["result_dir"], job.get("partition_keys"))
    sys.stdout.write(json.dumps({"start_s": start_s, "queries": recs}))


def _run_glint_cold(device, suite: Suite, names, records, reference, found, eager, err, show, opts=None,
                    fresh_process: bool = True, partition_keys=None) -> float | None:
    """Cold runs, by default in a fresh Python process (nothing imported,
    compiled or pinned yet; the OS page cache is not dropped). Returns that
    process's start-up time (imports, CUDA context and warm_up_process), not
    in the query times."""
    import tempfile

    import pyarrow as pa

    tables_of = {n: records[n].tables for n in names}
    with tempfile.TemporaryDirectory(prefix="glint-cold-") as tmp, \
            _Phase(err, f"glint cold ({_device_name(device)}{', fresh process' if fresh_process else ''})",
                   len(names), show) as ph:
        if fresh_process:
            job = {"device": str(device), "suite": suite.key, "names": list(names), "found": found,
                   "tables_of": tables_of, "eager": eager, "opts": opts or {}, "result_dir": tmp,
                   "partition_keys": partition_keys}
            code = ("import time; t0 = time.perf_counter(); import torch, glint.bench.harness as h; "
                    "h.cold_worker(time.perf_counter() - t0)")
            p = subprocess.run([sys.executable, "-c", code], input=json.dumps(job), capture_output=True, text=True)
            if p.returncode != 0:
                raise GlintError(f"the cold-run process failed (exit {p.returncode}): {p.stderr.strip()[-2000:]}")
            done = json.loads(p.stdout)
            start_s, recs = done["start_s"], done["queries"]
        else:
            start_s, recs = None, _cold_queries(device, suite.key, names, found, tables_of, eager, opts or {}, tmp,
                                                partition_keys)
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
                _check(r, "cold", suite.query(name), got, reference)
            ph.advance()
    return start_s


# ------------------------------------------------------------------ the run
def _sf_value(sf: float):
    return int(sf) if float(sf).is_integer() else float(sf)


def _sum(xs) -> float | None:
    xs = [x for x in xs if x is not None]
    return sum(xs) if xs else None


def run_bench(args, err=None, show: bool | None = None) -> dict:
    """Run the benchmark described by the parsed arguments; returns the report
    (the JSON document) and leaves writing it to the caller."""
    from glint.engine.connection import resolve_device
    from glint.cli.common import console as _console
    from glint.io.file_lists import tables_in_directory
    from glint.workloads.tpch import sf_label

    err = err or _console(stderr=True)
    show = err.is_terminal if show is None else show
    if args.runs < 1:
        raise GlintError("--runs must be at least 1")
    if args.warmup < 0:
        raise GlintError("--warmup must be 0 or more")
    duckdb_runs = args.duckdb_runs if args.duckdb_runs is not None else args.runs
    if duckdb_runs < 1:
        raise GlintError("--duckdb-runs must be at least 1")
    label = sf_label(args.sf)
    suite = get_suite(args.benchmark)
    names = suite.parse(args.queries)
    cold_names = [] if not args.cold else (suite.parse(args.cold_queries) if args.cold_queries else list(names))
    ranks = getattr(args, "ranks", None)
    device = resolve_device(args.device) if ranks is None else _rank0_device(args.device, ranks)
    device_label = _device_name(device) if ranks is None else f"{ranks} ranks x {_device_name(device)}"
    keys = suite.partition_keys if getattr(args, "hash_partition", False) else None
    use_duckdb = not args.no_duckdb
    if use_duckdb:
        _duckdb()

    # -------- data
    t0 = time.perf_counter()
    if args.data:
        data = Path(os.path.expanduser(args.data))
    else:
        data = suite.ensure_data(args.sf, progress=show)
    found = tables_in_directory(data)
    all_names = list(dict.fromkeys(names + cold_names))
    tables_of = {n: query_tables(suite.query(n), sorted(found)) for n in all_names}
    for n, ts in tables_of.items():
        if not ts:
            raise GlintIOError(f"{suite.title} {suite.label(n)} reads none of the tables in {str(data)!r} "
                               f"({', '.join(sorted(found))})")
    tables = sorted({t for ts in tables_of.values() for t in ts})
    err.print(f"{suite.title} SF {label} from {data} ({len(names)} queries, {len(tables)} tables; "
              f"glint on {device_label}; median of {_n(args.runs, 'run')} after {_n(args.warmup, 'warm-up')})",
              markup=False, highlight=False)
    prep_s = time.perf_counter() - t0

    records = {n: QueryRecord(n, suite.label(n)) for n in all_names}
    for n in all_names:
        records[n].tables = tables_of[n]
    reference: dict = {}
    load = {"data_prepare_s": prep_s, "glint_host_s": None, "duckdb_memory_s": None}
    info: dict = {"duckdb_threads": None, "duckdb_memory_compressed": None, "duckdb_memory_error": None,
                  "duckdb_parquet_error": None}

    # -------- DuckDB (first, and closed before glint runs, so both never hold the data at once)
    if use_duckdb:
        if not getattr(args, "no_duckdb_memory", False):
            compress = float(args.sf) >= COMPRESS_FROM_SF
            info["duckdb_memory_compressed"] = compress
            try:
                t0 = time.perf_counter()
                what = "DuckDB: loading in-memory tables" + (" (compressed)" if compress else "")
                with _Phase(err, what, len(tables), show) as ph:
                    con = duckdb_connection(found, tables, views=False, compress=compress, phase=ph)
                load["duckdb_memory_s"] = time.perf_counter() - t0
                info["duckdb_threads"] = _duckdb_threads(con)
                try:
                    with _Phase(err, "DuckDB in-memory", len(all_names), show) as ph:
                        _run_duckdb("in-memory", con, suite, all_names, records, reference, duckdb_runs, args.warmup,
                                    ph)
                finally:
                    con.close()
            except GlintError as e:
                info["duckdb_memory_error"] = str(e)
                err.print(f"[yellow]DuckDB in-memory skipped:[/] {e}", highlight=False)
        gc.collect()
        if not args.no_duckdb_parquet:
            try:
                con = duckdb_connection(found, tables, views=True)
                if info["duckdb_threads"] is None:
                    info["duckdb_threads"] = _duckdb_threads(con)
                try:
                    with _Phase(err, "DuckDB on Parquet", len(all_names), show) as ph:
                        _run_duckdb("on Parquet", con, suite, all_names, records, reference, duckdb_runs,
                                    args.warmup, ph)
                finally:
                    con.close()
            except GlintError as e:
                info["duckdb_parquet_error"] = str(e)
                err.print(f"[yellow]DuckDB on Parquet skipped:[/] {e}", highlight=False)

    # -------- glint warm, then cold (after the warm data is released)
    warm_tables = sorted({t for n in names for t in tables_of[n]})
    t0 = time.perf_counter()
    opts = connect_options(args)
    load["glint_host_s"] = _run_glint_warm(device, suite, names, records, reference, found, warm_tables,
                                           args.eager, args.runs, args.warmup, err, show, opts, keys)
    if cold_names:
        # ranks torchrun started cannot be joined from a fresh process
        fresh = getattr(args, "cold_process", True) and ranks != "env"
        load["glint_cold_process_start_s"] = _run_glint_cold(device, suite, cold_names, records, reference, found,
                                                             args.eager, err, show, opts, fresh, keys)

    # -------- report
    recs = [records[n] for n in all_names]
    queries = [r.to_json(use_duckdb) for r in recs]
    machine = machine_info(device)
    failed = [q["label"] for q in queries if q["status"] not in ("ok", "unchecked")]

    def total(key):
        return _sum(q[key] for q in queries)

    report = {
        "schema_version": SCHEMA_VERSION,
        "benchmark": suite.key,
        "title": suite.title,
        "sf": _sf_value(args.sf),
        "sf_label": label,
        "device": device_label,
        "device_type": device.type,
        "ranks": 1 if ranks is None else (ranks if ranks != "env" else _torchrun_size()),
        "hash_partition": bool(keys),
        "glint_version": machine["glint_version"],
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "runs": args.runs,
        "warmup": args.warmup,
        "duckdb_runs": duckdb_runs if use_duckdb else None,
        "statistic": "median",
        "duckdb": use_duckdb,
        "cold": bool(cold_names),
        "glint_load": "eager" if args.eager else "lazy",
        "glint_options": opts,
        "data_dir": str(data),
        "queries": queries,
        "glint_warm_total_s": total("glint_warm_s"),
        "glint_cold_total_s": total("glint_cold_s"),
        "duckdb_memory_total_s": total("duckdb_memory_s"),
        "duckdb_parquet_total_s": total("duckdb_parquet_s"),
        "speedup_total": None,
        "queries_total": len(queries),
        "queries_correct": sum(q["correct"] is True for q in queries),
        "queries_failed": failed,
        "load_s": load,
        "glint_wall_s": time.perf_counter() - t0,
        "duckdb_info": info,
        "machine": machine,
    }
    both = [q for q in queries if q["glint_warm_s"] and q["duckdb_memory_s"] is not None]
    if both:
        report["speedup_total"] = sum(q["duckdb_memory_s"] for q in both) / sum(q["glint_warm_s"] for q in both)
    return report


def _rank0_device(device: str, ranks):
    """The device of rank 0 of a distributed run (cuda:0, or the CPU)."""
    if ranks == "env":
        from glint.distributed.launch import torchrun_device, torchrun_env
        return torchrun_device(device, torchrun_env()[2])
    from glint.distributed.launch import rank_devices
    return rank_devices(device, ranks)[0]


def _torchrun_size() -> int:
    from glint.distributed.launch import torchrun_env
    return torchrun_env()[1]


# ------------------------------------------------------------------ output
def _n(k: int, what: str) -> str:
    return f"{k} {what}" + ("" if k == 1 else "s")


def _s(x, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _mib(x) -> str:
    return "-" if x is None else f"{x / MiB:,.0f}"


def _speed(x) -> str:
    return "-" if x is None else (f"{x:.1f}x" if x >= 1 else f"{x:.2g}x")


_CHECK_TEXT = {"ok": "ok", "unchecked": "unchecked", "not checked": "NOT CHECKED (DuckDB failed)",
               "diff": "DIFF", "error": "ERROR"}


def _header(report: dict) -> str:
    return f"{report['title']} SF {report['sf_label']} on {report['device']}"


def print_table(out, report: dict) -> None:
    from rich.table import Table
    from rich.text import Text

    t = Table(title=_header(report) + f" (median of {report['runs']}, s)", header_style="bold")
    dist = report.get("ranks", 1) != 1
    extra = [(c, "right") for c in _BREAKDOWN_COLUMNS] if dist else []
    for col, just in [("query", "left"), ("rows", "right"), ("glint warm", "right"), ("glint cold", "right"),
                      ("DuckDB mem", "right"), ("DuckDB parquet", "right"), ("speedup", "right"),
                      ("peak GPU MiB", "right"), ("H2D MiB cold/warm", "right"), ("touched MiB", "right"),
                      *extra, ("check", "left")]:
        t.add_column(col, justify=just)
    styles = {"ok": "green", "unchecked": "dim", "diff": "bold red", "error": "bold red", "not checked": "bold red"}
    for q in report["queries"]:
        t.add_row(q["label"], "-" if q["rows"] is None else str(q["rows"]), _s(q["glint_warm_s"]),
                  _s(q["glint_cold_s"]), _s(q["duckdb_memory_s"]), _s(q["duckdb_parquet_s"]), _speed(q["speedup"]),
                  _mib(q["peak_gpu_bytes"]), f"{_mib(q.get('cold_h2d_bytes'))}/{_mib(q.get('warm_h2d_bytes'))}",
                  _mib(q.get("touched_bytes")), *(_breakdown_cells(q) if dist else []),
                  Text(_CHECK_TEXT[q["status"]], style=styles[q["status"]]))
    t.add_section()
    n_ok = sum(q["status"] in ("ok", "unchecked") for q in report["queries"])
    t.add_row("total", "", _s(report["glint_warm_total_s"]), _s(report["glint_cold_total_s"]),
              _s(report["duckdb_memory_total_s"]), _s(report["duckdb_parquet_total_s"]),
              _speed(report["speedup_total"]), "", "", "", *([""] * len(extra)), f"{n_ok}/{len(report['queries'])} ok")
    out.print(t)
    for q in report["queries"]:
        details = q["errors"] + q["diffs"]
        if details:
            out.print(Text(f"{q['label']}:", style="bold"))
            for d in details:
                out.print(Text("  " + d))


_BREAKDOWN_COLUMNS = ("compute s", "shuffle s", "bcast s", "gather s", "reduce s", "wait s", "moved MiB", "msgs")


def _breakdown_cells(q: dict) -> list[str]:
    """A distributed run's warm breakdown of one query (slowest rank's seconds)."""
    b = q.get("breakdown")
    if not b:
        return ["-"] * len(_BREAKDOWN_COLUMNS)
    return [_s(b[k]) for k in ("compute_s", "shuffle_s", "broadcast_s", "gather_s", "allreduce_s", "wait_s")] + \
        [_mib(b["bytes_sent"]), str(b["messages_sent"])]


def write_markdown(report: dict, path: Path) -> None:
    m = report["machine"]
    gib = (lambda b: "?" if b is None else f"{b / (1 << 30):.0f} GiB")
    lines = [f"# {_header(report)}", ""]
    gpu = (f"{m['gpu_name']} ({gib(m['gpu_memory_bytes'])}, driver {m['gpu_driver_version'] or '?'}, "
           f"CUDA {m['cuda_version'] or '?'})" if m["gpu_name"] else "none")
    lines += [f"- date: {report['timestamp']}; glint {report['glint_version']}"
              + (f" ({m['glint_commit']})" if m.get("glint_commit") else ""),
              f"- host: {m['hostname']}, {m['cpu_count']} CPUs ({m['cpu_model'] or '?'}), {gib(m['ram_bytes'])} RAM; "
              f"GPU: {gpu}",
              f"- torch {m['torch_version']}, pyarrow {m['pyarrow_version']}, DuckDB {m['duckdb_version'] or '-'}"
              + (f" ({report['duckdb_info']['duckdb_threads']} threads"
                 + (", compressed in-memory tables" if report["duckdb_info"]["duckdb_memory_compressed"] else "")
                 + ")" if report["duckdb"] else " (not run)"),
              f"- times in seconds: median of {_n(report['runs'], 'run')} after {_n(report['warmup'], 'warm-up run')}; "
              f"glint cold = one run from read_parquet through the result on a fresh connection; "
              f"speedup = DuckDB in-memory / glint warm",
              ""]
    opts = report.get("glint_options") or {}
    if opts:
        lines.insert(-1, "- glint options: " + ", ".join(f"{k}={v}" for k, v in opts.items()))
    start = (report.get("load_s") or {}).get("glint_cold_process_start_s")
    if start is not None:
        lines.insert(-1, f"- glint cold runs in a fresh process; its start (imports, CUDA context, a warm-up "
                         f"query on a small table) took {start:.2f} s, not counted in the query times")
    dist = report.get("ranks", 1) != 1
    extra = list(_BREAKDOWN_COLUMNS) if dist else []
    if dist:
        lines.insert(-1, f"- {report['ranks']} ranks{' (tables hash-partitioned on their keys)' if report.get('hash_partition') else ''}; "
                         "compute / shuffle / bcast / gather / reduce / wait: the slowest rank's seconds in the last warm "
                         "run; moved: bytes sent between ranks")
    lines.append("| query | rows | glint warm | glint cold | DuckDB in-memory | DuckDB on Parquet | speedup "
                 "| peak GPU MiB | H2D MiB cold | H2D MiB warm | columns touched MiB | "
                 + "".join(f"{c} | " for c in extra) + "check |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(extra) + "---|")
    for q in report["queries"]:
        cells = "".join(f"{c} | " for c in (_breakdown_cells(q) if dist else []))
        lines.append(f"| {q['label']} | {'-' if q['rows'] is None else q['rows']} | {_s(q['glint_warm_s'])} "
                     f"| {_s(q['glint_cold_s'])} | {_s(q['duckdb_memory_s'])} | {_s(q['duckdb_parquet_s'])} "
                     f"| {_speed(q['speedup'])} | {_mib(q['peak_gpu_bytes'])} | {_mib(q.get('cold_h2d_bytes'))} "
                     f"| {_mib(q.get('warm_h2d_bytes'))} | {_mib(q.get('touched_bytes'))} | {cells}"
                     f"{_CHECK_TEXT[q['status']]} |")
    n_ok = sum(q["status"] in ("ok", "unchecked") for q in report["queries"])
    lines.append(f"| **total** | | {_s(report['glint_warm_total_s'])} | {_s(report['glint_cold_total_s'])} "
                 f"| {_s(report['duckdb_memory_total_s'])} | {_s(report['duckdb_parquet_total_s'])} "
                 f"| {_speed(report['speedup_total'])} | | | | | " + "| " * len(extra)
                 + f"{n_ok}/{len(report['queries'])} ok |")
    bad = [q for q in report["queries"] if q["errors"] or q["diffs"]]
    if bad:
        lines += ["", "## Failures", ""]
        for q in bad:
            lines.append(f"- **{q['label']}**")
            lines += ["  ```", *("  " + d for d in q["errors"] + q["diffs"]), "  ```"]
    try:
        path.write_text("\n".join(lines) + "\n")
    except OSError as e:
        raise GlintIOError(f"cannot write {str(path)!r}: {e.strerror or e}") from None


def default_out_dir(report: dict) -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("bench") / "results" / f"{report['benchmark']}-sf{report['sf_label']}-{_slug(report['device'])}-{stamp}"


def write_outputs(report: dict, out_dir: Path, err) -> dict[str, Path]:
    """JSON, markdown and (when matplotlib is installed) PNG into out_dir."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise GlintIOError(f"cannot create the output directory {str(out_dir)!r}: {e.strerror or e}") from None
    stem = f"{report['benchmark']}_sf{report['sf_label']}_{_slug(report['device'])}"
    paths = {"json": out_dir / f"{stem}.json", "md": out_dir / f"{stem}.md", "png": out_dir / f"{stem}.png"}
    try:
        paths["json"].write_text(json.dumps(report, indent=2, default=str) + "\n")
    except OSError as e:
        raise GlintIOError(f"cannot write {str(paths['json'])!r}: {e.strerror or e}") from None
    write_markdown(report, paths["md"])
    from glint.bench.plot import plot_report

    try:
        plot_report(report, paths["png"])
    except ImportError:
        err.print("[yellow]matplotlib is not installed: no chart written[/] (pip install matplotlib, "
                  "or pip install -e '.[bench]')", highlight=False)
        del paths["png"]
    return paths


# ------------------------------------------------------------------ command line
def add_arguments(p) -> None:
    """The options of ``glint bench`` on an argparse (sub)parser."""
    import argparse

    p.add_argument("benchmark", choices=BENCHMARKS + ("exchange",),
                   help="tpch or ssb; exchange: glint's shuffle and broadcast against raw collectives on --ranks "
                        "(glint.bench.exchange)")
    p.add_argument("--sf", type=float, default=1.0, help="scale factor (default 1)")
    p.add_argument("--device", default="auto", help='"auto" (default), "cpu", "cuda" or "cuda:N"')
    p.add_argument("--queries", help="e.g. 1,5,9 or 1-6 for TPC-H; 1.1,2.3, a flight (2) or 1.1-2.3 for SSB "
                                     "(default: all)")
    p.add_argument("--runs", type=int, default=5, help="timed runs per query; the median is reported (default 5)")
    p.add_argument("--warmup", type=int, default=1,
                   help="untimed runs before the timed ones (glint: after the first run, which loads the "
                        "columns to the device) (default 1)")
    p.add_argument("--out", help="output directory (default bench/results/<benchmark>-sf<sf>-<device>-<date>)")
    p.add_argument("--data", help="use the Parquet files in this directory instead of the generated cache")
    p.add_argument("--no-duckdb", action="store_true", help="no DuckDB runs, so no result checks")
    p.add_argument("--no-duckdb-parquet", action="store_true", help="skip DuckDB on the Parquet files")
    p.add_argument("--no-duckdb-memory", action="store_true",
                   help="skip DuckDB's in-memory tables (results are then checked against DuckDB on Parquet)")
    p.add_argument("--duckdb-runs", type=int, help="timed DuckDB runs per query (default: --runs)")
    p.add_argument("--cold", action=argparse.BooleanOptionalAction, default=True,
                   help="also time glint cold runs: fresh connection, read_parquet through the result "
                        "(default on)")
    p.add_argument("--cold-queries", help="queries for the cold runs (default: --queries)")
    p.add_argument("--cold-process", action=argparse.BooleanOptionalAction, default=True,
                   help="run the cold phase in a fresh Python process (default on; its start-up, imports and "
                        "CUDA context, is reported apart from the query times)")
    from glint.cli.common import memory_arguments
    memory_arguments(p)
    p.add_argument("--eager", action="store_true",
                   help="read every column of the tables at read_parquet (default: glint reads a column "
                        "when a query first needs it)")
    from glint.cli.common import add_rank_arguments
    add_rank_arguments(p)
    p.add_argument("--sizes", help="exchange: bytes per rank to move, e.g. 1MB,16MB,1GB (default "
                                   "1MB,4MB,16MB,64MB,256MB,1GB)")
    p.add_argument("--seed", type=int, default=0, help="exchange: seed of the generated rows (default 0)")
    p.add_argument("--hash-partition", action="store_true",
                   help="with --ranks: hash-partition the tables on their keys at load (TPC-H: lineitem and "
                        "orders on the order key, ...), so joins on them need no exchange")


def merge_reports(reports: list[dict]) -> dict:
    """One report from several runs of the same benchmark, SF and device (a
    long benchmark split across calls): per query, each measurement is taken
    from the first report that has it; a query is correct when every report
    that checked it found it correct.

    >>> a = {"benchmark": "tpch", "sf": 1, "device": "x", "queries": [
    ...     {"query": "1", "label": "Q01", "correct": True, "status": "ok", "glint_warm_s": 1.0,
    ...      "duckdb_memory_s": 2.0, "duckdb_parquet_s": None, "glint_cold_s": None}]}
    >>> b = {"benchmark": "tpch", "sf": 1, "device": "x", "queries": [
    ...     {"query": "1", "label": "Q01", "correct": True, "status": "ok", "glint_warm_s": 1.1,
    ...      "duckdb_memory_s": None, "duckdb_parquet_s": 3.0, "glint_cold_s": 4.0}]}
    >>> m = merge_reports([a, b])
    >>> m["queries"][0]["glint_cold_s"], m["duckdb_parquet_total_s"], m["speedup_total"], m["queries_failed"]
    (4.0, 3.0, 2.0, [])
    """
    first = dict(reports[0])
    for r in reports[1:]:
        for key in ("benchmark", "sf", "device"):
            if r.get(key) != first.get(key):
                raise GlintError(f"cannot merge reports with different {key}: {first.get(key)} and {r.get(key)}")
    merged_q: dict[str, dict] = {}
    order: list[str] = []
    for r in reports:
        for q in r["queries"]:
            m = merged_q.get(q["query"])
            if m is None:
                merged_q[q["query"]] = dict(q)
                order.append(q["query"])
                continue
            for k, v in q.items():
                if m.get(k) is None and v is not None:
                    m[k] = v
            if q.get("correct") is False or m.get("correct") is False:
                m["correct"] = False
                m["status"] = q["status"] if q.get("correct") is False else m["status"]
                m.setdefault("errors", [])
                m["errors"] = list(m.get("errors") or []) + list(q.get("errors") or [])
                m["diffs"] = list(m.get("diffs") or []) + list(q.get("diffs") or [])
    queries = [merged_q[k] for k in order]
    first["queries"] = queries
    for key in ("glint_warm", "glint_cold", "duckdb_memory", "duckdb_parquet"):
        first[f"{key}_total_s"] = _sum(q.get(f"{key}_s") for q in queries)
    for q in queries:
        if q.get("glint_warm_s") and q.get("duckdb_memory_s") is not None:
            q["speedup"] = q["duckdb_memory_s"] / q["glint_warm_s"]
    both = [q for q in queries if q.get("glint_warm_s") and q.get("duckdb_memory_s") is not None]
    first["speedup_total"] = (sum(q["duckdb_memory_s"] for q in both) / sum(q["glint_warm_s"] for q in both)
                              if both else None)
    first["queries_total"] = len(queries)
    first["queries_correct"] = sum(q.get("correct") is True for q in queries)
    first["queries_failed"] = [q["label"] for q in queries if q.get("status") not in ("ok", "unchecked")]
    first["merged_from"] = [r.get("timestamp") for r in reports]
    return first


def cmd_merge(args) -> int:
    from glint.cli.common import EXIT_ERROR, EXIT_OK, console as _console

    out, err = _console(), _console(stderr=True)
    reports = []
    for p in args.reports:
        try:
            reports.append(json.loads(Path(p).read_text()))
        except (OSError, ValueError) as e:
            raise GlintIOError(f"cannot read the report {p!r}: {e}") from None
    report = merge_reports(reports)
    print_table(out, report)
    out_dir = Path(os.path.expanduser(args.out)) if args.out else default_out_dir(report)
    paths = write_outputs(report, out_dir, err)
    err.print("wrote " + ", ".join(str(p) for p in paths.values()), markup=False, highlight=False)
    return EXIT_ERROR if report["queries_failed"] else EXIT_OK


def cmd_bench(args) -> int:
    from glint.cli.common import EXIT_ERROR, EXIT_OK, console as _console

    if args.benchmark == "exchange":
        from glint.bench.exchange import cmd_exchange
        return cmd_exchange(args)

    out, err = _console(), _console(stderr=True)
    report = run_bench(args, err=err)
    print_table(out, report)
    out_dir = Path(os.path.expanduser(args.out)) if args.out else default_out_dir(report)
    paths = write_outputs(report, out_dir, err)
    err.print("wrote " + ", ".join(str(p) for p in paths.values()), markup=False, highlight=False)
    if report["queries_failed"]:
        err.print(f"[bold red]{len(report['queries_failed'])} of {report['queries_total']} queries failed:[/] "
                  + ", ".join(report["queries_failed"]), highlight=False)
        return EXIT_ERROR
    return EXIT_OK

