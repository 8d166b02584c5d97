"""LIKE / ILIKE [ESCAPE], on the device. A constant pattern is compiled
once (glint.kernels.strings.like) and matched once per dictionary entry; a
pattern that varies by row (``s LIKE p``, ``s LIKE '%' || x || '%'``) is
matched once per distinct (string, pattern) pair of dictionary codes by
:func:`glint.kernels.strings.like_rows.match_pairs`, and the results are
gathered to the rows.

ILIKE lower-cases the strings and the patterns first (utf8proc's mapping,
as DuckDB does), and looks for the escape character in the lower-cased
pattern. A pattern that ends in a lone escape character raises DuckDB's
error only for rows whose matching reaches it.

>>> s = Column.from_arrow(pa.array(["abc", "ABC", None, "a_c"]))
>>> p = Column.from_arrow(pa.array(["a%", "a%", "a%", "a#_c"]))
>>> like_rows(s, p, "#").to_arrow().to_pylist(), like_rows(s, p, None, True).to_arrow().to_pylist()
([True, False, None, True], [True, True, None, False])
>>> like(s, "%c", case_insensitive=True).to_arrow().to_pylist()
[True, True, None, True]
"""

from __future__ import annotations

import pyarrow as pa  # noqa: F401  (doctests)
import torch

from glint.columnar import types as T
from glint.columnar.column import Column, Dictionary
from glint.errors import ExecutionError
from glint.functions.strings.core import lower
from glint.functions.strings.host import and_valid, lower_scalar, require_varchar
from glint.kernels.strings import like as L
from glint.kernels.strings.columns import per_entry
from glint.kernels.strings.like_rows import match_pairs

LONE_ESCAPE = "Syntax Error: Like pattern must not end with escape character!"


def escape_byte(escape: str | None) -> int | None:
    """The escape character as a byte; DuckDB accepts one byte or none.

    >>> escape_byte("#"), escape_byte(""), escape_byte(None)
    (35, None, None)
    """
    if escape is None or escape == "":
        return None
    raw = escape.encode()
    if len(raw) > 1:
        raise ExecutionError("Syntax Error: Invalid escape string. Escape string must be empty or one character.")
    return raw[0]


def like_rows(col: Column, pattern: Column, escape: str | None, case_insensitive: bool = False) -> Column:
    """col [I]LIKE pattern [ESCAPE escape], row by row (NULL when either is)."""
    col, pattern = require_varchar(col, "LIKE"), require_varchar(pattern, "LIKE")
    esc = escape_byte(escape)
    if case_insensitive:
        col, pattern = lower(col), lower(pattern)
    n, dev = len(col), col.device
    valid = and_valid(col.valid, pattern.valid)
    rows = torch.arange(n, device=dev) if valid is None else valid.nonzero().squeeze(1)
    out = torch.zeros(n, dtype=torch.bool, device=dev)
    if rows.numel():
        width = max(len(pattern.dictionary), 1)
        key = col.data[rows].long() * width + pattern.data[rows].long()
        pairs, inverse = torch.unique(key, return_inverse=True)
        s = col.dictionary.pieces(pairs // width)
        patterns, pattern_of = torch.unique(pairs % width, return_inverse=True)
        ok, err = match_pairs(s, pattern.dictionary.pieces(patterns), esc, pattern_of)
        if bool(err.any()):
            raise ExecutionError(LONE_ESCAPE)
        out[rows] = ok[inverse]
    return Column(T.BOOLEAN, out, valid)


# ---------------------------------------------------------------------- LIKE
def like(col: Column, pattern: str, escape: str | None = None, case_insensitive: bool = False) -> Column:
    """col [I]LIKE pattern [ESCAPE escape] -> BOOLEAN.

    ``%`` matches any run of characters (newlines included), ``_`` exactly one
    code point. There is no escape character unless one is given; a pattern
    ending in a lone escape character is an error for the rows whose
    matching reaches it (:func:`like_rows`). ILIKE lower-cases both sides (as
    DuckDB does) before matching.

    >>> c = Column.from_arrow(pa.array(["a%b", "axb", "A.B", None]))
    >>> like(c, "a\\\\%b", escape="\\\\").to_arrow().to_pylist()
    [True, False, False, None]
    >>> like(c, "a_b", case_insensitive=True).to_arrow().to_pylist()
    [True, True, True, None]
    >>> like(c, "a.b").to_arrow().to_pylist()
    [False, False, False, None]
    """
    col = require_varchar(col, "LIKE")
    esc = escape if escape_byte(escape) is not None else None
    if case_insensitive:
        # DuckDB lower-cases the pattern, then looks for the escape character in it
        pattern = lower_scalar(pattern)
    if esc is not None and ends_in_lone_escape(pattern, esc):
        # an error only where matching gets there: match row by row
        return like_rows(
            col,
            Column(
                T.VARCHAR,
                torch.zeros(len(col), dtype=torch.int32, device=col.device),
                None,
                Dictionary.from_pylist([pattern], col.device),
            ),
            esc,
            case_insensitive,
        )
    try:
        pat = L.compile_like(pattern, esc)
    except L.PatternError as e:
        raise ExecutionError(str(e)) from None
    if case_insensitive:
        col = lower(col)
    return Column(T.BOOLEAN, per_entry(col, ("like", pattern, esc), lambda p: L.match(p, pat)), col.valid)


def ends_in_lone_escape(pattern: str, escape: str) -> bool:
    """Does the pattern end in an escape character that escapes nothing?

    >>> ends_in_lone_escape("a#", "#"), ends_in_lone_escape("a##", "#"), ends_in_lone_escape("###", "#")
    (True, False, True)
    """
    run = len(pattern) - len(pattern.rstrip(escape))
    return run % 2 == 1
