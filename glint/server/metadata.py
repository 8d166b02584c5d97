"""Flight SQL's catalog requests answered from a connection's catalog:
GetSqlInfo, GetCatalogs, GetDbSchemas, GetTables, GetTableTypes,
GetPrimaryKeys (and the foreign-key requests: glint has no keys, so their
answers are empty), GetXdbcTypeInfo. Each answer is an Arrow table in the
schema FlightSql.proto gives for it. Tables live where DuckDB keeps them: in
the catalog ``memory``, schema ``main`` (``SELECT * FROM memory.main.t``
works as ``FROM t``).

>>> tables = table_types_table()
>>> tables.column("table_type").to_pylist()
['LOCAL TEMPORARY', 'SYSTEM TABLE', 'TABLE', 'VIEW']
>>> like_pattern("line%").match("lineitem") is not None, like_pattern("o_ders").match("orders") is not None
(True, True)
"""

from __future__ import annotations

import re

import pyarrow as pa

from glint import __version__
from glint.columnar import types as T
from glint.functions.builtins import BUILTINS
from glint.functions.registry import SCALAR
from glint.server.proto import flight_sql_pb2 as sql

CATALOG = "memory"
SCHEMA = "main"
TABLE, VIEW, TEMPORARY, SYSTEM = "TABLE", "VIEW", "LOCAL TEMPORARY", "SYSTEM TABLE"

# ------------------------------------------------------------------ schemas (FlightSql.proto)
CATALOGS_SCHEMA = pa.schema([pa.field("catalog_name", pa.utf8(), nullable=False)])
DB_SCHEMAS_SCHEMA = pa.schema([pa.field("catalog_name", pa.utf8()), pa.field("db_schema_name", pa.utf8(), False)])
TABLES_SCHEMA = pa.schema(
    [
        pa.field("catalog_name", pa.utf8()),
        pa.field("db_schema_name", pa.utf8()),
        pa.field("table_name", pa.utf8(), False),
        pa.field("table_type", pa.utf8(), False),
    ]
)
TABLES_WITH_SCHEMA_SCHEMA = TABLES_SCHEMA.append(pa.field("table_schema", pa.binary(), False))
TABLE_TYPES_SCHEMA = pa.schema([pa.field("table_type", pa.utf8(), False)])
PRIMARY_KEYS_SCHEMA = pa.schema(
    [
        pa.field("catalog_name", pa.utf8()),
        pa.field("db_schema_name", pa.utf8()),
        pa.field("table_name", pa.utf8(), False),
        pa.field("column_name", pa.utf8(), False),
        pa.field("key_name", pa.utf8()),
        pa.field("key_sequence", pa.int32(), False),
    ]
)
FOREIGN_KEYS_SCHEMA = pa.schema(
    [
        pa.field("pk_catalog_name", pa.utf8()),
        pa.field("pk_db_schema_name", pa.utf8()),
        pa.field("pk_table_name", pa.utf8(), False),
        pa.field("pk_column_name", pa.utf8(), False),
        pa.field("fk_catalog_name", pa.utf8()),
        pa.field("fk_db_schema_name", pa.utf8()),
        pa.field("fk_table_name", pa.utf8(), False),
        pa.field("fk_column_name", pa.utf8(), False),
        pa.field("key_sequence", pa.int32(), False),
        pa.field("fk_key_name", pa.utf8()),
        pa.field("pk_key_name", pa.utf8()),
        pa.field("update_rule", pa.uint8(), False),
        pa.field("delete_rule", pa.uint8(), False),
    ]
)
_SQL_INFO_VALUE = pa.dense_union(
    [
        pa.field("string_value", pa.utf8()),
        pa.field("bool_value", pa.bool_()),
        pa.field("bigint_value", pa.int64()),
        pa.field("int32_bitmask", pa.int32()),
        pa.field("string_list", pa.list_(pa.field("string_data", pa.utf8()))),
        pa.field(
            "int32_to_int32_list_map",
            pa.map_(pa.int32(), pa.list_(pa.field("$data$", pa.int32()))),
        ),
    ],
    type_codes=[0, 1, 2, 3, 4, 5],
)
SQL_INFO_SCHEMA = pa.schema([pa.field("info_name", pa.uint32(), False), pa.field("value", _SQL_INFO_VALUE, False)])
XDBC_TYPE_INFO_SCHEMA = pa.schema(
    [
        pa.field("type_name", pa.utf8(), False),
        pa.field("data_type", pa.int32(), False),
        pa.field("column_size", pa.int32()),
        pa.field("literal_prefix", pa.utf8()),
        pa.field("literal_suffix", pa.utf8()),
        pa.field("create_params", pa.list_(pa.field("item", pa.utf8(), False))),
        pa.field("nullable", pa.int32(), False),
        pa.field("case_sensitive", pa.bool_(), False),
        pa.field("searchable", pa.int32(), False),
        pa.field("unsigned_attribute", pa.bool_()),
        pa.field("fixed_prec_scale", pa.bool_(), False),
        pa.field("auto_increment", pa.bool_()),
        pa.field("local_type_name", pa.utf8()),
        pa.field("minimum_scale", pa.int32()),
        pa.field("maximum_scale", pa.int32()),
        pa.field("sql_data_type", pa.int32(), False),
        pa.field("datetime_subcode", pa.int32()),
        pa.field("num_prec_radix", pa.int32()),
        pa.field("interval_precision", pa.int32()),
    ]
)


