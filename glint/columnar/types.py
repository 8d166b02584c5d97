"""SQL types and their physical layout (docs/architecture.md, the columnar layer).

>>> DECIMAL(15, 2)
DECIMAL(15,2)
>>> common_type(INTEGER, DECIMAL(15, 2))
DECIMAL(15,2)
>>> decimal_result("*", DECIMAL(15, 2), DECIMAL(15, 2))
DECIMAL(18,4)
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import torch

from glint.errors import NotSupported, TypeMismatch


@dataclass(frozen=True, slots=True)
class DataType:
    kind: str  # BOOLEAN INTEGER BIGINT HUGEINT DOUBLE DECIMAL DATE TIMESTAMP VARCHAR NULL INTERVAL
    precision: int = 0  # DECIMAL only
    scale: int = 0  # DECIMAL only

    def __repr__(self) -> str:
        if self.kind == "DECIMAL":
            return f"DECIMAL({self.precision},{self.scale})"
        return self.kind

    __str__ = __repr__

    @property
    def is_numeric(self) -> bool:
        return self.kind in NUMERIC_KINDS

    @property
    def is_integer(self) -> bool:
        return self.kind in ("INTEGER", "BIGINT", "HUGEINT")

    @property
    def is_decimal(self) -> bool:
        return self.kind == "DECIMAL"

    @property
    def is_string(self) -> bool:
        return self.kind == "VARCHAR"

    @property
    def torch_dtype(self) -> torch.dtype:
        return _TORCH[self.kind]


BOOLEAN = DataType("BOOLEAN")
INTEGER = DataType("INTEGER")
BIGINT = DataType("BIGINT")
HUGEINT = DataType("HUGEINT")  # SUM of integers; int64 storage, checked for overflow
DOUBLE = DataType("DOUBLE")
DATE = DataType("DATE")
TIMESTAMP = DataType("TIMESTAMP")  # int64 microseconds since 1970-01-01 00:00:00, naive (DuckDB's TIMESTAMP)
VARCHAR = DataType("VARCHAR")
NULLTYPE = DataType("NULL")  # the type of a bare NULL literal
INTERVAL = DataType("INTERVAL")  # only as a constant (months, days, microseconds) in date arithmetic


def DECIMAL(precision: int, scale: int) -> DataType:
    if not (1 <= precision <= 38 and 0 <= scale <= precision):
        raise TypeMismatch(f"invalid DECIMAL({precision},{scale})")
    return DataType("DECIMAL", precision, scale)


NUMERIC_KINDS = ("INTEGER", "BIGINT", "HUGEINT", "DOUBLE", "DECIMAL")
_INT_RANK = {"INTEGER": 0, "BIGINT": 1, "HUGEINT": 2}
_INT_DIGITS = {"INTEGER": 10, "BIGINT": 19, "HUGEINT": 38}
MAX_INT64_DECIMAL_PRECISION = 18

_TORCH = {
    "BOOLEAN": torch.bool,
    "INTEGER": torch.int32,
    "BIGINT": torch.int64,
    "HUGEINT": torch.int64,
    "DOUBLE": torch.float64,
    "DECIMAL": torch.int64,
    "DATE": torch.int32,
    "TIMESTAMP": torch.int64,
    "VARCHAR": torch.int32,
    "NULL": torch.int32,
}


def as_decimal(t: DataType) -> DataType:
    """The DECIMAL an integer type widens to when mixed with a DECIMAL."""
    if t.kind == "DECIMAL":
        return t
    if t.is_integer:
        return DECIMAL(_INT_DIGITS[t.kind], 0)
    raise TypeMismatch(f"{t} is not an exact numeric type")


def common_type(a: DataType, b: DataType) -> DataType:
    """The type both operands are cast to for comparison, CASE, UNION, COALESCE."""
    if a == b:
        return a
    if a.kind == "NULL":
        return b
    if b.kind == "NULL":
        return a
    if a.is_numeric and b.is_numeric:
        if "DOUBLE" in (a.kind, b.kind):
            return DOUBLE
        if a.is_integer and b.is_integer:
            return a if _INT_RANK[a.kind] >= _INT_RANK[b.kind] else b
        da, db = as_decimal(a), as_decimal(b)
        scale = max(da.scale, db.scale)
        whole = max(da.precision - da.scale, db.precision - db.scale)
        if whole + scale > 38 and a.is_decimal and b.is_decimal:
            scale = max(0, 38 - whole)  # two DECIMALs: DuckDB gives up scale (an integer keeps it)
        return DECIMAL(min(38, whole + scale), scale)
    if {a.kind, b.kind} == {"DATE", "VARCHAR"}:
        return DATE
    if {a.kind, b.kind} in ({"TIMESTAMP", "VARCHAR"}, {"TIMESTAMP", "DATE"}):
        return TIMESTAMP  # DuckDB casts the DATE (or the text) to TIMESTAMP
    if a.is_string and b.is_numeric or b.is_string and a.is_numeric:
        # DuckDB casts the string literal side to the numeric type
        return b if a.is_string else a
    raise TypeMismatch(f"cannot compare or combine {a} and {b}")


def union_type(a: DataType, b: DataType) -> DataType:
    """Column type of a set operation: as for comparisons, except that text
    mixed with anything else stays text (DuckDB's max logical type)."""
    if a.kind != "NULL" and b.kind != "NULL" and (a.is_string or b.is_string) and a != b:
        return VARCHAR
    return common_type(a, b)


def decimal_result(op: str, a: DataType, b: DataType) -> DataType:
    """Result type of + - * on exact numerics, following DuckDB's rules."""
    da, db = as_decimal(a), as_decimal(b)
    if op in ("+", "-"):
        scale = max(da.scale, db.scale)
        whole = max(da.precision - da.scale, db.precision - db.scale)
        prec = whole + scale + 1
        if da.precision <= 18 and db.precision <= 18:
            # DuckDB keeps the sum of two DECIMALs of at most 18 digits in 64 bits: DECIMAL(18, s),
            # with an overflow error past 18 digits (DECIMAL(18,2) + DECIMAL(18,2) is DECIMAL(18,2))
            prec = min(prec, 18)
        return DECIMAL(max(min(38, prec), scale), scale)
    if op == "*":
        scale = da.scale + db.scale
        prec = da.precision + db.precision
        if da.precision <= 18 and db.precision <= 18:
            prec = min(prec, 18)
        if scale > 38:
            raise NotSupported(f"DECIMAL multiplication with result scale {scale}")
        return DECIMAL(max(min(38, prec), scale), scale)
    raise TypeMismatch(f"no exact result type for {op}")


def from_arrow(t: pa.DataType) -> DataType:
    if pa.types.is_boolean(t):
        return BOOLEAN
    if (
        pa.types.is_int8(t)
        or pa.types.is_int16(t)
        or pa.types.is_int32(t)
        or pa.types.is_uint8(t)
        or pa.types.is_uint16(t)
    ):
        return INTEGER
    if pa.types.is_int64(t) or pa.types.is_uint32(t):
        return BIGINT
    if pa.types.is_floating(t):
        return DOUBLE
    if pa.types.is_decimal(t):
        if t.precision > 38:
            raise NotSupported(f"DECIMAL({t.precision},{t.scale}) columns wider than 38 digits")
        return DECIMAL(t.precision, t.scale)
    if pa.types.is_date(t):
        return DATE
    if pa.types.is_timestamp(t):
        if t.tz is not None:
            raise NotSupported(f"TIMESTAMP WITH TIME ZONE ({t})")
        return TIMESTAMP  # every unit is read as microseconds (ns: truncated, as DuckDB's cast)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return VARCHAR
    if pa.types.is_dictionary(t) and (pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type)):
        return VARCHAR
    if pa.types.is_null(t):
        return NULLTYPE
    raise NotSupported(f"column type {t}")


