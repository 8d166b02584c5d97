"""Evaluation of the string functions' Call nodes (registered into
glint.exec.expr_eval's table). A constant argument (a Literal) reaches the
function as a Python value, so that the work is done once per dictionary
entry; any other argument as a column.

>>> import pyarrow as pa
>>> from glint.columnar import types as T
>>> from glint.plan.expr import Call, ColRef, Field, Literal
>>> from glint.columnar.column import Batch, Column
>>> f = Field(1, "s", T.VARCHAR)
>>> b = Batch({1: Column.from_arrow(pa.array(["a-b", "c"]))}, 2)
>>> e = Call("split_part", (ColRef(f), Literal("-", T.VARCHAR), Literal(2, T.BIGINT)), T.VARCHAR)
>>> evaluate(e, b).to_arrow().to_pylist()
['b', '']
"""
from __future__ import annotations

from glint.plan.expr import Call, Literal
from glint.columnar.column import Column
from glint.exec.expr_eval import evaluate
from glint.functions.strings import regex as R
from glint.functions.strings import core as S
from glint.functions.strings import text_build as B
from glint.functions.strings import text_search as Q
from glint.functions.strings.like import like, like_rows


def _arg(e: Call, i: int, batch) -> object:
    """Argument i: a Literal's value, or the evaluated column."""
    a = e.args[i]
    if isinstance(a, Literal) and a.value is not None:
        return a.value
    return evaluate(a, batch)


def _col(e: Call, i: int, batch) -> Column:
    return evaluate(e.args[i], batch)


def _like(e, batch):
    pattern, escape, ci = e.params
    return like(_col(e, 0, batch), pattern, escape, ci)


def _like_rows(e, batch):
    escape, ci = e.params
    return like_rows(_col(e, 0, batch), _col(e, 1, batch), escape, ci)


def _substring(e, batch):
    if e.params:
        return S.substring(_col(e, 0, batch), *e.params)
    a, start, *length = (evaluate(x, batch) for x in e.args)
    return S.substring(a, start, length[0] if length else None)


def _concat(e, batch):
    return S.concat([evaluate(a, batch) for a in e.args], null_is_empty=e.params[0])


def _unary(fn):
    return lambda e, batch: fn(_col(e, 0, batch))


def _regexp_matches(e, batch):
    options, full = e.params
    return R.regexp_matches(_col(e, 0, batch), _arg(e, 1, batch), R.parse_options(options), full)


def _regexp_replace(e, batch):
    (options,) = e.params
    return R.regexp_replace(_col(e, 0, batch), _arg(e, 1, batch), _arg(e, 2, batch),
                            R.parse_options(options, allow_global=True))


def _regexp_extract(e, batch):
    group, options = e.params
    return R.regexp_extract(_col(e, 0, batch), _arg(e, 1, batch), group, R.parse_options(options))


def _with_args(fn, n: int):
    """fn(column, arg1, ...) for a Call with the string first and n more arguments."""
    return lambda e, batch: fn(_col(e, 0, batch), *(_arg(e, i, batch) for i in range(1, n + 1)))


def _pad(left: bool):
    return lambda e, batch: B.pad(_col(e, 0, batch), _arg(e, 1, batch), _arg(e, 2, batch), left)


def _trim_chars(side: str):
    return lambda e, batch: Q.trim_chars(_col(e, 0, batch), _arg(e, 1, batch), side)


def _concat_ws(e, batch):
    return B.concat_ws(_col(e, 0, batch), [evaluate(a, batch) for a in e.args[1:]])


STRING_FUNCS = {
    "like": _like, "like_rows": _like_rows, "substring": _substring, "concat": _concat,
    "upper": _unary(S.upper), "lower": _unary(S.lower), "length": _unary(S.length),
    "trim": _unary(S.trim), "ltrim": _unary(S.ltrim), "rtrim": _unary(S.rtrim),
    "trim_chars": _trim_chars("both"), "ltrim_chars": _trim_chars("left"), "rtrim_chars": _trim_chars("right"),
    "regexp_matches": _regexp_matches, "regexp_replace": _regexp_replace, "regexp_extract": _regexp_extract,
    "starts_with": _with_args(Q.starts_with, 1), "ends_with": _with_args(Q.ends_with, 1),
    "contains": _with_args(Q.contains, 1), "strpos": _with_args(Q.strpos, 1),
    "replace": _with_args(Q.replace, 2), "split_part": _with_args(Q.split_part, 2),
    "lpad": _pad(True), "rpad": _pad(False), "left": _with_args(B.left, 1), "right": _with_args(B.right, 1),
    "repeat": _with_args(B.repeat, 1), "concat_ws": _concat_ws, "chr": _unary(B.chr_),
    "ascii": _unary(B.ascii), "unicode": _unary(B.unicode), "md5": _unary(B.md5),
    "strlen": _unary(B.byte_length), "bit_length": lambda e, batch: B.byte_length(_col(e, 0, batch), bits=True),
    "reverse": _unary(B.reverse),
}
