"""Prepared-statement parameters, as DuckDB takes them: ``?`` (numbered in
the order written), ``$1`` (by number) and ``$name`` (by name) in a
statement, bound to values before the statement is bound. Each value becomes
a typed constant (``CAST('1994-01-01' AS DATE)``), so the statement binds,
types and plans as if the value had been written in it; a value's type is
its Arrow scalar's type when it is one (what a Flight SQL client sends), or
what DuckDB's Python client makes of a Python value (an int is INTEGER,
BIGINT or HUGEINT by its size, a float DOUBLE, a str VARCHAR, a Decimal a
DECIMAL of its digits, a date DATE, a datetime TIMESTAMP).

>>> import sqlglot
>>> ast = sqlglot.parse_one("SELECT a FROM t WHERE b > ? AND c = ?", dialect="duckdb")
>>> parameter_slots(ast)
[1, 2]
>>> bind_parameters(ast, [5, "x"]).sql(dialect="duckdb")
"SELECT a FROM t WHERE b > CAST(5 AS INT) AND c = CAST('x' AS TEXT)"
>>> bind_parameters(sqlglot.parse_one("SELECT $2, $1", dialect="duckdb"), [1.5, None]).sql(dialect="duckdb")
'SELECT NULL, CAST(1.5 AS DOUBLE)'
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from decimal import Decimal

import pyarrow as pa
from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, NotSupported


def placeholders(ast: exp.Expression) -> list[exp.Placeholder]:
    """The statement's parameter placeholders, in the order written."""
    return list(ast.find_all(exp.Placeholder))


def parameter_slots(ast: exp.Expression) -> list:
    """What each placeholder refers to: a position from 1 (``?``, ``$n``) or
    a name (``$name``). Mixing ``?`` with ``$n`` / ``$name`` is an error, as
    in DuckDB."""
    out, auto, explicit = [], 0, False
    for p in placeholders(ast):
        if p.this is None:
            auto += 1
            out.append(auto)
            continue
        explicit = True
        text = str(p.this)
        out.append(int(text) if text.isdigit() else text.lower())
    if auto and explicit:
        raise BinderError("Mixing positional (?) and numbered or named ($1, $name) parameters is not supported")
    return out


def parameter_names(ast: exp.Expression) -> list[str]:
    """The parameters a statement takes, in order: "1", "2", ... up to the
    highest number for positional and numbered ones, then the names of named
    ones (each once)."""
    slots = parameter_slots(ast)
    top = max((s for s in slots if isinstance(s, int)), default=0)
    names = [str(n) for n in range(1, top + 1)]
    for s in slots:
        if isinstance(s, str) and s not in names:
            names.append(s)
    return names


def bind_parameters(ast: exp.Expression, values) -> exp.Expression:
    """The statement with each placeholder replaced by its value as a typed
    constant: ``values`` a sequence (positional and numbered parameters) or
    a mapping (by name; numbered ones also by "1", "2", ...). A value
    missing or left over is a BinderError naming it."""
    slots = parameter_slots(ast)
    wanted = parameter_names(ast)
    if values is None and any(isinstance(s, str) for s in slots):
        values = {}  # (named parameters without values: named in the error)
    if isinstance(values, Mapping):
        given = {str(k).lower().lstrip("$"): v for k, v in values.items()}
        unknown = [k for k in given if k not in wanted]
        if unknown:
            raise BinderError(f"the statement has no parameter ${unknown[0]} (its parameters: {_listed(wanted)})")
    else:
        seq = list(values if values is not None else [])
        if any(isinstance(s, str) for s in slots):
            raise BinderError("a statement with named parameters ($name) takes its values by name")
        if len(seq) != len(wanted):
            raise BinderError(
                f"the statement takes {len(wanted)} parameter{'s' if len(wanted) != 1 else ''} "
                f"but {len(seq)} value{'s were' if len(seq) != 1 else ' was'} given"
            )
        given = {str(i + 1): v for i, v in enumerate(seq)}
    missing = [w for w in wanted if w not in given]
    if missing:
        raise BinderError(f"no value was given for the parameter{'s' if len(missing) > 1 else ''} {_listed(missing)}")
    if not slots:
        return ast
    ast = ast.copy()
    for p, slot in zip(placeholders(ast), slots):
        p.replace(constant(given[str(slot)]))
    return ast


def _listed(names) -> str:
    return ", ".join(f"${n}" for n in names) or "none"


def constant(value) -> exp.Expression:
    """A value as a typed SQL constant (NULL: an untyped NULL, unless an
    Arrow scalar gives its type)."""
    if isinstance(value, pa.Scalar):
        t = T.from_arrow(value.type)
        value = value.as_py()
        if value is None:
            return exp.Null() if t.kind == "NULL" else exp.cast(exp.Null(), _sql_type(t))
        return _typed(value, t)
    if value is None:
        return exp.Null()
    return _typed(value, python_type(value))


def python_type(value) -> T.DataType:
    """The SQL type DuckDB's Python client gives a Python value."""
    if isinstance(value, bool):
        return T.BOOLEAN
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return T.INTEGER
        if -(2**63) <= value < 2**63:
            return T.BIGINT
        if -(10**38) < value < 10**38:
            return T.HUGEINT
        raise BinderError(f"the parameter value {value} is out of range for HUGEINT")
    if isinstance(value, float):
        return T.DOUBLE
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise BinderError(f"the parameter value {value} is not a finite DECIMAL")
        sign, digits, exponent = value.as_tuple()
        scale = max(0, -exponent)
        precision = max(len(digits) + max(0, exponent), scale, 1)
        if precision > 38:
            raise NotSupported(f"a DECIMAL parameter of {precision} digits (at most 38)")
        return T.DECIMAL(precision, scale)
    if isinstance(value, str):
        return T.VARCHAR
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            raise NotSupported("a TIMESTAMP WITH TIME ZONE parameter (glint's TIMESTAMP is naive)")
        return T.TIMESTAMP
    if isinstance(value, dt.date):
        return T.DATE
    raise NotSupported(f"a parameter of Python type {type(value).__name__}")


def _sql_type(t: T.DataType) -> exp.DataType:
    return exp.DataType.build(str(t), dialect="duckdb")


def _typed(value, t: T.DataType) -> exp.Expression:
    if t.kind == "BOOLEAN":
        return exp.Boolean(this=bool(value))
    if t.kind in ("INTEGER", "BIGINT", "HUGEINT"):
        return exp.cast(exp.Literal.number(int(value)), _sql_type(t))
    if t.kind == "DOUBLE":
        v = float(value)
        text = repr(v) if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
        literal = exp.Literal.number(text) if math.isfinite(v) else exp.Literal.string(text)
        return exp.cast(literal, _sql_type(t))
    if t.kind == "DECIMAL":
        return exp.cast(exp.Literal.string(format(Decimal(value), "f")), _sql_type(t))
    if t.kind == "DATE":
        return exp.cast(exp.Literal.string(value.isoformat()), _sql_type(t))
    if t.kind == "TIMESTAMP":
        return exp.cast(exp.Literal.string(value.isoformat(sep=" ")), _sql_type(t))
    if t.kind == "VARCHAR":
        return exp.cast(exp.Literal.string(str(value)), _sql_type(t))
    raise NotSupported(f"a parameter of type {t}")
