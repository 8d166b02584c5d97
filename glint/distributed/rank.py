"""What every rank runs: its share of the tables, and the commands rank 0
posts (add a table, run a plan, ...), in order.

Rank 0 posts each command once in the store (``cmd/<seq>``); every other rank
waits for it, carries it out and posts a reply (``reply/<seq>/<rank>``: its
statistics, or its error). Rank 0 carries out its own part in-process
(:mod:`glint.distributed.connection`). A command that moves rows between ranks (a
query, a table partitioned on a key at load) is a *query* of the
communicator, numbered by its sequence number.
"""

from __future__ import annotations

import datetime
import importlib
import pickle
import time
from contextlib import contextmanager
from dataclasses import dataclass

import pyarrow as pa
import torch.distributed as dist

from glint.columnar.column import Column, concat_columns, sorted_dictionary_array
from glint.distributed.catalog import PartitionSource, Projection, TablePartitioning, assign
from glint.distributed.comm import Communicator, PeerAborted, encode_error
from glint.errors import CatalogError, did_you_mean
from glint.exec.scan import start_scans
from glint.io.arrow_objects import table_from_ipc
from glint.io.fragments import ArrowSource
from glint.io.held import hold
from glint.io.table import Table
from glint.plan.expr import ColRef, Field

COMMAND_WAIT_S = 3600  # a waiting rank re-arms its wait for the next command this often


# ------------------------------------------------------------------ commands
@dataclass(frozen=True, slots=True)
class AddTable:
    name: str
    source: tuple  # ("parquet", path(s), columns) | ("arrow", data key prefix)
    partitioning: TablePartitioning
    types: dict | None = None  # glint's column types of a table created in SQL


@dataclass(frozen=True, slots=True)
class AppendRows:
    """INSERT on a distributed connection: each rank appends its share of the
    rows (under ``<data>/<rank>``, or ``<data>/all`` when replicated)."""

    name: str
    data: str
    replicated: bool = False


@dataclass(frozen=True, slots=True)
class DropTable:
    name: str


@dataclass(frozen=True, slots=True)
class Execute:
    plan: bytes  # the pickled physical plan
    profile: bool = False


@dataclass(frozen=True, slots=True)
class InjectFault:
    rank: int
    step: int
    action: str  # exit | sleep | raise
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Call:
    """Every rank runs ``target(rank, **kwargs)`` as a query and replies with
    what it returned (an SPMD step outside SQL: ``glint bench exchange``).
    ``target`` is a ``glint.`` module and function, ``"glint.bench.exchange:measure"``."""

    target: str
    kwargs: dict


@dataclass(frozen=True, slots=True)
class DropCache:
    pass


@dataclass(frozen=True, slots=True)
class Reset:
    """A connection over ranks that outlive it (torchrun) closed: drop its tables."""


@dataclass(frozen=True, slots=True)
class Close:
    pass


@dataclass(frozen=True, slots=True)
class Reply:
    ok: bool
    stats: dict | None = None
    error: tuple | None = None  # comm.encode_error's form
    peer: int | None = None  # the rank whose failure stopped this one (its error is ``error``)
    value: object = None  # what a Call returned


# ------------------------------------------------------------------ the rank
class LocalCatalog:
    """The tables as this rank holds them (its share of each)."""

    def __init__(self):
        self._tables: dict[str, Table] = {}

    def table(self, name: str) -> Table:
        t = self._tables.get(name.lower())
        if t is None:
            raise CatalogError(f'Table "{name}" does not exist{did_you_mean(name, list(self._tables))}')
        return t

    def add(self, name: str, t: Table) -> Table | None:
        old = self._tables.get(name.lower())
        self._tables[name.lower()] = t
        return old

    def drop(self, name: str) -> Table | None:
        return self._tables.pop(name.lower(), None)

    def clear(self) -> None:
        self._tables.clear()


