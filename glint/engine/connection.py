"""A connection: its catalog of tables and views, its device, memory and
spill space, and the statements it runs (queries, views, DDL and DML)."""

from __future__ import annotations

import itertools
import logging
import os
import re
import threading
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, replace

import pyarrow as pa
import torch

from glint.engine.plan_cache import CachedPlan, CatalogVersion, PlanCache
from glint.engine.result import Result, batch_to_arrow, release_failed_run, stream_to_arrow
from glint.errors import BinderError, CatalogError, GlintError, GlintIOError, NotSupported, did_you_mean
from glint.exec.base import DecodeRedo, ExecContext
from glint.exec.physical_planner import plan_physical
from glint.exec.scan import scanned_rows, start_scans
from glint.functions.deferred import CheckRedo
from glint.io.appended import drop_stale
from glint.io.arrow_objects import to_arrow_table
from glint.io.csv_files import load_csv
from glint.io.file_access import FileAccess
from glint.io.file_tables import HIDDEN_PREFIX, FileTables
from glint.io.page_tier import PageTier
from glint.io.parquet_source import ParquetSource, load_parquet
from glint.io.pinned import pinned_pool
from glint.io.table import Table
from glint.plan.memory import memory_budget_bytes
from glint.plan.optimizer import RULE_NAMES
from glint.runtime.memory import (
    HostCache,
    MemoryManager,
    default_chunk_rows,
    default_host_cache_limit,
    default_limit,
    format_bytes,
)
from glint.runtime.query_run import Progress, QueryRun
from glint.runtime.settings import (
    CONNECTION,
    Settings,
    all_settings,
    apply_process_settings,
    apply_switch_interval,
    setting,
)
from glint.runtime.spill import SpillSpace
from glint.sql import frontend
from glint.sql.parameters import bind_parameters, parameter_names
from glint.statements import run_statement

logging.getLogger("sqlglot").setLevel(logging.ERROR)
_log = logging.getLogger("glint")
_snapshots = itertools.count(1)
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


def _expandable_segments() -> None:
    """Under a memory cap, let the CUDA caching allocator grow segments in
    place instead of keeping fixed-size blocks: the cap counts the memory the
    allocator reserves, and with chunks and temporaries of many sizes the
    fixed blocks fragment until an allocation is refused while glint's own
    account shows room. Left alone when the user configured the allocator."""
    if "expandable_segments" in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "") + os.environ.get(
        "PYTORCH_ALLOC_CONF", ""
    ):
        return
    # (torch 2.11 names the setter under torch._C._accelerator_*, and warns
    # that the torch.cuda.memory one, which torch 2.4 has, is deprecated)
    setter = getattr(torch._C, "_accelerator_setAllocatorSettings", None) or getattr(
        torch.cuda.memory, "_set_allocator_settings", None
    )
    if setter is None:
        return
    try:
        setter("expandable_segments:True")
    except (RuntimeError, ValueError):  # an allocator that does not support it
        pass


@dataclass(frozen=True)
class Explain:
    """EXPLAIN [ANALYZE] of a parsed query (Connection.parse)."""

    query: object
    analyze: bool


