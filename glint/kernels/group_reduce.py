"""Sums and counts per group, every column of a chunk in one pass.

The GROUP BY of TPC-H Q1 has 4 groups and Q6 has one. Scattering 600M rows
into 4 slots with atomic adds serialises on those addresses; instead each
Triton program keeps its own accumulators for every group in registers
(``onehot(group) x value``, reduced over a block of rows), reads each input
column once, and writes one row of partial sums; the partial rows of all
programs are added up afterwards (a few hundred rows). No atomics touch global
memory. On an H100 this reads 2**25 rows of five columns into four groups in
1.3 ms (about 1 TB/s); accumulators kept per row lane, summed across the
threads once at the end instead of after every block, took 1.8 ms.

A WHERE folded into the aggregation comes as one mask (``rows``), read once
per block: the rows it rejects get no group, so the columns without NULLs
keep sharing the block's row count, and eight columns go in one launch (TPC-H
Q1's five sums at SF 10: 6.2 ms with the mask ANDed into every column and two
launches, 2.0 ms so).

Integers (BIGINT, DECIMAL as scaled int64) are summed exactly: each value is
split into 32-bit limbs summed separately in int64, as
:func:`glint.kernels.groupby.exact_sum` does, so no partial sum can overflow
(a program sums at most 2**31 rows). Doubles are summed in float64.

Many groups (``MANY_GROUPS`` to ``ATOMIC_MAX_GROUPS``) take a second kernel: each row's limbs and count are added to its group's slots with
relaxed atomics, all of a launch's columns from one read of the group ids,
instead of a masking pass, two scatters and a count scatter per column (the
atomics land on distinct addresses, so they rarely collide). Between the two
sizes, and past the second, the scatters of glint.kernels.groupby stay (few
groups: spread over bins; very many: one array at a time fits the L2 cache).

:func:`group_sums` is the entry point; on tensors that are not on CUDA (or
without Triton) it runs the torch reference, :func:`group_sums_torch`, which
the tests also run the kernel against (under ``TRITON_INTERPRET=1`` on the CPU).

>>> import torch
>>> gid = torch.tensor([0, 1, 0, 1, 1])
>>> v = torch.tensor([2**62, 3, 2**62, 4, 5])
>>> (s, c), = group_sums(gid, 2, [SumInput(v, None, False)])
>>> s.tolist(), c.tolist()
([[2147483648, 0], [0, 12]], [2, 3])
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from glint.kernels import groupby as G
from glint.kernels.backend import HAS_TRITON, blocks, on_device, use_triton

MAX_GROUPS = 32  # the most groups the per-program accumulators take
MANY_GROUPS = G.SPREAD_BINS  # the fewest groups the atomic kernel takes (fewer collide)
# the most it takes: its table of [lo, hi, count] per group and column is read and written at
# random, and past the GPU's L2 cache the separate scatters, each over one array, win (one
# H200, 2**25 rows, 3 columns: 4,096 groups 3.1 ms against the scatters' 8.7 ms, 65,536
# 2.4 against 4.4, 2**20 7.0 against 4.3, 2**24 15.3 against 16.0)
ATOMIC_MAX_GROUPS = 1 << 18
COLUMNS_PER_LAUNCH = 4  # value columns one launch of the many-groups kernel reads
# ... of the few-groups kernel: all of TPC-H Q1's five in one read of the group ids
FEW_COLUMNS_PER_LAUNCH = 8
_PROGRAMS = 1024  # programs per launch to aim for (several per SM)
_MAX_ROWS = 1 << 31  # rows of one call: the limb sums stay within int64


@dataclass(frozen=True, slots=True)
class SumInput:
    """One column to sum per group: ``values`` (1-D, any integer or float
    dtype), ``valid`` (rows that count; None: all), ``floating`` (sum as
    float64, else exactly as int64 limbs)."""

    values: torch.Tensor
    valid: torch.Tensor | None
    floating: bool


def fits(n_groups: int, n_rows: int) -> bool:
    """Whether :func:`group_sums` takes this shape on a GPU: few groups or
    many, rows within a call's limit."""
    return (1 <= n_groups <= MAX_GROUPS or MANY_GROUPS <= n_groups <= ATOMIC_MAX_GROUPS) and n_rows < _MAX_ROWS


