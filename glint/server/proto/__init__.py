"""Flight SQL's protobuf messages as glint's own definitions:
``flight_sql.proto`` (Flight SQL's commands, actions and results) and
``flight.proto`` (the few messages of Flight itself the server decodes: the
CancelFlightInfo and CloseSession actions), with the names, field numbers and
types of the published FlightSql.proto and Flight.proto. Their Python modules
(``*_pb2.py``) are generated and committed; they need protobuf 6.31.1 or newer
at run time (the version of the protoc that made them). After changing a
.proto file, from the repository root, with grpcio-tools 1.74 (protoc 31.1)::

    python -m grpc_tools.protoc -I. --python_out=. \\
        glint/server/proto/flight_sql.proto glint/server/proto/flight.proto

>>> from glint.server.proto import flight_sql_pb2 as sql
>>> sql.CommandStatementQuery(query="SELECT 42").DESCRIPTOR.full_name
'arrow.flight.protocol.sql.CommandStatementQuery'
"""
