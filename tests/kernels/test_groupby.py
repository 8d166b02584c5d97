"""glint.kernels.groupby: group ids and each group's first row, the latter
also with its minimum spread over bins (the CUDA path for few groups, whose
atomic minimums would otherwise pile onto a handful of addresses)."""

from __future__ import annotations

import pytest
import torch

from glint.kernels import groupby as G


def _first_by_loop(gid: list[int], groups: int) -> list[int]:
    first = [None] * groups
    for row, g in enumerate(gid):
        if first[g] is None:
            first[g] = row
    return first


@pytest.mark.parametrize("groups", [1, 4, 37])
@pytest.mark.parametrize("spread", [None, 1, 3, 64])
def test_first_rows(groups, spread):
    gen = torch.Generator().manual_seed(groups)
    gid = torch.randint(0, groups, (5_000,), generator=gen)
    gid[:groups] = torch.arange(groups).flip(0)  # every group present, first rows out of order
    got = G.first_rows(gid, groups, spread=spread)
    assert got.tolist() == _first_by_loop(gid.tolist(), groups)


def test_group_ids_first_rows_follow_the_ids(device):
    key = torch.tensor([7, 3, 7, 3, 9, 1 << 40, 3, 1 << 40], device=device)
    gid, n, first = G.group_ids(key)
    assert n == 4
    assert sorted(key[first].tolist()) == [3, 7, 9, 1 << 40]
    assert gid[first].tolist() == list(range(n))
    assert first.tolist() == _first_by_loop(gid.tolist(), n)


def test_first_rows_of_many_rows_in_few_groups(device):
    """Past 2**20 rows a CUDA tensor takes the spread path on its own."""
    n = (1 << 21) + 3
    gid = (torch.arange(n, device=device) * 7 + 3) % 5
    gid[0] = 4
    got = G.first_rows(gid, 5).tolist()
    assert got == _first_by_loop(gid[:16].tolist(), 5)
