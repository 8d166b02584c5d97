"""Equi-join matching on int64 keys: find each probe key's rows on the build
side, expand the match ranges into (probe row, build row) pairs. One host
synchronisation: the number of pairs.

Three build structures, picked by :func:`build_side`:

- ``DirectBuild`` when the keys span a dense range: a probe is two gathers;
- ``HashBuild`` on CUDA otherwise: the build keys go into a GPU hash table
  (glint.kernels.hash_table), and a probe is one Triton kernel;
- ``SortedBuild`` elsewhere: the build keys are sorted and each probe key is
  binary-searched (the CPU's path, and the hash table's reference).

>>> import torch
>>> p, b = match_pairs(torch.tensor([1, 2, 2]), None, torch.tensor([2, 3, 2, 1]), None)
>>> sorted(zip(p.tolist(), b.tolist()))   # (probe row, build row)
[(0, 1), (0, 2), (2, 1), (2, 2), (3, 0)]
"""

from __future__ import annotations

import torch

from glint.kernels.backend import HAS_TRITON, blocks, on_device, use_triton
from glint.kernels.hash_table import EMPTY, hashed_on, key_set

DIRECT_LIMIT = 1 << 26


class SortedBuild:
    """A build side prepared for probing: keys sorted, with their row ids.
    Probes binary-search the sorted keys."""

    __slots__ = ("keys", "rows")
    unique = False  # (not known: a key may have several rows)

    def __init__(self, key: torch.Tensor, valid: torch.Tensor | None):
        rows = torch.arange(key.shape[0], device=key.device)
        if valid is not None:
            rows = rows[valid]
            key = key[valid]
        order = torch.argsort(key, stable=True)
        self.keys = key[order]
        self.rows = rows[order]

    def match(self, probe_key, probe_valid):
        lo = torch.searchsorted(self.keys, probe_key, right=False)
        hi = torch.searchsorted(self.keys, probe_key, right=True)
        return lo, _mask_counts(hi - lo, probe_valid)


class DirectBuild:
    """A build side over a dense key range: per key value, where its rows
    start and how many there are, so a probe is two gathers. Row ids are
    placed by a counting sort when keys are unique (the common primary-key case)."""

    __slots__ = ("lo", "span", "starts", "counts", "rows", "unique")

    def __init__(self, key, rows, lo, span):
        self.lo, self.span = lo, span
        if HAS_TRITON and use_triton(key) and key.shape[0]:
            self._place_triton(key, rows)
        else:
            self._place_torch(key, rows)

    def _place_torch(self, key, rows):
        """The reference: counts by a scatter, rows placed by their keys' starts."""
        k = key - self.lo
        counts = torch.zeros(self.span, dtype=torch.int64, device=key.device)
        counts.scatter_add_(0, k, torch.ones_like(k))
        self.starts = torch.cumsum(counts, 0) - counts
        self.counts = counts
        self.unique = int(counts.max()) <= 1
        if self.unique:
            placed = torch.empty_like(rows)
            placed[self.starts[k]] = rows
            self.rows = placed
        else:
            self.rows = rows[torch.argsort(k, stable=True)]

    def _place_triton(self, key, rows):
        """Counts and a key-seen-twice flag (the slot after the counts) from
        one kernel; the flag read is the one wait; unique keys' rows placed
        by a second kernel."""
        n, span = key.shape[0], self.span
        key = key.contiguous()
        counts = torch.zeros(span + 1, dtype=torch.int64, device=key.device)
        block = 1024
        with on_device(key):
            _direct_count_kernel[(blocks(n, block),)](key, n, self.lo, counts, span, BLOCK=block)
        self.counts = counts[:span]
        starts = torch.cumsum(self.counts, 0)
        starts -= self.counts
        self.starts = starts
        self.unique = int(counts[span]) == 0
        if self.unique:
            placed = torch.empty_like(rows)
            with on_device(key):
                _direct_place_kernel[(blocks(n, block),)](
                    key, rows.contiguous(), n, self.lo, starts, placed, BLOCK=block
                )
            self.rows = placed
        else:
            self.rows = rows[torch.argsort(key - self.lo, stable=True)]

    def match(self, probe_key, probe_valid):
        idx = probe_key - self.lo
        inside = (idx >= 0) & (idx < self.span)
        idx = idx.clamp(0, self.span - 1)
        counts = torch.where(inside, self.counts[idx], torch.zeros_like(idx))
        return self.starts[idx], _mask_counts(counts, probe_valid)


