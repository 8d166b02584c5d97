"""LIKE with a pattern per string (``s LIKE p`` where p is a column): every
(string, pattern) pair is matched at once on the device, torch only.

Patterns are tokenized on the device: a byte is a literal, ``%`` (any run
of code points), ``_`` (one code point) or an escape character (dropped;
the byte after it is a literal). As for constant patterns
(:mod:`.like`), a pattern is then runs of literals and ``_`` between
``%``: the first run is matched at the string's start, the last at its end,
and each run between at its leftmost place after the previous one (exact,
since a run covers a fixed number of code points: a match that starts
earlier ends earlier). All pairs advance together: one step per token of
the longest run, over the pairs (anchored runs) or over the candidate
starts that are still alive (the runs between ``%``).

DuckDB raises "Like pattern must not end with escape character!" only when
matching reaches such an escape with characters of the string left, that
is when the pattern without it, followed by ``_%``, matches: such a
pattern is matched in that form and reported (:func:`match_pairs`).

>>> from .pieces import from_strings
>>> s = from_strings(["abc", "abc", "aé", "a%", "ab", "ab", "xaxbx"])
>>> p = from_strings(["a%", "_b_", "a_", "a#%", "a#", "b#", "%a%b%"])
>>> ok, err = match_pairs(s, p, ord("#"))
>>> ok.tolist(), err.tolist()
([True, True, True, True, False, False, True], [False, False, False, False, True, False, False])
"""

from __future__ import annotations

import torch

from glint.kernels.strings.pieces import Pieces, chunk_bounds, exclusive_cumsum, packed
from glint.kernels.strings.search import char_width

LIT, ANY, ONE = 0, 1, 2
_CANDIDATES = 1 << 22  # candidate starts of a search held at once
_CHECK_EVERY = 8  # tokens between two looks for pairs still matching (a synchronisation)


