"""A 10-million-row result streams through ``glint serve`` chunk by chunk:
the server's resident memory (sampled from /proc while the client reads)
grows by a bounded amount, far less than the 240 MB result. (The server runs
with the C allocators giving freed memory back at once, so that its resident
size follows what is live: see conftest.py.)"""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

from tests.server.conftest import connect, query

ROWS = 10_000_000
QUERY = "SELECT x, x + 1 AS y, x * 2 AS z FROM big10m"
RESULT_BYTES = ROWS * 3 * 8
BOUND = 64 << 20  # the server's growth allowed while it streams


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _drain(con) -> tuple[int, int]:
    """QUERY's result read batch by batch and dropped: (rows, bytes)."""
    rows = nbytes = 0
    with con.cursor() as cur:
        cur.execute(QUERY)
        for batch in cur.fetch_record_batch():
            rows += batch.num_rows
            nbytes += batch.nbytes
    return rows, nbytes


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="samples the server's memory from /proc")
def test_a_ten_million_row_result_streams_in_bounded_memory(served):
    con = connect(served)
    try:
        with con.cursor() as cur:
            data = pa.table({"x": np.arange(ROWS, dtype=np.int64)})
            # (in batches of 8 MB: the client caps a message at 16 MiB)
            cur.adbc_ingest("big10m", pa.RecordBatchReader.from_batches(data.schema, data.to_batches(1 << 20)))
        assert query(con, "SELECT max(x) AS m FROM big10m").to_pylist() == [{"m": ROWS - 1}]
        # a first stream, not measured: on a GPU the first use of a kernel loads its code into host memory
        _drain(con)
        base = _rss(served.proc.pid)
        peak = [base]
        done = threading.Event()

        def sample():
            while not done.is_set():
                peak[0] = max(peak[0], _rss(served.proc.pid))
                time.sleep(0.005)

        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            rows, nbytes = _drain(con)
        finally:
            done.set()
            sampler.join()
        assert (rows, nbytes) == (ROWS, RESULT_BYTES)
        growth = peak[0] - base
        assert growth < BOUND, (
            f"the server grew by {growth >> 20} MiB while streaming a {RESULT_BYTES >> 20} MiB result"
        )
        sent = query(con, f"SELECT rows, bytes FROM glint_queries WHERE sql = '{QUERY}'")
        assert sent.to_pylist() == [{"rows": ROWS, "bytes": RESULT_BYTES}] * 2
        query(con, "DROP TABLE big10m")
    finally:
        con.close()
