"""Validity masks: combining the NULLs of several arguments, and the rows
where a BOOLEAN is TRUE.

>>> import torch
>>> from glint.columnar import types as T
>>> and_valid(None, torch.tensor([True, False])).tolist(), and_valid(None, None)
([True, False], None)
>>> predicate_mask(Column(T.BOOLEAN, torch.tensor([True, True, False]), torch.tensor([True, False, True]))).tolist()
[True, False, False]
"""

from __future__ import annotations

import torch

from glint.columnar.column import Column


def and_valid(*vs):
    """Combined validity of several masks (None means all valid)."""
    out = None
    for v in vs:
        if v is not None:
            out = v if out is None else out & v
    return out


def predicate_mask(c: Column) -> torch.Tensor:
    """Rows where a BOOLEAN column is TRUE (NULL counts as not TRUE)."""
    return c.data if c.valid is None else c.data & c.valid
