"""Binding of date and time SQL: TIMESTAMP literals, INTERVAL constants,
EXTRACT / date_part and the part functions (year() ... epoch_ms()),
date_trunc, date_diff / date_sub, date_add, make_timestamp, last_day,
dayname / monthname. Registered on :func:`glint.sql.bind_expr._bind` (one
function per sqlglot node type) when bind_expr is imported.

Types follow DuckDB 1.4: EXTRACT gives BIGINT (``epoch`` and ``julian``
DOUBLE); date_trunc gives a DATE for parts of a day or longer and a
TIMESTAMP for shorter ones; date + INTERVAL is a TIMESTAMP.

>>> interval_text("1 year 2 months 3 days 04:05:06.5")
(14, 3, 14706500000)
>>> timestamp_literal("1992-01-01 12:30:00.123456")
TIMESTAMP '1992-01-01 12:30:00.123456'
"""
from __future__ import annotations

import re

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, ExecutionError, NotSupported, TypeMismatch
from glint.columnar import timestamp_text as text
from glint.functions.dates.timestamps import DATE_TRUNC_PARTS, DOUBLE_PARTS, PARTS, part_name
from glint.plan.expr import Call, Expr, Literal
from glint.sql.folding import fold_expr
from glint.plan import typing as ty
from glint.sql.bind_expr import ANONYMOUS, _bind, bind

_US = {"microsecond": 1, "millisecond": 1_000, "second": 1_000_000, "minute": 60_000_000, "hour": 3_600_000_000}
# INTERVAL units (singular, lower case) -> (months, days, microseconds) per unit
_INTERVAL_UNITS = {
    "year": (12, 0, 0), "month": (1, 0, 0), "day": (0, 1, 0), "week": (0, 7, 0), "quarter": (3, 0, 0),
    "decade": (120, 0, 0), "century": (1200, 0, 0), "millennium": (12000, 0, 0),
    **{u: (0, 0, us) for u, us in _US.items()},
}
_UNIT_ALIASES = {
    "years": "year", "y": "year", "yr": "year", "yrs": "year", "months": "month", "mon": "month", "mons": "month",
    "days": "day", "d": "day", "weeks": "week", "w": "week", "quarters": "quarter", "decades": "decade",
    "dec": "decade", "centuries": "century", "c": "century", "millennia": "millennium", "millenniums": "millennium",
    "hours": "hour", "h": "hour", "hr": "hour", "hrs": "hour", "minutes": "minute", "m": "minute", "min": "minute",
    "mins": "minute", "seconds": "second", "s": "second", "sec": "second", "secs": "second",
    "milliseconds": "millisecond", "ms": "millisecond", "msec": "millisecond", "msecs": "millisecond",
    "microseconds": "microsecond", "us": "microsecond", "usec": "microsecond", "usecs": "microsecond",
}
_TEMPORAL = ("DATE", "TIMESTAMP")


# ------------------------------------------------------------------ literals
def timestamp_literal(s: str) -> Literal:
    """TIMESTAMP 'text' (or 'text'::TIMESTAMP): parsed now, DuckDB's error if it does not parse."""
    value, code = text.parse_timestamp(s)
    if code != text.OK:
        raise ExecutionError(text.cast_error(s, code))
    return Literal(value, T.TIMESTAMP)


def _unit(name: str) -> tuple[int, int, int]:
    u = name.lower()
    u = _UNIT_ALIASES.get(u, u)
    if u not in _INTERVAL_UNITS:
        raise NotSupported(f"INTERVAL unit {name}")
    return _INTERVAL_UNITS[u]


def _scaled(amount: int, unit: tuple[int, int, int]) -> tuple[int, int, int]:
    return amount * unit[0], amount * unit[1], amount * unit[2]


_PIECE = re.compile(r"\s*([+-]?)(\d+(?:\.\d*)?)\s*([a-zA-Z]+)|\s*([+-]?)(\d+):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,6}))?)?")


def interval_text(s: str) -> tuple[int, int, int]:
    """(months, days, microseconds) of an INTERVAL string: amounts with units
    ('1 year 2 months', '-3 days') and an [-]HH:MM[:SS[.ffffff]] time;
    fractions only of seconds and smaller units."""
    months = days = micros = 0
    pos, s = 0, s.strip()
    if not s:
        raise NotSupported(f"INTERVAL '{s}'")
    while pos < len(s):
        m = _PIECE.match(s, pos)
        if m is None or m.end() == pos:
            raise NotSupported(f"INTERVAL '{s}'")
        pos = m.end()
        if m.group(3) is not None:
            sign = -1 if m.group(1) == "-" else 1
            unit = _unit(m.group(3))
            amount = m.group(2)
            if "." in amount:
                if unit[0] or unit[1]:
                    raise NotSupported(f"INTERVAL '{s}' (a fraction of a {m.group(3)})")
                whole, frac = amount.split(".")
                us = int(whole or "0") * unit[2] + int(frac.ljust(6, "0")[:6] or "0") * unit[2] // 1_000_000
                micros += sign * us
                continue
            dm, dd, du = _scaled(sign * int(amount), unit)
            months, days, micros = months + dm, days + dd, micros + du
        else:
            sign = -1 if m.group(4) == "-" else 1
            h, mi, sec = int(m.group(5)), int(m.group(6)), int(m.group(7) or 0)
            frac = int((m.group(8) or "").ljust(6, "0") or "0")
            micros += sign * (((h * 60 + mi) * 60 + sec) * 1_000_000 + frac)
    return months, days, micros


