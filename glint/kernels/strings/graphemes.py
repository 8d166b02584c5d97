"""Grapheme clusters (UAX #29 extended clusters, as utf8proc finds them
for DuckDB) and reversing strings by them, torch only.

Every code point gets its properties from :mod:`.grapheme_table` (a binary
search of run starts); a break before code point i is then decided for all
code points at once from the pair (i - 1, i) and, for the rules that look
further back, from running maxima of positions: GB9c (Indic conjuncts),
GB11 (emoji ZWJ sequences) and GB12/13 (regional-indicator pairs). A
string of ASCII bytes is reversed byte by byte, as DuckDB does (so CR LF
turns into LF CR there, and only there).

>>> from .pieces import from_strings, to_pylist
>>> p = from_strings(["abc", "e\\u0301x", "👍🏽!", "🇩🇪🇫🇷", "a\\r\\nb", "é\\r\\n", ""])
>>> to_pylist(reverse(p)) == ['cba', 'xe\\u0301', '!👍🏽', '🇫🇷🇩🇪', 'b\\n\\ra', '\\r\\né', '']
True
"""

from __future__ import annotations

import torch

from glint.kernels.strings import grapheme_table as G
from glint.kernels.strings.pieces import Pieces, chunk_bounds, expand, packed
from glint.kernels.strings.search import char_width

_CR, _LF, _CONTROL, _EXTEND, _ZWJ, _RI, _PREPEND, _SPACING, _L, _V, _T = range(1, 12)
_LV, _LVT = 12, 13
_EXT_PICT, _LINKER, _CONSONANT, _INCB_EXTEND = 0x10, 0x20, 0x40, 0x80

_TABLES: dict = {}


def _table(device) -> tuple[torch.Tensor, torch.Tensor]:
    key = str(device)
    if key not in _TABLES:
        _TABLES[key] = (
            torch.tensor(G.STARTS, dtype=torch.int64, device=device),
            torch.tensor(G.VALUES, dtype=torch.int64, device=device),
        )
    return _TABLES[key]


def properties(cp: torch.Tensor) -> torch.Tensor:
    """Property bits of each code point (see :mod:`.grapheme_table`), with
    Hangul syllables as LV (13 - 1) or LVT.

    >>> [int(v) & 0xF for v in properties(torch.tensor([0x61, 0x301, 0x200D, 0xAC00, 0xAC01]))]
    [0, 4, 5, 12, 13]
    """
    starts, values = _table(cp.device)
    v = values[torch.searchsorted(starts, cp, right=True) - 1]
    syllable = (cp >= 0xAC00) & (cp <= 0xD7A3)
    hangul = torch.where((cp - 0xAC00) % 28 == 0, _LV, _LVT)
    return torch.where(syllable, (v & ~0xF) | hangul, v)


def _decode(buf: torch.Tensor, lead_pos: torch.Tensor) -> torch.Tensor:
    """The code point starting at each of ``lead_pos`` in ``buf``."""
    at = (lead_pos[:, None] + torch.arange(4, device=buf.device)).clamp(max=max(buf.shape[0] - 1, 0))
    b = buf[at].long()
    w = char_width(b[:, 0])
    c = b[:, 1:] & 0x3F
    return torch.where(
        w == 1,
        b[:, 0],
        torch.where(
            w == 2,
            ((b[:, 0] & 0x1F) << 6) | c[:, 0],
            torch.where(
                w == 3,
                ((b[:, 0] & 0x0F) << 12) | (c[:, 0] << 6) | c[:, 1],
                ((b[:, 0] & 0x07) << 18) | (c[:, 0] << 12) | (c[:, 1] << 6) | c[:, 2],
            ),
        ),
    )


def _last_where(flag: torch.Tensor) -> torch.Tensor:
    """For each index, the largest index <= it where flag holds (-1: none)."""
    idx = torch.arange(flag.shape[0], device=flag.device)
    marks = torch.where(flag, idx, -1)
    return torch.cummax(marks, 0).values if flag.numel() else marks


