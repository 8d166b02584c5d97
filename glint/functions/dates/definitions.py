"""The date and time functions of the registry: their binding and type rules
and their evaluators.

Types follow DuckDB 1.4: date_part and the part functions (year() ...)
give BIGINT (``epoch`` and ``julian`` DOUBLE); date_trunc gives a DATE for
parts of a day or longer and a TIMESTAMP for shorter ones; date + INTERVAL
is a TIMESTAMP.

>>> from glint.functions.registry import CallSite
>>> from glint.plan.expr import ColRef, Field
>>> d = ColRef(Field(1, "d", T.DATE))
>>> _bind_date_part([Literal("epoch", T.VARCHAR), d], CallSite("date_part")).type
DOUBLE
>>> _bind_trunc([Literal("hour", T.VARCHAR), d], CallSite("DATE_TRUNC"))
date_trunc(d#1, 'hour')
"""

from __future__ import annotations

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.errors import BinderError, NotSupported, TypeMismatch
from glint.functions.dates import days
from glint.functions.dates import timestamps as TS
from glint.functions.dates.format_spec import parse_format
from glint.functions.dates.strftime import strftime
from glint.functions.dates.strptime import strptime
from glint.functions.dates.time_bucket import time_bucket
from glint.functions.dates.timestamps import DATE_TRUNC_PARTS, DOUBLE_PARTS, part_name
from glint.functions.registry import OPERATOR, SCALAR, CallSite, Function
from glint.functions.validity import and_valid
from glint.plan import typing as ty
from glint.plan.expr import Call, Expr, Literal

_TEMPORAL = ("DATE", "TIMESTAMP")


# ------------------------------------------------------------------ argument rules
def temporal_arg(v: Expr, what: str) -> Expr:
    """v as the DATE or TIMESTAMP argument of ``what``."""
    if v.type.kind == "NULL":
        raise BinderError(
            f'Could not choose a best candidate function for the function call "{what}" with a '
            f"NULL argument: add an explicit cast"
        )
    if v.type.kind not in _TEMPORAL:
        raise TypeMismatch(f"Type mismatch: {what} needs a DATE or TIMESTAMP, got {ty.show(v)} of type {v.type}")
    return v


def constant_part(p: Expr, fn: str) -> str | None:
    """A part argument (a constant string; None for a NULL)."""
    if isinstance(p, Literal) and (p.value is None or isinstance(p.value, str)):
        return p.value
    raise NotSupported(f"{fn} with a part that is not a constant string")


def _integer_part(a: Expr) -> bool:
    return (a.type.is_integer or a.type.kind == "NULL") and a.type.kind != "HUGEINT"


# ------------------------------------------------------------------ date_part and the part functions
def extract_part(part_text: str, v: Expr) -> Expr:
    """date_part(part, v) as a typed Call (BIGINT, or DOUBLE for epoch / julian)."""
    v = temporal_arg(v, "date_part")
    part = part_name(part_text)
    if v.type.kind == "DATE" and part in ("timezone", "timezone_hour", "timezone_minute"):
        raise BinderError(f'Not implemented Error: "date" units "{part}" not recognized')
    return Call("extract", (v,), T.DOUBLE if part in DOUBLE_PARTS else T.BIGINT, (part,))


def _bind_date_part(args, site: CallSite) -> Expr:
    """date_part(part, x), and EXTRACT(part FROM x)."""
    if len(args) != 2:
        raise BinderError(f"{site.name}() takes a part and a DATE or TIMESTAMP")
    part = constant_part(args[0], "date_part")
    v = args[1]
    if part is None:
        temporal_arg(v, "date_part")
        return Literal(None, T.BIGINT)
    return extract_part(part, v)


def _bind_one_part(part: str):
    def bind(args, site):
        if len(args) != 1:
            raise BinderError(f"{site.name}() takes one DATE or TIMESTAMP")
        return extract_part(part, args[0])

    return bind