@_bind.register
def _(node: exp.Interval, ctx):
    unit = node.args.get("unit")
    unit = unit.name if unit is not None else None
    if isinstance(node.this, exp.Literal):
        amount = node.this.name
    else:
        v = bind(node.this, ctx)
        if not isinstance(v, Literal) or not isinstance(v.value, int) or isinstance(v.value, bool):
            raise NotSupported("INTERVAL with a non-constant amount")
        amount = str(v.value)
    if unit is None:
        return Literal(interval_text(amount), T.INTERVAL)
    try:
        n = int(amount.strip())
    except ValueError:
        raise NotSupported(f"INTERVAL '{amount}' {unit} (a fractional or compound amount with a unit)") from None
    return Literal(_scaled(n, _unit(unit)), T.INTERVAL)


# ------------------------------------------------------------------ part functions
def _temporal(v: Expr, what: str) -> Expr:
    if v.type.kind == "NULL":
        raise BinderError(f'Could not choose a best candidate function for the function call "{what}" with a '
                          f"NULL argument: add an explicit cast")
    if v.type.kind not in _TEMPORAL:
        raise TypeMismatch(f"Type mismatch: {what} needs a DATE or TIMESTAMP, got {ty.show(v)} of type {v.type}")
    return v


def extract_part(part_text: str, v: Expr) -> Expr:
    """date_part(part, v) as a typed Call (BIGINT, or DOUBLE for epoch / julian)."""
    v = _temporal(v, "date_part")
    part = part_name(part_text)
    if v.type.kind == "DATE" and part in ("timezone", "timezone_hour", "timezone_minute"):
        raise BinderError(f'Not implemented Error: "date" units "{part}" not recognized')
    return Call("extract", (v,), T.DOUBLE if part in DOUBLE_PARTS else T.BIGINT, (part,))


def _const_part(node, ctx, fn: str) -> str | None:
    """A part argument written as a string (None for a NULL)."""
    if isinstance(node, exp.Var):
        return _var_part(node, ctx, fn)
    p = bind(node, ctx)
    if isinstance(p, Literal) and (p.value is None or isinstance(p.value, str)):
        return p.value
    raise NotSupported(f"{fn} with a part that is not a constant string")


def _var_part(var: exp.Var, ctx, fn: str) -> str:
    """sqlglot reads date_trunc(x, ts) / date_diff(x, ...) with a column x as
    the unit named X: a name that is no part but is a column is refused."""
    name = var.name
    if name.lower() not in PARTS:
        try:
            ctx.scope.resolve(None, name)
        except BinderError:
            return name.lower()
        raise NotSupported(f"{fn} with a part that is not a constant string")
    return name


@_bind.register
def _(node: exp.Extract, ctx):
    return extract_part(node.this.name, bind(node.expression, ctx))


_PART_FUNCS = ((exp.Year, "year"), (exp.Month, "month"), (exp.Day, "day"), (exp.Quarter, "quarter"),
               (exp.DayOfWeek, "dayofweek"), (exp.DayOfMonth, "dayofmonth"), (exp.DayOfYear, "dayofyear"),
               (exp.WeekOfYear, "weekofyear"), (exp.Week, "week"), (exp.DayOfWeekIso, "isodow"),
               (exp.Hour, "hour"), (exp.Minute, "minute"), (exp.Second, "second"), (exp.TimeToUnix, "epoch"))
for _cls, _part in _PART_FUNCS:
    _bind.register(_cls)(lambda node, ctx, _p=_part: extract_part(_p, bind(node.this, ctx)))


def _date_part_call(node: exp.Anonymous, ctx) -> Expr:
    args = node.expressions
    if len(args) != 2:
        raise BinderError(f"{node.name}() takes a part and a DATE or TIMESTAMP")
    if isinstance(args[0], exp.Array):
        raise NotSupported("date_part with a list of parts (a STRUCT result)")
    part = _const_part(args[0], ctx, "date_part")
    v = bind(args[1], ctx)
    if part is None:
        _temporal(v, "date_part")
        return Literal(None, T.BIGINT)
    return extract_part(part, v)