# ------------------------------------------------------------------ patterns
def like_pattern(pattern: str | None) -> re.Pattern:
    """A Flight SQL filter pattern (``%`` any text, ``_`` one character,
    ``\\`` escapes) as a regular expression over whole names."""
    if pattern is None:
        return re.compile(".*", re.S)
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z", re.S)


def _optional(msg, field: str):
    return getattr(msg, field) if msg.HasField(field) else None


# ------------------------------------------------------------------ catalogs, schemas, tables
def catalogs_table() -> pa.Table:
    return pa.Table.from_pylist([{"catalog_name": CATALOG}], schema=CATALOGS_SCHEMA)


def _catalog_matches(catalog: str | None) -> bool:
    return catalog is None or catalog == CATALOG


def db_schemas_table(cmd: sql.CommandGetDbSchemas) -> pa.Table:
    rows = []
    if _catalog_matches(_optional(cmd, "catalog")) and like_pattern(_optional(cmd, "db_schema_filter_pattern")).match(
        SCHEMA
    ):
        rows.append({"catalog_name": CATALOG, "db_schema_name": SCHEMA})
    return pa.Table.from_pylist(rows, schema=DB_SCHEMAS_SCHEMA)


def catalog_entries(con) -> list[tuple[str, str, object]]:
    """(name, table type, a function giving its Arrow schema) of what a
    session's SQL can read: tables, views, system tables; sorted by name."""
    temporary = set(getattr(con, "temporary_table_names", list)())
    out = []
    for name in con.table_names():
        kind = TEMPORARY if name in temporary else TABLE
        out.append((name, kind, lambda name=name: _table_schema(con, name)))
    for name in list(con._views):
        out.append((name, VIEW, lambda name=name: _query_schema(con, f'SELECT * FROM "{name}"')))
    for name in sorted(getattr(con, "system_tables", {})):
        if not con.has_table(name):
            out.append((name, SYSTEM, lambda name=name: con.system_tables[name]().schema))
    return sorted(out, key=lambda e: (e[0].lower(), e[1]))


def _table_schema(con, name: str) -> pa.Schema:
    t = con.table(name)
    return pa.schema([pa.field(c, T.to_arrow(ty)) for c, ty in t.schema.items()])


def _query_schema(con, query: str) -> pa.Schema:
    from glint.errors import GlintError

    try:
        return con.sql(query).schema
    except GlintError:
        return pa.schema([])  # a view that no longer binds (a table it reads was dropped)


