"""Code-point positions to byte positions inside pieces (SUBSTRING counts
code points, the bytes do not).

For a pure-ASCII piece the two are the same; callers use this only for the
pieces that hold other code points. In valid UTF-8 a code point starts at
every byte that is not a continuation byte (``10xxxxxx``): the byte position
of code point c is where the running count of such bytes first exceeds c.

>>> from .pieces import from_strings
>>> p = from_strings(["héllo", "日本語", "ab"])
>>> char_to_byte(p, torch.tensor([2, 1, 2])).tolist(), char_to_byte(p, torch.tensor([5, 3, 0])).tolist()
([3, 3, 2], [6, 9, 0])
"""

from __future__ import annotations

import torch

from glint.kernels.strings.pieces import Pieces, chunk_bounds, packed


def char_to_byte(p: Pieces, chars: torch.Tensor) -> torch.Tensor:
    """Byte offset of code point ``chars[i]`` (0 .. its count, clamped) in piece i."""
    out = torch.zeros(len(p), dtype=torch.int64, device=p.device)
    for a, b in chunk_bounds(p.lengths):
        buf, offs = packed(p.slice(a, b))
        starts = torch.cumsum(((buf & 0xC0) != 0x80).long(), 0)  # code points up to each byte
        before = torch.cat([torch.zeros(1, dtype=torch.int64, device=p.device), starts])[offs[:-1]]
        at = torch.searchsorted(starts, before + chars[a:b].clamp(min=0) + 1)
        out[a:b] = torch.minimum(at, offs[1:]) - offs[:-1]
    return out