class HashBuild:
    """A build side in a GPU hash table of its distinct keys: per key id, where
    its rows start and how many there are; with unique keys (a primary key),
    the id is the row's position itself and no counts are kept."""

    __slots__ = ("set", "starts", "counts", "rows", "unique")

    def __init__(self, key, rows):
        self.set, ids = key_set(key, hashed=True)
        n = self.set.size
        if n == key.shape[0]:  # every key distinct
            placed = torch.empty_like(rows)
            placed[ids] = rows
            self.rows, self.starts, self.counts, self.unique = placed, None, None, True
            return
        self.unique = False
        counts = torch.zeros(n, dtype=torch.int64, device=key.device)
        counts.scatter_add_(0, ids, torch.ones_like(ids))
        self.starts = torch.cumsum(counts, 0) - counts
        self.counts = counts
        self.rows = rows[torch.argsort(ids, stable=True)]

    def match(self, probe_key, probe_valid):
        ids = self.set.lookup(probe_key, probe_valid)
        hit = ids >= 0
        if self.counts is None:
            return ids.clamp(min=0), hit.long()
        idx = ids.clamp(min=0)
        return self.starts[idx], torch.where(hit, self.counts[idx], torch.zeros_like(idx))


def _mask_counts(counts, valid):
    return counts if valid is None else torch.where(valid, counts, torch.zeros_like(counts))


def build_side(key: torch.Tensor, valid: torch.Tensor | None, bounds: tuple[int, int] | None = None):
    """The faster build structure for these keys: direct addressing when the
    key range is at most a few times the number of rows, else sorted keys.
    ``bounds``: the keys' (min, max) over the valid rows where the caller
    knows them (else they are computed: a wait for the device)."""
    if valid is not None:
        rows = valid.nonzero().squeeze(1)  # (one wait for the valid rows' count)
        key = key[rows]
    else:
        rows = torch.arange(key.shape[0], device=key.device)
    if key.shape[0] == 0:
        return SortedBuild(key, None)
    lo, hi = bounds if bounds is not None else torch.stack([key.min(), key.max()]).tolist()
    span = hi - lo + 1
    if span <= max(4 * key.shape[0], 1 << 22) and span <= DIRECT_LIMIT:
        return DirectBuild(key, rows, lo, span)
    if hashed_on(key):
        return HashBuild(key, rows)
    b = SortedBuild(key, None)
    b.rows = rows[b.rows]
    return b


def match_counts(build, probe_key: torch.Tensor, probe_valid: torch.Tensor | None):
    """(start position in the build's row order, number of matches) per probe row."""
    return build.match(probe_key, probe_valid)


def match_offsets(build, raw: torch.Tensor, valid: torch.Tensor | None, lo: int, hi: int):
    """:func:`match_counts` for one integer key column whose part is its offset
    from ``lo`` (values outside ``[lo, hi]``, or not ``valid``, match nothing:
    glint.exec.join_keys), the offset taken in the same pass. On CUDA, for a
    direct or hashed build, one Triton launch reads the column as it is
    (any integer width) and writes each row's start and count; the torch
    code is the offset's encoding and :func:`match_counts`, about ten
    launches over the probe rows."""
    if _fused_probe(build, raw):
        return _match_offsets_triton(build, raw, valid, lo, hi)
    return match_offsets_torch(build, raw, valid, lo, hi)


def _fused_probe(build, raw: torch.Tensor) -> bool:
    """Whether :func:`match_offsets` runs as one Triton kernel for this build and column."""
    return (
        HAS_TRITON
        and use_triton(raw)
        and isinstance(build, (DirectBuild, HashBuild))
        and raw.dim() == 1
        and not raw.is_floating_point()
        and raw.dtype != torch.bool
    )