def _with_type_names(schema: pa.Schema, table: str) -> pa.Schema:
    """Each field with Flight SQL's column metadata: its SQL type and table."""
    fields = []
    for f in schema:
        try:
            type_name = str(T.from_arrow(f.type))
        except Exception:  # noqa: BLE001 - a type glint does not name: Arrow's name
            type_name = str(f.type)
        meta = {
            "ARROW:FLIGHT:SQL:CATALOG_NAME": CATALOG,
            "ARROW:FLIGHT:SQL:DB_SCHEMA_NAME": SCHEMA,
            "ARROW:FLIGHT:SQL:TABLE_NAME": table,
            "ARROW:FLIGHT:SQL:TYPE_NAME": type_name,
        }
        fields.append(f.with_metadata(meta))
    return pa.schema(fields)


def tables_table(con, cmd: sql.CommandGetTables) -> pa.Table:
    rows = []
    schema_ok = like_pattern(_optional(cmd, "db_schema_filter_pattern")).match(SCHEMA)
    if _catalog_matches(_optional(cmd, "catalog")) and schema_ok:
        names = like_pattern(_optional(cmd, "table_name_filter_pattern"))
        types = {t.upper() for t in cmd.table_types}
        for name, kind, schema in catalog_entries(con):
            if not names.match(name) or (types and kind not in types):
                continue
            row = {"catalog_name": CATALOG, "db_schema_name": SCHEMA, "table_name": name, "table_type": kind}
            if cmd.include_schema:
                row["table_schema"] = _with_type_names(schema(), name).serialize().to_pybytes()
            rows.append(row)
    return pa.Table.from_pylist(rows, schema=TABLES_WITH_SCHEMA_SCHEMA if cmd.include_schema else TABLES_SCHEMA)


def table_types_table() -> pa.Table:
    return pa.Table.from_pylist(
        [{"table_type": t} for t in sorted((TABLE, VIEW, TEMPORARY, SYSTEM))], schema=TABLE_TYPES_SCHEMA
    )


def primary_keys_table() -> pa.Table:
    """glint's tables have no primary keys."""
    return PRIMARY_KEYS_SCHEMA.empty_table()


def foreign_keys_table() -> pa.Table:
    """... nor foreign keys."""
    return FOREIGN_KEYS_SCHEMA.empty_table()


# ------------------------------------------------------------------ SQL info
def _functions(*areas: str) -> list[str]:
    return sorted(
        {
            n
            for f in BUILTINS.functions(SCALAR)
            if f.area in areas and not f.internal
            for n in f.names
            if n.isidentifier()
        }
    )


