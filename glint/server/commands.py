"""Flight SQL's commands on the wire: each is a ``google.protobuf.Any``
holding one of Flight SQL's messages (glint.server.proto), in a
FlightDescriptor's ``cmd``, a Ticket, or an action's body.

>>> from glint.server.proto import flight_sql_pb2 as sql
>>> unpack(pack(sql.CommandStatementQuery(query="SELECT 42"))).query
'SELECT 42'
>>> unpack(b"nonsense")
Traceback (most recent call last):
...
glint.server.commands.BadCommand: the request is not a Flight SQL command (a protobuf Any)
"""

from __future__ import annotations

from google.protobuf import any_pb2
from google.protobuf.message import DecodeError

from glint.server.proto import flight_sql_pb2 as sql

# every message a client may send as a command, ticket or action body
_MESSAGES = (
    sql.CommandGetSqlInfo,
    sql.CommandGetXdbcTypeInfo,
    sql.CommandGetCatalogs,
    sql.CommandGetDbSchemas,
    sql.CommandGetTables,
    sql.CommandGetTableTypes,
    sql.CommandGetPrimaryKeys,
    sql.CommandGetExportedKeys,
    sql.CommandGetImportedKeys,
    sql.CommandGetCrossReference,
    sql.CommandStatementQuery,
    sql.CommandStatementSubstraitPlan,
    sql.CommandPreparedStatementQuery,
    sql.CommandStatementUpdate,
    sql.CommandPreparedStatementUpdate,
    sql.CommandStatementIngest,
    sql.TicketStatementQuery,
    sql.ActionCreatePreparedStatementRequest,
    sql.ActionCreatePreparedSubstraitPlanRequest,
    sql.ActionClosePreparedStatementRequest,
    sql.ActionBeginTransactionRequest,
    sql.ActionBeginSavepointRequest,
    sql.ActionEndTransactionRequest,
    sql.ActionEndSavepointRequest,
    sql.ActionCancelQueryRequest,
)
_BY_NAME = {m.DESCRIPTOR.full_name: m for m in _MESSAGES}


class BadCommand(ValueError):
    """Bytes that are not one of Flight SQL's messages (INVALID_ARGUMENT)."""


def pack(message) -> bytes:
    """A message as the bytes of a google.protobuf.Any holding it."""
    a = any_pb2.Any()
    a.Pack(message)
    return a.SerializeToString()


def unpack(data: bytes):
    """The Flight SQL message in ``data`` (a serialized Any)."""
    a = any_pb2.Any()
    try:
        a.ParseFromString(bytes(data))
    except DecodeError:
        raise BadCommand("the request is not a Flight SQL command (a protobuf Any)") from None
    if not a.type_url:
        raise BadCommand("the request is not a Flight SQL command (a protobuf Any)")
    name = a.type_url.rsplit("/", 1)[-1]
    cls = _BY_NAME.get(name)
    if cls is None:
        raise BadCommand(f"unknown Flight SQL command {name}")
    message = cls()
    if not a.Unpack(message):
        raise BadCommand(f"cannot decode the Flight SQL command {name}")
    return message
