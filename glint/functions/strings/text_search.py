"""String functions that look for a needle: starts_with / prefix, ends_with
/ suffix, contains, strpos / instr / position, replace, split_part, and
trim / ltrim / rtrim with a set of characters. Each takes its needle as a
constant (``str``) or per row (a VARCHAR :class:`Column`).

Constant needles: the device kernels work once per dictionary entry
(starts_with, ends_with, contains), or the host once per distinct string
(strpos, replace, split_part, trim; pyarrow.compute). Per-row needles:
starts_with / ends_with / contains / strpos compare or search each row's
pair on the device (:mod:`glint.kernels.strings.search_pairs`); replace,
split_part and trim run on the host once per distinct combination of their
arguments (:mod:`.combos`).

Positions count code points; an empty needle is found at position 1.

>>> s = Column.from_arrow(pa.array(["héllo", "abc", None, "xyz"]))
>>> t = Column.from_arrow(pa.array(["l", "c", "a", ""]))
>>> strpos(s, t).to_arrow().to_pylist(), ends_with(s, "lo").to_arrow().to_pylist()
([3, 3, None, 1], [True, False, None, False])
>>> split_part(Column.from_arrow(pa.array(["a,b,,c", "x"])), ",", -1).to_arrow().to_pylist()
['c', 'x']
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.functions.strings import core as S
from glint.functions.strings import host as H
from glint.functions.strings.combos import by_groups, per_combination
from glint.functions.strings.host import and_valid, host_bytes, map_dictionary, require_varchar, splice
from glint.kernels.strings.counting import count_chars
from glint.kernels.strings.equality import pair_equal
from glint.kernels.strings.pieces import Pieces
from glint.kernels.strings.search import match_at
from glint.kernels.strings.search_pairs import find_pairs


def row_pieces(col: Column) -> Pieces:
    """The string of each row as a piece (NULL rows: whatever their code holds)."""
    return col.dictionary.pieces(col.data)


def _pair_result(s: Column, t: Column, values: torch.Tensor, dtype: T.DataType) -> Column:
    return Column(dtype, values, and_valid(s.valid, t.valid))


# ------------------------------------------------------------ comparisons
def starts_with(col: Column, prefix: str | Column) -> Column:
    col = require_varchar(col, "starts_with")
    if isinstance(prefix, str):
        return S.starts_with(col, prefix)
    prefix = require_varchar(prefix, "starts_with")
    s, t = row_pieces(col), row_pieces(prefix)
    head = Pieces(s.data, s.starts, torch.minimum(s.lengths, t.lengths))
    return _pair_result(col, prefix, pair_equal(head, t), T.BOOLEAN)


def ends_with(col: Column, suffix: str | Column) -> Column:
    col = require_varchar(col, "ends_with")
    if isinstance(suffix, str):
        lit = suffix.encode()
        p, index = S.work_set(col)
        hit = match_at(p, lit, p.lengths - len(lit))
        return Column(T.BOOLEAN, hit[index], col.valid)
    suffix = require_varchar(suffix, "ends_with")
    s, t = row_pieces(col), row_pieces(suffix)
    k = torch.minimum(s.lengths, t.lengths)
    tail = Pieces(s.data, s.starts + s.lengths - k, k)
    return _pair_result(col, suffix, pair_equal(tail, t), T.BOOLEAN)


def contains(col: Column, needle: str | Column) -> Column:
    col = require_varchar(col, "contains")
    if isinstance(needle, str):
        return S.contains(col, needle)
    needle = require_varchar(needle, "contains")
    return _pair_result(col, needle, find_pairs(row_pieces(col), row_pieces(needle)) >= 0, T.BOOLEAN)


def strpos(col: Column, needle: str | Column) -> Column:
    """1-based code-point position of the first occurrence (0: none)."""
    col = require_varchar(col, "strpos")
    if isinstance(needle, str):
        return H.strpos(col, needle)
    needle = require_varchar(needle, "strpos")
    s = row_pieces(col)
    at = find_pairs(s, row_pieces(needle))
    before = count_chars(Pieces(s.data, s.starts, at.clamp(min=0)))
    return _pair_result(col, needle, torch.where(at >= 0, before + 1, 0), T.BIGINT)


# ------------------------------------------------------- host, per string
def replace(col: Column, old: str | Column, new: str | Column) -> Column:
    """REPLACE(s, old, new): every non-overlapping occurrence, left to right;
    an empty ``old`` changes nothing."""
    col = require_varchar(col, "replace")
    if isinstance(old, str) and isinstance(new, str):
        return H.replace(col, old, new)
    const = [old if isinstance(old, str) else None, new if isinstance(new, str) else None]
    keys = [require_varchar(a, "replace") for a in (old, new) if isinstance(a, Column)]

    def per_key(_, vals, key):
        key = list(key)
        o, n = (c if c is not None else key.pop(0) for c in const)
        return vals[0] if o == "" else pc.replace_substring(vals[0], o, n)

    return per_combination([col, *keys], lambda v, *k: by_groups(list(k), per_key, [v]), T.VARCHAR)


def split_host(v: pa.Array, delim: str, index: np.ndarray) -> pa.Array:
    """split_part for host strings: part index[i] (1-based; negative counts
    from the end; 0 or beyond the parts gives '') of v[i] split at every
    non-overlapping ``delim``, or at every code point when it is ''.

    >>> split_host(pa.array(["a,b", "é,x,y", ""]), ",", np.array([2, -3, 1])).to_pylist()
    ['b', 'é', '']
    >>> split_host(pa.array(["héllo", "ab"]), "", np.array([2, -1])).to_pylist()
    ['é', 'b']
    """
    if delim == "":
        data, offs = host_bytes(v)
        lead = (data & 0xC0) != 0x80
        cps = np.flatnonzero(lead)  # byte position of every code point
        first = np.searchsorted(cps, offs[:-1])
        count = np.searchsorted(cps, offs[1:]) - first  # code points of each string
        ends = np.append(cps[1:], len(data)) if len(cps) else cps
    else:
        parts = pc.split_pattern(v, delim)
        values = parts.flatten()
        data, voffs = host_bytes(values)
        loffs = np.asarray(parts.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
        first, count = loffs[:-1], loffs[1:] - loffs[:-1]
        cps, ends = voffs[:-1], voffs[1:]
    index = np.asarray(index, dtype=np.int64)
    pick = np.where(index > 0, index - 1, count + index)
    ok = (index != 0) & (pick >= 0) & (pick < count)
    at = np.where(ok, first + np.where(ok, pick, 0), 0)
    start = cps[at] if len(cps) else np.zeros(len(v), np.int64)
    length = np.where(ok, (ends[at] if len(ends) else 0) - start, 0)
    return splice([(data, np.where(ok, start, 0).astype(np.int64), length.astype(np.int64))])


def split_part(col: Column, delim: str | Column, index: int | Column) -> Column:
    col = require_varchar(col, "split_part")
    if isinstance(delim, str) and isinstance(index, int):
        return map_dictionary(col, lambda v: split_host(v, delim, np.full(len(v), index, dtype=np.int64)))
    cols = (
        [col]
        + ([require_varchar(delim, "split_part")] if isinstance(delim, Column) else [])
        + ([index] if isinstance(index, Column) else [])
    )

    def run(v, *rest):
        rest = list(rest)
        d = rest.pop(0) if isinstance(delim, Column) else None
        idx = (
            rest.pop(0).to_numpy(zero_copy_only=False)
            if isinstance(index, Column)
            else np.full(len(v), index, dtype=np.int64)
        )
        if d is None:
            return split_host(v, delim, idx)
        return by_groups([d], lambda pos, vals, key: split_host(vals[0], key[0], idx[pos]), [v])

    return per_combination(cols, run, T.VARCHAR)


def trim_chars(col: Column, chars: str | Column, side: str) -> Column:
    """trim / ltrim / rtrim (side "both", "left", "right") of any of the code
    points of ``chars``."""
    col = require_varchar(col, "trim")
    fn = {"both": pc.utf8_trim, "left": pc.utf8_ltrim, "right": pc.utf8_rtrim}[side]
    if isinstance(chars, str):
        return col if chars == "" else map_dictionary(col, lambda v: fn(v, chars))
    chars = require_varchar(chars, "trim")
    return per_combination(
        [col, chars],
        lambda v, c: by_groups([c], lambda _, vals, key: vals[0] if key[0] == "" else fn(vals[0], key[0]), [v]),
        T.VARCHAR,
    )
