"""Sets of int64 keys, each distinct key with a dense id: what a join's build
side, a GROUP BY and a join key's rank encoding look values up in.

On CUDA (with Triton) the set is an open-addressing hash table with linear
probing: a Triton kernel inserts every key with an atomic compare-and-swap and
returns the slot it landed in, another probes a batch of keys in one launch.
Slots are then numbered densely (a prefix sum over the occupied slots), so ids
run from 0 to the number of distinct keys. Everywhere else the torch
reference runs: the sorted distinct keys, with a key's id its rank found by
binary search. The two give different ids for the same key, but the same
partition of the keys, which is all a caller may rely on:

- equal keys get equal ids, different keys different ids, in ``[0, size)``;
- :meth:`KeySet.lookup` gives a key's id, or -1 for a key not in the set.

``EMPTY`` (the smallest int64) marks a free slot; a key of that value is
kept in a spare slot past the table's end.

>>> import torch
>>> s, ids = key_set(torch.tensor([30, 10, 30, 20]))
>>> s.size, bool(ids[0] == ids[2]), len(set(ids.tolist()))
(3, True, 3)
>>> probe = s.lookup(torch.tensor([20, 40, 30]))
>>> bool(probe[0] == ids[3]), int(probe[1]), bool(probe[2] == ids[0])
(True, -1, True)
"""

from __future__ import annotations

import torch

from glint.kernels.backend import HAS_TRITON, blocks, on_device, use_triton

EMPTY = -(2**63)  # a free slot
_HASH_MUL = 0x9E3779B97F4A7C15 - (1 << 64)  # Fibonacci hashing's multiplier, as a signed int64
_BLOCK = 256  # lanes of a program: a program loops until its longest probe sequence ends
_MIN_BITS = 10
_LOW_LOAD_KEYS = 1 << 26


