"""Searching pieces for literal bytes: compares anchored at a position,
leftmost occurrence at or after a position, and code-point steps.

Positions are byte offsets inside each piece (int64, one per piece); -1
marks a piece that already failed. A literal is valid UTF-8, so a match
always starts on a code-point boundary.

>>> from .pieces import from_strings
>>> p = from_strings(["special requests", "requests", "", "ab ab"])
>>> find(p, b"requests", torch.zeros(4, dtype=torch.int64)).tolist()
[8, 0, -1, -1]
>>> find(p, b"ab", torch.tensor([0, 0, 0, 1])).tolist()
[-1, -1, -1, 3]
>>> match_at(p, b"req", torch.tensor([8, 0, 0, 0])).tolist()
[True, True, False, False]
"""

from __future__ import annotations

import torch

from glint.kernels.backend import HAS_TRITON, blocks, on_device, use_triton
from glint.kernels.strings.pieces import Pieces, chunk_bounds, load_word, packed, word_of


def match_at(p: Pieces, lit: bytes, pos: torch.Tensor) -> torch.Tensor:
    """Does ``lit`` occur in each piece starting exactly at byte ``pos``?"""
    L = len(lit)
    ok = (pos >= 0) & (pos + L <= p.lengths)
    base = p.starts + pos
    for c in range(0, L, 8):  # over the literal's words, not rows
        w = lit[c : c + 8]
        ok &= load_word(p.data, base + c, torch.where(ok, len(w), 0)) == word_of(w)
    return ok


_WORDS: dict = {}  # (device, literals) -> their words and lengths on the device (is_one_of)


def is_one_of(p: Pieces, lits: list[bytes]) -> torch.Tensor:
    """Is each piece one of ``lits``, literals of at most 8 bytes? A string
    that short is its first word and its length, so every literal is tested
    in one comparison of each piece's word (instead of a match_at a literal).

    >>> from .pieces import from_strings
    >>> is_one_of(from_strings(["AIR", "MAIL", "AIR REG", "", "MAI"]), [b"MAIL", b"AIR", b""]).tolist()
    [True, True, False, True, False]
    """
    assert all(len(lit) <= 8 for lit in lits)
    if not len(p) or not lits:
        return torch.zeros(len(p), dtype=torch.bool, device=p.device)
    key = (p.device, tuple(lits))
    got = _WORDS.get(key)
    if got is None:
        if len(_WORDS) > 256:
            _WORDS.clear()
        got = _WORDS[key] = (
            torch.tensor([word_of(lit) for lit in lits], dtype=torch.int64).to(p.device),
            torch.tensor([len(lit) for lit in lits], dtype=torch.int64).to(p.device),
        )
    words, lengths = got
    word = load_word(p.data, p.starts, p.lengths.clamp(max=8))
    return ((word[:, None] == words) & (p.lengths[:, None] == lengths)).any(1)


def find(p: Pieces, lit: bytes, pos: torch.Tensor) -> torch.Tensor:
    """Leftmost start >= pos of ``lit`` inside each piece, or -1 (also where
    pos is -1). The empty literal is found at pos itself."""
    if len(lit) == 0:
        return torch.where((pos >= 0) & (pos <= p.lengths), pos, -1)
    if len(p) and use_triton(p.data) and _by_row(p, [lit]):
        end = torch.empty(len(p), dtype=torch.int64, device=p.device)
        _find_seq_triton(p, [lit], pos, end)
        return torch.where(end >= 0, end - len(lit), -1)
    out = torch.full((len(p),), -1, dtype=torch.int64, device=p.device)
    if len(p):
        if use_triton(p.data):
            (_find_flat_triton if p.contiguous else _find_triton)(p, lit, pos, out)
        else:
            _find_torch(p, lit, pos, out)
    return out


def find_seq(p: Pieces, lits: list[bytes], pos: torch.Tensor) -> torch.Tensor:
    """End of the leftmost match of ``lits[0]`` at or after pos, then of
    ``lits[1]`` at or after that end, and so on: the byte position after the
    last literal, or -1 where one is missing (or pos is -1). LIKE's runs
    between '%' that are single literals ('%special%requests%').

    >>> from .pieces import from_strings
    >>> p = from_strings(["special requests", "requests special", "xspecialrequests"])
    >>> find_seq(p, [b"special", b"requests"], torch.zeros(3, dtype=torch.int64)).tolist()
    [16, -1, 16]
    """
    if len(p) and use_triton(p.data) and _by_row(p, lits):
        out = torch.empty(len(p), dtype=torch.int64, device=p.device)
        _find_seq_triton(p, lits, pos, out)
        return out
    for lit in lits:  # over the pattern's literals, not rows
        start = find(p, lit, pos)
        pos = torch.where(start >= 0, start + len(lit), -1)
    return pos


