"""VARCHAR columns as kernel input, and the per-row keys built from them:
content hashes (partitioning), exact equality ids (GROUP BY, joins, DISTINCT,
set operations) and byte-order ranks (ORDER BY, MIN / MAX, comparisons).

A column is codes into a dictionary of strings. Work happens once per
*entry* and is gathered to the rows by code when the dictionary has no more
entries than the column has rows (a Parquet page of 7 ship modes); when it
has more (a few rows left of a large dictionary), once per entry the rows
use (their distinct codes), so nothing is done for entries no row uses and
no bytes are copied.

Functions here read ``col.data`` (int32 codes), ``col.valid`` and
``col.dictionary`` (a glint.columnar.column.Dictionary) only.

>>> from glint.columnar.column import Column
>>> import pyarrow as pa
>>> a = Column.from_arrow(pa.array(["b", "a", None, "b"]))
>>> b = Column.from_arrow(pa.array(["a", "c"]))
>>> ka, kb = equality_keys([a, b])
>>> bool(ka[0] == ka[3]), bool(ka[1] == kb[0]), bool(kb[1] != ka[0])
(True, True, True)
>>> ra, rb = order_ranks([a, b])
>>> bool(ra[1] < ra[0] < rb[1])
True
>>> h = hash64(a)
>>> bool(h[0] == h[3]), int(h[2]) == NULL_HASH, bool(h[1] == hash64(b)[0])
(True, True, True)
"""

from __future__ import annotations

import torch

from glint.kernels.strings.equality import concat_pieces, dense_ids
from glint.kernels.strings.hashing import hash_pieces
from glint.kernels.strings.order import ranks
from glint.kernels.strings.pieces import Pieces

NULL_HASH = 0  # what hash64 gives NULL rows


def per_row(col) -> bool:
    """Work on the entries the rows use (True) rather than on every entry?"""
    return len(col.dictionary) > len(col)


def work_set(col) -> tuple[Pieces, torch.Tensor]:
    """(pieces to compute on, the piece of each row): every dictionary entry,
    or only the distinct entries the rows use (NULL rows use entry 0).

    >>> from glint.columnar.column import Column
    >>> import pyarrow as pa
    >>> c = Column.from_arrow(pa.array(["a", "b", "c", "d"])).take(torch.tensor([3, 1, 3]))
    >>> p, index = work_set(c)
    >>> p.starts.tolist(), index.tolist()
    ([1, 3], [1, 0, 1])
    """
    d = col.dictionary
    if per_row(col):
        codes = col.data if col.valid is None else torch.where(col.valid, col.data, 0)
        used, index = torch.unique(codes, return_inverse=True)
        return d.pieces(used), index
    return d.pieces(), col.data.long()


