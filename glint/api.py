"""The user-facing API, in DuckDB's conventions.

>>> import glint, pyarrow as pa
>>> con = glint.connect(device="cpu")
>>> _ = con.register("t", pa.table({"a": [1, 2, 3]}))
>>> con.sql("SELECT sum(a) AS s FROM t").fetchall()
[(Decimal('6'),)]
"""
from __future__ import annotations

import logging
import os
import re
import time

import pyarrow as pa
import torch

from . import trace
from .errors import CatalogError, GlintError, GlintIOError, NotSupported, OutOfMemory, did_you_mean
from .exec.base import DecodeRedo, ExecContext
from .exec.scan import start_scans
from .plan.optimizer import RULE_NAMES, optimize
from .plan.physical_planner import plan_physical
from .settings import env_int
from .sql import frontend
from .storage.column import Batch
from .storage.table import Table

logging.getLogger("sqlglot").setLevel(logging.ERROR)
_log = logging.getLogger("glint")
_EXPLAIN = re.compile(r"^\s*explain(\s+analyze)?\s+", re.IGNORECASE)


def resolve_device(device: str | torch.device) -> torch.device:
    if isinstance(device, torch.device):
        return device
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        d = torch.device(device)
    except RuntimeError:
        raise GlintError(f'unknown device "{device}" (use "auto", "cpu", "cuda" or "cuda:N")') from None
    if d.type == "cuda":
        if not torch.cuda.is_available():
            raise GlintError(f'device "{device}" requested but CUDA is not available on this machine')
        if d.index is not None and d.index >= torch.cuda.device_count():
            raise GlintError(f'device "{device}" does not exist ({torch.cuda.device_count()} CUDA devices)')
    elif d.type != "cpu":
        raise GlintError(f'unsupported device "{device}"')
    return d


class ResultTooLarge(OutOfMemory):
    """A query's result would not fit in host memory (no retry helps)."""


def _result_cap() -> int:
    """Bytes of a result glint holds on the host: 70% of the memory available
    when the query starts (GLINT_RESULT_LIMIT overrides)."""
    from .storage.memory import env_size, host_memory_available
    v = env_size("GLINT_RESULT_LIMIT")
    return v if v is not None else int(host_memory_available() * 0.7)


MAX_OOM_RETRIES = 6             # re-runs of a query that ran out of memory (cache dropped, smaller chunks, no cache)
MIN_RETRY_CHUNK_ROWS = 1 << 16


def _expandable_segments() -> None:
    """Under a memory cap, let the CUDA caching allocator grow segments in
    place instead of keeping fixed-size blocks: the cap counts the memory the
    allocator reserves, and with chunks and temporaries of many sizes the
    fixed blocks fragment until an allocation is refused while glint's own
    account shows room. Left alone when the user configured the allocator."""
    if "expandable_segments" in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "") + \
            os.environ.get("PYTORCH_ALLOC_CONF", ""):
        return
    setter = getattr(torch.cuda.memory, "_set_allocator_settings", None)
    if setter is None:
        return
    try:
        setter("expandable_segments:True")
    except (RuntimeError, ValueError):          # an allocator that does not support it
        pass