def tokenize(p: Pieces, escape: int | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(token kind, token byte, n + 1 token offsets per pattern, patterns
    that end in a lone escape character). Such a pattern's escape becomes
    ``_%``.

    >>> from .pieces import from_strings
    >>> kind, byte, offs, lone = tokenize(from_strings(["a%_", "##x#"]), ord("#"))
    >>> kind.tolist(), bytes(byte.tolist()), offs.tolist(), lone.tolist()
    ([0, 1, 2, 0, 0, 2, 1], b'a%_#x##', [0, 3, 7], [False, True])
    """
    buf, offs = packed(p)
    dev = buf.device
    b = buf.long()
    n = b.shape[0]
    pos = torch.arange(n, device=dev)
    nonempty = p.lengths > 0
    starts, ends = offs[:-1][nonempty], offs[1:][nonempty] - 1
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
    last = torch.zeros(n, dtype=torch.bool, device=dev)
    last[ends] = True
    lone_at = escaper & last
    kind = torch.where(~escaped & (b == ord("%")), ANY, LIT)
    kind = torch.where(~escaped & (b == ord("_")), ONE, kind)
    # tokens per byte: none for an escape, two (_ and %) for a lone one at the end
    count = torch.where(lone_at, 2, torch.where(escaper, 0, 1))
    src = torch.repeat_interleave(pos, count)
    second = torch.zeros_like(src, dtype=torch.bool)
    if src.numel():
        second[1:] = src[1:] == src[:-1]
    kinds = torch.where(lone_at[src], torch.where(second, ANY, ONE), kind[src])
    piece_of_byte = torch.repeat_interleave(torch.arange(len(p), device=dev), p.lengths, output_size=n)
    per_piece = torch.zeros(len(p), dtype=torch.int64, device=dev)
    per_piece.index_add_(0, piece_of_byte, count)
    lone = torch.zeros(len(p), dtype=torch.bool, device=dev)
    lone[piece_of_byte[lone_at]] = True
    return kinds, b[src], exclusive_cumsum(per_piece), lone


def _byte(s: Pieces, pair: torch.Tensor, at: torch.Tensor) -> torch.Tensor:
    """Byte ``at`` of string ``pair`` (0 beyond its end)."""
    size = s.data.shape[0]
    if size == 0:
        return torch.zeros_like(at)
    got = s.data[(s.starts[pair] + at).clamp(0, size - 1)].long()
    return torch.where((at >= 0) & (at < s.lengths[pair]), got, 0)


def _step(s: Pieces, pair, kind, byte, at, ok):
    """One token forward from ``at``: (still matching, the new position)."""
    c = _byte(s, pair, at)
    inside = at < s.lengths[pair]
    lit = inside & (c == byte)
    ok = ok & torch.where(kind == ONE, inside, lit)
    return ok, torch.where(kind == ONE, at + char_width(c), at + 1)


def _forward(s, pair, kind, byte, a, b, at, ok):
    """Tokens [a, b) of each pair anchored at ``at``: (matched, end)."""
    for k in range(int((b - a).max()) if a.numel() else 0):  # over run tokens, not rows
        active = a + k < b
        if k % _CHECK_EVERY == _CHECK_EVERY - 1 and not bool((ok & active).any()):
            break  # every pair has failed or finished
        t = torch.where(active, a + k, 0)
        nok, nat = _step(s, pair, kind[t], byte[t], at, ok)
        ok, at = torch.where(active, nok, ok), torch.where(active, nat, at)
    return ok, at


def _backward(s, pair, kind, byte, a, b, lower, ok):
    """Tokens [a, b) anchored at each string's end, starting at or after ``lower``."""
    end = s.lengths[pair].clone()
    for k in range(int((b - a).max()) if a.numel() else 0):  # over run tokens, not rows
        active = a + k < b
        if k % _CHECK_EVERY == _CHECK_EVERY - 1 and not bool((ok & active).any()):
            break  # every pair has failed or finished
        t = torch.where(active, b - 1 - k, 0)
        back = end - 1
        for _ in range(3):  # at most three continuation bytes precede a lead byte
            cont = (kind[t] == ONE) & (back > 0) & ((_byte(s, pair, back) & 0xC0) == 0x80)
            back = back - cont.long()
        good = (back >= lower) & ((kind[t] == ONE) | (_byte(s, pair, back) == byte[t]))
        ok = torch.where(active, ok & good, ok)
        end = torch.where(active, back, end)
    return ok & (end >= lower)


def _search(s, kind, byte, a, b, at, ok):
    """The leftmost match at or after ``at`` of tokens [a, b) (a run between
    two '%'): (found, its end). Every start is a candidate; candidates are
    dropped as their tokens fail."""
    m = ok.shape[0]
    end = at.clone()
    found = ok & (a == b)  # an empty run (%%) matches where it is
    todo = ok & (a < b)
    room = torch.where(todo, (s.lengths - at).clamp(min=0), 0)
    best = torch.full((m,), 1 << 62, dtype=torch.int64, device=at.device)
    best_end = torch.zeros_like(best)
    for lo, hi in chunk_bounds(room, _CANDIDATES):  # bounded candidates per chunk
        cnt = room[lo:hi]
        pair = torch.repeat_interleave(torch.arange(lo, hi, device=at.device), cnt)
        if pair.numel() == 0:
            continue
        first = exclusive_cumsum(cnt)[:-1]
        start = at[pair] + torch.arange(pair.shape[0], device=at.device) - torch.repeat_interleave(first, cnt)
        head = _byte(s, pair, start)
        alive = (head & 0xC0) != 0x80
        t = a[pair]
        alive &= (kind[t] != LIT) | (head == byte[t])
        pair, start, t = pair[alive], start[alive], t[alive]
        pos = start
        for k in range(int((b[pair] - t).max()) if pair.numel() else 0):  # over run tokens, not rows
            if pair.numel() == 0:
                break
            active = t + k < b[pair]
            tk = torch.where(active, t + k, 0)
            good, npos = _step(s, pair, kind[tk], byte[tk], pos, torch.ones_like(active))
            keep = ~active | good
            pos = torch.where(active, npos, pos)
            pair, start, pos, t = pair[keep], start[keep], pos[keep], t[keep]
        best.scatter_reduce_(0, pair, start, "amin")
        # the end of the leftmost match: its start is the minimum, so pick that candidate's end
        is_best = start == best[pair]
        best_end[pair[is_best]] = pos[is_best]
    hit = todo & (best < (1 << 62))
    found = found | hit
    end = torch.where(hit, best_end, end)
    return found, end


def match_pairs(
    s: Pieces, p: Pieces, escape: int | None, pattern_of: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(s[i] LIKE p[j], matching reached a lone escape at the end of p[j]
    with characters of s[i] left) for every pair i, where j = pattern_of[i]
    (default: i). Each pattern is tokenized once."""
    m, dev = len(s), s.device
    if m == 0:
        z = torch.zeros(0, dtype=torch.bool, device=dev)
        return z, z
    kind, byte, toffs, lone = tokenize(p, escape)
    if kind.numel() == 0:  # only empty patterns: they match empty strings
        return s.lengths == 0, torch.zeros(m, dtype=torch.bool, device=dev)
    pair = torch.arange(m, device=dev)
    t0, t1 = toffs[:-1], toffs[1:]
    if pattern_of is not None:
        t0, t1, lone = t0[pattern_of], t1[pattern_of], lone[pattern_of]
    is_any = kind == ANY
    any_at = is_any.nonzero().squeeze(1)
    any_before = exclusive_cumsum(is_any.long())
    first_rank = any_before[t0]
    count = any_before[t1] - first_rank

    def any_token(j: torch.Tensor) -> torch.Tensor:  # token index of each pattern's j-th '%'
        return any_at[(first_rank + j).clamp(0, max(any_at.shape[0] - 1, 0))] if any_at.numel() else t1

    head_end = torch.where(count > 0, any_token(torch.zeros_like(count)), t1)
    ok, at = _forward(
        s, pair, kind, byte, t0, head_end, torch.zeros_like(t0), torch.ones(m, dtype=torch.bool, device=dev)
    )
    ok = ok & ((count > 0) | (at == s.lengths))
    for j in range(int(count.max()) - 1 if count.numel() else 0):  # over the runs between '%', not rows
        between = count >= j + 2
        a = torch.where(between, any_token(torch.full_like(count, j)) + 1, 0)
        b = torch.where(between, any_token(torch.full_like(count, j + 1)), 0)
        found, end = _search(s, kind, byte, a, b, at, ok & between)
        ok = torch.where(between, found, ok)
        at = torch.where(between, end, at)
    tail = count > 0
    a = torch.where(tail, any_token(count - 1) + 1, t1)
    ok = torch.where(tail, _backward(s, pair, kind, byte, torch.where(tail, a, t1), t1, at, ok), ok)
    return ok & ~lone, ok & lone
