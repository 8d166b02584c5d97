"""glint as an Arrow Flight SQL server (``glint serve``): clients such as
ADBC's Flight SQL driver, JDBC (DBeaver) and pyarrow.flight run SQL on one
shared connection, each in its own session. See docs/server.md.

- :mod:`glint.server.flight`: the Flight RPCs and authentication
- :mod:`glint.server.execution`: planning, running and streaming statements
- :mod:`glint.server.clients`: the clients' sessions and prepared statements
- :mod:`glint.server.admission`: queries admitted to the device under its memory budget
- :mod:`glint.server.queries`: the log line of each query and the glint_queries table
- :mod:`glint.server.metadata`: the catalog requests (GetTables, GetSqlInfo, ...)
- :mod:`glint.server.commands`, :mod:`glint.server.proto`: Flight SQL's protobuf messages
- :mod:`glint.server.errors`: glint's errors as Flight statuses
"""