def _bind_epoch_unit(unit: str):
    def bind(args, site):
        if len(args) != 1:
            raise BinderError(f"{site.name}() takes one DATE or TIMESTAMP")
        v = temporal_arg(args[0], f"epoch_{unit}")
        return Call("epoch_unit", (v,), T.BIGINT, (unit,))

    return bind


def _no_time_zone(site: CallSite) -> None:
    if site.option("time_zone"):
        raise NotSupported("to_timestamp (its result is a TIMESTAMP WITH TIME ZONE)")


def _bind_epoch_ms(args, site):
    """epoch_ms(timestamp): milliseconds since 1970; epoch_ms(BIGINT): that TIMESTAMP."""
    v = args[0]
    _no_time_zone(site)
    if v.type.kind in _TEMPORAL:
        return Call("epoch_unit", (v,), T.BIGINT, ("ms",))
    if not _integer_part(v):
        raise TypeMismatch(f"Type mismatch: epoch_ms needs a BIGINT, got {ty.show(v)} of type {v.type}")
    return Call("timestamp_from_epoch_ms", (ty.cast(v, T.BIGINT),), T.TIMESTAMP)


def _bind_make_timestamp(args, site):
    """make_timestamp(micros) or make_timestamp(year, month, day, hour, minute, seconds). The
    one-argument form is a UNIX time of microseconds: option ``unix_scale`` "6" (sqlglot also
    reads to_timestamp(x) this way, without a scale: refused)."""
    if len(args) == 1:
        v = args[0]
        scale = site.option("unix_scale", "6")
        if scale is None:
            raise NotSupported("to_timestamp (its result is a TIMESTAMP WITH TIME ZONE)")
        _no_time_zone(site)
        if not _integer_part(v):
            raise TypeMismatch(f"Type mismatch: make_timestamp needs a BIGINT, got {ty.show(v)} of type {v.type}")
        if scale != "6":
            raise NotSupported(f"UNIX time with scale {scale}")
        return Call("timestamp_from_micros", (ty.cast(v, T.BIGINT),), T.TIMESTAMP)
    args = list(args)
    for a in args[:5]:
        if not _integer_part(a):
            raise TypeMismatch(f"Type mismatch: make_timestamp needs BIGINT parts, got {ty.show(a)} of type {a.type}")
    if not (args[5].type.is_numeric or args[5].type.kind == "NULL"):
        raise TypeMismatch(f"Type mismatch: make_timestamp needs DOUBLE seconds, got {ty.show(args[5])}")
    return Call(
        "make_timestamp", tuple(ty.cast(a, T.BIGINT) for a in args[:5]) + (ty.cast(args[5], T.DOUBLE),), T.TIMESTAMP
    )


def _bind_make_date(args, site):
    args = list(args)
    for a in args:
        if not _integer_part(a):
            raise TypeMismatch(f"Type mismatch: make_date needs BIGINT parts, got {ty.show(a)} of type {a.type}")
    return Call("make_date", tuple(ty.cast(a, T.BIGINT) for a in args), T.DATE)


# ------------------------------------------------------------------ date_trunc / date_diff / date_sub
def _bind_trunc(args, site: CallSite) -> Expr:
    part = constant_part(args[0], "date_trunc")
    v = temporal_arg(args[1], "date_trunc")
    if part is None:
        return Literal(None, T.TIMESTAMP)
    part = part_name(part)
    if part not in DATE_TRUNC_PARTS and part not in (
        "microseconds",
        "milliseconds",
        "second",
        "minute",
        "hour",
        "epoch",
    ):
        raise BinderError("Not implemented Error: Specifier type not implemented for DATETRUNC")
    # DuckDB folds a constant argument before typing the call DATE: a NULL TIMESTAMP. An
    # argument that reads a column is not folded there, even one that is always NULL
    # (CASE WHEN FALSE THEN ts END): that call stays a DATE
    folded = site.fold(v) if not v.fields() else v
    if isinstance(folded, Literal) and folded.value is None:
        return Literal(None, T.TIMESTAMP)
    return Call("date_trunc", (v,), T.DATE if part in DATE_TRUNC_PARTS else T.TIMESTAMP, (part,))


