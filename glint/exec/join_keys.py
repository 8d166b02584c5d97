"""Join keys encoded against the build side, so that each probe chunk is
encoded on its own with the build's mapping (the build side is encoded once,
not once per chunk).

Each key column becomes a non-negative int64 *part*: for integer-like values
the offset from the build's minimum when the build's value range is small,
else the id of the value among the build's distinct values (a GPU hash table on
CUDA, the rank among the sorted values elsewhere) (floats through an
order-preserving integer form, every NaN equal, -0.0 equal to 0.0). Parts are
packed side by side; when the bits run out, the packed prefix is replaced by
its rank among the build's packed values. A probe value the build does not
have can match nothing: its row is marked invalid, like a NULL key.

String keys and DECIMALs beyond 64 bits are encoded jointly with the build
side per chunk (:func:`glint.exec.keys.encode_keys`).

>>> import torch
>>> from glint.columnar import types as T
>>> from glint.columnar.column import Column
>>> b = BuildKeys([Column(T.BIGINT, torch.tensor([10, 30, 20]))])
>>> k, v, _ = b.encode([Column(T.BIGINT, torch.tensor([30, 5, 10]))])
>>> v.tolist(), bool(k[0] == b.key[1]), bool(k[2] == b.key[0])
([True, False, True], True, True)
"""

from __future__ import annotations

import torch

from glint.columnar.column import Column
from glint.exec.keys import encode_keys
from glint.kernels.hash_table import hashed_on, key_set
from glint.kernels.pack import pack_checked
from glint.kernels.sort import float_order_key

_MAX_BITS = 62
_DENSE_SPAN = 1 << 24  # value ranges up to this wide are offsets, wider ones ranks


def _int_form(c: Column) -> torch.Tensor | None:
    d = c.data
    if d.dim() == 2 or c.dtype.is_string:
        return None
    if d.is_floating_point():
        return float_order_key(d.double())
    return d.long()


def _raw_int(c: Column) -> torch.Tensor | None:
    """A key column's values as they are held when they are integers (or
    booleans) that a kernel can read in their own width, else None."""
    d = c.data
    if d.dim() == 2 or c.dtype.is_string or d.is_floating_point() or d.is_complex():
        return None
    return d


def _and(a, b):
    if a is None:
        return b
    return a if b is None else a & b


_I64 = torch.iinfo(torch.int64)


def _min_max(values: torch.Tensor, valid: torch.Tensor | None) -> tuple[int, int]:
    """(min, max) of the integer ``values`` where ``valid`` (min > max when
    none is): one wait for the device, and no compaction of the valid rows.

    >>> _min_max(torch.tensor([5, -2, 9]), torch.tensor([True, True, False]))
    (-2, 5)
    >>> _min_max(torch.tensor([5]), torch.tensor([False]))[0] > 0
    True
    """
    return _min_maxes([values], valid)[0]


def _min_maxes(columns: list[torch.Tensor], valid: torch.Tensor | None) -> list[tuple[int, int]]:
    """:func:`_min_max` of several columns of one side, read in one wait.
    Integer columns are read in their own width (no widening copy)."""
    if columns[0].numel() == 0:
        return [(0, -1)] * len(columns)
    ends = []
    for values in columns:
        if values.dtype == torch.bool:
            values = values.long()
        if valid is None:
            lo, hi = torch.aminmax(values)
        else:
            info = torch.iinfo(values.dtype)
            lo = torch.where(valid, values, info.max).min()
            hi = torch.where(valid, values, info.min).max()
        ends += [lo, hi]
    if len({e.dtype for e in ends}) > 1:  # (columns of different widths)
        ends = [e.long() for e in ends]
    got = torch.stack(ends).tolist()
    return [(got[i], got[i + 1]) for i in range(0, len(got), 2)]


class _Part:
    """How one key column (or a packed prefix) maps to a dense part."""

    __slots__ = ("lo", "hi", "set", "bits")

    def __init__(
        self,
        values: torch.Tensor,
        valid: torch.Tensor | None,
        ranks: bool = False,
        alone: bool = False,
        bounds: tuple[int, int] | None = None,
    ):
        self.set = None
        if not ranks:
            lo, hi = bounds if bounds is not None else _min_max(values, valid)
            if lo > hi:  # no rows, or none valid
                self.lo, self.hi, self.bits = 0, -1, 1
                return
            # a key of one column on CUDA stays an offset however wide: the join's
            # hash table takes it as it is (ids would cost a second table)
            dense = _DENSE_SPAN if not (alone and hashed_on(values)) else 1 << _MAX_BITS
            if hi - lo < dense:
                self.lo, self.hi, self.bits = lo, hi, max(1, (hi - lo).bit_length())
                return
        # the id of each distinct build value (a GPU hash table on CUDA, sorted values elsewhere)
        self.lo = 0
        self.set, _ = key_set(values if valid is None else values[valid])
        self.bits = max(1, int(self.set.size).bit_length())

    def apply(self, values: torch.Tensor):
        """(part, matchable) for values."""
        if self.set is None:
            # (compared before subtracting: values - lo may wrap around int64)
            ok = (values >= self.lo) & (values <= self.hi)
            return torch.where(ok, values - self.lo, torch.zeros_like(values)), ok
        ids = self.set.lookup(values)
        ok = ids >= 0
        return torch.where(ok, ids, torch.zeros_like(ids)), ok


