"""glint's Arrow Flight SQL server: the Flight RPCs (pyarrow.flight) over the
clients' sessions of one shared connection.

- GetFlightInfo plans a statement (or prepares a catalog request) and answers
  with one endpoint whose ticket the client reads with DoGet; GetSchema gives
  a statement's schema without running it.
- DoGet runs a planned query, admitted to the device under its memory budget,
  and streams it; a catalog request's answer is made then.
- DoPut runs updates and DDL (CommandStatementUpdate), binds a prepared
  statement's parameters (CommandPreparedStatementQuery) or runs it as an
  update, and ingests record batches into a table (CommandStatementIngest).
- DoAction creates and closes prepared statements, cancels a query
  (CancelFlightInfo, and Flight SQL's older CancelQuery) and closes a session
  (CloseSession).

Every call needs the server's token when it has one: ``authorization:
Bearer TOKEN``, or HTTP basic authentication with the token as the password
(JDBC's user and password), answered with the bearer header.
"""

from __future__ import annotations

import base64
import hmac
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.flight as flight

from glint.errors import NotSupported
from glint.server import metadata as meta
from glint.server.admission import Admission
from glint.server.clients import COOKIE, SessionRegistry
from glint.server.commands import BadCommand, pack, unpack
from glint.server.errors import as_flight_errors, flight_error, short_details
from glint.server.execution import Executor
from glint.server.proto import flight_pb2 as fpb
from glint.server.proto import flight_sql_pb2 as sql
from glint.server.queries import QueryLog

_METADATA = (
    sql.CommandGetSqlInfo,
    sql.CommandGetCatalogs,
    sql.CommandGetDbSchemas,
    sql.CommandGetTables,
    sql.CommandGetTableTypes,
    sql.CommandGetPrimaryKeys,
    sql.CommandGetExportedKeys,
    sql.CommandGetImportedKeys,
    sql.CommandGetCrossReference,
    sql.CommandGetXdbcTypeInfo,
)
_ACTIONS = [
    ("CreatePreparedStatement", "prepare a statement (Flight SQL)"),
    ("ClosePreparedStatement", "close a prepared statement (Flight SQL)"),
    ("CancelFlightInfo", "cancel the query a FlightInfo is for"),
    ("CancelQuery", "cancel a query (Flight SQL, before CancelFlightInfo)"),
    ("CloseSession", "close the client's session: its temporary tables, settings and prepared statements"),
]
_MEMORY_SCHEMA = pa.schema(
    [("device", pa.string())]
    + [
        (n, pa.int64())
        for n in ("memory_limit", "in_use", "reserved", "table_cache", "admitted", "running", "queued", "sessions")
    ]
)
_UNSUPPORTED_ACTIONS = {
    "BeginTransaction": "transactions",
    "EndTransaction": "transactions",
    "BeginSavepoint": "savepoints",
    "EndSavepoint": "savepoints",
    "CreatePreparedSubstraitPlan": "Substrait plans",
}


@dataclass
class ServerOptions:
    """How the server treats its clients (``glint serve``'s options)."""

    token: str | None = None  # None: no authentication (loopback only, see glint.cli.serve)
    max_client_queries: int | None = 4  # a client's queries running at once
    query_timeout: float | None = None  # seconds a statement may run, queued time included
    max_running: int | None = None  # queries on the device at once (None: as many as the memory budget admits)
    session_idle_s: float = 3600.0  # a client's session is closed after this long without a call
    max_batch_bytes: int = 4 << 20  # the largest record batch sent (gRPC clients cap a message's size)


# ------------------------------------------------------------------ authentication
class _CallState(flight.ServerMiddleware):
    """One call's session cookie (as sent, and to set) and the bearer header
    to answer a basic authentication with."""

    def __init__(self, cookie: str | None, bearer: str | None):
        self.cookie = cookie
        self.set_cookie: str | None = None
        self.bearer = bearer

    def sending_headers(self):
        headers = {}
        if self.bearer is not None:
            headers["authorization"] = f"Bearer {self.bearer}"
        if self.set_cookie is not None:
            headers["set-cookie"] = f"{COOKIE}={self.set_cookie}"
        return headers


def _header(headers: dict, name: str) -> str | None:
    values = headers.get(name) or []
    if not values:
        return None
    v = values[0]
    return v.decode("latin-1") if isinstance(v, bytes) else str(v)