def _bind_difference(fn: str):
    """date_diff(part, start, end) / date_sub(part, start, end)."""

    def bind(args, site):
        if len(args) != 3:
            raise BinderError(f"{site.name}() takes a part, a start and an end")
        part = constant_part(args[0], fn)
        a, b = args[1], args[2]
        if a.type.kind == "NULL" and b.type.kind == "NULL":
            raise BinderError(
                f'Could not choose a best candidate function for the function call "{fn}" with '
                f"NULL arguments: add an explicit cast"
            )
        a = ty.cast(a, b.type) if a.type.kind == "NULL" else temporal_arg(a, fn)
        b = ty.cast(b, a.type) if b.type.kind == "NULL" else temporal_arg(b, fn)
        if part is None:
            return Literal(None, T.BIGINT)
        part = part_name(part)
        if part in ("era", "timezone", "timezone_hour", "timezone_minute"):
            raise BinderError(
                f"Not implemented Error: Specifier type not implemented for {fn.replace('_', '').upper()}"
            )
        return Call(fn, (a, b), T.BIGINT, (part,))

    return bind


def _bind_date_add(args, site):
    return ty.arith("add", args[0], args[1])


# ------------------------------------------------------------------ named days and months, last_day
_MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")


def _bind_named(fn: str, part: str, names):
    def bind(args, site):
        v = temporal_arg(args[0], fn)
        return Call("calendar_name", (v,), T.VARCHAR, (part, names))

    return bind


def _bind_last_day(args, site):
    v = temporal_arg(args[0], "last_day")
    return Call("last_day", (v,), T.DATE)


# ------------------------------------------------------------------ strftime, strptime, time_bucket
def _constant_format(e: Expr, fn: str) -> str | None:
    """A format argument: a constant string (None for NULL)."""
    if isinstance(e, Literal) and (e.value is None or isinstance(e.value, str)):
        return e.value
    raise BinderError(f"Invalid Input Error: {fn} format must be a constant")


def _bind_strftime(args, site):
    """strftime(x, format), or strftime(format, x) as DuckDB also takes it."""
    if len(args) != 2:
        raise BinderError("strftime() takes a DATE or TIMESTAMP and a format")
    v, f = args[0], args[1]
    if v.type.is_string and f.type.kind in _TEMPORAL:
        v, f = f, v
    if v.type.kind == "NULL":
        return Literal(None, T.VARCHAR)
    if v.type.is_string:
        raise BinderError(
            'Could not choose a best candidate function for the function call "strftime(VARCHAR, VARCHAR)": '
            "cast the date or timestamp"
        )
    v = temporal_arg(v, "strftime")
    fmt = _constant_format(f, "strftime")
    if fmt is None:
        return Literal(None, T.VARCHAR)
    parse_format(fmt)  # DuckDB's errors for a bad format, at bind time
    return Call("strftime", (v,), T.VARCHAR, (fmt,))


def _bind_strptime(safe: bool):
    name = "try_strptime" if safe else "strptime"

    def bind(args, site):
        if len(args) != 2:
            raise BinderError(f"{name}() takes a string and a format")
        v = args[0]
        if not (v.type.is_string or v.type.kind == "NULL"):
            raise TypeMismatch(f"Type mismatch: {name} needs VARCHAR, got {ty.show(v)} of type {v.type}")
        fmt = _constant_format(args[1], name)
        if fmt is None or v.type.kind == "NULL":
            return Literal(None, T.TIMESTAMP)
        items = parse_format(fmt)
        if any(kind == "spec" and code in ("z", "Z") for kind, code in items):
            raise NotSupported(f"{name} with %z or %Z (its result is a TIMESTAMP WITH TIME ZONE)")
        if any(kind == "spec" and code == "n" for kind, code in items):
            raise NotSupported(f"{name} with %n (its result is a TIMESTAMP_NS)")
        return Call("strptime", (v,), T.TIMESTAMP, (fmt, safe))

    return bind


def _interval_arg(e: Expr, what: str) -> tuple[int, int, int] | None:
    if isinstance(e, Literal) and e.type.kind in ("INTERVAL", "NULL"):
        return e.value
    raise NotSupported(f"time_bucket with a {what} that is not a constant INTERVAL")


