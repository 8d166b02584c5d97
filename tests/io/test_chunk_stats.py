"""glint.io.table.Table.chunk_stats: a chunk's (min, max, null count) over
its Parquet row groups, kept once found (each run's pruning and narrow
uploads ask again), and found anew after rows are appended."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from glint.io.parquet_source import ParquetSource
from glint.io.table import Table


def test_chunk_stats_are_kept_and_renewed_after_an_append(tmp_path):
    n = 1000
    data = pa.table(
        {
            "k": pa.array(range(n), pa.int64()),
            "v": pa.array([None if i % 7 == 0 else (i * 37) % 501 - 250 for i in range(n)], pa.int64()),
        }
    )
    path = str(tmp_path / "t.parquet")
    pq.write_table(data, path, row_group_size=100)
    t = Table.from_source("t", ParquetSource(path), path)
    chunks = t.chunks(300)
    assert len(chunks) == 4 and all(len(c.pieces) >= 1 for c in chunks)
    for c in chunks:
        # (the statistics are the row groups': over every row of each row group it touches)
        groups = sorted({f for f, _, _ in c.pieces})
        rows = pa.concat_arrays([data.column("v").slice(g * 100, 100).combine_chunks() for g in groups])
        first = t.chunk_stats(c, "v")
        mm = pc.min_max(rows)
        assert first == (mm["min"].as_py(), mm["max"].as_py(), rows.null_count)
        assert t.chunk_stats(c, "v") is first  # (kept)
    last = chunks[-1]
    before = t.chunk_stats(last, "v")
    t.append(pa.table({"k": pa.array([n], pa.int64()), "v": pa.array([10_000], pa.int64())}))
    grown = t.chunks(300)[-1]
    after = t.chunk_stats(grown, "v")
    assert before[1] < 10_000 and after is not before
    assert after is None or after[1] == 10_000  # (None: the appended rows' part has no statistics)
