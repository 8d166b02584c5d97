"""Multi-key ordering: stable argsorts from the last key to the first, with
SQL NULL placement.

>>> import torch
>>> lexsort([(torch.tensor([2, 1, 2, 1]), None, False, False),
...          (torch.tensor([0, 5, 3, 4]), None, True, False)]).tolist()
[1, 3, 2, 0]
"""
from __future__ import annotations

import torch


def lexsort(keys) -> torch.Tensor:
    """Row order for keys = [(values, validity or None, descending, nulls_first)].

    values may be (n,) or (n, 2) [hi, lo] for wide decimals."""
    n = keys[0][0].shape[0]
    dev = keys[0][0].device
    perm = torch.arange(n, device=dev)
    for values, valid, desc, nulls_first in reversed(keys):
        if valid is not None:
            # what lies under a NULL is undefined: make NULLs tie so earlier keys decide
            fill = torch.zeros((), dtype=values.dtype, device=values.device)
            values = torch.where(valid if values.dim() == 1 else valid[:, None], values, fill)
        cols = [values[:, 1], values[:, 0]] if values.dim() == 2 else [values]
        for v in cols:
            v = v[perm]
            if v.dtype == torch.bool:
                v = v.to(torch.int8)
            idx = torch.argsort(v, stable=True, descending=desc)
            perm = perm[idx]
        if valid is not None:
            nulls = ~valid[perm]
            rank = (~nulls if nulls_first else nulls).to(torch.int8)
            perm = perm[torch.argsort(rank, stable=True)]
    return perm
