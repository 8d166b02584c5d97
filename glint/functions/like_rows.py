"""LIKE / ILIKE with a pattern that varies by row (``s LIKE p``, ``s LIKE
'%' || x || '%'``), on the device: each distinct (string, pattern) pair of
dictionary codes is matched once by :func:`glint.kernels.strings.like_rows.match_pairs`
and the results gathered to the rows.

ILIKE lower-cases the strings and the patterns first (utf8proc's mapping,
as DuckDB does), and looks for the escape character in the lower-cased
pattern. A pattern that ends in a lone escape character raises DuckDB's
error only for rows whose matching reaches it.

>>> s = Column.from_arrow(pa.array(["abc", "ABC", None, "a_c"]))
>>> p = Column.from_arrow(pa.array(["a%", "a%", "a%", "a#_c"]))
>>> like_rows(s, p, "#").to_arrow().to_pylist(), like_rows(s, p, None, True).to_arrow().to_pylist()
([True, False, None, True], [True, True, None, False])
"""
from __future__ import annotations

import pyarrow as pa  # noqa: F401  (doctests)
import torch

from glint.columnar import types as T
from glint.errors import ExecutionError
from glint.kernels.strings.like_rows import match_pairs
from glint.columnar.column import Column
from glint.functions.strings_host import and_valid, require_varchar

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
    from glint.functions.strings import lower
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