def to_rows(values: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Per-piece values as per-row values (see :func:`work_set`)."""
    return values[index]


# Results over a whole dictionary are remembered on it (Dictionary.memo) when it has at most
# this many entries, under at most MEMO_KEYS keys (the oldest forgotten first). A join's build
# side keeps one dictionary for every chunk of pairs it meets (TPC-H Q19 tests its brand and
# container on each): the tests then run once, and each chunk only gathers their results.
MEMO_MAX_ENTRIES = 1 << 18
MEMO_KEYS = 16
_ASKED = "asked"  # a memo's set of the keys asked for once on rows working per row


def remembered(d, key):
    """What the dictionary ``d`` remembers under ``key`` (None: nothing)."""
    return d.memo.get(key) if d.memo is not None else None


def remember(d, key, value) -> None:
    """Keep ``value`` (a result over every entry of ``d``) under ``key``,
    where the dictionary has at most MEMO_MAX_ENTRIES entries; at most
    MEMO_KEYS keys, the oldest forgotten first."""
    if len(d) > MEMO_MAX_ENTRIES:
        return
    memo = d.memo
    if memo is None:
        memo = d.memo = {}
    if len(memo) - (_ASKED in memo) >= MEMO_KEYS:
        memo.pop(next(k for k in memo if k != _ASKED))
    memo[key] = value


def per_entry(col, key, compute) -> torch.Tensor:
    """``compute(pieces)`` (one value per piece) as one value per row of
    ``col``, through :func:`work_set`. With a ``key`` (naming the computation
    and its arguments: ("eq", b"MAIL")), a dictionary of at most
    MEMO_MAX_ENTRIES entries remembers its result over every entry: a column
    that works per entry stores it at once, and one that works per row (a few
    rows of the dictionary) the second time the key is asked for.

    >>> from glint.columnar.column import Column
    >>> import pyarrow as pa
    >>> c = Column.from_arrow(pa.array(["a", "bb", "a"]))
    >>> per_entry(c, ("len",), lambda p: p.lengths).tolist(), list(c.dictionary.memo)
    ([1, 2, 1], [('len',)])
    """
    d = col.dictionary
    if key is None or len(d) > MEMO_MAX_ENTRIES:
        p, index = work_set(col)
        return to_rows(compute(p), index)
    memo = d.memo
    if memo is None:
        memo = d.memo = {}
    got = memo.get(key)
    if got is None:
        if per_row(col):
            asked = memo.setdefault(_ASKED, set())
            if key not in asked:  # the first time: only the entries these rows use
                asked.add(key)
                p, index = work_set(col)
                return to_rows(compute(p), index)
        got = compute(d.pieces())
        remember(d, key, got)
    codes = col.data if col.valid is None else torch.where(col.valid, col.data, 0)
    return to_rows(got, codes.long())


def hash64(col) -> torch.Tensor:
    """int64 content hash of each row's string
    (glint.kernels.strings.hashing): equal strings hash equal whatever
    dictionary, chunk, device or process they come from. NULL rows get
    :data:`NULL_HASH`."""
    h = per_entry(col, ("hash64",), hash_pieces)
    return h if col.valid is None else torch.where(col.valid, h, NULL_HASH)


def _sources(cols) -> tuple[list[Pieces], list[tuple[int, torch.Tensor]]]:
    """Distinct piece sets of several columns (one per shared dictionary when
    working per entry), and for each column (its set, its row index)."""
    sets: list[Pieces] = []
    seen: dict[int, int] = {}
    where = []
    for c in cols:
        whole = not per_row(c)
        if whole and id(c.dictionary) in seen:
            where.append((seen[id(c.dictionary)], c.data.long()))
            continue
        p, index = work_set(c)
        if whole:
            seen[id(c.dictionary)] = len(sets)
        where.append((len(sets), index))
        sets.append(p)
    return sets, where


def _shared_sorted(cols) -> bool:
    d = cols[0].dictionary
    return d.sorted_unique and all(c.dictionary is d for c in cols)


def equality_keys(cols) -> list[torch.Tensor]:
    """int64 per row of each column, equal exactly when the strings are equal
    (across all the columns; whatever sits under NULL rows is undefined).
    Hashes verified byte for byte, an exact sort on a collision
    (glint.kernels.strings.equality.dense_ids)."""
    if _shared_sorted(cols):
        return [c.data.long() for c in cols]
    sets, where = _sources(cols)
    ids, _ = dense_ids(sets)
    return [to_rows(ids[s], index) for s, index in where]


def code_range(cols) -> tuple[int, int] | None:
    """Bounds of :func:`equality_keys`' values over the valid rows, known
    without reading the rows: where they are the codes into one sorted
    dictionary, [0, its size); None where they are computed.

    >>> from glint.columnar import types as T
    >>> from glint.columnar.column import Column, Dictionary
    >>> d = Dictionary.from_pylist(["a", "b", "c"])
    >>> code_range([Column(T.VARCHAR, torch.tensor([2, 0], dtype=torch.int32), None, d)])
    (0, 2)
    """
    if not _shared_sorted(cols) or len(cols[0].dictionary) == 0:
        return None
    return 0, len(cols[0].dictionary) - 1


def order_ranks(cols) -> list[torch.Tensor]:
    """int64 per row of each column that orders as the strings do in byte
    order (DuckDB's VARCHAR order), equal for equal strings, across all the
    columns."""
    if _shared_sorted(cols):
        return [c.data.long() for c in cols]
    if len(cols) == 1:
        # one column (an ORDER BY or sort key): its entries' ranks are remembered on its
        # dictionary, so a warm run's sort by n_name gathers them instead of ranking strings
        return [per_entry(cols[0], ("order_ranks",), lambda p: ranks(p)[0])]
    sets, where = _sources(cols)
    r, _ = ranks(concat_pieces(sets))
    parts = torch.split(r, [len(s) for s in sets])
    return [to_rows(parts[s], index) for s, index in where]


def rank_codes(col) -> tuple[torch.Tensor, torch.Tensor]:
    """(rank of each row as :func:`order_ranks`, a code holding each rank's
    string): what MIN / MAX pick, and how to turn the pick back into a code.

    >>> from glint.columnar.column import Column
    >>> import pyarrow as pa
    >>> r, code = rank_codes(Column.from_arrow(pa.array(["b", "a", "b"])))
    >>> r.tolist(), code[r].tolist()
    ([1, 0, 1], [2, 1, 2])
    """
    (r,) = order_ranks([col])
    code = torch.zeros(int(r.max()) + 1 if r.numel() else 0, dtype=col.data.dtype, device=r.device)
    code.scatter_(0, r, col.data)  # equal ranks are equal strings: any of their codes will do
    return r, code


def extreme_codes(col, slots, largest: bool) -> torch.Tensor:
    """MIN (or MAX) of a VARCHAR column per group, as codes into its
    dictionary: chosen by byte order, not by code. Rows must all be valid;
    groups without rows get an arbitrary code."""
    from glint.kernels.groupby import extreme

    r, code = rank_codes(col)
    best = extreme(r, slots, largest)
    if code.numel() == 0:
        return torch.zeros(best.shape[0], dtype=col.data.dtype, device=best.device)
    return code[best.clamp(0, code.shape[0] - 1)]