class BuildKeys:
    """Key columns of a build side, encoded: ``key`` and ``valid`` per build
    row; :meth:`encode` does the same for a probe chunk."""

    def __init__(self, build_cols: list[Column]):
        self.cols = build_cols
        self.joint = any(c.data.dim() == 2 or c.dtype.is_string for c in build_cols)
        self.valid = None
        for c in build_cols:
            self.valid = _and(self.valid, c.valid)
        self.key = None
        self.packed = False  # every part an offset within its range, packed by one kernel
        if self.joint:  # encoded together with each probe chunk (encode)
            return
        # integers as held (their widening copy is needed only if packed part by part)
        raw = [_raw_int(c) for c in build_cols]
        forms = [_int_form(c) if r is None else r for c, r in zip(build_cols, raw)]
        ends = _min_maxes(forms, self.valid)
        parts = [_Part(f, self.valid, alone=len(forms) == 1, bounds=b) for f, b in zip(forms, ends)]
        if (
            all(r is not None for r in raw)
            and all(p.set is None for p in parts)
            and sum(p.bits for p in parts) <= _MAX_BITS
        ):
            self.packed = True
            self.steps = [(p, None) for p in parts]
            shifts = self._shifts()
            self.key, _ = pack_checked(raw, [None] * len(raw), [p.lo for p in parts], [p.hi for p in parts], shifts)
            return
        self.steps = []  # ("part", _Part) then ("pack", _Part | None) entries
        key, bits = None, 0
        for f, part in zip(forms, parts):
            p, _ = part.apply(f.long())
            if key is None:
                key, bits = p, part.bits
                self.steps.append((part, None))
                continue
            prefix = None
            if bits + part.bits > _MAX_BITS:
                prefix = _Part(key, self.valid, ranks=True)
                key, _ = prefix.apply(key)
                bits = prefix.bits
            key = (key << part.bits) | p
            bits += part.bits
            self.steps.append((part, prefix))
        self.key = key

    def _shifts(self) -> list[int]:
        """Each part's shift in a packed key: the first part highest, as the
        step-by-step packing of :meth:`encode` places them."""
        bits = [part.bits for part, _ in self.steps]
        return [sum(bits[i + 1 :]) for i in range(len(bits))]

    def bounds(self) -> tuple[int, int] | None:
        """(min, max) of ``key`` over the valid build rows when known without
        looking (one key column: its offset from lo, or its id among the
        distinct values, both from 0), else None."""
        if self.joint or len(self.steps) != 1:
            return None
        part, _ = self.steps[0]
        return (0, part.hi - part.lo) if part.set is None else (0, int(part.set.size) - 1)

    def offset(self) -> tuple[int, int] | None:
        """(lo, hi) when the key is one integer column whose part is its offset
        from lo (a probe value outside [lo, hi] matches nothing), else None:
        then a probe chunk's column can go to the matching as it is
        (glint.kernels.join.match_offsets), with no encoding pass."""
        if self.joint or len(self.steps) != 1:
            return None
        part, _ = self.steps[0]
        if part.set is not None or self.cols[0].data.is_floating_point():
            return None
        return part.lo, part.hi

    def encode(self, probe_cols: list[Column]):
        """(key, valid, build) for probe rows: valid is False where a key is
        NULL or a value the build side does not have. ``build`` is None, or,
        when this chunk had to be encoded together with the build side (string
        keys, values beyond 64 bits on either side), the build side's (key,
        valid) for this chunk."""
        if self.joint or any(c.data.dim() == 2 or c.dtype.is_string for c in probe_cols):
            (pk, pv), (bk, bv) = encode_keys([probe_cols, self.cols])
            return pk, pv, (bk, bv)
        if self.packed:
            raw = [_raw_int(c) for c in probe_cols]
            if all(r is not None for r in raw):
                parts = [part for part, _ in self.steps]
                return (
                    *pack_checked(
                        raw, [c.valid for c in probe_cols], [p.lo for p in parts], [p.hi for p in parts], self._shifts()
                    ),
                    None,
                )
        valid = None
        for c in probe_cols:
            valid = _and(valid, c.valid)
        key = None
        for (part, prefix), c in zip(self.steps, probe_cols):
            p, ok = part.apply(_int_form(c))
            valid = _and(valid, ok)
            if key is None:
                key = p
                continue
            if prefix is not None:
                key, ok2 = prefix.apply(key)
                valid = _and(valid, ok2)
            key = (key << part.bits) | p
        return key, valid, None
