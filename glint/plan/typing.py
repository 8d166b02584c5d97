"""Type rules that build typed expression nodes: implicit casts, arithmetic
result types, literal typing. Shared by the binder and the optimizer.

>>> from glint.plan.expr import Literal
>>> v = literal_number("100.00"); v.value, v.type
(10000, DECIMAL(5,2))
>>> arith("mul", literal_number("0.2"), literal_number("3")).type
DECIMAL(12,1)
"""

from __future__ import annotations

import re
from decimal import Decimal

from glint.columnar import types as T
from glint.columnar.types import DataType
from glint.errors import BinderError, NotSupported, TypeMismatch
from glint.plan.expr import Call, Expr, Literal

CMP = ("eq", "ne", "lt", "le", "gt", "ge")


def show(e) -> str:
    """An expression as the user wrote it, without glint's internal column ids."""
    return re.sub(r"#\d+", "", repr(e))


_CMP_SQL = {
    "eq": "=",
    "ne": "<>",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "intdiv": "//",
    "mod": "%",
}


def literal_number(text: str) -> Literal:
    """Type a numeric literal as DuckDB does: INTEGER, BIGINT, DECIMAL or DOUBLE."""
    if any(c in text for c in "eE"):
        return Literal(float(text), T.DOUBLE)
    if "." in text:
        d = Decimal(text)
        sign, digits, exp = d.as_tuple()
        scale = -exp if exp < 0 else 0
        prec = max(len(digits) - scale, 1) + scale  # DuckDB: 0.2 is DECIMAL(2,1)
        if prec > 38:
            return Literal(float(text), T.DOUBLE)
        return Literal(int(d.scaleb(scale)), T.DECIMAL(prec, scale))
    v = int(text)
    if -(2**31) <= v < 2**31:
        return Literal(v, T.INTEGER)
    if -(2**63) <= v < 2**63:
        return Literal(v, T.BIGINT)
    raise NotSupported(f"integer literal {text} beyond 64 bits")


def cast(e: Expr, to: DataType) -> Expr:
    """e as type `to` (no-op when already so)."""
    if e.type == to:
        return e
    if e.type.kind == "NULL":
        return Literal(None, to) if isinstance(e, Literal) else Call("cast", (e,), to)
    return Call("cast", (e,), to)


def _check_comparable(a: DataType, b: DataType, what: str) -> DataType:
    try:
        return T.common_type(a, b)
    except TypeMismatch:
        raise TypeMismatch(f"Type mismatch in {what}: cannot compare {a} and {b}") from None


def compare(op: str, a: Expr, b: Expr) -> Expr:
    t = _check_comparable(a.type, b.type, f"{show(a)} {_CMP_SQL[op]} {show(b)}")
    if t.is_string:
        # text stays as it is (a literal compares with each dictionary entry); an untyped
        # NULL (a subquery's SELECT NULL) becomes text, so that both sides are strings
        return Call(op, tuple(cast(x, t) if x.type.kind == "NULL" else x for x in (a, b)), T.BOOLEAN)
    if t.is_decimal and (a.type.is_decimal or a.type.is_integer) and (b.type.is_decimal or b.type.is_integer):
        # exact numerics of different scales compare without scaling up (no overflow)
        return Call(op, (a, b), T.BOOLEAN)
    return Call(op, (cast(a, t), cast(b, t)), T.BOOLEAN)


def common_of(exprs, what: str) -> DataType:
    exprs = list(exprs)
    texts = [e for e in exprs if e.type.is_string]
    others = [e for e in exprs if not e.type.is_string and e.type.kind != "NULL"]
    if texts and others:
        if any(not (isinstance(e, Literal) and e.value is not None) for e in texts):
            raise TypeMismatch(
                f"Type mismatch in {what}: cannot mix values of type {others[0].type} and "
                "VARCHAR - an explicit cast is required"
            )
        exprs = others  # string literals are cast to the other values' type
    t = T.NULLTYPE
    for e in exprs:
        try:
            t = T.common_type(t, e.type)
        except TypeMismatch:
            raise TypeMismatch(f"Type mismatch in {what}: {t} and {e.type}") from None
    return t


def arith(op: str, a: Expr, b: Expr) -> Expr:
    ta, tb = a.type, b.type
    desc = f"{show(a)} {_CMP_SQL[op]} {show(b)}"
    if ta.kind == "NULL" and tb.kind == "NULL":
        return Literal(None, T.INTEGER)
    if "INTERVAL" in (ta.kind, tb.kind) and "NULL" in (ta.kind, tb.kind):
        raise BinderError(f"Could not choose a best candidate function for {desc}: add an explicit cast")
    if ta.kind == "NULL":  # an untyped NULL takes the other operand's type
        ta = tb
        a = cast(a, ta)
    if tb.kind == "NULL":
        tb = ta
        b = cast(b, tb)
    if {ta.kind, tb.kind} & {"DATE", "TIMESTAMP", "INTERVAL"}:
        return _date_arith(op, a, b, ta, tb, desc)
    if not (ta.is_numeric and tb.is_numeric):
        raise TypeMismatch(f"Type mismatch in {desc}: {op} is not defined for {ta} and {tb}")
    if op == "div":
        return Call("div", (cast(a, T.DOUBLE), cast(b, T.DOUBLE)), T.DOUBLE)
    if "DOUBLE" in (ta.kind, tb.kind) or (op == "intdiv" and (ta.is_decimal or tb.is_decimal)):
        # DuckDB: // with a DOUBLE or DECIMAL operand is DOUBLE division (7.5 // 2 = 3.75), but
        # NULL where the divisor is 0 (/ gives inf or NaN there): "intdiv" of DOUBLEs
        return Call(op, (cast(a, T.DOUBLE), cast(b, T.DOUBLE)), T.DOUBLE)
    if ta.is_integer and tb.is_integer:
        # an integer literal takes the other operand's narrower type when its value fits
        # (DuckDB's integer literals: INTEGER * -2147483648 is an INT32 product)
        if isinstance(b, Literal) and not isinstance(a, Literal) and _fits(b.value, ta):
            tb = ta
        elif isinstance(a, Literal) and not isinstance(b, Literal) and _fits(a.value, tb):
            ta = tb
        t = T.common_type(ta, tb)
        return Call(op, (cast(a, t), cast(b, t)), t)
    # exact decimals
    if op == "mod":
        da, db = T.as_decimal(ta), T.as_decimal(tb)
        scale = max(da.scale, db.scale)
        whole = max(da.precision - da.scale, db.precision - db.scale)
        if whole + scale > 38:  # DuckDB computes it in DOUBLE then
            return Call("mod", (cast(a, T.DOUBLE), cast(b, T.DOUBLE)), T.DOUBLE)
        t = T.DECIMAL(whole + scale, scale)
        return Call(op, (cast(a, t), cast(b, t)), t)
    rt = T.decimal_result("+" if op in ("add", "sub") else "*", ta, tb)
    if op in ("add", "sub"):
        return Call(op, (_rescale(a, rt.scale), _rescale(b, rt.scale)), rt)
    return Call("mul", (_as_decimal(a), _as_decimal(b)), rt)


