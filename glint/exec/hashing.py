"""Row hashes that depend on values only: the same rows hash alike in every
chunk, on every device and in every process. Out-of-core operators partition
by them (grace hash join, partitioned aggregation, set operations), and so does
a shuffle between ranks, so equal keys always meet in one partition.

Equal SQL values hash equally across representations: an int32 and an int64
holding 5, a DECIMAL beyond 64 bits that fits int64 and the int64 itself, 0.0
and -0.0, every NaN; strings by their bytes, whatever their dictionary.
Collisions only put unequal rows in one partition: nothing decides equality by
a hash.

>>> import torch
>>> from glint.columnar import types as T
>>> from glint.columnar.column import Column
>>> a = Column(T.INTEGER, torch.tensor([5, 7, 5], dtype=torch.int32))
>>> b = Column(T.BIGINT, torch.tensor([5, 9]))
>>> ha, hb = hash_columns([a]), hash_columns([b])
>>> bool(ha[0] == ha[2]) and bool(ha[0] == hb[0]) and bool(ha[0] != ha[1])
True
>>> splitmix64(torch.tensor([0, 1])).tolist()     # as the unsigned 64-bit original computes it
[-2152535657050944081, -7995527694508729151]
"""

from __future__ import annotations

import torch

from glint.columnar.column import Column

_GOLDEN = 0x9E3779B97F4A7C15 - (1 << 64)
_M1 = 0xBF58476D1CE4E5B9 - (1 << 64)
_M2 = 0x94D049BB133111EB - (1 << 64)
_NULL_HASH = 0x5BD1E9955BD1E995
_NAN_BITS = 0x7FF8000000000000


def _shr(x: torch.Tensor, k: int) -> torch.Tensor:
    """Logical (unsigned) right shift of int64 values."""
    return (x >> k) & ((1 << (64 - k)) - 1)


def splitmix64(x: torch.Tensor) -> torch.Tensor:
    """The splitmix64 finaliser of x + golden ratio (int64 arithmetic wraps
    around, as the unsigned original does)."""
    z = x + _GOLDEN
    z = (z ^ _shr(z, 30)) * _M1
    z = (z ^ _shr(z, 27)) * _M2
    return z ^ _shr(z, 31)


def value_bits(c: Column) -> torch.Tensor:
    """int64 per row, equal for equal values of any numeric layout (NULL rows: anything)."""
    d = c.data
    if c.dtype.is_string:
        return _string_hash(c)
    if d.dim() == 2:  # wide [hi, lo]: as int64 when it fits, else mixed
        hi, lo = d[:, 0], d[:, 1]
        fits = (hi >= -(1 << 31)) & (hi < (1 << 31))
        return torch.where(fits, (hi << 32) | lo, splitmix64(hi) ^ lo)
    if d.is_floating_point():
        d = d.double()
        d = torch.where(torch.isnan(d), torch.full_like(d, float("nan")), d) + 0.0  # -0.0 -> 0.0
        bits = d.view(torch.int64)
        return torch.where(torch.isnan(d), torch.full_like(bits, _NAN_BITS), bits)
    return d.long()


def _string_hash(c: Column) -> torch.Tensor:
    """Content hash of each row's string (equal strings hash equal in any
    dictionary, chunk, device or process)."""
    from glint.kernels.strings.columns import hash64

    return hash64(c)


def hash_columns(cols: list[Column], seed: int = 0) -> torch.Tensor:
    """One int64 hash per row of the given columns together. NULL is a value
    of its own here (callers that need NULL keys to match nothing handle
    them before hashing)."""
    h = None
    for j, c in enumerate(cols):
        v = splitmix64(value_bits(c) + (seed * 0x51 + j))
        if c.valid is not None:
            v = torch.where(c.valid, v, torch.full_like(v, _NULL_HASH))
        h = v if h is None else splitmix64(h * 31 + v)
    if h is None:
        raise ValueError("hash of no columns")
    return h


def partition_of(h: torch.Tensor, parts: int, level: int = 0) -> torch.Tensor:
    """Partition number 0..parts-1 of each hash. ``level`` picks other bits, so
    a partition split again (skew, recursion) does not land in one part."""
    if parts <= 1:
        return torch.zeros_like(h)
    mixed = splitmix64(h + level) if level else h
    return _shr(mixed, 1) % parts
