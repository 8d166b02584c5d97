"""Key sets shared by the hash-table tests: random, adversarial and skewed int64 keys."""

from __future__ import annotations

import torch

from glint.kernels.hash_table import EMPTY


def key_cases():
    """(name, build keys, probe keys) covering the shapes a hash table can get wrong."""
    g = torch.Generator().manual_seed(5)
    zipf = (1.0 / torch.rand(4000, generator=g)).long().clamp(max=10**12)  # a few heavy hitters, a long tail
    return [
        ("empty", torch.zeros(0, dtype=torch.int64), torch.tensor([1, 2, 3])),
        ("one", torch.tensor([42]), torch.tensor([42, 41, 43, 42])),
        ("all equal", torch.full((3000,), 7), torch.tensor([7, 8, -7])),
        (
            "distinct",
            torch.randperm(5000, generator=g) * 1_000_003,
            torch.randint(0, 5_000_000_000, (3000,), generator=g),
        ),
        ("duplicates", torch.randint(0, 300, (5000,), generator=g), torch.randint(-50, 350, (3000,), generator=g)),
        ("extremes", torch.tensor([EMPTY, 2**63 - 1, 0, -1, EMPTY, EMPTY + 1]), torch.tensor([EMPTY, 0, 1, 2**63 - 1])),
        ("strided", torch.arange(4096) << 20, torch.arange(0, 8192, 3) << 20),  # same low bits: the hash must mix
        ("skewed", zipf, zipf[:1000] + torch.randint(0, 2, (1000,), generator=g)),
    ]


def same_partition(ids: torch.Tensor, ref: torch.Tensor) -> bool:
    """Whether two id assignments put the same keys together (a bijection between ids)."""
    pairs = set(zip(ids.tolist(), ref.tolist()))
    return len({a for a, _ in pairs}) == len(pairs) == len({b for _, b in pairs})
