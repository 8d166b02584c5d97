"""Strings as byte ranges of one buffer, the input of every string kernel.

String ``i`` is ``data[starts[i] : starts[i] + lengths[i]]``. A dictionary's
entries are pieces; so are its entries gathered by row codes (no bytes move),
and so are substrings of either. Pieces may overlap or repeat.

The torch implementations work on contiguous copies of a bounded number of
bytes at a time (:func:`chunk_bounds`, :func:`expand`): per-byte index
tensors are int64, and a whole column's worth of them would not fit.

>>> p = from_strings(["ab", "", "cde"])
>>> p.lengths.tolist(), to_pylist(p.take(torch.tensor([2, 0])))
([2, 0, 3], ['cde', 'ab'])
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

# bytes the torch paths expand at once: per-byte int64 temporaries of this many
# elements cost a few hundred MB at most
CHUNK_BYTES = 1 << 23


@dataclass(frozen=True, slots=True)
class Pieces:
    data: torch.Tensor  # uint8 buffer
    starts: torch.Tensor  # int64 byte offset of each string in data
    lengths: torch.Tensor  # int64 byte length of each string
    contiguous: bool = False  # each string starts where the one before ends (a dictionary's entries)

    def __len__(self) -> int:
        return self.starts.shape[0]

    @property
    def device(self) -> torch.device:
        return self.starts.device

    def take(self, idx: torch.Tensor) -> Pieces:
        return Pieces(self.data, self.starts[idx], self.lengths[idx])

    def slice(self, a: int, b: int) -> Pieces:
        return Pieces(self.data, self.starts[a:b], self.lengths[a:b], self.contiguous)

    def with_lengths(self, lengths: torch.Tensor) -> Pieces:
        return Pieces(self.data, self.starts, lengths)


def from_offsets(offsets: torch.Tensor, data: torch.Tensor) -> Pieces:
    """The entries of an Arrow-layout string array (offsets of length n + 1)."""
    o = offsets.long()
    return Pieces(data, o[:-1], o[1:] - o[:-1], contiguous=True)


def from_strings(values, device="cpu") -> Pieces:
    """Pieces of Python strings or bytes (for literals and tests).

    >>> to_pylist(from_strings(["é", b"x"]))
    ['é', 'x']
    """
    raw = [v.encode() if isinstance(v, str) else bytes(v) for v in values]
    lengths = torch.tensor([len(r) for r in raw], dtype=torch.int64)
    starts = torch.cumsum(lengths, 0) - lengths
    data = (
        torch.frombuffer(bytearray(b"".join(raw)), dtype=torch.uint8)
        if sum(map(len, raw))
        else torch.zeros(0, dtype=torch.uint8)
    )
    return Pieces(data.to(device), starts.to(device), lengths.to(device))


def to_pylist(p: Pieces) -> list[str]:
    """The strings (decoded as UTF-8) on the host; for tests and small results."""
    data = p.data.cpu().numpy().tobytes()
    return [data[s : s + n].decode() for s, n in zip(p.starts.tolist(), p.lengths.tolist())]


def exclusive_cumsum(lengths: torch.Tensor) -> torch.Tensor:
    """[0, l0, l0 + l1, ...]: n + 1 int64 offsets.

    >>> exclusive_cumsum(torch.tensor([2, 0, 3])).tolist()
    [0, 2, 2, 5]
    """
    out = torch.zeros(lengths.shape[0] + 1, dtype=torch.int64, device=lengths.device)
    torch.cumsum(lengths, 0, out=out[1:])
    return out


def chunk_bounds(lengths: torch.Tensor, budget: int = CHUNK_BYTES) -> list[tuple[int, int]]:
    """Ranges [a, b) of pieces whose bytes add up to about ``budget`` each (a
    longer piece gets a range of its own). One host synchronisation.

    >>> chunk_bounds(torch.tensor([3, 3, 3, 3]), budget=6)
    [(0, 2), (2, 4)]
    >>> chunk_bounds(torch.tensor([], dtype=torch.int64))
    []
    """
    n = lengths.shape[0]
    if n == 0:
        return []
    csum = torch.cumsum(lengths, 0)
    total = int(csum[-1])
    if total <= budget:
        return [(0, n)]
    marks = torch.arange(1, -(-total // budget), device=lengths.device, dtype=csum.dtype) * budget
    cuts = torch.searchsorted(csum, marks, right=True).tolist()
    bounds = sorted({0, n, *(c for c in cuts if 0 < c < n)})
    return list(zip(bounds[:-1], bounds[1:]))


def expand(p: Pieces, total: int | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-byte view of a (bounded) set of pieces: (piece of each byte, its
    position inside the piece, its position in p.data), all int64.

    >>> piece, local, pos = expand(Pieces(torch.zeros(9, dtype=torch.uint8), torch.tensor([4, 0]), torch.tensor([2, 1])))
    >>> piece.tolist(), local.tolist(), pos.tolist()
    ([0, 0, 1], [0, 1, 0], [4, 5, 0])
    """
    offs = exclusive_cumsum(p.lengths)
    if total is None:
        total = int(offs[-1])
    piece = torch.repeat_interleave(torch.arange(len(p), device=p.device), p.lengths, output_size=total)
    local = torch.arange(total, device=p.device) - offs[piece]
    return piece, local, p.starts[piece] + local


