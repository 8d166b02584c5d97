"""Fixtures the distributed tests share."""

from __future__ import annotations

import pytest

from glint.workloads import ssb, tpch

SF = 0.01  # the scale factor of ``tpch_data`` and ``ssb_data``


def _with_duckdb(directory, connect):
    """(the directory, a DuckDB connection over its tables), closed afterwards."""
    duck = connect(directory)
    yield directory, duck
    duck.close()


@pytest.fixture(scope="module")
def tpch_data(cached_tpch):
    """TPC-H at SF 0.01: (its directory, DuckDB over its tables)."""
    yield from _with_duckdb(cached_tpch(SF), tpch.duckdb_tpch_connection)


@pytest.fixture(scope="module")
def ssb_data(cached_ssb):
    """SSB at SF 0.01: (its directory, DuckDB over its tables)."""
    yield from _with_duckdb(cached_ssb(SF), ssb.duckdb_ssb_connection)