def sql_info_values(statement_timeout_ms: int = 0) -> dict[int, tuple[int, object]]:
    """info id -> (the union member's index, the value) that GetSqlInfo reports."""
    import pyarrow

    S, B, I32, L = 0, 1, 3, 4  # the union's members (2, bigint_value, is not used)
    i = sql.SqlInfo
    return {
        i.FLIGHT_SQL_SERVER_NAME: (S, "glint"),
        i.FLIGHT_SQL_SERVER_VERSION: (S, __version__),
        i.FLIGHT_SQL_SERVER_ARROW_VERSION: (S, pyarrow.__version__),
        i.FLIGHT_SQL_SERVER_READ_ONLY: (B, False),
        i.FLIGHT_SQL_SERVER_SQL: (B, True),
        i.FLIGHT_SQL_SERVER_SUBSTRAIT: (B, False),
        i.FLIGHT_SQL_SERVER_TRANSACTION: (I32, sql.SQL_SUPPORTED_TRANSACTION_NONE),
        i.FLIGHT_SQL_SERVER_CANCEL: (B, True),
        i.FLIGHT_SQL_SERVER_BULK_INGESTION: (B, True),
        i.FLIGHT_SQL_SERVER_INGEST_TRANSACTIONS_SUPPORTED: (B, False),
        i.FLIGHT_SQL_SERVER_STATEMENT_TIMEOUT: (I32, int(statement_timeout_ms)),
        i.FLIGHT_SQL_SERVER_TRANSACTION_TIMEOUT: (I32, 0),
        i.SQL_DDL_CATALOG: (B, False),
        i.SQL_DDL_SCHEMA: (B, False),
        i.SQL_DDL_TABLE: (B, True),
        i.SQL_IDENTIFIER_CASE: (I32, sql.SQL_CASE_SENSITIVITY_CASE_INSENSITIVE),
        i.SQL_IDENTIFIER_QUOTE_CHAR: (S, '"'),
        i.SQL_QUOTED_IDENTIFIER_CASE: (I32, sql.SQL_CASE_SENSITIVITY_CASE_INSENSITIVE),
        i.SQL_ALL_TABLES_ARE_SELECTABLE: (B, True),
        i.SQL_NULL_ORDERING: (I32, sql.SQL_NULLS_SORTED_AT_END),
        i.SQL_NUMERIC_FUNCTIONS: (L, _functions("math")),
        i.SQL_STRING_FUNCTIONS: (L, _functions("strings")),
        i.SQL_DATETIME_FUNCTIONS: (L, _functions("dates")),
        i.SQL_SYSTEM_FUNCTIONS: (L, ["current_setting", "glint_settings"]),
        i.SQL_SEARCH_STRING_ESCAPE: (S, "\\"),
        i.SQL_EXTRA_NAME_CHARACTERS: (S, ""),
        i.SQL_SUPPORTS_COLUMN_ALIASING: (B, True),
        i.SQL_NULL_PLUS_NULL_IS_NULL: (B, True),
        i.SQL_SUPPORTS_TABLE_CORRELATION_NAMES: (B, True),
        i.SQL_SUPPORTS_DIFFERENT_TABLE_CORRELATION_NAMES: (B, False),
        i.SQL_SUPPORTS_EXPRESSIONS_IN_ORDER_BY: (B, True),
        i.SQL_SUPPORTS_ORDER_BY_UNRELATED: (B, True),
        i.SQL_SUPPORTED_GROUP_BY: (I32, (1 << sql.SQL_GROUP_BY_UNRELATED) | (1 << sql.SQL_GROUP_BY_BEYOND_SELECT)),
        i.SQL_SUPPORTS_LIKE_ESCAPE_CLAUSE: (B, False),
        i.SQL_SUPPORTS_NON_NULLABLE_COLUMNS: (B, True),
        i.SQL_OUTER_JOINS_SUPPORT_LEVEL: (I32, sql.SQL_FULL_OUTER_JOINS),
        i.SQL_SCHEMA_TERM: (S, "schema"),
        i.SQL_CATALOG_TERM: (S, "catalog"),
        i.SQL_CATALOG_AT_START: (B, True),
        i.SQL_SELECT_FOR_UPDATE_SUPPORTED: (B, False),
        i.SQL_STORED_PROCEDURES_SUPPORTED: (B, False),
        i.SQL_SUPPORTED_SUBQUERIES: (
            I32,
            sum(
                1 << b
                for b in (
                    sql.SQL_SUBQUERIES_IN_COMPARISONS,
                    sql.SQL_SUBQUERIES_IN_EXISTS,
                    sql.SQL_SUBQUERIES_IN_INS,
                    sql.SQL_SUBQUERIES_IN_QUANTIFIEDS,
                )
            ),
        ),
        i.SQL_CORRELATED_SUBQUERIES_SUPPORTED: (B, True),
        i.SQL_SUPPORTED_UNIONS: (I32, (1 << sql.SQL_UNION) | (1 << sql.SQL_UNION_ALL)),
        i.SQL_TRANSACTIONS_SUPPORTED: (B, False),
        i.SQL_DEFAULT_TRANSACTION_ISOLATION: (I32, sql.SQL_TRANSACTION_NONE),
        i.SQL_BATCH_UPDATES_SUPPORTED: (B, True),
        i.SQL_SAVEPOINTS_SUPPORTED: (B, False),
        i.SQL_NAMED_PARAMETERS_SUPPORTED: (B, True),
    }


