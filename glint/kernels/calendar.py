"""Day counts since 1970-01-01 to (year, month, day) in the proleptic
Gregorian calendar (H. Hinnant's ``civil_from_days``), on tensors, and one
field of it per row by a Triton kernel on CUDA.

:func:`civil_from_days` is the torch version, about thirty operations over
the whole column. On a GPU, EXTRACT(YEAR FROM date) took a table of the
column's range of days (a read of its minimum and maximum: one host
synchronisation a chunk) and a gather; :func:`civil_field_triton` computes
the field of each row in one pass instead, from the day alone, with nothing
read back. The tests check it against :func:`civil_from_days` under
``TRITON_INTERPRET=1`` and on CUDA.

>>> [t.tolist() for t in civil_from_days(torch.tensor([0, -1, 11016]))]
[[1970, 1969, 2000], [1, 12, 2], [1, 31, 29]]
"""

from __future__ import annotations

import torch

from glint.kernels.backend import HAS_TRITON, blocks, on_device

FIELDS = ("year", "month", "day", "quarter")  # what civil_field_triton computes


def _fdiv(a: torch.Tensor, b: int) -> torch.Tensor:
    return torch.div(a, b, rounding_mode="floor")


def civil_from_days(days: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(year, month, day) int64 tensors for day counts since 1970-01-01."""
    z = days.long() + 719468
    era = _fdiv(z, 146097)
    doe = z - era * 146097  # [0, 146096]
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)  # March-based day of year
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = torch.where(mp < 10, mp + 3, mp - 9)
    y = yoe + era * 400 + (m <= 2).long()
    return y, m, d


def civil_field_torch(days: torch.Tensor, field: str) -> torch.Tensor:
    """The reference of :func:`civil_field_triton`: one of FIELDS, int64."""
    y, m, d = civil_from_days(days)
    return {"year": y, "month": m, "day": d, "quarter": (m - 1) // 3 + 1}[field]


_BLOCK = 1024


def civil_field_triton(days: torch.Tensor, field: str) -> torch.Tensor:
    """One of FIELDS of each day count (int32 or int64), int64, in one pass."""
    if field not in FIELDS:
        raise ValueError(f"no calendar field {field!r}")
    n = days.shape[0]
    out = torch.empty(n, dtype=torch.int64, device=days.device)
    if n:
        with on_device(days):
            _civil_kernel[(blocks(n, _BLOCK),)](days, out, n, FIELD=FIELDS.index(field), BLOCK=_BLOCK)
    return out


if HAS_TRITON:
    import triton
    import triton.language as tl

    @triton.jit
    def _civil_kernel(days_ptr, out_ptr, n, FIELD: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inb = offs < n
        z = tl.load(days_ptr + offs, mask=inb, other=0).to(tl.int64) + 719468
        # floor division by 146097 (Triton's integer division truncates toward zero)
        era = tl.where(z >= 0, z, z - 146096) // 146097
        doe = z - era * 146097
        yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
        doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
        mp = (5 * doy + 2) // 153
        m = tl.where(mp < 10, mp + 3, mp - 9)
        if FIELD == 0:
            out = yoe + era * 400 + (m <= 2).to(tl.int64)
        elif FIELD == 1:
            out = m
        elif FIELD == 2:
            out = doy - (153 * mp + 2) // 5 + 1
        else:
            out = (m - 1) // 3 + 1
        tl.store(out_ptr + offs, out, mask=inb)
