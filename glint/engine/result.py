"""A query's result: planned when made, run on first fetch, kept; and the
conversions of a plan's output stream to Arrow and to Python values.

>>> import glint, pyarrow as pa
>>> con = glint.connect(device="cpu")
>>> _ = con.register("t", pa.table({"a": [1, 2, 3]}))
>>> con.sql("SELECT sum(a) AS s FROM t").fetchall()
[(Decimal('6'),)]
"""

from __future__ import annotations

import gc
import logging
import time
import traceback
from collections.abc import Iterator

import pyarrow as pa
import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, to_host
from glint.columnar.timestamp_text import TS_INFINITY, format_timestamp
from glint.errors import GlintError, OutOfMemory
from glint.exec.base import DecodeRedo, ExecContext
from glint.functions.dates.days import format_date
from glint.functions.deferred import CheckRedo
from glint.functions.evaluate import CONSTANT_EVALUATOR
from glint.plan.cardinality import Estimator
from glint.plan.cross_products import held_cross_products, oversized
from glint.plan.optimizer import optimize
from glint.runtime import trace
from glint.runtime.memory import format_bytes, host_memory_available
from glint.sql import frontend
from glint.statements.settings import resolve_setting_functions

_log = logging.getLogger("glint")


class ResultTooLarge(OutOfMemory):
    """A query's result would not fit in host memory (no retry helps)."""


def _result_cap(limit: int | None) -> int:
    """Bytes of a result glint holds on the host: ``limit`` (the result_limit
    setting), by default 70% of the memory available when the query starts."""

    return limit if limit is not None else int(host_memory_available() * 0.7)


def _refuse_oversized_cross_products(con, held: tuple) -> None:
    """A query that holds a cross product (``held``: glint.plan.cross_products.
    held_cross_products) larger than the cross_product_limit (by default the
    result limit) fails before it runs."""
    limit = con.settings.cross_product_limit
    if limit == 0 or not held:
        return
    cap = limit if limit is not None else _result_cap(con.settings.result_limit)
    where = oversized(held, cap)
    if where is not None:
        raise ResultTooLarge(
            f"the query cannot finish: {where}, more than the {format_bytes(cap)} glint may hold for it; "
            "add a join condition, a filter or a LIMIT, or SET cross_product_limit = 0 (or a larger size) "
            "to run it anyway"
        )


MAX_OOM_RETRIES = 6  # re-runs of a query that ran out of memory (cache dropped, smaller chunks, no cache)
MIN_RETRY_CHUNK_ROWS = 1 << 16