def _bind_time_bucket(args, site):
    """time_bucket(width, x [, offset INTERVAL | origin DATE / TIMESTAMP])."""
    if len(args) not in (2, 3):
        raise BinderError("time_bucket() takes a width, a DATE or TIMESTAMP and an optional offset or origin")
    width = _interval_arg(args[0], "width")
    v = temporal_arg(args[1], "time_bucket")
    third = args[2] if len(args) == 3 else None
    if width is None:
        return Literal(None, v.type)
    if third is None:
        return Call("time_bucket", (v,), v.type, (width, None))
    if third.type.kind in ("INTERVAL", "NULL") and isinstance(third, Literal):
        offset = third.value
        if offset is None:
            return Literal(None, v.type)
        return Call("time_bucket", (v,), v.type, (width, offset))
    if third.type.is_string and isinstance(third, Literal):
        third = ty.cast(third, v.type)
    origin = temporal_arg(third, "time_bucket")
    if origin.type != v.type:
        v, origin = ty.cast(v, T.TIMESTAMP), ty.cast(origin, T.TIMESTAMP)
    return Call("time_bucket", (v, origin), v.type, (width, None))


def _time_bucket(e: Call, cols) -> Column:
    width, offset = e.params
    return time_bucket(cols[0], width, offset, cols[1] if len(cols) > 1 else None)


# ------------------------------------------------------------------ date arithmetic
def _date_add_days(e: Call, cols) -> Column:
    d, n = cols
    return Column(T.DATE, (d.data.long() + e.params[0] * n.data).int(), and_valid(d.valid, n.valid))


def _date_diff_days(e: Call, cols) -> Column:
    a, b = cols
    return Column(T.BIGINT, a.data.long() - b.data.long(), and_valid(a.valid, b.valid))


# ------------------------------------------------------------------ the functions
# the part functions: SQL name -> part
_PART_FUNCTIONS = {
    "year": "year",
    "month": "month",
    "day": "day",
    "quarter": "quarter",
    "dayofweek": "dayofweek",
    "dayofmonth": "dayofmonth",
    "dayofyear": "dayofyear",
    "weekofyear": "weekofyear",
    "week": "week",
    "isodow": "isodow",
    "hour": "hour",
    "minute": "minute",
    "second": "second",
    "epoch": "epoch",
    "yearweek": "yearweek",
    "decade": "decade",
    "century": "century",
    "millennium": "millennium",
    "era": "era",
    "julian": "julian",
    "millisecond": "milliseconds",
    "microsecond": "microseconds",
    "isoyear": "isoyear",
    "weekday": "dow",
    "timezone_hour": "timezone_hour",
    "timezone_minute": "timezone_minute",
}


def _part_function(name: str, part: str) -> Function:
    out = "DOUBLE" if part_name(part) in DOUBLE_PARTS else "BIGINT"
    return Function(
        name,
        SCALAR,
        "dates",
        f"{name}(DATE | TIMESTAMP) -> {out}",
        f"date_part('{part_name(part)}', x).",
        bind=_bind_one_part(part),
        rewrites_to=("extract",),
    )


def _bind_nanosecond(args, site):
    """nanosecond(x): the nanoseconds of the minute (microseconds times 1000)."""
    if len(args) != 1:
        raise BinderError(f"{site.name}() takes one DATE or TIMESTAMP")
    micros = extract_part("microseconds", args[0])
    return Call("mul", (micros, Literal(1000, T.BIGINT)), T.BIGINT)


def _internal(name, signature, doc, evaluate, strict=False, kind=SCALAR):
    return Function(name, kind, "dates", signature, doc, evaluate=evaluate, strict=strict, internal=True)