class Rank:
    """One rank: an engine (a Connection: device, memory manager, spill
    space, chunk size), its communicator and its share of the tables."""

    def __init__(self, engine, comm: Communicator):
        self.engine = engine
        self.comm = comm
        self.catalog = LocalCatalog()

    @property
    def rank(self) -> int:
        return self.comm.rank

    # ------------------------------------------------------------ queries
    def run(self, seq: int, plan, profile: bool = False, consume=None):
        """Runs ``plan`` as query ``seq``; ``consume(ctx, stream)`` reads the
        output (by default it is read and dropped). Returns (what consume
        returned, the ExecContext); this rank's statistics are in
        ``self.comm.stats``. On an error the other ranks are told first."""
        comm = self.comm
        with self.query(seq):
            ctx = self.engine.execution_context(self.catalog, profile)
            ctx.dist = comm
            t0 = time.perf_counter()
            start_scans(ctx, plan)  # every scan of the rank's share starts reading now
            try:
                stream = ctx.open(plan)
                out = consume(ctx, stream) if consume is not None else _drain(stream)
            finally:
                ctx.close_read_ahead()
        comm.stats.finish(time.perf_counter() - t0, ctx.io.as_dict())
        return out, ctx

    @contextmanager
    def query(self, seq: int):
        """Command ``seq`` as a query of the communicator: whatever fails in
        it (reading a table, unpickling a plan, running it) is posted as
        this rank's abort, so the other ranks stop instead of waiting."""
        self.comm.begin(seq)
        try:
            yield
        except BaseException as e:
            self.comm.abort(e)
            raise

    # ------------------------------------------------------------ tables
    def add_table(self, seq: int, cmd: AddTable, src=None, data: pa.Table | None = None) -> None:
        """This rank's share of a table. ``src`` (a source over the whole
        table) or ``data`` (this rank's rows, or all rows when replicated)
        spare opening or fetching it again."""
        if cmd.partitioning.kind == "hash":  # the ranks exchange rows: a query
            with self.query(seq):
                t = self._share(cmd, src, data)
                t = self._hash_partition(seq, cmd.name, t, cmd.partitioning.key, cmd.types)
        else:
            t = self._share(cmd, src, data)
        old = self.catalog.add(cmd.name, t)
        if old is not None:
            self.evict(old)

    def _share(self, cmd: AddTable, src, data) -> Table:
        """This rank's range share (or all) of the table's rows."""
        part = cmd.partitioning
        kind = cmd.source[0]
        n = self.comm.size
        if kind == "parquet":
            if src is None:
                from glint.io.parquet_source import ParquetSource

                src = ParquetSource(cmd.source[1], self.engine.settings)
                if cmd.source[2] is not None:
                    src = Projection(src, cmd.source[2])
            if part.kind != "replicated":
                src = PartitionSource(src, assign([f.rows for f in src.fragments], n)[self.rank])
            t = Table.from_source(cmd.name, src, cmd.source[1])
        else:
            if data is None:
                key = f"{cmd.source[1]}/{'all' if part.kind == 'replicated' else self.rank}"
                data = table_from_ipc(self.comm.store.get(key))
            t = Table(cmd.name, ArrowSource(data), "memory", types=cmd.types)
        return t

    def _hash_partition(self, seq: int, name: str, t: Table, key: str, types: dict | None = None) -> Table:
        """The rows of ``t`` every rank holds, shuffled so each rank keeps the
        rows whose ``key`` hashes to it."""
        from glint.distributed.shuffle import ShuffleExec
        from glint.exec.scan import ScanExec

        cols = tuple(t.schema)
        fields = tuple(Field(i + 1, c, ty) for i, (c, ty) in enumerate(t.schema.items()))
        kf = next(f for f in fields if f.name.lower() == key.lower())
        tmp = f"__glint_load_{name}"
        self.catalog.add(tmp, t)
        mm = self.engine.memory
        # the share is read once: its chunks are not cached on the device
        # (nor, since nothing is evicted for them, kept in the host tier)
        caching, mm.cache_enabled = mm.cache_enabled, False
        try:
            plan = ShuffleExec(ScanExec(tmp, cols, fields), (ColRef(kf),))
            parts, ctx = self.run(seq, plan, consume=lambda ctx, stream: list(stream))
        finally:
            mm.cache_enabled = caching
            self.catalog.drop(tmp)
            self.evict(t)
        types = types or dict(t.schema)
        rows = sum(p.num_rows for p in parts)
        # the received rows stay on the device, column by column (each part's
        # column let go once put together), unless they do not fit beside
        # what the device holds: then they are held on the host as Arrow
        columns = {f.name: concat_columns([p.columns.pop(f.id) for p in parts]) for f in fields}
        if rows:
            src = hold(columns, types, rows, ctx.chunk_rows, self.engine.memory)
            if src is not None:
                return Table(name, src, t.source, types=types)
        data = pa.Table.from_arrays([_held_arrow(columns[c]) for c in cols], names=list(cols))
        return Table(name, ArrowSource(data), t.source, types=types)

    def append_rows(self, cmd: AppendRows, data: pa.Table | None = None) -> None:
        """Adds this rank's share of an INSERT's rows to its table (``data``:
        rank 0's share, spared a trip through the store)."""
        if data is None:
            data = table_from_ipc(self.comm.store.get(f"{cmd.data}/{'all' if cmd.replicated else self.rank}"))
        if data.num_rows == 0:
            return
        from glint.io.appended import drop_stale

        t = self.catalog.table(cmd.name)
        drop_stale(self.engine.memory, t, t.append(data))

    def call(self, seq: int, cmd: Call):
        """Runs a Call's function on this rank as query ``seq`` (a failure
        stops the other ranks at their next exchange) and returns its value."""
        with self.query(seq):
            module, _, name = cmd.target.partition(":")
            if not module.startswith("glint.") or not name:
                raise ValueError(f"Call target must be 'glint.<module>:<function>', got {cmd.target!r}")
            fn = getattr(importlib.import_module(module), name)
            return fn(self, **cmd.kwargs)

    def evict(self, t: Table) -> None:
        self.engine.memory.cache_drop(lambda k: k[0] == "table" and k[1] == t.uid)

    # ------------------------------------------------------------ commands
    def handle(self, seq: int, cmd) -> Reply | None:
        """Carries out a command posted by rank 0 (on a rank other than 0)."""
        try:
            if isinstance(cmd, Execute):
                with self.query(seq):
                    plan = pickle.loads(cmd.plan)
                self.run(seq, plan, cmd.profile)
                return Reply(True, self.comm.stats.as_dict())
            if isinstance(cmd, Call):
                return Reply(True, self.comm.stats.as_dict(), value=self.call(seq, cmd))
            if isinstance(cmd, AddTable):
                self.add_table(seq, cmd)
            elif isinstance(cmd, AppendRows):
                self.append_rows(cmd)
            elif isinstance(cmd, DropTable):
                t = self.catalog.drop(cmd.name)
                if t is not None:
                    self.evict(t)
            elif isinstance(cmd, InjectFault):
                if cmd.rank == self.rank:
                    self.comm.inject_fault(cmd.step, cmd.action, cmd.seconds)
            elif isinstance(cmd, DropCache):
                self.engine.drop_cache()
            elif isinstance(cmd, (Reset, Close)):
                self.catalog.clear()
                self.engine.drop_cache()
            return Reply(True)
        except Exception as e:  # noqa: BLE001 - every error goes back to rank 0
            return Reply(
                False, self.comm.stats.as_dict(), encode_error(e), e.rank if isinstance(e, PeerAborted) else None
            )

    def serve(self) -> None:
        """The command loop of a rank other than 0, until rank 0 closes."""
        store, seq = self.comm.store, 0
        while True:
            key = f"cmd/{seq}"
            while True:
                try:
                    store.wait([key], datetime.timedelta(seconds=COMMAND_WAIT_S))
                    break
                except dist.DistStoreError:
                    continue  # idle: wait again (rank 0 gone shows as a network error)
            cmd = pickle.loads(store.get(key))
            reply = self.handle(seq, cmd)
            store.set(f"reply/{seq}/{self.rank}", pickle.dumps(reply))
            store.add(f"reply/{seq}/n", 1)
            self.comm.drop_stale()  # (idle until the next command)
            if isinstance(cmd, Close):
                return
            seq += 1


def _drain(stream) -> None:
    for _ in stream:
        pass


def _held_arrow(col: Column) -> pa.Array:
    """A column of a table this rank holds after its load-time shuffle, as
    Arrow. A VARCHAR column of few distinct strings (TPC-H's flags and
    modes: at most half as many dictionary entries as rows) stays
    dictionary-encoded, its dictionary sorted and without duplicates, so
    queries group, join and compare on its codes as they do on a Parquet
    column's, and no string is copied per row."""
    if col.dtype.is_string and len(col.dictionary) <= len(col) // 2:
        return sorted_dictionary_array(col)
    return col.to_arrow()
