"""Running the clients' statements on the shared connection's sessions.

- A query is planned when the client asks for it (GetFlightInfo: on the
  CPU, beside other clients' planning), and kept under a handle until the
  client reads it (DoGet): then it is admitted to the device under the memory
  budget (glint.server.admission) and streamed chunk by chunk (Result.stream),
  each chunk cut into record batches of at most ``max_batch_bytes``.
- Other statements (DDL, INSERT, COPY...) run when they are sent, admitted the
  same way; a client reading them gets their answer (DuckDB's ``Count``).
- Bulk ingest (CommandStatementIngest) makes or appends to a table from the
  client's record batches.

Every statement has a QueryRecord (glint.server.queries): its log line, its
row in glint_queries, its cancellation and time limit.
"""

from __future__ import annotations

import secrets
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass, field

import pyarrow as pa

from glint.columnar import types as T
from glint.columnar.column import timestamp_micros
from glint.engine.result import Result
from glint.errors import BinderError, Cancelled, CatalogError, GlintError
from glint.io.appended import conform
from glint.server.admission import Admission, query_memory, reads_only_system_tables, working_memory
from glint.server.clients import ClientSession, PreparedStatement
from glint.server.metadata import CATALOG, SCHEMA
from glint.server.proto import flight_sql_pb2 as sql
from glint.server.queries import RUNNING, QueryLog, QueryRecord

_Ingest = sql.CommandStatementIngest.TableDefinitionOptions


@dataclass(eq=False)
class Pending:
    """A statement planned for a client, read by the DoGet of its handle: the
    results to give one after another (a query, or one per parameter row)."""

    handle: bytes
    session: ClientSession
    record: QueryRecord
    results: list
    schema: pa.Schema
    created: float = field(default_factory=time.monotonic)