def cluster_breaks(prop: torch.Tensor, first: torch.Tensor) -> torch.Tensor:
    """Is there a cluster break before each code point? ``prop``: property
    bits of consecutive code points; ``first``: the code point starts a
    string (always a break)."""
    n = prop.shape[0]
    if n == 0:
        return first
    g = prop & 0xF
    prev = torch.cat([torch.zeros(1, dtype=g.dtype, device=g.device), g[:-1]])
    idx = torch.arange(n, device=g.device)
    start = torch.cummax(torch.where(first, idx, 0), 0).values  # first code point of each one's string

    def before(k: torch.Tensor) -> torch.Tensor:  # index k - 1 exists in the same string
        return (k >= start) & (k >= 0)

    control = (g == _CR) | (g == _LF) | (g == _CONTROL)
    prev_control = (prev == _CR) | (prev == _LF) | (prev == _CONTROL)
    hangul = (
        ((prev == _L) & ((g == _L) | (g == _V) | (g == _LV) | (g == _LVT)))
        | (((prev == _LV) | (prev == _V)) & ((g == _V) | (g == _T)))
        | (((prev == _LVT) | (prev == _T)) & (g == _T))
    )
    join = (g == _EXTEND) | (g == _ZWJ) | (g == _SPACING) | (prev == _PREPEND)
    # GB9c: Consonant [Extend Linker]* Linker [Extend Linker]* x Consonant
    el = (prop & (_LINKER | _INCB_EXTEND)) != 0
    q = _last_where(~el)
    q_prev = torch.cat([torch.full((1,), -1, device=g.device, dtype=q.dtype), q[:-1]])
    linkers = torch.cumsum((prop & _LINKER) != 0, 0)
    linkers_prev = torch.cat([torch.zeros(1, dtype=linkers.dtype, device=g.device), linkers[:-1]])
    qc = q_prev.clamp(min=0)
    conjunct = (
        ((prop & _CONSONANT) != 0) & before(q_prev) & ((prop[qc] & _CONSONANT) != 0) & (linkers_prev - linkers[qc] > 0)
    )
    # GB11: ExtPict Extend* ZWJ x ExtPict
    r = _last_where(g != _EXTEND)
    r2 = torch.cat([torch.full((2,), -1, device=g.device, dtype=r.dtype), r[:-2]])[:n]
    emoji = (prev == _ZWJ) & ((prop & _EXT_PICT) != 0) & before(r2) & ((prop[r2.clamp(min=0)] & _EXT_PICT) != 0)
    # GB12/13: regional indicators pair up
    s = _last_where(g != _RI)
    s_prev = torch.cat([torch.full((1,), -1, device=g.device, dtype=s.dtype), s[:-1]])
    run = (idx - 1) - torch.maximum(s_prev, start - 1)  # RIs ending just before
    flags = (prev == _RI) & (g == _RI) & (run % 2 == 1)
    keep = ~(prev == _CR) | ~(g == _LF)
    brk = torch.where(
        ~keep, False, torch.where(prev_control | control, True, ~(hangul | join | conjunct | emoji | flags))
    )
    return brk | first


def reverse(p: Pieces) -> Pieces:
    """Each piece reversed by grapheme clusters (ASCII pieces: by bytes), in
    a new buffer with the same lengths."""
    out = torch.empty(int(p.lengths.sum()) if len(p) else 0, dtype=torch.uint8, device=p.device)
    offs_all = torch.cumsum(p.lengths, 0) - p.lengths
    for a, b in chunk_bounds(p.lengths):
        sub = p.slice(a, b)
        buf, offs = packed(sub)
        if buf.numel() == 0:
            continue
        piece, local, _ = expand(Pieces(buf, offs[:-1], sub.lengths))
        lead = (buf & 0xC0) != 0x80
        wide = torch.zeros(len(sub), dtype=torch.int64, device=p.device)
        wide.index_add_(0, piece, (buf >= 0x80).long())
        ascii_piece = wide == 0
        lead_pos = lead.nonzero().squeeze(1)
        cps = _decode(buf, lead_pos)
        first = local[lead_pos] == 0
        brk = cluster_breaks(properties(cps), first) | ascii_piece[piece[lead_pos]]
        starts_flag = torch.zeros_like(lead)
        starts_flag[lead_pos[brk]] = True
        starts_flag |= ascii_piece[piece]
        total = buf.shape[0]
        pos = torch.arange(total, device=p.device)
        cluster_start = torch.cummax(torch.where(starts_flag, pos, 0), 0).values - offs[:-1][piece]
        # the end of each byte's cluster: the next cluster start in its piece, or the piece's end
        nxt = torch.where(starts_flag, pos, total).flip(0)
        nxt = torch.cummin(nxt, 0).values.flip(0)
        after = torch.cat([nxt[1:], torch.full((1,), total, device=p.device, dtype=nxt.dtype)])
        piece_end = offs[1:][piece]
        end = torch.minimum(after, piece_end) - offs[:-1][piece]
        new_local = sub.lengths[piece] - end + (local - cluster_start)
        out[offs_all[a:b][piece] + new_local] = buf
    return Pieces(out, offs_all, p.lengths)