def match_offsets_torch(build, raw: torch.Tensor, valid: torch.Tensor | None, lo: int, hi: int):
    """:func:`match_offsets` in torch ops: the kernel's reference, and the
    path off CUDA and for sorted builds."""
    v = raw.long()
    ok = (v >= lo) & (v <= hi)  # (compared before subtracting: v - lo may wrap around)
    if valid is not None:
        ok &= valid
    return match_counts(build, torch.where(ok, v - lo, torch.zeros_like(v)), ok)


def _match_offsets_triton(build, raw, valid, lo: int, hi: int):
    raw = raw.contiguous()
    n = raw.shape[0]
    dev = raw.device
    start = torch.empty(n, dtype=torch.int64, device=dev)
    count = torch.empty(n, dtype=torch.int64, device=dev)
    if n == 0:
        return start, count
    hashed = isinstance(build, HashBuild)
    counted = build.counts is not None
    if hashed:
        s = build.set
        table, ids, shift, mask, dlo, span = s._table, s._ids, s._shift, s._mask, 0, 0
    else:
        table = ids = count  # (not read)
        shift = mask = 0
        dlo, span = build.lo, build.span
    v = valid.contiguous() if valid is not None else raw
    starts = build.starts if counted else count
    counts = build.counts if counted else count
    with on_device(raw):
        _match_offsets_kernel[(blocks(n, _PROBE_BLOCK),)](
            raw, v, n, lo, hi, dlo, span, table, ids, shift, mask, starts, counts, start, count,
            HAS_VALID=valid is not None, HASHED=hashed, COUNTED=counted, BLOCK=_PROBE_BLOCK,
        )  # fmt: skip
    return start, count


_PROBE_BLOCK = 256


def expand_matches(build, lo: torch.Tensor, counts: torch.Tensor, sizes: tuple[int, int] | None = None):
    """All (probe row, build row) pairs from per-probe-row match ranges
    (a build side of unique keys matches each probe row at most once: the
    pairs are the probe rows that match, without expanding ranges).
    ``sizes``: (the number of pairs, the most of one probe row), where the
    caller has them (else read here, with one host synchronisation)."""
    if build.unique:
        probe_idx = counts.nonzero().squeeze(1)
        return probe_idx, build.rows[lo[probe_idx]]
    n = counts.shape[0]
    if sizes is None:
        sizes = torch.stack([counts.sum(), counts.max()]).tolist() if n else (0, 0)
    total, most = sizes
    if HAS_TRITON and use_triton(counts) and n and most <= EXPAND_MAX_MATCHES:
        return expand_triton(build.rows, lo, counts, total)
    return expand_torch(build.rows, lo, counts, total)


# the most matches of one probe row for the Triton expansion, whose programs step through
# their rows' matches together (one row of many would keep its program's other lanes idle)
EXPAND_MAX_MATCHES = 256


def expand_torch(rows: torch.Tensor, lo: torch.Tensor, counts: torch.Tensor, total: int):
    """(probe row, build row) pairs: probe row i matches ``rows[lo[i] : lo[i] + counts[i]]``."""
    n = counts.shape[0]
    dev = counts.device
    probe_idx = torch.repeat_interleave(torch.arange(n, device=dev), counts, output_size=total)
    if total == 0:
        return probe_idx, probe_idx.clone()
    starts = torch.cumsum(counts, 0) - counts
    within = torch.arange(total, device=dev) - starts[probe_idx]
    build_idx = rows[lo[probe_idx] + within]
    return probe_idx, build_idx


def expand_triton(rows: torch.Tensor, lo: torch.Tensor, counts: torch.Tensor, total: int):
    """:func:`expand_torch` in one Triton pass (each program writes its probe
    rows' pairs, one match of every row a step), instead of a
    repeat_interleave and four gathers over the pairs."""
    n = counts.shape[0]
    dev = counts.device
    probe_idx = torch.empty(total, dtype=torch.int64, device=dev)
    build_idx = torch.empty(total, dtype=torch.int64, device=dev)
    if total == 0:
        return probe_idx, build_idx
    ends = torch.cumsum(counts, 0)
    block = 256
    with on_device(counts):
        _expand_kernel[(blocks(n, block),)](ends, counts, lo, rows, probe_idx, build_idx, n, BLOCK=block)
    return probe_idx, build_idx


