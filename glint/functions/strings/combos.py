"""Functions of several per-row arguments computed once per distinct
combination of argument values (a string and a pattern column, a string
and a per-row delimiter), on the host, for what has no device kernel.

The combinations are found on the device (exact string equality ids, then
``torch.unique`` over the rows where no argument is NULL); one row of each
travels to the host; the result comes back per combination and is
gathered to the rows.

>>> s = Column.from_arrow(pa.array(["ab", "ab", "cd", None, "ab"]))
>>> p = Column.from_arrow(pa.array(["b", "b", "c", "c", "x"]))
>>> contains = lambda strs, pats: by_groups([pats], lambda _, v, key: pc.match_substring(v[0], key[0]), [strs])
>>> per_combination([s, p], contains, T.BOOLEAN).to_arrow().to_pylist()
[True, True, True, None, False]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from glint.columnar import types as T
from glint.columnar.column import Column, Dictionary
from glint.functions.strings.host import and_valid
from glint.kernels.strings import columns as K


def _row_keys(c: Column) -> torch.Tensor:
    """int64 keys per row, equal exactly when the values are (any type)."""
    if c.dtype.is_string:
        return K.equality_keys([c])[0][:, None]
    d = c.data
    if d.dim() == 2:
        return d.long()
    if d.dtype == torch.float64:
        return d.view(torch.int64)[:, None]
    return d.long()[:, None]


def distinct_combinations(cols: list[Column], rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(one row of each distinct combination of the columns' values among
    ``rows``, the combination of each of ``rows``).

    >>> a = Column.from_arrow(pa.array(["x", "y", "x"]))
    >>> rep, inv = distinct_combinations([a], torch.arange(3))
    >>> a.take(rep[inv]).to_arrow().to_pylist(), len(rep)
    (['x', 'y', 'x'], 2)
    """
    keys = torch.cat([_row_keys(c)[rows] for c in cols], dim=1)
    if rows.numel() == 0:
        return rows, rows
    _, inverse = torch.unique(keys, dim=0, return_inverse=True)
    n = int(inverse.max()) + 1
    rep = torch.full((n,), rows.shape[0], dtype=torch.int64, device=rows.device)
    rep.scatter_reduce_(0, inverse, torch.arange(rows.shape[0], device=rows.device), "amin")
    return rows[rep], inverse


def per_combination(cols: list[Column], fn: Callable[..., pa.Array], dtype: T.DataType) -> Column:
    """``fn(*host_arrays)`` once per distinct combination of the columns'
    values (host Arrow arrays, one element per combination, no NULLs),
    gathered back to the rows; NULL where any argument is NULL. ``fn``
    returns ``dtype``: BOOLEAN, BIGINT / INTEGER or VARCHAR (NULLs allowed)."""
    n, device = len(cols[0]), cols[0].device
    valid = None
    for c in cols:
        valid = and_valid(valid, c.valid)
    rows = torch.arange(n, device=device) if valid is None else valid.nonzero().squeeze(1)
    rep, inverse = distinct_combinations(cols, rows)
    host = [c.take(rep).to_arrow() for c in cols]
    out = fn(*host) if len(rep) else None
    per_row = torch.zeros(n, dtype=torch.int64, device=device)
    per_row[rows] = inverse
    if out is None:  # no row has all its arguments
        return Column.nulls(dtype, n, device)
    if isinstance(out, pa.ChunkedArray):
        out = out.combine_chunks()
    if out.null_count:
        ok = torch.from_numpy(out.is_valid().to_numpy(zero_copy_only=False).copy()).to(device)
        valid = and_valid(valid, ok[per_row]) if valid is not None else ok[per_row]
    if dtype.is_string:
        d = Dictionary.from_arrow(out).to(device)
        return Column(T.VARCHAR, per_row.to(torch.int32), valid, d)
    if dtype.kind == "BOOLEAN":
        values = torch.from_numpy(out.fill_null(False).to_numpy(zero_copy_only=False).copy())
        return Column(T.BOOLEAN, values.to(device)[per_row], valid)
    values = np.asarray(out.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
    return Column(dtype, torch.from_numpy(values).to(device)[per_row].to(dtype.torch_dtype), valid)


def by_groups(
    keys: list[pa.Array], fn: Callable[[np.ndarray, list[pa.Array], tuple], pa.Array], values: list[pa.Array]
) -> pa.Array:
    """Split host arrays into groups of equal ``keys`` (a pattern, a
    delimiter) and call ``fn(positions, values_of_the_group, key_values)``
    once per group; the results are put back in the original order.

    >>> k = pa.array(["a", "b", "a"]); v = pa.array([1, 2, 3])
    >>> by_groups([k], lambda i, vals, key: pc.add(vals[0], 10 if key[0] == "a" else 20), [v]).to_pylist()
    [11, 22, 13]
    """
    n = len(values[0]) if values else len(keys[0])
    combined = np.zeros(n, dtype=np.int64)
    for k in keys:
        enc = pc.dictionary_encode(k)
        combined = combined * (len(enc.dictionary) + 1) + enc.indices.to_numpy(zero_copy_only=False)
    _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(first) + 1))
    parts = []
    for g in range(len(first)):  # over distinct keys (patterns), not rows
        pos = order[bounds[g] : bounds[g + 1]]
        idx = pa.array(pos)
        key = tuple(k[int(first[g])].as_py() for k in keys)
        out = fn(pos, [v.take(idx) for v in values], key)
        parts.append(out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out)
    if len({p.type for p in parts}) > 1:
        parts = [p.cast(pa.large_string()) if pa.types.is_string(p.type) else p for p in parts]
    joined = pa.concat_arrays(parts)
    back = np.empty(n, dtype=np.int64)
    back[order] = np.arange(n)
    return joined.take(pa.array(back))