def _cookie(headers: dict) -> str | None:
    for value in headers.get("cookie") or []:
        value = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        for part in value.split(";"):
            k, _, v = part.strip().partition("=")
            if k == COOKIE and v:
                return v
    return None


class _Auth(flight.ServerMiddlewareFactory):
    def __init__(self, token: str | None):
        self.token = token

    def _valid(self, given: str) -> bool:
        return hmac.compare_digest(given.encode(), self.token.encode())

    def start_call(self, info, headers):
        bearer = None
        if self.token is not None:
            auth = _header(headers, "authorization") or ""
            scheme, _, value = auth.partition(" ")
            if scheme.lower() == "bearer" and self._valid(value.strip()):
                pass
            elif scheme.lower() == "basic" and self._valid(_basic_password(value)):
                bearer = self.token
            else:
                what = "a wrong token" if auth else "no token"
                raise flight.FlightUnauthenticatedError(
                    f"the glint server refused a call with {what}: send the header 'authorization: Bearer TOKEN' "
                    "(ADBC: db_kwargs={'adbc.flight.sql.authorization_header': 'Bearer TOKEN'}; "
                    "JDBC: ?token=TOKEN)"
                )
        return _CallState(_cookie(headers), bearer)


class _Handshake(flight.ServerAuthHandler):
    """Flight's Handshake RPC, which JDBC and ``authenticate_basic_token``
    call with basic authentication: the middleware has checked the call's
    header (and answers it with the bearer token), so the handshake itself
    accepts; and every call is the middleware's to check."""

    def authenticate(self, outgoing, incoming):
        # read to the end of the client's side first: a handshake that returned at once could end
        # the call before the client closed its side ("Could not finish writing before closing")
        while True:
            try:
                incoming.read()
            except Exception:  # noqa: BLE001 - the end of the client's messages (an IOError status)
                return

    def is_valid(self, token):
        return ""