def _fits(value, t: DataType) -> bool:
    bits = {"INTEGER": 32, "BIGINT": 64}.get(t.kind)
    return isinstance(value, int) and bits is not None and -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)


def _as_decimal(e: Expr) -> Expr:
    return e if e.type.is_decimal else cast(e, T.as_decimal(e.type))


def _rescale(e: Expr, scale: int) -> Expr:
    d = T.as_decimal(e.type)
    return cast(e, T.DECIMAL(min(38, d.precision - d.scale + scale), scale))


def _date_arith(op, a, b, ta, tb, desc) -> Expr:
    temporal = ("DATE", "TIMESTAMP")
    if ta.kind in temporal and tb.kind == "INTERVAL" and op in ("add", "sub"):
        if not isinstance(b, Literal):
            raise NotSupported("INTERVAL values that are not constants")
        sign = 1 if op == "add" else -1
        # DuckDB: DATE +/- INTERVAL is a TIMESTAMP
        return Call("add_interval", (a,), T.TIMESTAMP, tuple(sign * x for x in b.value))
    if ta.kind == "INTERVAL" and tb.kind in temporal and op == "add":
        return _date_arith(op, b, a, tb, ta, desc)
    if ta.kind == "DATE" and tb.is_integer and op in ("add", "sub"):
        return Call("date_add_days", (a, cast(b, T.BIGINT)), T.DATE, (1 if op == "add" else -1,))
    if ta.is_integer and tb.kind == "DATE" and op == "add":
        return Call("date_add_days", (b, cast(a, T.BIGINT)), T.DATE, (1,))
    if ta.kind == "DATE" and tb.kind == "DATE" and op == "sub":
        return Call("date_diff_days", (a, b), T.BIGINT)
    if ta.kind in temporal and tb.kind in temporal and op == "sub":
        raise NotSupported(f"{ta} - {tb} (its result is an INTERVAL): {desc}")
    if (
        ta.kind == "INTERVAL"
        and tb.kind == "INTERVAL"
        and isinstance(a, Literal)
        and isinstance(b, Literal)
        and op in ("add", "sub")
    ):
        s = 1 if op == "add" else -1
        return Literal(tuple(x + s * y for x, y in zip(a.value, b.value)), T.INTERVAL)
    if op == "mul" and "INTERVAL" in (ta.kind, tb.kind):
        iv, n = (a, b) if ta.kind == "INTERVAL" else (b, a)
        if isinstance(iv, Literal) and isinstance(n, Literal) and n.type.is_integer and isinstance(n.value, int):
            return Literal(tuple(x * n.value for x in iv.value), T.INTERVAL)
    if "INTERVAL" in (ta.kind, tb.kind) and ta.kind not in temporal and tb.kind not in temporal:
        raise NotSupported(f"INTERVAL arithmetic other than with constants: {desc}")
    raise TypeMismatch(f"Type mismatch in {desc}: {op} is not defined for {ta} and {tb}")


def require_boolean(e: Expr, where: str) -> Expr:
    if e.type.kind == "NULL":
        return Literal(None, T.BOOLEAN)
    if e.type.kind != "BOOLEAN":
        raise TypeMismatch(f"Type mismatch: {where} must be BOOLEAN, got {show(e)} of type {e.type}")
    return e


def assignable(src: DataType, dst: DataType) -> bool:
    """Whether a value of type src can be stored in a column of type dst
    (INSERT, UPDATE, DEFAULT): DuckDB casts implicitly between any numbers
    and BOOLEAN, from and to text, and NULL to anything; DATE only to DATE
    and text.

    >>> assignable(T.VARCHAR, T.INTEGER), assignable(T.BOOLEAN, T.DECIMAL(5, 2)), assignable(T.INTEGER, T.DATE)
    (True, True, False)
    """
    if src == dst or src.kind == "NULL" or src.is_string or dst.is_string:
        return True
    number = ("BOOLEAN",) + T.NUMERIC_KINDS
    return src.kind in number and dst.kind in number


def assign(e: Expr, to: DataType, target: str) -> Expr:
    """e cast to the type of the column it is stored in (``target`` names the column)."""
    if not assignable(e.type, to):
        raise TypeMismatch(
            f"cannot store a value of type {e.type} in {target} of type {to}: "
            f"Unimplemented type for cast ({e.type} -> {to})"
        )
    return cast(e, to)