class Connection:
    """A set of registered tables and views, and the device queries run on.

    Its settings (``self.settings``, glint.runtime.settings.Settings) come
    from the keyword arguments, then the ``GLINT_*`` environment variables,
    then the defaults (every one: docs/settings.md). Memory:

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
      memory; 0 turns it off): chunks that do not stay on the GPU are copied
      up again from there rather than decoded from their files again. With
      the default budget, pieces are kept only once the GPU cache has had to
      evict; with a limit given, always.

    ``SET name = value`` / ``RESET name`` change the settings whose scope is
    "connection" (memory_limit and chunk_rows included) from the next query
    on; see glint.statements.settings.
    """

    def __init__(self, device: str = "auto", optimizer: dict | None = None, *, gpu_memory_limit=None, **settings):

        self.device = resolve_device(device)
        self._tables: dict[str, Table] = {}
        self._views: dict[str, object] = {}
        self._files = FileTables(self)  # tables reading the files named in FROM
        # name -> a function giving the rows of a table that SQL reads by that
        # name (a server's glint_queries): read anew by each query (system_table)
        self.system_tables: dict = {}
        self._system_snapshots: dict[str, list[str]] = {}
        self._catalog_version = CatalogVersion()  # goes up with each change of the catalog (plan cache)
        self._plans = PlanCache(self._catalog_version)  # plans of queries run, by their text (glint.engine.plan_cache)
        self._volatile_reads = 0  # files and system tables planning read (such plans are not cached)
        unknown = set(optimizer or {}) - set(RULE_NAMES)
        if unknown:
            raise GlintError(f"unknown optimizer rule(s) {sorted(unknown)}; rules are {list(RULE_NAMES)}")
        self.disabled_rules = tuple(k for k, on in (optimizer or {}).items() if not on)
        if gpu_memory_limit is not None:
            if settings.get("memory_limit") is not None:
                raise GlintError("give memory_limit or gpu_memory_limit, not both (they are the same setting)")
            settings["memory_limit"] = gpu_memory_limit
        self.settings = Settings.build(settings)
        self._opened = self.settings  # what RESET gives back
        self.file_access = FileAccess.from_settings(self.settings)  # the files SQL may read and write
        apply_process_settings(self.settings)
        if self.device.type == "cuda":
            apply_switch_interval(self.settings)
        self._capped: torch.device | None = None  # the device whose allocator this connection capped
        self.memory: MemoryManager | None = None
        self._apply_memory_settings()
        cache_limit = self.settings.host_cache_limit
        host_cache = default_host_cache_limit(self.device) if cache_limit is None else cache_limit
        if host_cache > 0:  # (on the CPU only when asked for: its device cache is host memory)
            always = cache_limit is not None
            if self.settings.host_pages:
                # chunks as stored and decoded pieces share the limit
                self.memory.pages = PageTier(
                    host_cache,
                    self.device,
                    always,
                    lambda: self.memory.host.bytes,
                    inflate=self.settings.host_pages_decompressed,
                )
            pages = self.memory.pages
            self.memory.host = HostCache(host_cache, always, (lambda: pages.bytes) if pages is not None else None)
        self.spill = SpillSpace(self.settings.spill_dir, self.settings.host_spill_limit)
        # the queries running, per thread (innermost last): interrupt() and query_progress() read them
        self._runs: dict[int, list[QueryRun]] = {}
        self._runs_lock = threading.Lock()
        self._progress_callback: Callable[[Progress], None] | None = None
        if self.device.type == "cuda":  # the scans' pinned buffers, pinned while the tables are registered
            pinned_pool(self.device, self.settings.pinned_buffers).fill_in_background()

    def _apply_memory_settings(self) -> None:
        """The memory limit and chunk size of the settings in force: the
        memory manager's budget (made on the first call), the CUDA
        allocator's cap (a limit the user set, from 1 GiB up; lifted when a
        later limit has none), the chunk rows (by default from the limit).
        Checks first: a limit the GPU cannot hold changes nothing."""
        limit = self.settings.memory_limit
        explicit = limit is not None
        capped, fraction = None, 1.0
        if limit is None:
            limit = default_limit(self.device)
        elif self.device.type == "cuda":
            total = torch.cuda.get_device_properties(self.device).total_memory
            if limit > total:
                raise GlintError(f"memory limit {format_bytes(limit)} is more than the GPU has ({format_bytes(total)})")
            if limit >= 1 << 30:
                # the allocator itself stops at the limit: a step that would pass it fails
                # cleanly. (Below 1 GiB the allocator's own 2 MiB blocks make a cap
                # meaningless; glint's accounting alone bounds the cache and the breakers.)
                # (the call needs an indexed device: "cuda" alone is refused)
                capped = (
                    self.device if self.device.index is not None else torch.device("cuda", torch.cuda.current_device())
                )
                fraction = min(1.0, limit / total)
        chunk_rows = self.settings.chunk_rows
        if chunk_rows is None:
            chunk_rows = default_chunk_rows(self.device, limit, explicit=explicit)
        if capped is not None:
            torch.cuda.set_per_process_memory_fraction(fraction, capped)
            _expandable_segments()
        elif self._capped is not None:
            torch.cuda.set_per_process_memory_fraction(1.0, self._capped)
        self._capped = capped
        self.chunk_rows = chunk_rows
        # pipelines hold a few chunks at a time beside what breakers reserve
        headroom = min(limit // 4, 6 * chunk_rows * 64)
        if self.memory is None:
            self.memory = MemoryManager(self.device, limit, headroom)
        else:
            self.memory.limit, self.memory.headroom = int(limit), int(headroom)
            self.memory.make_room(0)  # cached chunks past a lower limit go
        self.memory.allocator_capped = self._capped is not None
        # on a GPU, chunks evicted to make room would be read from their files
        # again: with a limit set, the host tier takes them from the first scan
        # on (TPC-H SF 100 under 16 GB on an H200: Q1's second run took 13.0 s,
        # half its pages read from the files again, against 0.9 s from the tier)
        self.memory.limit_set = explicit

    # ------------------------------------------------------------ settings
    def set_setting(self, name: str, value) -> None:
        """``SET name = value``: a setting of scope "connection" changed, from
        the next query on (a value that is not one is a GlintError naming it)."""
        s = setting(name)
        if s.scope != CONNECTION:
            raise GlintError(s.why_fixed())
        self._use_settings(self.settings.with_value(s.name, value))

    def reset_setting(self, name: str | None = None) -> None:
        """``RESET name`` (``None``: ``RESET ALL``): the value(s) the
        connection was opened with."""
        names = [setting(name).name] if name is not None else [s.name for s in all_settings()]
        self._use_settings(replace(self.settings, **{n: getattr(self._opened, n) for n in names}))

    def _use_settings(self, new: Settings) -> None:
        self._catalog_changed()
        old, self.settings = self.settings, new
        if (new.memory_limit, new.chunk_rows) != (old.memory_limit, old.chunk_rows):
            try:
                self._apply_memory_settings()
            except BaseException:
                self.settings = old
                raise

    def setting_value(self, name: str):
        """A setting's value in force (current_setting, glint_settings()): the
        memory limit, chunk rows and host cache as the connection resolved
        them, the others as set (None where glint picks when it needs one)."""
        s = setting(name)
        if s.name == "memory_limit":
            return self.memory.limit
        if s.name == "chunk_rows":
            return self.chunk_rows
        if s.name == "host_cache_limit":
            return self.memory.host.limit if self.memory.host is not None else 0
        return getattr(self.settings, s.name)

    # ------------------------------------------------------------ catalog
    def has_table(self, name: str, temporary: bool = False) -> bool:
        """Whether a table of that name exists (``temporary``: among the
        temporary tables, which are a session's own: on a connection, every table)."""
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

        m = self.memory
        pinned = max(0, m.used() - m.cache_bytes())  # cached chunks make room when needed
        own = m.limit - m.headroom - pinned
        return max(0, min(memory_budget_bytes(self.device) + m.cache_bytes(), own))

    def table_names(self) -> list[str]:

        return [t.name for t in self._tables.values() if not t.name.startswith(HIDDEN_PREFIX)]

    def system_table(self, name: str) -> str:
        """The catalog name of a table holding the rows of system table
        ``name`` (one of ``system_tables``) as of now; the latest few stay
        registered (a query planned on one scans it when it runs)."""
        self._volatile_reads += 1
        data = self.system_tables[name]()
        hidden = f"{HIDDEN_PREFIX}{name}_{next(_snapshots)}"
        self._register_system(hidden, data)
        kept = self._system_snapshots.setdefault(name, [])
        kept.append(hidden)
        while len(kept) > 16:
            old = kept.pop(0)
            if self.has_table(old):
                self.unregister(old)
        return hidden

    def _register_system(self, name: str, data: pa.Table) -> None:
        """A system table's rows, as a temporary table (a session's own)."""
        self._put(Table.from_arrow(name, data, "system"), temporary=True)

    def file_table(self, kind: str, paths, options: dict) -> str:
        """The catalog name of the table that reads files named in FROM
        (``kind`` "parquet" or "csv"); see glint.io.file_tables. Files outside
        the allowed directories of a connection without external access are
        refused (glint.io.file_access)."""
        self._volatile_reads += 1
        return self._files.name_for(kind, paths, options, self.file_access)

    # ------------------------------------------------------------ tables written in SQL
    def create_table(self, name: str, data: pa.Table, types: dict, rules=None, temporary: bool = False) -> None:
        """A table of the connection holding ``data`` (in glint's ``types``),
        replacing one of that name (CREATE [OR REPLACE] [TEMPORARY] TABLE,
        DELETE, UPDATE). ``temporary``: the session's own, where the
        connection is a session of a shared one (glint.engine.shared_connection)."""
        self._put(Table.from_arrow(name, data, "memory", rules, types), temporary)

    def append_rows(self, name: str, data: pa.Table) -> None:
        """Rows added to a table (INSERT, COPY FROM): chunks cached on the
        device stay, but those whose rows changed."""

        t = self.table(name)
        self._catalog_changed()
        drop_stale(self.memory, t, t.append(data))

    def tables(self) -> list[str]:
        return sorted(self.table_names() + list(self._views))

    def _add(self, name: str, arrow, source: str) -> None:
        if not name or not isinstance(name, str):
            raise GlintError("a table needs a name")
        t = (
            Table.from_arrow(name, arrow, source)
            if isinstance(arrow, pa.Table)
            else Table.from_source(name, arrow, source)
        )
        self._put(t)

    def _put(self, t: Table, temporary: bool = False) -> None:
        name = t.name
        old = self._tables.get(name.lower())
        if old is not None:
            self._evict(old)
        self._tables[name.lower()] = t
        self._catalog_changed()

    def register(self, name: str, data) -> Connection:
        """Register an Arrow table, RecordBatch(Reader), pandas or Polars frame as a table."""

        self._add(name, to_arrow_table(data), "memory")
        return self

    def read_parquet(self, path: str, name: str | None = None, columns=None) -> Connection:
        """Register a Parquet file, a directory of them or a glob as table `name`.
        The footers are read now; column data when a query first needs it."""

        src = ParquetSource(path, self.settings) if columns is None else load_parquet(path, columns=columns)
        self._add(name or table_name_from_path(path), src, str(path))
        return self

    def read_parquet_tables(self, tables: dict) -> Connection:
        """Register several Parquet tables at once ({name: path}, each path a
        file, a directory or a glob): their footers are read side by side
        (pyarrow parses them without the GIL; TPC-H SF 100's eight tables
        took 0.12-0.19 s one after another on a fresh connection, lineitem's
        alone ~0.06 s). An unreadable file raises, naming it, and registers
        none of the tables."""
        from concurrent.futures import ThreadPoolExecutor

        items = list(tables.items())
        if len(items) < 2 or type(self).read_parquet is not Connection.read_parquet:
            # (a subclass registers its own way: a distributed connection reads each rank's share)
            for name, path in items:
                self.read_parquet(path, name)
            return self
        threads = self.settings.footer_threads
        with ThreadPoolExecutor(max(1, min(threads, len(items))), thread_name_prefix="glint-footers") as ex:
            srcs = list(ex.map(lambda item: ParquetSource(item[1], self.settings), items))
        for (name, path), src in zip(items, srcs):
            self._add(name or table_name_from_path(path), src, str(path))
        return self

    def read_csv(self, path: str, name: str | None = None, **options) -> Connection:

        self._add(name or table_name_from_path(path), load_csv(path, **options), str(path))
        return self

    def unregister(self, name: str) -> None:
        t = self._tables.pop(name.lower(), None)
        if t is None:
            raise CatalogError(f'Table "{name}" does not exist')
        self._catalog_changed()
        self._evict(t)

    def _catalog_changed(self) -> None:
        """A table, view or setting changed: plans made before are not used again (glint.engine.plan_cache)."""
        self._catalog_version.bump()

    def _evict(self, t: Table) -> None:
        self.memory.cache_drop(lambda k: k[0] == "table" and k[1] == t.uid)
        if self.memory.host is not None:
            self.memory.host.drop(lambda k: k[0] == "table" and k[1] == t.uid)

    def cached_bytes(self) -> int:
        """Bytes of table chunks kept on the device."""
        return self.memory.cache_bytes()

    def drop_cache(self, host: bool = False, release: bool = True) -> None:
        """Give back every table chunk cached on the device (the next queries
        copy their data again from the host tier, or read it again from the
        files); ``host=True`` drops the host tier as well. ``release``: the
        CUDA allocator's free blocks go back to the device too (False keeps
        them for the next queries, as the cache's own evictions do)."""
        self.memory.cache_drop()
        if host and self.memory.host is not None:
            self.memory.host.drop()
        if host and self.memory.pages is not None:
            self.memory.pages.drop()
        if self.device.type == "cuda" and release:
            torch.cuda.empty_cache()

    # ------------------------------------------------------------ queries
    def _plan_physical(self, logical):
        """The physical plan of an optimized logical plan."""
        return plan_physical(logical, self)

    def execution_context(self, catalog, profile: bool = False, chunk_rows: int | None = None) -> ExecContext:
        """A fresh context for one run of a plan on this connection's device,
        memory and spill space, reading tables from ``catalog`` (with the
        cancellation flag and progress of the query this thread is running)."""
        ctx = ExecContext(
            self.device,
            catalog,
            profile=profile,
            memory=self.memory,
            spill=self.spill,
            chunk_rows=chunk_rows or self.chunk_rows,
            settings=self.settings,
        )
        runs = self._runs.get(threading.get_ident())
        ctx.run = runs[-1] if runs else None
        return ctx

    # ------------------------------------------------------------ cancelling and progress
    def interrupt(self) -> bool:
        """Cancel the queries running on this connection: each stops at its
        next chunk with :class:`glint.Interrupted`, and the connection goes on
        answering queries. Safe to call from any thread (a query runs in the
        thread that fetches its result); whether a query was running."""
        with self._runs_lock:
            runs = [r for stack in self._runs.values() for r in stack]
        for r in runs:
            r.cancel()
        return bool(runs)

    def query_progress(self) -> Progress | None:
        """How far the query running on this connection has read its tables
        (rows scanned of the rows its scans read; None when none runs). Safe
        to call from any thread."""
        with self._runs_lock:
            runs = [stack[0] for stack in self._runs.values() if stack]
        return runs[0].progress() if runs else None

    def set_progress_callback(self, callback: Callable[[Progress], None] | None) -> None:
        """Call ``callback(progress)`` in the query's thread each time a
        query of this connection has scanned more rows (the rows never go
        down); None stops it."""
        self._progress_callback = callback

    @contextmanager
    def running(self, physical):
        """Registers one query's run (its QueryRun) while the body runs it."""
        run = QueryRun(scanned_rows(physical, self), self._progress_callback)
        key = threading.get_ident()
        with self._runs_lock:
            self._runs.setdefault(key, []).append(run)
        try:
            yield run
        finally:
            with self._runs_lock:
                stack = self._runs.get(key, [])
                if run in stack:
                    stack.remove(run)
                if not stack:
                    self._runs.pop(key, None)

    # a query that runs out of memory is re-run with smaller chunks (Result._run)
    oom_retries_with_smaller_chunks = True

    # None: a run queues its value checks (glint.functions.deferred) on CUDA only, where
    # reading each one waits for the device; True / False: always / never (tests)
    defers_checks: bool | None = None

    def _execute_plan(
        self, physical, fields, names, profile: bool, chunk_rows: int | None = None, interrupt=None, checks=True
    ):
        """(the result as Arrow, the run's ExecContext). ``interrupt``: called
        before every operator's batches, raises to stop the run (ExecContext).
        ``checks``: whether the run may queue its value checks (a run voided
        by one makes them at once)."""
        ctx = self.execution_context(self, profile, chunk_rows)
        ctx.interrupt = interrupt
        ctx.decode_checks = []  # the scans' decoding checked once, at the end (ExecContext.verify_decoding)
        defer = self.defers_checks if self.defers_checks is not None else self.device.type == "cuda"
        if checks and defer:
            ctx.checks = []  # ... and the operators' overflow tests (ExecContext.verify_checks)
        start_scans(ctx, physical)
        try:
            try:
                out = stream_to_arrow(ctx, ctx.open(physical), fields, names)
            except Exception:
                # values of a chunk that failed its check may be what went wrong
                ctx.close_read_ahead()
                try:
                    ctx.verify_decoding()
                    ctx.verify_checks()
                except (DecodeRedo, CheckRedo):
                    raise
                except Exception:  # noqa: BLE001 - the run's own error is the one to report
                    pass
                raise
            ctx.close_read_ahead()
            ctx.verify_decoding()
            ctx.verify_checks()
            return out, ctx
        finally:
            ctx.close_read_ahead()

    # a result can be read chunk by chunk as the plan makes it (Result.stream)
    streams_results = True

    def _stream_plan(self, physical, fields, names, interrupt=None):
        """The plan's output as Arrow tables, one per nonempty batch, as they
        are made: (a generator of them, the run's ExecContext). Each chunk's
        device decoding is checked before it is handed on."""
        ctx = self.execution_context(self)
        ctx.interrupt = interrupt

        def tables():
            start_scans(ctx, physical)
            try:
                for batch in ctx.open(physical):
                    if batch.num_rows:
                        t = batch_to_arrow(batch, fields, names)
                        ctx.io.d2h_bytes += t.nbytes if ctx.device.type == "cuda" else 0
                        yield t
            except GeneratorExit:  # the reader stopped early: the streams close with this frame
                raise
            except BaseException as e:
                release_failed_run(e, ctx.memory)
                raise
            finally:
                ctx.close_read_ahead()

        return tables(), ctx

    def sql(self, query: str, params=None) -> Result | None:
        """Run one or more ;-separated statements; returns the last query's Result.

        ``params``: the values of the parameters of a single statement (``?``
        and ``$1``: a sequence; ``$name``: a mapping by name), each bound as a
        typed constant (glint.sql.parameters).

        A query run again, with its tables, views and settings unchanged,
        reuses the plan made the first time (glint.engine.plan_cache)."""
        capacity = self.settings.plan_cache_entries
        if params is None and capacity and isinstance(query, str):
            cached = self._plans.get(query, self.settings)
            if cached is not None:
                return Result.from_plan(self, cached)
        version, volatile = self._catalog_version.value, self._volatile_reads
        stmts = self.parse(query, params)
        result = None
        for stmt in stmts:
            result = self.run_parsed(stmt)
        if (
            params is None
            and capacity
            and len(stmts) == 1
            and isinstance(result, Result)
            and result.plan_cacheable
            and version == self._catalog_version.value
            and volatile == self._volatile_reads
        ):
            plan = CachedPlan(
                result.names,
                result._fields,
                result.logical,
                result.physical,
                version,
                self.settings,
                result.cross_products,
            )
            self._plans.put(query, plan, capacity)
        return result

    def parse(self, query: str, params=None) -> list:
        """``query``'s statements, parsed, with ``params`` bound (see
        :meth:`sql`): what :meth:`run_parsed` runs, one by one. EXPLAIN
        [ANALYZE] of a query is an :class:`Explain` of it."""
        if not isinstance(query, str):
            raise GlintError("sql() takes a string")
        m = _EXPLAIN.match(query)
        if m:
            stmts = frontend.parse(query[m.end() :])
            if len(stmts) != 1 or frontend.statement_kind(stmts[0]) != "query":
                # (never run: EXPLAIN INSERT must not insert)
                raise NotSupported("EXPLAIN of a statement that is not a query")
            return [Explain(bind_parameters(stmts[0], params), analyze=bool(m.group(1)))]
        stmts = frontend.parse(query)
        if params is not None and len(stmts) > 1:
            raise BinderError("parameters are bound to one statement, not to several separated by ';'")
        # (a placeholder without a value: an error naming it)
        return [bind_parameters(stmt, params) for stmt in stmts]

    def parameters(self, query: str) -> list[str]:
        """The parameters ``query`` takes, by name ("1", "2"... for ``?`` and
        ``$n``; glint.sql.parameters.parameter_names): what :meth:`parse`
        needs values for."""
        m = _EXPLAIN.match(query)
        stmts = frontend.parse(query[m.end() :] if m else query)
        names = [parameter_names(s) for s in stmts]
        if len(stmts) > 1 and any(names):
            raise BinderError("parameters are bound to one statement, not to several separated by ';'")
        return names[0] if len(stmts) == 1 else []

    @staticmethod
    def is_query(stmt) -> bool:
        """Whether a parsed statement is a query (run when its result is read)."""
        return not isinstance(stmt, Explain) and frontend.statement_kind(stmt) == "query"

    def run_parsed(self, stmt) -> Result | None:
        """One parsed statement (parameters bound): a query planned (run on
        its first fetch), any other statement run now (its Result, or None)."""
        if isinstance(stmt, Explain):
            return Result(self, stmt.query)._explain_result(analyze=stmt.analyze)
        kind = frontend.statement_kind(stmt)
        if kind == "query":
            return Result(self, stmt)
        self._catalog_changed()  # (a statement that is not a query may change what plans read)
        try:
            return self._run_statement(stmt, kind)
        finally:
            self._catalog_changed()

    def _run_statement(self, stmt, kind: str) -> Result | None:
        if kind == "create_view":
            self._create_view(stmt)
            return None
        if kind == "drop_view":
            for t in stmt.args.get("tables") or [stmt.this]:
                if self._views.pop(t.name.lower(), None) is None and not stmt.args.get("exists"):
                    raise CatalogError(f'View "{t.name}" does not exist')
            return None
        if kind == "describe":
            return self._describe(stmt.this.name)
        out = run_statement(self, stmt, kind)
        return None if out is None else Result.from_arrow(self, out)

    execute = sql
    query = sql

    def query_table(self, ast=None, bound=None):
        """Run a query (a parsed statement, or a bound one) now: (its result as
        Arrow, its output fields). Statements that write the rows of a query
        (CREATE TABLE AS, INSERT, COPY, UPDATE) run them through this."""
        r = Result(self, ast, bound)
        return r.arrow(), r._fields

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
            body = exp.select("*").from_(
                exp.Subquery(
                    this=body,
                    alias=exp.TableAlias(
                        this=exp.to_identifier("__view"), columns=[exp.to_identifier(c) for c in columns]
                    ),
                )
            )
        Result(self, body)  # bind now so a broken view fails at CREATE
        self._views[name] = body

    def _describe(self, name: str) -> Result:
        t = self.table(name)
        data = pa.table({"column_name": list(t.schema), "column_type": [str(x) for x in t.schema.values()]})
        return Result.from_arrow(self, data)

    def close(self) -> None:
        self._plans.clear()
        self.memory.cache_drop()
        if self.memory.host is not None:
            self.memory.host.drop()
        if self.memory.pages is not None:
            self.memory.pages.close()
            self.memory.pages = None  # (its pinned slabs go back)
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


def table_name_from_path(path: str) -> str:
    """The table name a file's path gives (its base name up to the first dot)."""
    import os

    base = os.path.basename(os.path.normpath(str(path)))
    name = base.split(".")[0]
    if not name or any(c in name for c in "*?[]"):
        raise GlintIOError(f"cannot derive a table name from {path!r}: pass name=...")
    return name