def _basic_password(value: str) -> str:
    try:
        text = base64.b64decode(value.strip(), validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        return ""
    return text.partition(":")[2]


# ------------------------------------------------------------------ the server
class GlintFlightServer(flight.FlightServerBase):
    """A Flight SQL server over connection ``con`` (its tables are the shared
    catalog; each client gets a session of it). ``location``: e.g.
    "grpc://127.0.0.1:31337", or "grpc+tls://..." with ``tls_certificates``
    [(cert PEM, key PEM)]; port 0 picks a free one (``.port``)."""

    def __init__(self, con, location: str, options: ServerOptions | None = None, tls_certificates=None):
        self.con = con
        self.options = options or ServerOptions()
        o = self.options
        self.queries = QueryLog()
        # a distributed connection's ranks run one plan at a time
        max_running = 1 if getattr(con, "ranks", None) is not None else o.max_running
        self.admission = Admission(con.memory.limit, max_running)
        self.executor = Executor(
            con, self.queries, self.admission, time_limit=o.query_timeout, max_batch_bytes=o.max_batch_bytes
        )
        # (before any session: they copy the list)
        con.system_tables["glint_queries"] = self.queries.table
        con.system_tables["glint_memory"] = self.memory_table
        self.sessions = SessionRegistry(con, o.max_client_queries, o.session_idle_s)
        short_details()
        certs = [flight.CertKeyPair(cert=c, key=k) for c, k in tls_certificates or []]
        super().__init__(
            location, auth_handler=_Handshake(), tls_certificates=certs or None, middleware={"glint": _Auth(o.token)}
        )

    def memory_table(self) -> pa.Table:
        """The ``glint_memory`` system table: the device's budget and where it
        is (bytes), and the queries on the device and waiting for it."""
        m = self.con.memory
        row = {
            "device": str(self.con.device),
            "memory_limit": m.limit,
            "in_use": m.used(),
            "reserved": m.reserved(),
            "table_cache": m.cache_bytes(),
            "admitted": self.admission.in_use,
            "running": self.admission.running,
            "queued": self.admission.waiting(),
            "sessions": len(self.sessions.sessions()),
        }
        return pa.Table.from_pylist([row], schema=_MEMORY_SCHEMA)

    # ------------------------------------------------------------ helpers
    def _session(self, context):
        state = context.get_middleware("glint")
        session, _ = self.sessions.get(state.cookie if state else None, context.peer())
        if state is not None and state.cookie != session.id:
            state.set_cookie = session.id
        return session

    @staticmethod
    def _command(descriptor):
        if descriptor.descriptor_type != flight.DescriptorType.CMD:
            raise BadCommand("glint's Flight SQL server takes commands (a FlightDescriptor of type CMD), not paths")
        return unpack(descriptor.command)

    @staticmethod
    def _prepared(session, handle: bytes):
        ps = session.prepared.get(bytes(handle))
        if ps is None:
            raise BadCommand("unknown prepared statement handle (closed, or made by another client's session)")
        return ps

    @staticmethod
    def _info(descriptor, schema: pa.Schema, ticket: bytes) -> flight.FlightInfo:
        return flight.FlightInfo(schema, descriptor, [flight.FlightEndpoint(ticket, [])], -1, -1)

    def _metadata_schema(self, cmd) -> pa.Schema:
        if isinstance(cmd, sql.CommandGetTables):
            return meta.TABLES_WITH_SCHEMA_SCHEMA if cmd.include_schema else meta.TABLES_SCHEMA
        return self._metadata(None, cmd, schema_only=True)

    def _metadata(self, session, cmd, schema_only: bool = False):
        timeout_ms = int((self.options.query_timeout or 0) * 1000)
        makers = {
            sql.CommandGetSqlInfo: (meta.SQL_INFO_SCHEMA, lambda: meta.sql_info_table(cmd.info, timeout_ms)),
            sql.CommandGetCatalogs: (meta.CATALOGS_SCHEMA, meta.catalogs_table),
            sql.CommandGetDbSchemas: (meta.DB_SCHEMAS_SCHEMA, lambda: meta.db_schemas_table(cmd)),
            sql.CommandGetTables: (None, lambda: meta.tables_table(session.con, cmd)),
            sql.CommandGetTableTypes: (meta.TABLE_TYPES_SCHEMA, meta.table_types_table),
            sql.CommandGetPrimaryKeys: (meta.PRIMARY_KEYS_SCHEMA, meta.primary_keys_table),
            sql.CommandGetExportedKeys: (meta.FOREIGN_KEYS_SCHEMA, meta.foreign_keys_table),
            sql.CommandGetImportedKeys: (meta.FOREIGN_KEYS_SCHEMA, meta.foreign_keys_table),
            sql.CommandGetCrossReference: (meta.FOREIGN_KEYS_SCHEMA, meta.foreign_keys_table),
            sql.CommandGetXdbcTypeInfo: (meta.XDBC_TYPE_INFO_SCHEMA, lambda: meta.xdbc_type_info_table(cmd)),
        }
        schema, make = makers[type(cmd)]
        return schema if schema_only else make()

    # ------------------------------------------------------------ RPCs
    def get_flight_info(self, context, descriptor):
        with as_flight_errors():
            session = self._session(context)
            cmd = self._command(descriptor)
            if isinstance(cmd, sql.CommandStatementQuery):
                pending = self.executor.plan(session, cmd.query)
            elif isinstance(cmd, sql.CommandPreparedStatementQuery):
                ps = self._prepared(session, cmd.prepared_statement_handle)
                planned, ps.planned = ps.planned, None
                pending = self.executor.plan(session, ps.query, ps.bound, planned)
            elif isinstance(cmd, _METADATA):
                return self._info(descriptor, self._metadata_schema(cmd), descriptor.command)
            elif isinstance(cmd, sql.CommandStatementSubstraitPlan):
                raise NotSupported("Substrait plans")
            else:
                raise BadCommand(f"{cmd.DESCRIPTOR.name} is not a command for GetFlightInfo")
            ticket = pack(sql.TicketStatementQuery(statement_handle=pending.handle))
            return self._info(descriptor, pending.schema, ticket)

    def get_schema(self, context, descriptor):
        with as_flight_errors():
            session = self._session(context)
            cmd = self._command(descriptor)
            if isinstance(cmd, sql.CommandStatementQuery):
                schema = self.executor.schema_of(session, cmd.query)
            elif isinstance(cmd, sql.CommandPreparedStatementQuery):
                schema = self._prepared(session, cmd.prepared_statement_handle).dataset_schema
            elif isinstance(cmd, _METADATA):
                schema = self._metadata_schema(cmd)
            else:
                raise BadCommand(f"{cmd.DESCRIPTOR.name} is not a command for GetSchema")
            return flight.SchemaResult(schema)

    def do_get(self, context, ticket):
        with as_flight_errors():
            session = self._session(context)
            cmd = unpack(ticket.ticket)
            if isinstance(cmd, sql.TicketStatementQuery):
                pending = self.executor.take(cmd.statement_handle)
                batches = self.executor.stream(pending, context.is_cancelled)
                return flight.GeneratorStream(pending.schema, _flight_errors(batches))
            if isinstance(cmd, _METADATA):
                return flight.RecordBatchStream(self._metadata(session, cmd))
            raise BadCommand(f"{cmd.DESCRIPTOR.name} is not a ticket")

    def do_put(self, context, descriptor, reader, writer):
        with as_flight_errors():
            session = self._session(context)
            cmd = self._command(descriptor)
            if isinstance(cmd, sql.CommandStatementUpdate):
                n = self.executor.update(session, cmd.query)
                writer.write(pa.py_buffer(sql.DoPutUpdateResult(record_count=n).SerializeToString()))
            elif isinstance(cmd, sql.CommandPreparedStatementQuery):
                ps = self._prepared(session, cmd.prepared_statement_handle)
                ps.bound = self.executor.parameter_rows(ps, reader.read_all())
                result = sql.DoPutPreparedStatementResult(prepared_statement_handle=ps.handle)
                writer.write(pa.py_buffer(result.SerializeToString()))
            elif isinstance(cmd, sql.CommandPreparedStatementUpdate):
                ps = self._prepared(session, cmd.prepared_statement_handle)
                data = reader.read_all()
                rows = self.executor.parameter_rows(ps, data) if data.num_columns else ps.bound
                n = self.executor.update(session, ps.query, rows)
                writer.write(pa.py_buffer(sql.DoPutUpdateResult(record_count=n).SerializeToString()))
            elif isinstance(cmd, sql.CommandStatementIngest):
                n = self.executor.ingest(session, cmd, reader.read_all())
                writer.write(pa.py_buffer(sql.DoPutUpdateResult(record_count=n).SerializeToString()))
            elif isinstance(cmd, sql.CommandStatementSubstraitPlan):
                raise NotSupported("Substrait plans")
            else:
                raise BadCommand(f"{cmd.DESCRIPTOR.name} is not a command for DoPut")

    def do_action(self, context, action):
        with as_flight_errors():
            session = self._session(context)
            kind, body = action.type, action.body.to_pybytes() if action.body is not None else b""
            if kind == "CreatePreparedStatement":
                req = unpack(body)
                ps = self.executor.prepare(session, req.query)
                result = sql.ActionCreatePreparedStatementResult(
                    prepared_statement_handle=ps.handle,
                    dataset_schema=ps.dataset_schema.serialize().to_pybytes(),
                    parameter_schema=ps.parameter_schema.serialize().to_pybytes(),
                )
                return [flight.Result(pack(result))]
            if kind == "ClosePreparedStatement":
                session.prepared.pop(bytes(unpack(body).prepared_statement_handle), None)
                return []
            if kind == "CancelFlightInfo":
                status = self._cancel(fpb.CancelFlightInfoRequest.FromString(body).info)
                return [flight.Result(fpb.CancelFlightInfoResult(status=status).SerializeToString())]
            if kind == "CancelQuery":
                status = self._cancel(fpb.FlightInfo.FromString(unpack(body).info))
                return [flight.Result(pack(sql.ActionCancelQueryResult(result=status)))]
            if kind == "CloseSession":
                self.sessions.close(session)
                closed = fpb.CloseSessionResult(status=fpb.CloseSessionResult.CLOSED)
                return [flight.Result(closed.SerializeToString())]
            if kind in _UNSUPPORTED_ACTIONS:
                raise NotSupported(_UNSUPPORTED_ACTIONS[kind])
            raise NotSupported(f"the Flight action {kind!r}")

    def _cancel(self, info) -> int:
        """Cancels the statements of a FlightInfo's endpoints; the status
        (CancelStatus, whose numbers CancelQuery's result shares)."""
        cancelled = False
        for endpoint in info.endpoint:
            try:
                cmd = unpack(endpoint.ticket.ticket)
            except BadCommand:
                continue
            if isinstance(cmd, sql.TicketStatementQuery):
                cancelled |= self.executor.cancel(bytes(cmd.statement_handle))
        return fpb.CANCEL_STATUS_CANCELLED if cancelled else fpb.CANCEL_STATUS_NOT_CANCELLABLE

    def list_actions(self, context):
        return list(_ACTIONS)

    def list_flights(self, context, criteria):
        return iter(())


def _flight_errors(batches):
    """A stream's batches, its errors raised as their Flight statuses."""
    try:
        yield from batches
    except Exception as e:  # noqa: BLE001 - every error gets a status
        raise flight_error(e) from None