class Executor:
    """Runs statements for the server's sessions; holds the pending ones."""

    def __init__(
        self,
        shared,
        queries: QueryLog,
        admission: Admission,
        *,
        time_limit: float | None = None,
        max_batch_bytes: int = 4 << 20,
        pending_s: float = 600.0,
    ):
        self.shared = shared
        self.queries = queries
        self.admission = admission
        self.time_limit = time_limit
        self.max_batch_bytes = max_batch_bytes
        self.pending_s = pending_s
        self._pending: dict[bytes, Pending] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------ records
    def _record(self, session: ClientSession, text: str, kind: str) -> QueryRecord:
        return self.queries.start(session.name, text, kind, self.time_limit, self.shared.memory)

    def _run_now(self, session: ClientSession, record: QueryRecord, stmt):
        """A statement that runs when sent (not a query): in a query slot of
        the client, admitted to the device, interruptible."""
        con = session.con
        with session.query_slot(), self.admission.admit(working_memory(con), record.interrupt):
            record.started = record.started or time.perf_counter()
            record.state = RUNNING
            record.interrupt()
            return con.run_parsed(stmt)

    # ------------------------------------------------------------ queries
    def plan(self, session: ClientSession, text: str, rows: list | None = None, planned=None) -> Pending:
        """The statement(s) of ``text`` for a later DoGet: the last, when a
        query, planned; the others run now (with each parameter row of
        ``rows`` in turn: one result per row). ``planned``: the query's plan
        already made (a prepared statement's, for its first execution)."""
        self.expire()
        record = self._record(session, text, "query")
        try:
            results = [planned] if planned is not None else []
            for params in (rows if rows is not None else [None]) if planned is None else []:
                results.append(self._plan_one(session, record, text, params))
            schema = results[0].schema if results else pa.schema([])
        except BaseException as e:
            self.queries.finish(record, error=e)
            raise
        pending = Pending(secrets.token_bytes(16), session, record, results, schema)
        with self._lock:
            self._pending[pending.handle] = pending
        return pending

    def _plan_one(self, session: ClientSession, record: QueryRecord, text: str, params) -> Result:
        con = session.con
        stmts = con.parse(text, params)
        out = None
        for i, stmt in enumerate(stmts):
            if i == len(stmts) - 1 and con.is_query(stmt):
                return con.run_parsed(stmt)
            out = self._run_now(session, record, stmt)
        return out if out is not None else Result.from_arrow(con, pa.table({}))

    def schema_of(self, session: ClientSession, text: str) -> pa.Schema:
        """The schema of a query's result, planned but not run (GetSchema);
        a statement that is not a query has none."""
        stmts = session.con.parse(text)
        if not stmts or not session.con.is_query(stmts[-1]):
            return pa.schema([])
        return session.con.run_parsed(stmts[-1]).schema

    def take(self, handle: bytes) -> Pending:
        with self._lock:
            pending = self._pending.pop(handle, None)
        if pending is None:
            raise GlintError("unknown or already read statement handle (a ticket is read once, within 10 minutes)")
        return pending

    def cancel(self, handle: bytes) -> bool:
        """Cancels a pending or streaming statement; False when unknown or over."""
        with self._lock:
            pending = self._pending.pop(handle, None)
        if pending is not None:
            pending.record.cancel()
            self.queries.finish(pending.record, error=Cancelled("the query was cancelled before it was read"))
            return True
        for r in self.queries.running():
            if getattr(r, "handle", None) == handle:
                return r.cancel()
        return False

    def expire(self) -> None:
        """Drops the pending statements no client read in ``pending_s`` seconds."""
        now = time.monotonic()
        with self._lock:
            old = [p for p in self._pending.values() if now - p.created > self.pending_s]
            for p in old:
                del self._pending[p.handle]
        for p in old:
            self.queries.finish(p.record, error=Cancelled("the query's result was never read"))

    def stream(self, pending: Pending, client_gone=None):
        """The pending statement's result as record batches (a generator:
        nothing runs before the first is asked for)."""
        record = pending.record
        record.handle = pending.handle
        record.client_gone = client_gone
        session, con = pending.session, pending.session.con
        error = None
        try:
            with session.query_slot():
                need = max((query_memory(con, r) for r in pending.results), default=0)
                observer = all(reads_only_system_tables(con, r) for r in pending.results)
                with nullcontext() if observer else self.admission.admit(need, record.interrupt):
                    record.started = time.perf_counter()
                    record.state = RUNNING
                    for res in pending.results:
                        res.interrupt = record.interrupt
                        for t in res.stream():
                            if not t.schema.equals(pending.schema):
                                t = t.cast(pending.schema)
                            record.rows += t.num_rows
                            record.bytes += t.nbytes
                            yield from _message_sized(t, self.max_batch_bytes)
        except GeneratorExit:
            error = Cancelled("the query was cancelled: its client stopped reading")
            raise
        except BaseException as e:
            error = e
            raise
        finally:
            self.queries.finish(record, error=error)

    # ------------------------------------------------------------ updates
    def update(self, session: ClientSession, text: str, rows: list | None = None) -> int:
        """Runs a statement sent as an update (DoPut), once per parameter
        row: the rows it changed (its Count; -1 for a statement without one)."""
        record = self._record(session, text, "update")
        con = session.con
        total, known = 0, False
        try:
            for params in rows if rows is not None else [None]:
                for stmt in con.parse(text, params):
                    if con.is_query(stmt):  # a query sent as an update: run, its rows counted
                        res = con.run_parsed(stmt)
                        res.interrupt = record.interrupt
                        with session.query_slot(), self.admission.admit(query_memory(con, res), record.interrupt):
                            record.state = RUNNING
                            total += sum(t.num_rows for t in res.stream())
                        known = True
                        continue
                    out = self._run_now(session, record, stmt)
                    t = out.arrow() if out is not None else None
                    if t is not None and t.column_names == ["Count"] and t.num_rows == 1:
                        total, known = total + int(t.column(0)[0].as_py()), True
        except BaseException as e:
            self.queries.finish(record, error=e)
            raise
        self.queries.finish(record, rows=total)
        return total if known else -1

    # ------------------------------------------------------------ prepared statements
    def prepare(self, session: ClientSession, text: str) -> PreparedStatement:
        """A prepared statement: its parameters, and its result's schema as
        planned with every parameter NULL (a guess where a parameter's type
        decides a column's; empty when that does not plan, or for a
        statement that is not a query)."""
        con = session.con
        names = con.parameters(text)
        stmts = con.parse(text, {n: None for n in names} if names else None)
        schema, planned = pa.schema([]), None
        if stmts and con.is_query(stmts[-1]):
            try:
                planned = con.run_parsed(stmts[-1])
                schema = planned.schema
            except GlintError:
                pass
        params = pa.schema([pa.field(n, pa.null()) for n in names])
        ps = PreparedStatement(secrets.token_bytes(16), text, names, schema, params)
        # (a statement without parameters runs its plan the first time: clients such as ADBC prepare every query)
        ps.planned = planned if not names and len(stmts) == 1 else None
        session.prepared[ps.handle] = ps
        return ps

    @staticmethod
    def parameter_rows(ps: PreparedStatement, data: pa.Table) -> list:
        """The parameter rows a client bound (its record batches): positional
        values in column order, or by name for a statement with named ones."""
        named = any(not n.isdigit() for n in ps.parameters)
        if data.num_columns == 0:
            return []
        if len(ps.parameters) != data.num_columns and not named:
            raise BinderError(f"the statement takes {len(ps.parameters)} parameters but {data.num_columns} were bound")
        rows = []
        for i in range(data.num_rows):
            values = [data.column(j)[i] for j in range(data.num_columns)]
            rows.append(dict(zip(data.column_names, values)) if named else values)
        return rows

    # ------------------------------------------------------------ ingest
    def ingest(self, session: ClientSession, cmd: sql.CommandStatementIngest, data: pa.Table) -> int:
        """Bulk ingest: ``data`` into table ``cmd.table``, made, appended to or
        replaced as the command's options say (temporary: the session's own)."""
        record = self._record(session, f"INGEST INTO {cmd.table}", "ingest")
        try:
            with session.query_slot():
                n = self._ingest(session.con, cmd, data)
        except BaseException as e:
            self.queries.finish(record, error=e)
            raise
        self.queries.finish(record, rows=n, nbytes=data.nbytes)
        return n

    def _ingest(self, con, cmd, data: pa.Table) -> int:
        if cmd.HasField("catalog") and cmd.catalog not in ("", CATALOG):
            raise CatalogError(f'Catalog "{cmd.catalog}" does not exist: tables are in "{CATALOG}"')
        if cmd.HasField("schema") and cmd.schema not in ("", SCHEMA):
            raise CatalogError(f'Schema "{cmd.schema}" does not exist: tables are in "{SCHEMA}"')
        if not cmd.table:
            raise BinderError("bulk ingest needs a table name")
        data, types = _ingestable(data)
        opts = cmd.table_definition_options
        exists = con.has_table(cmd.table)
        if exists and opts.if_exists == _Ingest.TABLE_EXISTS_OPTION_APPEND:
            target = con.table(cmd.table)
            con.append_rows(target.name, _matched(data, target))
        elif exists and opts.if_exists != _Ingest.TABLE_EXISTS_OPTION_REPLACE:
            raise CatalogError(f'Table with name "{cmd.table}" already exists!')
        elif not exists and opts.if_not_exist == _Ingest.TABLE_NOT_EXIST_OPTION_FAIL:
            raise CatalogError(f"Table with name {cmd.table} does not exist!")
        else:
            con.create_table(cmd.table, conform(data, types), types, temporary=cmd.temporary)
        return data.num_rows