def sql_info_table(ids, statement_timeout_ms: int = 0) -> pa.Table:
    """GetSqlInfo: the values asked for (all when ``ids`` is empty), one row
    each, in the order asked; ids glint does not know are left out."""
    values = sql_info_values(statement_timeout_ms)
    wanted = list(ids) or sorted(values)
    rows = [(i, values[i]) for i in wanted if i in values]
    children: list[list] = [[] for _ in range(6)]
    type_ids, offsets = [], []
    for _, (member, value) in rows:
        type_ids.append(member)
        offsets.append(len(children[member]))
        children[member].append(value)
    arrays = [pa.array(children[k], type=_SQL_INFO_VALUE.field(k).type) for k in range(6)]
    value = pa.UnionArray.from_dense(
        pa.array(type_ids, pa.int8()),
        pa.array(offsets, pa.int32()),
        arrays,
        [_SQL_INFO_VALUE.field(k).name for k in range(6)],
        list(range(6)),
    )
    names = pa.array([i for i, _ in rows], pa.uint32())
    return pa.Table.from_arrays([names, value], schema=SQL_INFO_SCHEMA)


# ------------------------------------------------------------------ types
# (type name, XDBC type, column size, literal prefix and suffix, create params, case sensitive,
#  minimum and maximum scale, SQL data type, datetime subcode, radix)
_TYPES = [
    ("BOOLEAN", sql.XDBC_BIT, 1, None, None, None, False, None, None, sql.XDBC_BIT, None, None),
    ("BIGINT", sql.XDBC_BIGINT, 19, None, None, None, False, 0, 0, sql.XDBC_BIGINT, None, 10),
    ("HUGEINT", sql.XDBC_NUMERIC, 38, None, None, None, False, 0, 0, sql.XDBC_NUMERIC, None, 10),
    (
        "DECIMAL",
        sql.XDBC_DECIMAL,
        38,
        None,
        None,
        ["precision", "scale"],
        False,
        0,
        38,
        sql.XDBC_DECIMAL,
        None,
        10,
    ),
    ("INTEGER", sql.XDBC_INTEGER, 10, None, None, None, False, 0, 0, sql.XDBC_INTEGER, None, 10),
    ("DOUBLE", sql.XDBC_DOUBLE, 53, None, None, None, False, None, None, sql.XDBC_DOUBLE, None, 2),
    ("VARCHAR", sql.XDBC_VARCHAR, None, "'", "'", None, True, None, None, sql.XDBC_VARCHAR, None, None),
    ("DATE", sql.XDBC_DATE, 10, "DATE '", "'", None, False, None, None, sql.XDBC_DATETIME, sql.XDBC_SUBCODE_DATE, None),
    (
        "TIMESTAMP",
        sql.XDBC_TIMESTAMP,
        26,
        "TIMESTAMP '",
        "'",
        None,
        False,
        0,
        6,
        sql.XDBC_DATETIME,
        sql.XDBC_SUBCODE_TIMESTAMP,
        None,
    ),
]


def xdbc_type_info_table(cmd: sql.CommandGetXdbcTypeInfo) -> pa.Table:
    """GetXdbcTypeInfo: glint's SQL types (those of one XDBC type when asked),
    ordered by data type, then name."""
    only = _optional(cmd, "data_type")
    rows = []
    for name, xdbc, size, prefix, suffix, params, case, lo, hi, sql_type, subcode, radix in _TYPES:
        if only is not None and xdbc != only:
            continue
        numeric = radix is not None
        rows.append(
            {
                "type_name": name,
                "data_type": xdbc,
                "column_size": size,
                "literal_prefix": prefix,
                "literal_suffix": suffix,
                "create_params": params,
                "nullable": sql.NULLABILITY_NULLABLE,
                "case_sensitive": case,
                "searchable": sql.SEARCHABLE_FULL,
                "unsigned_attribute": False if numeric else None,
                "fixed_prec_scale": False,
                "auto_increment": False if numeric else None,
                "local_type_name": name,
                "minimum_scale": lo,
                "maximum_scale": hi,
                "sql_data_type": sql_type,
                "datetime_subcode": subcode,
                "num_prec_radix": radix,
                "interval_precision": None,
            }
        )
    rows.sort(key=lambda r: (r["data_type"], r["type_name"]))
    return pa.Table.from_pylist(rows, schema=XDBC_TYPE_INFO_SCHEMA)
