"""Physical operators' common base and the per-execution context.

Execution is over streams of batches (docs/architecture.md). An operator's
:meth:`PhysicalNode.stream` takes one iterator of batches per child and yields
its own batches. Operators that do not break the pipeline (scan, filter,
project, the probe side of a join, limit) turn each input chunk into an
output chunk; pipeline breakers (hash-join build, aggregation, sort, top-k,
set operations) consume an input whole before their first output, and declare
it (``breaker = True``).

Operators are immutable descriptions; everything a run creates lives in the
:class:`ExecContext` or in the operator's generator frame, so one plan can run
twice, on several devices or on several ranks. The recursion lives here:
:meth:`ExecContext.open` opens the children's streams, counts each operator's
rows, times it for EXPLAIN ANALYZE and turns an out-of-memory error into
:class:`~glint.errors.OutOfMemory` naming the operator.

Every stream yields at least one batch (possibly of zero rows), so a consumer
always sees the column types.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field as dc_field
from dataclasses import fields as dc_fields

import torch

from glint.columnar.column import Batch, concat_batches
from glint.errors import OutOfMemory
from glint.functions import deferred
from glint.functions.evaluate import FUSED_ARITHMETIC
from glint.functions.fused_values import fused_if_worth
from glint.runtime import trace
from glint.runtime.memory import MemoryManager, format_bytes, parse_size
from glint.runtime.query_run import QueryRun
from glint.runtime.settings import Settings
from glint.runtime.spill import SpillSpace


@functools.cache
def _child_fields(cls) -> tuple[str, ...]:
    """The fields of a node class that hold its inputs, in order (asked for on
    every run of every plan: dataclasses.fields is too slow for that)."""
    return tuple(f.name for f in dc_fields(cls) if f.name in ("child", "left", "right"))


class PhysicalNode:
    __slots__ = ()
    est_rows: float
    breaker = False  # consumes its input(s) whole before its first output

    @property
    def children(self) -> tuple[PhysicalNode, ...]:
        return tuple(getattr(self, name) for name in _child_fields(type(self)))

    def describe(self) -> str:
        raise NotImplementedError

    def stream(self, ctx: ExecContext, *inputs: Iterator[Batch]) -> Iterator[Batch]:
        raise NotImplementedError

    def explain(self, indent: int = 0, analyze: dict | None = None) -> str:
        extra = f"  (~{self.est_rows:,.0f} rows)"
        if analyze is not None and id(self) in analyze:
            st = analyze[id(self)]
            own = st.seconds - sum(analyze[id(c)].seconds for c in self.children if id(c) in analyze)
            extra += (
                f"  [actual {st.rows:,} rows in {st.batches:,} batch{'es' if st.batches != 1 else ''}, "
                f"{max(own, 0.0) * 1e3:.2f} ms]"
            )
            if st.notes:
                extra += "  {" + ", ".join(st.notes) + "}"
        out = ["  " * indent + self.describe() + (" [breaker]" if self.breaker else "") + extra]
        out += [c.explain(indent + 1, analyze) for c in self.children]
        return "\n".join(out)


@dataclass
class NodeStats:
    rows: int = 0
    batches: int = 0
    seconds: float = 0.0  # inclusive of the children's time spent inside this node's steps
    notes: list = dc_field(default_factory=list)


@dataclass
class IOStats:
    """Data movement of one query, for the bench and EXPLAIN ANALYZE."""

    chunks: int = 0  # chunks scanned
    chunks_skipped: int = 0  # ruled out by min/max statistics
    cache_hits: int = 0  # column chunks found on the device
    # column chunks read from the host that the device cache kept, that it
    # refused (no room beside the run's own chunks, or an operator had to
    # spill), and the run's own chunks it evicted for room (see
    # MemoryManager._make_room: a run that evicts its own does not find them
    # in its next run)
    cache_kept: int = 0
    cache_refused: int = 0
    cache_evicted_own: int = 0
    file_bytes: int = 0  # compressed bytes read from files
    decoded_bytes: int = 0  # bytes of decoded host columns
    h2d_bytes: int = 0  # host -> device
    d2h_bytes: int = 0  # device -> host (results, spills)
    scanned_bytes: int = 0  # bytes of the column chunks scanned (the columns touched)
    host_cache_bytes: int = 0  # of which copied up from the host tier of the cache (not decoded)
    pages_h2d_bytes: int = 0  # of h2d_bytes, column chunks as stored (Parquet pages the device decodes)
    tier_bytes: int = 0  # of which copied up from the host tier (not read from files)
    forwarded_bytes: int = 0  # of h2d_bytes, over other GPUs' links (glint.io.forwarding)
    spilled_bytes: int = 0
    # where a scan's time went (seconds summed over the decoding threads, and
    # the time the query waited for a chunk): decode / convert / stage near
    # threads x wall means the decoding threads were the bottleneck, a large
    # wait with small sums means the pipeline starved them
    read_s: float = 0.0  # Parquet decoding (pyarrow)
    convert_s: float = 0.0  # Arrow -> glint columns
    stage_s: float = 0.0  # copies into pinned buffers (and the DMA's submission)
    scan_wait_s: float = 0.0  # the consumer waiting for the next chunk

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


class DecodeRedo(Exception):
    """A run decoded column chunks on the device without checking each
    before use, and some check failed (more pages than the page tables
    held, or bad page data): the run is void and is done again with those
    columns checked chunk by chunk (which decodes them exactly, or names
    the bad file). ``columns``: {(storage Table, column name)}."""

    def __init__(self, columns):
        super().__init__(", ".join(sorted(f"{t.name}.{c}" for t, c in columns)))
        self.columns = columns


class ExecContext:
    """Everything one run of a plan creates: the device, the memory manager,
    spill space and settings of the connection (``settings``: default, the
    defaults), per-operator statistics and IO counters."""

    def __init__(
        self,
        device: torch.device,
        catalog,
        profile: bool = False,
        *,
        memory: MemoryManager | None = None,
        spill: SpillSpace | None = None,
        chunk_rows: int = 1 << 20,
        settings: Settings | None = None,
    ):
        self.device = torch.device(device)
        self.catalog = catalog
        self.profile = profile
        self.settings = settings if settings is not None else Settings()
        self.memory = memory if memory is not None else MemoryManager(self.device, 1 << 62)
        self.spill = spill if spill is not None else SpillSpace()
        self.chunk_rows = int(chunk_rows)
        self.memory.chunk_rows = self.chunk_rows  # the working reserve scales with it
        self.memory.begin_run()
        self.stats: dict[int, NodeStats] = {}
        self.io = IOStats()
        self.dist = None  # the rank's communicator in a distributed run (glint.distributed.comm)
        # scans started before the run asks for them: id(ScanExec) -> glint.io.chunk_reader.ChunkReader
        # (scan.start_scans)
        self.read_ahead: dict = {}
        # called before every batch of every operator (None: nothing): raises to
        # stop the run (a query cancelled or past its time limit, glint.errors.Cancelled)
        self.interrupt = None
        # the query's cancellation flag and scan progress (glint.runtime.query_run), when it has them
        self.run: QueryRun | None = None
        # a list: the scans' device decoding flags are collected here and
        # checked at the end of the run (verify_decoding); None: each chunk's
        # are checked before it is handed on
        self.decode_checks: list | None = None
        # recursive CTEs' working tables: key -> (the CTE's column ids, the last step's batches)
        self.working: dict = {}
        # a list: the operators' value checks (overflow tests) are queued here and read at
        # the end of the run (verify_checks, glint.functions.deferred); None: made at once
        self.checks: list | None = None

    @property
    def merge_rows(self) -> int:
        """Operators whose work per batch is mostly fixed (a partial
        aggregation: tens of launches whatever the rows) take batches smaller
        than this together (merge_small). Only small ones: copying large
        batches together costs more than their launches, and their VARCHAR
        columns' dictionaries would be new ones, whose per-dictionary work
        (hashes, string tests) is done again."""
        return max(1, min(self.chunk_rows // 4, MERGE_ROWS))

    def check_interrupt(self) -> None:
        """Raises Interrupted once the query was cancelled (a cancellation
        point: every operator's chunk, and long loops within an operator)."""
        if self.run is not None and self.run.cancelled:
            self.run.check()
        if self.interrupt is not None:
            self.interrupt()

    def verify_decoding(self) -> None:
        """Checks the collected decoding flags (one wait for the device):
        raises DecodeRedo naming the (table, column) pairs whose chunks
        must be decoded again, checked chunk by chunk."""
        checks, self.decode_checks = self.decode_checks, ([] if self.decode_checks is not None else None)
        if not checks:
            return
        if self.device.type == "cuda":
            # the flags of chunks decoded ahead on a scan's streams, which the
            # query's stream may never have waited for
            torch.cuda.synchronize(self.device)
        flags = torch.cat([e.reshape(1) for e, _, _ in checks]).tolist()
        bad = {(t, c) for (_, t, c), f in zip(checks, flags) if f}
        if bad:
            raise DecodeRedo(bad)

    def verify_checks(self) -> None:
        """Reads the queued value checks (one wait for the device): raises
        glint.functions.deferred.CheckRedo where one failed."""
        checks, self.checks = self.checks, ([] if self.checks is not None else None)
        if checks:
            deferred.verify(checks)

    def close_read_ahead(self) -> None:
        """Stops the read-ahead of scans the run did not ask for."""
        readers, self.read_ahead = list(self.read_ahead.values()), {}
        for r in readers:
            r.close()

    def pinned_pool(self):
        """The process's pool of pinned host buffers for this (CUDA) device."""
        from glint.io.pinned import pinned_pool

        return pinned_pool(self.device, self.settings.pinned_buffers)

    def forwarder(self):
        """The process's IO forwarder for this (CUDA) device under the
        io_forwarding setting (glint.io.forwarding), or None: never in a
        distributed run, whose other GPUs are the other ranks'."""
        if self.device.type != "cuda" or self.dist is not None:
            return None
        from glint.io.forwarding import forwarder

        return forwarder(self.device, self.settings.io_forwarding)

    # -------------------------------------------------------------- streams
    def open(self, node: PhysicalNode) -> Iterator[Batch]:
        """The node's output stream (lazy: nothing runs before the first batch is asked for)."""
        inputs = [self.open(c) for c in node.children]
        st = self.stats.setdefault(id(node), NodeStats())
        return self._guard(node, node.stream(self, *inputs), st)

    def _guard(self, node: PhysicalNode, it: Iterator[Batch], st: NodeStats) -> Iterator[Batch]:
        sync = self.profile and self.device.type == "cuda"
        run = self.run
        fused = fused_if_worth if self.device.type == "cuda" and self.settings.fused_expressions else None
        # a batch of no rows goes on only when the stream has no other: a join's or a
        # filter's empty pieces would cost every operator above it its per-batch work
        # (launches, waits), and a stream must still yield one batch (its columns)
        empty: Batch | None = None
        yielded = False
        try:
            while True:
                if run is not None and run.cancelled:
                    run.check()
                if self.interrupt is not None:
                    self.interrupt()
                t0 = time.perf_counter()
                # (the operator's expressions see the setting, on whatever thread asks for its batch)
                token = FUSED_ARITHMETIC.set(fused)
                queued = deferred.DEFERRED.set(self.checks)
                try:
                    batch = next(it)
                except StopIteration:
                    st.seconds += time.perf_counter() - t0
                    if not yielded and empty is not None:
                        st.batches += 1
                        yield empty
                    return
                except torch.OutOfMemoryError as e:
                    raise _out_of_memory(node, str(e), self.memory) from None
                except MemoryError as e:
                    raise OutOfMemory(
                        f"out of host memory in {_name(node)} ({node.describe()[:80]}){': ' + str(e) if str(e) else ''}"
                    ) from None
                except RuntimeError as e:
                    if _is_host_oom(e):
                        raise OutOfMemory(
                            f"out of host memory in {_name(node)} ({node.describe()[:80]}): {str(e).splitlines()[0]}"
                        ) from None
                    raise
                finally:
                    FUSED_ARITHMETIC.reset(token)
                    deferred.DEFERRED.reset(queued)
                if sync:
                    torch.cuda.synchronize(self.device)
                t1 = time.perf_counter()
                st.seconds += t1 - t0
                trace.add(_name(node), t0, t1)  # nested: an operator's span holds its inputs'
                if not batch.num_rows:
                    empty = batch
                    continue
                st.rows += batch.num_rows
                st.batches += 1
                yielded = True
                yield batch
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()

    def collect(self, node: PhysicalNode) -> Batch:
        """The node's whole output as one batch."""
        return concat_batches(list(self.open(node)))

    def note(self, node: PhysicalNode, text: str) -> None:
        """A remark for EXPLAIN ANALYZE (spills, partitions, skipped chunks)."""
        self.stats.setdefault(id(node), NodeStats()).notes.append(text)


# batches below this many rows are merged for a partial aggregation (ExecContext.merge_rows):
# at this size a chunk's fixed host work (about a millisecond) is well above its device work
MERGE_ROWS = 1 << 17


def _name(node) -> str:
    return type(node).__name__.removesuffix("Exec")


def _out_of_memory(node, msg: str, memory: MemoryManager | None = None) -> OutOfMemory:
    m = re.search(r"Tried to allocate ([0-9.]+ [KMGT]?i?B)", msg)
    wanted = m.group(1) if m else ""
    state = ""
    if memory is not None:
        memory.note_oom(parse_size(wanted.replace(" ", "")) if wanted else 0)
        state = memory.describe_use()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return OutOfMemory(
        f"out of GPU memory in {_name(node)} ({node.describe()[:80]})"
        f"{f': it asked for {wanted}' if wanted else ''}; "
        "the query needs more memory than the device has free "
        f"(the connection stays usable){'; ' + state if state else ''}"
    )


def _is_host_oom(e: RuntimeError) -> bool:
    s = str(e)
    return "DefaultCPUAllocator" in s and "can't allocate memory" in s


def bytes_text(n: int) -> str:
    return format_bytes(n)
