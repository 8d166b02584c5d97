"""STRING_AGG: the strings of each group joined by a separator, built on the
device from the column's Arrow-layout bytes (no per-row Python).

The valid rows are ordered by group (then by the ORDER BY keys; ties keep
row order), and each becomes two pieces: the separator (empty before a
group's first string) and its string. One gather copies all pieces into a
fresh buffer; group g's result is the byte range from its first piece to the
next group's, so the output dictionary has one entry per group.

>>> import torch, pyarrow as pa
>>> from glint.kernels.groupby import Slots
>>> x = Column.from_arrow(pa.array(["b", None, "a", "c", "d"]))
>>> s = Slots(torch.tensor([0, 0, 0, 2, 0]), 3)
>>> string_agg(x, s, ", ").to_arrow().to_pylist()
['b, a, d', None, 'c']
>>> k = Column.from_arrow(pa.array([3, 1, 1, 2, 2]))
>>> string_agg(x, s, "|", [(k, True, False)]).to_arrow().to_pylist()
['b|d|a', None, 'c']
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Column, Dictionary
from glint.functions.strings import core as strings
from glint.kernels import groupby as G
from glint.kernels.sort import lexsort
from glint.kernels.strings.gather import gather
from glint.kernels.strings.pieces import Pieces


def string_agg(x: Column, slots: G.Slots, sep: str | None, order=None) -> Column:
    """Per group of ``slots`` (glint.kernels.groupby.Slots), the non-NULL
    strings of ``x`` joined by ``sep``, in row order or by ``order``: a list of
    (column, descending, nulls_first) aligned with ``x``. NULL for groups
    without strings, and for every group when ``sep`` is NULL."""
    dev, n = x.device, slots.n
    if sep is None or n == 0:
        return Column.nulls(T.VARCHAR, n, dev)
    counts = G.count(slots, x.valid)
    rows = x.validity().nonzero().squeeze(1)
    gid = slots.gid[rows]
    if order:
        keys = [(gid, None, False, False)]
        for col, desc, nulls_first in order:
            values = strings.order_ranks(col) if col.dtype.is_string else col.data
            keys.append((values[rows], None if col.valid is None else col.valid[rows], desc, nulls_first))
        perm = lexsort(keys)
    else:
        perm = torch.argsort(gid, stable=True)
    rows, gid = rows[perm], gid[perm]
    p = x.dictionary.pieces(x.data[rows])
    sep_bytes = torch.tensor(list(sep.encode()), dtype=torch.uint8, device=dev)
    first = torch.ones_like(gid, dtype=torch.bool)
    first[1:] = gid[1:] != gid[:-1]
    data = torch.cat([p.data, sep_bytes])
    sep_start = torch.full_like(p.starts, p.data.shape[0])
    starts = torch.stack([sep_start, p.starts], dim=1).reshape(-1)
    lengths = torch.stack([torch.where(first, 0, sep_bytes.shape[0]), p.lengths], dim=1).reshape(-1)
    offsets, buf = gather(Pieces(data, starts, lengths))
    group_start = torch.cumsum(counts, 0) - counts  # first row of each group in the order
    bounds = torch.cat([offsets[2 * group_start], offsets[-1:]])
    codes = torch.arange(n, dtype=torch.int32, device=dev)
    return Column(T.VARCHAR, codes, counts > 0, Dictionary(bounds, buf))