def to_arrow(t: DataType) -> pa.DataType:
    return {
        "BOOLEAN": pa.bool_(),
        "INTEGER": pa.int32(),
        "BIGINT": pa.int64(),
        "HUGEINT": pa.decimal128(38, 0),
        "DOUBLE": pa.float64(),
        "DATE": pa.date32(),
        "TIMESTAMP": pa.timestamp("us"),
        "VARCHAR": pa.string(),
        "NULL": pa.int32(),
    }.get(t.kind) or pa.decimal128(t.precision, t.scale)


def from_sql_name(name: str, params: list[int] | None = None) -> DataType:
    """Map a SQL type name (as sqlglot spells it) to a glint type."""
    n = name.upper()
    params = params or []
    if n in ("INT", "INTEGER", "INT4", "SMALLINT", "TINYINT", "INT2", "INT1", "UTINYINT", "USMALLINT"):
        return INTEGER
    if n in ("BIGINT", "INT8", "LONG", "UINT", "UINTEGER"):
        return BIGINT
    if n in ("INT128", "HUGEINT"):
        return HUGEINT
    if n in ("DOUBLE", "FLOAT", "REAL", "FLOAT4", "FLOAT8", "DOUBLE PRECISION"):
        return DOUBLE
    if n in ("DECIMAL", "NUMERIC"):
        p = params[0] if params else 18
        s = params[1] if len(params) > 1 else (0 if params else 3)
        # up to 38 digits, as DuckDB: values beyond int64 are held as wide (96-bit) values
        return DECIMAL(p, s)
    if n in ("BOOLEAN", "BOOL"):
        return BOOLEAN
    if n == "DATE":
        return DATE
    if n in ("TIMESTAMP", "DATETIME", "TIMESTAMPNTZ", "TIMESTAMP_US"):
        if params:
            raise NotSupported(f"TIMESTAMP({params[0]}): TIMESTAMP with a precision")
        return TIMESTAMP
    if n == "INTERVAL":
        return INTERVAL
    if n in ("TIMESTAMPTZ", "TIMESTAMPLTZ", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS"):
        spelled = {"TIMESTAMPTZ": "TIMESTAMP WITH TIME ZONE", "TIMESTAMPLTZ": "TIMESTAMP WITH LOCAL TIME ZONE"}
        raise NotSupported(f"type {spelled.get(n, n)} (glint's TIMESTAMP is naive, in microseconds)")
    if n in ("VARCHAR", "TEXT", "STRING", "CHAR", "NCHAR", "NVARCHAR", "BPCHAR"):
        return VARCHAR
    raise NotSupported(f"type {name}")