class Connection:
    """A set of registered tables and views, and the device queries run on.

    Memory (DESIGN.md, "Out-of-core mode"):

    - ``memory_limit`` (alias ``gpu_memory_limit``): bytes or a text such as
      "16GB" that glint may use on its device: GPU memory on CUDA (the
      allocator is capped there), working memory on the CPU. Default: the
      GPU's free memory, or 60% of the host memory available. Table chunks are
      cached on the device within it (warm runs), least recently used first
      out; pipeline breakers reserve from it and spill when they cannot.
    - ``spill_dir``: where spilled batches go once pinned host memory is
      spent (default: the system's temporary directory).
    - ``chunk_rows``: rows per chunk (morsel) of a scan; default from the limit.
    - ``host_cache_limit``: bytes of decoded table data kept in host memory
      as the cache's second tier (GPU connections; default 40% of the host's
      memory, ``GLINT_HOST_CACHE_LIMIT``; 0 turns it off): chunks that do not
      stay on the GPU are copied up again from there rather than decoded
      from their files again. With the default budget, pieces are kept only
      once the GPU cache has had to evict; with a limit given, always.
    """

    def __init__(self, device: str = "auto", optimizer: dict | None = None, *,
                 memory_limit=None, gpu_memory_limit=None, spill_dir: str | None = None,
                 chunk_rows: int | None = None, host_spill_limit=None, host_cache_limit=None):
        from .storage.file_tables import FileTables
        from .storage.memory import (HostCache, MemoryManager, default_chunk_rows, default_host_cache_limit,
                                     default_limit, env_size, format_bytes, parse_size)
        from .storage.spill import SpillSpace

        self.device = resolve_device(device)
        self._tables: dict[str, Table] = {}
        self._views: dict[str, object] = {}
        self._files = FileTables(self)            # tables reading the files named in FROM
        unknown = set(optimizer or {}) - set(RULE_NAMES)
        if unknown:
            raise GlintError(f"unknown optimizer rule(s) {sorted(unknown)}; rules are {list(RULE_NAMES)}")
        self.disabled_rules = tuple(k for k, on in (optimizer or {}).items() if not on)
        if memory_limit is not None and gpu_memory_limit is not None:
            raise GlintError("give memory_limit or gpu_memory_limit, not both (they are the same setting)")
        self._capped: torch.device | None = None         # the device whose allocator this connection capped
        limit = memory_limit if memory_limit is not None else gpu_memory_limit
        limit = parse_size(limit) if limit is not None else env_size("GLINT_MEMORY_LIMIT")
        explicit = limit is not None
        if limit is None:
            limit = default_limit(self.device)
        elif self.device.type == "cuda":
            total = torch.cuda.get_device_properties(self.device).total_memory
            if limit > total:
                raise GlintError(f"memory limit {format_bytes(limit)} is more than the GPU has "
                                 f"({format_bytes(total)})")
            if limit >= 1 << 30:
                # the allocator itself stops at the limit: a step that would pass it fails
                # cleanly. (Below 1 GiB the allocator's own 2 MiB blocks make a cap
                # meaningless; glint's accounting alone bounds the cache and the breakers.)
                # (the call needs an indexed device: "cuda" alone is refused)
                dev = self.device if self.device.index is not None else \
                    torch.device("cuda", torch.cuda.current_device())
                torch.cuda.set_per_process_memory_fraction(min(1.0, limit / total), dev)
                self._capped = dev
                _expandable_segments()
        if chunk_rows is None:
            env = os.environ.get("GLINT_CHUNK_ROWS")
            chunk_rows = int(env) if env else default_chunk_rows(self.device, limit, explicit=explicit)
        if not isinstance(chunk_rows, int) or chunk_rows < 1:
            raise GlintError(f"chunk_rows must be a positive integer, got {chunk_rows!r}")
        self.chunk_rows = chunk_rows
        # pipelines hold a few chunks at a time beside what breakers reserve
        headroom = min(limit // 4, 6 * chunk_rows * 64)
        self.memory = MemoryManager(self.device, limit, headroom)
        self.memory.allocator_capped = self._capped is not None
        if host_cache_limit is None:
            host_cache_limit = os.environ.get("GLINT_HOST_CACHE_LIMIT") or None     # ("0": off, as the argument)
        host_cache = (default_host_cache_limit(self.device) if host_cache_limit is None
                      else 0 if host_cache_limit in (0, "0") else parse_size(host_cache_limit))
        if host_cache > 0:              # (on the CPU only when asked for: its device cache is host memory)
            self.memory.host = HostCache(host_cache, always=host_cache_limit is not None)
        self.spill = SpillSpace(spill_dir or os.environ.get("GLINT_SPILL_DIR"),
                                parse_size(host_spill_limit) if host_spill_limit is not None else None)
        if self.device.type == "cuda":       # the scans' pinned buffers, pinned while the tables are registered
            from .storage.transfer import pinned_pool
            pinned_pool(self.device).fill_in_background()

    # ------------------------------------------------------------ catalog
    def has_table(self, name: str) -> bool:
        return name.lower() in self._tables

    def table(self, name: str) -> Table:
        t = self._tables.get(name.lower())
        if t is None:
            raise CatalogError(f'Table "{name}" does not exist{did_you_mean(name, self.table_names())}')
        return t

    def memory_budget_bytes(self) -> int:
        """Bytes the intermediate results of one query may take on this
        connection's device; the join-order optimizer prefers plans estimated
        within it (free GPU memory on CUDA, half the available host memory on
        the CPU: see glint.plan.memory), never more than the connection's
        memory limit less what is in use beside evictable cached table chunks."""
        from .plan.memory import memory_budget_bytes
        m = self.memory
        pinned = max(0, m.used() - m.cache_bytes())          # cached chunks make room when needed
        own = m.limit - m.headroom - pinned
        return max(0, min(memory_budget_bytes(self.device) + m.cache_bytes(), own))

    def table_names(self) -> list[str]:
        from .storage.file_tables import HIDDEN_PREFIX
        return [t.name for t in self._tables.values() if not t.name.startswith(HIDDEN_PREFIX)]

    def file_table(self, kind: str, paths, options: dict) -> str:
        """The catalog name of the table that reads files named in FROM
        (``kind`` "parquet" or "csv"); see glint.storage.file_tables."""
        return self._files.name_for(kind, paths, options)

    # ------------------------------------------------------------ tables written in SQL
    def create_table(self, name: str, data: pa.Table, types: dict, rules=None) -> None:
        """A table of the connection holding ``data`` (in glint's ``types``),
        replacing one of that name (CREATE [OR REPLACE] TABLE, DELETE, UPDATE)."""
        self._put(Table.from_arrow(name, data, "memory", rules, types))

    def append_rows(self, name: str, data: pa.Table) -> None:
        """Rows added to a table (INSERT, COPY FROM): chunks cached on the
        device stay, but those whose rows changed."""
        from .storage.appended import drop_stale
        t = self.table(name)
        drop_stale(self.memory, t, t.append(data))

    def tables(self) -> list[str]:
        return sorted(self.table_names() + list(self._views))

    def _add(self, name: str, arrow, source: str) -> None:
        if not name or not isinstance(name, str):
            raise GlintError("a table needs a name")
        t = Table.from_arrow(name, arrow, source) if isinstance(arrow, pa.Table) else \
            Table.from_source(name, arrow, source)
        self._put(t)

    def _put(self, t: Table) -> None:
        name = t.name
        old = self._tables.get(name.lower())
        if old is not None:
            self._evict(old)
        self._tables[name.lower()] = t

    def register(self, name: str, data) -> "Connection":
        """Register an Arrow table, RecordBatch(Reader), pandas or Polars frame as a table."""
        from .storage.loaders import to_arrow_table
        self._add(name, to_arrow_table(data), "memory")
        return self

    def read_parquet(self, path: str, name: str | None = None, columns=None) -> "Connection":
        """Register a Parquet file, a directory of them or a glob as table `name`.
        The footers are read now; column data when a query first needs it."""
        from .storage.loaders import ParquetSource, load_parquet
        src = ParquetSource(path) if columns is None else load_parquet(path, columns=columns)
        self._add(name or _stem(path), src, str(path))
        return self

    def read_parquet_tables(self, tables: dict) -> "Connection":
        """Register several Parquet tables at once ({name: path}, each path a
        file, a directory or a glob): their footers are read side by side
        (pyarrow parses them without the GIL; TPC-H SF 100's eight tables
        took 0.12-0.19 s one after another on a fresh connection, lineitem's
        alone ~0.06 s). An unreadable file raises, naming it, and registers
        none of the tables."""
        from concurrent.futures import ThreadPoolExecutor

        from .storage.loaders import ParquetSource
        items = list(tables.items())
        if len(items) < 2 or type(self).read_parquet is not Connection.read_parquet:
            # (a subclass registers its own way: a distributed connection reads each rank's share)
            for name, path in items:
                self.read_parquet(path, name)
            return self
        threads = env_int("GLINT_FOOTER_THREADS", 8, 1)
        with ThreadPoolExecutor(max(1, min(threads, len(items))), thread_name_prefix="glint-footers") as ex:
            srcs = list(ex.map(lambda item: ParquetSource(item[1]), items))
        for (name, path), src in zip(items, srcs):
            self._add(name or _stem(path), src, str(path))
        return self

    def read_csv(self, path: str, name: str | None = None, **options) -> "Connection":
        from .storage.loaders import load_csv
        self._add(name or _stem(path), load_csv(path, **options), str(path))
        return self

    def unregister(self, name: str) -> None:
        t = self._tables.pop(name.lower(), None)
        if t is None:
            raise CatalogError(f'Table "{name}" does not exist')
        self._evict(t)

    def _evict(self, t: Table) -> None:
        self.memory.cache_drop(lambda k: k[0] == "table" and k[1] == t.uid)
        if self.memory.host is not None:
            self.memory.host.drop(lambda k: k[0] == "table" and k[1] == t.uid)

    def cached_bytes(self) -> int:
        """Bytes of table chunks kept on the device."""
        return self.memory.cache_bytes()

    def drop_cache(self, host: bool = False) -> None:
        """Give back every table chunk cached on the device (the next queries
        copy their data again from the host tier, or read it again from the
        files); ``host=True`` drops the host tier as well."""
        self.memory.cache_drop()
        if host and self.memory.host is not None:
            self.memory.host.drop()
        if self.device.type == "cuda":
            torch.cuda.empty_cache()

    # ------------------------------------------------------------ queries
    def _plan_physical(self, logical):
        """The physical plan of an optimized logical plan."""
        return plan_physical(logical, self)

    def execution_context(self, catalog, profile: bool = False, chunk_rows: int | None = None) -> ExecContext:
        """A fresh context for one run of a plan on this connection's device,
        memory and spill space, reading tables from ``catalog``."""
        return ExecContext(self.device, catalog, profile=profile, memory=self.memory, spill=self.spill,
                           chunk_rows=chunk_rows or self.chunk_rows)

    # a query that runs out of memory is re-run with smaller chunks (Result._run)
    oom_retries_with_smaller_chunks = True

    def _execute_plan(self, physical, fields, names, profile: bool, chunk_rows: int | None = None):
        """(the result as Arrow, the run's ExecContext)."""
        ctx = self.execution_context(self, profile, chunk_rows)
        ctx.decode_checks = []          # the scans' decoding checked once, at the end (ExecContext.verify_decoding)
        start_scans(ctx, physical)
        try:
            try:
                out = stream_to_arrow(ctx, ctx.open(physical), fields, names)
            except Exception:
                # values of a chunk that failed its check may be what went wrong
                ctx.close_read_ahead()
                try:
                    ctx.verify_decoding()
                except DecodeRedo:
                    raise
                except Exception:       # noqa: BLE001 - the run's own error is the one to report
                    pass
                raise
            ctx.close_read_ahead()
            ctx.verify_decoding()
            return out, ctx
        finally:
            ctx.close_read_ahead()

    def sql(self, query: str) -> "Result | None":
        """Run one or more ;-separated statements; returns the last query's Result."""
        if not isinstance(query, str):
            raise GlintError("sql() takes a string")
        m = _EXPLAIN.match(query)
        if m:
            inner = query[m.end():]
            stmts = frontend.parse(inner)
            if len(stmts) != 1 or frontend.statement_kind(stmts[0]) != "query":
                # (never run: EXPLAIN INSERT must not insert)
                raise NotSupported("EXPLAIN of a statement that is not a query")
            return self.sql(inner)._explain_result(analyze=bool(m.group(1)))
        result = None
        for stmt in frontend.parse(query):
            kind = frontend.statement_kind(stmt)
            if kind == "query":
                result = Result(self, stmt)
            elif kind == "create_view":
                self._create_view(stmt)
                result = None
            elif kind == "drop_view":
                for t in stmt.args.get("tables") or [stmt.this]:
                    if self._views.pop(t.name.lower(), None) is None and not stmt.args.get("exists"):
                        raise CatalogError(f'View "{t.name}" does not exist')
                result = None
            elif kind == "describe":
                result = self._describe(stmt.this.name)
            else:
                from .statements import run_statement
                result = run_statement(self, stmt, kind)
        return result

    execute = sql
    query = sql

    def _create_view(self, stmt) -> None:
        from sqlglot import exp
        target = stmt.this
        columns = []
        if isinstance(target, exp.Schema):
            columns = [c.name for c in target.expressions]
            target = target.this
        name = target.name.lower()
        if (name in self._views or name in self._tables) and not stmt.args.get("replace"):
            if stmt.args.get("exists"):
                return
            raise CatalogError(f'"{target.name}" already exists')
        body = stmt.expression
        if columns:
            body = exp.select("*").from_(exp.Subquery(
                this=body, alias=exp.TableAlias(this=exp.to_identifier("__view"),
                                                columns=[exp.to_identifier(c) for c in columns])))
        Result(self, body)            # bind now so a broken view fails at CREATE
        self._views[name] = body

    def _describe(self, name: str) -> "Result":
        t = self.table(name)
        data = pa.table({"column_name": list(t.schema), "column_type": [str(x) for x in t.schema.values()]})
        return Result.from_arrow(self, data)

    def close(self) -> None:
        self.memory.cache_drop()
        if self.memory.host is not None:
            self.memory.host.drop()
        self._tables.clear()
        self._files.clear()
        self.spill.close()
        if self._capped is not None:
            # the allocator's cap is per process: lift it with the connection that set it
            torch.cuda.set_per_process_memory_fraction(1.0, self._capped)
            self._capped = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Result:
    """A planned query; executes on first fetch and keeps its result."""

    def __init__(self, con: Connection, ast=None, bound=None):
        self._con = con
        self._arrow: pa.Table | None = None
        self._profile: dict | None = None
        self.io = None                  # data movement of the last run (ExecContext.io)
        self.retries: list[str] = []    # out-of-memory errors of the last run that a re-run got past
        self.rank_stats: list[dict] | None = None   # per rank of a distributed run (glint.dist.stats)
        self.timings: dict[str, float] = {}
        if ast is None and bound is None:
            return
        t0 = time.perf_counter()
        if bound is None:
            ast = frontend.inline_views(ast, con._views)
            bound = frontend.bind_query(ast, con)
        self.names = [n for n, _ in bound.outputs]
        self._fields = [f for _, f in bound.outputs]
        self.timings["bind"] = time.perf_counter() - t0
        self.logical = optimize(bound.plan, con, con.disabled_rules, self.timings)
        t1 = time.perf_counter()
        self.physical = con._plan_physical(self.logical)
        self.timings["physical"] = time.perf_counter() - t1
        trace.add("plan", t0, time.perf_counter())

    @staticmethod
    def from_arrow(con, table: pa.Table) -> "Result":
        r = Result(con)
        r._arrow = table
        r.names = table.column_names
        return r

    def _run(self, profile: bool = False) -> pa.Table:
        if self._arrow is not None and not profile:
            return self._arrow
        con = self._con
        t0 = time.perf_counter()
        chunk_rows = con.chunk_rows
        self.retries = []                   # the out-of-memory errors that a retry got past
        dropped_at: set[int] = set()        # chunk sizes already re-run without the cache
        try:
            ctx = self._run_retrying(profile, chunk_rows, dropped_at)
        finally:
            con.memory.cache_enabled = True
        self.timings["execute"] = time.perf_counter() - t0
        self.io = ctx.io
        self.rank_stats = getattr(ctx, "rank_stats", None)
        if profile:
            self._profile = ctx.stats
        return self._arrow

    def _run_retrying(self, profile: bool, chunk_rows: int, dropped_at: set):
        con = self._con
        retried = 0
        while True:
            try:
                return self._execute(profile, chunk_rows)
            except ResultTooLarge:
                raise
            except DecodeRedo as e:
                # chunks decoded on the device failed their checks: again, with
                # those columns checked chunk by chunk (and nothing cached from this run)
                new = {(t, c) for t, c in e.columns if c not in t.exact_decode}
                if not new:
                    raise GlintError(f"decoding {e} failed its checks twice") from None
                for t, c in new:
                    t.exact_decode.add(c)
                _log.info("device decoding of %s failed its checks; running the query again", e)
                con.drop_cache()
                _release_garbage(con.device)
                continue
            except OutOfMemory as e:
                # Again without the cached table chunks (they may be what was in
                # the way; the memory manager has also learned, from the failed
                # step, how much a chunk needs beside the cache, so the re-run
                # caches less), then with ever smaller chunks: a chunk's
                # read-ahead and temporaries may be what a small budget cannot
                # hold beside the breakers' state. The plan is immutable, so a
                # re-run is clean.
                mm = con.memory
                cache_in_way = mm.cache_bytes() > mm.limit // 8 and chunk_rows not in dropped_at
                smaller = con.oom_retries_with_smaller_chunks and chunk_rows > MIN_RETRY_CHUNK_ROWS
                # last resort: the smallest chunks with nothing cached at all
                uncached = not cache_in_way and not smaller and mm.cache_enabled and mm.cache_bytes() > 0
                if len(self.retries) >= MAX_OOM_RETRIES or not (cache_in_way or smaller or uncached):
                    raise
                self.retries.append(f"{e} (chunks of {chunk_rows} rows)")
                _log.info("query out of memory, retrying: %s", self.retries[-1])
                con.drop_cache()
                if cache_in_way:
                    dropped_at.add(chunk_rows)
                elif smaller:
                    chunk_rows = max(MIN_RETRY_CHUNK_ROWS, chunk_rows // 4)
                else:
                    mm.cache_enabled = False
            # the failed run's pipeline (generators, reader threads' queues) can
            # sit in reference cycles that still hold device tensors
            if self.retries and len(self.retries) > retried:
                retried = len(self.retries)
                _release_garbage(con.device)

    def _execute(self, profile: bool, chunk_rows: int):
        self._arrow, ctx = self._con._execute_plan(self.physical, self._fields, self.names, profile, chunk_rows)
        return ctx

    def arrow(self) -> pa.Table:
        return self._run()

    to_arrow_table = arrow

    def df(self):
        return self._run().to_pandas()

    def fetchall(self) -> list[tuple]:
        t = self._run()
        cols = [python_values(c) for c in t.columns]
        return list(zip(*cols)) if cols else []

    def fetchone(self):
        rows = self.fetchall()
        return rows[0] if rows else None

    @property
    def columns(self) -> list[str]:
        return list(self.names)

    def explain(self, analyze: bool = False) -> str:
        if not hasattr(self, "physical"):
            return "(a result without a plan)"
        if analyze:
            self._run(profile=True)
        from .plan.cardinality import Estimator
        est = Estimator(self._con)
        header = getattr(self._con, "plan_header", None)       # a distributed connection: ranks and tables
        text = ("Logical plan (optimized):\n" + self.logical.explain(1, est.rows) +
                f"\n\nPhysical plan{f' ({header(self.physical)})' if header else ''}:\n" +
                self.physical.explain(1, self._profile if analyze else None))
        if analyze and self.io is not None:
            text += "\n\n" + format_io(self.io)
        if analyze and self.rank_stats:
            from .dist.stats import format_rank_stats
            text += "\n\n" + format_rank_stats(self.rank_stats)
        return text

    def _explain_result(self, analyze: bool) -> "Result":
        text = self.explain(analyze=analyze)
        return Result.from_arrow(self._con, pa.table({"explain": [text]}))

    def __repr__(self) -> str:
        try:
            t = self._run()
        except GlintError as e:
            return f"<glint.Result: error: {e}>"
        return format_table(t)

    def __len__(self):
        return self._run().num_rows


def _release_garbage(device) -> None:
    """Free what a failed run left in reference cycles, and give the CUDA
    allocator's free blocks back, before the run is tried again."""
    import gc
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def format_io(io) -> str:
    """The IO summary EXPLAIN ANALYZE prints under the plan.

    >>> from glint.exec.base import IOStats
    >>> print(format_io(IOStats(chunks=3, chunks_skipped=1, file_bytes=5 << 20, decoded_bytes=9 << 20,
    ...                         read_s=0.5, scan_wait_s=0.25)))
    IO: 3 chunks scanned (1 skipped by statistics, 0 column chunks from the cache); 5.0 MiB read from files, 9.0 MiB decoded, 0 B from the host cache, 0 B to the device, 0 B back
    scan threads: decode 0.500 s, convert 0.000 s, stage 0.000 s (summed over threads); the query waited 0.250 s for chunks
    """
    from .storage.memory import format_bytes
    return (f"IO: {io.chunks} chunks scanned ({io.chunks_skipped} skipped by statistics, {io.cache_hits} column "
            f"chunks from the cache); {format_bytes(io.file_bytes)} read from files, "
            f"{format_bytes(io.decoded_bytes)} decoded, {format_bytes(io.host_cache_bytes)} from the host cache, "
            f"{format_bytes(io.h2d_bytes)} to the device, "
            f"{format_bytes(io.d2h_bytes)} back\n"
            f"scan threads: decode {io.read_s:.3f} s, convert {io.convert_s:.3f} s, stage {io.stage_s:.3f} s "
            f"(summed over threads); the query waited {io.scan_wait_s:.3f} s for chunks")


def stream_to_arrow(ctx: ExecContext, batches, fields, names) -> pa.Table:
    """A plan's output stream as one Arrow table with the result's names."""
    parts = []
    held = rows = 0
    cap = _result_cap()
    for batch in batches:
        if batch.num_rows or not parts:
            t = batch_to_arrow(batch, fields, names)
            ctx.io.d2h_bytes += t.nbytes if ctx.device.type == "cuda" else 0
            parts.append(t)
            held += t.nbytes
            rows += t.num_rows
            if held > cap:
                # the host memory guard for what no operator bounds: the result itself
                from .storage.memory import format_bytes
                raise ResultTooLarge(
                    f"the query's result passed {format_bytes(held)} after {rows:,} rows, more than the "
                    f"host memory glint may hold for it ({format_bytes(cap)}); add a LIMIT or aggregate, "
                    f"or write it out with fewer columns")
    nonempty = [t for t in parts if t.num_rows] or parts[:1]
    return nonempty[0] if len(nonempty) == 1 else _concat_results(nonempty)


def batch_to_arrow(batch: Batch, fields, names) -> pa.Table:
    arrays = [batch[f.id].to_arrow() for f in fields]
    if not arrays:
        return pa.table({})
    return pa.Table.from_arrays(arrays, names=list(names))


def _concat_results(tables: list[pa.Table]) -> pa.Table:
    """Result chunks as one table, column by column (result names may repeat);
    a column that came as string in one chunk and large_string in another
    becomes large_string."""
    cols = []
    for i in range(tables[0].num_columns):
        parts = [t.column(i) for t in tables]
        types = {p.type for p in parts}
        if len(types) > 1:
            target = pa.large_string() if any(pa.types.is_large_string(t) for t in types) else parts[0].type
            parts = [p.cast(target) for p in parts]
        cols.append(pa.chunked_array([c for p in parts for c in p.chunks], type=parts[0].type))
    return pa.Table.from_arrays(cols, names=tables[0].column_names)


def format_table(t: pa.Table, max_rows: int = 40) -> str:
    names = t.column_names
    rows = [[_fmt(v) for v in r] for r in zip(*[c.to_pylist() for c in t.columns])][:max_rows]
    widths = [max([len(n)] + [len(r[i]) for r in rows]) for i, n in enumerate(names)]
    line = "+".join("-" * (w + 2) for w in widths)
    out = [" | ".join(n.ljust(w) for n, w in zip(names, widths)), line]
    out += [" | ".join(v.ljust(w) for v, w in zip(r, widths)) for r in rows]
    if t.num_rows > max_rows:
        out.append(f"... {t.num_rows - max_rows} more rows")
    out.append(f"({t.num_rows} row{'s' if t.num_rows != 1 else ''})")
    return "\n".join(out)


def _fmt(v) -> str:
    return "NULL" if v is None else str(v)


def _stem(path: str) -> str:
    import os
    base = os.path.basename(os.path.normpath(str(path)))
    name = base.split(".")[0]
    if not name or any(c in name for c in "*?[]"):
        raise GlintIOError(f"cannot derive a table name from {path!r}: pass name=...")
    return name


def python_values(col: pa.ChunkedArray) -> list:
    """A column's values as Python objects. DATE / TIMESTAMP values that
    Python's datetime cannot hold come back as DuckDB's Python client returns
    them: infinities as datetime.max / min (date.max / min), other years
    outside 1..9999 as DuckDB's text."""
    try:
        return col.to_pylist()
    except (OverflowError, ValueError):
        if not (pa.types.is_timestamp(col.type) or pa.types.is_date32(col.type)):
            raise
    import datetime as dt

    from .exec.functions.dates import format_date
    from .exec.functions.timestamp_text import TS_INFINITY, format_timestamp

    stamp = pa.types.is_timestamp(col.type)
    ints = col.cast(pa.int64() if stamp else pa.int32()).to_pylist()
    top, low, big = (dt.datetime.max, dt.datetime.min, TS_INFINITY) if stamp else (dt.date.max, dt.date.min, 2**31 - 1)
    out = []
    for v in ints:
        if v is None:
            out.append(None)
        elif abs(v) == big:
            out.append(top if v > 0 else low)
        else:
            try:
                out.append(dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=v) if stamp
                           else dt.date(1970, 1, 1) + dt.timedelta(days=v))
            except OverflowError:
                out.append(format_timestamp(v) if stamp else format_date(v))
    return out
