"""``glint.connect(ranks=N)``: a connection whose queries run on N ranks.

The calling process is rank 0: it holds the catalog (each table's source over
all its rows, for binding and estimates, and how it is partitioned), parses,
optimizes and plans every query (:mod:`glint.distributed.planner`), posts the plan
to the other ranks, runs its own part, and returns the result gathered on it.
The API is a normal connection's (``read_parquet``, ``read_csv``,
``register``, ``sql`` and results with ``arrow()``, ``fetchall()``,
``explain()``), plus:

- ``read_parquet(..., partition_by="col")`` / ``register(..., partition_by=)``:
  the table is hash-partitioned on a column at load (joins and GROUP BYs on
  it need no exchange); ``replicate=True``: every rank holds all of it
  (default for tables of at most ``replicate_rows`` rows);
- ``result.rank_stats``: per rank, compute / shuffle / broadcast / gather /
  wait time, bytes and messages (:mod:`glint.distributed.stats`);
- ``timeout``: seconds a rank waits for the others at an exchange before the
  query stops with a :class:`~glint.errors.RankFailure` naming the late rank;
- ``adaptive_joins``: "auto" (default), "always" or "never": whether a
  join's broadcast or shuffle is decided at run time from the actual size of
  its build side (:mod:`glint.distributed.adaptive_join`);
- ``round_bytes``: input bytes per rank and round of a shuffle or gather
  (:mod:`glint.distributed.rounds`; default: from each rank's memory budget);
- the setting ``skew_joins``: "auto" (default), "always" or "never": where a
  join that shuffles both sides keeps its heavy keys apart
  (:mod:`glint.distributed.skew_join`).

An error in a rank's part of a query (say, a failed CAST in its rows) stops
the query on every rank and is raised here as the glint error it is; the
connection stays usable. A rank that dies or hangs ends the connection:
the RankFailure says which, and a new connection runs queries again.
"""

from __future__ import annotations

import pickle
import weakref

import torch

from glint.columnar.column import Column
from glint.distributed import launch
from glint.distributed.catalog import Projection, TablePartitioning, assign
from glint.distributed.comm import Communicator, PeerAborted, decode_error
from glint.distributed.planner import SMALL_RESULT_BYTES, PlanOptions, plan_distributed
from glint.distributed.rank import (
    AddTable,
    AppendRows,
    Call,
    Close,
    DropCache,
    DropTable,
    Execute,
    InjectFault,
    Rank,
    Reset,
)
from glint.distributed.stats import format_rank_stats
from glint.engine.connection import Connection, table_name_from_path
from glint.engine.result import stream_to_arrow
from glint.errors import CatalogError, ColumnNotFound, GlintError, NotSupported, RankFailure
from glint.exec.base import IOStats
from glint.exec.hashing import hash_columns, partition_of
from glint.io.arrow_objects import table_to_ipc, to_arrow_table
from glint.io.csv_files import load_csv
from glint.io.parquet_source import ParquetSource
from glint.io.table import Table
from glint.runtime.memory import parse_size

DEFAULT_TIMEOUT_S = 120.0
REPLICATE_ROWS = 50_000  # tables up to this many rows: every rank holds all of them


