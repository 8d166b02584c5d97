"""Multi-key ordering: stable argsorts from the last key to the first, with
SQL NULL placement.

>>> import torch
>>> lexsort([(torch.tensor([2, 1, 2, 1]), None, False, False),
...          (torch.tensor([0, 5, 3, 4]), None, True, False)]).tolist()
[1, 3, 2, 0]
"""

from __future__ import annotations

import torch


def float_order_key(x: torch.Tensor) -> torch.Tensor:
    """Integers that order like DuckDB orders the floats ``x``: -inf < ... <
    -0.0 = 0.0 < ... < inf < NaN, every NaN equal. torch's sorts differ between
    CPU and CUDA on NaNs (the CUDA radix sort orders NaNs by their bits, so a
    NaN with the sign bit set comes first) and on -0.0; integer keys sort the
    same everywhere.

    >>> import torch
    >>> x = torch.tensor([float("nan"), 1.0, -0.0, float("-inf"), -float("nan"), 0.0, -2.0])
    >>> torch.argsort(float_order_key(x), stable=True).tolist()
    [3, 6, 2, 5, 1, 0, 4]
    """
    itype = {torch.float64: torch.int64, torch.float32: torch.int32}.get(x.dtype)
    if itype is None:
        x, itype = x.to(torch.float32), torch.int32
    x = torch.where(torch.isnan(x), torch.full((), float("nan"), dtype=x.dtype, device=x.device).abs(), x) + 0.0
    b = x.view(itype)
    return b ^ ((b >> (b.element_size() * 8 - 1)) & torch.iinfo(itype).max)


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
            elif v.is_floating_point():
                v = float_order_key(v)
            idx = torch.argsort(v, stable=True, descending=desc)
            perm = perm[idx]
        if valid is not None:
            nulls = ~valid[perm]
            rank = (~nulls if nulls_first else nulls).to(torch.int8)
            perm = perm[torch.argsort(rank, stable=True)]
    return perm
