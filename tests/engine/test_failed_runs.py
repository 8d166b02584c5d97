"""A query that fails gives back what it held, although its error (and with
it the failed run's frames) is kept: the caller may store it, and pytest and
an interactive session keep the last one. Before, a join's build reservation
and its device tensors stayed taken, and the next queries on the connection
ran out of a small memory budget."""

import numpy as np
import pyarrow as pa
import pytest
import torch

import glint
from glint.errors import GlintError

N = 100_000
# the build side (b) is held by the join while the product above it overflows in the probe's chunks
FAILS = "SELECT a.k, a.k * 922337203685477580 AS x, b.w FROM a JOIN b ON a.k = b.k ORDER BY x"


@pytest.fixture
def con(device):
    c = glint.connect(device=device, chunk_rows=1000)
    k = np.arange(N, dtype=np.int64)
    c.register("a", pa.table({"k": k}))
    c.register("b", pa.table({"k": k, "w": np.ones(N, dtype=np.int64)}))
    yield c
    c.close()


def _allocated(con) -> int:
    return torch.cuda.memory_allocated(con.device) if con.device.type == "cuda" else 0


def test_a_failed_query_gives_its_memory_back_while_its_error_is_kept(con):
    con.sql("SELECT count(*) FROM a JOIN b ON a.k = b.k").fetchall()  # tables cached, kernels built
    before = _allocated(con)
    kept = []
    for _ in range(3):
        with pytest.raises(GlintError, match="Overflow in multiplication") as info:
            con.sql(FAILS).arrow()
        kept.append(info.value)  # the errors, with their tracebacks, stay alive
        assert con.memory.reserved() == 0
    if con.device.type == "cuda":
        assert _allocated(con) <= before + (1 << 20)
    assert con.sql("SELECT sum(b.w) FROM a JOIN b ON a.k = b.k").fetchall() == [(N,)]
    assert all(e.__traceback__ is not None for e in kept)  # still names where it failed


def test_a_failed_stream_gives_its_memory_back(con):
    with pytest.raises(GlintError, match="Overflow in multiplication") as info:
        for _ in con.sql(FAILS).stream():
            pass
    assert info.value is not None
    assert con.memory.reserved() == 0


def test_expandable_segments_are_asked_for_without_a_deprecated_call(monkeypatch):
    """Under a memory cap the allocator is asked for expandable segments
    through torch._C's setter where torch has it (the torch.cuda.memory one
    warns that it is deprecated), and not at all where the user configured
    the allocator."""
    import warnings

    from glint.engine import connection

    calls = []
    monkeypatch.setattr(torch._C, "_accelerator_setAllocatorSettings", calls.append, raising=False)
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    monkeypatch.delenv("PYTORCH_ALLOC_CONF", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        connection._expandable_segments()
    assert calls == ["expandable_segments:True"]
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:False")
    connection._expandable_segments()
    assert calls == ["expandable_segments:True"]
