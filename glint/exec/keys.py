"""Key encoding: several key columns (of one or two relations) become one
int64 key per row, equal exactly when the key tuples are equal.

Integer-like columns are packed by their value ranges when the product of
ranges fits in 62 bits; otherwise each column is replaced by dense ids
first. A DOUBLE is its bits once -0.0 is made 0.0 and every NaN one NaN. A
column with NULLs, where NULL is a value (GROUP BY, DISTINCT, set
operations), adds a part that says NULL. VARCHAR columns become exact equality ids shared by all
sides (glint.kernels.strings.columns.equality_keys).

>>> import torch
>>> from glint.columnar import types as T
>>> from glint.columnar.column import Column
>>> a = Column(T.INTEGER, torch.tensor([5, 7, 5], dtype=torch.int32))
>>> b = Column(T.INTEGER, torch.tensor([7, 9], dtype=torch.int32))
>>> (ka, va), (kb, vb) = encode_keys([[a], [b]])
>>> ka[0] == ka[2], ka[1] == kb[0], bool(kb[1] != ka[0])
(tensor(True), tensor(True), True)
"""

from __future__ import annotations

import torch

from glint.columnar.column import Column
from glint.kernels import wide as W
from glint.kernels.hash_table import key_set
from glint.kernels.pack import pack
from glint.kernels.strings.columns import code_range, equality_keys

_MAX_BITS = 62


def _as_int64(c: Column) -> torch.Tensor:
    d = c.data
    if d.dim() == 2:  # wide decimal: combine limbs into a dense rank later
        return None
    if d.dtype == torch.float64 or d.dtype == torch.float32:
        # equal as SQL has them equal: -0.0 is 0.0, and every NaN is one value (as in
        # DuckDB); then their bits (equality is all a key needs, not order)
        x = d.double() + 0.0
        x = torch.where(torch.isnan(x), torch.full_like(x, float("nan")), x)
        return x.view(torch.int64)
    return d.long()


def encode_keys(sides: list[list[Column]], nulls_equal: bool = False):
    """For each side, (int64 key, validity or None). Rows with a NULL in any key
    column are invalid unless nulls_equal (then NULL is a value of its own)."""
    return _encode(sides, nulls_equal)[0]


def group_key(cols: list[Column], narrow: bool = False) -> tuple[torch.Tensor, tuple[int, int]]:
    """(int64 key per row of GROUP BY columns, NULL a value of its own; (lo,
    hi), bounds of the keys). The bounds are known without a host
    synchronisation where every column's range is (dictionary codes, a NULL
    flag); otherwise one synchronisation reads every column's range at once.
    ``narrow``: the key may come in a narrower integer type where its bounds
    allow (int8 for keys below 128; a single column's own integer width),
    for kernels that read any width (glint.kernels.group_reduce).

    >>> from glint.columnar import types as T
    >>> a = Column(T.INTEGER, torch.tensor([5, 7, 5], dtype=torch.int32))
    >>> b = Column(T.INTEGER, torch.tensor([0, 1, 1], dtype=torch.int32))
    >>> key, bounds = group_key([a, b])
    >>> key.tolist(), bounds
    ([0, 5, 1], (0, 5))
    """
    ((key, _),), bounds = _encode([cols], True, narrow)
    return key, bounds