def _one_part(part: str):
    def bind_it(node: exp.Anonymous, ctx) -> Expr:
        if len(node.expressions) != 1:
            raise BinderError(f"{node.name}() takes one DATE or TIMESTAMP")
        return extract_part(part, bind(node.expressions[0], ctx))
    return bind_it


def _epoch_unit(unit: str):
    def bind_it(node: exp.Anonymous, ctx) -> Expr:
        if len(node.expressions) != 1:
            raise BinderError(f"{node.name}() takes one DATE or TIMESTAMP")
        v = _temporal(bind(node.expressions[0], ctx), f"epoch_{unit}")
        return Call("epoch_unit", (v,), T.BIGINT, (unit,))
    return bind_it


@_bind.register
def _(node: exp.UnixToTime, ctx):
    v = bind(node.this, ctx)
    scale = node.args.get("scale")
    scale = scale.name if scale is not None else None
    if scale is None or node.args.get("zone") is not None:
        raise NotSupported("to_timestamp (its result is a TIMESTAMP WITH TIME ZONE)")
    if scale == "3" and v.type.kind in _TEMPORAL:          # epoch_ms(timestamp): milliseconds since 1970
        return Call("epoch_unit", (v,), T.BIGINT, ("ms",))
    if not (v.type.is_integer or v.type.kind == "NULL") or v.type.kind == "HUGEINT":
        fn = "epoch_ms" if scale == "3" else "make_timestamp"
        raise TypeMismatch(f"Type mismatch: {fn} needs a BIGINT, got {ty.show(v)} of type {v.type}")
    if scale not in ("3", "6"):
        raise NotSupported(f"UNIX time with scale {scale}")
    fn = "timestamp_from_epoch_ms" if scale == "3" else "timestamp_from_micros"
    return Call(fn, (ty.cast(v, T.BIGINT),), T.TIMESTAMP)


@_bind.register
def _(node: exp.TimestampFromParts, ctx):
    names = ("year", "month", "day", "hour", "min", "sec")
    nodes = [node.args.get(k) for k in names]
    if any(n is None for n in nodes) or node.args.get("zone") is not None or node.args.get("milli") is not None:
        raise NotSupported("make_timestamp with other than six parts")
    args = [bind(n, ctx) for n in nodes]
    for a in args[:5]:
        if not (a.type.is_integer or a.type.kind == "NULL") or a.type.kind == "HUGEINT":
            raise TypeMismatch(f"Type mismatch: make_timestamp needs BIGINT parts, got {ty.show(a)} of type {a.type}")
    if not (args[5].type.is_numeric or args[5].type.kind == "NULL"):
        raise TypeMismatch(f"Type mismatch: make_timestamp needs DOUBLE seconds, got {ty.show(args[5])}")
    return Call("make_timestamp", tuple(ty.cast(a, T.BIGINT) for a in args[:5]) + (ty.cast(args[5], T.DOUBLE),),
                T.TIMESTAMP)


@_bind.register
def _(node: exp.DateFromParts, ctx):
    nodes = [node.args.get(k) for k in ("year", "month", "day")]
    if any(n is None for n in nodes):
        raise NotSupported("make_date with other than three parts (year, month, day)")
    args = [bind(n, ctx) for n in nodes]
    for a in args:
        if not (a.type.is_integer or a.type.kind == "NULL") or a.type.kind == "HUGEINT":
            raise TypeMismatch(f"Type mismatch: make_date needs BIGINT parts, got {ty.show(a)} of type {a.type}")
    return Call("make_date", tuple(ty.cast(a, T.BIGINT) for a in args), T.DATE)


# ------------------------------------------------------------------ date_trunc / date_diff / date_sub
def _bind_trunc(node, ctx):
    part = _const_part(node.args["unit"], ctx, "date_trunc")
    v = _temporal(bind(node.this, ctx), "date_trunc")
    if part is None:
        return Literal(None, T.TIMESTAMP)
    part = part_name(part)
    if part not in DATE_TRUNC_PARTS and part not in ("microseconds", "milliseconds", "second", "minute", "hour",
                                                     "epoch"):
        raise BinderError("Not implemented Error: Specifier type not implemented for DATETRUNC")
    # DuckDB folds a constant argument before typing the call DATE: a NULL TIMESTAMP. An
    # argument that reads a column is not folded there, even one that is always NULL
    # (CASE WHEN FALSE THEN ts END): that call stays a DATE
    folded = fold_expr(v) if not v.fields() else v
    if isinstance(folded, Literal) and folded.value is None:
        return Literal(None, T.TIMESTAMP)
    return Call("date_trunc", (v,), T.DATE if part in DATE_TRUNC_PARTS else T.TIMESTAMP, (part,))


