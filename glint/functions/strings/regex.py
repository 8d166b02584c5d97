"""Regular expressions: regexp_matches, regexp_full_match (``~``, SIMILAR
TO), regexp_replace and regexp_extract, with DuckDB's semantics.

DuckDB runs RE2; so does pyarrow.compute, so each distinct string is
matched on the host by Arrow's RE2 kernels and the result is gathered to
the rows by code on the device (:func:`.host.map_dictionary`). A
pattern (or replacement) that is a column is applied once per distinct
(string, pattern, replacement) combination, one Arrow call per distinct
pattern (:mod:`.combos`).

Arrow's own first-match replacement re-matches the pattern inside the text
it found, which differs from RE2::Replace at anchors and word boundaries;
the first match is instead located by anchored forms of the pattern
(:meth:`.regex_syntax.Regex.split`) and the string spliced around its
rewrite, as RE2::Replace does. Rewrites follow RE2: a reference to a group
the pattern lacks leaves the string unchanged, an invalid escape stops a
global rewrite there and cancels a first-match one.

>>> c = Column.from_arrow(pa.array(["abcb", None, "xyz", ""]))
>>> regexp_matches(c, "b.", RegexOptions()).to_arrow().to_pylist()
[True, None, False, False]
>>> regexp_replace(c, "(b)", r"<\\1>", RegexOptions()).to_arrow().to_pylist()
['a<b>cb', None, 'xyz', '']
>>> regexp_replace(c, "b", "-", parse_options("g", True)).to_arrow().to_pylist()
['a-c-', None, 'xyz', '']
>>> regexp_extract(c, "([a-c])(.)", 2, RegexOptions()).to_arrow().to_pylist()
['b', None, '', '']
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.functions.strings.combos import by_groups, per_combination
from glint.functions.strings.host import host_bytes, map_dictionary, parallel_apply, require_varchar, splice  # noqa: F401
from glint.functions.strings.regex_syntax import Regex, RegexOptions, Rewrite, parse_options, parse_rewrite  # noqa: F401


# --------------------------------------------------------- on host arrays
def _replace(v: pa.Array, pattern: str, rewrite: str) -> pa.Array:
    return parallel_apply(lambda x: pc.replace_substring_regex(x, pattern, rewrite), v)


def _search(v: pa.Array, pattern: str) -> pa.Array:
    return parallel_apply(lambda x: pc.match_substring_regex(x, pattern), v)


def matches_host(v: pa.Array, rx: Regex, full: bool) -> pa.Array:
    """Does each string match (anywhere, or as a whole)?"""
    return _search(v, rx.full if full else rx.search)


def _np(a) -> np.ndarray:
    return np.asarray(a.to_numpy(zero_copy_only=False))


def _constant(text: str, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    raw = np.frombuffer(text.encode(), dtype=np.uint8)
    return raw, np.zeros(n, dtype=np.int64), np.full(n, len(raw), dtype=np.int64)


def _whole(a: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    data, offs = host_bytes(a)
    return data, offs[:-1], offs[1:] - offs[:-1]


def _replace_first(v: pa.Array, rx: Regex, rw: Rewrite) -> pa.Array:
    """RE2::Replace on strings that all match: the text before the first
    match, the match rewritten, the text after it."""
    n = len(v)
    data, offs = host_bytes(v)
    start = _np(pc.binary_length(_replace(v, rx.split("head"), r"\1"))).astype(np.int64)
    end = _np(pc.binary_length(_replace(v, rx.split("through"), r"\1"))).astype(np.int64)
    pieces = [(data, offs[:-1], start)]
    run: list = []

    def flush():
        if run:
            pieces.append(_whole(_replace(v, rx.split("groups"), Rewrite(tuple(run), True, 0).as_re2())))
            run.clear()

    for kind, val in rw.parts:
        if kind == "G" and val == 0:
            flush()
            pieces.append((data, offs[:-1] + start, end - start))
        elif kind == "L" and not run:
            pieces.append(_constant(val, n))
        else:
            run.append((kind, val))
    flush()
    pieces.append((data, offs[:-1] + end, offs[1:] - offs[:-1] - end))
    return splice(pieces)


def replace_host(v: pa.Array, rx: Regex, rw: Rewrite) -> pa.Array:
    """regexp_replace of each string (RE2::GlobalReplace with the 'g' option,
    RE2::Replace without)."""
    if not rx.groups_at_least(rw.max_group):
        return v
    if rx.options.global_replace:
        return _replace(v, rx.search, rw.as_re2())
    if not rw.valid or len(v) == 0:
        return v
    hit = _np(_search(v, rx.search)).astype(bool)
    if not hit.any():
        return v
    idx = np.flatnonzero(hit)
    done = _replace_first(v.take(pa.array(idx)), rx, rw)
    keep = np.flatnonzero(~hit)
    whole = pa.concat_arrays([done, v.take(pa.array(keep)).cast(pa.large_string())])
    back = np.empty(len(v), dtype=np.int64)
    back[np.concatenate([idx, keep])] = np.arange(len(v))
    return whole.take(pa.array(back))


def extract_host(v: pa.Array, rx: Regex, group: int | None) -> pa.Array:
    """regexp_extract of each string: group ``group`` of the first match, ''
    when there is none, when the pattern has fewer groups, or when the group
    is NULL (as RE2::Extract with the rewrite "\\" + group)."""
    empty = pa.array(np.full(len(v), "", dtype=object), pa.string())
    if group is None or not rx.groups_at_least(group):
        return empty
    got = _replace(v, rx.split("match"), r"\1") if group == 0 else _replace(v, rx.split("groups"), f"\\{group}")
    return pc.if_else(_search(v, rx.search), got, empty)


# -------------------------------------------------------------- on columns
def regexp_matches(col: Column, pattern: str | Column, options: RegexOptions, full: bool = False) -> Column:
    """regexp_matches (``full``: regexp_full_match, ``~``, SIMILAR TO)."""
    return _by_pattern(col, pattern, options, lambda v, rx: matches_host(v, rx, full), T.BOOLEAN, "regexp_matches")


def _by_pattern(col: Column, pattern: str | Column, options: RegexOptions, fn, dtype: T.DataType, name: str) -> Column:
    """fn(host strings, Regex) once per distinct string (a constant pattern)
    or per distinct (string, pattern) combination, one Regex per pattern."""
    col = require_varchar(col, name)
    if isinstance(pattern, str):
        rx = Regex(pattern, options)
        return map_dictionary(col, lambda v: fn(v, rx))
    return per_combination(
        [col, require_varchar(pattern, name)],
        lambda s, p: by_groups([p], lambda _, vals, key: fn(vals[0], Regex(key[0], options)), [s]),
        dtype,
    )


def regexp_replace(col: Column, pattern: str | Column, rewrite: str | Column, options: RegexOptions) -> Column:
    col = require_varchar(col, "regexp_replace")
    if isinstance(pattern, str) and isinstance(rewrite, str):
        rx, rw = Regex(pattern, options), parse_rewrite(rewrite)
        return map_dictionary(col, lambda v: replace_host(v, rx, rw))
    args = [col] + [require_varchar(a, "regexp_replace") for a in (pattern, rewrite) if isinstance(a, Column)]
    const_p = pattern if isinstance(pattern, str) else None
    const_r = rewrite if isinstance(rewrite, str) else None

    def per_key(_, vals, key):
        keys = list(key)
        p = const_p if const_p is not None else keys.pop(0)
        r = const_r if const_r is not None else keys.pop(0)
        return replace_host(vals[0], Regex(p, options), parse_rewrite(r))

    return per_combination(args, lambda s, *keys: by_groups(list(keys), per_key, [s]), T.VARCHAR)


def regexp_extract(col: Column, pattern: str | Column, group: int | None, options: RegexOptions) -> Column:
    return _by_pattern(col, pattern, options, lambda v, rx: extract_host(v, rx, group), T.VARCHAR, "regexp_extract")
