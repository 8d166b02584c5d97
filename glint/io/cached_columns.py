"""Table chunks kept compact in the device cache.

When the device cache is short of room (a memory limit the user set, or a
cache that evicted for room in its last eight runs), a scan's chunk column
is kept in the narrowest integer type that holds its values, and widened
again, one conversion
kernel, each time a scan takes it from the cache. Scans at the limit are
bound by the bus: a chunk found on the device crosses no bus, and TPC-H's
lineitem columns take 1 to 4 bytes a row compact where glint computes on 4
and 8 (``l_quantity``, ``l_discount``, ``l_tax``: int8; ``l_shipdate``:
int16; ``l_extendedprice``, the keys: int32; string codes: int8 where the
chunk's dictionary has at most 128 entries). Twice to four times as many
chunks fit.

The narrow type of a number column comes from its file's statistics for
the chunk (no wait for the device). The statistics are not trusted: the
narrowing records, on the device, whether any value fell outside the type,
and a compact entry is used only once that flag was read as clear (for all
of a scan's entries in one wait as the scan starts, see ``check``). An entry
whose flag is set is dropped, and its chunk read again.

>>> import torch
>>> from glint.columnar import types as T
>>> c = Column(T.DECIMAL(15, 2), torch.tensor([0, 5, 10]))
>>> k = compact(c, (0, 10, 0))
>>> k.data.dtype, k.nbytes(), check([k]), expand(k).data.tolist(), expand(k).data.dtype
(torch.int8, 3, [True], [0, 5, 10], torch.int64)
>>> wrong = compact(Column(T.INTEGER, torch.tensor([0, 500], dtype=torch.int32)), (0, 10, 0))
>>> wrong.data.dtype, check([wrong])  # statistics that understate the range: not used
(torch.int8, [False])
"""

from __future__ import annotations

import numpy as np
import torch

from glint.columnar.column import Column
from glint.io.transfer import narrow_type

_TORCH = {np.dtype(np.int8): torch.int8, np.dtype(np.int16): torch.int16, np.dtype(np.int32): torch.int32}
# kinds whose chunk statistics are in the column's own units (a DATE's days,
# a DECIMAL's scaled integer)
_NUMBER_KINDS = ("INTEGER", "BIGINT", "DATE", "DECIMAL")


class CompactColumn:
    """A cached chunk column in a narrower integer type: ``data`` narrow,
    ``wide`` the type glint computes on; ``outside``: a device flag, set
    where a value did not fit (None: known to fit, as string codes always
    do); ``checked``: the flag was read and is clear."""

    __slots__ = ("dtype", "data", "valid", "dictionary", "wide", "outside", "checked", "ready")

    def __init__(self, col: Column, data: torch.Tensor, outside: torch.Tensor | None):
        self.dtype, self.valid, self.dictionary = col.dtype, col.valid, col.dictionary
        self.data, self.wide = data, col.data.dtype
        self.outside = outside
        self.checked = outside is None
        # on CUDA, the flag's computation's end: the flag may be read on
        # another thread, whose stream is not ordered after this one's
        self.ready = None
        if outside is not None and outside.is_cuda:
            self.ready = torch.cuda.Event()
            self.ready.record(torch.cuda.current_stream(outside.device))

    def __len__(self) -> int:
        return self.data.shape[0]

    def nbytes(self) -> int:
        n = self.data.numel() * self.data.element_size()
        return n + _extra_nbytes(self)


def narrow_for(col: Column, stats) -> torch.dtype | None:
    """The narrower type to cache ``col`` in (``stats``: the chunk's (min,
    max, nulls) from its file, or None), or None to keep it as it is."""
    data = col.data
    if data.dim() != 1 or data.shape[0] == 0 or data.dtype not in (torch.int32, torch.int64):
        return None
    if col.dictionary is not None:
        dt = narrow_type(0, len(col.dictionary) - 1, data.element_size())
    elif col.dtype.kind not in _NUMBER_KINDS or (col.dtype.kind == "DECIMAL" and col.dtype.precision > 18):
        return None
    elif stats is None or stats[0] is None:
        return None
    else:
        dt = narrow_type(stats[0], stats[1], data.element_size())
    return None if dt is None else _TORCH[dt]


def _extra_nbytes(col) -> int:
    """A column's bytes beside its values: its validity and its strings
    (counted as Column.nbytes counts them)."""
    n = 0 if col.valid is None else col.valid.numel()
    return n + (0 if col.dictionary is None else col.dictionary.nbytes())


def compact_nbytes(col: Column, to: torch.dtype) -> int:
    """The bytes of ``col`` compact in type ``to`` (CompactColumn.nbytes)."""
    return col.data.shape[0] * to.itemsize + _extra_nbytes(col)


def compact(col: Column, stats, to: torch.dtype | None = None) -> CompactColumn | None:
    """``col`` in its narrower type (``to``, or see narrow_for), with the
    device flag of values outside it; None where there is none. Kernels on
    the current stream, no wait."""
    to = narrow_for(col, stats) if to is None else to
    if to is None:
        return None
    narrow = col.data.to(to)
    outside = None
    if col.dictionary is None:
        info = torch.iinfo(to)
        lo, hi = torch.aminmax(col.data)
        outside = (lo < info.min) | (hi > info.max)
    return CompactColumn(col, narrow, outside)


def check(values) -> list[bool]:
    """For each value of the cache (a Column or a CompactColumn), whether it
    can be used: the unchecked compact ones' flags read in one wait."""
    # (each flag taken once: another thread's check may clear it meanwhile)
    todo = [(v, v.outside, v.ready) for v in values if type(v) is CompactColumn and not v.checked]
    todo = [(v, flag, ready) for v, flag, ready in todo if flag is not None]
    if todo:
        for _, _, ready in todo:
            if ready is not None:
                ready.synchronize()
        flags = torch.stack([flag.reshape(()) for _, flag, _ in todo]).tolist()
        for (v, _, _), bad in zip(todo, flags):
            if not bad:
                v.checked, v.outside, v.ready = True, None, None
    return [type(v) is not CompactColumn or v.checked for v in values]


def expand(v, empty=None) -> Column:
    """A cached value as the Column glint computes on: a compact one widened
    (one kernel on the current stream; ``empty(shape, dtype)``: allocates
    the wide tensor, by default torch.empty on the value's device). A compact
    value must have been checked (see check)."""
    if type(v) is not CompactColumn:
        return v
    assert v.checked, "a compact cache entry used before its range was checked"
    empty = empty or (lambda shape, dt: torch.empty(shape, dtype=dt, device=v.data.device))
    data = empty(tuple(v.data.shape), v.wide)
    data.copy_(v.data)
    return Column(v.dtype, data, v.valid, v.dictionary)