FUNCTIONS = [
    Function(
        "date_part",
        SCALAR,
        "dates",
        "date_part(VARCHAR part, DATE | TIMESTAMP) -> BIGINT | DOUBLE; EXTRACT(part FROM x)",
        "A field of the date or time (year, month, dow, epoch ...).",
        aliases=("datepart",),
        bind=_bind_date_part,
        rewrites_to=("extract",),
    ),
    *(_part_function(name, part) for name, part in _PART_FUNCTIONS.items()),
    Function(
        "nanosecond",
        SCALAR,
        "dates",
        "nanosecond(DATE | TIMESTAMP) -> BIGINT",
        "Nanoseconds of the minute (the seconds and their fraction, in nanoseconds).",
        bind=_bind_nanosecond,
        rewrites_to=("extract", "mul"),
    ),
    Function(
        "epoch_ms",
        SCALAR,
        "dates",
        "epoch_ms(DATE | TIMESTAMP) -> BIGINT; epoch_ms(BIGINT) -> TIMESTAMP",
        "Milliseconds since 1970-01-01; the TIMESTAMP that many milliseconds after it.",
        bind=_bind_epoch_ms,
        rewrites_to=("epoch_unit", "timestamp_from_epoch_ms"),
    ),
    *(
        Function(
            f"epoch_{u}",
            SCALAR,
            "dates",
            f"epoch_{u}(DATE | TIMESTAMP) -> BIGINT",
            f"{what} since 1970-01-01.",
            bind=_bind_epoch_unit(u),
            rewrites_to=("epoch_unit",),
        )
        for u, what in (("us", "Microseconds"), ("ns", "Nanoseconds"))
    ),
    Function(
        "make_timestamp",
        SCALAR,
        "dates",
        "make_timestamp(BIGINT year, month, day, hour, minute, DOUBLE "
        "seconds) -> TIMESTAMP; make_timestamp(BIGINT micros) -> TIMESTAMP",
        "The TIMESTAMP of its parts, or that many microseconds after 1970-01-01.",
        bind=_bind_make_timestamp,
        evaluate=lambda e, cols: TS.make_timestamp(cols),
    ),
    Function(
        "make_date",
        SCALAR,
        "dates",
        "make_date(BIGINT year, BIGINT month, BIGINT day) -> DATE",
        "The DATE of its parts.",
        bind=_bind_make_date,
        evaluate=lambda e, cols: days.make_date(*cols),
    ),
    Function(
        "date_trunc",
        SCALAR,
        "dates",
        "date_trunc(VARCHAR part, DATE | TIMESTAMP) -> DATE | TIMESTAMP",
        "Truncated to the part (a DATE for a day or longer).",
        aliases=("datetrunc",),
        bind=_bind_trunc,
        evaluate=lambda e, cols: TS.trunc(e.params[0], cols[0]),
    ),
    Function(
        "date_diff",
        SCALAR,
        "dates",
        "date_diff(VARCHAR part, start, end) -> BIGINT",
        "Number of part boundaries crossed from start to end.",
        aliases=("datediff",),
        bind=_bind_difference("date_diff"),
        evaluate=lambda e, cols: TS.diff(e.params[0], *cols),
    ),
    Function(
        "date_sub",
        SCALAR,
        "dates",
        "date_sub(VARCHAR part, start, end) -> BIGINT",
        "Number of whole parts from start to end.",
        aliases=("datesub",),
        bind=_bind_difference("date_sub"),
        evaluate=lambda e, cols: TS.sub(e.params[0], *cols),
    ),
    Function(
        "date_add",
        SCALAR,
        "dates",
        "date_add(DATE | TIMESTAMP, INTERVAL | INTEGER days) -> DATE | TIMESTAMP",
        "The date plus an interval (or days).",
        bind=_bind_date_add,
        rewrites_to=("add", "date_add_days", "add_interval"),
    ),
    Function(
        "monthname",
        SCALAR,
        "dates",
        "monthname(DATE | TIMESTAMP) -> VARCHAR",
        "The month's English name.",
        bind=_bind_named("monthname", "month", _MONTH_NAMES),
        rewrites_to=("calendar_name",),
    ),
    Function(
        "dayname",
        SCALAR,
        "dates",
        "dayname(DATE | TIMESTAMP) -> VARCHAR",
        "The weekday's English name.",
        bind=_bind_named("dayname", "dow", _DAY_NAMES),
        rewrites_to=("calendar_name",),
    ),
    Function(
        "last_day",
        SCALAR,
        "dates",
        "last_day(DATE | TIMESTAMP) -> DATE",
        "The last day of the month.",
        bind=_bind_last_day,
        evaluate=lambda e, cols: TS.last_day(cols[0]),
    ),
    Function(
        "strftime",
        SCALAR,
        "dates",
        "strftime(DATE | TIMESTAMP, VARCHAR format) -> VARCHAR",
        "The date or timestamp as text in a strftime format (%Y %m %d %H %M %S %f %b %A %j ...).",
        bind=_bind_strftime,
        evaluate=lambda e, cols: strftime(cols[0], parse_format(e.params[0])),
        strict=True,
    ),
    Function(
        "strptime",
        SCALAR,
        "dates",
        "strptime(VARCHAR, VARCHAR format) -> TIMESTAMP",
        "Text parsed by a strptime format; an error where it does not match.",
        bind=_bind_strptime(False),
        evaluate=lambda e, cols: strptime(cols[0], e.params[0], e.params[1]),
        strict=True,
    ),
    Function(
        "try_strptime",
        SCALAR,
        "dates",
        "try_strptime(VARCHAR, VARCHAR format) -> TIMESTAMP",
        "Text parsed by a strptime format; NULL where it does not match.",
        bind=_bind_strptime(True),
        rewrites_to=("strptime",),
    ),
    Function(
        "time_bucket",
        SCALAR,
        "dates",
        "time_bucket(INTERVAL width, DATE | TIMESTAMP [, INTERVAL offset | DATE | TIMESTAMP origin]) -> DATE | TIMESTAMP",
        "The start of the bucket of the given width the value falls in (buckets from 2000-01-03, or 2000-01 for months).",
        bind=_bind_time_bucket,
        evaluate=_time_bucket,
        strict=True,
    ),
    _internal(
        "extract",
        "extract(DATE | TIMESTAMP, part) -> BIGINT | DOUBLE",
        "date_part(part, x).",
        lambda e, cols: TS.extract(e.params[0], cols[0]),
        strict=True,
    ),
    _internal(
        "epoch_unit",
        "epoch_unit(DATE | TIMESTAMP, unit) -> BIGINT",
        "Milliseconds, microseconds or nanoseconds since 1970-01-01.",
        lambda e, cols: TS.epoch_unit(e.params[0], cols[0]),
    ),
    _internal(
        "timestamp_from_micros",
        "timestamp_from_micros(BIGINT) -> TIMESTAMP",
        "make_timestamp(micros).",
        lambda e, cols: TS.from_micros(cols[0]),
    ),
    _internal(
        "timestamp_from_epoch_ms",
        "timestamp_from_epoch_ms(BIGINT) -> TIMESTAMP",
        "epoch_ms(milliseconds).",
        lambda e, cols: TS.from_epoch_ms(cols[0]),
    ),
    _internal(
        "calendar_name",
        "calendar_name(DATE | TIMESTAMP, part, names) -> VARCHAR",
        "monthname, dayname.",
        lambda e, cols: TS.calendar_name(*e.params, cols[0]),
    ),
    _internal(
        "date_add_days",
        "date_add_days(DATE, INTEGER, sign) -> DATE",
        "DATE + n, DATE - n.",
        _date_add_days,
        strict=True,
        kind=OPERATOR,
    ),
    _internal(
        "date_diff_days",
        "date_diff_days(DATE, DATE) -> BIGINT",
        "DATE - DATE (days).",
        _date_diff_days,
        strict=True,
        kind=OPERATOR,
    ),
    _internal(
        "add_interval",
        "add_interval(DATE | TIMESTAMP, months, days, micros) -> TIMESTAMP",
        "DATE or TIMESTAMP + INTERVAL, - INTERVAL.",
        lambda e, cols: TS.add_interval(cols[0], *e.params),
        strict=True,
        kind=OPERATOR,
    ),
]
