"""glint.runtime.trace: the scan's timeline in Chrome's trace format."""

import json

import pyarrow as pa
import pyarrow.parquet as pq

import glint
from glint.runtime import trace


def test_spans_are_recorded_only_while_started(tmp_path):
    with trace.span("before"):
        pass
    trace.start()
    with trace.span("work", rows=3):
        pass
    events = trace.stop(str(tmp_path / "t.json"))
    with trace.span("after"):
        pass
    assert [e["name"] for e in events] == ["work"]
    e = events[0]
    assert e["ph"] == "X" and e["dur"] >= 0 and e["args"] == {"rows": 3} and e["tid"] == "MainThread"
    assert json.load(open(tmp_path / "t.json"))["traceEvents"] == events
    assert not trace.active()


def test_a_scan_from_parquet_leaves_its_decoding_and_the_consumers_compute(tmp_path, device):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"k": list(range(5000)), "v": [i % 7 for i in range(5000)]}), path, row_group_size=1000)
    con = glint.connect(device=device, chunk_rows=2048)
    con.sql(f"CREATE VIEW t AS SELECT * FROM read_parquet('{path}')")
    trace.start()
    try:
        got = con.sql("SELECT v, count(*) AS n FROM t GROUP BY v ORDER BY v").arrow()
    finally:
        events = trace.stop()
    assert got.column("n").to_pylist() == [715, 715, 714, 714, 714, 714, 714]
    names = {e["name"] for e in events}
    assert {"decode", "convert", "scan wait", "compute"} <= names
    decoded = sum(e["args"]["rows"] for e in events if e["name"] == "decode")
    assert decoded == 5000
    assert sum(1 for e in events if e["name"] == "compute") == 3  # chunks of 2048 rows