# sqlglot reads date_trunc as DateTrunc when it sees a DATE argument, TimestampTrunc otherwise
_bind.register(exp.TimestampTrunc)(_bind_trunc)
_bind.register(exp.DateTrunc)(_bind_trunc)


def _difference(fn: str, part_node, a_node, b_node, ctx) -> Expr:
    part = _const_part(part_node, ctx, fn)
    a, b = bind(a_node, ctx), bind(b_node, ctx)
    if a.type.kind == "NULL" and b.type.kind == "NULL":
        raise BinderError(f'Could not choose a best candidate function for the function call "{fn}" with '
                          f"NULL arguments: add an explicit cast")
    a = ty.cast(a, b.type) if a.type.kind == "NULL" else _temporal(a, fn)
    b = ty.cast(b, a.type) if b.type.kind == "NULL" else _temporal(b, fn)
    if part is None:
        return Literal(None, T.BIGINT)
    part = part_name(part)
    if part in ("era", "timezone", "timezone_hour", "timezone_minute"):
        raise BinderError(f"Not implemented Error: Specifier type not implemented for {fn.replace('_', '').upper()}")
    return Call(fn, (a, b), T.BIGINT, (part,))


@_bind.register
def _(node: exp.DateDiff, ctx):
    unit = node.args.get("unit")
    if unit is None:
        raise BinderError("date_diff needs a part, a start and an end")
    return _difference("date_diff", unit, node.expression, node.this, ctx)


def _date_sub_call(node: exp.Anonymous, ctx) -> Expr:
    if len(node.expressions) != 3:
        raise BinderError(f"{node.name}() takes a part, a start and an end")
    return _difference("date_sub", *node.expressions, ctx)


@_bind.register
def _(node: exp.DateAdd, ctx):
    return ty.arith("add", bind(node.this, ctx), bind(node.expression, ctx))


# ------------------------------------------------------------------ named days and months
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December")
_DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")


def _named(fn: str, part: str, names):
    def bind_it(node, ctx):
        v = _temporal(bind(node.this, ctx), fn)
        return Call("calendar_name", (v,), T.VARCHAR, (part, names))
    return bind_it


_bind.register(exp.Monthname)(_named("monthname", "month", _MONTH_NAMES))
_bind.register(exp.Dayname)(_named("dayname", "dow", _DAY_NAMES))


@_bind.register
def _(node: exp.LastDay, ctx):
    if node.args.get("unit") is not None:
        raise NotSupported("last_day with a unit")
    v = _temporal(bind(node.this, ctx), "last_day")
    return Call("last_day", (v,), T.DATE)


@_bind.register
def _(node: exp.TimeToStr, ctx):
    raise NotSupported("strftime")


@_bind.register
def _(node: exp.StrToTime, ctx):
    raise NotSupported("strptime")


# functions sqlglot leaves anonymous, by lower-case name
ANONYMOUS.update({
    "date_part": _date_part_call, "datepart": _date_part_call, "date_sub": _date_sub_call, "datesub": _date_sub_call,
    "yearweek": _one_part("yearweek"), "decade": _one_part("decade"), "century": _one_part("century"),
    "millennium": _one_part("millennium"), "era": _one_part("era"), "julian": _one_part("julian"),
    "millisecond": _one_part("milliseconds"), "microsecond": _one_part("microseconds"),
    "isoyear": _one_part("isoyear"), "weekday": _one_part("dow"), "dayofmonth": _one_part("day"),
    "timezone_hour": _one_part("timezone_hour"), "timezone_minute": _one_part("timezone_minute"),
    "epoch_us": _epoch_unit("us"), "epoch_ns": _epoch_unit("ns"),
})


def _refuse(reason: str):
    def bind_it(node, ctx):
        raise NotSupported(reason)
    return bind_it


ANONYMOUS.update({
    "age": _refuse("age (its result is an INTERVAL)"),
    "make_timestamp_ms": _refuse("make_timestamp_ms"), "make_timestamp_ns": _refuse("make_timestamp_ns (TIMESTAMP_NS)"),
    "make_timestamptz": _refuse("make_timestamptz (TIMESTAMP WITH TIME ZONE)"),
})


def bind_cast_check(src: T.DataType, to: T.DataType) -> None:
    """DuckDB's binder error for a CAST between a date type and a number."""
    kinds = {src.kind, to.kind}
    if kinds & set(_TEMPORAL) and src != to and src.kind not in ("NULL", "VARCHAR") and to.kind != "VARCHAR" \
            and kinds != set(_TEMPORAL):
        raise TypeMismatch(f"Conversion Error: Unimplemented type for cast ({src} -> {to})")