def group_sums(gid: torch.Tensor | None, n_groups: int, inputs: list[SumInput], rows: torch.Tensor | None = None):
    """Per input: (sum, count of valid rows) per group. The sum is float64
    ``(n_groups,)`` for a floating input, else exact ``(n_groups, 2)`` [hi, lo]
    limbs (sum = hi * 2**32 + lo, 0 <= lo < 2**32). ``gid`` holds each row's
    group in [0, n_groups) (None: every row is group 0). ``rows`` (bool: a
    WHERE folded into the sums; None: every row) leaves the rows where it is
    false out of every input: the few-groups kernel reads it once for all
    the columns, instead of each column's mask ANDed with it."""
    if not inputs:
        return []
    t = inputs[0].values
    if HAS_TRITON and use_triton(t) and t.shape[0] < _MAX_ROWS:
        if n_groups <= MAX_GROUPS:
            return group_sums_triton(gid, n_groups, inputs, rows)
        if gid is not None and n_groups <= ATOMIC_MAX_GROUPS:
            return group_sums_atomic_triton(gid, n_groups, _restricted(inputs, rows))
    return group_sums_torch(gid, n_groups, inputs, rows)


def _restricted(inputs: list[SumInput], rows: torch.Tensor | None) -> list[SumInput]:
    """``inputs`` with the rows where ``rows`` is false masked out of each."""
    if rows is None:
        return inputs
    return [SumInput(x.values, rows if x.valid is None else x.valid & rows, x.floating) for x in inputs]


def group_sums_torch(gid, n_groups: int, inputs: list[SumInput], rows: torch.Tensor | None = None):
    """The reference: one scatter per sum and count (glint.kernels.groupby)."""
    inputs = _restricted(inputs, rows)
    n = inputs[0].values.shape[0]
    if gid is None:
        gid = torch.zeros(n, dtype=torch.int64, device=inputs[0].values.device)
    slots = G.Slots(gid.long(), n_groups, spread=1)
    out = []
    for x in inputs:
        v = x.values if x.valid is None else torch.where(x.valid, x.values, torch.zeros_like(x.values))
        s = G.float_sum(v, slots) if x.floating else G.exact_sum(v.long(), slots)
        out.append((s, G.count(slots, x.valid)))
    return out


def _launch_args(part: list[SumInput], width: int = COLUMNS_PER_LAUNCH) -> tuple[list, dict]:
    """A launch's value and mask pointers and its flags (F<i>: floating, M<i>:
    masked), ``width`` of each (unused ones repeat the first column)."""
    args, flags = [], {}
    for i in range(width):
        x = part[i] if i < len(part) else part[0]
        args += [x.values, x.valid if x.valid is not None else x.values]
        flags[f"F{i}"], flags[f"M{i}"] = x.floating, x.valid is not None
    return args, flags


def group_sums_atomic_triton(gid: torch.Tensor, n_groups: int, inputs: list[SumInput]):
    """:func:`group_sums` for many groups by the atomic kernel, up to
    COLUMNS_PER_LAUNCH columns a launch; the rows of each group are counted
    once for all the columns without a mask."""
    t = inputs[0].values
    n, dev = t.shape[0], t.device
    rows = torch.zeros(n_groups, dtype=torch.int64, device=dev)
    counted = False  # whether a launch has counted the rows yet
    block = 1024
    out = []
    for start in range(0, len(inputs), COLUMNS_PER_LAUNCH):
        part = inputs[start : start + COLUMNS_PER_LAUNCH]
        k = len(part)
        slots = torch.zeros((n_groups, k, 3), dtype=torch.int64, device=dev)
        args, flags = _launch_args(part)
        count_rows = not counted and any(x.valid is None for x in part)
        counted = counted or count_rows
        with on_device(t):
            _group_sums_atomic_kernel[(blocks(n, block),)](
                gid,
                n,
                *args,
                slots,
                slots.view(torch.float64),
                rows,
                K=k,
                ROWS=count_rows,
                **flags,
                BLOCK=block,
            )
        for i, x in enumerate(part):
            if x.floating:
                s = slots[:, i, 0].contiguous().view(torch.float64)
            else:
                lo = slots[:, i, 0]
                s = torch.stack([slots[:, i, 1] + (lo >> G.LIMB_BITS), lo & G.LIMB_MASK], dim=1)
            out.append((s, slots[:, i, 2] if x.valid is not None else rows))
    return out


