"""kernels.calendar: the one-pass year / month / day / quarter kernel
against civil_from_days on CUDA (on the CPU it runs under TRITON_INTERPRET=1
in tests/kernels/triton_interpreted.py), and EXTRACT through SQL on the test
run's device against DuckDB."""

from __future__ import annotations

import datetime

import pyarrow as pa
import pytest
import torch

from glint.kernels import calendar as C
from glint.testing.compare import compare_query_result
from tests.registered import duckdb_with, glint_with


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_civil_fields_on_cuda():
    days = torch.cat([torch.arange(-800_000, 800_000, 7), torch.tensor([2**31 - 2, -(2**31) + 2])]).cuda()
    for d in (days, days.int()):
        for field in C.FIELDS:
            assert torch.equal(C.civil_field_triton(d, field).cpu(), C.civil_field_torch(d.cpu(), field)), field


def test_extract_equals_duckdb(device):
    start = datetime.date(1, 1, 1)
    dates = [start + datetime.timedelta(days=k * 97) for k in range(9000)] + [None, datetime.date(2000, 2, 29)]
    t = pa.table({"d": pa.array(dates, pa.date32())})
    con, duck = glint_with({"t": t}, device), duckdb_with({"t": t})
    sql = (
        "SELECT d, extract(year FROM d) AS y, extract(month FROM d) AS m, extract(day FROM d) AS dd, "
        "extract(quarter FROM d) AS q, year(d) AS y2 FROM t ORDER BY d NULLS FIRST"
    )
    assert compare_query_result(sql, con.sql(sql).arrow(), duck.execute(sql).arrow()) == []
