"""glint.kernels.hash_table's sorted reference (the CPU's path), and the
builds of glint.kernels.join on it. The Triton hash table is checked against
this reference under TRITON_INTERPRET=1 (tests/kernels/triton_interpreted.py)
and on CUDA (the GPU tests below)."""

from __future__ import annotations

import pytest
import torch

from glint.kernels import hash_table as H
from glint.kernels import join as J
from tests.kernels.hash_cases import key_cases, same_partition


@pytest.mark.parametrize("case", key_cases(), ids=lambda c: c[0])
def test_reference_ids(case):
    _, build, probe = case
    s, ids = H.key_set(build, hashed=False)
    assert s.size == len(set(build.tolist()))
    by_key = {}
    for k, i in zip(build.tolist(), ids.tolist()):
        assert by_key.setdefault(k, i) == i and 0 <= i < s.size
    assert len(set(by_key.values())) == s.size
    got = s.lookup(probe).tolist()
    assert got == [by_key.get(k, -1) for k in probe.tolist()]
    valid = torch.arange(probe.shape[0]) % 2 == 0
    assert s.lookup(probe, valid).tolist() == [g if v else -1 for g, v in zip(got, valid.tolist())]


def _pairs(build, probe):
    return sorted(zip(*[t.tolist() for t in J.match_pairs(build, None, probe, None)]))


@pytest.mark.parametrize("case", key_cases(), ids=lambda c: c[0])
def test_match_pairs(case):
    """Every (probe row, build row) pair with equal keys, and nothing else."""
    _, build, probe = case
    want = sorted((i, j) for i, p in enumerate(probe.tolist()) for j, b in enumerate(build.tolist()) if p == b)
    assert _pairs(build, probe) == want


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("case", key_cases(), ids=lambda c: c[0])
def test_hash_table_on_cuda(case):
    _, build, probe = case
    s, ids = H.key_set(build.cuda(), hashed=True)
    r, ref = H.key_set(build, hashed=False)
    assert s.size == r.size and same_partition(ids.cpu(), ref)
    got, want = s.lookup(probe.cuda()).cpu(), r.lookup(probe)
    assert torch.equal(got >= 0, want >= 0) and same_partition(torch.cat([ids.cpu(), got]), torch.cat([ref, want]))
    hb = J.HashBuild(build.cuda(), torch.arange(build.shape[0], device="cuda"))
    lo, counts = J.match_counts(hb, probe.cuda(), None)
    pi, bi = J.expand_matches(hb, lo, counts)
    want_pairs = sorted(zip(*[t.tolist() for t in J.match_pairs(build, None, probe, None)]))
    assert sorted(zip(pi.tolist(), bi.tolist())) == want_pairs


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_hash_table_large_on_cuda():
    """Millions of keys, most probes missing: ids agree with the sorted reference."""
    g = torch.Generator().manual_seed(3)
    build = torch.randint(0, 1 << 50, (3_000_000,), generator=g)
    build = torch.cat([build, build[:500_000]])
    probe = torch.randint(0, 1 << 50, (2_000_000,), generator=g)
    probe[::3] = build[: probe[::3].shape[0]]
    s, ids = H.key_set(build.cuda(), hashed=True)
    r, ref = H.key_set(build, hashed=False)
    assert s.size == r.size
    remap = torch.full((s.size,), -1, dtype=torch.int64)
    remap[ids.cpu()] = ref
    assert torch.equal(remap[ids.cpu()], ref)
    got, want = s.lookup(probe.cuda()).cpu(), r.lookup(probe)
    assert torch.equal(torch.where(got >= 0, remap[got.clamp(min=0)], got), want)


def test_join_keys_near_int64_bounds():
    """A probe value far below the build's range never wraps into it."""
    from glint.columnar import types as T
    from glint.columnar.column import Column
    from glint.exec.join_keys import BuildKeys

    top = 2**63 - 10
    b = BuildKeys([Column(T.BIGINT, torch.tensor([top, top + 3]))])
    k, v, _ = b.encode([Column(T.BIGINT, torch.tensor([-(2**63) + 3, top + 3, -(2**63) + 13, 0]))])
    assert v.tolist() == [False, True, False, False]