def group_sums_triton(gid, n_groups: int, inputs: list[SumInput], rows: torch.Tensor | None = None):
    """:func:`group_sums` by the Triton kernel, up to FEW_COLUMNS_PER_LAUNCH columns a launch."""
    t = inputs[0].values
    n, dev = t.shape[0], t.device
    g_pad = max(1, 1 << (n_groups - 1).bit_length())
    block = max(64, 4096 // g_pad)
    tiles = max(1, -(-n // (block * _PROGRAMS)))
    programs = blocks(n, block * tiles)
    out = []
    for start in range(0, len(inputs), FEW_COLUMNS_PER_LAUNCH):
        part = inputs[start : start + FEW_COLUMNS_PER_LAUNCH]
        k = len(part)
        partial = torch.empty((programs, k, g_pad, 3), dtype=torch.int64, device=dev)
        args, flags = _launch_args(part, FEW_COLUMNS_PER_LAUNCH)
        with on_device(t):
            _group_sums_kernel[(programs,)](
                gid if gid is not None else t,
                rows if rows is not None else t,
                n,
                *args,
                partial,
                G=g_pad,
                K=k,
                HAS_GID=gid is not None,
                HAS_ROWS=rows is not None,
                **flags,
                BLOCK=block,
                TILES=tiles,
                SMALL=(1 << 63) // block - 1,
            )
        sums, counts = finish_partials(partial, [x.floating for x in part], n_groups)
        out += [(s, counts[i]) for i, s in enumerate(sums)]
    return out


def finish_partials(partial: torch.Tensor, floating: list[bool], n_groups: int):
    """The programs' partial sums of the group-sums kernels (``partial``:
    int64 [programs, columns (+ more counts), groups padded, 3]: low limb or
    DOUBLE bits, high limb, count) added up: (per column, its sums: DOUBLE
    [n_groups] or exact int64 limb pairs [n_groups, 2] (high, low); the
    counts, [columns, n_groups])."""
    counts = partial[:, :, :n_groups, 2].sum(0)
    sums = []
    for i, f in enumerate(floating):
        if f:
            sums.append(partial[:, i, :n_groups, 0].contiguous().view(torch.float64).sum(0))
        else:
            lo = partial[:, i, :n_groups, 0].sum(0)
            hi = partial[:, i, :n_groups, 1].sum(0) + (lo >> G.LIMB_BITS)
            sums.append(torch.stack([hi, lo & G.LIMB_MASK], dim=1))
    return sums, counts


def first_rows(gid: torch.Tensor, n_groups: int) -> torch.Tensor:
    """The first row of each of ``n_groups`` groups (``n``, the row count,
    where a group has no row): by a Triton pass on CUDA that keeps each
    program's smallest row per group in registers and sets each group's
    minimum with one atomic per program, for at most MAX_GROUPS groups (a
    scatter-min of 33M rows into TPC-H Q1's few groups piles up on a handful
    of addresses); else glint.kernels.groupby.first_rows.

    >>> first_rows(torch.tensor([2, 0, 2, 2]), 4).tolist()
    [1, 4, 0, 4]
    """
    if HAS_TRITON and use_triton(gid) and 1 <= n_groups <= MAX_GROUPS and gid.shape[0] < _MAX_ROWS:
        return first_rows_triton(gid, n_groups)
    return G.first_rows(gid, n_groups)


FEW_IDS_MIN_ROWS = 1 << 16  # fewer rows: the general path's few launches cost as little


def few_group_ids(key: torch.Tensor, lo: int, hi: int):
    """glint.kernels.groupby.group_ids for keys known to lie in [lo, hi], a
    span of at most MAX_GROUPS values, on CUDA: (group id per row, number of
    groups, first row of each group), groups in ascending key order; None
    where it does not apply (the general path then runs). The key less
    ``lo`` is the group when every value of the span occurs (TPC-H Q1's
    packed flags); otherwise a table of the span's values renumbers it. The
    first rows come from one Triton pass, read with the one host
    synchronisation (no direct-address table filled by 33M rows, no
    scatter-min).

    >>> few_group_ids(torch.tensor([5, 7, 5]), 5, 7) is None  # not on CUDA
    True
    """
    return few_group_ids_triton(key, lo, hi) if _few_ids_apply(key, lo, hi) else None


def _few_ids_apply(key: torch.Tensor, lo: int, hi: int) -> bool:
    """Whether the Triton passes of few_group_ids / span_group_ids take these keys."""
    span = hi - lo + 1
    return HAS_TRITON and use_triton(key) and 1 <= span <= MAX_GROUPS and FEW_IDS_MIN_ROWS <= key.shape[0] < _MAX_ROWS


def span_group_ids(key: torch.Tensor, lo: int, hi: int):
    """:func:`few_group_ids` without its host synchronisation: every value
    of the span is a group, those no row holds included: (group id per row,
    the span, the first row of each group, ``n`` where no row holds it);
    None where it does not apply. A caller that takes this must treat
    groups without rows as not there (their first row is out of range).

    >>> span_group_ids(torch.tensor([5, 7, 5]), 5, 7) is None  # not on CUDA
    True
    """
    return span_group_ids_triton(key, lo, hi) if _few_ids_apply(key, lo, hi) else None


def span_group_ids_triton(key: torch.Tensor, lo: int, hi: int):
    """:func:`span_group_ids` without its checks."""
    k = key - lo if lo else key
    return k, hi - lo + 1, first_rows_triton(k, hi - lo + 1)


def span_group_ids_torch(key: torch.Tensor, lo: int, hi: int):
    """The reference of :func:`span_group_ids_triton` (any device, any span).

    >>> gid, n, first = span_group_ids_torch(torch.tensor([7, 5, 7]), 5, 8)
    >>> gid.tolist(), n, first.tolist()
    ([2, 0, 2], 4, [1, 3, 0, 3])
    """
    k = key.long() - lo
    return k, hi - lo + 1, G.first_rows(k, hi - lo + 1)


def few_group_ids_triton(key: torch.Tensor, lo: int, hi: int):
    """:func:`few_group_ids` without its checks (the tests run it under the interpreter)."""
    n, span = key.shape[0], hi - lo + 1
    k = key - lo if lo else key
    firsts = first_rows_triton(k, span).tolist()
    present = [i for i, f in enumerate(firsts) if f < n]
    dev = key.device
    first = torch.tensor([firsts[i] for i in present], dtype=torch.int64, device=dev)
    if len(present) == span:
        return k, span, first
    renumber = [0] * span
    for g, i in enumerate(present):
        renumber[i] = g
    return torch.tensor(renumber, dtype=torch.int64, device=dev)[k], len(present), first


def first_rows_triton(gid: torch.Tensor, n_groups: int) -> torch.Tensor:
    n = gid.shape[0]
    g_pad = max(1, 1 << (n_groups - 1).bit_length())
    block = max(64, 4096 // g_pad)
    tiles = max(1, -(-n // (block * _PROGRAMS)))
    out = torch.full((g_pad,), n, dtype=torch.int64, device=gid.device)
    with on_device(gid):
        _first_rows_kernel[(blocks(n, block * tiles),)](gid, n, out, G=g_pad, BLOCK=block, TILES=tiles)
    return out[:n_groups]


if HAS_TRITON:
    import triton
    import triton.language as tl

    @triton.jit
    def _load(v_ptr, m_ptr, offs, inb, FLOATING: tl.constexpr, MASKED: tl.constexpr, SMALL: tl.constexpr):
        """One column's block of rows: (values, the rows that count, the rows
        whose integer lies outside +-SMALL)."""
        ok = inb
        if MASKED:
            ok = ok & (tl.load(m_ptr + offs, mask=inb, other=0) != 0)
        if FLOATING:
            v = tl.load(v_ptr + offs, mask=ok, other=0.0).to(tl.float64)
            wide = offs < 0  # (no row)
        else:
            v = tl.load(v_ptr + offs, mask=ok, other=0).to(tl.int64)
            wide = (v > SMALL) | (v < -SMALL)
        return v, ok, wide

    @triton.jit
    def _accumulate(
        v,
        ok,
        rows_hit,
        rows_n,
        big,
        acc_lo,
        acc_hi,
        acc_n,
        FLOATING: tl.constexpr,
        MASKED: tl.constexpr,
    ):
        """One column's block of rows added to its per-group accumulators.
        ``rows_hit`` / ``rows_n``: the block's rows per group and their count,
        shared by the columns without a mask. Integers: when no value of the
        block's columns lies outside +-SMALL (``big`` is 0; BLOCK of them
        cannot leave int64), each group's values are summed in one reduction,
        then split into the limbs; otherwise the 32-bit limbs are summed
        apart."""
        if MASKED:
            hit = rows_hit & ok[:, None]
            acc_n += tl.sum(hit.to(tl.int32), axis=0).to(tl.int64)
        else:
            hit = rows_hit
            acc_n += rows_n
        if FLOATING:
            acc_lo += tl.sum(tl.where(hit, v[:, None], 0.0), axis=0)
        else:
            if big > 0:
                acc_lo += tl.sum(tl.where(hit, (v & 0xFFFFFFFF)[:, None], 0), axis=0)
                acc_hi += tl.sum(tl.where(hit, (v >> 32)[:, None], 0), axis=0)
            else:
                total = tl.sum(tl.where(hit, v[:, None], 0), axis=0)
                acc_lo += total & 0xFFFFFFFF
                acc_hi += total >> 32
        return acc_lo, acc_hi, acc_n

    @triton.jit
    def _store(out_ptr, pid, col, acc_lo, acc_hi, acc_n, K: tl.constexpr, G: tl.constexpr, FLOATING: tl.constexpr):
        g = tl.arange(0, G)
        base = out_ptr + ((pid * K + col) * G + g) * 3
        if FLOATING:
            tl.store(base, acc_lo.to(tl.int64, bitcast=True))
        else:
            tl.store(base, acc_lo)
        tl.store(base + 1, acc_hi)
        tl.store(base + 2, acc_n)

    @triton.jit
    def _zeros(G: tl.constexpr, FLOATING: tl.constexpr):
        """A column's accumulators per group: (lo or the DOUBLE sum, hi, count)."""
        if FLOATING:
            lo = tl.zeros([G], tl.float64)
        else:
            lo = tl.zeros([G], tl.int64)
        return lo, tl.zeros([G], tl.int64), tl.zeros([G], tl.int64)

    @triton.jit
    def _group_sums_kernel(
        gid_ptr,
        rows_ptr,
        n,
        v0,
        m0,
        v1,
        m1,
        v2,
        m2,
        v3,
        m3,
        v4,
        m4,
        v5,
        m5,
        v6,
        m6,
        v7,
        m7,
        out_ptr,
        G: tl.constexpr,
        K: tl.constexpr,
        HAS_GID: tl.constexpr,
        HAS_ROWS: tl.constexpr,
        F0: tl.constexpr,
        M0: tl.constexpr,
        F1: tl.constexpr,
        M1: tl.constexpr,
        F2: tl.constexpr,
        M2: tl.constexpr,
        F3: tl.constexpr,
        M3: tl.constexpr,
        F4: tl.constexpr,
        M4: tl.constexpr,
        F5: tl.constexpr,
        M5: tl.constexpr,
        F6: tl.constexpr,
        M6: tl.constexpr,
        F7: tl.constexpr,
        M7: tl.constexpr,
        BLOCK: tl.constexpr,
        TILES: tl.constexpr,
        SMALL: tl.constexpr,
    ):
        pid = tl.program_id(0)
        groups = tl.arange(0, G)
        lo0, hi0, n0 = _zeros(G, F0)
        lo1, hi1, n1 = _zeros(G, F1)
        lo2, hi2, n2 = _zeros(G, F2)
        lo3, hi3, n3 = _zeros(G, F3)
        lo4, hi4, n4 = _zeros(G, F4)
        lo5, hi5, n5 = _zeros(G, F5)
        lo6, hi6, n6 = _zeros(G, F6)
        lo7, hi7, n7 = _zeros(G, F7)
        start = pid.to(tl.int64) * (BLOCK * TILES)
        for t in range(TILES):
            offs = start + t * BLOCK + tl.arange(0, BLOCK)
            inb = offs < n
            if HAS_GID:
                gid = tl.load(gid_ptr + offs, mask=inb, other=G)
            else:
                gid = tl.where(inb, 0, G)
            if HAS_ROWS:
                # a row the WHERE rejects is in no group
                gid = tl.where(tl.load(rows_ptr + offs, mask=inb, other=0) != 0, gid, G)
            # (a row past the end has group G: in no column of onehot)
            rows_hit = gid[:, None] == groups[None, :]
            rows_n = tl.sum(rows_hit.to(tl.int32), axis=0).to(tl.int64)  # once for the unmasked columns
            # every column read first: one test of the block's magnitudes decides how all are summed
            x0, ok0, wide = _load(v0, m0, offs, inb, F0, M0, SMALL)
            if K > 1:
                x1, ok1, wide1 = _load(v1, m1, offs, inb, F1, M1, SMALL)
                wide = wide | wide1
            if K > 2:
                x2, ok2, wide2 = _load(v2, m2, offs, inb, F2, M2, SMALL)
                wide = wide | wide2
            if K > 3:
                x3, ok3, wide3 = _load(v3, m3, offs, inb, F3, M3, SMALL)
                wide = wide | wide3
            if K > 4:
                x4, ok4, wide4 = _load(v4, m4, offs, inb, F4, M4, SMALL)
                wide = wide | wide4
            if K > 5:
                x5, ok5, wide5 = _load(v5, m5, offs, inb, F5, M5, SMALL)
                wide = wide | wide5
            if K > 6:
                x6, ok6, wide6 = _load(v6, m6, offs, inb, F6, M6, SMALL)
                wide = wide | wide6
            if K > 7:
                x7, ok7, wide7 = _load(v7, m7, offs, inb, F7, M7, SMALL)
                wide = wide | wide7
            big = tl.max(wide.to(tl.int32), axis=0)
            lo0, hi0, n0 = _accumulate(x0, ok0, rows_hit, rows_n, big, lo0, hi0, n0, F0, M0)
            if K > 1:
                lo1, hi1, n1 = _accumulate(x1, ok1, rows_hit, rows_n, big, lo1, hi1, n1, F1, M1)
            if K > 2:
                lo2, hi2, n2 = _accumulate(x2, ok2, rows_hit, rows_n, big, lo2, hi2, n2, F2, M2)
            if K > 3:
                lo3, hi3, n3 = _accumulate(x3, ok3, rows_hit, rows_n, big, lo3, hi3, n3, F3, M3)
            if K > 4:
                lo4, hi4, n4 = _accumulate(x4, ok4, rows_hit, rows_n, big, lo4, hi4, n4, F4, M4)
            if K > 5:
                lo5, hi5, n5 = _accumulate(x5, ok5, rows_hit, rows_n, big, lo5, hi5, n5, F5, M5)
            if K > 6:
                lo6, hi6, n6 = _accumulate(x6, ok6, rows_hit, rows_n, big, lo6, hi6, n6, F6, M6)
            if K > 7:
                lo7, hi7, n7 = _accumulate(x7, ok7, rows_hit, rows_n, big, lo7, hi7, n7, F7, M7)
        _store(out_ptr, pid, 0, lo0, hi0, n0, K, G, F0)
        if K > 1:
            _store(out_ptr, pid, 1, lo1, hi1, n1, K, G, F1)
        if K > 2:
            _store(out_ptr, pid, 2, lo2, hi2, n2, K, G, F2)
        if K > 3:
            _store(out_ptr, pid, 3, lo3, hi3, n3, K, G, F3)
        if K > 4:
            _store(out_ptr, pid, 4, lo4, hi4, n4, K, G, F4)
        if K > 5:
            _store(out_ptr, pid, 5, lo5, hi5, n5, K, G, F5)
        if K > 6:
            _store(out_ptr, pid, 6, lo6, hi6, n6, K, G, F6)
        if K > 7:
            _store(out_ptr, pid, 7, lo7, hi7, n7, K, G, F7)

    @triton.jit
    def _scatter_column(v_ptr, m_ptr, offs, inb, slot, out_ptr, fout_ptr, FLOATING: tl.constexpr, MASKED: tl.constexpr):
        """One column's block of rows added to its groups' slots (``slot``:
        each row's [lo, hi, count] triple) with relaxed atomics."""
        ok = inb
        if MASKED:
            ok = ok & (tl.load(m_ptr + offs, mask=inb, other=0) != 0)
            tl.atomic_add(out_ptr + slot + 2, tl.full(offs.shape, 1, tl.int64), mask=ok, sem="relaxed")
        if FLOATING:
            v = tl.load(v_ptr + offs, mask=ok, other=0.0).to(tl.float64)
            tl.atomic_add(fout_ptr + slot, v, mask=ok, sem="relaxed")
        else:
            v = tl.load(v_ptr + offs, mask=ok, other=0).to(tl.int64)
            tl.atomic_add(out_ptr + slot, v & 0xFFFFFFFF, mask=ok, sem="relaxed")
            tl.atomic_add(out_ptr + slot + 1, v >> 32, mask=ok, sem="relaxed")

    @triton.jit
    def _group_sums_atomic_kernel(
        gid_ptr,
        n,
        v0,
        m0,
        v1,
        m1,
        v2,
        m2,
        v3,
        m3,
        out_ptr,
        fout_ptr,
        rows_ptr,
        K: tl.constexpr,
        ROWS: tl.constexpr,
        F0: tl.constexpr,
        M0: tl.constexpr,
        F1: tl.constexpr,
        M1: tl.constexpr,
        F2: tl.constexpr,
        M2: tl.constexpr,
        F3: tl.constexpr,
        M3: tl.constexpr,
        BLOCK: tl.constexpr,
    ):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inb = offs < n
        gid = tl.load(gid_ptr + offs, mask=inb, other=0).to(tl.int64)
        if ROWS:
            tl.atomic_add(rows_ptr + gid, tl.full([BLOCK], 1, tl.int64), mask=inb, sem="relaxed")
        slot = gid * (K * 3)
        _scatter_column(v0, m0, offs, inb, slot, out_ptr, fout_ptr, F0, M0)
        if K > 1:
            _scatter_column(v1, m1, offs, inb, slot + 3, out_ptr, fout_ptr, F1, M1)
        if K > 2:
            _scatter_column(v2, m2, offs, inb, slot + 6, out_ptr, fout_ptr, F2, M2)
        if K > 3:
            _scatter_column(v3, m3, offs, inb, slot + 9, out_ptr, fout_ptr, F3, M3)

    @triton.jit
    def _first_rows_kernel(gid_ptr, n, out_ptr, G: tl.constexpr, BLOCK: tl.constexpr, TILES: tl.constexpr):
        groups = tl.arange(0, G)
        none = tl.zeros([G], tl.int64) + n
        best = none
        start = tl.program_id(0).to(tl.int64) * (BLOCK * TILES)
        for t in range(TILES):
            offs = start + t * BLOCK + tl.arange(0, BLOCK)
            gid = tl.load(gid_ptr + offs, mask=offs < n, other=G)
            hit = gid[:, None] == groups[None, :]
            best = tl.minimum(best, tl.min(tl.where(hit, offs[:, None], none[None, :]), axis=0))
        tl.atomic_min(out_ptr + groups, best, mask=best < none)
