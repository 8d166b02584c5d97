"""LIKE with a pattern per string (``s LIKE p`` where p is a column): every
(string, pattern) pair is matched at once on the device, torch only.

Patterns are tokenized on the device: a byte is a literal, ``%`` (any run
of code points), ``_`` (one code point), an escape character (dropped; the
byte after it is a literal) or, when a pattern ends in a lone escape
character, an error token. Then the pairs run as one automaton each: a
boolean state per byte position of the string ("the pattern so far matches
the string up to here"), advanced one pattern token per step for all pairs
together: a literal shifts the states by one byte where the byte equals it,
``_`` moves them to the next code-point start, ``%`` spreads them to every
later code-point start (a running OR). A pair matches when the state at the
string's end is set after its last token. Pairs are bucketed by string
length and matched in chunks, so the state matrix stays small.

DuckDB raises "Like pattern must not end with escape character!" only when
matching reaches such an escape with characters of the string left; the
error token reports exactly that (see :func:`match_pairs`).

>>> from .pieces import from_strings
>>> s = from_strings(["abc", "abc", "aé", "a%", "ab", "ab"])
>>> p = from_strings(["a%", "_b_", "a_", "a#%", "a#", "b#"])
>>> ok, err = match_pairs(s, p, ord("#"))
>>> ok.tolist(), err.tolist()
([True, True, True, True, False, False], [False, False, False, False, True, False])
"""
from __future__ import annotations

import torch

from .pieces import Pieces, packed

LIT, ANY, ONE, DROP, ERR = 0, 1, 2, 3, 4
_STATE_CELLS = 1 << 24          # booleans of one chunk's state matrix


def tokenize(p: Pieces, escape: int | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(token kind, token byte, n + 1 token offsets per pattern).

    >>> from .pieces import from_strings
    >>> kind, byte, offs = tokenize(from_strings(["a%_", "##x#"]), ord("#"))
    >>> kind.tolist(), bytes(byte.tolist()), offs.tolist()
    ([0, 1, 2, 0, 0, 4], b'a%_#x#', [0, 3, 6])
    """
    buf, offs = packed(p)
    dev = buf.device
    b = buf.long()
    n = b.shape[0]
    pos = torch.arange(n, device=dev)
    starts = offs[:-1][p.lengths > 0]
    if escape is None:
        escaper = torch.zeros(n, dtype=torch.bool, device=dev)
    else:
        is_esc = b == escape
        # runs of escape bytes: the 1st, 3rd, ... of a run escape the byte after them
        brk = torch.where(is_esc, torch.zeros_like(pos), pos + 1)
        brk[starts] = torch.maximum(brk[starts], starts)
        run_start = torch.cummax(brk, 0).values if n else brk
        escaper = is_esc & ((pos - run_start) % 2 == 0)
    escaped = torch.zeros(n, dtype=torch.bool, device=dev)
    if n:
        escaped[1:] = escaper[:-1]
        escaped[starts] = False
    kind = torch.full((n,), LIT, dtype=torch.int64, device=dev)
    kind = torch.where(~escaped & (b == ord("%")), ANY, kind)
    kind = torch.where(~escaped & (b == ord("_")), ONE, kind)
    kind = torch.where(escaper, DROP, kind)
    ends = offs[1:][p.lengths > 0] - 1
    last = torch.zeros(n, dtype=torch.bool, device=dev)
    last[ends] = True
    kind = torch.where(escaper & last, ERR, kind)
    keep = kind != DROP
    counts = torch.zeros(len(p) + 1, dtype=torch.int64, device=dev)
    if n:
        piece = torch.repeat_interleave(torch.arange(len(p), device=dev), p.lengths, output_size=n)
        counts.index_add_(0, piece + 1, keep.long())
    return kind[keep], b[keep], torch.cumsum(counts, 0)


def match_pairs(s: Pieces, p: Pieces, escape: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    """(s[i] LIKE p[i], matching reached a lone escape at the end of p[i]
    with characters of s[i] left) for every pair."""
    m = len(s)
    dev = s.device
    ok = torch.zeros(m, dtype=torch.bool, device=dev)
    err = torch.zeros(m, dtype=torch.bool, device=dev)
    if m == 0:
        return ok, err
    kind, byte, toffs = tokenize(p, escape)
    # buckets of strings up to 2**k - 1 bytes, so a chunk's state matrix is at most twice what it needs
    bucket = torch.ceil(torch.log2((s.lengths + 1).double())).long()
    order = torch.argsort(bucket)
    sizes = torch.bincount(bucket, minlength=1).tolist()     # one synchronisation: the chunking needs the sizes
    a = 0
    for k, count in enumerate(sizes):       # over length buckets (at most 64), not rows
        width = 1 << k
        step = max(1, _STATE_CELLS // width)
        for c in range(a, a + count, step):
            idx = order[c: min(a + count, c + step)]
            ok[idx], err[idx] = _match_chunk(s.take(idx), toffs[idx], toffs[idx + 1], kind, byte, width)
        a += count
    return ok, err


def _match_chunk(s: Pieces, t0: torch.Tensor, t1: torch.Tensor, kind: torch.Tensor, byte: torch.Tensor,
                 width: int) -> tuple[torch.Tensor, torch.Tensor]:
    m, dev = len(s), s.device
    col = torch.arange(width, device=dev)
    n = s.lengths[:, None]
    inside = col[None, :] < n
    idx = (s.starts[:, None] + col[None, :]).clamp_(0, max(s.data.shape[0] - 1, 0))
    chars = torch.where(inside, s.data[idx].long(), 0) if s.data.shape[0] else torch.zeros(m, width, dtype=torch.long,
                                                                                             device=dev)
    # code-point starts (and the end of the string): where '_' and '%' may leave a state
    bound = (col[None, :] <= n) & ~(inside & ((chars & 0xC0) == 0x80))
    # the code-point start before each position, for '_'
    marks = torch.where(bound, col[None, :], -1)
    before = torch.full_like(marks, -1)
    before[:, 1:] = torch.cummax(marks, 1).values[:, :-1]
    state = torch.zeros(m, width, dtype=torch.bool, device=dev)
    state[:, 0] = True
    err = torch.zeros(m, dtype=torch.bool, device=dev)
    steps = int((t1 - t0).max()) if m else 0
    for t in range(steps):                  # over pattern tokens, not rows
        active = t0 + t < t1
        at = torch.where(active, t0 + t, 0)
        k = torch.where(active, kind[at] if kind.numel() else 0, -1)[:, None]
        c = byte[at][:, None] if byte.numel() else torch.zeros(m, 1, dtype=torch.long, device=dev)
        lit = torch.zeros_like(state)
        lit[:, 1:] = state[:, :-1] & (chars[:, :-1] == c)
        one = bound & (col[None, :] > 0) & state.gather(1, before.clamp(min=0)) & (before >= 0)
        any_ = bound & torch.cummax(state.to(torch.uint8), 1).values.bool()
        reached = (k[:, 0] == ERR) & (state & inside).any(1)
        err |= reached
        new = torch.where(k == LIT, lit, torch.where(k == ONE, one, torch.where(k == ANY, any_, state)))
        state = torch.where(k == ERR, torch.zeros_like(state), new)
    ok = state.gather(1, s.lengths[:, None]).squeeze(1)
    return ok, err