class DistConnection(Connection):
    def __init__(
        self,
        ranks,
        device: str = "auto",
        optimizer: dict | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        replicate_rows: int = REPLICATE_ROWS,
        small_result_bytes: int = SMALL_RESULT_BYTES,
        threads: int | None = None,
        adaptive_joins: str = "auto",
        round_bytes: int | str = 0,
        **engine_options,
    ):

        if not (isinstance(timeout, (int, float)) and timeout > 0):
            raise GlintError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if adaptive_joins not in ("auto", "always", "never"):
            raise GlintError(f'adaptive_joins must be "auto", "always" or "never", got {adaptive_joins!r}')
        round_bytes = parse_size(round_bytes) if isinstance(round_bytes, str) else round_bytes
        if isinstance(round_bytes, bool) or not isinstance(round_bytes, int) or round_bytes < 0:
            raise GlintError(f"round_bytes must be a number of bytes (0: from the memory budget), got {round_bytes!r}")
        self._closed = False
        self._broken: RankFailure | None = None
        self._torchrun = ranks == "env"
        if self._torchrun:
            world, comm = launch.join_torchrun(str(device), timeout)
            dev = comm.device
        else:
            if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 1:
                raise GlintError(f'ranks must be a positive number of ranks or "env", got {ranks!r}')
            devices = launch.rank_devices(str(device), ranks)
            dev = devices[0]
        super().__init__(device=str(dev), optimizer=optimizer, **engine_options)
        self._threads = None
        if not self._torchrun:
            if dev.type == "cpu":
                self._threads = torch.get_num_threads()
                torch.set_num_threads(threads or launch.default_threads(ranks))
            config = {"engine": engine_options, "threads": threads}
            try:
                world, backend = launch.launch_local(ranks, devices, timeout, config)
            except BaseException:
                self._restore_threads()
                Connection.close(self)
                raise
            comm = Communicator(world.store, 0, ranks, dev, backend, timeout, watch=world.check)
        self.world = world
        self.ranks = world.size
        self.hosts = launch.torchrun_hosts() if self._torchrun else 1  # for the exchange cost model
        self.rank = Rank(self, comm)
        self.replicate_rows = replicate_rows
        self.plan_options = PlanOptions(small_result_bytes, adaptive_joins, round_bytes, self.settings.skew_joins)
        self._partitioning: dict[str, TablePartitioning] = {}
        self._finalizer = weakref.finalize(self, _shutdown, world, comm, self._torchrun)

    def __repr__(self) -> str:
        return f"<glint.DistConnection {self.ranks} ranks on {self.device.type}>"

    def set_setting(self, name: str, value) -> None:
        # (each rank has its own engine and settings: they are given to glint.connect, for all of them)
        raise NotSupported("SET on a distributed connection (pass the setting to glint.connect)")

    def reset_setting(self, name: str | None = None) -> None:
        raise NotSupported("RESET on a distributed connection")

    # ------------------------------------------------------------ catalog
    def partitioning(self, name: str) -> TablePartitioning:
        self.table(name)
        return self._partitioning[name.lower()]

    @staticmethod
    def format_rank_stats(rank_stats) -> str:
        """EXPLAIN ANALYZE's per-rank breakdown (glint.distributed.stats)."""

        return format_rank_stats(rank_stats)

    def plan_header(self, physical) -> str:
        """EXPLAIN's note on a plan: the ranks, and how the tables it scans are spread.

        (e.g. "3 ranks; lineitem hash(l_orderkey), nation replicated")"""
        names: list[str] = []

        def walk(node):
            t = getattr(node, "table", None)
            if isinstance(t, str) and t not in names:
                names.append(t)
            for c in node.children:
                walk(c)

        walk(physical)
        tables = ", ".join(f"{t} {self._partitioning[t.lower()]!r}" for t in names if t.lower() in self._partitioning)
        return f"{self.ranks} rank{'s' if self.ranks != 1 else ''}" + (f"; {tables}" if tables else "")

    def _choose(self, schema, rows: int, partition_by, replicate) -> TablePartitioning:
        if partition_by is not None:
            if replicate:
                raise GlintError("a table is either partitioned on a column or replicated, not both")
            names = {n.lower(): n for n in schema.names}
            if partition_by.lower() not in names:
                raise ColumnNotFound(f'Column "{partition_by}" not found (columns: {", ".join(schema.names)})')
            return TablePartitioning("hash", names[partition_by.lower()])
        if replicate is None:
            replicate = rows <= self.replicate_rows
        return TablePartitioning("replicated" if replicate else "range")

    def read_parquet(
        self,
        path: str,
        name: str | None = None,
        columns=None,
        *,
        partition_by: str | None = None,
        replicate: bool | None = None,
    ) -> DistConnection:
        """Register a Parquet file, directory or glob as table ``name``; each
        rank reads its share of the row groups (see glint.distributed.catalog)."""

        self._check_open()
        src = ParquetSource(path, self.settings)
        if columns is not None:
            src = Projection(src, list(columns))
        name = name or table_name_from_path(path)
        part = self._choose(src.schema, src.num_rows, partition_by, replicate)
        paths = list(path) if isinstance(path, (list, tuple)) else str(path)
        cmd = AddTable(name, ("parquet", paths, None if columns is None else list(columns)), part)
        self._broadcast(cmd, lambda seq: self.rank.add_table(seq, cmd, src=src))
        self._install(name, Table.from_source(name, src, str(path)), part)
        return self

    def register(
        self, name: str, data, *, partition_by: str | None = None, replicate: bool | None = None
    ) -> DistConnection:
        """Register in-memory data (Arrow, pandas, Polars...); each rank gets
        a slice of its rows (or all of them, replicated)."""

        self._check_open()
        if not name or not isinstance(name, str):
            raise GlintError("a table needs a name")
        table = to_arrow_table(data)
        part = self._choose(table.schema, table.num_rows, partition_by, replicate)
        self._distribute(name, table, part)
        return self

    def _distribute(self, name: str, table, part: TablePartitioning, types: dict | None = None, rules=None) -> None:
        """Each rank's share of in-memory rows, sent through the store."""
        if part.kind == "replicated":
            shares = {"all": table} if self.ranks > 1 else {}
            mine = table
        else:
            cuts = assign([table.num_rows], self.ranks)
            slices = [table.slice(p[0][1], p[0][2] - p[0][1]) if p else table.slice(0, 0) for p in cuts]
            shares = {r: slices[r] for r in range(1, self.ranks)}
            mine = slices[0]
        prefix = self.world.put_data({k: table_to_ipc(v) for k, v in shares.items()})
        cmd = AddTable(name, ("arrow", prefix), part, types)
        try:
            self._broadcast(cmd, lambda seq: self.rank.add_table(seq, cmd, data=mine))
        finally:
            if not self.world.closed:
                self.world.drop_data(prefix, shares)
        self._install(name, Table.from_arrow(name, table, "memory", rules, types), part)

    # ------------------------------------------------------------ tables written in SQL
    def create_table(self, name: str, data, types: dict, rules=None, temporary: bool = False) -> None:
        """CREATE TABLE [AS] (and DELETE-free rewrites such as TRUNCATE): the
        rows spread over the ranks as registered data is (small: replicated).
        (Every table is the connection's: ``temporary`` changes nothing.)"""
        self._check_open()
        self._distribute(name, data, self._choose(data.schema, data.num_rows, None, None), types, rules)

    def append_rows(self, name: str, data) -> None:
        """INSERT: each rank appends the new rows it holds under the table's
        partitioning (a share of a range, the rows hashing to it, or all)."""
        self._check_open()
        t = self.table(name)
        part = self._partitioning[name.lower()]
        shares = _append_shares(data, part, t.schema, self.ranks)
        put = (
            {}
            if self.ranks == 1
            else {"all": data}
            if part.kind == "replicated"
            else {r: shares[r] for r in range(1, self.ranks)}
        )
        prefix = self.world.put_data({k: table_to_ipc(v) for k, v in put.items()})
        cmd = AppendRows(t.name, prefix, part.kind == "replicated")
        try:
            self._broadcast(cmd, lambda seq: self.rank.append_rows(cmd, data=shares[0]))
        finally:
            if not self.world.closed:
                self.world.drop_data(prefix, put)
        Connection.append_rows(self, name, data)  # the table as rank 0 plans with it

    def read_csv(
        self,
        path: str,
        name: str | None = None,
        *,
        partition_by: str | None = None,
        replicate: bool | None = None,
        **options,
    ) -> DistConnection:
        """A CSV file read here once, then registered like in-memory data."""

        return self.register(
            name or table_name_from_path(path),
            load_csv(path, **options),
            partition_by=partition_by,
            replicate=replicate,
        )

    def _register_system(self, name: str, data) -> None:
        """A system table's rows, registered on the ranks as any data is."""
        self.register(name, data)

    def _install(self, name: str, global_table: Table, part: TablePartitioning) -> None:
        old = self._tables.get(name.lower())
        if old is not None:
            self._evict(old)
        self._tables[name.lower()] = global_table
        self._partitioning[name.lower()] = part
        self._catalog_changed()

    def unregister(self, name: str) -> None:
        t = self._tables.get(name.lower())
        if t is None:
            raise CatalogError(f'Table "{name}" does not exist')
        self._broadcast(DropTable(name), lambda seq: self._drop_local(name))
        del self._tables[name.lower()]
        del self._partitioning[name.lower()]
        self._catalog_changed()

    def _drop_local(self, name: str) -> None:
        t = self.rank.catalog.drop(name)
        if t is not None:
            self.rank.evict(t)

    def drop_cache(self, host: bool = False, release: bool = True) -> None:
        """Give back every rank's cached table chunks (``host`` and
        ``release`` as Connection.drop_cache's, for rank 0's own; the other
        ranks keep their host tiers and give their free blocks back)."""
        if self._broken is None and not self._closed:
            self._broadcast(DropCache(), lambda seq: Connection.drop_cache(self, host, release))
        else:
            Connection.drop_cache(self, host, release)

    def memory_budget_bytes(self) -> int:
        """The join-order optimizer's budget: every rank holds a share of an
        intermediate result, so N ranks hold about N times what one can."""
        return Connection.memory_budget_bytes(self) * self.ranks

    def inject_fault(self, rank: int, action: str, step: int = 1, seconds: float = 0.0) -> None:
        """Test hook: during the next query, ``rank`` exits (``"exit"``),
        sleeps ``seconds`` (``"sleep"``) or raises an ExecutionError
        (``"raise"``) when it reaches exchange ``step``."""
        if not 0 <= rank < self.ranks or action not in ("exit", "sleep", "raise"):
            raise GlintError(f"inject_fault: rank 0..{self.ranks - 1}, action exit | sleep | raise")
        cmd = InjectFault(rank, step, action, seconds)
        self._broadcast(cmd, lambda seq: self.rank.comm.inject_fault(step, action, seconds) if rank == 0 else None)

    # ------------------------------------------------------------ queries
    def _plan_physical(self, logical):
        return plan_distributed(logical, self, self.ranks, self.plan_options)

    # every rank runs with the chunk size it was started with
    oom_retries_with_smaller_chunks = False

    # every rank's output is gathered on rank 0 before it is handed out
    streams_results = False

    def _execute_plan(
        self, physical, fields, names, profile: bool, chunk_rows: int | None = None, interrupt=None, checks=True
    ):
        # (the ranks make their value checks at once: a rank cannot run a plan again alone)
        self._check_open()
        if interrupt is not None:
            interrupt()  # (the ranks run the plan to its end once it is posted)
        blob = pickle.dumps(physical)
        seq = self.world.post(Execute(blob, profile))
        table = ctx = err = None
        try:
            table, ctx = self.rank.run(
                seq, physical, profile, lambda c, stream: stream_to_arrow(c, stream, fields, names)
            )
        except BaseException as e:  # noqa: BLE001 - the other ranks' replies come first
            err = e
        replies = self._collect(seq, err)
        ctx.rank_stats = [self.rank.comm.stats.as_dict()] + [replies[r].stats for r in range(1, self.ranks)]
        ctx.io = _summed_io(ctx.rank_stats)
        return table, ctx

    def call(self, target: str, **kwargs) -> list:
        """Runs ``target(rank, **kwargs)`` on every rank together (SPMD: each
        gets its glint.distributed.rank.Rank, so its engine and communicator) and
        returns what each returned, in rank order. ``target`` is
        ``"glint.<module>:<function>"``; the values travel pickled."""
        self._check_open()
        cmd = Call(target, kwargs)
        seq = self.world.post(cmd)
        value = err = None
        try:
            value = self.rank.call(seq, cmd)
        except BaseException as e:  # noqa: BLE001 - the other ranks' replies come first
            err = e
        replies = self._collect(seq, err)
        return [value] + [replies[r].value for r in range(1, self.ranks)]

    def _broadcast(self, cmd, local) -> None:
        """Posts a command, runs rank 0's part, and raises the first error."""
        self._check_open()
        seq = self.world.post(cmd)
        err = None
        try:
            local(seq)
        except BaseException as e:  # noqa: BLE001
            err = e
        self._collect(seq, err)

    def _collect(self, seq: int, local_error: BaseException | None) -> dict:
        """The other ranks' replies; raises the error that stopped the
        command (a rank's own, not the others' reaction to it)."""
        if isinstance(local_error, RankFailure):
            self._fail(local_error)  # a rank is lost: no replies to wait for
            raise local_error from None
        try:
            self.rank.comm.drop_stale()  # (while the other ranks finish)
            replies = self.world.collect(seq)
        except RankFailure as e:
            self._fail(e)
            raise e from None
        except BaseException as e:
            self._fail(RankFailure(f"lost the other ranks: {e}"))
            raise
        errors = []
        if local_error is not None:
            errors.append(
                local_error
                if not isinstance(local_error, PeerAborted)
                else _Peer(decode_error(local_error.error, local_error.rank))
            )
        for r in range(1, self.ranks):
            rep = replies[r]
            if not rep.ok:
                e = decode_error(rep.error, r)
                errors.append(_Peer(e) if _aborted_by_peer(rep) else e)
        if not errors:
            return replies
        fatal = next((e for e in errors if isinstance(_unwrap(e), RankFailure)), None)
        if fatal is not None:
            self._fail(_unwrap(fatal))
            raise _unwrap(fatal) from None
        first = next((e for e in errors if not isinstance(e, _Peer)), errors[0])
        if isinstance(first, BaseException) and not isinstance(first, Exception):
            raise first  # KeyboardInterrupt on rank 0: the ranks stopped with it
        raise _unwrap(first) from None

    def _fail(self, err: RankFailure) -> None:
        """A rank is lost: the connection ends (every rank process goes, now)."""
        if self._broken is None:
            self._broken = err
            self.world.shutdown(0)
            self._finalizer()

    def _check_open(self) -> None:
        if self._broken is not None:
            raise RankFailure(
                f"this connection has ended ({self._broken}); open a new connection to run queries again",
                self._broken.rank,
            )
        if self._closed:
            raise GlintError("the connection is closed")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._broken is None:
                try:
                    seq = self.world.post(Reset() if self._torchrun else Close())
                    self.world.closing = True
                    self.world.collect(seq, timeout=min(self.world.timeout, 10))
                except (RankFailure, GlintError):
                    pass
        finally:
            self._finalizer()
            self._restore_threads()
            Connection.close(self)

    def _restore_threads(self) -> None:
        if self._threads is not None:
            torch.set_num_threads(self._threads)
            self._threads = None