def _encode(sides: list[list[Column]], nulls_equal: bool, narrow: bool = False):
    """(encode_keys' result, (lo, hi) bounds of every side's keys)."""
    ncols = len(sides[0])
    lengths = [len(s[0]) if s else 0 for s in sides]
    key_parts = []  # per column: list of per-side int64 tensors
    known = []  # per part: its (lo, hi) where known without reading the rows
    valids = [None] * len(sides)
    for j in range(ncols):
        cols = [s[j] for s in sides]
        bound = None
        if cols[0].dtype.is_string:
            bound = code_range(cols)
            # codes into one sorted dictionary are the keys: kept in their width for packing
            datas = [c.data for c in cols] if bound is not None else equality_keys(cols)
        else:
            datas = [_as_int64(c) for c in cols]
        if any(d is None for d in datas):
            raw = [c.data for c in cols]
            if any(d.dim() == 2 for d in raw):  # DECIMALs beyond int64 next to narrow ones
                raw = [W.to_wide(d) for d in raw]
            datas = _dense_ranks(raw)
        if nulls_equal and any(c.valid is not None for c in cols):
            # NULL is a value of its own: a part of the key that says NULL, beside the value
            # (0 under NULL); no value of the column's range can stand for it (-2**62 did,
            # and grouped NULL with the BIGINT -2**62 and with the DOUBLE -2.0, whose bits it is)
            key_parts.append(
                [torch.zeros_like(d) if c.valid is None else (~c.valid).to(torch.int64) for c, d in zip(cols, datas)]
            )
            known.append((0, 1))
            datas = [
                d if c.valid is None else torch.where(c.valid, d, torch.zeros_like(d)) for c, d in zip(cols, datas)
            ]
            bound = None if bound is None else (min(bound[0], 0), max(bound[1], 0))
        elif not nulls_equal:
            bound = None  # the values under NULL rows are anything: the rows' own range
            for i, c in enumerate(cols):
                if c.valid is not None:
                    valids[i] = c.valid if valids[i] is None else valids[i] & c.valid
        key_parts.append(datas)
        known.append(bound)
    ranges = _ranges(key_parts, known)
    if len(key_parts) == 1:
        if narrow:
            return [(key_parts[0][i], valids[i]) for i in range(len(sides))], ranges[0]
        return [(key_parts[0][i].long(), valids[i]) for i in range(len(sides))], ranges[0]
    needs = [max(1, int(hi - lo).bit_length()) for lo, hi in ranges]
    if sum(needs) <= _MAX_BITS:
        # every column's range fits beside the others: one pass packs them all
        shifts = [sum(needs[j + 1 :]) for j in range(len(needs))]
        los = [lo for lo, _ in ranges]
        top = 0
        for need, (lo, hi) in zip(needs, ranges):
            top = (top << need) | (hi - lo)
        dtype = torch.int8 if narrow and top < 1 << 7 else torch.int64
        keys = [pack([p[i] for p in key_parts], los, shifts, dtype) for i in range(len(sides))]
        return [(keys[i], valids[i]) for i in range(len(sides))], (0, top)
    # pack columns by value range; re-densify when the ranges get too wide
    keys = [torch.zeros(n, dtype=torch.int64, device=_dev(sides)) for n in lengths]
    bits, top = 0, 0
    for datas, (lo, hi) in zip(key_parts, ranges):
        span = hi - lo + 1
        need = max(1, int(span - 1).bit_length())
        if bits + need > _MAX_BITS:
            keys = _dense_ranks(keys)
            lo_k, hi_k = _range(keys)
            bits, top = max(1, int(hi_k).bit_length()), hi_k
            if bits + need > _MAX_BITS:
                datas = _dense_ranks(datas)
                lo, hi = _range(datas)
                need = max(1, int(hi - lo).bit_length())
        keys = [(k << need) | (d - lo) for k, d in zip(keys, datas)]
        bits += need
        top = (top << need) | (hi - lo)
    return [(keys[i], valids[i]) for i in range(len(sides))], (0, top)


def _dev(sides):
    for s in sides:
        for c in s:
            return c.device
    return torch.device("cpu")


def _range(datas) -> tuple[int, int]:
    return _ranges([datas], [None])[0]


def _ranges(parts: list[list[torch.Tensor]], known: list) -> list[tuple[int, int]]:
    """(min, max) over the tensors of each part (``known`` where not None),
    read with one host synchronisation; (0, 0) for a part without rows."""
    out = list(known)
    todo = [i for i, k in enumerate(known) if k is None]
    stats, where = [], []
    for i in todo:
        nonempty = [d for d in parts[i] if d.numel()]
        if not nonempty:
            out[i] = (0, 0)
            continue
        stats += [torch.stack(torch.aminmax(d)) for d in nonempty]
        where.append((i, len(nonempty)))
    if stats:
        values = torch.stack(stats).tolist()
        at = 0
        for i, k in where:
            mine = values[at : at + k]
            out[i] = (min(v[0] for v in mine), max(v[1] for v in mine))
            at += k
    return out


def _nan_aware(d: torch.Tensor) -> torch.Tensor:
    """(is NaN, value) pairs: NaNs become one value, -0.0 and 0.0 another."""
    nan = torch.isnan(d)
    return torch.stack([nan.to(d.dtype), torch.where(nan, torch.zeros_like(d), d) + 0.0], dim=1)


def _dense_ranks(datas: list[torch.Tensor]) -> list[torch.Tensor]:
    """Replace values by a dense id among the distinct values of all inputs,
    equal for equal values (all NaNs are one value, as in DuckDB): the rank,
    or on CUDA the id from a GPU hash table (glint.kernels.hash_table)."""
    datas = [_nan_aware(d) if d.is_floating_point() else d for d in datas]
    flat = [d if d.dim() == 2 else d.view(d.shape[0], 1) for d in datas]
    cat = torch.cat(flat)
    if cat.shape[1] == 1:
        _, inv = key_set(cat[:, 0])
    else:
        _, inv = torch.unique(cat, dim=0, return_inverse=True)
    return list(torch.split(inv.long(), [d.shape[0] for d in datas]))