def packed(p: Pieces) -> tuple[torch.Tensor, torch.Tensor]:
    """(the pieces' bytes back to back, each piece's offset in them: n + 1
    int64). A view of the buffer for contiguous pieces, a gather otherwise;
    for the torch paths, on a bounded chunk of pieces.

    >>> buf, offs = packed(from_strings(["ab", "c"]).take(torch.tensor([1, 0])))
    >>> bytes(buf.tolist()), offs.tolist()
    (b'cab', [0, 1, 3])
    """
    offs = exclusive_cumsum(p.lengths)
    total = int(offs[-1]) if len(p) else 0
    if p.contiguous:
        lo = int(p.starts[0]) if len(p) else 0
        return p.data[lo : lo + total], offs
    _, _, pos = expand(p, total)
    return p.data[pos], offs


def segment_sums(values: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    """Sums of values[offs[i] : offs[i + 1]] (int64), by a running sum.

    >>> segment_sums(torch.tensor([1, 2, 3, 4]), torch.tensor([0, 1, 1, 4])).tolist()
    [1, 0, 9]
    """
    run = torch.zeros(values.shape[0] + 1, dtype=torch.int64, device=values.device)
    torch.cumsum(values, 0, out=run[1:])
    return run[offs[1:]] - run[offs[:-1]]


# elements whose bytes are gathered at once: (n, 8) int64 indices of this many rows stay small
WORD_ROWS = 1 << 22


def load_word(data: torch.Tensor, pos: torch.Tensor, avail: torch.Tensor | int) -> torch.Tensor:
    """The little-endian int64 word of data[pos : pos + 8], bytes at or beyond
    ``avail`` (per element, 0..8) taken as 0. Positions may be out of range
    where avail <= 0.

    >>> d = torch.tensor(list(b"abcdefghij"), dtype=torch.uint8)
    >>> load_word(d, torch.tensor([0, 8]), torch.tensor([8, 2])).tolist() == \\
    ...     [int.from_bytes(b"abcdefgh", "little"), int.from_bytes(b"ij", "little")]
    True
    """
    n = pos.shape[0]
    out = torch.zeros(n, dtype=torch.int64, device=pos.device)
    if data.shape[0] == 0:
        return out
    t = torch.arange(8, device=pos.device)
    avail = torch.as_tensor(avail, device=pos.device).expand(n)
    for a in range(0, n, WORD_ROWS):
        b = min(n, a + WORD_ROWS)
        idx = (pos[a:b, None] + t).clamp_(0, data.shape[0] - 1)
        raw = torch.where(t < avail[a:b, None], data[idx], 0)
        out[a:b] = raw.contiguous().view(torch.int64).reshape(-1)
    return out


def word_of(lit: bytes) -> int:
    """A literal's (up to 8) bytes as the signed int64 :func:`load_word` gives."""
    return int.from_bytes(lit.ljust(8, b"\0"), "little", signed=True)