class _Peer:
    """An error a rank raised only because another rank's query failed."""

    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error


def _unwrap(e):
    return e.error if isinstance(e, _Peer) else e


def _aborted_by_peer(reply) -> bool:
    return reply.peer is not None


def _shutdown(world, comm, torchrun: bool) -> None:
    """Ends what a connection holds of its ranks, also when it is dropped
    without close(): the rank processes are told to leave, then waited for."""
    if torchrun:
        return
    if not world.closed and not world.closing:
        try:
            world.post(Close())
        except Exception:  # noqa: BLE001 - the store is gone: the ranks leave with it
            pass
    comm.close()
    world.shutdown(10.0)


def _append_shares(data, part: TablePartitioning, schema: dict, ranks: int) -> list:
    """Each rank's rows of an INSERT into a table partitioned as ``part``."""
    import pyarrow as pa

    if part.kind == "replicated":
        return [data] * ranks
    if part.kind == "hash":
        key = Column.from_arrow(data.column(part.key), schema[part.key])
        dest = partition_of(hash_columns([key]), ranks).numpy()
        return [data.filter(pa.array(dest == r)) for r in range(ranks)]
    cuts = assign([data.num_rows], ranks)
    return [data.slice(c[0][1], c[0][2] - c[0][1]) if c else data.slice(0, 0) for c in cuts]


def _summed_io(rank_stats: list[dict]) -> IOStats:
    io = IOStats()
    for r in rank_stats:
        for k, v in (r.get("io") or {}).items():
            setattr(io, k, getattr(io, k) + v)
    return io


__all__ = ["DistConnection"]