def _ingestable(data: pa.Table) -> tuple[pa.Table, dict]:
    """Client data as a glint table's columns: dictionary-encoded text as
    text, timestamps of any unit in microseconds (truncated, as DuckDB
    casts), dates as date32; and the SQL types of the columns."""
    cols = []
    for col in data.columns:
        t = col.type
        if pa.types.is_dictionary(t):
            col = col.cast(t.value_type)
        elif pa.types.is_timestamp(t) and t.unit != "us" and t.tz is None:
            col = pa.chunked_array(
                [timestamp_micros(c).view(pa.timestamp("us")) for c in col.chunks], type=pa.timestamp("us")
            )
        elif pa.types.is_date64(t):
            col = col.cast(pa.date32())
        cols.append(col)
    data = pa.Table.from_arrays(cols, names=data.column_names)
    types = {name: T.from_arrow(c.type) for name, c in zip(data.column_names, data.columns)}
    types = {n: (T.INTEGER if t.kind == "NULL" else t) for n, t in types.items()}
    return data, types


def _matched(data: pa.Table, target) -> pa.Table:
    """Ingested rows in an existing table's columns (matched by name, any
    case) and types."""
    by_name = {n.lower(): i for i, n in enumerate(data.column_names)}
    missing = [c for c in target.schema if c.lower() not in by_name]
    extra = [n for n in data.column_names if n.lower() not in {c.lower() for c in target.schema}]
    if missing or extra:
        raise BinderError(
            f"the ingested columns do not match table {target.name}'s: "
            + "; ".join(
                p
                for p in (
                    f"missing {', '.join(missing)}" if missing else "",
                    f"not in the table {', '.join(extra)}" if extra else "",
                )
                if p
            )
        )
    ordered = pa.Table.from_arrays([data.column(by_name[c.lower()]) for c in target.schema], names=list(target.schema))
    return conform(ordered, dict(target.schema))


def _message_sized(t: pa.Table, max_bytes: int):
    """``t``'s record batches, each cut to at most ``max_bytes`` (gRPC
    clients cap a message's size; ADBC's Flight SQL driver at 16 MiB)."""
    for b in t.to_batches():
        if b.nbytes <= max_bytes or b.num_rows < 2:
            yield b
            continue
        step = max(1, b.num_rows * max_bytes // b.nbytes)
        for start in range(0, b.num_rows, step):
            yield b.slice(start, step)
