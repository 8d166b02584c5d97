"""Failures of a rank in the middle of a query, on GPUs (NCCL) and on CPU
ranks (Gloo): a killed rank is named at once, a stopped rank at the
exchange's timeout, and a new connection in the same process answers
correctly afterwards. NCCL is the transport where a dead peer can leave a
collective waiting forever.

The CUDA cases need two devices; on a multi-GPU host run
``pytest -m gpu tests/distributed/test_rank_failures.py``.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import torch

import glint
from glint.errors import RankFailure
from glint.testing.compare import compare_query_result
from glint.workloads import tpch

DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=[
            pytest.mark.gpu,
            pytest.mark.skipif(
                not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs two CUDA devices"
            ),
        ],
    ),
]

# Q3 shuffles lineitem and orders (no partitioning on the keys), so every rank is inside an
# exchange for most of the query
QUERY = 3


def _connect(d, device: str, timeout: float):
    con = glint.connect(ranks=2, device=device, timeout=timeout, replicate_rows=0)
    tpch.load_tpch(con, directory=d, progress=False)
    return con


def _correct(con, duck, n: int = QUERY) -> None:
    q = tpch.tpch_query(n)
    assert compare_query_result(q, con.sql(q).arrow(), tpch.duckdb_arrow(duck, q)) == []


def _signal_when_inside(con, rank: int, sig: int) -> tuple[threading.Thread, list[float]]:
    """Holds ``rank`` at the first exchange of the next query for a while and
    starts a thread that sends it ``sig`` while it waits there (the thread and
    the list that gets the time it was sent)."""
    con.inject_fault(rank, "sleep", step=1, seconds=3)
    proc = con.world.procs[rank]
    sent: list[float] = []

    def send():
        time.sleep(1.5)
        os.kill(proc.pid, sig)
        sent.append(time.monotonic())

    t = threading.Thread(target=send)
    t.start()
    return t, sent


@pytest.mark.parametrize("device", DEVICES)
def test_killed_rank_is_named_and_a_new_connection_works(tpch_data, device):
    d, duck = tpch_data
    con = _connect(d, device, timeout=60)
    try:
        _correct(con, duck)
        t, sent = _signal_when_inside(con, 1, signal.SIGKILL)
        with pytest.raises(RankFailure, match="rank 1 was killed by SIGKILL") as e:
            con.sql(tpch.tpch_query(QUERY)).arrow()
        t.join()
        assert e.value.rank == 1 and time.monotonic() - sent[0] < 15
        with pytest.raises(RankFailure, match="open a new connection"):
            con.sql("SELECT 1").arrow()
    finally:
        con.close()
    con = _connect(d, device, timeout=60)
    try:
        _correct(con, duck)
        _correct(con, duck, 18)
    finally:
        con.close()


@pytest.mark.parametrize("device", DEVICES)
def test_stopped_rank_times_out_naming_the_rank(tpch_data, device):
    d, duck = tpch_data
    con = _connect(d, device, timeout=8)
    try:
        t, sent = _signal_when_inside(con, 1, signal.SIGSTOP)
        t0 = time.monotonic()
        with pytest.raises(RankFailure, match=r"rank 1 did not reach exchange \d+ \(.*\) within 8 s") as e:
            con.sql(tpch.tpch_query(QUERY)).arrow()
        t.join()
        assert e.value.rank == 1 and time.monotonic() - t0 < 30
        assert all(p.poll() is not None for p in con.world.procs.values())  # nothing left hanging
    finally:
        for p in con.world.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.kill()
        con.close()
    con = _connect(d, device, timeout=60)
    try:
        _correct(con, duck)
    finally:
        con.close()
