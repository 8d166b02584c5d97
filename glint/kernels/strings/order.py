"""Byte-wise order of strings, as DuckDB orders VARCHAR: memcmp of the UTF-8
bytes, a proper prefix first.

A string is cut into levels of 7 bytes; level j's key is one int64 holding
bytes 7j..7j+6 big-endian (missing bytes 0) above a byte with how many of
them exist (0..7), sign-flipped so signed order is unsigned order. Comparing
key sequences level by level, up to the first level with a count below 7,
orders exactly as memcmp-then-length: where bytes differ the bytes decide,
and where one string ends inside a level its smaller count decides.

:func:`ranks` sorts most-significant level first and refines only groups
that are still tied (stable argsorts, all torch, so CPU and CUDA agree).

>>> from .pieces import from_strings
>>> words = ["b", "", "abcdefgh", "abcdefg", "a\\x00", "a", "abcdefgh", "é"]
>>> r, n = ranks(from_strings(words))
>>> [w for _, w in sorted(zip(r.tolist(), words))] == sorted(words, key=str.encode), n
(True, 7)
>>> compare_literal(from_strings(words), "abcdefg").tolist()
[1, -1, 1, 0, -1, -1, 1, 1]
"""

from __future__ import annotations

import torch

from glint.kernels.strings.pieces import WORD_ROWS, Pieces

_SIGN = -(1 << 63)
_LEVEL = 7


def level_key(p: Pieces, level: int) -> torch.Tensor:
    """Each piece's int64 key at ``level`` (see the module docstring)."""
    m = len(p)
    out = torch.empty(m, dtype=torch.int64, device=p.device)
    t = torch.arange(_LEVEL, device=p.device)
    for a in range(0, m, WORD_ROWS):  # bounded (n, 8) temporaries
        b = min(m, a + WORD_ROWS)
        at = p.starts[a:b] + _LEVEL * level
        count = (p.lengths[a:b] - _LEVEL * level).clamp(0, _LEVEL)
        if p.data.shape[0]:
            idx = (at[:, None] + t).clamp_(0, p.data.shape[0] - 1)
            raw = torch.where(t < count[:, None], p.data[idx], 0)
        else:
            raw = torch.zeros(b - a, _LEVEL, dtype=torch.uint8, device=p.device)
        # [count, b6 .. b0] read little-endian is b0..b6 big-endian above count
        word = torch.cat([count.to(torch.uint8)[:, None], raw.flip(1)], dim=1).contiguous()
        out[a:b] = word.view(torch.int64).reshape(-1) ^ _SIGN
    return out


def literal_keys(lit: bytes) -> list[int]:
    """The keys of a literal at levels 0 .. len // 7 (the last has a count below 7).

    >>> len(literal_keys(b"")), len(literal_keys(b"abcdefg"))
    (1, 2)
    """
    out = []
    for j in range(len(lit) // _LEVEL + 1):
        part = lit[_LEVEL * j : _LEVEL * (j + 1)]
        raw = bytes([len(part)]) + part.ljust(_LEVEL, b"\0")[::-1]
        out.append(int.from_bytes(raw, "little", signed=True) ^ _SIGN)
    return out


def compare_literal(p: Pieces, lit: str | bytes) -> torch.Tensor:
    """-1, 0 or 1 (int8) as each piece sorts before, equal to, or after ``lit``."""
    lit = lit.encode() if isinstance(lit, str) else lit
    res = torch.zeros(len(p), dtype=torch.int8, device=p.device)
    open_ = torch.ones(len(p), dtype=torch.bool, device=p.device)
    for j, kl in enumerate(literal_keys(lit)):  # over the literal's levels, not rows
        k = level_key(p, j)
        res = torch.where(open_ & (k < kl), -1, torch.where(open_ & (k > kl), 1, res)).to(torch.int8)
        open_ &= k == kl
    return res


def ranks(p: Pieces) -> tuple[torch.Tensor, int]:
    """(dense rank of each piece in byte order, number of distinct strings):
    equal strings get equal ranks, so ranks are also exact equality keys.
    One host synchronisation per level that still has ties."""
    m = len(p)
    dev = p.device
    if m == 0:
        return torch.zeros(0, dtype=torch.int64, device=dev), 0
    key = level_key(p, 0)
    perm = torch.argsort(key, stable=True)
    skey = key[perm]
    boundary = torch.ones(m, dtype=torch.bool, device=dev)
    boundary[1:] = skey[1:] != skey[:-1]
    count = skey & 0xFF  # bytes present at the last level compared, per position
    pos = torch.arange(m, device=dev)
    level = 0
    while True:
        alone = boundary.clone()
        alone[:-1] &= boundary[1:]
        active = (~alone & (count == _LEVEL)).nonzero().squeeze(1)
        if active.numel() == 0:
            break
        level += 1
        group = torch.cummax(torch.where(boundary, pos, 0), 0).values[active]
        entries = perm[active]
        k = level_key(p.take(entries), level)
        o = torch.argsort(k, stable=True)
        o = o[torch.argsort(group[o], stable=True)]  # by tied group, then by this level's key
        perm[active] = entries[o]
        k = k[o]
        split = torch.zeros(active.shape[0], dtype=torch.bool, device=dev)
        split[1:] = (k[1:] != k[:-1]) & (group[1:] == group[:-1])
        boundary[active] |= split
        count[active] = k & 0xFF
    dense = torch.cumsum(boundary.long(), 0) - 1
    out = torch.empty(m, dtype=torch.int64, device=dev)
    out[perm] = dense
    return out, int(dense[-1]) + 1