def table_bits(n: int) -> int:
    """log2 of the table's capacity for n keys: the load stays at most 1/2
    (a probe for a missing key reads 2.5 slots on average), at most 3/4 for
    tables of more than 2**26 keys, where memory counts more.

    >>> table_bits(0), table_bits(512), table_bits(513), table_bits(1 << 27)
    (10, 10, 11, 28)
    """
    need = max(1, 2 * n if n <= _LOW_LOAD_KEYS else -(-4 * n // 3))
    return max(_MIN_BITS, (need - 1).bit_length())


_ENABLED = True  # (enable_hash_tables)


def enable_hash_tables(enabled: bool) -> None:
    """Whether CUDA key sets are hash tables (False: the sorted reference on
    CUDA too, to time one against the other): the hash_tables setting."""
    global _ENABLED
    _ENABLED = bool(enabled)


def hashed_on(keys: torch.Tensor) -> bool:
    """Whether a key set of tensors like ``keys`` is a hash table."""
    return _ENABLED and HAS_TRITON and use_triton(keys)


class KeySet:
    """Distinct int64 keys with dense ids (see the module's doc)."""

    __slots__ = ("size", "_sorted", "_table", "_ids", "_shift", "_mask")

    def __init__(self):
        self.size = 0
        self._sorted = None  # the reference: sorted distinct keys
        self._table = None  # the hash table: slot keys (EMPTY: free), one spare slot at the end
        self._ids = None  # per slot, the key's dense id
        self._shift = self._mask = 0

    def lookup(self, keys: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """Each key's id, -1 where the set lacks it (or ``valid`` is False)."""
        if self._table is not None:
            return _probe(self, keys, valid)
        out = _lookup_sorted(self._sorted, keys)
        return out if valid is None else torch.where(valid, out, torch.full_like(out, -1))


def key_set(keys: torch.Tensor, hashed: bool | None = None) -> tuple[KeySet, torch.Tensor]:
    """(the set of ``keys``, each key's id). ``hashed`` picks the hash table
    (default: on CUDA when Triton runs) or the sorted reference."""
    keys = keys.long().contiguous()
    if hashed is None:
        hashed = hashed_on(keys)
    s = KeySet()
    if not hashed:
        s._sorted = torch.unique(keys)
        s.size = int(s._sorted.shape[0])
        return s, _lookup_sorted(s._sorted, keys)
    return _build(s, keys)


def _lookup_sorted(uniq: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    if uniq.numel() == 0:
        return torch.full_like(keys, -1)
    pos = torch.searchsorted(uniq, keys).clamp_(max=uniq.numel() - 1)
    return torch.where(uniq[pos] == keys, pos, torch.full_like(pos, -1))


# ---------------------------------------------------------------- the hash table
def _build(s: KeySet, keys: torch.Tensor) -> tuple[KeySet, torch.Tensor]:
    n = keys.shape[0]
    bits = table_bits(n)
    cap = 1 << bits
    dev = keys.device
    table = torch.full((cap + 1,), EMPTY, dtype=torch.int64, device=dev)
    table[cap] = 0  # the spare slot: never free, so the lanes past the end never claim it
    slots = torch.empty(n, dtype=torch.int64, device=dev)
    s._shift, s._mask = 64 - bits, cap - 1
    if n:
        with on_device(keys):
            _insert_kernel[(blocks(n, _BLOCK),)](keys, n, table, slots, EMPTY, s._shift, s._mask, cap, BLOCK=_BLOCK)
    used = table != EMPTY
    used[cap] = (slots == cap).any() if n else False  # the spare slot: a key that is EMPTY
    ids = torch.cumsum(used, 0, dtype=torch.int64) - 1
    s.size = int(ids[-1]) + 1  # (one synchronisation)
    s._table = table
    s._ids = torch.where(used, ids, torch.full_like(ids, -1)).to(torch.int32)
    return s, s._ids[slots].long()


def _probe(s: KeySet, keys: torch.Tensor, valid: torch.Tensor | None) -> torch.Tensor:
    keys = keys.long().contiguous()
    n = keys.shape[0]
    out = torch.empty(n, dtype=torch.int64, device=keys.device)
    if n:
        v = valid.contiguous() if valid is not None else keys
        with on_device(keys):
            _probe_kernel[(blocks(n, _BLOCK),)](
                keys, v, n, s._table, s._ids, out, EMPTY, s._shift, s._mask, HAS_VALID=valid is not None, BLOCK=_BLOCK
            )
    return out


if HAS_TRITON:
    import triton
    import triton.language as tl

    _MUL = tl.constexpr(_HASH_MUL)

    @triton.jit
    def _slot_of(k, shift, mask):
        h = (k * _MUL).to(tl.uint64, bitcast=True) >> shift
        return h.to(tl.int64) & mask

    @triton.jit
    def _insert_kernel(keys_ptr, n, table_ptr, slots_ptr, empty, shift, mask, spare, BLOCK: tl.constexpr):
        # Each lane reads its key's slot: its own key there means done, another
        # key means the next slot, a free slot is claimed by compare-and-swap
        # (which may find that another lane claimed it first, for the same key or
        # another). Lanes with nothing to claim run their CAS on their own output
        # cell with equal compare and swap values, which never changes it: the
        # atomics touch contended slots only where a claim is due.
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        own = slots_ptr + tl.minimum(offs, n - 1)
        k = tl.load(keys_ptr + offs, mask=inside, other=0)
        active = inside & (k != empty)
        h = tl.where(active, _slot_of(k, shift, mask), spare)
        while tl.max(active.to(tl.int32), axis=0) > 0:
            t = tl.load(table_ptr + h, mask=active, other=0)
            claim = active & (t == empty)
            old = tl.atomic_cas(
                tl.where(claim, table_ptr + h, own), tl.where(claim, empty, 0), tl.where(claim, k, 0), sem="relaxed"
            )
            seen = tl.where(claim, old, t)
            active = active & (seen != k) & ~(claim & (old == empty))
            h = tl.where(active, (h + 1) & mask, h)
        tl.store(slots_ptr + offs, h, mask=inside)

    @triton.jit
    def _probe_kernel(
        keys_ptr,
        valid_ptr,
        n,
        table_ptr,
        ids_ptr,
        out_ptr,
        empty,
        shift,
        mask,
        HAS_VALID: tl.constexpr,
        BLOCK: tl.constexpr,
    ):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inside = offs < n
        k = tl.load(keys_ptr + offs, mask=inside, other=0)
        active = inside
        if HAS_VALID:
            active = active & (tl.load(valid_ptr + offs, mask=inside, other=0) != 0)
        h = _slot_of(k, shift, mask)
        found = tl.where(active & (k == empty), mask + 1, -1).to(tl.int64)  # (the spare slot)
        active = active & (k != empty)
        while tl.max(active.to(tl.int32), axis=0) > 0:
            t = tl.load(table_ptr + h, mask=active, other=empty)
            hit = active & (t == k)
            found = tl.where(hit, h, found)
            active = active & (t != k) & (t != empty)
            h = tl.where(active, (h + 1) & mask, h)
        ids = tl.load(ids_ptr + found, mask=found >= 0, other=-1)
        tl.store(out_ptr + offs, ids.to(tl.int64), mask=inside)
