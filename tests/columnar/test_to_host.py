"""Columns and tensors moved to the host together (``to_host``,
``copied_together``): every tensor comes back with its values, dtype and
shape, whatever the mix (wide decimals' two limbs, masks, empty and
non-contiguous tensors), and the copies share nothing with the inputs.
On CUDA the columns cross in one transfer per dtype."""

from __future__ import annotations

import pytest
import torch

from glint.columnar import types as T
from glint.columnar.column import Column, copied_together, to_host


def _mix(device):
    g = torch.Generator().manual_seed(5)
    wide = torch.randint(-(2**40), 2**40, (7, 2), generator=g)
    return [
        torch.randint(-100, 100, (9,), generator=g),
        torch.rand(9, generator=g, dtype=torch.float64),
        torch.rand(9, generator=g) > 0.5,
        wide,
        torch.zeros(0, dtype=torch.int64),
        torch.zeros((0, 2), dtype=torch.int64),
        torch.arange(20, dtype=torch.int32)[::3],  # not contiguous
        torch.randint(0, 9, (5,), generator=g, dtype=torch.int8),
        torch.rand(4, generator=g) > 0.2,
    ], device


def test_copied_together_keeps_every_tensor(device):
    tensors, _ = _mix(device)
    moved = copied_together([t.to(device) for t in tensors])
    for t, m in zip(tensors, moved):
        assert m.device.type == "cpu" and m.dtype == t.dtype and m.shape == t.shape
        assert torch.equal(m, t)
    # the copies are the caller's own: changing one changes neither an input nor another copy
    before = [t.clone() for t in tensors]
    for m in moved:
        m.zero_()
    assert all(torch.equal(t, b) for t, b in zip(tensors, before))
    assert torch.equal(copied_together([tensors[0]])[0], before[0])


def test_to_host_columns(device):
    g = torch.Generator().manual_seed(8)
    cols = [
        Column(T.BIGINT, torch.randint(-50, 50, (6,), generator=g)),
        Column(T.DOUBLE, torch.rand(6, generator=g, dtype=torch.float64), torch.rand(6, generator=g) > 0.3),
        Column(T.DECIMAL(38, 2), torch.randint(-(2**33), 2**33, (6, 2), generator=g)),
        Column(T.INTEGER, torch.arange(6, dtype=torch.int32), torch.ones(6, dtype=torch.bool)),
    ]
    out = to_host([c.to(device) for c in cols])
    for c, o in zip(cols, out):
        assert o.device.type == "cpu" and o.dtype == c.dtype
        assert torch.equal(o.data, c.data)
        assert (o.valid is None) == (c.valid is None)
        if c.valid is not None:
            assert torch.equal(o.valid, c.valid)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_to_host_one_transfer_per_dtype():
    cols = [Column(T.BIGINT, torch.arange(5, device="cuda") + i) for i in range(40)]
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
        out = to_host(cols)
    copies = [e for e in p.events() if "Memcpy DtoH" in e.name]
    assert len(copies) == 1, [e.name for e in copies]
    assert [o.data.tolist() for o in out] == [list(range(i, i + 5)) for i in range(40)]