class Result:
    """A planned query; executes on first fetch and keeps its result."""

    def __init__(self, con, ast=None, bound=None):
        self._con = con
        self._arrow: pa.Table | None = None
        self._profile: dict | None = None
        self.io = None  # data movement of the last run (ExecContext.io)
        self.retries: list[str] = []  # out-of-memory errors of the last run that a re-run got past
        self.rank_stats: list[dict] | None = None  # per rank of a distributed run (glint.distributed.stats)
        self.timings: dict[str, float] = {}
        self.interrupt = None  # called before every operator's batches of a run: raises to stop it (ExecContext)
        self._query_run = None
        self.plan_cacheable = False  # planned here from a query's text (glint.engine.plan_cache)
        self.plan_cached = False  # its plan was made by an earlier run of the same text
        self.cross_products: tuple = ()  # the cross products its plan holds whole (glint.plan.cross_products)
        if ast is None and bound is None:
            return
        self.plan_cacheable = bound is None
        t0 = time.perf_counter()
        if bound is None:
            ast = resolve_setting_functions(con, frontend.inline_views(ast, con._views))
            bound = frontend.bind_query(ast, con)
        self.names = [n for n, _ in bound.outputs]
        self._fields = [f for _, f in bound.outputs]
        self.timings["bind"] = time.perf_counter() - t0
        self.logical = optimize(bound.plan, con, CONSTANT_EVALUATOR, con.disabled_rules, self.timings)
        self.cross_products = held_cross_products(self.logical, con)
        _refuse_oversized_cross_products(con, self.cross_products)
        t1 = time.perf_counter()
        self.physical = con._plan_physical(self.logical)
        self.timings["physical"] = time.perf_counter() - t1
        trace.add("plan", t0, time.perf_counter())

    @staticmethod
    def from_plan(con, plan) -> Result:
        """A query planned before (a glint.engine.plan_cache.CachedPlan), to run anew."""
        t0 = time.perf_counter()
        _refuse_oversized_cross_products(con, plan.cross_products)  # (the memory it is measured against may differ)
        r = Result(con)
        r.cross_products = plan.cross_products
        r.names, r._fields = plan.names, plan.fields
        r.logical, r.physical = plan.logical, plan.physical
        r.plan_cached = True
        r.timings["plan_reused"] = time.perf_counter() - t0
        return r

    @staticmethod
    def from_arrow(con, table: pa.Table) -> Result:
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
        self.retries = []  # the out-of-memory errors that a retry got past
        dropped_at: set[int] = set()  # chunk sizes already re-run without the cache
        try:
            with con.running(self.physical) as run:
                self._query_run = run
                ctx = self._run_retrying(profile, chunk_rows, dropped_at)
        except BaseException as e:
            release_failed_run(e, con.memory)
            raise
        finally:
            self._query_run = None
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
        checks = True  # the run may queue its value checks
        while True:
            try:
                return self._execute(profile, chunk_rows, checks)
            except ResultTooLarge:
                raise
            except CheckRedo as e:
                # an overflow test queued for the end of the run failed: again, with each
                # test made where it arises (the error, or the exact path, comes from there)
                if not checks:
                    raise GlintError(f"value checks failed twice ({e})") from None
                _log.info("a queued value check failed (%s); running the query again", e)
                checks = False
                continue
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

    def _execute(self, profile: bool, chunk_rows: int, checks: bool = True):
        if self._query_run is not None:
            self._query_run.new_attempt()
        self._arrow, ctx = self._con._execute_plan(
            self.physical, self._fields, self.names, profile, chunk_rows, interrupt=self.interrupt, checks=checks
        )
        return ctx

    @property
    def schema(self) -> pa.Schema:
        """The result's Arrow schema, known before it runs: the types of the
        tables :meth:`stream` gives (and of :meth:`arrow`'s, but that a long
        text column may come as large_string there)."""
        if not hasattr(self, "_fields"):
            return self._arrow.schema
        return pa.schema([pa.field(n, T.to_arrow(f.type)) for n, f in zip(self.names, self._fields)])

    def stream(self) -> Iterator[pa.Table]:
        """The result as Arrow tables of :attr:`schema`, one per chunk as the
        plan makes them, so that a large result is never whole in host memory
        (nor bound by the result_limit setting). A query that runs out of
        memory before its first chunk runs again as :meth:`arrow` would (its
        re-runs with the cache dropped and smaller chunks), and its result is
        then given from the host; one already read is given as it is."""
        schema = self.schema
        if self._arrow is not None or not hasattr(self, "physical") or not self._con.streams_results:
            yield from _pieces(self._run(), schema)
            return
        t0 = time.perf_counter()
        tables, ctx = self._con._stream_plan(self.physical, self._fields, self.names, self.interrupt)
        started = False
        try:
            for t in tables:
                started = True
                yield from _pieces(t, schema)
        except OutOfMemory:
            if started:
                raise
            tables.close()
            _release_garbage(self._con.device)
            yield from _pieces(self._run(), schema)
            return
        finally:
            tables.close()
        self.timings["execute"] = time.perf_counter() - t0
        self.io = ctx.io

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

        est = Estimator(self._con)
        header = getattr(self._con, "plan_header", None)  # a distributed connection: ranks and tables
        text = (
            "Logical plan (optimized):\n"
            + self.logical.explain(1, est.rows)
            + f"\n\nPhysical plan{f' ({header(self.physical)})' if header else ''}:\n"
            + self.physical.explain(1, self._profile if analyze else None)
        )
        if analyze and self.io is not None:
            text += "\n\n" + format_io(self.io)
        if analyze and self.rank_stats:  # (a distributed connection formats its ranks' breakdown)
            text += "\n\n" + self._con.format_rank_stats(self.rank_stats)
        return text

    def _explain_result(self, analyze: bool) -> Result:
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


def _pieces(t: pa.Table, schema: pa.Schema) -> Iterator[pa.Table]:
    """``t`` in ``schema``'s types (a large_string column as string), cut
    where a text column would pass string's 2 GiB of offsets."""
    if t.schema.equals(schema):
        yield t
        return
    try:
        yield pa.Table.from_arrays([c.cast(f.type) for c, f in zip(t.columns, schema)], schema=schema)
    except (pa.ArrowInvalid, pa.ArrowCapacityError):
        if t.num_rows < 2:
            raise
        half = t.num_rows // 2
        yield from _pieces(t.slice(0, half), schema)
        yield from _pieces(t.slice(half), schema)


