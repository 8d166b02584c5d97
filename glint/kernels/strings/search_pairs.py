"""Searching each string for its own needle (``strpos(s, t)``,
``contains(s, t)`` with t a column): the leftmost occurrence of piece t[i]
in piece s[i], torch only.

Candidates are the positions of s[i] whose byte equals t[i]'s first byte
and that leave room for the whole needle; each candidate is verified by a
byte compare of the pair (:func:`.equality.pair_equal`), and the leftmost
verified one wins. The work is bounded per chunk of the strings' bytes.

>>> from .pieces import from_strings
>>> find_pairs(from_strings(["hello", "hello", "", "aaab", "x"]), from_strings(["l", "lo", "", "ab", "xy"])).tolist()
[2, 3, 0, 2, -1]
"""

from __future__ import annotations

import torch

from glint.kernels.strings.equality import pair_equal
from glint.kernels.strings.pieces import Pieces, chunk_bounds, expand

_NONE = 1 << 62


def find_pairs(s: Pieces, t: Pieces) -> torch.Tensor:
    """Leftmost byte offset of t[i] in s[i] (0 for an empty needle), or -1."""
    m = len(s)
    out = torch.full((m,), _NONE, dtype=torch.int64, device=s.device)
    if m == 0:
        return out
    tl = t.lengths
    first = (
        t.data[t.starts.clamp(0, max(t.data.shape[0] - 1, 0))].long()
        if t.data.shape[0]
        else torch.zeros(m, dtype=torch.long, device=s.device)
    )
    # only the starts that leave room for the needle are candidates
    room = (s.lengths - tl + 1).clamp(min=0)
    room = torch.where(tl > 0, room, 0)
    for a, b in chunk_bounds(room):
        sub = Pieces(s.data, s.starts[a:b], room[a:b])
        piece, local, pos = expand(sub)
        if pos.numel() == 0:
            continue
        pair = piece + a
        hit = s.data[pos].long() == first[pair]
        piece, local, pair = piece[hit], local[hit], pair[hit]
        if pair.numel() == 0:
            continue
        cand = Pieces(s.data, s.starts[pair] + local, tl[pair])
        ok = pair_equal(cand, Pieces(t.data, t.starts[pair], tl[pair]))
        best = torch.where(ok, local, _NONE)
        out.scatter_reduce_(0, pair, best, "amin")
    out = torch.where(tl == 0, torch.zeros_like(out), out)
    return torch.where(out == _NONE, -1, out)
