"""glint.kernels.join's direct build and glint.kernels.pack's checked packing
(a join's keys against its build side's ranges): the torch code against plain
Python on random and adversarial keys (one key for every row, every row its own
key, skewed repeats, no rows, int64's extremes), and on CUDA the Triton kernels
against the torch code. The kernels also run under TRITON_INTERPRET=1
(tests/kernels/triton_interpreted.py)."""

from __future__ import annotations

import pytest
import torch

from glint.kernels import join as J
from glint.kernels import pack as K
from glint.kernels.strings import search
from tests.kernels.test_string_kernels import random_strings, scattered

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")

LO, SPAN = 1_000, 5_000


def _keys(case: str) -> torch.Tensor:
    gen = torch.Generator().manual_seed(len(case))
    if case == "unique":
        return torch.randperm(SPAN, generator=gen)[:3_000] + LO
    if case == "one key":
        return torch.full((2_000,), LO + 17, dtype=torch.int64)
    if case == "every key":
        return torch.arange(LO, LO + SPAN)
    if case == "skewed":  # a few keys hold most rows
        hot = torch.randint(LO, LO + 4, (3_000,), generator=gen)
        cold = torch.randint(LO, LO + SPAN, (1_000,), generator=gen)
        return torch.cat([hot, cold])[torch.randperm(4_000, generator=gen)]
    if case == "one row":
        return torch.tensor([LO + SPAN - 1])
    return torch.zeros(0, dtype=torch.int64)  # no rows


CASES = ["unique", "one key", "every key", "skewed", "one row", "empty"]


def _built(key: torch.Tensor, triton: bool) -> J.DirectBuild:
    rows = torch.randperm(2 * max(1, key.shape[0]), generator=torch.Generator().manual_seed(3))[: key.shape[0]]
    b = J.DirectBuild.__new__(J.DirectBuild)
    b.lo, b.span = LO, SPAN
    (b._place_triton if triton else b._place_torch)(key, rows.to(key.device))
    return b, rows


@pytest.mark.parametrize("case", CASES)
def test_direct_build_against_python(case):
    key = _keys(case)
    b, rows = _built(key, triton=False)
    counts = [0] * SPAN
    for k in key.tolist():
        counts[k - LO] += 1
    starts = [sum(counts[:i]) for i in range(SPAN)]
    # rows by key, each key's rows in their input order
    order = sorted(range(key.shape[0]), key=lambda i: (int(key[i]), i))
    assert b.counts.tolist() == counts and b.starts.tolist() == starts
    assert b.unique == (max(counts) <= 1)
    assert b.rows.tolist() == [int(rows[i]) for i in order]


@needs_cuda
@pytest.mark.parametrize("case", CASES)
def test_direct_build_kernels_against_torch(case):
    key = _keys(case)
    want, _ = _built(key, triton=False)
    got, _ = _built(key.cuda(), triton=True)
    assert got.unique == want.unique
    assert torch.equal(got.counts.cpu(), want.counts) and torch.equal(got.starts.cpu(), want.starts)
    assert torch.equal(got.rows.cpu(), want.rows)


I64 = torch.iinfo(torch.int64)


def _parts(seed: int):
    """Three key columns (int64 with int64's extremes, int32, bool) with NULL
    masks on two, and their ranges and shifts as a join's build side gives them."""
    gen = torch.Generator().manual_seed(seed)
    n = 3_000
    a = torch.randint(-20, 60, (n,), generator=gen)
    a[::97] = I64.max
    a[1::89] = I64.min
    b = torch.randint(2**31 - 100, 2**31 - 1, (n,), generator=gen).to(torch.int32)
    c = torch.rand(n, generator=gen) < 0.5
    valids = [torch.rand(n, generator=gen) < 0.9, None, torch.rand(n, generator=gen) < 0.7]
    los, his = [-10, 2**31 - 60, 0], [50, 2**31 - 2, 1]
    bits = [(h - lo).bit_length() for lo, h in zip(los, his)]
    shifts = [sum(bits[i + 1 :]) for i in range(3)]
    return [a, b, c], valids, los, his, shifts


@pytest.mark.parametrize("seed", [1, 2])
def test_pack_checked_against_python(seed):
    parts, valids, los, his, shifts = _parts(seed)
    key, ok = K.pack_checked_torch(parts, valids, los, his, shifts)
    for i in range(parts[0].shape[0]):
        vals = [int(p[i]) for p in parts]
        want_ok = all((v is None or bool(v[i])) and lo <= x <= hi for x, v, lo, hi in zip(vals, valids, los, his))
        want_key = sum((x - lo) << sh for x, lo, sh in zip(vals, los, shifts)) if want_ok else 0
        assert (bool(ok[i]), int(key[i])) == (want_ok, want_key)
    assert 0 < int(ok.sum()) < ok.shape[0]


@needs_cuda
@pytest.mark.parametrize("seed", [1, 2])
def test_pack_checked_kernel_against_torch(seed):
    parts, valids, los, his, shifts = _parts(seed)
    want_key, want_ok = K.pack_checked_torch(parts, valids, los, his, shifts)
    got_key, got_ok = K.pack_checked_triton(
        [p.cuda() for p in parts], [None if v is None else v.cuda() for v in valids], los, his, shifts
    )
    assert torch.equal(got_ok.cpu(), want_ok) and torch.equal(got_key.cpu(), want_key)


@needs_cuda
def test_short_literals_on_cuda_as_on_the_cpu():
    strings = random_strings(12, n=300, long=False) + ["A", "A\x00", "MAIL", "", "abcdefgh", "abcdefghi"]
    lits = [b"A", b"MAIL", b"", b"abcdefgh", b"zz"]
    cpu = search.is_one_of(scattered(strings), lits)
    p = scattered(strings)
    on_gpu = search.is_one_of(type(p)(p.data.cuda(), p.starts.cuda(), p.lengths.cuda()), lits)
    assert torch.equal(on_gpu.cpu(), cpu) and bool(cpu.any())