def release_failed_run(exc: BaseException, memory) -> None:
    """A run failed for good: let go of what it held. The error's traceback
    keeps the failed run's frames alive (pytest keeps it, and so do an
    interactive session's last error and a caller that stores it), and with
    them its operators' suspended streams, their memory reservations and
    their device tensors: the next query on the connection would find the
    budget taken. The frames' locals are cleared (the traceback still names
    every file and line); the streams close, which gives the reservations
    back. What sits in reference cycles is collected then on CUDA (device
    tensors), and elsewhere only while reservations are still held: a full
    collection costs more the more objects a process holds, and on the CPU
    one after every error made 300 fuzzing queries (a few of which fail by
    design) take 17.7 s instead of 14.2-15.6 s."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if e.__traceback__ is not None:
            traceback.clear_frames(e.__traceback__)  # (the frames still running are skipped)
        todo += [e.__cause__, e.__context__]
    if memory.device.type == "cuda" or memory.reserved() > 0:
        gc.collect()


def _release_garbage(device) -> None:
    """Free what a failed run left in reference cycles, and give the CUDA
    allocator's free blocks back, before the run is tried again."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def format_io(io) -> str:
    """The IO summary EXPLAIN ANALYZE prints under the plan.

    >>> from glint.exec.base import IOStats
    >>> print(format_io(IOStats(chunks=3, chunks_skipped=1, file_bytes=5 << 20, decoded_bytes=9 << 20,
    ...                         read_s=0.5, scan_wait_s=0.25)))
    IO: 3 chunks scanned (1 skipped by statistics, 0 column chunks from the cache); 5.0 MiB read from files, 9.0 MiB decoded, 0 B from the host cache, 0 B of pages from the host tier, 0 B to the device, 0 B back
    scan threads: decode 0.500 s, convert 0.000 s, stage 0.000 s (summed over threads); the query waited 0.250 s for chunks
    >>> print(format_io(IOStats(cache_kept=4, cache_refused=2, cache_evicted_own=1)).splitlines()[-1])
    device cache: 4 column chunks kept, 2 refused, 1 of the run's own evicted for room
    """

    return (
        f"IO: {io.chunks} chunks scanned ({io.chunks_skipped} skipped by statistics, {io.cache_hits} column "
        f"chunks from the cache); {format_bytes(io.file_bytes)} read from files, "
        f"{format_bytes(io.decoded_bytes)} decoded, {format_bytes(io.host_cache_bytes)} from the host cache, "
        f"{format_bytes(io.tier_bytes)} of pages from the host tier, "
        f"{format_bytes(io.h2d_bytes)} to the device"
        + (f" ({format_bytes(io.forwarded_bytes)} over other GPUs' links)" if io.forwarded_bytes else "")
        + ", "
        f"{format_bytes(io.d2h_bytes)} back\n"
        f"scan threads: decode {io.read_s:.3f} s, convert {io.convert_s:.3f} s, stage {io.stage_s:.3f} s "
        f"(summed over threads); the query waited {io.scan_wait_s:.3f} s for chunks"
    ) + (
        f"\ndevice cache: {io.cache_kept} column chunks kept, {io.cache_refused} refused, "
        f"{io.cache_evicted_own} of the run's own evicted for room"
        if io.cache_kept or io.cache_refused or io.cache_evicted_own
        else ""
    )


def stream_to_arrow(ctx: ExecContext, batches, fields, names) -> pa.Table:
    """A plan's output stream as one Arrow table with the result's names."""
    parts = []
    held = rows = 0
    cap = _result_cap(ctx.settings.result_limit)
    for batch in batches:
        if batch.num_rows or not parts:
            t = batch_to_arrow(batch, fields, names)
            ctx.io.d2h_bytes += t.nbytes if ctx.device.type == "cuda" else 0
            parts.append(t)
            held += t.nbytes
            rows += t.num_rows
            if held > cap:
                # the host memory guard for what no operator bounds: the result itself

                raise ResultTooLarge(
                    f"the query's result passed {format_bytes(held)} after {rows:,} rows, more than the "
                    f"host memory glint may hold for it ({format_bytes(cap)}); add a LIMIT or aggregate, "
                    f"or write it out with fewer columns"
                )
    nonempty = [t for t in parts if t.num_rows] or parts[:1]
    return nonempty[0] if len(nonempty) == 1 else _concat_results(nonempty)


def batch_to_arrow(batch: Batch, fields, names) -> pa.Table:
    arrays = [c.to_arrow() for c in to_host([batch[f.id] for f in fields])]
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
                out.append(
                    dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=v)
                    if stamp
                    else dt.date(1970, 1, 1) + dt.timedelta(days=v)
                )
            except OverflowError:
                out.append(format_timestamp(v) if stamp else format_date(v))
    return out
