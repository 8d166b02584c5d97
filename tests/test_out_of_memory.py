"""A device out-of-memory error becomes glint.OutOfMemory naming the operator
and the bytes asked for, and the connection keeps working."""
import pyarrow as pa
import pytest
import torch

import glint
from glint.exec.aggregate import HashAggregateExec


def test_oom_is_reported_and_connection_survives(monkeypatch):
    con = glint.connect(device="cpu")
    con.register("t", pa.table({"a": [1, 2, 3]}))

    def boom(self, ctx, *inputs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 12.50 GiB. GPU 0 has ...")
        yield   # a generator, as every operator's stream is

    with monkeypatch.context() as m:
        m.setattr(HashAggregateExec, "stream", boom)
        with pytest.raises(glint.OutOfMemory) as info:
            con.sql("SELECT a, count(*) FROM t GROUP BY a").fetchall()
    msg = str(info.value)
    assert "HashAggregate" in msg and "12.50 GiB" in msg
    assert con.sql("SELECT a, count(*) FROM t GROUP BY a ORDER BY a").fetchall() == [(1, 1), (2, 1), (3, 1)]