if HAS_TRITON:
    import triton
    import triton.language as tl

    @triton.jit
    def _direct_count_kernel(key_ptr, n, lo, counts_ptr, span, BLOCK: tl.constexpr):
        """Rows per key of a dense range; counts[span] set where a key comes twice."""
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        k = tl.load(key_ptr + offs, mask=m, other=0) - lo
        old = tl.atomic_add(counts_ptr + k, tl.full([BLOCK], 1, tl.int64), mask=m)
        # one store a program at most (not one a repeated row: a build of many
        # repeats would have every lane write the same word)
        twice = tl.max(tl.where(m & (old > 0), 1, 0), axis=0)
        tl.store(counts_ptr + span, twice.to(tl.int64), mask=twice > 0)

    @triton.jit
    def _direct_place_kernel(key_ptr, rows_ptr, n, lo, starts_ptr, placed_ptr, BLOCK: tl.constexpr):
        """Each row at its (unique) key's start."""
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        k = tl.load(key_ptr + offs, mask=m, other=0) - lo
        at = tl.load(starts_ptr + k, mask=m, other=0)
        tl.store(placed_ptr + at, tl.load(rows_ptr + offs, mask=m, other=0), mask=m)

    from glint.kernels.hash_table import _slot_of

    _EMPTY = tl.constexpr(EMPTY)

    @triton.jit
    def _expand_kernel(ends_ptr, counts_ptr, lo_ptr, rows_ptr, out_p, out_b, n, BLOCK: tl.constexpr):
        i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        live = i < n
        c = tl.load(counts_ptr + i, mask=live, other=0)
        at = tl.load(ends_ptr + i, mask=live, other=0) - c
        first = tl.load(lo_ptr + i, mask=live, other=0)
        for j in range(0, tl.max(c, axis=0)):
            w = live & (j < c)
            tl.store(out_p + at + j, i, mask=w)
            tl.store(out_b + at + j, tl.load(rows_ptr + first + j, mask=w, other=0), mask=w)

    @triton.jit
    def _match_offsets_kernel(
        raw_ptr,
        valid_ptr,
        n,
        lo,
        hi,
        dlo,
        span,
        table_ptr,
        ids_ptr,
        shift,
        mask,
        starts_ptr,
        counts_ptr,
        start_out,
        count_out,
        HAS_VALID: tl.constexpr,
        HASHED: tl.constexpr,
        COUNTED: tl.constexpr,
        BLOCK: tl.constexpr,
    ):
        # a probe row's key part is its offset from lo (rows outside [lo, hi] match
        # nothing); a direct build indexes its counts by the part, a hashed one looks it
        # up in the table (parts are never negative: never the free-slot marker)
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        r = tl.load(raw_ptr + offs, mask=inside, other=0).to(tl.int64)
        active = inside & (r >= lo) & (r <= hi)
        if HAS_VALID:
            active = active & (tl.load(valid_ptr + offs, mask=inside, other=0) != 0)
        k = r - lo
        if HASHED:
            h = _slot_of(k, shift, mask)
            found = tl.full([BLOCK], -1, tl.int64)
            while tl.max(active.to(tl.int32), axis=0) > 0:
                t = tl.load(table_ptr + h, mask=active, other=-1)
                hit_here = active & (t == k)
                found = tl.where(hit_here, h, found)
                active = active & (t != k) & (t != _EMPTY)
                h = tl.where(active, (h + 1) & mask, h)
            idx = tl.load(ids_ptr + found, mask=found >= 0, other=-1).to(tl.int64)
            hit = idx >= 0
        else:
            idx = k - dlo
            hit = active & (idx >= 0) & (idx < span)
        idx = tl.where(hit, idx, 0)
        if COUNTED:
            c = tl.load(counts_ptr + idx, mask=hit, other=0)
            first = tl.load(starts_ptr + idx, mask=hit, other=0)
        else:
            c = hit.to(tl.int64)
            first = idx
        tl.store(count_out + offs, c, mask=inside)
        tl.store(start_out + offs, first, mask=inside)


def match_pairs(build_key, build_valid, probe_key, probe_valid):
    b = build_side(build_key, build_valid)
    lo, counts = match_counts(b, probe_key, probe_valid)
    return expand_matches(b, lo, counts)
