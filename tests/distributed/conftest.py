"""Fixtures the distributed tests share."""

from __future__ import annotations

import pytest

from glint.workloads import tpch

TPCH_SF = 0.01  # the TPC-H scale factor of ``tpch_data``


@pytest.fixture(scope="module")
def tpch_data(cached_tpch):
    """(the TPC-H SF 0.01 directory, a DuckDB connection over its tables)."""
    d = cached_tpch(TPCH_SF)
    duck = tpch.duckdb_tpch_connection(d)
    yield d, duck
    duck.close()