def _by_row(p: Pieces, lits: list[bytes]) -> bool:
    """Whether the per-string scan (:func:`_find_seq_triton`) serves: contiguous
    short strings (known without asking the device) and literals of 1-16 bytes."""
    return (
        p.contiguous
        and all(0 < len(lit) <= _ROW_LIT_BYTES for lit in lits)
        and len(lits) <= _ROW_LITS
        and p.data.shape[0] <= _ROW_MEAN_BYTES * len(p)
    )


def _first_at_or_after(starts_at: torch.Tensor, lo: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """For sorted match positions and per-piece lower bounds: (the first
    position >= lo, whether there is one)."""
    i = torch.searchsorted(starts_at, lo)
    has = i < starts_at.shape[0]
    first = starts_at[i.clamp(max=max(starts_at.shape[0] - 1, 0))] if starts_at.shape[0] else lo
    return first, has


def _find_torch(p: Pieces, lit: bytes, pos: torch.Tensor, out: torch.Tensor) -> None:
    L = len(lit)
    for a, b in chunk_bounds(p.lengths):
        buf, offs = packed(p.slice(a, b))  # the chunk's pieces back to back
        total = buf.shape[0]
        if total < L:
            continue
        # candidates by the first byte, then narrowed one pattern byte at a time
        starts_at = (buf[: total - L + 1] == lit[0]).nonzero().squeeze(1)
        for t in range(1, L):
            starts_at = starts_at[buf[starts_at + t] == lit[t]]
        lo = offs[:-1] + pos[a:b]
        first, has = _first_at_or_after(starts_at, lo)
        ok = has & (pos[a:b] >= 0) & (first + L <= offs[1:])
        out[a:b] = torch.where(ok, first - offs[:-1], -1)


if HAS_TRITON:
    import triton
    import triton.language as tl

    @triton.jit
    def _find_kernel(data, starts, lengths, from_pos, lit, L, out, m, BE: tl.constexpr, BB: tl.constexpr):
        # one pass over each piece's bytes: BB candidate starts per step, each
        # checked against the whole literal while its bytes are in cache
        NONE: tl.constexpr = 0x7FFFFFFFFFFFFFFF
        e = tl.program_id(0).to(tl.int64) * BE + tl.arange(0, BE)
        em = e < m
        s = tl.load(starts + e, mask=em, other=0)
        n = tl.load(lengths + e, mask=em, other=0)
        f = tl.load(from_pos + e, mask=em, other=-1)
        last = n - L  # the last start that fits
        active = em & (f >= 0) & (f <= last)
        span = tl.max(tl.where(active, last + 1 - f, 0), axis=0)
        first_byte = tl.load(lit)
        best = tl.full([BE], NONE, tl.int64)
        for c in range(0, span, BB):
            q = f[:, None] + c + tl.arange(0, BB).to(tl.int64)[None, :]
            cand = (active & (best == NONE))[:, None] & (q <= last[:, None])
            addr = data + s[:, None] + q
            cand = cand & (tl.load(addr, mask=cand, other=0) == first_byte)
            for t in range(1, L):
                cand = cand & (tl.load(addr + t, mask=cand, other=0) == tl.load(lit + t))
            best = tl.minimum(best, tl.min(tl.where(cand, q, NONE), axis=1))
        tl.store(out + e, tl.where(best == NONE, -1, best), mask=em)

    @triton.jit
    def _flat_block_matches(data, offsets, m, lit, blk, L: tl.constexpr, BLOCK: tl.constexpr):
        """Contiguous strings (a column's or a dictionary's bytes back to back):
        the block's byte positions and where the literal starts at them. Every
        position is a candidate, read once and in order; a literal byte is read
        only where the ones before it matched."""
        p = blk.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        lo = tl.load(offsets)
        hi = tl.load(offsets + m)
        inside = (p >= lo) & (p <= hi - L)
        cand = inside & (tl.load(data + p, mask=inside, other=0) == tl.load(lit))
        for t in tl.static_range(1, L):
            cand = cand & (tl.load(data + p + t, mask=cand, other=0) == tl.load(lit + t))
        return p, cand

    @triton.jit
    def _flat_matches_kernel(
        data, offsets, m, lit, counts, base, found, L: tl.constexpr, WRITE: tl.constexpr, BLOCK: tl.constexpr
    ):
        # the first pass counts each block's matches; the second writes their positions, in
        # order, from the block's first slot
        blk = tl.program_id(0)
        p, cand = _flat_block_matches(data, offsets, m, lit, blk, L, BLOCK)
        c = cand.to(tl.int32)
        if WRITE:
            k = tl.cumsum(c, axis=0) - c
            tl.store(found + tl.load(base + blk) + k, p, mask=cand)
        else:
            tl.store(counts + blk, tl.sum(c, axis=0))

    @triton.jit
    def _find_flat_kernel(data, offsets, block_entry, m, from_pos, lit, out, L: tl.constexpr, BLOCK: tl.constexpr):
        # one pass for many matches: each matching position finds its string by a binary
        # search among the few strings its block's bytes belong to
        blk = tl.program_id(0)
        p, cand = _flat_block_matches(data, offsets, m, lit, blk, L, BLOCK)
        if tl.sum(cand.to(tl.int32), axis=0) > 0:
            first = tl.load(block_entry + blk)
            last = tl.load(block_entry + blk + 1)
            a = tl.zeros([BLOCK], dtype=tl.int64) + first  # offsets[a] <= p < offsets[b]
            b = tl.zeros([BLOCK], dtype=tl.int64) + last + 1
            width = last + 1 - first
            while width > 1:
                mid = (a + b) // 2
                go = tl.load(offsets + mid, mask=cand, other=0) <= p
                a = tl.where(go, mid, a)
                b = tl.where(go, b, mid)
                width = (width + 1) // 2
            start = tl.load(offsets + a, mask=cand, other=0)
            end = tl.load(offsets + a + 1, mask=cand, other=0)
            f = tl.load(from_pos + a, mask=cand, other=-1)
            ok = cand & (f >= 0) & (p - start >= f) & (p + L <= end)
            tl.atomic_min(out + a, p - start, mask=ok)

    @triton.jit
    def _find_seq_kernel(data, starts, lengths, from_pos, words, out, m, K: tl.constexpr, BE: tl.constexpr):
        # one string a lane, its bytes in order, the last 16 kept in two registers; the lane looks
        # for literal k (its last 16 bytes, masked to its length) until it ends at or after lo,
        # then for literal k + 1 from there. words: per literal (low word, its mask, high word,
        # its mask, length), the words as the registers hold the literal's bytes
        e = tl.program_id(0).to(tl.int64) * BE + tl.arange(0, BE)
        em = e < m
        s = tl.load(starts + e, mask=em, other=0)
        n = tl.load(lengths + e, mask=em, other=0)
        lo = tl.load(from_pos + e, mask=em, other=-1)
        k = tl.zeros([BE], dtype=tl.int32)
        active = em & (lo >= 0)
        span = tl.max(tl.where(active, n, 0), axis=0)
        r0 = tl.zeros([BE], dtype=tl.int64)  # the last eight bytes read
        r1 = tl.zeros([BE], dtype=tl.int64)  # the eight before them
        for j in range(0, span):
            live = active & (k < K) & (j < n)
            b = tl.load(data + s + j, mask=live, other=0).to(tl.int64)
            r1 = (r1 << 8) | ((r0 >> 56) & 0xFF)
            r0 = (r0 << 8) | b
            at = words + k * 5
            w0 = tl.load(at, mask=live, other=0)
            m0 = tl.load(at + 1, mask=live, other=0)
            w1 = tl.load(at + 2, mask=live, other=0)
            m1 = tl.load(at + 3, mask=live, other=0)
            L = tl.load(at + 4, mask=live, other=1)
            hit = live & ((r0 & m0) == w0) & ((r1 & m1) == w1) & (j + 1 - lo >= L)
            k = tl.where(hit, k + 1, k)
            lo = tl.where(hit, j + 1, lo)
        tl.store(out + e, tl.where(active & (k == K), lo, -1), mask=em)


_NONE = (1 << 63) - 1
_FLAT_BLOCK = 512  # byte positions per program (512 to 4,096 measured on an H200)
_FLAT_WARPS = 4
# more matches than this per string (on average) are found in one pass (_find_flat_kernel) rather
# than listed first: their positions would take more memory than the strings' offsets
_FLAT_LISTED_PER_STRING = 1
# the per-string scan (find_seq): a lane reads its string's bytes one by one, so it serves short
# strings (TPC-H's comments average 27-73 bytes); the literals must fit its two 8-byte registers
_ROW_MEAN_BYTES = 256
_ROW_LIT_BYTES = 16
_ROW_LITS = 8
_ROW_BLOCK = 128


def _seq_params(lits: list[bytes]) -> list[int]:
    """Per literal: its last eight bytes as the low register holds them (the
    last byte lowest) and the mask of its length, the eight before them and
    theirs, and its length (int64 two's complement).

    >>> _seq_params([b"ab"])[:5] == [0x6162, 0xFFFF, 0, 0, 2]
    True
    """

    def signed(x: int) -> int:
        return x - (1 << 64) if x >= 1 << 63 else x

    out: list[int] = []
    for lit in lits:
        low, high = lit[-8:], lit[:-8][-8:]
        out += [
            signed(int.from_bytes(low, "big")),
            signed((1 << (8 * len(low))) - 1),
            signed(int.from_bytes(high, "big")),
            signed((1 << (8 * len(high))) - 1),
            len(lit),
        ]
    return out


def _find_seq_triton(p: Pieces, lits: list[bytes], pos: torch.Tensor, out: torch.Tensor) -> None:
    """One pass over each string for all the literals in turn (:func:`find_seq`).
    Against the byte-parallel search with its matches listed (below), TPC-H
    Q13's two literals over o_comment need no list, no lookup of a match's
    string and no second pass."""
    words = torch.tensor(_seq_params(lits), dtype=torch.int64).to(p.device, non_blocking=True)
    m = len(p)
    with on_device(out):
        _find_seq_kernel[(blocks(m, _ROW_BLOCK),)](
            p.data, p.starts, p.lengths, pos.contiguous(), words, out, m, K=len(lits), BE=_ROW_BLOCK
        )


def _find_flat_triton(p: Pieces, lit: bytes, pos: torch.Tensor, out: torch.Tensor) -> None:
    """The leftmost match at or after ``pos`` in each of contiguous strings.

    A byte-parallel pass over the buffer finds the matches, but a match must
    then learn which string it is in. Searching the offsets for every byte
    position of a block that holds one match made that lookup cost three
    times the scan (TPC-H Q13's '%special%requests%' over o_comment: 5.8M
    matches in 2.9 GB). So the matches are counted per block, then listed,
    and only the listed positions are looked up; a literal matching more than
    about once per string is found in one pass with the per-position lookup."""
    m = len(p)
    n = p.data.shape[0]
    L = len(lit)
    offsets = torch.cat([p.starts, (p.starts[-1:] + p.lengths[-1:])])
    n_blocks = blocks(n, _FLAT_BLOCK)
    lit_t = torch.frombuffer(bytearray(lit), dtype=torch.uint8).to(p.device, non_blocking=True)
    pos = pos.contiguous()
    best = torch.full((m,), _NONE, dtype=torch.int64, device=p.device)
    counts = torch.empty(n_blocks, dtype=torch.int32, device=p.device)
    if n_blocks == 0:  # every string is empty: a literal of one byte or more is nowhere
        out.fill_(-1)
        return
    with on_device(out):
        _flat_matches_kernel[(n_blocks,)](
            p.data, offsets, m, lit_t, counts, counts, best, L=L, WRITE=False, BLOCK=_FLAT_BLOCK, num_warps=_FLAT_WARPS
        )
        ends = torch.cumsum(counts, 0, dtype=torch.int64)
        total = int(ends[-1])  # the one size this needs from the device
        if 0 < total <= _FLAT_LISTED_PER_STRING * m:
            found = torch.empty(total, dtype=torch.int64, device=p.device)
            _flat_matches_kernel[(n_blocks,)](
                p.data,
                offsets,
                m,
                lit_t,
                counts,
                ends - counts,
                found,
                L=L,
                WRITE=True,
                BLOCK=_FLAT_BLOCK,
                num_warps=_FLAT_WARPS,
            )
            row = torch.searchsorted(offsets, found, right=True) - 1
            start, end, f = offsets[row], offsets[row + 1], pos[row]
            ok = (f >= 0) & (found - start >= f) & (found + L <= end)
            best.scatter_reduce_(0, row, torch.where(ok, found - start, _NONE), "amin")
        elif total:
            # for each block boundary, the last string starting at or before it (clamped to a string)
            bounds = torch.arange(n_blocks + 1, device=p.device, dtype=torch.int64) * _FLAT_BLOCK
            block_entry = (torch.searchsorted(offsets, bounds, right=True) - 1).clamp_(0, m - 1)
            _find_flat_kernel[(n_blocks,)](
                p.data, offsets, block_entry, m, pos, lit_t, best, L=L, BLOCK=_FLAT_BLOCK, num_warps=_FLAT_WARPS
            )
    out.copy_(torch.where(best == _NONE, -1, best))


def _find_triton(p: Pieces, lit: bytes, pos: torch.Tensor, out: torch.Tensor) -> None:
    m = len(p)
    lit_t = torch.frombuffer(bytearray(lit), dtype=torch.uint8).to(p.device, non_blocking=True)
    BE, BB = 16, 64
    with on_device(out):
        _find_kernel[(blocks(m, BE),)](
            p.data, p.starts, p.lengths, pos.contiguous(), lit_t, len(lit), out, m, BE=BE, BB=BB
        )


# ------------------------------------------------------------ code points
def char_width(lead: torch.Tensor) -> torch.Tensor:
    """Bytes of the UTF-8 code point starting with byte ``lead`` (int64).

    >>> char_width(torch.tensor(list("aé日👍".encode()), dtype=torch.uint8)[[0, 1, 3, 6]]).tolist()
    [1, 2, 3, 4]
    """
    lead = lead.long()
    return 1 + (lead >= 0xC0).long() + (lead >= 0xE0).long() + (lead >= 0xF0).long()


def _byte(p: Pieces, pos: torch.Tensor) -> torch.Tensor:
    if p.data.shape[0] == 0:
        return torch.zeros_like(pos)
    return p.data[(p.starts + pos).clamp(0, p.data.shape[0] - 1)].long()


def advance_chars(p: Pieces, pos: torch.Tensor, k: int) -> torch.Tensor:
    """pos moved forward over k code points, or -1 where the piece ends first
    (or pos is already -1)."""
    for _ in range(k):
        ok = (pos >= 0) & (pos < p.lengths)
        pos = torch.where(ok, pos + char_width(_byte(p, pos)), -1)
    return pos


def retreat_chars(p: Pieces, end: torch.Tensor, k: int, lower: torch.Tensor) -> torch.Tensor:
    """end moved back over k code points, or -1 where that passes ``lower``."""
    for _ in range(k):
        ok = (end >= 0) & (end > lower)
        end = end - 1
        for _ in range(3):  # at most three continuation bytes precede a lead byte
            cont = ok & (end > 0) & ((_byte(p, end) & 0xC0) == 0x80)
            end = end - cont.long()
        end = torch.where(ok, end, -1)
    return end


def find_run(p: Pieces, tokens: list[tuple[str, object]], pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Leftmost match at or after pos of a run of literals and '_' (one code
    point each), as (start, end) byte positions, or (-1, -1). The run starts
    and ends with a literal. Torch only, one position of every piece at a time:
    this is the rare LIKE shape with '_' between two literals.

    >>> from .pieces import from_strings
    >>> p = from_strings(["xaab", "aéb", "ab"])
    >>> [t.tolist() for t in find_run(p, [("L", b"a"), ("_", 1), ("L", b"b")], torch.zeros(3, dtype=torch.int64))]
    [[1, 0, -1], [4, 4, -1]]
    """
    start_out = torch.full((len(p),), -1, dtype=torch.int64, device=p.device)
    end_out = start_out.clone()
    for a, b in chunk_bounds(p.lengths):
        buf, offs = packed(p.slice(a, b))
        total = buf.shape[0]
        if total == 0:
            continue
        buf = torch.cat([buf, torch.zeros(1, dtype=torch.uint8, device=p.device)])
        at = torch.arange(total, device=p.device)
        ok = (buf[:total] & 0xC0) != 0x80
        for kind, val in tokens:
            if kind == "L":
                for t, byte in enumerate(val):
                    ok &= buf[(at + t).clamp(max=total)] == byte
                at = at + len(val)
            else:
                for _ in range(val):
                    ok &= at < total
                    at = at + char_width(buf[at.clamp(max=total)])
        ok &= at <= total
        starts_at = ok.nonzero().squeeze(1)
        ends_at = at[starts_at]
        lo = offs[:-1] + pos[a:b]
        i = torch.searchsorted(starts_at, lo)
        has = i < starts_at.shape[0]
        i = i.clamp(max=max(starts_at.shape[0] - 1, 0))
        first = starts_at[i] if starts_at.shape[0] else lo
        end = ends_at[i] if starts_at.shape[0] else lo
        # ends grow with starts, so if the leftmost match overruns its piece every later one does
        good = has & (pos[a:b] >= 0) & (end <= offs[1:])
        start_out[a:b] = torch.where(good, first - offs[:-1], -1)
        end_out[a:b] = torch.where(good, end - offs[:-1], -1)
    return start_out, end_out
