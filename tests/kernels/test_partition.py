"""glint.kernels.partition: rows grouped by destination (a counting sort),
checked against a loop over the rows, on the test device (the Triton kernels
on CUDA) and, under TRITON_INTERPRET=1, the kernels on the CPU
(tests/kernels/triton_interpreted.py)."""

from __future__ import annotations

import pytest
import torch

from glint.kernels import partition as P


def expected(dest: list[int], parts: int) -> tuple[list[int], list[int]]:
    order = [row for p in range(parts) for row, d in enumerate(dest) if d == p]
    return order, [dest.count(p) for p in range(parts)]


def cases():
    """(name, destinations, parts): random, adversarial and edge inputs."""
    gen = torch.Generator().manual_seed(7)
    zipf = torch.distributions.Categorical(probs=1.0 / torch.arange(1, 9, dtype=torch.float64))
    torch.manual_seed(3)
    return [
        ("empty", torch.zeros(0, dtype=torch.int64), 4),
        ("one row", torch.tensor([2]), 4),
        ("one part", torch.zeros(3000, dtype=torch.int64), 1),
        ("all to the last", torch.full((2049,), 6, dtype=torch.int64), 7),
        ("random 4", torch.randint(0, 4, (5000,), generator=gen), 4),
        ("random 7, a block and one", torch.randint(0, 7, (1025,), generator=gen), 7),
        ("skewed 8", zipf.sample((4097,)), 8),
        ("descending", torch.arange(3000).flip(0) % 5, 5),
        ("33 parts (64 bins: blocks of 512 rows)", torch.randint(0, 33, (3000,), generator=gen), 33),
        ("64 parts (128 bins: blocks of 256 rows)", torch.randint(0, 64, (3000,), generator=gen), 64),
        ("int32, some parts empty", torch.randint(0, 3, (2500,), generator=gen, dtype=torch.int32) * 2, 6),
    ]


@pytest.mark.parametrize("case", cases(), ids=lambda c: c[0])
def test_partition_order(case, device):
    _, dest, parts = case
    order, counts = P.partition_order(dest.to(device), parts)
    assert order.dtype == torch.int64 and counts.dtype == torch.int64
    assert (order.tolist(), counts.tolist()) == expected(dest.tolist(), parts)


def test_more_parts_than_the_kernel_takes(device):
    dest = torch.arange(500, device=device) % (P.MAX_TRITON_PARTS + 3)
    order, counts = P.partition_order(dest, P.MAX_TRITON_PARTS + 3)
    assert (order.tolist(), counts.tolist()) == expected(dest.tolist(), P.MAX_TRITON_PARTS + 3)


def check_triton_kernels() -> None:
    """The Triton kernels on the CPU tensors of every case (under the interpreter)."""
    for name, dest, parts in cases():
        order, counts = P.partition_order_triton(dest, parts)
        assert (order.tolist(), counts.tolist()) == expected(dest.tolist(), parts), name
